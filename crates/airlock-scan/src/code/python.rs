//! Python read by its tokens rather than by a full parse: comments, docstrings and the calls that start programs
//! are all the scan needs from the syntax, and a tokenizer finds them at memory speed where a parse tree costs a
//! millisecond per helper (the scan of a thousand skills spent a third of its time there).
//!
//! What counts is what tree-sitter's grammar calls so, and the tests hold the two to the same answers: a comment is
//! `#` outside a string up to the line's end; a docstring is a string that is a whole statement on its own (not
//! joined to another string, not an operand); a call is a dotted name (`subprocess.run`) followed by `(`, not a
//! `def` or a `class`. One difference is meant: an f-string standing alone is code, not a docstring (Python keeps
//! none, and what its braces call runs), where the parse tree's reading took it for text.

use super::{CodeInfo, PY_EXEC};
use crate::text::Lines;

/// The tokens that matter to the reading: where a statement may start and end, and what the last one was.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Last {
    /// Nothing yet on this logical line (a statement starts here).
    Start,
    /// A `def` or `class` keyword: the name after it is defined, not called.
    Defines,
    /// A string that began a statement (start and end byte): a docstring if the statement ends here.
    LoneString(usize, usize),
    Other,
}

/// Comments and docstrings blanked, exec sites found. Lines are offset by `first_line - 1`.
pub(super) fn analyze(text: &str, first_line: u32) -> CodeInfo {
    let bytes = text.as_bytes();
    let lines = Lines::new(text);
    let line = |byte: usize| lines.line_of(byte) + first_line - 1;
    let docstrings_are_text = !text.contains("__doc__");
    let mut code = bytes.to_vec();
    let mut info = CodeInfo::default();
    let mut depth = 0usize;
    let mut last = Last::Start;
    let mut i = 0;
    // A statement's end: a string that stood alone there was a docstring.
    let end_statement = |last: &mut Last, code: &mut Vec<u8>, info: &mut CodeInfo| {
        if let Last::LoneString(s, e) = *last {
            if docstrings_are_text {
                info.comments.push((line(s), text[s..e].to_owned()));
                blank(&mut code[s..e]);
            }
        }
        *last = Last::Start;
    };
    while i < bytes.len() {
        let b = bytes[i];
        match b {
            b'\n' => {
                if depth == 0 {
                    end_statement(&mut last, &mut code, &mut info);
                }
                i += 1;
            }
            b' ' | b'\t' | b'\r' | b'\x0c' => i += 1,
            b'\\' if bytes.get(i + 1) == Some(&b'\n') => i += 2,
            b'\\' if bytes.get(i + 1) == Some(&b'\r') && bytes.get(i + 2) == Some(&b'\n') => i += 3,
            b'#' => {
                let end = bytes[i..]
                    .iter()
                    .position(|&c| c == b'\n')
                    .map_or(bytes.len(), |n| i + n);
                info.comments.push((line(i), text[i..end].to_owned()));
                blank(&mut code[i..end]);
                i = end;
            }
            b';' if depth == 0 => {
                end_statement(&mut last, &mut code, &mut info);
                i += 1;
            }
            b'(' | b'[' | b'{' => {
                depth += 1;
                last = Last::Other;
                i += 1;
            }
            b')' | b']' | b'}' => {
                depth = depth.saturating_sub(1);
                last = Last::Other;
                i += 1;
            }
            b'\'' | b'"' => {
                let (end, closed) = string_end(bytes, i);
                last = if closed && last == Last::Start && depth == 0 {
                    Last::LoneString(i, end)
                } else {
                    Last::Other
                };
                i = end;
            }
            c if is_ident_start(c) => {
                let word_end = i + bytes[i..].iter().take_while(|&&c| is_ident(c)).count();
                let word = &text[i..word_end];
                if matches!(bytes.get(word_end), Some(b'\'' | b'"')) && is_string_prefix(word) {
                    let (end, closed) = string_end(bytes, word_end);
                    // An f-string is never a docstring (Python keeps none): the code in its braces runs.
                    let fstring = word.bytes().any(|c| c.eq_ignore_ascii_case(&b'f'));
                    if fstring {
                        fstring_calls(text, word_end, end, &line, &mut info);
                    }
                    last = if closed && !fstring && last == Last::Start && depth == 0 {
                        Last::LoneString(i, end)
                    } else {
                        Last::Other
                    };
                    i = end;
                    continue;
                }
                let chain_end = dotted_end(bytes, word_end);
                let after = skip_blanks(bytes, chain_end);
                if bytes.get(after) == Some(&b'(') && last != Last::Defines {
                    let callee = &text[i..chain_end];
                    if PY_EXEC.contains(&callee) {
                        info.exec_sites.push((line(i), callee.to_owned()));
                    }
                }
                last = if matches!(word, "def" | "class") && chain_end == word_end {
                    Last::Defines
                } else {
                    Last::Other
                };
                // A name's dotted parts are read as one; a keyword's next word is read on its own.
                i = if last == Last::Defines {
                    word_end
                } else {
                    chain_end
                };
            }
            b'0'..=b'9' => {
                i += bytes[i..]
                    .iter()
                    .take_while(|&&c| is_ident(c) || c == b'.')
                    .count();
                last = Last::Other;
            }
            b'.' => {
                // A name after a dot belongs to what came before (`f().system(...)` is no `os.system`).
                i += 1;
                while i < bytes.len() && is_ident(bytes[i]) {
                    i += 1;
                }
                last = Last::Other;
            }
            _ => {
                last = Last::Other;
                i += 1;
            }
        }
    }
    end_statement(&mut last, &mut code, &mut info);
    info.code =
        String::from_utf8(code).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned());
    info.exec_sites.sort();
    info
}

/// Calls in an f-string's braces (the string's body from `open` to `end`): the code there runs.
fn fstring_calls(text: &str, open: usize, end: usize, line: &dyn Fn(usize) -> u32, info: &mut CodeInfo) {
    let bytes = text.as_bytes();
    let mut depth = 0usize;
    let mut i = open;
    while i < end {
        match bytes[i] {
            b'{' if bytes.get(i + 1) == Some(&b'{') && depth == 0 => i += 2,
            b'{' => {
                depth += 1;
                i += 1;
            }
            b'}' => {
                depth = depth.saturating_sub(1);
                i += 1;
            }
            c if depth > 0
                && is_ident_start(c)
                && !bytes[..i].last().is_some_and(|&p| is_ident(p) || p == b'.') =>
            {
                let word_end = i + bytes[i..end].iter().take_while(|&&c| is_ident(c)).count();
                let chain_end = dotted_end(bytes, word_end).min(end);
                let after = skip_blanks(bytes, chain_end);
                if after < end && bytes[after] == b'(' && PY_EXEC.contains(&&text[i..chain_end]) {
                    info.exec_sites.push((line(i), text[i..chain_end].to_owned()));
                }
                i = chain_end.max(i + 1);
            }
            _ => i += 1,
        }
    }
}

/// The byte after a string literal whose quote is at `at`, and whether it was closed (an unclosed one-line string
/// ends at its line's end, an unclosed triple-quoted one at the text's end; neither is a docstring).
fn string_end(bytes: &[u8], at: usize) -> (usize, bool) {
    let q = bytes[at];
    let triple = bytes.get(at + 1) == Some(&q) && bytes.get(at + 2) == Some(&q);
    let mut i = at + if triple { 3 } else { 1 };
    while i < bytes.len() {
        match bytes[i] {
            b'\\' => i += 2,
            c if c == q => {
                if !triple {
                    return (i + 1, true);
                }
                if bytes.get(i + 1) == Some(&q) && bytes.get(i + 2) == Some(&q) {
                    return (i + 3, true);
                }
                i += 1;
            }
            b'\n' if !triple => return (i, false),
            _ => i += 1,
        }
    }
    (bytes.len(), false)
}

/// The end of a dotted name whose first part ends at `from` (`os.path.join`: parts joined by dots, no spaces).
fn dotted_end(bytes: &[u8], mut from: usize) -> usize {
    while bytes.get(from) == Some(&b'.') && bytes.get(from + 1).is_some_and(|&c| is_ident_start(c)) {
        from += 1;
        while from < bytes.len() && is_ident(bytes[from]) {
            from += 1;
        }
    }
    from
}

fn skip_blanks(bytes: &[u8], mut at: usize) -> usize {
    while matches!(bytes.get(at), Some(b' ' | b'\t')) {
        at += 1;
    }
    at
}

fn is_string_prefix(word: &str) -> bool {
    word.len() <= 2
        && word
            .bytes()
            .all(|c| matches!(c.to_ascii_lowercase(), b'r' | b'u' | b'b' | b'f'))
}

fn is_ident_start(c: u8) -> bool {
    c.is_ascii_alphabetic() || c == b'_' || c >= 0x80
}

fn is_ident(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_' || c >= 0x80
}

fn blank(bytes: &mut [u8]) {
    for b in bytes {
        if *b != b'\n' {
            *b = b' ';
        }
    }
}
