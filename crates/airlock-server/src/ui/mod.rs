//! The web UI: server-rendered HTML (maud escapes every value it interpolates) with one small script for live
//! updates. Three screens: import (with the run history), the risk report of a source, and a run. Everything a skill
//! controls is hostile: it is escaped by the template, shown through airlock's display rule (control, bidi and
//! invisible characters made visible), never rendered as markdown or HTML, and never a link. The Content-Security-
//! Policy allows only this server's own script and style.

use axum::extract::{Form, Path as UrlPath, State as AxState};
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::{IntoResponse, Redirect, Response};
use axum::routing::{get, post};
use axum::Router;
use maud::{html, Markup, DOCTYPE};
use serde::Deserialize;

use airlock_types::display::line as shown;

use crate::access::{session_cookie, session_set_cookie, token_matches};
use crate::error::{blocking, check_id, ApiError};
use crate::runs::{queue_status, queued_view};
use crate::sources::import_and_store;
use crate::state::Shared;

mod assets;
mod highlight;
mod review;
mod risk;
use assets::{APP_CSS, APP_JS, FAVICON};
use review::review;
use risk::{detonate, file_page, source_page, start_run};

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
    let example = crate::config::example_dir(&app.config.data_dir)
        .display()
        .to_string();
    let runs = blocking(move || {
        let store = app.config.store()?;
        let mut runs = Vec::new();
        // The runs that have not handed back a record yet come from the queue (a run this server's workers carry
        // out is stored as it starts: it is shown once, as the queue has it).
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
        let stored: Vec<airlock_store::RunRow> = store.runs()?;
        let stored: Vec<_> = stored
            .into_iter()
            .filter(|r| !runs.iter().any(|q| q.id == r.id))
            .collect();
        runs.extend(stored);
        let mut sources = store.sources()?;
        sources.sort_by(|a, b| b.created_at.cmp(&a.created_at));
        Ok((runs, sources))
    })
    .await;
    let (runs, sources) = match runs {
        Ok(r) => r,
        Err(e) => return error_page(&e),
    };
    // A run's source links to the newest report imported from what the run was given.
    let source_of = |input: &str| sources.iter().find(|s| s.input == input).map(|s| s.id.clone());
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
                                td { @if let Some(id) = source_of(&r.source) { a href={ "/sources/" (id) } { (shown(&r.source)) } } @else { (shown(&r.source)) } }
                            }
                        }
                    }
                }
            }
            @if !sources.is_empty() {
                section {
                    h2 { "Skills imported" }
                    table #sources {
                        tr { th { "skill" } th { "level" } th { "commit" } th { "imported" } }
                        @for s in &sources {
                            tr {
                                td { a href={ "/sources/" (s.id) } { (shown(&s.input)) } }
                                td class={ "level " (s.risk_level.as_deref().unwrap_or("")) } { (s.risk_level.as_deref().unwrap_or("not scanned")) }
                                td { code { (s.commit.as_deref().map_or("", |c| &c[..c.len().min(12)])) } }
                                td { (when(&s.created_at)) }
                            }
                        }
                    }
                }
            }
            p.note { "Runs and reports are kept for " (hours) " hours, then deleted with everything they produced." }
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

// ----- the run screen -----

/// Which skill a run is of, its name linked to its risk report.
pub(super) fn skill_line(
    row: &str,
    source: &airlock_types::SkillSource,
    report: Option<&airlock_types::ScanReport>,
) -> Markup {
    let name = report
        .and_then(|r| {
            r.skills
                .iter()
                .find(|s| s.path == r.source.subpath)
                .or(r.skills.first())
        })
        .and_then(|s| s.name.clone())
        .unwrap_or_else(|| source.input.clone());
    html! {
        p #skill { "Skill " a href={ "/sources/" (row) } { strong { (shown(&name)) } } " · "
            a href={ "/sources/" (row) } { "its risk report" } }
    }
}

/// [`skill_line`] for a run still in the queue (nothing when its source cannot be read).
async fn skill_of_queued(app: &Shared, id: &str) -> Markup {
    let (app, id) = (app.clone(), id.to_owned());
    let found = blocking(move || {
        let store = app.config.store()?;
        let run = store.queued_run(&id)?.ok_or_else(|| ApiError::not_found("run"))?;
        // The queue keeps what the run was asked for (a URL, a path): the newest source imported from it.
        let row = store
            .sources()?
            .into_iter()
            .filter(|s| s.input == run.source)
            .max_by(|a, b| a.created_at.cmp(&b.created_at))
            .ok_or_else(|| ApiError::not_found("source"))?;
        let (source, report) = store.source(&row.id)?;
        Ok((row.id, source, report))
    })
    .await;
    match found {
        Ok((row, source, report)) => skill_line(&row, &source, report.as_ref().map(|(_, r)| r)),
        Err(_) => html! {},
    }
}

async fn run_page(AxState(app): AxState<Shared>, UrlPath(id): UrlPath<String>) -> Response {
    if let Err(e) = check_id(&id) {
        return error_page(&e);
    }
    // A run that is not over: followed live; or why it ended without a record.
    match queued_view(&app, &id).await {
        Ok(Some(view)) if matches!(view.status.as_str(), "queued" | "running") => {
            let of = skill_of_queued(&app, &id).await;
            return page(
                "Run",
                html! {
                    section #run data-run=(id) data-live="1" {
                        h1 { "Run " (id) }
                        (of)
                        p #state class={ "status " (view.status) } { (view.status)
                            @if let Some(p) = view.position { " (place " (p) " in the queue)" }
                            @if let Some(r) = &view.runner { " on runner " (shown(r)) } }
                        form.inline #cancel method="post" action={ "/runs/" (id) "/cancel" } {
                            button type="submit" { "Cancel this run" }
                        }
                        h2 { "Live" }
                        ol #live {}
                        h2 { "Output" }
                        pre #console.console aria-live="polite" {}
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
        // Who signs its statement, and whether one was signed as the record was stored.
        let signed = match crate::attest::keys(&app2) {
            Ok(k) => Some((k.key_id(), k.public_hex(), store.run_attestation(&id2)?.is_some())),
            Err(_) => None,
        };
        // The run's source row and its stored report, for the skill's name (the source may have been deleted since).
        let run = record.map(|r| {
            let row = airlock_store::Store::source_id(&r.source);
            let report = store
                .source(&row)
                .ok()
                .and_then(|(_, report)| report.map(|(_, r)| r));
            (r, row, report)
        });
        Ok((run, patch, signed))
    })
    .await;
    match loaded {
        Ok((Some((record, row, report)), patch, signed)) => page(
            "Run",
            review(
                &record,
                patch.as_deref(),
                &skill_line(&row, &record.source, report.as_ref()),
                signed.as_ref(),
            ),
        ),
        Ok((None, _, _)) => page(
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
    match crate::runs::cancel(&app, &id).await {
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
    match crate::runs::discard(&app, &id).await {
        Ok(()) => Redirect::to("/").into_response(),
        Err(e) => error_page(&e),
    }
}
