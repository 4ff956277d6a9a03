//! Reading one request body under three bounds: the route's size limit, the body timeout and
//! the server-wide [`BodyBudget`].
//!
//! Why a budget across connections: the per-request limit alone lets N clients make the
//! server hold N × 64 MiB at once. Each body reserves its bytes (its declared length up
//! front, or chunk by chunk when it is chunked) and keeps them reserved, through its
//! [`BodyLease`], until the handler is done with the bytes. A body that does not fit is
//! refused at once (never queued: a half-read body waiting for memory would itself hold
//! memory, and waiting bodies could starve each other).

use std::sync::Arc;
use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use http_body_util::BodyExt;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

/// Why a body was not read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum BodyError {
    /// Over the route's limit, declared or counted (413).
    #[error("request body too large")]
    TooLarge,
    /// Not complete within the body timeout (408).
    #[error("request body timed out")]
    Timeout,
    /// Broken framing: bad chunked encoding, a connection closed mid-body (400).
    #[error("malformed request body")]
    Malformed,
    /// The server-wide body budget is spent (503 with Retry-After).
    #[error("request body memory budget exhausted")]
    Budget,
}

impl BodyError {
    /// The HTTP answer, the same on both transports: 413 with the admission detail, 408, 400,
    /// or 503 with `Retry-After`; always `Connection: close`, since the rest of an unread body
    /// cannot be skipped safely.
    pub fn response(self, retry_after: Duration) -> Response {
        let (status, text) = match self {
            BodyError::TooLarge => (StatusCode::PAYLOAD_TOO_LARGE, crate::call::ADMISSION_DETAIL),
            BodyError::Timeout => (StatusCode::REQUEST_TIMEOUT, "Request body timed out"),
            BodyError::Malformed => (StatusCode::BAD_REQUEST, "Malformed request body"),
            BodyError::Budget => (StatusCode::SERVICE_UNAVAILABLE, "Server busy"),
        };
        let mut body = String::from("{\"detail\":");
        apizr_ir::json::write_string(&mut body, text);
        body.push('}');
        let mut response = (status, body).into_response();
        let headers = response.headers_mut();
        headers.insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        );
        headers.insert(header::CONNECTION, HeaderValue::from_static("close"));
        if self == BodyError::Budget {
            headers.insert(header::RETRY_AFTER, retry_after.as_secs().max(1).into());
        }
        response
    }
}

/// The bytes of request bodies the server holds at once, all connections together.
#[derive(Debug, Clone)]
pub struct BodyBudget {
    bytes: Arc<Semaphore>,
}

/// Bytes reserved in a [`BodyBudget`]; returned when dropped.
#[derive(Debug, Default)]
pub struct BodyLease(Option<OwnedSemaphorePermit>);

impl BodyBudget {
    pub fn new(bytes: u64) -> Self {
        let permits = usize::try_from(bytes)
            .unwrap_or(usize::MAX)
            .min(Semaphore::MAX_PERMITS);
        BodyBudget {
            bytes: Arc::new(Semaphore::new(permits)),
        }
    }

    /// Add `n` bytes to `lease`, or refuse when the budget cannot cover them now.
    fn grow(&self, lease: &mut BodyLease, n: usize) -> Result<(), BodyError> {
        if n == 0 {
            return Ok(());
        }
        let n = u32::try_from(n).map_err(|_| BodyError::TooLarge)?;
        let more = Arc::clone(&self.bytes)
            .try_acquire_many_owned(n)
            .map_err(|_| BodyError::Budget)?;
        match &mut lease.0 {
            Some(held) => held.merge(more),
            None => lease.0 = Some(more),
        }
        Ok(())
    }
}

impl BodyLease {
    fn bytes(&self) -> usize {
        self.0.as_ref().map_or(0, OwnedSemaphorePermit::num_permits)
    }
}

/// Read a whole body: at most `limit` bytes, complete within `timeout`, reserved in `budget`.
pub async fn read_body(
    body: Body,
    headers: &HeaderMap,
    limit: usize,
    timeout: Duration,
    budget: &BodyBudget,
) -> Result<(Bytes, BodyLease), BodyError> {
    let declared = headers
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    if declared.is_some_and(|n| n > limit as u64) {
        return Err(BodyError::TooLarge);
    }
    let declared = declared.map_or(0, |n| usize::try_from(n).unwrap_or(limit));
    let mut lease = BodyLease::default();
    budget.grow(&mut lease, declared)?;
    let deadline = tokio::time::Instant::now() + timeout;
    let mut body = body;
    let mut collected: Vec<u8> = Vec::with_capacity(declared);
    loop {
        let frame = match tokio::time::timeout_at(deadline, body.frame()).await {
            Err(_) => return Err(BodyError::Timeout),
            Ok(None) => break,
            Ok(Some(Err(_))) => return Err(BodyError::Malformed),
            Ok(Some(Ok(frame))) => frame,
        };
        let Ok(data) = frame.into_data() else {
            continue; // trailers
        };
        let total = collected.len() + data.len();
        if total > limit {
            return Err(BodyError::TooLarge);
        }
        let held = lease.bytes();
        if total > held {
            budget.grow(&mut lease, total - held)?;
        }
        collected.extend_from_slice(&data);
    }
    Ok((Bytes::from(collected), lease))
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn headers(length: Option<usize>) -> HeaderMap {
        let mut h = HeaderMap::new();
        if let Some(n) = length {
            h.insert(header::CONTENT_LENGTH, n.into());
        }
        h
    }

    const LONG: Duration = Duration::from_secs(5);

    #[tokio::test]
    async fn budget_is_shared_and_given_back() {
        let budget = BodyBudget::new(10);
        let (bytes, lease) = read_body(Body::from("123456"), &headers(Some(6)), 100, LONG, &budget)
            .await
            .unwrap();
        assert_eq!((&bytes[..], lease.bytes()), (&b"123456"[..], 6));
        // 6 of 10 held: a second 6-byte body does not fit, declared or not.
        let refused = read_body(Body::from("abcdef"), &headers(Some(6)), 100, LONG, &budget).await;
        assert_eq!(refused.err(), Some(BodyError::Budget));
        let refused = read_body(Body::from("abcdef"), &headers(None), 100, LONG, &budget).await;
        assert_eq!(refused.err(), Some(BodyError::Budget));
        drop(lease);
        assert!(
            read_body(Body::from("abcdef"), &headers(None), 100, LONG, &budget)
                .await
                .is_ok()
        );
    }

    #[tokio::test]
    async fn limits_apply_to_declared_and_counted_lengths() {
        let budget = BodyBudget::new(1 << 20);
        let declared = read_body(Body::from("x"), &headers(Some(11)), 10, LONG, &budget).await;
        assert_eq!(declared.err(), Some(BodyError::TooLarge));
        let counted = read_body(
            Body::from("x".repeat(11)),
            &headers(None),
            10,
            LONG,
            &budget,
        )
        .await;
        assert_eq!(counted.err(), Some(BodyError::TooLarge));
    }
}
