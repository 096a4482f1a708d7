//! The risk screen: a source's report (level, the skill, the detonation, the modes to try, its files and findings)
//! and a file of the source, each finding marked on its line.

use std::collections::BTreeMap;

use axum::extract::{Form, Path as UrlPath, State as AxState};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Redirect, Response};
use maud::{html, Markup};
use serde::Deserialize;

use airlock_types::display::line as shown;
use airlock_types::{Finding, ScanReport, Severity};

use super::{error_page, page};
use crate::error::{blocking, check_id, ApiError};
use crate::runs::submit_run;
use crate::state::Shared;
use airlock_protocol::RunSpec;

pub(super) async fn source_page(AxState(app): AxState<Shared>, UrlPath(id): UrlPath<String>) -> Response {
    if let Err(e) = check_id(&id) {
        return error_page(&e);
    }
    let id2 = id.clone();
    let here = !app.config.dispatches();
    let loaded = blocking(move || {
        let store = app.config.store()?;
        store.source(&id2).map_err(|_| ApiError::not_found("source"))
    })
    .await;
    let (source, report) = match loaded {
        Ok(x) => x,
        Err(e) => return error_page(&e),
    };
    let Some((_, report)) = report else {
        return error_page(&ApiError::new(
            StatusCode::NOT_FOUND,
            "not_found",
            "this source has no report",
        ));
    };
    page("Risk", risk(&id, &source, &report, here))
}

/// Detonates a source (without the page's script) and shows its report again.
pub(super) async fn detonate(AxState(app): AxState<Shared>, UrlPath(id): UrlPath<String>) -> Response {
    match crate::detonate::run(&app, id.clone()).await {
        Ok(_) => Redirect::to(&format!("/sources/{id}")).into_response(),
        Err(e) => error_page(&e),
    }
}

/// The detonation part of the risk screen: its result when the report has one; for a skill with something to run,
/// a detonation that starts by itself (the page's script), or with its button.
fn detonation(id: &str, report: &ScanReport, here: bool) -> Markup {
    let done = report
        .headline
        .iter()
        .find(|h| h.starts_with("Detonated in the sandbox") || h.starts_with("Not detonated"));
    let runnable = report.classification != airlock_types::Classification::PromptOnly;
    html! {
        @if let Some(summary) = done {
            section #detonation {
                h2 { "Detonation" }
                p { (shown(summary)) }
                @if let Some(run) = summary.split(", run ").nth(1).and_then(|r| r.split(')').next()) {
                    p { a href={ "/runs/" (run) } { "The detonation's run record" } }
                }
            }
        } @else if runnable && here {
            section #detonation data-detonate=(id) {
                h2 { "Detonation" }
                p.note { "What the skill can run (its commands, every script) runs sealed with planted secrets and a \
                    sinkhole network for at most 10 s; what touches a secret or would leave is added to this report. \
                    Nothing leaves this server." }
                form.inline method="post" action={ "/sources/" (id) "/detonate" } {
                    button type="submit" { "Detonate now" }
                }
                p #detonation-state {}
            }
        }
    }
}

fn risk(id: &str, source: &airlock_types::SkillSource, report: &ScanReport, here: bool) -> Markup {
    let mut by_severity: BTreeMap<std::cmp::Reverse<Severity>, Vec<&Finding>> = BTreeMap::new();
    for f in &report.findings {
        by_severity
            .entry(std::cmp::Reverse(f.severity))
            .or_default()
            .push(f);
    }
    let kinds: BTreeMap<String, usize> = report.inventory.files.iter().fold(BTreeMap::new(), |mut m, f| {
        *m.entry(airlock_types::wire_name(&f.kind)).or_default() += 1;
        m
    });
    let pin = match (&source.commit, source.pinned) {
        (Some(c), true) => format!("pinned to commit {c}"),
        (Some(c), false) => format!(
            "this points at {}; pinned to commit {c}",
            source
                .requested_ref
                .as_deref()
                .map_or("a moving ref".to_owned(), |r| format!("`{r}`"))
        ),
        (None, _) => format!("a local copy, digest {}", source.digest),
    };
    html! {
        section #risk {
            h1 class={ "level " (report.risk_level) } { (report.risk_level.as_str().to_uppercase()) " · " (airlock_types::wire_name(&report.classification)) }
            @if let Some(skill) = report.skills.iter().find(|s| s.path == report.source.subpath).or(report.skills.first()) {
                p #skill {
                    strong { (shown(skill.name.as_deref().unwrap_or("(no name)"))) }
                    @if let Some(d) = &skill.description { ": " (shown(d)) }
                }
            }
            @for l in &report.headline { p.headline { (shown(l)) } }
            dl {
                dt { "source" } dd { (shown(&source.input)) }
                dt { "commit" } dd { (shown(&pin)) }
                @if let Some(url) = &source.pinned_url { dt { "use this next time" } dd { code { (shown(url)) } } }
                dt { "files" } dd { (report.inventory.files.len()) " (" (report.inventory.total_bytes) " bytes): "
                    @for (k, n) in &kinds { (n) " " (k) " " } }
                dt { "skills found" } dd { @for s in &report.skills { (shown(s.name.as_deref().unwrap_or(&s.path))) " " } }
                dt { "recommended" } dd { (airlock_types::wire_name(&report.recommended_mode)) }
            }
            @if let Some(t) = &report.trust {
                p #trust class={ "trust " (if t.applies { "applies" } else { "stale" }) } { (shown(&t.note)) }
                @if let Some(c) = &t.changes {
                    ul #trust-changes {
                        @for f in &c.files_added { li { "added " code { (shown(f)) } } }
                        @for f in &c.files_changed { li { "changed " code { (shown(f)) } } }
                        @for f in &c.files_removed { li { "removed " code { (shown(f)) } } }
                        @for f in &c.findings_new { li.error { "new finding " (shown(f)) } }
                        @for f in &c.findings_gone { li { "finding gone " (shown(f)) } }
                    }
                }
            }
        }
        (detonation(id, report, here))
        section #modes {
            h2 { "Try it" }
            p.note { "Every mode runs with the same limits: 60 s, 512 MiB of memory, 256 MiB of disk, 256 processes, no network." }
            @for (mode, label, what) in [
                ("inspect", "Inspect only", "Nothing runs: the report is stored."),
                ("dry_run", "Dry run", "Nothing runs: shows what an agent would receive and every command the skill asks for."),
                ("sandbox", "Sandbox run", "Runs the skill's commands in the sealed sandbox against a copy of the sample app."),
            ] {
                @let recommended = airlock_types::wire_name(&report.recommended_mode).replace('-', "_") == mode;
                form class={ "mode" @if recommended { " recommended" } } method="post" action={ "/sources/" (id) "/run" } {
                    input type="hidden" name="mode" value=(mode);
                    button type="submit" name="go" value=(mode) { (label) }
                    span { (what) @if recommended { " " strong.badge { "Recommended." } } }
                    @if mode == "sandbox" && report.declared_policy.is_some() {
                        label.accept { input type="checkbox" name="accept_policy" value="on"; " with the skill's declared policy (within this server's)" }
                    }
                    @if mode == "sandbox" && report.risk_level == airlock_types::RiskLevel::Block {
                        label.force { input type="checkbox" name="force" value="on"; " Run it anyway. The scan blocks it: it goes for secrets, credentials or the host. In the sandbox it finds none of yours and reaches no network, but it will try, and what it writes is in the patch." }
                    }
                }
            }
        }
        @if let Some(d) = &report.declared_policy {
            section #policy {
                h2 { "Declared policy" }
                p { "From " code { (shown(&d.source.file)) ":" (d.source.line) } " (" (shown(&d.source.origin)) "). Applied only when you ask for it." }
                ul {
                    @for a in &d.policy.network.allow { li { "network: " code { (shown(a)) } } }
                    @for p in &d.policy.network.presets { li { "network preset: " code { (shown(p)) } } }
                    @for w in &d.policy.filesystem.writable { li { "writes: " code { (shown(w)) } } }
                    @if let Some(t) = &d.policy.resources.timeout { li { "time: " (shown(t)) } }
                    @if let Some(m) = &d.policy.resources.memory { li { "memory: " (shown(m)) } }
                    @if let Some(p) = d.policy.install.packages { li { "installs packages: " (p) } }
                }
            }
        }
        section #skill-files {
            h2 { "Files (" (report.inventory.files.len()) ")" }
            table {
                tr { th { "file" } th { "kind" } th { "bytes" } th { "findings" } }
                @for f in &report.inventory.files {
                    @let n = report.findings.iter().filter(|x| x.file == f.path).count();
                    tr {
                        td { @if !viewable(f) {
                                code { (shown(&f.path)) } @if let Some(t) = &f.link_target { " → " code { (shown(t)) } }
                            } @else {
                                a href={ "/sources/" (id) "/file?path=" (query(&f.path)) } { code { (shown(&f.path)) } }
                            } }
                        td { (airlock_types::wire_name(&f.kind)) }
                        td { (f.size) }
                        td { @if n > 0 { (n) } }
                    }
                }
            }
        }
        section #findings {
            h2 { "Findings (" (report.findings.len()) ")" }
            @for (sev, list) in &by_severity {
                h3 class={ "sev " (sev.0.as_str()) } { (sev.0.as_str().to_uppercase()) " (" (list.len()) ")" }
                ul {
                    @for f in list {
                        li {
                            @let entry = report.inventory.files.iter().find(|e| e.path == f.file);
                            @if entry.is_some_and(|e| !viewable(e)) {
                                // A link, a binary or a file too large to show has no page: named, with where it points.
                                code.where { (shown(&f.file)) }
                                @if let Some(t) = entry.and_then(|e| e.link_target.as_ref()) { " → " code { (shown(t)) } }
                                @if f.line == 0 { " (the whole file)" } @else { " line " (f.line) }
                            } @else if f.line > 0 {
                                a.where href={ "/sources/" (id) "/file?path=" (query(&f.file)) "&line=" (f.line) "#L" (f.line) } {
                                    code { (shown(&f.file)) ":" (f.line) }
                                }
                            } @else {
                                a.where href={ "/sources/" (id) "/file?path=" (query(&f.file)) } {
                                    code { (shown(&f.file)) } " (the whole file)"
                                }
                            }
                            " " span.rule { (f.rule) }
                            " " span.kind { "(" (f.kind().as_str()) ", " (f.standing().as_str()) ")" }
                            @if !f.evidence.is_empty() { pre.evidence { (shown(&f.evidence)) } }
                            p { (shown(&f.message)) }
                        }
                    }
                }
            }
        }
    }
}

/// Whether a file of the inventory has a page of its own (a text file small enough to show).
fn viewable(f: &airlock_types::InventoryEntry) -> bool {
    !matches!(
        f.kind,
        airlock_types::FileKind::Binary | airlock_types::FileKind::Symlink
    ) && f.size <= FILE_VIEW_LIMIT
}

/// A value for a query string: everything but unreserved characters percent-encoded.
fn query(value: &str) -> String {
    value
        .bytes()
        .map(|b| {
            if b.is_ascii_alphanumeric() || b"-_.~/".contains(&b) {
                (b as char).to_string()
            } else {
                format!("%{b:02X}")
            }
        })
        .collect()
}

/// Files larger than this are not shown.
const FILE_VIEW_LIMIT: u64 = 512 * 1024;

#[derive(Deserialize)]
pub(super) struct FileQuery {
    path: String,
    line: Option<u32>,
}

/// A file of the source at its pinned commit, lines numbered, the finding's line highlighted. Only a path the
/// source's inventory lists (a regular text file) is read, from airlock's own staged copy.
pub(super) async fn file_page(
    AxState(app): AxState<Shared>,
    UrlPath(id): UrlPath<String>,
    axum::extract::Query(q): axum::extract::Query<FileQuery>,
) -> Response {
    if let Err(e) = check_id(&id) {
        return error_page(&e);
    }
    let not_found = ApiError::not_found;
    let path = q.path.clone();
    let loaded = blocking(move || {
        let store = app.config.store()?;
        let (source, report) = store.source(&id).map_err(|_| not_found("source"))?;
        let (_, report) = report.ok_or_else(|| not_found("report"))?;
        let entry = report
            .inventory
            .files
            .iter()
            .find(|f| f.path == path)
            .filter(|f| {
                !matches!(
                    f.kind,
                    airlock_types::FileKind::Binary | airlock_types::FileKind::Symlink
                )
            })
            .ok_or_else(|| not_found("file in this source"))?;
        if entry.size > FILE_VIEW_LIMIT {
            return Err(not_found("file small enough to show"));
        }
        let input = source.pinned_url.clone().unwrap_or_else(|| source.input.clone());
        let spec = app.settings_parse(&input)?;
        let imported = airlock_run::import(&spec, app.settings())?;
        let bytes = fs_err::read(imported.staged.root.join(&entry.path)).map_err(|_| not_found("file"))?;
        let findings: Vec<Finding> = report
            .findings
            .iter()
            .filter(|f| f.file == path)
            .cloned()
            .collect();
        Ok((source, String::from_utf8_lossy(&bytes).into_owned(), findings))
    })
    .await;
    let (source, text, findings) = match loaded {
        Ok(x) => x,
        Err(e) => return error_page(&e),
    };
    let commit = source
        .commit
        .as_ref()
        .map_or_else(|| source.digest.clone(), ToString::to_string);
    page(
        "File",
        html! {
            h1 { code { (shown(&q.path)) } }
            p.note { "At " (shown(&commit)) ", as airlock imported it. Shown as text; nothing in it is run or rendered." }
            @let whole: Vec<&Finding> = findings.iter().filter(|f| f.line == 0).collect();
            @if !whole.is_empty() {
                ul.whole { @for f in whole { li class={ "sev " (f.severity.as_str()) } { (f.severity.as_str().to_uppercase()) " " span.rule { (f.rule) } ": " (shown(&f.message)) } } }
            }
            table.file {
                @for (i, l) in super::highlight::lines(&q.path, &text).iter().enumerate() {
                    @let n = u32::try_from(i + 1).unwrap_or(u32::MAX);
                    @let here: Vec<&Finding> = findings.iter().filter(|f| f.line == n).collect();
                    tr id={ "L" (n) } class={ @if Some(n) == q.line { "hit " } @if !here.is_empty() { "finding" } } {
                        td.n { (n) } td { code { @for (class, piece) in l { @if let Some(c) = class { span class=(c) { (shown(piece)) } } @else { (shown(piece)) } } }
                            @for f in &here { div class={ "mark sev " (f.severity.as_str()) } { (f.severity.as_str().to_uppercase()) " " (f.rule) ": " (shown(&f.message)) } } }
                    }
                }
            }
        },
    )
}

#[derive(Deserialize)]
pub(super) struct RunForm {
    mode: String,
    /// A checkbox: apply the skill's declared policy.
    #[serde(default)]
    accept_policy: Option<String>,
    /// A checkbox: run a skill the scan blocks, knowing what it risks.
    #[serde(default)]
    force: Option<String>,
}

pub(super) async fn start_run(
    AxState(app): AxState<Shared>,
    UrlPath(id): UrlPath<String>,
    Form(form): Form<RunForm>,
) -> Response {
    if let Err(e) = check_id(&id) {
        return error_page(&e);
    }
    let app2 = app.clone();
    let input = blocking(move || {
        let store = app2.config.store()?;
        Ok(store.source(&id).map(|(s, _)| s.input).ok())
    })
    .await;
    let Ok(Some(input)) = input else {
        return error_page(&ApiError::not_found("source"));
    };
    let Ok(mode) = serde_json::from_value::<airlock_types::RunMode>(serde_json::Value::String(form.mode))
    else {
        return error_page(&ApiError::bad("bad_mode", "mode is inspect, dry_run or sandbox"));
    };
    let body = RunSpec {
        mode,
        accept_policy: form.accept_policy.is_some(),
        force: form.force.is_some(),
        ..RunSpec::new(input)
    };
    match submit_run(&app, body).await {
        Ok((run_id, _)) => Redirect::to(&format!("/runs/{run_id}")).into_response(),
        Err(e) => error_page(&e),
    }
}
