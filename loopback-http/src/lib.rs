//! The one HTTP/1.1 stack of the project, on loopback only: the fakes' MCP
//! and mock-model servers, the drivers' bridge server and the fakes' MCP
//! client. hyper does the protocol; every connection of a process runs on
//! one lazily started current-thread tokio runtime on a background thread,
//! and the API here is synchronous, so the rest of the code never sees
//! async. Handlers are plain functions run on the runtime's blocking pool:
//! a slow or sleeping handler never holds up other connections.

mod client;
mod io;
pub mod raw;
mod server;
pub mod sse;

pub use client::{request, ClientError, Reply};
pub use server::{answer_bytes, serve, serve_with, BodySender, Handler, Limits, Request, Response, Server};

use std::sync::OnceLock;
use std::thread::ThreadId;

use tokio::runtime::Handle;

/// The process's runtime, started on first use and never stopped: its
/// thread idles in epoll when no server or request is live.
fn runtime() -> &'static Handle {
    &started().0
}

/// The thread driving the runtime.
fn runtime_thread() -> ThreadId {
    started().1
}

fn started() -> &'static (Handle, ThreadId) {
    static RUNTIME: OnceLock<(Handle, ThreadId)> = OnceLock::new();
    RUNTIME.get_or_init(|| {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_io()
            .enable_time()
            .thread_name("loopback-http-blocking")
            .build()
            .expect("cannot start the HTTP runtime");
        let handle = rt.handle().clone();
        let thread = std::thread::Builder::new()
            .name("loopback-http".into())
            .spawn(move || rt.block_on(std::future::pending::<()>()))
            .expect("cannot start the HTTP runtime thread");
        (handle, thread.thread().id())
    })
}
