//! Samples: finished runs an operator publishes for anyone to open
//! (`/samples/{id}`, the console's "Run it yourself"). A sample is a
//! snapshot — the run object with its timeline, and the request it was
//! made with — taken when published, so it outlives the run's retention
//! and never changes. A run under zero data retention is never published:
//! nothing of its content was kept to show.

use serde_json::{Value, json};

use crate::ids::{is_run_id, new_sample_id};
use crate::store::{Sample, Store, StoreError};
use crate::timeline::Event;
use crate::timestamp::{now_ms, rfc3339};

/// The longest title.
pub const MAX_TITLE_CHARS: usize = 200;

/// Why a run could not be published.
#[derive(Debug, thiserror::Error)]
pub enum PublishError {
    /// No run has that id.
    #[error("no run {0}")]
    NoSuchRun(String),
    /// The run has not ended.
    #[error("run {0} has not ended yet: publish it once it has")]
    NotEnded(String),
    /// The run kept none of its content.
    #[error("run {0} was made under zero data retention: nothing of it was kept to publish")]
    ZeroDataRetention(String),
    /// The run's request was not kept.
    #[error("run {0} has no kept request to publish")]
    NoRequest(String),
    /// The title is over [`MAX_TITLE_CHARS`].
    #[error("the title is over {MAX_TITLE_CHARS} characters")]
    TitleTooLong,
    /// The store failed.
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// Publishes run `run_id` as a sample titled `title` (default: the run's
/// prompt's first line).
pub async fn publish(
    store: &dyn Store,
    run_id: &str,
    title: Option<&str>,
) -> Result<Sample, PublishError> {
    let missing = || PublishError::NoSuchRun(run_id.to_string());
    if !is_run_id(run_id) {
        return Err(missing());
    }
    let run = store.run(run_id).await?.ok_or_else(missing)?;
    if run.permissions.zero_data_retention {
        return Err(PublishError::ZeroDataRetention(run_id.into()));
    }
    if !run.status.is_terminal() {
        return Err(PublishError::NotEnded(run_id.into()));
    }
    let request = store
        .run_request(run_id)
        .await?
        .ok_or_else(|| PublishError::NoRequest(run_id.into()))?;
    let title = match title {
        Some(t) if t.chars().count() > MAX_TITLE_CHARS => return Err(PublishError::TitleTooLong),
        Some(t) => t.to_string(),
        None => default_title(run.prompt.as_deref().unwrap_or("")),
    };
    let mut object = run.to_json();
    let timeline: Vec<Value> = store
        .events(run_id, 0)
        .await?
        .into_iter()
        .filter_map(Event::from_stored)
        .map(|e| e.with_output(run.output.as_deref()).to_json())
        .collect();
    object["timeline"] = Value::Array(timeline);
    let sample = Sample {
        id: new_sample_id(),
        run_id: run.id.clone(),
        org_id: run.org_id.clone(),
        title,
        published_at: now_ms(),
        request,
        run: object.to_string(),
    };
    store.publish_sample(&sample).await?;
    Ok(sample)
}

/// A prompt's first line, cut to a title's length.
fn default_title(prompt: &str) -> String {
    let line = prompt.lines().next().unwrap_or("").trim();
    let mut title: String = line.chars().take(80).collect();
    if line.chars().count() > 80 {
        title.push('…');
    }
    if title.is_empty() {
        title = "A run".into();
    }
    title
}

/// A sample as listed (no request, no run).
pub fn summary_json(s: &Sample) -> Value {
    json!({
        "id": s.id,
        "object": "sample",
        "title": s.title,
        "published_at": rfc3339(s.published_at),
        "run_id": s.run_id,
    })
}

/// A sample whole: what the sample page shows.
pub fn sample_json(s: &Sample) -> Value {
    let mut object = summary_json(s);
    object["request"] = serde_json::from_str(&s.request).unwrap_or(Value::Null);
    object["run"] = serde_json::from_str(&s.run).unwrap_or(Value::Null);
    object
}

#[cfg(test)]
mod tests {
    use super::default_title;

    #[test]
    fn a_title_is_the_prompts_first_line() {
        assert_eq!(default_title("Count primes\nwith python"), "Count primes");
        assert_eq!(default_title(""), "A run");
        assert!(default_title(&"x".repeat(100)).ends_with('…'));
    }
}
