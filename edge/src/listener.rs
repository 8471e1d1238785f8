//! Connections: accepted under caps (in all and per peer address), served
//! by hyper with a header timeout a slow client cannot stretch, and closed
//! gracefully when the server stops. axum's own `serve` sets no timer, so
//! idle and half-sent connections stayed open forever and a slow-loris
//! exhausted the server's file descriptors (finding D1). A connection
//! whose peer stops reading is closed once its writes have waited
//! `write_stall`, so a stalled SSE reader gives back what it holds
//! (finding D2).

use std::collections::HashMap;
use std::io;
use std::net::IpAddr;
use std::pin::Pin;
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll};
use std::time::Duration;

use axum::Router;
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use hyper_util::server::conn::auto::Builder;
use hyper_util::server::graceful::GracefulShutdown;
use hyper_util::service::TowerToHyperService;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpListener;

/// A pause after a failed `accept` (out of file descriptors, say), so the
/// loop does not spin while the condition lasts.
const ACCEPT_BACKOFF: Duration = Duration::from_millis(50);
/// HTTP/2 pings on a quiet connection, which must be answered within the
/// header timeout.
const H2_KEEP_ALIVE: Duration = Duration::from_secs(20);

/// What one client may hold.
#[derive(Debug, Clone, Copy)]
pub struct ConnectionLimits {
    pub total: usize,
    pub per_peer: usize,
    /// Time to send a request's headers, also idle between two requests.
    pub header_read_timeout: Duration,
    /// How long a write may wait on a peer that reads nothing.
    pub write_stall: Duration,
}

/// Serves `app` on `listener` until `stop` resolves, then closes idle
/// connections and gives busy ones `grace` to finish.
pub async fn serve(
    listener: TcpListener,
    app: Router,
    limits: ConnectionLimits,
    stop: impl Future<Output = ()>,
    grace: Duration,
) {
    let open = Arc::new(OpenConnections::default());
    let graceful = GracefulShutdown::new();
    let builder = builder(limits);
    let mut stop = std::pin::pin!(stop);
    loop {
        let (tcp, peer) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(accepted) => accepted,
                Err(e) => {
                    tracing::warn!(error = %e, "accepting a connection failed");
                    tokio::time::sleep(ACCEPT_BACKOFF).await;
                    continue;
                }
            },
            () = &mut stop => break,
        };
        let Some(admitted) = open.admit(peer.ip(), limits) else {
            tracing::debug!(%peer, "over the connection cap: closed");
            continue;
        };
        // Events are small writes that must leave at once: no Nagle.
        let _ = tcp.set_nodelay(true);
        let service = TowerToHyperService::new(app.clone());
        let builder = builder.clone();
        let watcher = graceful.watcher();
        tokio::spawn(async move {
            // hyper's header timeout starts with the first byte (the auto
            // builder first reads to tell HTTP/1 from HTTP/2): a client
            // that sends nothing at all is closed here.
            let mut first = [0u8; 1];
            let said_something =
                tokio::time::timeout(limits.header_read_timeout, tcp.peek(&mut first));
            if !matches!(said_something.await, Ok(Ok(1..))) {
                return;
            }
            let connection = builder
                .serve_connection_with_upgrades(
                    TokioIo::new(StallingWrites::new(tcp, limits.write_stall)),
                    service,
                )
                .into_owned();
            if let Err(e) = watcher.watch(connection).await {
                tracing::trace!(%peer, error = %e, "connection ended with an error");
            }
            drop(admitted);
        });
    }
    if tokio::time::timeout(grace, graceful.shutdown())
        .await
        .is_err()
    {
        tracing::warn!("connections still open after the drain: leaving them behind");
    }
}

fn builder(limits: ConnectionLimits) -> Builder<TokioExecutor> {
    let mut builder = Builder::new(TokioExecutor::new());
    builder
        .http1()
        .timer(TokioTimer::new())
        .header_read_timeout(limits.header_read_timeout);
    builder
        .http2()
        .timer(TokioTimer::new())
        .keep_alive_interval(H2_KEEP_ALIVE)
        .keep_alive_timeout(limits.header_read_timeout);
    builder
}

/// A connection whose writes fail once they have waited `limit` on a peer
/// that reads nothing; then hyper closes it and drops the response it was
/// sending. Reads are untouched (hyper's own timers watch them).
struct StallingWrites<T> {
    io: T,
    limit: Duration,
    /// Running while a write waits.
    stalled: Option<Pin<Box<tokio::time::Sleep>>>,
}

impl<T> StallingWrites<T> {
    fn new(io: T, limit: Duration) -> StallingWrites<T> {
        StallingWrites {
            io,
            limit,
            stalled: None,
        }
    }

    fn watch<R>(&mut self, cx: &mut Context<'_>, poll: Poll<io::Result<R>>) -> Poll<io::Result<R>> {
        if poll.is_ready() {
            self.stalled = None;
            return poll;
        }
        let limit = self.limit;
        let timer = self
            .stalled
            .get_or_insert_with(|| Box::pin(tokio::time::sleep(limit)));
        match timer.as_mut().poll(cx) {
            Poll::Ready(()) => Poll::Ready(Err(io::Error::new(
                io::ErrorKind::TimedOut,
                "the peer stopped reading",
            ))),
            Poll::Pending => Poll::Pending,
        }
    }
}

impl<T: AsyncRead + Unpin> AsyncRead for StallingWrites<T> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        Pin::new(&mut self.io).poll_read(cx, buf)
    }
}

impl<T: AsyncWrite + Unpin> AsyncWrite for StallingWrites<T> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let poll = Pin::new(&mut self.io).poll_write(cx, buf);
        self.watch(cx, poll)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let poll = Pin::new(&mut self.io).poll_write_vectored(cx, bufs);
        self.watch(cx, poll)
    }

    fn is_write_vectored(&self) -> bool {
        self.io.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let poll = Pin::new(&mut self.io).poll_flush(cx);
        self.watch(cx, poll)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let poll = Pin::new(&mut self.io).poll_shutdown(cx);
        self.watch(cx, poll)
    }
}

/// How many connections are open, in all and by peer.
#[derive(Default)]
struct OpenConnections(Mutex<(usize, HashMap<IpAddr, usize>)>);

impl OpenConnections {
    fn admit(self: &Arc<Self>, peer: IpAddr, limits: ConnectionLimits) -> Option<Admitted> {
        let mut open = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        let (total, by_peer) = &mut *open;
        let mine = by_peer.entry(peer).or_default();
        if *total >= limits.total || *mine >= limits.per_peer {
            if *mine == 0 {
                by_peer.remove(&peer);
            }
            return None;
        }
        *mine += 1;
        *total += 1;
        Some(Admitted {
            open: self.clone(),
            peer,
        })
    }
}

/// One open connection, counted until it is dropped.
struct Admitted {
    open: Arc<OpenConnections>,
    peer: IpAddr,
}

impl Drop for Admitted {
    fn drop(&mut self) {
        let mut open = self.open.0.lock().unwrap_or_else(PoisonError::into_inner);
        let (total, by_peer) = &mut *open;
        *total = total.saturating_sub(1);
        if let Some(mine) = by_peer.get_mut(&self.peer) {
            *mine = mine.saturating_sub(1);
            if *mine == 0 {
                by_peer.remove(&self.peer);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn caps_count_in_all_and_per_peer() {
        let limits = ConnectionLimits {
            total: 3,
            per_peer: 2,
            header_read_timeout: Duration::from_secs(1),
            write_stall: Duration::from_secs(1),
        };
        let open = Arc::new(OpenConnections::default());
        let (a, b): (IpAddr, IpAddr) = ("10.0.0.1".parse().unwrap(), "10.0.0.2".parse().unwrap());
        let a1 = open.admit(a, limits).expect("first");
        let _a2 = open.admit(a, limits).expect("second");
        assert!(open.admit(a, limits).is_none(), "a third from one peer");
        let _b1 = open.admit(b, limits).expect("another peer");
        assert!(open.admit(b, limits).is_none(), "over the total");
        drop(a1);
        assert!(
            open.admit(a, limits).is_some(),
            "a closed one frees its place"
        );
    }

    /// A peer that reads nothing fails the write once the limit has
    /// passed, instead of holding it (and what it sends) for ever.
    #[tokio::test]
    async fn a_write_nobody_reads_fails_after_the_stall_limit() {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let (near, mut far) = tokio::io::duplex(64);
        let mut conn = StallingWrites::new(near, Duration::from_millis(100));
        conn.write_all(b"fits").await.expect("a write with room");
        let error = conn.write_all(&[0u8; 4096]).await.unwrap_err();
        assert_eq!(error.kind(), io::ErrorKind::TimedOut);
        let mut got = [0u8; 4];
        far.read_exact(&mut got).await.expect("what was written");
        assert_eq!(&got, b"fits");
    }
}
