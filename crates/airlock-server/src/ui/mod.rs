//! The web UI: server-rendered HTML (maud escapes every value it interpolates) with one small script for live
//! updates. Three screens: import (with the run history), the risk report of a source, and a run. Everything a skill
//! controls is hostile: it is escaped by the template, shown through airlock's display rule (control, bidi and
//! invisible characters made visible), never rendered as markdown or HTML, and never a link. The Content-Security-
//! Policy allows only this server's own script and style.

use std::collections::BTreeMap;

use axum::extract::{Form, Path as UrlPath, State as AxState};
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::{IntoResponse, Redirect, Response};
use axum::routing::{get, post};
use axum::Router;
use maud::{html, Markup, DOCTYPE};
use serde::Deserialize;

use airlock_types::display::line as shown;
use airlock_types::{Finding, ScanReport, Severity};

use crate::access::{session_cookie, session_set_cookie, token_matches};
use crate::api::{
    blocking, check_id, import_and_store, queue_status, queued_view, submit_run, ApiError, RunSpec, Shared,
};
use crate::live::State;

mod review;
use review::review;

const CSP: &str =
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; \
                   form-action 'self'; base-uri 'none'; frame-ancestors 'none'";

const BOUNDARY: &str = "Runs happen in a sealed sandbox on this server: no access to your machine, your files or your \
                        secrets, no network unless allowed, nothing kept after the run but its record. Nothing reaches \
                        your repository unless you export it and apply it yourself.";

pub(crate) fn routes() -> Router<Shared> {
    Router::new()
        .route("/", get(home))
        .route("/import", post(import))
        .route("/sources/{id}", get(source_page))
        .route("/sources/{id}/run", post(start_run))
        .route("/sources/{id}/detonate", post(detonate))
        .route("/sources/{id}/file", get(file_page))
        .route("/runs/{id}", get(run_page))
        .route("/runs/{id}/discard", post(discard))
        .route("/runs/{id}/cancel", post(cancel))
        .route("/login", get(login_page).post(login))
        .route("/logout", post(logout))
        .route(
            "/static/app.js",
            get(|| async { asset("text/javascript", APP_JS) }),
        )
        .route("/static/app.css", get(|| async { asset("text/css", APP_CSS) }))
        .route(
            "/static/favicon.svg",
            get(|| async { asset("image/svg+xml", FAVICON) }),
        )
        .route(
            "/favicon.ico",
            get(|| async { Redirect::permanent("/static/favicon.svg") }),
        )
}

fn asset(content_type: &'static str, body: &'static str) -> Response {
    (
        [
            (header::CONTENT_TYPE, content_type),
            (header::CACHE_CONTROL, "no-cache"),
        ],
        body,
    )
        .into_response()
}

/// A page with the headers every page carries.
fn page(title: &str, body: Markup) -> Response {
    let markup = html! {
        (DOCTYPE)
        html lang="en" {
            head {
                meta charset="utf-8";
                meta name="viewport" content="width=device-width, initial-scale=1";
                title { (title) " · airlock" }
                link rel="stylesheet" href="/static/app.css";
                link rel="icon" href="/static/favicon.svg" type="image/svg+xml";
                script src="/static/app.js" defer {}
            }
            body {
                header { a href="/" { "airlock" } span.tag { "try a skill without trusting it" } }
                p.boundary { (BOUNDARY) }
                main { (body) }
            }
        }
    };
    (
        [
            (header::CONTENT_SECURITY_POLICY, CSP),
            (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
            (header::REFERRER_POLICY, "same-origin"),
        ],
        markup,
    )
        .into_response()
}

fn error_page(e: &ApiError) -> Response {
    let mut r = page(
        "Error",
        html! { section.error { h1 { "That did not work" } p { (shown(&e.body.message)) } p { a href="/" { "Back" } } } },
    );
    *r.status_mut() = e.status;
    r
}

// ----- login (when the server has a token) -----

async fn login_page() -> Response {
    page(
        "Log in",
        html! {
            section {
                h1 { "Log in" }
                form method="post" action="/login" {
                    label for="token" { "The server's token (its operator has it)" }
                    input #token type="password" name="token" required autocomplete="current-password";
                    button type="submit" { "Log in" }
                }
            }
        },
    )
}

#[derive(Deserialize)]
struct LoginForm {
    token: String,
}

async fn login(AxState(app): AxState<Shared>, headers: HeaderMap, Form(form): Form<LoginForm>) -> Response {
    if app.config.token.is_none() || !token_matches(&app, form.token.trim()) {
        let mut r = page(
            "Log in",
            html! { section.error { h1 { "Wrong token" } p { a href="/login" { "Try again" } } } },
        );
        *r.status_mut() = StatusCode::UNAUTHORIZED;
        return r;
    }
    let id = app.sessions.start();
    let cookie = session_set_cookie(&app, host_header(&headers), Some(&id));
    ([(header::SET_COOKIE, cookie)], Redirect::to("/")).into_response()
}

/// Ends the browser's session (the cookie is cleared and the id forgotten by the server).
async fn logout(AxState(app): AxState<Shared>, headers: HeaderMap) -> Response {
    if let Some(id) = session_cookie(&headers) {
        app.sessions.end(id);
    }
    let cookie = session_set_cookie(&app, host_header(&headers), None);
    ([(header::SET_COOKIE, cookie)], Redirect::to("/login")).into_response()
}

fn host_header(headers: &HeaderMap) -> Option<&str> {
    headers.get(header::HOST).and_then(|v| v.to_str().ok())
}

// ----- import and history -----

async fn home(AxState(app): AxState<Shared>) -> Response {
    let hours = app.config.retention.as_secs() / 3600;
    let logged_in = app.config.token.is_some();
    let example = crate::example_dir(&app.config.data_dir).display().to_string();
    let runs = blocking(move || {
        let store = app.config.store()?;
        let mut runs = Vec::new();
        // With runners, the runs that have not handed back a record yet come from the queue.
        if app.config.dispatches() {
            for q in store.unfinished_runs()? {
                runs.push(airlock_store::RunRow {
                    status: queue_status(&q.state),
                    id: q.id,
                    source: q.source,
                    mode: q.mode,
                    target: String::new(),
                    started_at: String::new(),
                    expires_at: 0,
                });
            }
        }
        runs.extend(store.runs()?);
        Ok(runs)
    })
    .await;
    let runs = match runs {
        Ok(r) => r,
        Err(e) => return error_page(&e),
    };
    page(
        "Import",
        html! {
            section {
                h1 { "Import a skill" }
                form method="post" action="/import" {
                    label for="url" { "GitHub URL, git URL or (where the operator allows) a folder" }
                    input #url type="text" name="url" required placeholder="https://github.com/owner/repo/tree/main/skills/name";
                    button type="submit" { "Import and scan" }
                }
                form #example method="post" action="/import" {
                    input type="hidden" name="url" value=(example);
                    button type="submit" { "Or try the bundled example skill (adds a footer to a sample React app)" }
                }
                p.note { "airlock fetches the skill pinned to a commit and reads its files. It does not run anything until you choose a mode, and never touches your own project." }
            }
            section {
                h2 { "Runs" }
                @if runs.is_empty() { p { "No runs yet." } }
                @else {
                    table #runs {
                        tr { th { "run" } th { "status" } th { "mode" } th { "started" } th { "source" } }
                        @for r in &runs {
                            tr {
                                td { a href={ "/runs/" (r.id) } { (r.id) } }
                                td class={ "status " (r.status) } { (r.status) }
                                td { (r.mode) }
                                td { (when(&r.started_at)) }
                                td { (shown(&r.source)) }
                            }
                        }
                    }
                    p.note { "Runs and reports are kept for " (hours) " hours, then deleted with everything they produced." }
                }
            }
            @if logged_in {
                form #logout method="post" action="/logout" {
                    button type="submit" { "Log out" }
                }
            }
        },
    )
}

#[derive(Deserialize)]
struct ImportForm {
    url: String,
}

async fn import(AxState(app): AxState<Shared>, Form(form): Form<ImportForm>) -> Response {
    let url = form.url.trim().to_owned();
    let given = url.clone();
    let result = blocking(move || import_and_store(&app, &given)).await;
    match result {
        Ok(view) => Redirect::to(&format!("/sources/{}", view.id)).into_response(),
        // The form again, with what was typed, under the reason.
        Err(e) => {
            let mut r = page(
                "Import",
                html! {
                    section.error {
                        h1 { "That did not import" }
                        p { (shown(&e.body.message)) }
                        form method="post" action="/import" {
                            label for="url" { "GitHub URL, git URL or (where the operator allows) a folder" }
                            input #url type="text" name="url" required value=(url);
                            button type="submit" { "Import and scan" }
                        }
                        p { a href="/" { "Back" } }
                    }
                },
            );
            *r.status_mut() = e.status;
            r
        }
    }
}

/// A stored time, to the second (`2026-11-25 03:47:37 UTC`).
fn when(rfc3339: &str) -> String {
    match (rfc3339.get(..10), rfc3339.get(11..19)) {
        (Some(day), Some(time)) => format!("{day} {time} UTC"),
        _ => rfc3339.to_owned(),
    }
}

// ----- the risk screen -----

async fn source_page(AxState(app): AxState<Shared>, UrlPath(id): UrlPath<String>) -> Response {
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
async fn detonate(AxState(app): AxState<Shared>, UrlPath(id): UrlPath<String>) -> Response {
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
                        td { @if matches!(f.kind, airlock_types::FileKind::Binary | airlock_types::FileKind::Symlink) || f.size > FILE_VIEW_LIMIT {
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
                            @if f.line > 0 {
                                a.where href={ "/sources/" (id) "/file?path=" (query(&f.file)) "&line=" (f.line) "#L" (f.line) } {
                                    code { (shown(&f.file)) ":" (f.line) }
                                }
                            } @else {
                                a.where href={ "/sources/" (id) "/file?path=" (query(&f.file)) } {
                                    code { (shown(&f.file)) } " (the whole file)"
                                }
                            }
                            " " span.rule { (f.rule) }
                            @if !f.evidence.is_empty() { pre.evidence { (shown(&f.evidence)) } }
                            p { (shown(&f.message)) }
                        }
                    }
                }
            }
        }
    }
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
struct FileQuery {
    path: String,
    line: Option<u32>,
}

/// A file of the source at its pinned commit, lines numbered, the finding's line highlighted. Only a path the
/// source's inventory lists (a regular text file) is read, from airlock's own staged copy.
async fn file_page(
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
                @for (i, l) in text.lines().enumerate() {
                    @let n = u32::try_from(i + 1).unwrap_or(u32::MAX);
                    @let here: Vec<&Finding> = findings.iter().filter(|f| f.line == n).collect();
                    tr id={ "L" (n) } class={ @if Some(n) == q.line { "hit " } @if !here.is_empty() { "finding" } } {
                        td.n { (n) } td { code { (shown(l)) }
                            @for f in &here { div class={ "mark sev " (f.severity.as_str()) } { (f.severity.as_str().to_uppercase()) " " (f.rule) ": " (shown(&f.message)) } } }
                    }
                }
            }
        },
    )
}

#[derive(Deserialize)]
struct RunForm {
    mode: String,
    /// A checkbox: apply the skill's declared policy.
    #[serde(default)]
    accept_policy: Option<String>,
    /// A checkbox: run a skill the scan blocks, knowing what it risks.
    #[serde(default)]
    force: Option<String>,
}

async fn start_run(
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

// ----- the run screen -----

async fn run_page(AxState(app): AxState<Shared>, UrlPath(id): UrlPath<String>) -> Response {
    if let Err(e) = check_id(&id) {
        return error_page(&e);
    }
    if let Some(live) = app.live(&id) {
        let state = live.state();
        if let State::Error(_) | State::Cancelled = &state {
            return page(
                "Run",
                html! {
                    section #run data-run=(id) {
                        h1 { "Run " (id) }
                        p #state class={ "status " (state.name()) } { (state.name()) }
                        @if let State::Error(m) = &state { pre.error { (shown_block(m)) } }
                        p { a href="/" { "Back" } }
                    }
                },
            );
        }
        if !matches!(state, State::Done(_)) {
            let position = app.position(&id);
            return page(
                "Run",
                html! {
                    section #run data-run=(id) data-live="1" {
                        h1 { "Run " (id) }
                        p #state class={ "status " (state.name()) } { (state.name())
                            @if let Some(p) = position { " (place " (p) " in the queue)" } }
                        form.inline #cancel method="post" action={ "/runs/" (id) "/cancel" } {
                            button type="submit" { "Cancel this run" }
                        }
                        h2 { "Live" }
                        ol #live {}
                        p.note { "This page follows the run as it happens; without JavaScript, " a href={ "/runs/" (id) } { "reload it" } "." }
                    }
                },
            );
        }
    }
    // A run the runners have not handed back yet: followed live, or why it ended without a record.
    match queued_view(&app, &id).await {
        Ok(Some(view)) if matches!(view.status.as_str(), "queued" | "running") => {
            return page(
                "Run",
                html! {
                    section #run data-run=(id) data-live="1" {
                        h1 { "Run " (id) }
                        p #state class={ "status " (view.status) } { (view.status)
                            @if let Some(p) = view.position { " (place " (p) " in the queue)" }
                            @if let Some(r) = &view.runner { " on runner " (shown(r)) } }
                        form.inline #cancel method="post" action={ "/runs/" (id) "/cancel" } {
                            button type="submit" { "Cancel this run" }
                        }
                        h2 { "Live" }
                        ol #live {}
                        p.note { "This page follows the run as it happens; without JavaScript, " a href={ "/runs/" (id) } { "reload it" } "." }
                    }
                },
            );
        }
        Ok(Some(view)) => {
            return page(
                "Run",
                html! {
                    section #run data-run=(id) {
                        h1 { "Run " (id) }
                        p #state class={ "status " (view.status) } { (view.status) }
                        @if let Some(m) = &view.message { pre.error { (shown_block(m)) } }
                        p { a href="/" { "Back" } }
                    }
                },
            );
        }
        Ok(None) => {}
        Err(e) => return error_page(&e),
    }
    let id2 = id.clone();
    let app2 = app.clone();
    let loaded = blocking(move || {
        let store = app2.config.store()?;
        let (_, record) = store.run(&id2)?;
        let patch = record
            .as_ref()
            .and_then(|r| r.artifacts.iter().find(|a| a.kind == "patch"))
            .and_then(|a| store.read_object(&a.sha256).ok())
            .map(|b| String::from_utf8_lossy(&b).into_owned());
        Ok((record, patch))
    })
    .await;
    match loaded {
        Ok((Some(record), patch)) => page("Run", review(&record, patch.as_deref())),
        Ok((None, _)) => page(
            "Run",
            html! { h1 { "Run " (id) } p { "This run has no record: it did not finish." } },
        ),
        Err(e) => error_page(&e),
    }
}

/// Multi-line text a skill controls, each line through the display rule.
pub(crate) fn shown_block(text: &str) -> String {
    text.lines().map(shown).collect::<Vec<_>>().join("\n")
}

/// Stops a run from its page, then shows it again.
async fn cancel(AxState(app): AxState<Shared>, UrlPath(id): UrlPath<String>) -> Response {
    match crate::api::cancel(&app, &id).await {
        Ok(_) => Redirect::to(&format!("/runs/{id}")).into_response(),
        Err(e) => error_page(&e),
    }
}

#[derive(Deserialize)]
struct DiscardForm {
    /// The box that says what discarding does, ticked.
    #[serde(default)]
    confirm: Option<String>,
}

async fn discard(
    AxState(app): AxState<Shared>,
    UrlPath(id): UrlPath<String>,
    Form(form): Form<DiscardForm>,
) -> Response {
    if let Err(e) = check_id(&id) {
        return error_page(&e);
    }
    if form.confirm.as_deref() != Some("on") {
        return error_page(&ApiError::bad(
            "not_confirmed",
            "tick the box that says the run's record, patch and outputs are deleted now",
        ));
    }
    if app.live(&id).is_some_and(|l| !l.state().is_over()) {
        return error_page(&ApiError::new(
            StatusCode::CONFLICT,
            "in_progress",
            "the run is still going",
        ));
    }
    let result = blocking(move || {
        app.config.store()?.discard(&id)?;
        Ok(())
    })
    .await;
    match result {
        Ok(()) => Redirect::to("/").into_response(),
        Err(e) => error_page(&e),
    }
}

/// An airlock: a door in a wall.
const FAVICON: &str = "<svg xmlns='http://www.w3.org/2000/svg' viewBox='0 0 16 16'><rect x='1' y='1' width='14' height='14' rx='3' fill='#4a7bb7'/><rect x='5' y='4' width='6' height='9' rx='1' fill='#fff'/></svg>";

/// Live updates: follows the run's events and reloads the page when it ends. Text is added with `textContent`.
const APP_JS: &str = r#""use strict";
document.addEventListener("DOMContentLoaded", () => {
  const det = document.querySelector("[data-detonate]");
  if (det) {
    const state = document.getElementById("detonation-state");
    const button = det.querySelector("button");
    button.disabled = true;
    state.textContent = "Detonating in the sandbox (up to 10 s)...";
    fetch("/api/sources/" + encodeURIComponent(det.dataset.detonate) + "/detonate", { method: "POST", credentials: "same-origin" })
      .then((r) => r.json().then((body) => ({ ok: r.ok, body })))
      .then(({ ok, body }) => {
        if (ok) { window.location.reload(); return; }
        state.textContent = "The detonation did not run: " + (body.message || "error");
        button.disabled = false;
      })
      .catch((e) => { state.textContent = "The detonation did not run: " + e; button.disabled = false; });
  }
  const run = document.querySelector("[data-live]");
  if (!run) return;
  const list = document.getElementById("live");
  const state = document.getElementById("state");
  const said = { queued: "waiting for a free slot", running: "running in the sandbox", cancelling: "stopping",
    cancelled: "cancelled", error: "could not run" };
  const add = (text, cls) => {
    const li = document.createElement("li");
    li.textContent = text;
    if (cls) li.className = cls;
    list.appendChild(li);
    return li;
  };
  const cut = (text, n) => (text.length > n ? text.slice(0, n) + "…" : text);
  // The system's own files (libraries, locales, caches) in one line that counts them.
  const system = /^\/(usr|lib|lib64|etc|proc|sys|dev|bin|sbin)\//;
  let folded = null, foldedCount = 0;
  const programs = {};
  const words = (ev) => {
    switch (ev.kind) {
      case "exec": {
        const line = cut((ev.argv || [ev.path]).join(" "), 200);
        programs[ev.pid] = line;
        return ["ran " + line, "exec"];
      }
      case "exit": {
        const what = programs[ev.pid];
        return what ? [cut(what, 80) + " ended: exit " + ev.exit_code, ev.exit_code === 0 ? "exit ok" : "exit bad"] : null;
      }
      case "file_read":
      case "file_written": {
        const path = ev.path || "";
        if (ev.kind === "file_read" && system.test(path)) {
          foldedCount += 1;
          if (!folded) folded = add("", "folded");
          folded.textContent = "read " + foldedCount + " of the system's own files (libraries, locales)";
          return null;
        }
        return [(ev.kind === "file_read" ? "read " : "wrote ") + cut(path, 200), ev.kind];
      }
      case "net": {
        if (ev.decision === "local") return null;
        const where = ev.host || ev.destination;
        const verb = { allowed: "reached", denied: "was refused", sinkholed: "was caught going to" }[ev.decision] || ev.decision;
        return ["network: " + verb + " " + where + (ev.reason ? " (" + cut(ev.reason, 120) + ")" : ""), "net " + ev.decision];
      }
      default:
        return null;
    }
  };
  const events = new EventSource("/api/runs/" + encodeURIComponent(run.dataset.run) + "/events");
  events.addEventListener("state", (e) => {
    const d = JSON.parse(e.data);
    state.textContent = said[d.state] || d.state;
    state.className = "status " + d.state;
  });
  events.addEventListener("phase", (e) => { const d = JSON.parse(e.data); add(d.phase + (d.message ? ": " + d.message : ""), "phase"); });
  events.addEventListener("sandbox", (e) => {
    const w = words(JSON.parse(e.data).event || {});
    if (w) add(w[0], w[1]);
  });
  events.addEventListener("end", () => { events.close(); window.location.reload(); });
});
"#;

const APP_CSS: &str = "body{font:15px/1.5 system-ui,sans-serif;max-width:70rem;margin:0 auto;padding:0 1rem;color:#222}
header{display:flex;gap:1rem;align-items:baseline;border-bottom:1px solid #ddd;padding:.5rem 0}
header a{font-weight:bold;text-decoration:none;color:#222}.tag{color:#666}
.boundary{background:#f3f6fa;border-left:4px solid #4a7bb7;padding:.5rem .75rem;font-size:.9rem}
input[type=text]{width:100%;padding:.5rem;font:inherit;box-sizing:border-box}button{font:inherit;padding:.4rem .9rem;margin:.4rem 0}
.note{color:#555;font-size:.9rem}table{border-collapse:collapse;width:100%}td,th{text-align:left;padding:.25rem .5rem;border-bottom:1px solid #eee}
.level.block,.sev.critical{color:#a00}.level.high,.sev.high{color:#c50}.level.medium,.sev.medium{color:#a80}.level.low{color:#080}
pre{background:#f7f7f7;padding:.5rem;overflow-x:auto;white-space:pre-wrap;word-break:break-all}
.status.succeeded{color:#080}.status.failed,.status.error,.status.killed,.status.timed_out{color:#a00}
.file td{padding:0 .5rem;border:0;white-space:pre-wrap}.file tr.finding{background:#fdf0e6}.file .mark{font:12px system-ui,sans-serif;color:#a00;padding:.1rem 0}.file .n{color:#999;text-align:right;user-select:none}.file tr.hit{background:#fff3b0}
form.mode{display:flex;gap:1rem;align-items:center;flex-wrap:wrap}form.mode.recommended{background:#f0f7f0;border-left:4px solid #2a7}.badge{color:#1a7f37}label.force{color:#a00;flex-basis:100%}form.inline{display:inline}.net.denied{color:#a00}ul.compact{columns:2;font-size:.85rem}
code{overflow-wrap:anywhere}details.file-diff{border:1px solid #ddd;margin:.4rem 0}details.file-diff summary{padding:.3rem .5rem;background:#f6f8fa;cursor:pointer}
pre.diff{margin:0;background:#fff}pre.diff .add{background:#e6ffec}pre.diff .del{background:#ffebe9}pre.diff .hunk{color:#0550ae}pre.diff .meta{color:#666}
#live li.exec{font-family:monospace}#live li.phase{color:#555}#live li.folded{color:#777;font-style:italic}#live li.exit.bad,#live li.net.denied{color:#a00}
li.step.skipped>code{color:#777}li.step .where{color:#666;font-size:.85rem}details.context summary{cursor:pointer}
summary .add{color:#1a7f37}summary .del{color:#cf222e}summary .kind{color:#666;font-style:italic}
";
