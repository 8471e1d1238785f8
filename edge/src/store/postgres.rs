//! The shared store: PostgreSQL, for several edge nodes on one state.
//! (Filled in below the interface the SQLite store defines.)

use std::collections::BTreeMap;

use super::{
    Created, Finish, LedgerTotals, NewRun, Org, OrgUpdate, Result, StoreError, StoredEvent,
};
use crate::ledger::Settlement;
use crate::run::{Metered, RunRecord, Usage};

pub struct PgStore {}

fn todo<T>() -> Result<T> {
    Err(StoreError::Task("postgres store is not built yet".into()))
}

#[allow(unused_variables)]
impl PgStore {
    pub async fn connect(url: &str) -> Result<PgStore> {
        todo()
    }
    pub async fn create_key(&self, org_name: &str, key_hash: &str, defaults: &Org) -> Result<Org> {
        todo()
    }
    pub async fn org_for_key(&self, key_hash: &str) -> Result<Option<Org>> {
        todo()
    }
    pub async fn org(&self, org_id: &str) -> Result<Option<Org>> {
        todo()
    }
    pub async fn set_org(&self, name: &str, defaults: &Org, update: &OrgUpdate) -> Result<Org> {
        todo()
    }
    pub async fn create_run(&self, new: &NewRun) -> Result<Created> {
        todo()
    }
    pub async fn start_run(&self, run_id: &str, isolation: &str, at: i64) -> Result<()> {
        todo()
    }
    pub async fn append_event(&self, run_id: &str, event: &StoredEvent) -> Result<()> {
        todo()
    }
    pub async fn record_usage(&self, run_id: &str, usage: &Usage, metered: &Metered) -> Result<()> {
        todo()
    }
    pub async fn finish_run(&self, run_id: &str, finish: &Finish) -> Result<Option<Settlement>> {
        todo()
    }
    pub async fn run(&self, run_id: &str) -> Result<Option<RunRecord>> {
        todo()
    }
    pub async fn list_runs(
        &self,
        org_id: &str,
        limit: i64,
        before: Option<&str>,
    ) -> Result<Vec<RunRecord>> {
        todo()
    }
    pub async fn events(&self, run_id: &str, after_seq: i64) -> Result<Vec<StoredEvent>> {
        todo()
    }
    pub async fn last_seq(&self, run_id: &str) -> Result<i64> {
        todo()
    }
    pub async fn in_flight_on(&self, node_id: &str) -> Result<Vec<RunRecord>> {
        todo()
    }
    pub async fn heartbeat(
        &self,
        node_id: &str,
        now: i64,
        stale_before: i64,
    ) -> Result<Vec<String>> {
        todo()
    }
    pub async fn adopt_runs(&self, from: &str, to: &str) -> Result<u64> {
        todo()
    }
    pub async fn request_cancel(&self, run_id: &str) -> Result<()> {
        todo()
    }
    pub async fn cancel_requested(&self, run_id: &str) -> Result<bool> {
        todo()
    }
    pub async fn purge(&self, now: i64, idempotency_before: i64) -> Result<u64> {
        todo()
    }
    pub async fn ledger_totals(&self) -> Result<LedgerTotals> {
        todo()
    }
    pub async fn status_counts(&self) -> Result<BTreeMap<String, i64>> {
        todo()
    }
}
