//! Syntax colours for a skill's file in the web UI: tree-sitter's own highlight queries for the languages the scanner
//! parses (shell, Python, JavaScript), and a reading of markdown by its lines (front matter, headings, and fenced code
//! coloured in its fence's language). Only class names come from here: the page still shows every piece of text
//! through the display rule, and nothing of the file is rendered.

use std::sync::OnceLock;

use tree_sitter_highlight::{HighlightConfiguration, HighlightEvent, Highlighter};

/// The capture names the pages colour, each shown with the class `hl-` and its first part (`function.builtin` is
/// `hl-function`).
const NAMES: &[&str] = &[
    "comment",
    "constant",
    "constant.builtin",
    "constructor",
    "embedded",
    "escape",
    "function",
    "function.builtin",
    "function.method",
    "keyword",
    "number",
    "operator",
    "property",
    "string",
    "string.special",
    "type",
    "variable.builtin",
];

/// The class of each name in [`NAMES`].
fn class(index: usize) -> &'static str {
    match NAMES[index].split('.').next().unwrap_or_default() {
        "comment" => "hl-comment",
        "constant" | "number" => "hl-constant",
        "constructor" | "type" => "hl-type",
        "embedded" | "escape" | "operator" => "hl-operator",
        "function" => "hl-function",
        "keyword" => "hl-keyword",
        "property" => "hl-property",
        "string" => "hl-string",
        _ => "hl-builtin",
    }
}

/// A run of text of one class (or none) within a line.
pub(super) type Segment = (Option<&'static str>, String);

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Lang {
    Shell,
    Python,
    JavaScript,
}

fn config(lang: Lang) -> Option<&'static HighlightConfiguration> {
    static SHELL: OnceLock<Option<HighlightConfiguration>> = OnceLock::new();
    static PYTHON: OnceLock<Option<HighlightConfiguration>> = OnceLock::new();
    static JS: OnceLock<Option<HighlightConfiguration>> = OnceLock::new();
    let make = |language: tree_sitter::Language, name: &str, query: &str| {
        let mut c = HighlightConfiguration::new(language, name, query, "", "").ok()?;
        c.configure(NAMES);
        Some(c)
    };
    match lang {
        Lang::Shell => SHELL.get_or_init(|| {
            make(
                tree_sitter_bash::LANGUAGE.into(),
                "bash",
                tree_sitter_bash::HIGHLIGHT_QUERY,
            )
        }),
        Lang::Python => PYTHON.get_or_init(|| {
            make(
                tree_sitter_python::LANGUAGE.into(),
                "python",
                tree_sitter_python::HIGHLIGHTS_QUERY,
            )
        }),
        Lang::JavaScript => JS.get_or_init(|| {
            make(
                tree_sitter_javascript::LANGUAGE.into(),
                "javascript",
                tree_sitter_javascript::HIGHLIGHT_QUERY,
            )
        }),
    }
    .as_ref()
}

/// The language of a file, by its name or its `#!` line.
fn language_of(path: &str, text: &str) -> Option<Lang> {
    let ext = path.rsplit_once('.').map(|(_, e)| e.to_ascii_lowercase());
    match ext.as_deref() {
        Some("sh" | "bash" | "zsh" | "ksh") => return Some(Lang::Shell),
        Some("py" | "pyw") => return Some(Lang::Python),
        Some("js" | "mjs" | "cjs" | "jsx") => return Some(Lang::JavaScript),
        _ => {}
    }
    let first = text.lines().next()?.strip_prefix("#!")?;
    if first.contains("python") {
        Some(Lang::Python)
    } else if first.contains("node") {
        Some(Lang::JavaScript)
    } else if ["sh", "bash", "zsh", "dash"]
        .iter()
        .any(|s| first.split(['/', ' ']).any(|w| w == *s))
    {
        Some(Lang::Shell)
    } else {
        None
    }
}

/// The language a code fence's label names.
fn fence_language(label: &str) -> Option<Lang> {
    match label
        .trim()
        .split([' ', '{', ','])
        .next()?
        .to_ascii_lowercase()
        .as_str()
    {
        "sh" | "bash" | "shell" | "zsh" | "console" | "shell-session" => Some(Lang::Shell),
        "py" | "python" | "python3" => Some(Lang::Python),
        "js" | "javascript" | "node" | "jsx" | "mjs" => Some(Lang::JavaScript),
        _ => None,
    }
}

/// `text` split into the lines `str::lines` gives, each as its coloured runs.
pub(super) fn lines(path: &str, text: &str) -> Vec<Vec<Segment>> {
    let lower = path.to_ascii_lowercase();
    if lower.ends_with(".md") || lower.ends_with(".markdown") {
        return markdown(text);
    }
    match language_of(path, text) {
        Some(lang) => code(lang, text),
        None => plain(text),
    }
}

fn plain(text: &str) -> Vec<Vec<Segment>> {
    text.lines().map(|l| vec![(None, l.to_owned())]).collect()
}

/// Code in one language, coloured by its grammar's highlight query; plain if it cannot be parsed.
fn code(lang: Lang, text: &str) -> Vec<Vec<Segment>> {
    let Some(config) = config(lang) else {
        return plain(text);
    };
    let mut highlighter = Highlighter::new();
    let Ok(events) = highlighter.highlight(config, text.as_bytes(), None, |_| None) else {
        return plain(text);
    };
    let mut out: Vec<Vec<Segment>> = vec![Vec::new()];
    let mut stack: Vec<&'static str> = Vec::new();
    for event in events {
        match event {
            Ok(HighlightEvent::HighlightStart(h)) => stack.push(class(h.0)),
            Ok(HighlightEvent::HighlightEnd) => {
                stack.pop();
            }
            Ok(HighlightEvent::Source { start, end }) => {
                let piece = text.get(start..end).unwrap_or_default();
                push(&mut out, stack.last().copied(), piece);
            }
            Err(_) => return plain(text),
        }
    }
    finish(out, text)
}

/// Adds `piece` to the lines so far, starting a new line at each newline.
fn push(out: &mut Vec<Vec<Segment>>, class: Option<&'static str>, piece: &str) {
    for (i, part) in piece.split('\n').enumerate() {
        if i > 0 || out.is_empty() {
            out.push(Vec::new());
        }
        if let (false, Some(line)) = (part.is_empty(), out.last_mut()) {
            line.push((class, part.to_owned()));
        }
    }
}

/// The lines as `str::lines` counts them: no empty line after a final newline, no carriage return at a line's end.
fn finish(mut out: Vec<Vec<Segment>>, text: &str) -> Vec<Vec<Segment>> {
    if text.ends_with('\n') || text.is_empty() {
        out.pop();
    }
    // A carriage return before a newline ends the line; one at the very end stays, as `str::lines` keeps it.
    let ended = text.matches('\n').count();
    for line in out.iter_mut().take(ended) {
        line.retain(|(_, s)| !s.is_empty());
        if let Some((_, last)) = line.last_mut() {
            if last.ends_with('\r') {
                last.pop();
            }
        }
        line.retain(|(_, s)| !s.is_empty());
    }
    out
}

/// Markdown by its lines: front matter keys, headings, fences and inline code; a fence's body in its language.
fn markdown(text: &str) -> Vec<Vec<Segment>> {
    let lines: Vec<&str> = text.lines().collect();
    let mut out = Vec::with_capacity(lines.len());
    let mut i = 0;
    if lines.first().is_some_and(|l| l.trim_end() == "---") {
        if let Some(end) = lines.iter().skip(1).position(|l| l.trim_end() == "---") {
            out.push(vec![(Some("hl-operator"), lines[0].to_owned())]);
            for l in &lines[1..=end] {
                out.push(match l.split_once(':') {
                    Some((key, rest)) if !key.starts_with(' ') && !key.is_empty() => {
                        vec![(Some("hl-property"), key.to_owned()), (None, format!(":{rest}"))]
                    }
                    _ => vec![(None, (*l).to_owned())],
                });
            }
            out.push(vec![(Some("hl-operator"), lines[end + 1].to_owned())]);
            i = end + 2;
        }
    }
    while i < lines.len() {
        let line = lines[i];
        let indent = line.len() - line.trim_start().len();
        let rest = line.trim_start();
        let fence = ["```", "~~~"]
            .into_iter()
            .find(|f| indent <= 3 && rest.starts_with(f));
        if let Some(fence) = fence {
            let marker: String = rest.chars().take_while(|c| fence.starts_with(*c)).collect();
            let close = lines[i + 1..]
                .iter()
                .position(|l| {
                    l.trim_start().starts_with(&marker)
                        && l.trim()
                            .trim_start_matches(fence.chars().next().unwrap_or('`'))
                            .is_empty()
                })
                .map(|p| i + 1 + p);
            let body_end = close.unwrap_or(lines.len());
            out.push(vec![(Some("hl-operator"), line.to_owned())]);
            let body = lines[i + 1..body_end].join("\n");
            let mut coloured = match fence_language(&rest[marker.len()..]) {
                Some(lang) if !body.is_empty() => code(lang, &body),
                _ => plain(&body),
            };
            // The body's own line count, whatever the highlighter made of it.
            coloured.resize_with(body_end - i - 1, Vec::new);
            out.extend(coloured);
            if let Some(c) = close {
                out.push(vec![(Some("hl-operator"), lines[c].to_owned())]);
                i = c + 1;
            } else {
                i = body_end;
            }
            continue;
        }
        if indent <= 3 && rest.starts_with('#') && rest.trim_start_matches('#').starts_with([' ', '\t']) {
            out.push(vec![(Some("hl-keyword"), line.to_owned())]);
        } else {
            out.push(inline_code(line));
        }
        i += 1;
    }
    out
}

/// A prose line with its `inline code` marked.
fn inline_code(line: &str) -> Vec<Segment> {
    let mut out = Vec::new();
    let mut rest = line;
    while let Some(open) = rest.find('`') {
        let Some(len) = rest[open + 1..].find('`') else {
            break;
        };
        if open > 0 {
            out.push((None, rest[..open].to_owned()));
        }
        out.push((Some("hl-string"), rest[open..open + len + 2].to_owned()));
        rest = &rest[open + len + 2..];
    }
    if !rest.is_empty() {
        out.push((None, rest.to_owned()));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn joined(lines: &[Vec<Segment>]) -> Vec<String> {
        lines
            .iter()
            .map(|l| l.iter().map(|(_, s)| s.as_str()).collect())
            .collect()
    }

    fn classes_of(lines: &[Vec<Segment>], text: &str) -> Vec<Option<&'static str>> {
        lines
            .iter()
            .flatten()
            .filter(|(_, s)| s == text)
            .map(|(c, _)| *c)
            .collect()
    }

    #[test]
    fn python_is_coloured_and_keeps_every_line() {
        let text = "import os\r\n\ndef go():\n    # why\n    return os.environ['X']\n";
        let got = lines("scripts/go.py", text);
        assert_eq!(joined(&got), text.lines().map(str::to_owned).collect::<Vec<_>>());
        assert_eq!(classes_of(&got, "def"), vec![Some("hl-keyword")]);
        assert_eq!(classes_of(&got, "# why"), vec![Some("hl-comment")]);
        assert_eq!(classes_of(&got, "'X'"), vec![Some("hl-string")]);
    }

    #[test]
    fn a_shebang_names_the_language() {
        let got = lines("scripts/run", "#!/usr/bin/env bash\necho \"hi\"\n");
        assert_eq!(classes_of(&got, "\"hi\""), vec![Some("hl-string")]);
        assert_eq!(
            lines("data.txt", "echo \"hi\"\n")[0],
            vec![(None, "echo \"hi\"".to_owned())]
        );
    }

    #[test]
    fn markdown_fences_are_coloured_in_their_language() {
        let text = "---\nname: x\n---\n# Title\n\nRun `go.sh`:\n\n```bash\ncurl -s 'https://x' | sh\n```\n\n```\nplain\n```\ntail\n";
        let got = lines("SKILL.md", text);
        assert_eq!(joined(&got), text.lines().map(str::to_owned).collect::<Vec<_>>());
        assert_eq!(classes_of(&got, "name"), vec![Some("hl-property")]);
        assert_eq!(classes_of(&got, "# Title"), vec![Some("hl-keyword")]);
        assert_eq!(classes_of(&got, "`go.sh`"), vec![Some("hl-string")]);
        assert_eq!(classes_of(&got, "'https://x'"), vec![Some("hl-string")]);
        assert_eq!(classes_of(&got, "curl"), vec![Some("hl-function")]);
        assert_eq!(classes_of(&got, "plain"), vec![None]);
    }

    #[test]
    fn an_unclosed_fence_and_odd_input_keep_the_line_count() {
        for text in [
            "```bash\necho 'unterminated\n",
            "`",
            "",
            "\n\n",
            "```\n```\n```",
            "---\n---\n",
        ] {
            let got = lines("SKILL.md", text);
            assert_eq!(
                joined(&got),
                text.lines().map(str::to_owned).collect::<Vec<_>>(),
                "{text:?}"
            );
        }
        for text in ["'''\n\u{202e}x", "def (:\n\t\x1b[2J\n", "\u{0}"] {
            let got = lines("a.py", text);
            assert_eq!(
                joined(&got),
                text.lines().map(str::to_owned).collect::<Vec<_>>(),
                "{text:?}"
            );
        }
    }
}
