//! A run's patch as the review page shows it: one collapsible section per file, its lines coloured by what they do
//! (added, removed, hunk header), new, deleted, renamed and binary files named as such. Every line is a skill's
//! text: maud escapes it and the display rule makes control and invisible characters visible.

use maud::{html, Markup};

use airlock_types::display::line as shown;

/// Files with more lines than this start folded.
const OPEN_UP_TO: usize = 300;
/// Lines shown of one file; the patch download has them all.
const MAX_LINES: usize = 3000;

/// One file's part of a unified diff.
struct FileDiff<'a> {
    path: String,
    lines: Vec<&'a str>,
}

impl FileDiff<'_> {
    fn count(&self, sign: char) -> usize {
        self.lines
            .iter()
            .filter(|l| l.starts_with(sign) && !l.starts_with("+++") && !l.starts_with("---"))
            .count()
    }

    /// What kind of change it is, when not an edit.
    fn kind(&self) -> Option<&'static str> {
        let has = |prefix: &str| self.lines.iter().any(|l| l.starts_with(prefix));
        if has("Binary files ") || has("GIT binary patch") {
            Some("binary: not shown")
        } else if has("new file mode") {
            Some("new file")
        } else if has("deleted file mode") {
            Some("deleted")
        } else if has("rename from") {
            Some("renamed")
        } else if has("old mode") {
            Some("mode changed")
        } else {
            None
        }
    }
}

/// Splits a unified diff at its `diff --git` lines (a diff without them is one section).
fn files(patch: &str) -> Vec<FileDiff<'_>> {
    let mut out: Vec<FileDiff<'_>> = Vec::new();
    for line in patch.lines() {
        if let Some(rest) = line.strip_prefix("diff --git ") {
            let path = rest
                .rsplit_once(" b/")
                .map_or(rest, |(_, b)| b)
                .trim_matches('"')
                .to_owned();
            out.push(FileDiff {
                path,
                lines: vec![line],
            });
            continue;
        }
        match out.last_mut() {
            Some(f) => f.lines.push(line),
            None => out.push(FileDiff {
                path: String::new(),
                lines: vec![line],
            }),
        }
    }
    for f in &mut out {
        if f.path.is_empty() {
            if let Some(p) = f.lines.iter().find_map(|l| l.strip_prefix("+++ b/")) {
                f.path = p.to_owned();
            }
        }
    }
    out
}

fn class(line: &str) -> &'static str {
    if line.starts_with("+++") || line.starts_with("---") || line.starts_with("diff --git") {
        "meta"
    } else if line.starts_with('+') {
        "add"
    } else if line.starts_with('-') {
        "del"
    } else if line.starts_with("@@") {
        "hunk"
    } else if line.starts_with(' ') || line.is_empty() {
        "ctx"
    } else {
        "meta"
    }
}

/// The patch, file by file.
pub(crate) fn render(patch: &str) -> Markup {
    let files = files(patch);
    html! {
        div #diff {
            @for f in &files {
                details.file-diff open[f.lines.len() <= OPEN_UP_TO] {
                    summary {
                        code { (shown(&f.path)) }
                        " " span.add { "+" (f.count('+')) } " " span.del { "−" (f.count('-')) }
                        @if let Some(k) = f.kind() { " " span.kind { (k) } }
                    }
                    pre.diff {
                        @for l in f.lines.iter().take(MAX_LINES) {
                            span class=(class(l)) { (shown(l)) } "\n"
                        }
                        @if f.lines.len() > MAX_LINES {
                            span.meta { "… " (f.lines.len() - MAX_LINES) " more lines in the patch download" }
                        }
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_patch_is_shown_file_by_file_with_its_lines_classed() {
        let patch = "diff --git a/src/App.jsx b/src/App.jsx\n--- a/src/App.jsx\n+++ b/src/App.jsx\n@@ -1,2 +1,2 @@\n a\n-b\n+<script>c</script>\ndiff --git a/logo.png b/logo.png\nnew file mode 100644\nBinary files /dev/null and b/logo.png differ\n";
        let html = render(patch).into_string();
        assert_eq!(html.matches("<details").count(), 2, "{html}");
        assert!(html.contains("<code>src/App.jsx</code>"));
        assert!(
            html.contains(r#"<span class="add">+&lt;script&gt;c&lt;/script&gt;</span>"#),
            "{html}"
        );
        assert!(html.contains(r#"<span class="del">-b</span>"#));
        assert!(html.contains("binary: not shown"));
        assert!(!html.contains("<script>"));
    }
}
