//! The review of a finished run: its verdict, environment and policy, the plan step by step (and for a dry run what an
//! agent would receive), what it ran, reached and changed, the diff file by file, and the export actions.

use maud::{html, Markup};

use airlock_types::display::line as shown;
use airlock_types::SkillRun;

use super::shown_block;

/// `signed`: the server's key id and public key, and whether the run's statement was signed as its record was stored.
pub(super) fn review(
    run: &SkillRun,
    patch: Option<&str>,
    skill: &Markup,
    signed: Option<&(String, String, bool)>,
) -> Markup {
    let o = &run.observed;
    html! {
        section #run data-run=(run.run_id) {
            h1 { "Run " (run.run_id) }
            (skill)
            p #state class={ "status " (airlock_types::wire_name(&run.status)) } { (airlock_types::wire_name(&run.status))
                " · " (airlock_types::wire_name(&run.mode)) " · " (run.duration_ms) " ms" }
            @if let Some(reason) = &run.status_reason { p.reason { (shown(reason)) } }
            h2 { "Verdict" }
            ul #verdict { @for v in &run.verdict { li { (shown(v)) } } }
            @if o.level > airlock_types::RiskLevel::Low {
                p { "What the run did is rated " strong { (o.level.as_str()) } "; with the scan, " strong { (o.overall.as_str()) } "." }
                ul { @for r in &o.reasons { li { (shown(r)) } } }
            }
            @if run.mode == airlock_types::RunMode::Sandbox && !matches!(run.status, airlock_types::RunStatus::Refused | airlock_types::RunStatus::Succeeded) {
                @let lines: Vec<&str> = run.stderr.lines().filter(|l| !l.trim().is_empty()).collect();
                @if !lines.is_empty() {
                    h2 { "Last lines of its errors" }
                    pre #errors { (shown_block(&lines[lines.len().saturating_sub(8)..].join("\n"))) }
                }
            }
            @if let Some(env) = run.environment.as_ref().filter(|e| e.status != "nothing to install" || !e.missing_programs.is_empty()) {
                section #environment {
                    h2 { "Environment" }
                    p { (shown(&env.status)) @if env.cached { " (the cached layer was reused)" } @else if env.duration_ms > 0 { " in " (env.duration_ms) " ms" } }
                    ul {
                        @if !env.installed.is_empty() { li { "installed: " (shown(&env.installed.join(", "))) } }
                        @if !env.failed.is_empty() { li.error { "could not install: " (shown(&env.failed.join(", "))) } }
                        @for r in env.refusals() { li.error { "network refused: " (shown(r)) } }
                        @for p in &env.missing_programs { li { "needs " code { (shown(p)) } ": " (shown(&env.missing_why(p))) } }
                    }
                    @if !env.errors_tail.is_empty() { pre { (shown_block(&env.errors_tail.join("\n"))) } }
                }
            }
            @if let Some(p) = &run.policy {
                section #run-policy {
                    h2 { "Policy" }
                    table { tr { th { "part" } th { "value" } th { "set by" } }
                        @for part in &p.parts { tr { td { (part.key) } td { code { (shown(&part.value)) } } td { (shown(&part.from)) } } } }
                    @if !p.refused.is_empty() { p { "Not granted:" } ul { @for r in &p.refused { li { (shown(r)) } } } }
                    @if !p.beyond.is_empty() {
                        p.error { "Beyond the declared policy:" }
                        ul { @for b in &p.beyond { li { (b.kind) " " code { (shown(&b.what)) } " — " (shown(&b.evidence)) } } }
                    }
                }
            }
            @if !run.review.is_empty() {
                h2 { "Review carefully before applying" }
                ul #review { @for r in &run.review { li { code { (shown(&r.path)) } " " (shown(&r.reason)) } } }
            }
            h2 { "Export" }
            p.actions {
                @for a in run.artifacts.iter().filter(|a| matches!(a.kind.as_str(), "patch" | "stdout" | "stderr" | "report")) {
                    a.download href={ "/api/runs/" (run.run_id) "/artifacts/" (a.id) } { "download " (a.kind) } " "
                }
                a.download href={ "/api/runs/" (run.run_id) "/bundle" } { "download bundle" } " "
                a.download #attestation-link href={ "/api/runs/" (run.run_id) "/attestation" } { "download signed statement" } " "
                form.inline #discard method="post" action={ "/runs/" (run.run_id) "/discard" } {
                    label { input type="checkbox" name="confirm" value="on" required; " delete its record, patch and outputs now" }
                    " " button type="submit" { "Discard this run" }
                }
            }
            @if let Some((key_id, public, stored)) = signed {
                section #attestation {
                    h2 { "Signed statement" }
                    p {
                        "What this run was under and did (its policy, what it read, reached, installed and changed, the verdict, "
                        "the digest of its record and the chain of its events) is an in-toto statement in a DSSE envelope, signed with "
                        "this server's key " code { (key_id) } "."
                        @if !stored { " This run was stored before runs were signed: the download signs its record as it is now." }
                    }
                    p { "Check it anywhere with " code { "airlock verify " (run.run_id) ".att --key " (public) } "." }
                }
            }
        }
        @if let Some(plan) = &run.plan {
            (plan_view(run, plan))
        }
        @if run.mode == airlock_types::RunMode::Sandbox && run.status != airlock_types::RunStatus::Refused {
            section #timeline {
                h2 { "Programs started (" (run.timeline.len()) ", the steps' own shells included)" }
                ol { @for e in &run.timeline { li {
                    span.t { (e.t_ms) " ms" } " " code { (shown(&e.path)) } " "
                    @for a in e.argv.iter().skip(1) { code.arg { (shown(a)) } " " }
                    span.exit { "exit " (e.exit_code.map_or("?".to_owned(), |c| c.to_string())) }
                } } }
            }
            section #network {
                h2 { "Network attempts (" (run.network.len()) ")" }
                @if run.network.is_empty() { p { "None." } }
                ul { @for n in &run.network { li class={ "net " (airlock_types::wire_name(&n.decision)) } {
                    @if n.protocol == "dns" && n.host.is_none() {
                        "a name lookup: the run has no network, so nothing answered and no name was sent anywhere"
                    } @else {
                        (airlock_types::wire_name(&n.decision)) " " (shown(&n.protocol)) " "
                        strong { (shown(n.host.as_deref().unwrap_or(&n.destination))) }
                        @if n.host.is_some() { " (" (shown(&n.destination)) ")" }
                        " — " (shown(&n.reason))
                        @if let Some(via) = &n.via { " (through " (shown(via)) ")" }
                        @if let Some(c) = &n.catch {
                            br; span.note { "caught: " (shown(c.request.as_deref().unwrap_or(&c.kind))) ", " (n.bytes_up) " bytes"
                                @if !c.canaries.is_empty() { ", carrying " (shown(&c.canaries.join(", "))) }
                                @if c.shell { ", a remote shell answered" } }
                        }
                    }
                } } }
            }
            section #changes {
                h2 { "Changed files (" (run.changes.len()) ")" }
                ul { @for c in &run.changes { li { (airlock_types::wire_name(&c.kind)) " " code { (shown(&c.path)) } } } }
                @if !run.patch_skipped.is_empty() {
                    p { "Not in the patch:" }
                    ul { @for s in &run.patch_skipped { li { code { (shown(&s.path)) } " " (shown(&s.reason)) } } }
                }
                h3 { "Diff" }
                @if let Some(p) = patch {
                    (crate::diffview::render(p))
                    p.note { "To apply it to your project: " code { "airlock export " (run.run_id) " --patch changes.patch && git apply changes.patch" } }
                } @else { p #diff { "(no changes)" } }
            }
            section #files {
                @let (system, own): (Vec<_>, Vec<_>) = run.files_read.iter().partition(|f| system_file(&f.path));
                h2 { "Files read (" (run.files_read.len()) ")" }
                @if own.is_empty() { p { "None of the project's or the skill's." } }
                ul.compact { @for f in &own { li { code { (shown(&f.path)) } } } }
                @if !system.is_empty() {
                    details.system {
                        summary { "and " (system.len()) " of the system's own (libraries, locales, configuration)" }
                        ul.compact { @for f in &system { li { code { (shown(&f.path)) } } } }
                    }
                }
                h2 { "Installs (" (run.installs.len()) ")" }
                ul { @for i in &run.installs { li { (i.manager) " " code { (shown(&i.argv.join(" "))) } } } }
                @if let Some(l) = &run.limits {
                    h2 { "Resources against limits" }
                    table #usage {
                        tr { th { "" } th { "used" } th { "limit" } }
                        tr { td { "time" } td { (run.duration_ms) " ms" } td { (l.timeout_ms / 1000) " s" } }
                        tr { td { "memory (peak)" } td { (run.max_rss_bytes >> 20) " MiB" } td { (l.memory_bytes >> 20) " MiB" } }
                        tr { td { "CPU" } td { (run.cpu_ms) " ms" } td { "" } }
                        tr { td { "disk" } td { (run.changes.iter().filter_map(|c| c.size_after).sum::<u64>() >> 10) " KiB changed" } td { (l.disk_bytes >> 20) " MiB" } }
                        tr { td { "processes" } td { (run.timeline.len()) " started" } td { (l.pids) " at once" } }
                    }
                    @if let Some(hit) = run.limit_hit { p.error { "It hit the " (airlock_types::wire_name(&hit)) " limit." } }
                }
            }
        }
    }
}

/// The plan: every command the skill asks for, step by step, whether it runs (and how it ended) or why not; for a
/// dry run, also what an agent would receive, file by file.
fn plan_view(run: &SkillRun, plan: &airlock_types::Plan) -> Markup {
    let dry = run.mode == airlock_types::RunMode::DryRun;
    html! {
        section #plan {
            h2 { "The plan (" (plan.steps.len()) " step" @if plan.steps.len() != 1 { "s" } ")" }
            @if plan.steps.is_empty() { p { "The skill asks to run nothing: it is instructions for an agent." } }
            ol {
                @for (i, step) in plan.steps.iter().enumerate() {
                    @let result = run.steps.iter().find(|r| r.index == i);
                    li class={ "step " (if step.example.is_some() { "skipped" } else { "runs" }) } {
                        code { (shown(&step.command)) }
                        " " span.where { (shown(&step.file)) @if step.line > 0 { ":" (step.line) } }
                        @if let Some(why) = &step.example {
                            p.note { "Not run: " (shown(why)) }
                        } @else if let Some(r) = result {
                            p.note { @match (r.exit_code, r.signal) {
                                (Some(0), _) => "Ran: exit 0.",
                                (Some(c), _) => { "Ran: exit " (c) "." }
                                (None, Some(s)) => { "Ran: ended by signal " (s) "." }
                                (None, None) => "Ran: did not finish.",
                            } }
                        } @else if dry {
                            p.note { "Would run." }
                        }
                        @if let Some(n) = &step.note { p.note { (shown(n)) } }
                    }
                }
            }
            @if dry {
                h2 { "What an agent would receive (" (plan.context.len()) " file" @if plan.context.len() != 1 { "s" } ")" }
                @if let Some(d) = &plan.description { p { "Description: " (shown(d)) } }
                @if !plan.allowed_tools.is_empty() { p { "Tools it asks for: " @for t in &plan.allowed_tools { code { (shown(t)) } " " } } }
                @for f in &plan.context {
                    details.context open[plan.context.len() == 1] {
                        summary { code { (shown(&f.path)) } " (" (f.bytes) " bytes)" }
                        @match &f.text {
                            Some(t) => pre { (shown_block(t)) },
                            None => p.note { "Not shown: binary or too large." },
                        }
                    }
                }
            }
        }
    }
}

/// A file of the system's own (a library, a locale, the loader's cache), not the project's or the skill's.
fn system_file(path: &str) -> bool {
    [
        "/usr/", "/lib/", "/lib64/", "/etc/", "/proc/", "/sys/", "/dev/", "/bin/", "/sbin/",
    ]
    .iter()
    .any(|p| path.starts_with(p))
}
