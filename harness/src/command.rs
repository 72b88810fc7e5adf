//! How to start one of the harness's own helper programs (a fake, the relay,
//! the per-trial supervisor): a program plus leading arguments, so one
//! executable can serve as all of them. Its own module so that what starts
//! processes (trials, shims, containment) shares it without importing each
//! other.

use std::path::PathBuf;

#[derive(Debug, Clone)]
pub struct FakeCommand {
    pub program: PathBuf,
    pub prefix: Vec<String>,
}
