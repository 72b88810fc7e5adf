//! hyper's IO traits over tokio's TCP stream (what hyper-util's `TokioIo`
//! does, in safe code and without that crate), and an in-memory connection
//! for fuzzing the server without sockets.

use std::io;
use std::pin::Pin;
use std::task::{ready, Context, Poll};

use hyper::rt::{Read, ReadBufCursor, Write};
use tokio::io::{AsyncRead, AsyncWrite};

/// Largest read handed to hyper at once.
const READ_CHUNK: usize = 16 * 1024;

pub(crate) struct Tokio<T> {
    pub io: T,
    /// Shutdown only flushes: a server connection's write side is shut down
    /// by the server after hyper is done with it (see `linger`), so the peer
    /// sees the end only after the server has noted why it ended.
    pub defer_shutdown: bool,
}

impl<T> Tokio<T> {
    pub fn new(io: T) -> Tokio<T> {
        Tokio { io, defer_shutdown: false }
    }

    pub fn deferred(io: T) -> Tokio<T> {
        Tokio { io, defer_shutdown: true }
    }
}

impl<T: AsyncRead + Unpin> Read for Tokio<T> {
    fn poll_read(mut self: Pin<&mut Self>, cx: &mut Context<'_>, mut buf: ReadBufCursor<'_>) -> Poll<io::Result<()>> {
        let mut tmp = [0u8; READ_CHUNK];
        let n = buf.remaining().min(READ_CHUNK);
        let mut rb = tokio::io::ReadBuf::new(&mut tmp[..n]);
        ready!(Pin::new(&mut self.io).poll_read(cx, &mut rb))?;
        buf.put_slice(rb.filled());
        Poll::Ready(Ok(()))
    }
}

impl<T: AsyncWrite + Unpin> Write for Tokio<T> {
    fn poll_write(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.io).poll_write(cx, buf)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.io).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        if self.defer_shutdown {
            Pin::new(&mut self.io).poll_flush(cx)
        } else {
            Pin::new(&mut self.io).poll_shutdown(cx)
        }
    }

    fn is_write_vectored(&self) -> bool {
        self.io.is_write_vectored()
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.io).poll_write_vectored(cx, bufs)
    }
}

/// A connection whose peer sends `input`, then closes its sending side,
/// and keeps everything the server writes.
pub(crate) struct Memory {
    pub input: Vec<u8>,
    pub pos: usize,
    pub output: Vec<u8>,
}

impl Read for Memory {
    fn poll_read(mut self: Pin<&mut Self>, _: &mut Context<'_>, mut buf: ReadBufCursor<'_>) -> Poll<io::Result<()>> {
        let n = buf.remaining().min(self.input.len() - self.pos);
        let start = self.pos;
        buf.put_slice(&self.input[start..start + n]);
        self.pos += n;
        Poll::Ready(Ok(()))
    }
}

impl Write for Memory {
    fn poll_write(mut self: Pin<&mut Self>, _: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        self.output.extend_from_slice(buf);
        Poll::Ready(Ok(buf.len()))
    }

    fn poll_flush(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }

    fn poll_shutdown(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }
}
