//! A raw HTTP/1.1 connection for testing a server byte by byte: pipelined
//! requests, malformed ones, `Expect: 100-continue`, and whether the server
//! closed. Reads one response at a time, its body by `Content-Length`.

use std::io::{self, BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::Duration;

pub struct RawConn {
    pub reader: BufReader<TcpStream>,
    pub stream: TcpStream,
}

/// One response: status, lower-cased header names, body.
#[derive(Debug)]
pub struct RawResponse {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl RawResponse {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(n, _)| n == name).map(|(_, v)| v.as_str())
    }
}

impl RawConn {
    /// Connects with a read timeout, so a silent server fails the read.
    pub fn to(addr: SocketAddr) -> io::Result<RawConn> {
        let stream = TcpStream::connect(addr)?;
        stream.set_read_timeout(Some(Duration::from_secs(10)))?;
        Ok(RawConn { reader: BufReader::new(stream.try_clone()?), stream })
    }

    pub fn send(&mut self, raw: &[u8]) -> io::Result<()> {
        self.stream.write_all(raw)
    }

    /// The next response; a missing `Content-Length` means no body.
    pub fn read(&mut self) -> io::Result<RawResponse> {
        let bad = |what: &str| io::Error::new(io::ErrorKind::InvalidData, what.to_string());
        let mut line = String::new();
        self.reader.read_line(&mut line)?;
        let status = line.split(' ').nth(1).and_then(|s| s.parse().ok()).ok_or_else(|| bad("no status line"))?;
        let mut headers = Vec::new();
        loop {
            let mut h = String::new();
            self.reader.read_line(&mut h)?;
            let h = h.trim_end();
            if h.is_empty() {
                break;
            }
            let (n, v) = h.split_once(':').ok_or_else(|| bad("header without a colon"))?;
            headers.push((n.to_ascii_lowercase(), v.trim().to_string()));
        }
        let len = match headers.iter().find(|(n, _)| n == "content-length") {
            Some((_, v)) => v.parse().map_err(|_| bad("bad content-length"))?,
            None => 0,
        };
        let mut body = vec![0; len];
        self.reader.read_exact(&mut body)?;
        Ok(RawResponse { status, headers, body })
    }

    /// True once the server has closed its side.
    pub fn closed(&mut self) -> bool {
        let mut b = [0u8; 1];
        matches!(self.reader.read(&mut b), Ok(0) | Err(_))
    }
}
