//! Fuzzing the rendering rule: whatever a skill writes, no control, bidi or invisible character comes out, and the
//! text stays readable (every visible character survives).

use airlock_types::display::{block, hidden, line};
use proptest::prelude::*;

fn hostile_char() -> impl Strategy<Value = char> {
    prop_oneof![
        any::<char>(),
        prop::sample::select(vec![
            '\u{1b}',
            '\u{7}',
            '\u{9b}',
            '\r',
            '\n',
            '\u{8}',
            '\u{7f}',
            '\u{202e}',
            '\u{2066}',
            '\u{200b}',
            '\u{feff}',
            '\u{e0041}',
            '\u{2028}',
            '\\',
        ]),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn nothing_hidden_comes_out_of_a_line(chars in prop::collection::vec(hostile_char(), 0..64)) {
        let text: String = chars.iter().collect();
        let shown = line(&text);
        prop_assert!(!shown.chars().any(hidden), "{shown:?}");
        for c in text.chars().filter(|c| !hidden(*c) && *c != '\\') {
            prop_assert!(shown.contains(c));
        }
    }

    #[test]
    fn a_block_keeps_only_newlines(chars in prop::collection::vec(hostile_char(), 0..64)) {
        let text: String = chars.iter().collect();
        let shown = block(&text);
        prop_assert!(!shown.chars().any(|c| c != '\n' && hidden(c)), "{shown:?}");
        prop_assert_eq!(shown.matches('\n').count(), text.matches('\n').count());
    }
}
