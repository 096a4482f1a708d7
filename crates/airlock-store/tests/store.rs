#![expect(clippy::unwrap_used, reason = "test setup panics with the failing step")]

//! One set of store tests, run against the embedded SQLite and against PostgreSQL (a cluster of its own in a
//! temporary folder, started and stopped by the test; as `nobody` when the tests run as root, since PostgreSQL
//! refuses to run as root).

use std::path::Path;

use airlock_store::testing::{report, run, source, Cluster};
use airlock_store::{Store, StoreError};
use airlock_types::policy::TrustDecision;
use airlock_types::RunStatus;

/// Everything the store does, the same on either database.
fn exercise(data: &Path, database: Option<&str>) {
    let mut store = Store::connect(data, database).unwrap();
    assert_eq!(
        store.backend(),
        if database.is_some() { "postgres" } else { "sqlite" }
    );
    let now = airlock_store::now_unix();
    // Sources and reports: one row per source, the later expiry kept.
    let src = store.save_source(&source(1), now + 100).unwrap();
    assert_eq!(store.save_source(&source(1), now + 50).unwrap(), src);
    let rep = store.save_report(&src, &report(), now + 100).unwrap();
    let listed = store.sources().unwrap();
    assert_eq!(listed.len(), 1);
    assert_eq!(listed[0].report_id.as_deref(), Some(rep.as_str()));
    assert_eq!(listed[0].risk_level.as_deref(), Some("low"));
    let (got, latest) = store.source(&src).unwrap();
    assert_eq!(got.input, "https://example.test/skill1");
    assert_eq!(latest.unwrap().0, rep);
    assert!(matches!(store.source("src-none"), Err(StoreError::NotFound(_))));
    // Runs: begun, finished with artifacts, found by prefix, listed newest first.
    let mut first = run("r-aaa-1", RunStatus::Succeeded);
    first.artifacts = vec![serde_json::from_value(serde_json::json!({
        "id": "r-aaa-1-out", "kind": "stdout", "path": "stdout.txt", "summary": "output",
        "sha256": store.put_bytes(b"hello").unwrap().0, "size": 5
    }))
    .unwrap()];
    store.begin_run(&first, &src, &rep, now + 100).unwrap();
    let (row, record) = store.run("r-aaa-1").unwrap();
    assert_eq!((row.status.as_str(), record.is_none()), ("running", true));
    store.finish_run(&first).unwrap();
    // Finishing again (the same artifact ids) replaces, never duplicates.
    store.finish_run(&first).unwrap();
    let second = run("r-aab-22", RunStatus::Failed);
    store.begin_run(&second, &src, &rep, now - 1).unwrap();
    store.finish_run(&second).unwrap();
    assert_eq!(store.resolve("r-aaa").unwrap(), "r-aaa-1");
    assert!(matches!(store.resolve("r-aa"), Err(StoreError::Ambiguous(_))));
    assert!(matches!(store.resolve("r-zzz"), Err(StoreError::NotFound(_))));
    let (row, record) = store.run("r-aab").unwrap();
    assert_eq!(row.status, "failed");
    assert_eq!(record.unwrap().status, RunStatus::Failed);
    let ids: Vec<String> = store.runs().unwrap().into_iter().map(|r| r.id).collect();
    assert_eq!(ids, ["r-aab-22", "r-aaa-1"]);
    // Expired runs go; reports and sources still named by a run stay.
    let stats = store.gc(now).unwrap();
    assert_eq!((stats.runs, stats.reports, stats.sources), (1, 0, 0));
    assert!(matches!(store.run("r-aab-22"), Err(StoreError::NotFound(_))));
    assert_eq!(store.discard("r-aaa").unwrap(), "r-aaa-1");
    assert!(store.runs().unwrap().is_empty());
    let stats = store.gc(now + 1000).unwrap();
    assert_eq!((stats.reports, stats.sources), (1, 1));
    // Trust decisions: saved, replaced by a newer one for the same commit, listed, removed by prefix.
    let decision = |id: &str, commit: Option<&str>| TrustDecision {
        id: id.into(),
        kind: if commit.is_some() { "commit" } else { "repository" }.into(),
        repo: "https://example.test/skill1".into(),
        subpath: String::new(),
        commit: commit.map(str::to_owned),
        policy: Default::default(),
        note: None,
        created_at: format!("2026-11-23T10:00:0{}Z", id.len()),
        files: vec![("SKILL.md".into(), "ab".into())],
        findings: vec![],
    };
    store.save_trust(&decision("t1", Some("c1"))).unwrap();
    store.save_trust(&decision("t22", Some("c1"))).unwrap();
    store.save_trust(&decision("t333", None)).unwrap();
    store.save_trust(&decision("t4444", None)).unwrap();
    let all = store.trust_decisions(None).unwrap();
    let ids: Vec<&str> = all.iter().map(|d| d.id.as_str()).collect();
    assert_eq!(ids, ["t4444", "t22"]);
    let mine = store
        .trust_decisions(Some(("https://example.test/skill1", "")))
        .unwrap();
    assert_eq!(mine.len(), 2);
    assert_eq!(mine[1].files, [("SKILL.md".to_owned(), "ab".to_owned())]);
    assert_eq!(store.remove_trust("t44").unwrap(), "t4444");
    assert!(matches!(
        store.remove_trust("t9"),
        Err(StoreError::TrustNotFound(_))
    ));
    // A store opened again with recovery (a restart, or the CLI, which has no run in progress when it opens the
    // store) marks a run left `running` as failed, and the shared open of a running server leaves it alone.
    store.save_source(&source(1), now + 100).unwrap();
    let rep = store.save_report(&src, &report(), now + 100).unwrap();
    store
        .begin_run(&run("r-crash", RunStatus::Succeeded), &src, &rep, now + 100)
        .unwrap();
    drop(store);
    let shared = Store::connect(data, database).unwrap();
    assert_eq!(shared.run("r-crash").unwrap().0.status, "running");
    let store = Store::connect_and_recover(data, database).unwrap();
    assert_eq!(store.run("r-crash").unwrap().0.status, "failed");
}

#[test]
fn the_store_on_sqlite() {
    let tmp = tempfile::tempdir().unwrap();
    exercise(tmp.path(), None);
}

#[test]
fn the_store_on_postgres() {
    let cluster = Cluster::start();
    let tmp = tempfile::tempdir().unwrap();
    exercise(tmp.path(), Some(&cluster.url));
    // The schema is there once, whichever store opened it first.
    let again = Store::connect(tmp.path(), Some(&cluster.url)).unwrap();
    assert_eq!(again.backend(), "postgres");
    // One sweeper at a time: while another server holds the sweep's lock, gc leaves expired rows to it.
    let lock = 0x6169_726c_6f63_6b67_i64;
    let mut holder = postgres::Client::connect(&cluster.url, postgres::NoTls).unwrap();
    holder.execute("SELECT pg_advisory_lock($1)", &[&lock]).unwrap();
    let mut store = Store::connect(tmp.path(), Some(&cluster.url)).unwrap();
    let now = airlock_store::now_unix();
    let src = store.save_source(&source(7), now + 100).unwrap();
    let rep = store.save_report(&src, &report(), now + 100).unwrap();
    let old = run("r-expired", RunStatus::Succeeded);
    store.begin_run(&old, &src, &rep, now - 10).unwrap();
    store.finish_run(&old).unwrap();
    assert_eq!(store.gc(now).unwrap().runs, 0);
    holder.execute("SELECT pg_advisory_unlock($1)", &[&lock]).unwrap();
    assert_eq!(store.gc(now).unwrap().runs, 1);
    // A URL that is not PostgreSQL's is refused, not taken for a file.
    assert!(Store::connect(tmp.path(), Some("mysql://x@y/z")).is_err());
}
