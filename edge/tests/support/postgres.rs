//! A real PostgreSQL server for the tests: Debian's package, one cluster
//! per test process in a temporary folder, a fresh database per test.
//! (Filled in by the PostgreSQL store's work.)

pub async fn fresh_database() -> String {
    panic!("the PostgreSQL test cluster is not set up yet")
}
