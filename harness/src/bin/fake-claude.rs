//! The fake `claude` executable; see `fakes::claude`.
fn main() {
    std::process::exit(fakes::claude::main_with_args(std::env::args().skip(1).collect()))
}
