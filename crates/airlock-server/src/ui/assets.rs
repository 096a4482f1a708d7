//! The UI's own static files: its script, its style sheet and its icon.

/// An airlock: a door in a wall.
pub(super) const FAVICON: &str = "<svg xmlns='http://www.w3.org/2000/svg' viewBox='0 0 16 16'><rect x='1' y='1' width='14' height='14' rx='3' fill='#4a7bb7'/><rect x='5' y='4' width='6' height='9' rx='1' fill='#fff'/></svg>";

/// Live updates: follows the run's events and reloads the page when it ends. Text is added with `textContent`.
pub(super) const APP_JS: &str = r#""use strict";
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
  // airlock's display rule (as in the terminal and the server's pages): control, bidirectional, invisible and tag
  // characters shown as \u{..} escapes, a backslash doubled; `block` keeps newlines.
  const hidden = /[\p{Cc}\u00AD\u034F\u061C\u115F\u1160\u17B4\u17B5\u180B-\u180F\u200B-\u200F\u2028\u2029\u202A-\u202E\u2060-\u206F\u3164\uFFA0\uFE00-\uFE0F\uFEFF\uFFF9-\uFFFB\u{1D173}-\u{1D17A}\u{E0000}-\u{E007F}\u{E0100}-\u{E01EF}\\]/gu;
  const shown = (text, block) => String(text).replace(hidden, (c) => {
    if (c === "\\") return "\\\\";
    if (block && c === "\n") return "\n";
    return "\\u{" + c.codePointAt(0).toString(16).padStart(4, "0") + "}";
  });
  // The program's own output, as a console: stderr marked, bounded (the whole output is in the record).
  const consoleBox = document.getElementById("console");
  let consoleChars = 0;
  const print = (stream, text) => {
    if (!consoleBox || consoleChars > 200000) return;
    const span = document.createElement("span");
    span.className = stream;
    span.textContent = shown(text, true);
    consoleChars += span.textContent.length;
    if (consoleChars > 200000) span.textContent += "\n[more output in the run's record]\n";
    const atEnd = consoleBox.scrollTop + consoleBox.clientHeight >= consoleBox.scrollHeight - 4;
    consoleBox.appendChild(span);
    if (atEnd) consoleBox.scrollTop = consoleBox.scrollHeight;
  };
  const list = document.getElementById("live");
  const state = document.getElementById("state");
  const said = { queued: "waiting for a free slot", running: "running in the sandbox", cancelling: "stopping",
    cancelled: "cancelled", error: "could not run" };
  const add = (text, cls) => {
    const li = document.createElement("li");
    li.textContent = shown(text, false);
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
      case "output":
        print(ev.stream === "stderr" ? "stderr" : "stdout", ev.text || "");
        return null;
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

pub(super) const APP_CSS: &str = "body{font:15px/1.5 system-ui,sans-serif;max-width:70rem;margin:0 auto;padding:0 1rem;color:#222}
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
.file .hl-comment{color:#6a737d}.file .hl-keyword{color:#cf222e}.file .hl-string{color:#0a3069}.file .hl-function{color:#8250df}.file .hl-constant{color:#0550ae}.file .hl-type{color:#953800}.file .hl-property{color:#116329}.file .hl-operator{color:#6e7781}.file .hl-builtin{color:#0550ae}
pre.console{background:#1e1e1e;color:#ddd;max-height:24rem;overflow-y:auto;min-height:2rem}pre.console .stderr{color:#f99}
li.step.skipped>code{color:#777}li.step .where{color:#666;font-size:.85rem}details.context summary{cursor:pointer}
summary .add{color:#1a7f37}summary .del{color:#cf222e}summary .kind{color:#666;font-style:italic}
";
