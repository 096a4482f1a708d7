//! Store latency, SQLite against PostgreSQL (bench/store.sh): a run's whole life in the store (source, report,
//! begin, finish with one artifact, read back) and opening a store, each measured pair by pair (SQLite, then
//! PostgreSQL on a cluster of its own in a temporary folder), medians and the median of the per-pair ratios.

#![expect(clippy::unwrap_used, reason = "a benchmark that cannot set itself up stops")]

use std::time::Instant;

use airlock_store::Store;
use airlock_types::{SkillRun, SkillSource};

fn source(n: usize) -> SkillSource {
    serde_json::from_value(serde_json::json!({
        "id": format!("s{n}"), "kind": "git", "input": format!("https://example.test/skill{n}"),
        "repo_url": format!("https://example.test/skill{n}"), "commit": "0123456789abcdef0123456789abcdef01234567",
        "requested_ref": null, "pinned": true, "pinned_url": null, "subpath": "", "digest": format!("sha256:{n}"),
        "detected_files": [], "created_at": "2026-11-23T10:00:00Z",
    }))
    .unwrap()
}

fn run(id: &str, n: usize) -> SkillRun {
    serde_json::from_value(serde_json::json!({
        "schema_version": 1, "run_id": id, "source": source(n), "mode": "sandbox", "target": null,
        "status": "succeeded", "status_reason": null, "exit_code": 0, "started_at": "2026-11-23T10:00:00Z",
        "finished_at": "2026-11-23T10:01:00Z", "risk_level": "low", "classification": "prompt-only", "findings": 0,
        "command": [], "limits": null, "limit_hit": null, "network_allowed": false, "timeline": [], "files_read": [],
        "files_written": [], "changes": [], "patch_skipped": [], "review": [], "network": [], "installs": [],
        "plan": null, "steps": [], "stdout": "", "stderr": "", "stdout_truncated": false, "stderr_truncated": false,
        "duration_ms": 5, "verdict": [],
        "artifacts": [{"id": format!("{id}-out"), "kind": "stdout", "path": "stdout.txt", "summary": "output",
                       "sha256": "ab", "size": 5}],
    }))
    .unwrap()
}

fn report(n: usize) -> airlock_types::ScanReport {
    serde_json::from_value(serde_json::json!({
        "schema_version": 1, "risk_level": "low", "classification": "prompt-only", "recommended_mode": "sandbox",
        "headline": [format!("report {n}")], "source": source(n), "skills": [],
        "inventory": {"files": [], "total_bytes": 0}, "findings": [], "created_at": "2026-11-23T10:00:00Z",
    }))
    .unwrap()
}

/// Microseconds for one run's life in the store.
fn lifecycle(store: &mut Store, n: usize) -> f64 {
    let t0 = Instant::now();
    let expires = airlock_store::now_unix() + 3600;
    let src = store.save_source(&source(n), expires).unwrap();
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
