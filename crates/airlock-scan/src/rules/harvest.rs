//! Secrets of several services collected into one structure that is then serialized or encoded: a harvest, whatever
//! it is for.

use std::collections::BTreeSet;

use super::flow::mentions;

re!(
    /// A secret-named variable read into a collection: a dict or object entry (`"K": os.environ["K"]`,
    /// `k: process.env.K`), capturing the variable's name.
    COLLECTED_SECRET,
    r#"['"]?[\w-]+['"]?\s*:\s*(?:os\.environ(?:\.get)?\s*[\[(]\s*|os\.getenv\(\s*|process\.env\.|process\.env\[\s*)['"]?([A-Z][A-Z0-9_]*)"#
);
re!(
    SERIALIZE,
    r"json\.dumps?\(|JSON\.stringify\(|b64encode\(|\bbtoa\(|pickle\.dumps?\(|yaml\.(safe_)?dump\(|Buffer\.from\("
);

re!(
    /// A collection given a name where it opens: `creds = {`, `const all = {`, `data = dict(`, `secrets := map[`.
    COLLECTION_NAME,
    r"^\s*(?:(?:const|let|var|export)\s+)?([A-Za-z_][A-Za-z0-9_]*)\s*(?::[^=]+)?:?=\s*(?:\{|dict\(|\[|map\[|new\s+Map\b|Object\.assign\()"
);

/// Whether a serializing call on the first of `lines` is still open (more brackets opened than closed) when the
/// last of them begins: the collection read there is inside it.
fn opens_around(lines: &[&str]) -> bool {
    let Some((first, between)) = lines.split_first() else {
        return false;
    };
    let Some(m) = SERIALIZE.find(first) else {
        return false;
    };
    let mut depth: i32 = 1;
    let rest = std::iter::once(&first[m.end()..])
        .chain(between.iter().take(between.len().saturating_sub(1)).copied());
    for text in rest {
        for ch in text.chars() {
            match ch {
                '(' | '{' | '[' => depth += 1,
                ')' | '}' | ']' => depth -= 1,
                _ => {}
            }
            if depth <= 0 {
                return false;
            }
        }
    }
    true
}

/// Words that make a variable's name a secret's.
const SECRET_WORDS: &[&str] = &[
    "KEY",
    "TOKEN",
    "SECRET",
    "PASSWORD",
    "PASSWD",
    "PWD",
    "CREDENTIALS",
    "CREDENTIAL",
    "AUTH",
    "DSN",
    "PRIVATE",
];

/// Secrets of two services or more collected into one structure that is then serialized or encoded, within a few
/// lines (`{"STRIPE_SECRET_KEY": os.environ[...], "DOCKER_PASSWORD": os.environ[...]}` then `json.dumps`): a
/// harvest, whatever it is for. A key passed to its own client (`OpenAI(api_key=os.environ[...])`) is not collected.
/// (first read line, serializing line, the names).
pub(super) fn harvest(code: &str, first_line: u32) -> Option<(u32, u32, Vec<String>)> {
    let lines: Vec<&str> = code.lines().collect();
    let mut reads: Vec<(usize, String)> = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        for c in COLLECTED_SECRET.captures_iter(line) {
            let name = c[1].to_owned();
            let secret = name.split('_').any(|w| SECRET_WORDS.contains(&w)) || name == "DATABASE_URL";
            if secret && !reads.iter().any(|(_, n)| *n == name) {
                reads.push((i, name));
            }
        }
    }
    for (start, (first, _)) in reads.iter().enumerate() {
        let window: Vec<&(usize, String)> = reads[start..].iter().filter(|(i, _)| i - first <= 12).collect();
        let services: BTreeSet<&str> = window
            .iter()
            .map(|(_, n)| n.split('_').next().unwrap_or_default())
            .collect();
        if services.len() < 2 {
            continue;
        }
        let last = window.last().map_or(*first, |(i, _)| *i);
        let until = (last + 12).min(lines.len().saturating_sub(1));
        // What is serialized must be the collection: the name it is assigned to (`creds = {` … `json.dumps(creds)`),
        // or a serializing call opened around it (`JSON.stringify({` … `})`). Headers built for one request and a
        // body serialized lines later are two things.
        let opened = first.saturating_sub(4)..=*first;
        let wrapped = opened
            .clone()
            .find(|&i| SERIALIZE.is_match(lines[i]) && opens_around(&lines[i..=*first]));
        let collection = opened
            .rev()
            .find_map(|i| COLLECTION_NAME.captures(lines[i]).map(|c| c[1].to_owned()));
        let serializes = |i: usize| {
            SERIALIZE.is_match(lines[i])
                && collection.as_deref().is_some_and(|name| {
                    SERIALIZE
                        .find_iter(lines[i])
                        .any(|m| mentions(&lines[i][m.start()..], name))
                })
        };
        if let Some(at) = wrapped.or_else(|| (last..=until).find(|&i| serializes(i))) {
            let n = |i: usize| first_line + u32::try_from(i).unwrap_or(0);
            return Some((
                n(*first),
                n(at),
                window.iter().map(|(_, name)| name.clone()).collect(),
            ));
        }
    }
    None
}
