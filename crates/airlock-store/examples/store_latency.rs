//! Store latency, SQLite against PostgreSQL (bench/store.sh): a run's whole life in the store (source, report,
//! begin, finish with one artifact, read back) and opening a store, each measured pair by pair (SQLite, then
//! PostgreSQL on a cluster of its own in a temporary folder), medians and the median of the per-pair ratios.

#![expect(clippy::unwrap_used, reason = "a benchmark that cannot set itself up stops")]

use std::time::Instant;

use airlock_store::{testing, Store};
use airlock_types::{RunStatus, SkillRun};

/// A run of source `n` with one artifact.
fn run(id: &str, n: usize) -> SkillRun {
    let mut r = testing::run(id, RunStatus::Succeeded);
    r.source = testing::source(n);
    r.artifacts = vec![serde_json::from_value(serde_json::json!({
        "id": format!("{id}-out"), "kind": "stdout", "path": "stdout.txt", "summary": "output", "sha256": "ab", "size": 5
    }))
    .unwrap()];
    r
}

/// A report of source `n`, unlike every other one.
fn report(n: usize) -> airlock_types::ScanReport {
    let mut r = testing::report();
    r.source = testing::source(n);
    r.headline = vec![format!("report {n}")];
    r
}

/// Microseconds for one run's life in the store.
fn lifecycle(store: &mut Store, n: usize) -> f64 {
    let t0 = Instant::now();
    let expires = airlock_store::now_unix() + 3600;
    let src = store.save_source(&testing::source(n), expires).unwrap();
    let rep = store.save_report(&src, &report(n), expires).unwrap();
    let id = format!("r-bench-{n}");
    let r = run(&id, n);
    store.begin_run(&r, &src, &rep, expires).unwrap();
    store.finish_run(&r).unwrap();
    let (row, _) = store.run(&id).unwrap();
    assert_eq!(row.status, "succeeded");
    t0.elapsed().as_secs_f64() * 1e6
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() {
    let pairs: usize = std::env::var("PAIRS")
        .ok()
        .and_then(|p| p.parse().ok())
        .unwrap_or(200);
    let cluster = airlock_store::testing::Cluster::start();
    let (a, b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let mut sqlite = Store::connect(a.path(), None).unwrap();
    let mut pg = Store::connect(b.path(), Some(&cluster.url)).unwrap();
    let (mut s, mut p, mut ratio) = (Vec::new(), Vec::new(), Vec::new());
    for n in 0..pairs {
        let x = lifecycle(&mut sqlite, n);
        let y = lifecycle(&mut pg, n);
        s.push(x);
        p.push(y);
        ratio.push(y / x);
    }
    let (mut os, mut op, mut oratio) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..pairs.min(100) {
        let t0 = Instant::now();
        drop(Store::connect(a.path(), None).unwrap());
        let x = t0.elapsed().as_secs_f64() * 1e6;
        let t0 = Instant::now();
        drop(Store::connect(b.path(), Some(&cluster.url)).unwrap());
        let y = t0.elapsed().as_secs_f64() * 1e6;
        os.push(x);
        op.push(y);
        oratio.push(y / x);
    }
    let load = fs_err::read_to_string("/proc/loadavg").unwrap_or_default();
    println!(
        "pairs: {pairs}; load: {}",
        load.split_whitespace().take(3).collect::<Vec<_>>().join(" ")
    );
    println!(
        "a run's life in the store (source, report, begin, finish, read): sqlite {:.0} us, postgres {:.0} us, ratio {:.2}x",
        median(s),
        median(p),
        median(ratio)
    );
    println!(
        "opening a store: sqlite {:.0} us, postgres {:.0} us, ratio {:.2}x",
        median(os),
        median(op),
        median(oratio)
    );
}
