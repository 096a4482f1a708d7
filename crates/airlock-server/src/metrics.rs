//! Prometheus metrics at `/metrics`, in the text exposition format: requests by route, method and status with
//! their latency, the queue, runs by mode and status and their sandbox time, and the product's own measures (imports
//! that reach a report, scans that go on to a sandbox run, runs that export, time from a submitted URL to its report,
//! runs flagged medium or worse, stops at the static scan against sandbox runs).

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::sync::Mutex;
use std::time::Duration;

/// Latency buckets, in seconds.
const BUCKETS: [f64; 10] = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 5.0, 30.0];

#[derive(Default)]
struct Histogram {
    counts: [u64; BUCKETS.len()],
    count: u64,
    sum: f64,
}

impl Histogram {
    fn observe(&mut self, seconds: f64) {
        for (i, b) in BUCKETS.iter().enumerate() {
            if seconds <= *b {
                self.counts[i] += 1;
            }
        }
        self.count += 1;
        self.sum += seconds;
    }

    fn write(&self, out: &mut String, name: &str, labels: &str) {
        let sep = if labels.is_empty() { "" } else { "," };
        for (i, b) in BUCKETS.iter().enumerate() {
            let _ = writeln!(out, "{name}_bucket{{{labels}{sep}le=\"{b}\"}} {}", self.counts[i]);
        }
        let _ = writeln!(out, "{name}_bucket{{{labels}{sep}le=\"+Inf\"}} {}", self.count);
        let braces = if labels.is_empty() {
            String::new()
        } else {
            format!("{{{labels}}}")
        };
        let _ = writeln!(out, "{name}_sum{braces} {}", self.sum);
        let _ = writeln!(out, "{name}_count{braces} {}", self.count);
    }
}

#[derive(Default)]
struct Inner {
    requests: BTreeMap<(String, String, u16), Histogram>,
    imports: u64,
    imports_reported: u64,
    import_to_report: Histogram,
    runs_by_mode: BTreeMap<String, u64>,
    runs_by_status: BTreeMap<String, u64>,
    runs_by_level: BTreeMap<String, u64>,
    sandbox_seconds: Histogram,
    exports: BTreeMap<String, u64>,
}

/// The server's counters.
#[derive(Default)]
pub struct Metrics {
    inner: Mutex<Inner>,
}

impl Metrics {
    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.inner
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    pub fn request(&self, route: &str, method: &str, status: u16, took: Duration) {
        self.lock()
            .requests
            .entry((route.to_owned(), method.to_owned(), status))
            .or_default()
            .observe(took.as_secs_f64());
    }

    /// A submitted source: whether it reached a risk report, and how long that took.
    pub fn import(&self, reported: bool, took: Duration) {
        let mut m = self.lock();
        m.imports += 1;
        if reported {
            m.imports_reported += 1;
            m.import_to_report.observe(took.as_secs_f64());
        }
    }

    pub fn run_queued(&self, mode: &str) {
        *self.lock().runs_by_mode.entry(mode.to_owned()).or_default() += 1;
    }

    /// A run that ended: its status, the overall level it earned, and the sandbox's time.
    pub fn run_done(&self, status: &str, level: &str, sandbox: Option<Duration>) {
        let mut m = self.lock();
        *m.runs_by_status.entry(status.to_owned()).or_default() += 1;
        *m.runs_by_level.entry(level.to_owned()).or_default() += 1;
        if let Some(d) = sandbox {
            m.sandbox_seconds.observe(d.as_secs_f64());
        }
    }

    pub fn export(&self, kind: &str) {
        *self.lock().exports.entry(kind.to_owned()).or_default() += 1;
    }

    /// The text exposition, with the queue's depth and the runs in progress given by the caller.
    pub fn render(&self, queued: usize, running: usize) -> String {
        let m = self.lock();
        let mut out = String::new();
        let _ = writeln!(
            out,
            "# HELP airlock_http_request_duration_seconds API and UI requests by route, method and status."
        );
        let _ = writeln!(out, "# TYPE airlock_http_request_duration_seconds histogram");
        for ((route, method, status), h) in &m.requests {
            h.write(
                &mut out,
                "airlock_http_request_duration_seconds",
                &format!(
                    "route=\"{}\",method=\"{method}\",status=\"{status}\"",
                    label(route)
                ),
            );
        }
        let gauge = |out: &mut String, name: &str, help: &str, v: usize| {
            let _ = writeln!(out, "# HELP {name} {help}\n# TYPE {name} gauge\n{name} {v}");
        };
        gauge(
            &mut out,
            "airlock_queue_depth",
            "Runs waiting for a slot.",
            queued,
        );
        gauge(
            &mut out,
            "airlock_runs_in_progress",
            "Runs executing now.",
            running,
        );
        let _ = writeln!(
            out,
            "# HELP airlock_imports_total Sources submitted.\n# TYPE airlock_imports_total counter"
        );
        let _ = writeln!(out, "airlock_imports_total {}", m.imports);
        let _ = writeln!(
            out,
            "# HELP airlock_imports_reported_total Submitted sources that reached a risk report.\n# TYPE airlock_imports_reported_total counter\nairlock_imports_reported_total {}",
            m.imports_reported
        );
        histogram(
            &mut out,
            "airlock_url_to_report_seconds",
            "From a submitted URL to its risk report.",
            &m.import_to_report,
        );
        let counter =
            |out: &mut String, name: &str, help: &str, label_name: &str, map: &BTreeMap<String, u64>| {
                let _ = writeln!(out, "# HELP {name} {help}\n# TYPE {name} counter");
                for (k, v) in map {
                    let _ = writeln!(out, "{name}{{{label_name}=\"{}\"}} {v}", label(k));
                }
            };
        counter(
            &mut out,
            "airlock_runs_total",
            "Runs queued by mode (inspect and dry_run stop at the static scan; sandbox runs go on).",
            "mode",
            &m.runs_by_mode,
        );
        counter(
            &mut out,
            "airlock_runs_finished_total",
            "Runs ended, by status.",
            "status",
            &m.runs_by_status,
        );
        counter(
            &mut out,
            "airlock_runs_flagged_total",
            "Runs ended, by the overall level (scan and observed) they earned.",
            "level",
            &m.runs_by_level,
        );
        counter(
            &mut out,
            "airlock_exports_total",
            "Artifacts downloaded, by kind (patch, stdout, report, ...).",
            "kind",
            &m.exports,
        );
        histogram(
            &mut out,
            "airlock_sandbox_duration_seconds",
            "Time runs spent, start to stored.",
            &m.sandbox_seconds,
        );
        out
    }
}

/// An unlabelled histogram with its HELP and TYPE lines.
fn histogram(out: &mut String, name: &str, help: &str, h: &Histogram) {
    let _ = writeln!(out, "# HELP {name} {help}\n# TYPE {name} histogram");
    h.write(out, name, "");
}

/// A label value as the exposition format wants it.
fn label(value: &str) -> String {
    value
        .replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_exposition_counts_and_buckets() {
        let m = Metrics::default();
        m.request("/api/runs", "GET", 200, Duration::from_millis(3));
        m.request("/api/runs", "GET", 200, Duration::from_millis(300));
        m.import(true, Duration::from_millis(40));
        m.import(false, Duration::from_millis(10));
        m.run_queued("sandbox");
        m.run_done("succeeded", "medium", Some(Duration::from_secs(2)));
        let text = m.render(3, 1);
        for line in [
            "airlock_http_request_duration_seconds_bucket{route=\"/api/runs\",method=\"GET\",status=\"200\",le=\"0.005\"} 1",
            "airlock_http_request_duration_seconds_count{route=\"/api/runs\",method=\"GET\",status=\"200\"} 2",
            "airlock_queue_depth 3",
            "airlock_imports_total 2",
            "airlock_imports_reported_total 1",
            "airlock_runs_total{mode=\"sandbox\"} 1",
            "airlock_runs_flagged_total{level=\"medium\"} 1",
            "airlock_sandbox_duration_seconds_count 1",
        ] {
            assert!(text.contains(line), "{line} not in\n{text}");
        }
    }
}
