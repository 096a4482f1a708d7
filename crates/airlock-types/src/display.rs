//! The one rendering rule for text a skill controls (file names, argv, paths, socket paths, output, diffs), used by
//! every printer: nothing that moves the cursor, changes the terminal, reorders text or hides in it gets through.
//! Control characters (C0, DEL, C1: escape sequences, OSC 52 clipboard writes, screen clears, hyperlinks), bidirectional
//! controls, zero-width and other invisible format characters, and tag characters are shown as visible `\u{..}`
//! escapes; a backslash is shown doubled so an escape cannot be forged.

/// Whether `c` must be shown escaped (in any text; newline aside).
pub fn hidden(c: char) -> bool {
    let u = c as u32;
    c.is_control()
        || matches!(u,
            0x00AD              // soft hyphen
            | 0x034F            // combining grapheme joiner
            | 0x061C            // Arabic letter mark
            | 0x115F | 0x1160   // Hangul fillers
            | 0x17B4 | 0x17B5
            | 0x180B..=0x180F   // Mongolian variation selectors and vowel separator
            | 0x200B..=0x200F   // zero-width space, joiners, LRM, RLM
            | 0x2028 | 0x2029   // line and paragraph separators
            | 0x202A..=0x202E   // bidi embeddings and overrides
            | 0x2060..=0x206F   // word joiner, invisible operators, bidi isolates
            | 0x3164 | 0xFFA0   // Hangul fillers
            | 0xFE00..=0xFE0F   // variation selectors
            | 0xFEFF            // zero-width no-break space
            | 0xFFF9..=0xFFFB   // interlinear annotations
            | 0x1D173..=0x1D17A // musical invisible formatting
            | 0xE0000..=0xE007F // tag characters
            | 0xE0100..=0xE01EF // variation selectors supplement
        )
}

fn push_escaped(out: &mut String, c: char) {
    out.push_str(&format!("\\u{{{:04x}}}", c as u32));
}

/// One line of text for display: every hidden character, newlines included, escaped.
pub fn line(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            c if hidden(c) => push_escaped(&mut out, c),
            c => out.push(c),
        }
    }
    out
}

/// A block of text (output, a diff) for display: lines kept, every other hidden character escaped (a carriage
/// return too, so a line cannot be overwritten on screen).
pub fn block(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '\n' => out.push('\n'),
            '\\' => out.push_str("\\\\"),
            c if hidden(c) => push_escaped(&mut out, c),
            c => out.push(c),
        }
    }
    out
}

/// `1 finding`, `2 findings`: a count with its noun (which takes an `s` for more than one).
pub fn count(n: usize, noun: &str) -> String {
    if n == 1 {
        format!("1 {noun}")
    } else {
        format!("{n} {noun}s")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_control_bidi_and_invisible_characters() {
        assert_eq!(line("a\nb"), "a\\u{000a}b");
        assert_eq!(
            line("\u{1b}]52;c;SGVsbG8=\u{7}"),
            "\\u{001b}]52;c;SGVsbG8=\\u{0007}"
        );
        assert_eq!(line("src/\u{202e}xsj.ppA"), "src/\\u{202e}xsj.ppA");
        assert_eq!(line("App\u{200b}.jsx"), "App\\u{200b}.jsx");
        assert_eq!(line("a\\u{0a}b"), "a\\\\u{0a}b");
        assert_eq!(block("one\r\ntwo\n"), "one\\u{000d}\ntwo\n");
        assert_eq!(line("plain ünïcode ✓"), "plain ünïcode ✓");
    }
}
