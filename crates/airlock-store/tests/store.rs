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
    exercise_queue(&store);
}

/// The run queue, the same on either database: each run claimed once, in order, by a runner that can run its mode;
/// a lease only its holder renews; a lapsed lease is `lost`, never queued again; events kept once, in order.
fn exercise_queue(store: &Store) {
    use airlock_store::queue::{state, Cancelled, Lease, RUNNER_LOST};
    store.enqueue("q1", "{}", "sandbox", "s", 0).unwrap();
    std::thread::sleep(std::time::Duration::from_millis(2));
    store.enqueue("q2", "{}", "inspect", "s", 0).unwrap();
    assert_eq!(store.queue_position("q2").unwrap(), Some(2));
    let places: Vec<_> = store
        .unfinished_runs()
        .unwrap()
        .into_iter()
        .map(|r| (r.id, r.position))
        .collect();
    assert_eq!(places, [("q2".into(), Some(2)), ("q1".into(), Some(1))]);
    assert_eq!(store.queue_depth().unwrap(), (2, 0));
    // A runner that can only inspect skips the sandbox run.
    let got = store.claim("a", "ka", &["inspect"], 60_000).unwrap();
    assert_eq!(got.map(|g| g.0).as_deref(), Some("q2"));
    let got = store.claim("b", "kb", &["sandbox", "inspect"], 0).unwrap();
    assert_eq!(got.map(|g| g.0).as_deref(), Some("q1"));
    assert_eq!(
        store.claim("c", "kc", &["sandbox", "inspect"], 60_000).unwrap(),
        None
    );
    // Another runner's run is not held; the holder's is, and it learns of a cancel when it renews.
    assert_eq!(store.renew("q2", "kb", 60_000).unwrap(), Lease::NotHeld);
    assert!(!store.holds("q2", "kb").unwrap());
    assert_eq!(
        store.renew("q2", "ka", 60_000).unwrap(),
        Lease::Held { cancel: false }
    );
    assert_eq!(store.cancel_queued("q2").unwrap(), Cancelled::Asked);
    assert_eq!(
        store.renew("q2", "ka", 60_000).unwrap(),
        Lease::Held { cancel: true }
    );
    // q1's lease (0 ms) has run out: it is lost, and its runner can no longer renew or end it.
    std::thread::sleep(std::time::Duration::from_millis(5));
    let lost = store.reap_lost().unwrap();
    assert_eq!(lost, vec![("q1".to_owned(), Some("b".to_owned()))]);
    assert!(store.reap_lost().unwrap().is_empty());
    assert_eq!(store.renew("q1", "kb", 60_000).unwrap(), Lease::NotHeld);
    assert!(!store.end_queued("q1", "kb", state::DONE, None).unwrap());
    let q1 = store.queued_run("q1").unwrap().unwrap();
    assert_eq!(
        (q1.state.as_str(), q1.message.as_deref()),
        (state::LOST, Some(RUNNER_LOST))
    );
    assert!(store.end_queued("q2", "ka", state::DONE, None).unwrap());
    assert_eq!(store.cancel_queued("q2").unwrap(), Cancelled::Over);
    assert_eq!(store.cancel_queued("q-none").unwrap(), Cancelled::NotFound);
    // A queued run that is cancelled never runs.
    store.enqueue("q3", "{}", "sandbox", "s", 0).unwrap();
    assert_eq!(store.cancel_queued("q3").unwrap(), Cancelled::Dequeued);
    assert_eq!(store.claim("c", "kc", &["sandbox"], 60_000).unwrap(), None);
    let unfinished: Vec<String> = store
        .unfinished_runs()
        .unwrap()
        .into_iter()
        .map(|r| r.id)
        .collect();
    assert_eq!(unfinished, vec!["q3", "q1"]);
    // Events: a retried batch adds nothing twice.
    let ev = |n: i64| (n, "phase".to_owned(), format!("{{\"n\":{n}}}"));
    store.append_events("q1", &[ev(0), ev(1)]).unwrap();
    store.append_events("q1", &[ev(1), ev(2)]).unwrap();
    let got = store.events_after("q1", 0, 10).unwrap();
    assert_eq!(got.iter().map(|e| e.0).collect::<Vec<_>>(), vec![1, 2]);
    assert_eq!(got[1].2, "{\"n\":2}");
    store.forget_queued("q1").unwrap();
    assert_eq!(store.queued_run("q1").unwrap(), None);
    assert!(store.events_after("q1", 0, 10).unwrap().is_empty());
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

/// Content files in an S3-compatible bucket (a moto server of the test's own on loopback): stored, read back,
/// found, swept when no row names them, and uploads fetched into a local cache.
#[test]
fn content_files_in_an_s3_bucket() {
    let s3 = airlock_store::testing::S3::start();
    for (k, v) in s3.env() {
        std::env::set_var(k, v);
    }
    let tmp = tempfile::tempdir().unwrap();
    let mut store = Store::connect(tmp.path(), None)
        .unwrap()
        .with_objects(&s3.url("team"))
        .unwrap();
    let (sha, size) = store.put_bytes(b"an artifact").unwrap();
    assert_eq!(size, 11);
    assert!(store.has_object(&sha).unwrap());
    assert_eq!(store.read_object(&sha).unwrap(), b"an artifact");
    // Nothing lands in the data folder.
    assert!(!tmp.path().join("objects").join(&sha[..2]).exists());
    // A run's record and report are named by rows; a file no row names goes at the sweep.
    let now = airlock_store::now_unix();
    let src = store.save_source(&source(3), now + 100).unwrap();
    let rep = store.save_report(&src, &report(), now + 100).unwrap();
    let run = run("r-s3", RunStatus::Succeeded);
    store.begin_run(&run, &src, &rep, now + 100).unwrap();
    store.finish_run(&run).unwrap();
    let (record_sha, _) = store
        .put_bytes(&serde_json::to_vec_pretty(&run).unwrap())
        .unwrap();
    let (swept, bytes) = store.sweep_objects().unwrap();
    assert_eq!((swept, bytes), (1, 11));
    assert!(!store.has_object(&sha).unwrap());
    assert!(store.has_object(&record_sha).unwrap());
    assert_eq!(store.run("r-s3").unwrap().1.unwrap().run_id, "r-s3");
    // Uploads: kept in the bucket, fetched once into a local cache.
    let upload = "ab".repeat(32);
    store.objects().put_upload(&upload, b"\x1f\x8b archive").unwrap();
    let cache = tmp.path().join("cache");
    let local = store.objects().upload_file(&upload, &cache).unwrap().unwrap();
    assert_eq!(fs_err::read(&local).unwrap(), b"\x1f\x8b archive");
    assert_eq!(
        store.objects().upload_file(&"cd".repeat(32), &cache).unwrap(),
        None
    );
    // A location that is no object store is refused.
    assert!(Store::connect(tmp.path(), None)
        .unwrap()
        .with_objects("ftp://x/y")
        .is_err());
}
