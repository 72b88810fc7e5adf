//! The fakes' line reader faces whatever a driver writes: it must frame any
//! byte stream without panicking and never keep more than its limit.
#![no_main]
use libfuzzer_sys::fuzz_target;

use fakes::wire::{read_line, Line};

fuzz_target!(|data: &[u8]| {
    let mut reader = std::io::Cursor::new(data);
    for _ in 0..data.len() + 1 {
        match read_line(&mut reader, 64) {
            Ok(Line::Eof) | Err(_) => break,
            Ok(Line::Garbage { text, .. }) => assert!(text.chars().count() <= 512),
            Ok(_) => {}
        }
    }
});
