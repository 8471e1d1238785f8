//! `?limit=N&before=ID` on the list endpoints, and the list they answer.

use axum::extract::Query;
use axum::extract::rejection::QueryRejection;
use serde::Deserialize;
use serde_json::{Value, json};

use super::problem::Problem;

const DEFAULT_PAGE: i64 = 20;
const MAX_PAGE: i64 = 100;

#[derive(Deserialize)]
pub(crate) struct ListQuery {
    limit: Option<String>,
    before: Option<String>,
}

/// One page asked for.
pub(super) struct Page {
    pub limit: i64,
    pub before: Option<String>,
}

impl Page {
    /// The page a query string asks for. A query string that does not
    /// parse (a parameter given twice, say) is the caller's error, in
    /// problem+json like every other.
    pub fn from_query(query: Result<Query<ListQuery>, QueryRejection>) -> Result<Page, Problem> {
        let Query(q) = query.map_err(|e| {
            Problem::new(
                "validation-failed",
                format!("the query string: {}", e.body_text()),
            )
        })?;
        let limit = match q.limit.as_deref() {
            None => DEFAULT_PAGE,
            Some(text) => text
                .parse::<i64>()
                .ok()
                .filter(|n| (1..=MAX_PAGE).contains(n))
                .ok_or_else(|| {
                    Problem::field(
                        "validation-failed",
                        "limit",
                        format!("must be 1 to {MAX_PAGE}"),
                    )
                })?,
        };
        Ok(Page {
            limit,
            before: q.before,
        })
    }

    /// The list object of `items` (fetched with one more than the page
    /// holds, to know whether there is more), newest first.
    pub fn list<T>(
        &self,
        mut items: Vec<T>,
        id: impl Fn(&T) -> String,
        json: impl Fn(&T) -> Value,
    ) -> Value {
        let has_more = items.len() as i64 > self.limit;
        items.truncate(self.limit as usize);
        let next = if has_more {
            items.last().map(&id)
        } else {
            None
        };
        let data: Vec<Value> = items.iter().map(json).collect();
        json!({"object": "list", "data": data, "has_more": has_more, "next_before": next})
    }
}
