//! The accept loop and one task per connection, with the idle and header timeouts.
//!
//! Each connection tracks its own phase on the one task that drives it: *idle* (no request in
//! progress and no byte of the next one yet), *head* (bytes of a request head arrived but the
//! head is not complete) or *busy* (a request is being served, from its complete head until
//! its response body has been handed to the socket). Idle past `idle_timeout` or in the head
//! past `header_timeout` (counted from the head's first byte, so trickling bytes cannot extend
//! it): the connection is dropped. Busy is bounded by the body timeout (in the handlers) and
//! the call's own deadline, not here, so a long call is never cut by these timers.

use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::task::{Context, Poll};
use std::time::Duration;

use axum::Router;
use axum::body::Body;
use hyper::body::{Frame, Incoming, SizeHint};
use hyper::service::Service;
use hyper::{Request, Response};
use hyper_util::rt::TokioIo;
use hyper_util::service::TowerToHyperService;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{mpsc, watch};
use tokio::time::Instant;

use crate::serve::options::HttpLimits;

/// No head byte seen since the connection became idle.
const NO_HEAD: u64 = u64::MAX;

/// The phase clock of one connection (milliseconds since it was accepted).
#[derive(Debug)]
struct Activity {
    origin: Instant,
    busy: AtomicUsize,
    idle_since: AtomicU64,
    head_from: AtomicU64,
}

impl Activity {
    fn new() -> Self {
        Activity {
            origin: Instant::now(),
            busy: AtomicUsize::new(0),
            idle_since: AtomicU64::new(0),
            head_from: AtomicU64::new(NO_HEAD),
        }
    }

    fn now_ms(&self) -> u64 {
        u64::try_from(self.origin.elapsed().as_millis()).unwrap_or(u64::MAX)
    }

    /// Bytes arrived: when idle, they start a request head.
    fn on_read(&self) {
        if self.busy.load(Ordering::Relaxed) == 0
            && self.head_from.load(Ordering::Relaxed) == NO_HEAD
        {
            self.head_from.store(self.now_ms(), Ordering::Relaxed);
        }
    }

    /// A complete head was handed to the router.
    fn begin(&self) {
        self.busy.fetch_add(1, Ordering::Relaxed);
        self.head_from.store(NO_HEAD, Ordering::Relaxed);
    }

    /// A response body was finished (or its request abandoned).
    fn end(&self) {
        if self.busy.fetch_sub(1, Ordering::Relaxed) == 1 {
            self.head_from.store(NO_HEAD, Ordering::Relaxed);
            self.idle_since.store(self.now_ms(), Ordering::Relaxed);
        }
    }

    /// When the current phase expires (None while busy).
    fn deadline_ms(&self, limits: &HttpLimits) -> Option<u64> {
        if self.busy.load(Ordering::Relaxed) > 0 {
            return None;
        }
        let ms = |d: Duration| u64::try_from(d.as_millis()).unwrap_or(u64::MAX);
        Some(match self.head_from.load(Ordering::Relaxed) {
            NO_HEAD => self
                .idle_since
                .load(Ordering::Relaxed)
                .saturating_add(ms(limits.idle_timeout)),
            from => from.saturating_add(ms(limits.header_timeout)),
        })
    }

    /// When to look again: the deadline, or (while busy) after the shorter timeout.
    fn next_check(&self, limits: &HttpLimits) -> Instant {
        match self.deadline_ms(limits) {
            Some(ms) => self.origin + Duration::from_millis(ms),
            None => Instant::now() + limits.idle_timeout.min(limits.header_timeout),
        }
    }

    fn expired(&self, limits: &HttpLimits) -> bool {
        self.deadline_ms(limits)
            .is_some_and(|deadline| self.now_ms() >= deadline)
    }
}

/// The socket, reporting arriving bytes to the connection's [`Activity`].
struct Watched {
    stream: TcpStream,
    activity: Arc<Activity>,
}

impl AsyncRead for Watched {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let before = buf.filled().len();
        let polled = Pin::new(&mut self.stream).poll_read(cx, buf);
        if matches!(polled, Poll::Ready(Ok(()))) && buf.filled().len() > before {
            self.activity.on_read();
        }
        polled
    }
}

impl AsyncWrite for Watched {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        Pin::new(&mut self.stream).poll_write(cx, buf)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[std::io::IoSlice<'_>],
    ) -> Poll<std::io::Result<usize>> {
        Pin::new(&mut self.stream).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.stream.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.stream).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.stream).poll_shutdown(cx)
    }
}

/// Marks the connection busy for as long as it lives (moved into the response body).
struct BusyGuard(Arc<Activity>);

impl BusyGuard {
    fn new(activity: &Arc<Activity>) -> Self {
        activity.begin();
        BusyGuard(Arc::clone(activity))
    }
}

impl Drop for BusyGuard {
    fn drop(&mut self) {
        self.0.end();
    }
}

/// A response body that keeps its connection busy until it is finished or dropped.
struct TrackedBody {
    inner: Body,
    _busy: BusyGuard,
}

impl hyper::body::Body for TrackedBody {
    type Data = axum::body::Bytes;
    type Error = axum::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Self::Data>, Self::Error>>> {
        Pin::new(&mut self.inner).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

/// The router as a hyper service that tracks the connection's phase.
#[derive(Clone)]
struct Tracked {
    router: TowerToHyperService<Router>,
    activity: Arc<Activity>,
}

type TrackedFuture =
    Pin<Box<dyn Future<Output = Result<Response<TrackedBody>, Infallible>> + Send>>;

impl Service<Request<Incoming>> for Tracked {
    type Response = Response<TrackedBody>;
    type Error = Infallible;
    type Future = TrackedFuture;

    fn call(&self, request: Request<Incoming>) -> Self::Future {
        let busy = BusyGuard::new(&self.activity);
        let response = self.router.call(request);
        Box::pin(async move {
            let response = response.await?;
            Ok(response.map(|inner| TrackedBody { inner, _busy: busy }))
        })
    }
}

/// Serve `router` on `listener` until `shutdown` resolves, then stop accepting, let every
/// connection finish its current request, and return once all are closed.
pub async fn serve(
    listener: TcpListener,
    router: Router,
    limits: HttpLimits,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    let (stop, stopping) = watch::channel(false);
    let (open, mut all_closed) = mpsc::channel::<()>(1);
    let mut shutdown = std::pin::pin!(shutdown);
    loop {
        let stream = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => stream,
                Err(e) => {
                    // Per-connection errors: try the next one. Anything else (EMFILE, ENOMEM):
                    // back off instead of spinning.
                    if !is_connection_error(&e) {
                        tokio::time::sleep(Duration::from_secs(1)).await;
                    }
                    continue;
                }
            },
            () = &mut shutdown => break,
        };
        tokio::spawn(connection(
            stream,
            router.clone(),
            limits,
            stopping.clone(),
            open.clone(),
        ));
    }
    drop(listener);
    let _ = stop.send(true);
    drop(open);
    // Every connection task holds a sender: recv() yields None once the last one is gone.
    let _ = all_closed.recv().await;
    Ok(())
}

fn is_connection_error(e: &std::io::Error) -> bool {
    use std::io::ErrorKind::*;
    matches!(
        e.kind(),
        ConnectionRefused | ConnectionAborted | ConnectionReset
    )
}

async fn connection(
    stream: TcpStream,
    router: Router,
    limits: HttpLimits,
    mut stopping: watch::Receiver<bool>,
    _open: mpsc::Sender<()>,
) {
    let activity = Arc::new(Activity::new());
    let io = TokioIo::new(Watched {
        stream,
        activity: Arc::clone(&activity),
    });
    let service = Tracked {
        router: TowerToHyperService::new(router),
        activity: Arc::clone(&activity),
    };
    let conn = hyper::server::conn::http1::Builder::new().serve_connection(io, service);
    let mut conn = std::pin::pin!(conn);
    let mut timer = std::pin::pin!(tokio::time::sleep_until(activity.next_check(&limits)));
    let mut stop = std::pin::pin!(stopping.changed());
    let mut draining = false;
    // One hand-written poll: the connection first (its reads and responses move the phase),
    // then the timer re-armed for the phase as it is now, so a phase change is never missed.
    std::future::poll_fn(|cx| {
        if conn.as_mut().poll(cx).is_ready() {
            return Poll::Ready(());
        }
        if !draining && let Poll::Ready(changed) = stop.as_mut().poll(cx) {
            draining = true;
            if changed.is_ok() {
                conn.as_mut().graceful_shutdown();
                if conn.as_mut().poll(cx).is_ready() {
                    return Poll::Ready(());
                }
            }
        }
        loop {
            let check = activity.next_check(&limits);
            if timer.deadline() != check {
                timer.as_mut().reset(check);
            }
            if timer.as_mut().poll(cx).is_pending() {
                return Poll::Pending;
            }
            if activity.expired(&limits) {
                // Returning drops the connection, which closes the socket.
                return Poll::Ready(());
            }
        }
    })
    .await;
}

#[cfg(test)]
mod tests {
    use super::*;

    fn limits() -> HttpLimits {
        HttpLimits {
            idle_timeout: Duration::from_millis(1000),
            header_timeout: Duration::from_millis(300),
            ..HttpLimits::default()
        }
    }

    #[test]
    fn phases_pick_their_deadline() {
        let a = Activity::new();
        // Idle from accept.
        assert_eq!(a.deadline_ms(&limits()), Some(1000));
        // A first byte starts the head clock; later bytes do not move it.
        a.head_from.store(50, Ordering::Relaxed);
        a.on_read();
        assert_eq!(a.deadline_ms(&limits()), Some(350));
        // Busy: no deadline; two overlapping requests need both to end.
        a.begin();
        a.begin();
        assert_eq!(a.deadline_ms(&limits()), None);
        a.end();
        assert_eq!(a.deadline_ms(&limits()), None);
        a.end();
        let idle = a.idle_since.load(Ordering::Relaxed);
        assert_eq!(a.deadline_ms(&limits()), Some(idle + 1000));
        assert!(!a.expired(&limits()));
    }
}
