//! A run's timeline as Server-Sent Events: `id:` the sequence number,
//! `event:` the type, `data:` the JSON; a `retry:` hint first and comment
//! lines to keep idle streams alive (framing by axum's `Sse`). What to
//! send comes from a [`Reader`]; this module only frames it, counts its
//! readers, and ends it when the server stops.

use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

use axum::http::{HeaderMap, header};
use axum::response::sse::{Event as SseEvent, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use futures_util::stream;

use super::problem::Problem;
use crate::state::Edge;
use crate::timeline::Reader;

/// Reconnect delay suggested to clients.
const RETRY_HINT: Duration = Duration::from_secs(2);
/// Comment-line interval on an idle stream.
const KEEP_ALIVE: Duration = Duration::from_secs(15);

pub(crate) fn response(edge: Arc<Edge>, run_id: String, after: i64) -> Response {
    edge.metrics.reader_opened();
    let ending = edge.in_flight.streams_ending();
    let reader = Reader::new(edge.store.clone(), edge.hub.clone(), run_id, after);
    let counted = (reader, ReaderGuard(edge));
    let hint = stream::once(async { Ok::<_, Infallible>(SseEvent::default().retry(RETRY_HINT)) });
    let events = stream::unfold(counted, |(mut reader, guard)| async move {
        let event = reader.next().await?;
        let sse = SseEvent::default()
            .id(event.seq.to_string())
            .event(event.kind.name())
            .data(event.data.to_string());
        Some((Ok::<_, Infallible>(sse), (reader, guard)))
    });
    // A stopping server ends every stream; the client resumes elsewhere
    // with `Last-Event-ID`.
    let events = futures_util::StreamExt::take_until(events, ending);
    Sse::new(futures_util::StreamExt::chain(hint, events))
        .keep_alive(KeepAlive::new().interval(KEEP_ALIVE))
        .into_response()
}

/// Counts a stream's reader for as long as the stream lives.
struct ReaderGuard(Arc<Edge>);

impl Drop for ReaderGuard {
    fn drop(&mut self) {
        self.0.metrics.reader_closed();
    }
}

/// Whether the request asks for an event stream (`Accept:
/// text/event-stream`) rather than JSON.
pub(crate) fn wanted(headers: &HeaderMap) -> bool {
    headers
        .get_all(header::ACCEPT)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .any(|v| {
            v.split(',')
                .any(|t| t.trim().starts_with("text/event-stream"))
        })
}

/// The `Last-Event-ID` to resume after (0: from the start).
pub(crate) fn last_event_id(headers: &HeaderMap) -> Result<i64, Problem> {
    let Some(value) = headers.get("last-event-id") else {
        return Ok(0);
    };
    value
        .to_str()
        .ok()
        .and_then(|s| s.trim().parse::<i64>().ok())
        .filter(|n| *n >= 0)
        .ok_or_else(|| {
            Problem::field(
                "invalid-request",
                "Last-Event-ID",
                "must be an event id (an integer)",
            )
        })
}
