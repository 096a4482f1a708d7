//! What a label before a markdown code block, or a comment inside one, says the block is: an attack shown, what not
//! to do, or something to look for (`Attackers extract credentials via:`, `# ❌ Bad:`, `Flag any of them:`), and the
//! prose after a block that asks to run it after all (`Run the command above`).

use super::*;

/// Words that name what follows as an attack or as what not to do, in a comment or a label.
const BAD_WORDS: &str =
    "bad|wrong|incorrect|non-?compliant|insecure|unsafe|vulnerable|dangerous|malicious|attack|exploit";

re!(
    /// A comment that starts by marking the next line as a bad example (`# ❌ …`, `// Bad: …`).
    pub(super) BAD_EXAMPLE,
    &format!(r"(?i)^\W*(❌|🚫|({BAD_WORDS}|anti-pattern)\b\s*(example|practice|pattern|code|payload)?\s*[:(-])")
);

re!(
    /// Prose after a code block that asks to run what it shows (`Run the command above`, `Paste these lines`).
    pub(super) RUN_SHOWN,
    r"(?i)\bdo\s+the\s+same\b|\b(run|execute|paste|exec|reproduce|replay|repeat|try|rerun)\s+(it|this|that|them|these|those|the\s+(above|following|same)|(the|this|that|these|those)\s+(\w+\s+)?(commands?|snippets?|blocks?|scripts?|code|lines?|payloads?|examples?))\b|\buse\s+(it|this|that|them)\s+(once|anyway|now|first|here|as\s+shown)\b"
);
re!(
    /// A label that starts by naming what it introduces as an attack or what not to do (`Vulnerable code:`,
    /// `**Attack filename:**`, `Never do this:`).
    pub(super) BAD_LEAD_IN,
    &format!(r"(?i)^\W*(❌|🚫|({BAD_WORDS}|anti-patterns?|red\s+flags?|never|don'?t|do\s+not|avoid)\b)")
);
re!(
    /// A label of a word or two that marks what follows as failing in brackets (`**Example (fail):**`, `Code
    /// (insecure):`): nothing else in it can ask for it.
    pub(super) MARKED_BAD,
    &format!(r"(?i)^\W*(\w+\s+){{0,2}}\((fail|failing|{BAD_WORDS})\)\W*$")
);

re!(
    /// Where the clause of a label's subject ends and another may begin (`;`, a sentence's end, `so`, `then`).
    pub(super) CLAUSE_END, r"(?i)[;.!?]|,?\s+(?:so|then|now)\s+");
re!(
    /// A label whose subject is an attack of a kind, what it looks like (`A reverse shell usually looks like:`,
    /// `Download-and-run "prerequisites":`): no verb that orders it comes first. Or a report of a sample seen in the
    /// wild and what it did, in the past (`Observed in the wild (March 2025), the package's postinstall ran:`).
    pub(super) ATTACK_SHOWN,
    r#"(?i)^[\W\d]*(?:(?:a|an|the|typical|common|usual|classic)\s+)*['"]?(?:reverse[\s-]shells?|bind[\s-]shells?|backdoors?|payloads?|droppers?|stagers?|exfiltration|malware|attacks?|lures?|download-and-run|credential\s+(?:theft|harvesting|access)|(?:malicious|hostile|rogue|trojani[sz]ed|poisoned|backdoored|evil)\s+[\w-]+)\b['"]?[^:]{0,100}:\s*$|^[^:]{0,80}\b(?:shows?|quotes?|reproduces?)\s+(?:the\s+|a\s+|an\s+|one\s+)?(?:\w+\s+)?(?:lure|attack|payload|malware|phishing|scam)s?\b[^:]{0,100}:\s*$|^[^:]{0,80}\b(?:observed|seen|found|caught)\s+in\s+the\s+wild\b[^:;]{0,120}\b(?:ran|did|executed|sent|ran\s+this|looked\s+like|contained)\s*:\s*$"#
);

/// Whether a label right before a markdown code block says the block shows an attack or what not to do: it starts
/// so (`Vulnerable:`, `Never do this:`), its subject is an attacker (`Attackers extract credentials via:`), or its
/// last sentence asks to look for what follows (`Flag any of them and ask the author why:`), and
/// it is not an idiom that asks for it after all (`Don't forget to run:`).
pub(super) fn describing_lead_in(label: &str) -> bool {
    // A label that ends a longer paragraph (`… or browser profiles. A stealer typically does something like:`) is
    // read by its last sentence too.
    let last = super::context::last_sentence(label);
    describing_label_sentence(label) || last != label && describing_label_sentence(last)
}

pub(super) fn describing_label_sentence(label: &str) -> bool {
    // What an attacker does is told in the attacker's clause (`Stealers read … and send them out in one go:`); an
    // order to the reader comes after it (`Attackers do this; do the same:`).
    let actor = super::context::starts_with_actor(label) && {
        let after = CLAUSE_END.find(label).map_or("", |m| &label[m.start()..]);
        !super::context::asks_after_all(after)
    };
    actor
        || (BAD_LEAD_IN.is_match(label) || ATTACK_SHOWN.is_match(label))
            && !super::context::asks_after_all(label)
        || MARKED_BAD.is_match(label)
        || super::context::detection_label(label)
}

/// The lines of a code block (numbered from `first_line`) that follow a comment marking them as what not to do
/// (`# ❌ Bad: hardcoded secret`, `# VULNERABLE: mounting host paths`), up to a blank line or the next comment.
pub(super) fn bad_example_lines(text: &str, first_line: u32, comments: &[(u32, String)]) -> HashSet<u32> {
    if !comments.iter().any(|(_, c)| BAD_EXAMPLE.is_match(c)) {
        return HashSet::new();
    }
    let commented: HashSet<u32> = comments
        .iter()
        .flat_map(|(line, c)| {
            (0..u32::try_from(c.lines().count().max(1)).unwrap_or(1)).map(move |i| line + i)
        })
        .collect();
    let lines: Vec<&str> = text.lines().collect();
    let mut bad = HashSet::new();
    for (line, comment) in comments.iter().filter(|(_, c)| BAD_EXAMPLE.is_match(c)) {
        let mut n = line + u32::try_from(comment.lines().count().max(1)).unwrap_or(1);
        while let Some(l) = lines.get(n.saturating_sub(first_line) as usize) {
            if l.trim().is_empty()
                || commented.contains(&n) && !l.trim_start().starts_with(|c: char| c.is_alphanumeric())
            {
                break;
            }
            bad.insert(n);
            n += 1;
        }
    }
    bad
}
