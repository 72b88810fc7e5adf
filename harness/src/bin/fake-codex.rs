//! The fake `codex` executable; see `fakes::codex`.
fn main() {
    std::process::exit(fakes::codex::main_with_args(std::env::args().skip(1).collect()))
}
