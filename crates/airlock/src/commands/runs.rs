//! `airlock runs`, `show`, `export`, `discard` and `gc`: the stored runs.

use std::io::Write;
use std::path::PathBuf;

use anyhow::Context;
use clap::Args;

use airlock_store::Store;
use airlock_types::{NetDecision, SkillRun};

use crate::exit;
use crate::settings::{data_dir, escape, field};

#[derive(Debug, Args)]
pub struct StoreArgs {
    /// Where clones, staged sources and runs are kept.
    #[arg(long, env = "AIRLOCK_DATA_DIR")]
    pub data_dir: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct GcArgs {
    #[command(flatten)]
    pub store: StoreArgs,
    /// Also remove import caches (staged copies, clones) not used for this long.
    #[arg(long, env = "AIRLOCK_RETENTION", default_value = "24h", value_parser = super::exec::parse_duration)]
    pub retention: std::time::Duration,
}

#[derive(Debug, Args)]
pub struct RunsArgs {
    #[command(flatten)]
    pub store: StoreArgs,
    #[command(flatten)]
    pub server: super::remote::ServerArgs,
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct ShowArgs {
    #[command(flatten)]
    pub store: StoreArgs,
    #[command(flatten)]
    pub server: super::remote::ServerArgs,
    /// A run id (or a unique prefix of one).
    pub run: String,
    /// Every command, in order.
    #[arg(long)]
    pub timeline: bool,
    /// Files read, written and changed.
    #[arg(long)]
    pub files: bool,
    /// The changes as a unified diff.
    #[arg(long)]
    pub diff: bool,
    /// Network attempts.
    #[arg(long)]
    pub net: bool,
    /// The scan's findings, each with its file and line.
    #[arg(long)]
    pub findings: bool,
    /// The whole record as JSON.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
#[command(group(clap::ArgGroup::new("what").required(true).args(["patch", "output", "bundle", "attestation"])))]
pub struct ExportArgs {
    #[command(flatten)]
    pub store: StoreArgs,
    #[command(flatten)]
    pub server: super::remote::ServerArgs,
    pub run: String,
    /// Write the changes as a patch that `git apply` accepts on the original target.
    #[arg(long, value_name = "FILE")]
    pub patch: Option<PathBuf>,
    /// With --patch, put back the symbolic links that point outside the target (left out by default: applied, they
    /// would lead from your repository to anywhere on your machine).
    #[arg(long, requires = "patch")]
    pub include_symlinks: bool,
    /// Print the captured output (stdout, then stderr) to stdout; to a terminal, control and invisible characters
    /// are shown escaped (see --raw).
    #[arg(long)]
    pub output: bool,
    /// With --output to a terminal, write the bytes as they were (escape sequences included).
    #[arg(long, requires = "output")]
    pub raw: bool,
    /// Write a sanitized bundle (.tar.gz): the skill at its pinned commit without links, a manifest of hashes,
    /// the risk report and the run record.
    #[arg(long, value_name = "FILE")]
    pub bundle: Option<PathBuf>,
    /// Write a signed statement of the run (in-toto v1 in a DSSE envelope, signed with this data folder's key):
    /// the skill, the policy in force, what was observed, the verdict and the digest of the stored record.
    #[arg(long, value_name = "FILE")]
    pub attestation: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct DiscardArgs {
    #[command(flatten)]
    pub store: StoreArgs,
    pub run: String,
}

fn open(args: &StoreArgs) -> anyhow::Result<Store> {
    let store = Store::open(&data_dir(args.data_dir.as_ref())?).context("open the store")?;
    Ok(store)
}

/// Where a run's stored files are read from: this machine's store or the server's artifacts.
enum Objects<'a> {
    Store(Store),
    Remote(&'a super::remote::Remote),
}

impl Objects<'_> {
    /// The run (a stored, finished one) and where its files are.
    fn open<'r>(
        store: &StoreArgs,
        remote: Option<&'r super::remote::Remote>,
        run: &str,
    ) -> anyhow::Result<(SkillRun, Objects<'r>)> {
        match remote {
            Some(r) => Ok((r.run(run)?, Objects::Remote(r))),
            None => {
                let s = open(store)?;
                let record = finished(&s, run)?;
                Ok((record, Objects::Store(s)))
            }
        }
    }

    fn read(&self, run: &SkillRun, a: &airlock_types::Artifact) -> anyhow::Result<Vec<u8>> {
        match self {
            Objects::Store(s) => Ok(s.read_object(&a.sha256)?),
            Objects::Remote(r) => r.artifact(&run.run_id, a),
        }
    }
}

fn finished(store: &Store, run: &str) -> anyhow::Result<SkillRun> {
    let (row, record) = store.run(run)?;
    record.with_context(|| format!("run {} has no record (status {})", row.id, row.status))
}

pub fn runs(args: &RunsArgs) -> anyhow::Result<u8> {
    if let Some(remote) = args.server.remote()? {
        let rows: Vec<airlock_protocol::RunSummary> = remote.get("/api/runs")?;
        if args.json {
            outln!("{}", serde_json::to_string_pretty(&rows)?);
            return Ok(exit::OK);
        }
        if rows.is_empty() {
            outln!("no runs on the server");
            return Ok(exit::OK);
        }
        outln!(
            "{:<26} {:<8} {:<15} {:<20} SOURCE",
            "RUN",
            "MODE",
            "STATUS",
            "STARTED"
        );
        let text = |v: Option<&str>| field(v.unwrap_or("-"));
        for r in rows {
            outln!(
                "{:<26} {:<8} {:<15} {:<20} {}",
                field(&r.run_id),
                text(r.mode.as_deref()),
                field(&r.status),
                field(&to_seconds(r.started_at.as_deref().unwrap_or("-"))),
                text(r.source.as_deref())
            );
        }
        return Ok(exit::OK);
    }
    let mut store = open(&args.store)?;
    let _ = store.gc(airlock_store::now_unix());
    let rows = store.runs()?;
    if args.json {
        let list: Vec<_> = rows
            .iter()
            .map(|r| {
                serde_json::json!({"run_id": r.id, "source": r.source, "mode": r.mode, "status": r.status,
                    "target": r.target, "started_at": r.started_at,
                    "expires_at": airlock_types::rfc3339(r.expires_at)})
            })
            .collect();
        outln!("{}", serde_json::to_string_pretty(&list)?);
        return Ok(exit::OK);
    }
    if rows.is_empty() {
        outln!("no runs stored");
    } else {
        outln!(
            "{:<26} {:<8} {:<15} {:<20} {:<20} SOURCE",
            "RUN",
            "MODE",
            "STATUS",
            "STARTED",
            "EXPIRES"
        );
    }
    for r in rows {
        outln!(
            "{:<26} {:<8} {:<15} {:<20} {:<20} {}",
            r.id,
            r.mode,
            r.status,
            field(&to_seconds(&r.started_at)),
            airlock_types::rfc3339(r.expires_at),
            field(&r.source)
        );
    }
    Ok(exit::OK)
}

/// An RFC 3339 time to the second (`…T20:57:36.936836356Z` is shown `…T20:57:36Z`), so the table's columns line up.
fn to_seconds(ts: &str) -> String {
    match (ts.find('.'), ts.rfind(['Z', '+'])) {
        (Some(dot), Some(zone)) if dot < zone && ts[dot + 1..zone].bytes().all(|b| b.is_ascii_digit()) => {
            format!("{}{}", &ts[..dot], &ts[zone..])
        }
        _ => ts.to_owned(),
    }
}

pub fn show(args: &ShowArgs) -> anyhow::Result<u8> {
    let remote = args.server.remote()?;
    let (run, objects) = Objects::open(&args.store, remote.as_ref(), &args.run)?;
    if args.json {
        outln!("{}", serde_json::to_string_pretty(&run)?);
        return Ok(exit::OK);
    }
    let all = !(args.timeline || args.files || args.diff || args.net || args.findings);
    let mut out = String::new();
    if all {
        out.push_str(&format!(
            "run {}  status {}  source {}\n",
            run.run_id,
            airlock_types::wire_name(&run.status),
            field(&run.source.input)
        ));
        if let Some(reason) = &run.status_reason {
            out.push_str(&format!("  {}\n", field(reason)));
        }
        for v in &run.verdict {
            out.push_str(&format!("- {}\n", field(v)));
        }
    }
    if all && run.observed.level > airlock_types::RiskLevel::Low {
        out.push_str(&format!(
            "\nobserved: {} (scan {}, overall {})\n",
            run.observed.level, run.risk_level, run.observed.overall
        ));
        for r in &run.observed.reasons {
            out.push_str(&format!("  {}\n", field(r)));
        }
    }
    if args.findings {
        let report = run
            .artifacts
            .iter()
            .find(|a| a.kind == "report")
            .context("the run has no stored report")?;
        let report: airlock_types::ScanReport = serde_json::from_slice(&objects.read(&run, report)?)?;
        out.push_str(&airlock_scan::render::text(
            &report,
            crate::settings::color_stdout(),
            true,
        ));
    }
    // A run that ran nothing has no timeline, files or network to show.
    let ran = run.mode == airlock_types::RunMode::Sandbox && run.status != airlock_types::RunStatus::Refused;
    let all = all && ran;
    if all || args.timeline {
        out.push_str("\ntimeline:\n");
        for e in &run.timeline {
            out.push_str(&format!(
                "  {:>6} ms  pid {:<4} {}  (exit {})\n",
                e.t_ms,
                e.pid,
                command_line(&e.path, &e.argv),
                e.exit_code.map_or("?".into(), |c| c.to_string())
            ));
        }
    }
    if all || args.files {
        out.push_str("\nchanges:\n");
        for c in &run.changes {
            out.push_str(&format!(
                "  {:<9} {}\n",
                airlock_types::wire_name(&c.kind),
                field(&c.path)
            ));
        }
        if !run.review.is_empty() {
            out.push_str("\nreview carefully before applying the patch:\n");
            for r in &run.review {
                out.push_str(&format!("  {}  {}\n", field(&r.path), field(&r.reason)));
            }
        }
        if !run.patch_skipped.is_empty() {
            out.push_str("\nnot in the patch:\n");
            for s in &run.patch_skipped {
                out.push_str(&format!("  {}  {}\n", field(&s.path), field(&s.reason)));
            }
        }
        if args.files {
            out.push_str("\nfiles read:\n");
            for f in &run.files_read {
                out.push_str(&format!("  {}\n", field(&f.path)));
            }
            out.push_str("\nfiles written:\n");
            for f in &run.files_written {
                out.push_str(&format!("  {}\n", field(&f.path)));
            }
        }
    }
    if all || args.net {
        let heading = out.len();
        out.push_str("\nnetwork:\n");
        let install = run.environment.as_ref().map_or(&[][..], |e| &e.network[..]);
        let phases = [("", &run.network[..]), ("install ", install)];
        for (phase, n) in phases
            .iter()
            .flat_map(|(p, list)| list.iter().map(move |n| (*p, n)))
        {
            if !(args.net || n.decision != NetDecision::Local) {
                continue;
            }
            let via = n
                .via
                .as_ref()
                .map_or(String::new(), |v| format!(" (through {})", field(v)));
            out.push_str(&format!(
                "  {phase}{:<8} {:<14} {}  {}{via}\n",
                airlock_types::wire_name(&n.decision),
                field(&n.protocol),
                field(&n.destination),
                field(&n.reason)
            ));
            if let Some(c) = &n.catch {
                let what = c.request.as_deref().unwrap_or(&c.kind);
                out.push_str(&format!(
                    "           caught: {} ({} bytes)",
                    field(what),
                    n.bytes_up
                ));
                if !c.canaries.is_empty() {
                    out.push_str(&format!(", carrying {}", field(&c.canaries.join(", "))));
                }
                if c.shell {
                    out.push_str(", a remote shell answered");
                }
                out.push('\n');
            }
        }
        if out.len() == heading + "\nnetwork:\n".len() {
            out.push_str(if args.net {
                "  no network attempts\n"
            } else {
                "  none beyond the sandbox (`--net` lists its loopback too)\n"
            });
        }
    }
    if args.diff {
        // Escaped line by line; git's own `\ No newline at end of file` marker is shown as git writes it.
        for line in patch_text(&objects, &run)?.split_inclusive('\n') {
            if line.trim_end_matches('\n') == "\\ No newline at end of file" {
                out.push_str(line);
            } else {
                out.push_str(&escape(line));
            }
        }
    }
    out!("{out}");
    Ok(exit::OK)
}

/// An exec as shown: the program that really ran, then its arguments, each a field (so an argument with spaces or
/// a newline cannot pass for several); the name it gave itself (`exec -a`) is shown only when it differs.
fn command_line(path: &str, argv: &[String]) -> String {
    let mut out = field(path);
    if let Some(name) = argv.first().filter(|a| {
        let base = |s: &str| s.rsplit('/').next().unwrap_or(s).to_owned();
        base(a) != base(path)
    }) {
        out.push_str(&format!(" (as {})", field(name)));
    }
    for a in argv.iter().skip(1) {
        let shown = field(a);
        if shown.is_empty() || shown.contains(' ') || shown.contains('"') {
            out.push_str(&format!(" \"{}\"", shown.replace('"', "\\\"")));
        } else {
            out.push(' ');
            out.push_str(&shown);
        }
    }
    out
}

fn patch_text(objects: &Objects<'_>, run: &SkillRun) -> anyhow::Result<String> {
    match run.artifacts.iter().find(|a| a.kind == "patch") {
        Some(a) => Ok(String::from_utf8_lossy(&objects.read(run, a)?).into_owned()),
        None => Ok(String::new()),
    }
}

pub fn export(args: &ExportArgs) -> anyhow::Result<u8> {
    let remote = args.server.remote()?;
    let (run, objects) = Objects::open(&args.store, remote.as_ref(), &args.run)?;
    if let Some(file) = &args.patch {
        let with_links = run.artifacts.iter().find(|a| a.kind == "patch-with-links");
        let links_in = args.include_symlinks && with_links.is_some();
        if !links_in && !run.artifacts.iter().any(|a| a.kind == "patch") {
            eprintln!(
                "run {} has no patch to write: it {} (status {}); nothing was written",
                run.run_id,
                if run.changes.is_empty() {
                    "changed no file"
                } else {
                    "changed only files the patch cannot hold"
                },
                airlock_types::wire_name(&run.status)
            );
            return Ok(exit::POLICY);
        }
        let text = match with_links.filter(|_| links_in) {
            Some(a) => String::from_utf8_lossy(&objects.read(&run, a)?).into_owned(),
            None => patch_text(&objects, &run)?,
        };
        fs_err::write(file, &text)?;
        eprintln!(
            "wrote {} ({} changed file(s))",
            escape(&file.display().to_string()),
            run.changes.len(),
        );
        let is_link = |s: &&airlock_types::PatchSkip| s.reason.starts_with(airlock_run::patch::LINK_OUTSIDE);
        if links_in {
            for s in run.patch_skipped.iter().filter(is_link) {
                eprintln!(
                    "  warning: in the patch as asked, {}: {}",
                    field(&s.path),
                    field(&s.reason.replace("; export --include-symlinks puts it back", ""))
                );
            }
        }
        for s in run.patch_skipped.iter().filter(|s| !(links_in && is_link(s))) {
            eprintln!("  not in the patch: {}: {}", field(&s.path), field(&s.reason));
        }
        for r in &run.review {
            eprintln!(
                "  review carefully before applying: {}: {}",
                field(&r.path),
                field(&r.reason)
            );
        }
    }
    if args.output {
        let mut stdout = std::io::stdout().lock();
        // To a terminal the output is made safe (no escape sequences reach it) unless --raw; to a file or a pipe
        // it is written as it was.
        if std::io::IsTerminal::is_terminal(&stdout) && !args.raw {
            stdout.write_all(escape(&run.stdout).as_bytes())?;
            stdout.write_all(escape(&run.stderr).as_bytes())?;
        } else {
            stdout.write_all(run.stdout.as_bytes())?;
            stdout.write_all(run.stderr.as_bytes())?;
        }
    }
    if let Some(file) = &args.bundle {
        match &objects {
            Objects::Store(store) => bundle(store, &run, file)?,
            Objects::Remote(r) => {
                let bytes = r.bytes(&format!("/api/runs/{}/bundle", run.run_id))?;
                fs_err::write(file, bytes)?;
            }
        }
        eprintln!("wrote {}", escape(&file.display().to_string()));
    }
    if let Some(file) = &args.attestation {
        if remote.is_some() {
            anyhow::bail!("--attestation signs with this machine's key a run stored here; it does not go through --server");
        }
        let keys = airlock_attest::Keys::load_or_create(&data_dir(args.store.data_dir.as_ref())?)?;
        // The statement signed as the record was stored; a run stored before runs were signed is signed now.
        let kept = match &objects {
            Objects::Store(store) => store.run_attestation(&run.run_id)?,
            Objects::Remote(_) => None,
        };
        match kept {
            Some(envelope) => fs_err::write(file, envelope)?,
            None => {
                eprintln!("this run was stored before runs were signed: signing its record as it is now");
                fs_err::write(file, keys.sign(&airlock_attest::run_statement(&run))?)?;
            }
        }
        super::verify::signed(file, &keys);
    }
    Ok(exit::OK)
}

/// A sanitized bundle: regular files only (no links, no modes beyond 644/755), under `skill/`, plus
/// `manifest.json` (path, sha256, size of each), `report.json` and `run.json`.
fn bundle(store: &Store, run: &SkillRun, file: &std::path::Path) -> anyhow::Result<()> {
    let tmp = tempfile::NamedTempFile::new_in(
        file.parent()
            .filter(|p| !p.as_os_str().is_empty())
            .unwrap_or(std::path::Path::new(".")),
    )?;
    airlock_run::bundle::write(store, run, tmp.reopen()?)?;
    tmp.persist(file).map_err(|e| e.error)?;
    Ok(())
}

pub fn discard(args: &DiscardArgs) -> anyhow::Result<u8> {
    let mut store = open(&args.store)?;
    let id = store.discard(&args.run)?;
    outln!("discarded {id}");
    Ok(exit::OK)
}

pub fn gc(args: &GcArgs) -> anyhow::Result<u8> {
    let mut store = open(&args.store)?;
    let s = store.gc(airlock_store::now_unix())?;
    let (orphans, orphan_bytes) = store.sweep_objects()?;
    let (caches, cache_bytes) = store.sweep_caches(args.retention)?;
    outln!(
        "removed {} run(s), {} report(s), {} source(s), {} file(s) ({} bytes), {} import cache(s) ({} bytes)",
        s.runs,
        s.reports,
        s.sources,
        s.objects + orphans,
        s.bytes + orphan_bytes,
        caches,
        cache_bytes
    );
    Ok(exit::OK)
}

#[cfg(test)]
mod tests {
    use super::to_seconds;

    #[test]
    fn started_times_are_shown_to_the_second() {
        assert_eq!(
            to_seconds("2026-11-24T20:57:36.936836356Z"),
            "2026-11-24T20:57:36Z"
        );
        assert_eq!(
            to_seconds("2026-11-24T20:57:36.5+01:00"),
            "2026-11-24T20:57:36+01:00"
        );
        assert_eq!(to_seconds("2026-11-24T20:57:36Z"), "2026-11-24T20:57:36Z");
        assert_eq!(to_seconds("-"), "-");
    }
}
