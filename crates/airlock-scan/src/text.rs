//! Helpers for hostile text: bounded, with invisible and control characters made visible.

/// Whether a character is invisible or reorders text: zero-width, bidi controls, Unicode tags.
pub fn is_hidden_char(c: char) -> bool {
    matches!(c as u32,
        0x200B..=0x200F | 0x202A..=0x202E | 0x2060..=0x2064 | 0x2066..=0x2069 | 0xFEFF | 0xE0000..=0xE007F | 0x00AD)
}

/// The text with control and hidden characters written as `\u{..}` and cut to `max` characters.
pub fn visible(text: &str, max: usize) -> String {
    let mut out = String::new();
    for (count, c) in text.chars().enumerate() {
        if count >= max {
            out.push('…');
            break;
        }
        if c == '\t' {
            out.push(' ');
        } else if airlock_types::display::hidden(c) {
            out.push_str(&format!("\\u{{{:04x}}}", c as u32));
        } else {
            out.push(c);
        }
    }
    out
}

/// Line starts of a text, for turning byte offsets into 1-based line numbers.
pub struct Lines {
    starts: Vec<usize>,
}

impl Lines {
    pub fn new(text: &str) -> Self {
        let mut starts = vec![0];
        starts.extend(text.match_indices('\n').map(|(i, _)| i + 1));
        Self { starts }
    }

    /// 1-based line of a byte offset.
    pub fn line_of(&self, offset: usize) -> u32 {
        let idx = match self.starts.binary_search(&offset) {
            Ok(i) => i,
            Err(i) => i.saturating_sub(1),
        };
        u32::try_from(idx + 1).unwrap_or(u32::MAX)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hidden_characters_are_shown() {
        assert_eq!(visible("a\u{200b}b\x1b[31m", 80), "a\\u{200b}b\\u{001b}[31m");
        assert_eq!(visible("abcdef", 3), "abc…");
        let lines = Lines::new("a\nbc\nd");
        assert_eq!(lines.line_of(0), 1);
        assert_eq!(lines.line_of(3), 2);
        assert_eq!(lines.line_of(5), 3);
    }
}
