//! The rules engine: files are split into segments by the parsers, then each rule of [`table::RULES`] is matched
//! line by line, weighted by where the line sits.

mod blocks;
mod combine;
mod context;
mod credential;
mod crossflow;
mod decode;
mod downloads;
mod fetched;
mod file;
mod flow;
mod flow_findings;
mod harvest;
mod keys;
mod labels;
mod lesser;
mod literals;
mod names;
mod normal;
mod planted;
mod prose;
mod signs;
mod sources;
mod startup;
pub mod table;
mod through_file;

pub use combine::hidden_runs;
pub use crossflow::{cross_file_flows, Script};
pub use file::scan_file;

use std::collections::HashSet;
use std::path::Path;
use std::sync::{LazyLock, OnceLock};

use regex::{Regex, RegexSet};

use airlock_types::{FileKind, Finding, FindingContext, InventoryEntry, Severity};

use crate::code::{analyze, Grammar};
use crate::markdown::{segments, Segment};
use crate::skillmd::split_frontmatter;
use crate::text::{is_hidden_char, visible};
use crate::verdict::Facts;
use crate::ScanError;
use blocks::{guess_shell, strip_prompts};
use context::{
    code_expression, describing_cue, describing_label, names_a_path, only_placeholder_hosts, sentence_of,
    without_named_paths,
};
use keys::*;
use labels::*;
use lesser::*;
use literals::{in_pattern_literal, RUNS_A_NAME};
use prose::{description_of, LIST_ITEM};
use signs::*;
use table::{Prose, RuleDef, Scope, RULES};

/// Bytes of a file that are analysed; the rest is ignored (and said so).
const MAX_ANALYSED_BYTES: u64 = 2 * 1024 * 1024;
/// Findings kept per rule and file.
const MAX_PER_RULE_AND_FILE: usize = 10;

struct Compiled {
    set: RegexSet,
    /// Each rule alone (for where it matched), compiled the first time the set says it matched: most rules never
    /// match in a scan, and compiling all of them again took as long as the set.
    each: Vec<OnceLock<Regex>>,
    action: Regex,
    /// A destination on this machine.
    local: Regex,
    /// A command or call that reads a `.env` file's contents (or sends the file somewhere).
    dotenv_read: Regex,
    /// Loading a `.env` file into a program's environment (what an app does with its own configuration).
    dotenv_load: Regex,
    /// Copying a `.env` template to `.env`.
    dotenv_template: Regex,
    /// A line that only changes, tests, lists or points a variable at a secret's path (or prints text naming it),
    /// without reading it.
    names_only: Regex,
    /// Something in the line that reads or runs after all (a pipe into a shell, a command substitution).
    reads_after_all: Regex,
    /// `sudo` for a system package manager's install: an install instruction.
    sudo_install: Regex,
    /// A raw address on this machine or a private network.
    local_ip_url: Regex,
    /// A `fetch` of a path on the page's own origin.
    relative_fetch: Regex,
    /// `env` piped to a filter for one name.
    env_filter: Regex,
    /// A base64 payload decoded into a file and not run.
    decode_to_file: Regex,
}

re!(
    /// The trigger a skill's description gives (`Use when …`, `Use this skill whenever …`): when it is used.
    USE_WHEN,
    r"(?i)\buse\s+(?:this\s+(?:skill|tool)\s+|it\s+)?(?:when|whenever|if|for\s+(?:tasks|requests|questions))\b"
);

re!(
    /// A verb that asks for a call over the network.
    NET_ACTION,
    r"(?i)\b(run|execute|send|upload|post|fetch|download|call|invoke|use|request|query|hit|submit|curl|wget|then|first|next)\b"
);

re!(
    /// A lead-in whose sentence starts with an order about the items that follow (`Assemble a JSON object with
    /// these keys:`, `Send these:`, `Remove:`); a sentence that only describes an order ("searches in this order,
    /// stopping at the first …:") is not one.
    MAKES,
    r"(?i)(^|[.!?]\s+)\W*(please\s+)?(assemble|build|create|compose|prepare|construct|make|fill|populate|provide|put\s+together|gather|bundle|run|execute|read|copy|send|upload|post|include|collect|print|output|dump|open|load|fetch|download|install|write|append|add|save|store|delete|remove|export|source|grab|extract|zip|archive|attach|paste|submit|pipe|use|call|invoke|start)\b"
);

impl Compiled {
    /// Rule `index` of [`RULES`] alone.
    fn rule(&self, index: usize) -> &Regex {
        #[expect(clippy::expect_used, reason = "the patterns are constants covered by tests")]
        self.each[index].get_or_init(|| {
            Regex::new(&ascii_boundaries(RULES[index].pattern)).expect("rule pattern compiles")
        })
    }
}

#[expect(clippy::expect_used, reason = "the patterns are constants covered by tests")]
static COMPILED: LazyLock<Compiled> = LazyLock::new(|| {
    // The set's lazy DFA needs room for every rule at once: with the default cache it gives up on most lines and
    // falls back to the much slower PikeVM (a hundredfold slower scan).
    // Word boundaries are ASCII ones, here and in each rule: a Unicode `\b` makes the lazy DFA give up on any line
    // with a non-ASCII character (a minified bundle, a source map: seconds a line). Next to the ASCII letters the
    // rules put them by, an ASCII boundary holds wherever a Unicode one does, and also after a letter of another
    // script (`使用curl`).
    // Compiled on the thread that asks first, with no parallel work inside: a worker waiting here must not pick up
    // another scan's file that waits for this same initialisation (a deadlock in a server running two scans).
    // The compiled set is close to the crate's default 10 MB bound on a program's size: a bound of 16 MB leaves
    // room for more rules (Unicode classes under counted repetition are what cost most; rules avoid them).
    let set = regex::RegexSetBuilder::new(RULES.iter().map(|r| ascii_boundaries(r.pattern)))
        .size_limit(16 << 20)
        .dfa_size_limit(64 << 20)
        .build()
        .expect("rule patterns compile");
    let each = RULES.iter().map(|_| OnceLock::new()).collect();
    Compiled {
    set,
    each,
    local: Regex::new(r"(?i)\blocalhost\b|\b127\.0\.0\.1\b|\[::1\]|\b0\.0\.0\.0\b").expect("local pattern compiles"),
    dotenv_read: Regex::new(
        r"(?i)(^|[\s;&|(\x60])(cat|less|more|head|tail|strings|base64|xxd|od|cp|mv|scp|rsync|curl|wget|nc|tar|zip|gzip|7z|type|Get-Content)\s[^\n;|&]*\.env\b|\bopen\([^)\n]*\.env\b|readFile(Sync)?\([^)\n]*\.env\b|\.env['\x22]?\)\.read_text\(|<\s*\.env\b|\bcontents?\s+of\s+(the\s+|your\s+|its\s+|this\s+)?(project'?s\s+|repo'?s\s+|repository'?s\s+|user'?s\s+)?[\x60'\x22]?[\w./-]*\.env\b|\b(text|contents?)\s+of\s+(the\s+|your\s+|its\s+|this\s+)?(project'?s\s+|repo'?s\s+|repository'?s\s+|user'?s\s+|app'?s\s+)?(dotenv|env)\s+file\b|(--body-file|--input|(?-i:\s-F))[=\s]+['\x22]?[\w./-]*\.env\b",
    )
    .expect("dotenv read pattern compiles"),
    dotenv_load: Regex::new(
        r"(?i)load_dotenv\(|dotenv\.config\(|require\(['\x22]dotenv|import\s+['\x22]dotenv|(^|[\s;&])(source|\.)\s+\S*\.env\b|--env-file\b|env_file\s*[:=]|set\s+-a",
    )
    .expect("dotenv load pattern compiles"),
    dotenv_template: Regex::new(r"(?i)\b(cp|copy|mv)\s+(-\w+\s+)*\S*\.env\.(example|sample|template|dist|defaults)\b")
        .expect("dotenv template pattern compiles"),
    names_only: Regex::new(
        r"(?i)^[\s>*\x60-]*(\d+\.\s+)?(for\s+\w+\s+in(\s+[\w.-]+)+\s*;\s*do\s*$|for\s+\w+\s+in(\s+[\w.~/*\x22-]+)+\s*$|((el)?if\s+|while\s+|until\s+|!\s+|local\s+|declare\s+(-\w+\s+)?|readonly\s+|do\s+|then\s+)?(sudo\s+)?((chmod|chown|chgrp|ls|stat|test|touch|mkdir|systemctl\s+(--user\s+)?status|echo|printf)\b|\[\[?\s|(export\s+)?[A-Z_][A-Z0-9_]*=(\$\{\w+:-)?(\$HOME/|\$\{HOME\}/|[^\s$(])))",
    )
    .expect("names-only pattern compiles"),
    reads_after_all: Regex::new(r"(?i)\|\s*(sudo\s+)?(ba|z)?sh\b|\|\s*(eval|python3?|node|curl|nc)\b|\$\(|\x60[^\x60]*\b(cat|base64)\b|&&\s*(cat|cp|scp|curl)\b|;\s*(cat|cp|scp|curl)\b")
        .expect("reads-after-all pattern compiles"),
    sudo_install: Regex::new(
        r"(?i)\bsudo\s+(apt(-get)?|dnf|yum|zypper|pacman|apk|port|snap|emerge|xbps-install)\s+(-\S+\s+)*(install|update|upgrade|add|-S\w*)\b",
    )
    .expect("sudo install pattern compiles"),
    local_ip_url: Regex::new(
        r"\bhttps?://(127\.\d+\.\d+\.\d+|0\.0\.0\.0|10\.\d+\.\d+\.\d+|192\.168\.\d+\.\d+|172\.(1[6-9]|2\d|3[01])\.\d+\.\d+|169\.254\.\d+\.\d+)(:\d+)?/",
    )
    .expect("local ip pattern compiles"),
    relative_fetch: Regex::new(r"\$?fetch\(\s*['\x22\x60]/[^/]").expect("relative fetch pattern compiles"),
    env_filter: Regex::new(r"(^|[;&|]\s*)(?:print)?env\s*\|\s*(grep|rg)\s+(-\w+\s+)*['\x22]?[A-Za-z_]").expect("env filter pattern compiles"),
    decode_to_file: Regex::new(r"(?i)base64\s+(-d|--decode|-D)\s*>\s*[\w./-]+\s*$").expect("decode-to-file pattern compiles"),
    action: Regex::new(
        r"(?i)\b(run|execute|read|cat|copy|send|forward|transmit|relay|upload|post|include|collect|gather|print|output|dump|open|load|fetch|download|install|write|append|add|save|store|delete|remove|export|source|grab|extract|exfiltrate|zip|archive|attach|paste|submit|mask|redact|pipe|use|call|invoke|start|first|then|next|always)\b",
    )
    .expect("action pattern compiles"),
}
});

/// `pattern` with each word boundary `\b` made an ASCII one, `(?-u:\b)`.
pub(super) fn ascii_boundaries(pattern: &str) -> String {
    let mut out = String::with_capacity(pattern.len() + 16);
    let mut escaped = false;
    for c in pattern.chars() {
        match (escaped, c) {
            (true, 'b') => {
                out.push_str("(?-u:\\b)");
                escaped = false;
            }
            (true, c) => {
                out.push('\\');
                out.push(c);
                escaped = false;
            }
            (false, '\\') => escaped = true,
            (false, c) => out.push(c),
        }
    }
    if escaped {
        out.push('\\');
    }
    out
}

/// Where a line sits, for the rules.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Where {
    Code,
    ProseLine,
    Comment,
    Hidden,
    /// An encoded payload the line decodes and runs: hiding a command counts against it.
    Decoded,
}

struct FileScan<'a> {
    file: &'a str,
    kind: FileKind,
    grammar_exec: bool,
    /// Inside a markdown code block in a programming language: code to write into a project, not a command.
    example: bool,
    /// Inside a markdown list introduced by a line that describes (`**Blocks**:`, `Red flags:`): its items are
    /// what is looked for, not what to do.
    describing_list: bool,
    /// Whether the list being read is the object of an instruction (`Assemble a JSON object with these keys:`):
    /// each item is part of what the agent is told to do.
    instructing_list: bool,
    /// Whether the prose before the list or table being read orders what follows done (`Do the setup below, in
    /// order:`, `Run each line of the list below.`): a label after the order (`Red flags:`), a checkbox or a table's
    /// cells cost nothing and do not make its items descriptions.
    ordered_below: bool,
    /// The label before the markdown code block being scanned when it says the block shows an attack or what not
    /// to do (`Attackers extract credentials via:`, `**Vulnerable:**`) and nothing after the block asks to run it.
    described_block: Option<String>,
    /// The prose after the markdown code block being scanned asks to run what it shows (`Run the command above`):
    /// no label in or before it makes it an example.
    shown_then_asked: bool,
    /// The code being scanned starts programs or evaluates code somewhere (a decoded payload may be run).
    runs_code: bool,
    /// The markdown being scanned is a file whose commands the instructions order run (`Run the commands in
    /// \`references/setup.md\``): its code blocks are steps, not reference material.
    ordered_doc: bool,
    /// The code being scanned runs a string a name holds (`subprocess.run(cmd, shell=True)`, `os.system(cmd)`,
    /// `eval "$line"`), or the prose before it orders its rows run (`Run the second field of each row:`): a line
    /// that is only strings may be what runs, not a table of patterns.
    runs_strings: bool,
    /// How many decodings deep the line being scanned is.
    depth: u8,
    /// The agent file (`CLAUDE.md`, `.cursor/rules/x.md`) the markdown being scanned is written into: what it says,
    /// the agent obeys in every later session.
    planted: Option<String>,
    /// The names the shell code being scanned gives to paths in the home folder and to remotes.
    names: names::Names,
    /// The lines of the code being scanned that append a here-document of settings only (`export`s, aliases, a
    /// version manager's start-up line) to a file.
    settings_heredocs: HashSet<u32>,
    /// The prose line before the one being scanned when this one continues its sentence (a wrapped paragraph): what
    /// governs a match at this line's start may stand there (`The worm's postinstall script ran` / `` `cat ~/.npmrc` ``).
    sentence_before: Option<String>,
    /// The prose line after the one being scanned when it continues this one's sentence: an order there to do what
    /// was described (`…; do the same here`) undoes the description.
    sentence_after: Option<String>,
    out: &'a mut Vec<Finding>,
}

impl<'a> FileScan<'a> {
    /// A scan of `file` with nothing known about it yet, adding its findings to `out`.
    fn new(file: &'a str, kind: FileKind, out: &'a mut Vec<Finding>) -> Self {
        FileScan {
            file,
            kind,
            grammar_exec: false,
            example: false,
            describing_list: false,
            instructing_list: false,
            ordered_below: false,
            described_block: None,
            shown_then_asked: false,
            runs_code: false,
            runs_strings: false,
            sentence_before: None,
            sentence_after: None,
            ordered_doc: false,
            depth: 0,
            planted: None,
            names: names::Names::default(),
            settings_heredocs: HashSet::new(),
            out,
        }
    }

    fn applies(&self, rule: &RuleDef, place: Where) -> bool {
        let scope_ok = match rule.scope {
            Scope::All => true,
            Scope::Workflow => self.kind == FileKind::Workflow,
            Scope::Manifest => self.kind == FileKind::PackageManifest,
            Scope::HookConfig => self.kind == FileKind::AgentHookConfig,
        };
        if !scope_ok {
            return false;
        }
        if self.grammar_exec && rule.id == "exec/subprocess" {
            return false;
        }
        match place {
            // A decoded payload is a command line: every rule applies.
            Place::Code | Place::Decoded => true,
            Place::ProseLine | Place::Hidden | Place::Comment => rule.prose != Prose::Never,
        }
    }

    /// Matches every rule against one line.
    fn line(&mut self, line_no: u32, text: &str, place: Where, inline_code: &[(usize, usize)]) {
        if text.trim().is_empty() {
            return;
        }
        // Whether what the line hides decodes to something that does nothing risky (`exec(b64decode(...))` of
        // `print("Hello")`): said in the message, not counted for less.
        let benign_payload = place != Place::Decoded && self.hidden(line_no, text, place);
        let compiled = &*COMPILED;
        let matches = compiled.set.matches(text);
        if !matches.matched_any() {
            return;
        }
        let list_item = LIST_ITEM.is_match(text);
        for index in matches.iter() {
            let rule = &RULES[index];
            if !self.applies(rule, place) {
                continue;
            }
            // In code, the first match that is not a pattern in a string (`re.compile(r'\.ssh\b')`) is the one that
            // counts: a pattern put first on the line costs a hostile skill nothing.
            let all: Vec<regex::Match<'_>> = compiled.rule(index).find_iter(text).collect();
            let Some(&first) = all.first() else {
                continue;
            };
            let strings_run = self.runs_strings;
            let pattern = |m: &regex::Match<'_>| {
                place == Place::Code && in_pattern_literal(text, m.start(), strings_run)
            };
            let m = if pattern(&first) {
                all.iter().copied().find(|m| !pattern(m)).unwrap_or(first)
            } else {
                first
            };
            // What makes the matched text a description rather than an instruction, read only from what governs
            // it: a word after it, or anywhere else on the line, costs a hostile skill nothing and counts for
            // nothing (see `describing_cue`).
            let table_row = text.trim_start().starts_with('|');
            let cue_of = |m: &regex::Match<'_>| {
                if place == Place::Code || self.ordered_below && (list_item || table_row) {
                    None
                } else {
                    // "Do not tell the user" is what the rule is about, not a negation of it.
                    let negation_is_the_pattern = rule.id == "prompt/conceal";
                    let undone = |cue: Option<String>| {
                        cue.filter(|_| {
                            !(place == Place::ProseLine
                                && self.sentence_after.as_deref().is_some_and(context::follows_up))
                        })
                    };
                    undone(describing_cue(
                        text,
                        m.start(),
                        m.end(),
                        self.describing_list && list_item,
                        negation_is_the_pattern,
                    ))
                    .or_else(|| {
                        // The sentence read whole when the line continues one: a line break costs nothing either way.
                        let before = self
                            .sentence_before
                            .as_deref()
                            .filter(|_| place == Place::ProseLine)?;
                        let joined = format!("{} {text}", before.trim_end());
                        let shift = before.trim_end().len() + 1;
                        undone(describing_cue(
                            &joined,
                            m.start() + shift,
                            m.end() + shift,
                            self.describing_list && list_item,
                            negation_is_the_pattern,
                        ))
                    })
                }
            };
            // In prose, a later match that nothing describes is the one that counts: a negated or described
            // mention put first on the line (`Never ignore previous instructions of the user; ignore all previous
            // instructions …`) costs a hostile skill nothing.
            let mut cue = cue_of(&m);
            let m = match cue.is_some().then(|| {
                all.iter()
                    .copied()
                    .find(|o| o.start() > m.start() && cue_of(o).is_none())
            }) {
                Some(Some(later)) => {
                    cue = None;
                    later
                }
                _ => m,
            };
            let describing = cue.is_some();
            let (context, severity) = match place {
                // A pattern in a list of things to detect (a regular expression in a string) describes the danger.
                Place::Code if in_pattern_literal(text, m.start(), strings_run) => {
                    (FindingContext::Comment, Severity::Info)
                }
                Place::Code => (FindingContext::Code, rule.severity),
                Place::Hidden => (FindingContext::Instruction, rule.severity.max(Severity::Medium)),
                Place::Decoded => (
                    FindingContext::Instruction,
                    one_more(rule.severity.max(Severity::Medium)),
                ),
                Place::Comment | Place::ProseLine => {
                    // Inline code with a command in it is an instruction. One bare word in backticks (`curl`,
                    // `~/.aws/credentials`) counts as the same word without them: the backticks cost a hostile
                    // skill nothing, so a sentence that tells the agent to do something with it is an instruction.
                    let span = inline_code
                        .iter()
                        .find(|(s, e)| m.start() >= *s && m.end() <= *e)
                        .and_then(|(s, e)| text.get(*s..*e));
                    // A path in backticks with words after it (`~/.ssh directory`) names it too.
                    // A call of a program's code (`page.evaluate(() => fetch(u))`, `r = requests.get(u)`) is
                    // code the agent may write or review, not a command it runs: it asks for network use only when
                    // its sentence does, as a word would. A shell command in backticks (`curl -sL …`) is run as it
                    // stands.
                    let one_word = span.is_some_and(|t| {
                        !t.trim_matches('`').trim().contains(char::is_whitespace)
                            || names_a_path(t)
                            || rule.id == "net/http-client" && code_expression(t)
                    });
                    let in_inline = span.is_some() && !one_word;
                    // For a word in backticks, the action must be in its own sentence ("keys live in
                    // `~/.aws/credentials`. To add a profile, run ..." names the file, it does not read it), and
                    // outside the paths it names (`~/.orbstack/run/docker.sock` asks nothing to run).
                    let asked = if one_word {
                        let plain = without_named_paths(text, inline_code);
                        let sentence = sentence_of(&plain, m.start(), m.end());
                        // Network use is asked for by a verb of calling or sending (`Post the results with …`),
                        // not by any verb (`with both connect and read timeouts`).
                        if rule.id == "net/http-client" {
                            NET_ACTION.is_match(sentence)
                        } else {
                            compiled.action.is_match(&USE_WHEN.replace_all(sentence, " "))
                        }
                    } else {
                        // A description's trigger (`Use when the user asks …`) says when the skill is used, not
                        // what to do with what the line names.
                        compiled.action.is_match(&USE_WHEN.replace_all(text, " "))
                    } || self.instructing_list && list_item;
                    let instruction = !describing
                        && (rule.prose == Prose::Always || place == Place::ProseLine && (in_inline || asked));
                    if instruction {
                        (FindingContext::Instruction, rule.severity)
                    } else if place == Place::Comment {
                        (FindingContext::Comment, Severity::Info)
                    } else {
                        (FindingContext::Prose, Severity::Info)
                    }
                }
            };
            // Code blocks of reference material (markdown beside SKILL.md) show how things are done; they count one
            // step less than SKILL.md's own commands and the skill's code. Imperative prose counts in full anywhere,
            // except network use, which reference material describes as a matter of course (how an API is called).
            let reference = (self.kind == FileKind::Markdown && !self.ordered_doc || self.example)
                && rule.severity < Severity::Critical
                && (context == FindingContext::Code
                    || context == FindingContext::Instruction && rule.id.starts_with("net/"));
            let mut severity = if reference { one_less(severity) } else { severity };
            // A connection to this machine (a local server's port) is not a way out.
            let local = rule.id == "net/http-client" && compiled.local.is_match(text);
            if local {
                severity = severity.min(Severity::Medium);
            }
            // A call to a documentation placeholder (`api.example.com`, `https://<host>`) shows the shape of a call;
            // it reaches nothing as written.
            // For a collection endpoint (a webhook catcher), the path is the address: a placeholder there reaches
            // nothing.
            let placeholder = (rule.id == "net/http-client" || rule.id == "net/exfil-endpoint")
                && !local
                && (only_placeholder_hosts(text)
                    || rule.id == "net/exfil-endpoint" && PLACEHOLDER_PATH.is_match(text));
            if placeholder {
                severity = severity.min(Severity::Medium);
            }
            // A line of a class that is not what the rule is about counts at most at that class's level, with its
            // own message.
            let lesser = if matches!(context, FindingContext::Prose | FindingContext::Comment) {
                None
            } else {
                lesser_class(rule.id, index, text, m.start())
            };
            let lesser = lesser.or_else(|| {
                (rule.id == "persist/shell-rc" && self.settings_heredocs.contains(&line_no)).then_some((
                    Severity::Medium,
                    "Appends settings only (`export`s, aliases, PATH, a version manager's start-up line) to a shell start-up file, in a here-document.",
                ))
            });
            // Root taken in a template (a container's or a dev VM's set-up script the skill gives to copy) is that
            // machine's: one step less.
            if rule.id == "priv/escalate" && self.example && lesser.is_none() {
                severity = severity.min(Severity::High);
            }
            if let Some((level, _)) = lesser {
                severity = severity.min(level);
            }
            let message = if let Some((_, why)) = lesser {
                why.to_owned()
            } else if context == FindingContext::Prose || context == FindingContext::Comment {
                let why = match &cue {
                    Some(cue) => format!(" ({cue})"),
                    None => String::new(),
                };
                format!(
                    "Mentioned only, not an instruction{why}: {}",
                    lowercase_first(rule.message)
                )
            } else {
                rule.message.to_owned()
            };
            // Decoding and running hides code whatever it says today: the level stays; the message says so.
            let benign = rule.id == "obfusc/encoded-exec" && benign_payload;
            // Told to the agent in a file it reads in every later session: it outlives this run.
            let planted = self.planted.as_deref().filter(|_| {
                context == FindingContext::Instruction
                    && planted::behaviour_rule(rule.id)
                    && severity >= Severity::High
            });
            if planted.is_some() {
                severity = one_more(severity);
            }
            let message = if benign {
                format!("{message} (what it decodes to does nothing risky today; hiding code and running it is the act)")
            } else {
                message
            };
            let message = match planted {
                Some(file) => {
                    format!("{message} (written into the agent's `{file}`: obeyed in every later session)")
                }
                None => message,
            };
            let message = match (reference, local) {
                (_, true) => format!("{message} (to this machine)"),
                _ if placeholder => format!("{message} (to a placeholder host, as an example)"),
                (true, false) if self.example => {
                    format!("{message} (in example code to write, not a command)")
                }
                (true, false) => format!("{message} (in reference material)"),
                (false, false) => message,
            };
            self.out.push(Finding {
                rule: rule.id.to_owned(),
                severity,
                file: self.file.to_owned(),
                line: line_no,
                evidence: visible(text.trim(), 160),
                message,
                context,
            });
        }
    }

    /// Scans what a line hides in its literals (base64, hex, escapes, character codes, rot13, reversed or joined
    /// strings) as code at the literal's line, the decoded text in the evidence. A payload that the line or its
    /// code runs counts one step higher (hiding a command counts against it), and any hidden text that a rule
    /// finds risky is itself a finding.
    fn hidden(&mut self, line_no: u32, text: &str, place: Where) -> bool {
        if self.depth >= 2 || place == Place::ProseLine && !text.contains('`') {
            return false;
        }
        let mut decoded_any = false;
        let mut all_benign = true;
        let mut hiddens = decode::hidden_texts(text);
        if place == Place::Code && !self.names.is_empty() {
            if let Some(text) = self.names.written_out(text) {
                hiddens.push(decode::Hidden {
                    how: decode::THROUGH_NAMES,
                    text,
                });
            }
        }
        if place == Place::Code && text.contains("cd ") {
            if let Some(text) = names::through_cd(text) {
                // A loop over what the folder holds (`for f in */SKILL.md; do … >> "$f"`) names those paths too.
                let text = names::Names::of(&text).written_out(&text).unwrap_or(text);
                hiddens.push(decode::Hidden {
                    how: decode::THROUGH_NAMES,
                    text,
                });
            }
        }
        for hidden in hiddens {
            let runs = EXEC_SINK.is_match(text)
                || hidden.is_the_line() && EXEC_SINK.is_match(&hidden.text)
                || self.runs_code && place == Place::Code;
            // A path joined from its parts or literals joined with `+` are ways of writing, not of hiding: what they
            // make counts as the same text written out would, never a step higher.
            let plain = matches!(
                hidden.how,
                decode::JOINED_LITERALS | decode::JOINED_PATH_HOW | decode::THROUGH_NAMES
            );
            let inner = if runs && !plain {
                Place::Decoded
            } else {
                Place::Code
            };
            let start = self.out.len();
            self.depth += 1;
            for decoded_line in hidden.text.lines() {
                self.line(line_no, decoded_line, inner, &[]);
            }
            self.depth -= 1;
            let shown = visible(&hidden.text, 120);
            for f in &mut self.out[start..] {
                f.evidence = visible(
                    &format!("{} [decoded from {}: {shown}]", text.trim(), hidden.how),
                    240,
                );
                let written = if plain { "written as" } else { "hidden as" };
                f.message = format!("{} ({written} {})", f.message, hidden.how);
            }
            let worst = self.out[start..].iter().map(|f| f.severity).max();
            if !plain {
                decoded_any = true;
                all_benign &= worst.is_none_or(|w| w < Severity::Medium);
            }
            if !plain && worst.is_some_and(|w| w >= Severity::Medium) {
                self.out.push(Finding {
                    rule: "obfusc/hidden-payload".to_owned(),
                    severity: if runs { Severity::Critical } else { Severity::High },
                    file: self.file.to_owned(),
                    line: line_no,
                    evidence: visible(
                        &format!("{} [decoded from {}: {shown}]", text.trim(), hidden.how),
                        240,
                    ),
                    message: format!(
                        "Hides a risky command or path as {}{}.",
                        hidden.how,
                        if runs { " and runs it" } else { "" }
                    ),
                    context: FindingContext::Code,
                });
            }
        }
        decoded_any && all_benign
    }

    /// Matches every line of `text`; a line that ends in `\` goes on in the next (one command split for reading, or
    /// to split a pattern), and is matched whole at its first line.
    fn lines(&mut self, first_line: u32, text: &str, place: Where) {
        let mut joined = String::new();
        let mut start = 0;
        for (i, line) in text.lines().enumerate() {
            if joined.is_empty() {
                start = i;
            }
            if let Some(head) = line.strip_suffix('\\').filter(|_| place != Place::ProseLine) {
                joined.push_str(head);
                joined.push(' ');
                continue;
            }
            joined.push_str(line);
            let whole = std::mem::take(&mut joined);
            self.line(first_line + u32::try_from(start).unwrap_or(0), &whole, place, &[]);
        }
        if !joined.is_empty() {
            self.line(
                first_line + u32::try_from(start).unwrap_or(0),
                &joined,
                place,
                &[],
            );
        }
    }

    /// Analyses code with its grammar: code lines get every rule, comments only the prompt rules. Gives back the
    /// code with its comments blanked.
    /// Of the findings from `before` on (a second reading of code scanned from `start`), keeps only those whose rule
    /// and line the first reading did not find.
    fn keep_only_new(&mut self, start: usize, before: usize) {
        let added: Vec<Finding> = self.out.drain(before..).collect();
        for f in added {
            if !self.out[start..]
                .iter()
                .any(|o| o.rule == f.rule && o.line == f.line)
            {
                self.out.push(f);
            }
        }
    }

    fn code(&mut self, grammar: Option<Grammar>, text: &str, first_line: u32, facts: &mut Facts) -> String {
        let info = analyze(grammar, text, first_line);
        let start = self.out.len();
        let outer_runs = self.runs_code;
        self.runs_code = !info.exec_sites.is_empty() || grammar == Some(Grammar::Shell);
        let outer_strings = self.runs_strings;
        self.runs_strings = self.ordered_below || RUNS_A_NAME.is_match(&info.code);
        let outer_names = std::mem::take(&mut self.names);
        if grammar == Some(Grammar::Shell) {
            self.names = names::Names::of(&info.code);
        } else if grammar == Some(Grammar::Python) {
            self.names = names::Names::of_python(&info.code);
        }
        let outer_heredocs = std::mem::replace(
            &mut self.settings_heredocs,
            signs::settings_heredocs(&info.code)
                .into_iter()
                .map(|i| first_line + i)
                .collect(),
        );
        self.lines(first_line, &info.code, Place::Code);
        self.settings_heredocs = outer_heredocs;
        self.names = outer_names;
        self.runs_code = outer_runs;
        self.runs_strings = outer_strings;
        self.flows(&info.code, first_line, text);
        // The same code with each word as the shell puts it together (`c\url`, `~/.bash[r]c`, `~/.{ssh,aws}`), or
        // with a module's functions imported under other names written as the module's: only what that adds.
        let words = match grammar {
            Some(Grammar::Shell) => normal::shell_words(&info.code),
            Some(Grammar::Python | Grammar::JavaScript) => normal::module_names(&info.code),
            _ => None,
        };
        if let Some(words) = &words {
            let before = self.out.len();
            let names = if grammar == Some(Grammar::Shell) {
                names::Names::of(words)
            } else {
                names::Names::default()
            };
            let outer_names = std::mem::replace(&mut self.names, names);
            let runs = !info.exec_sites.is_empty() || grammar == Some(Grammar::Shell);
            let outer_runs = std::mem::replace(&mut self.runs_code, runs);
            let strings = self.ordered_below || RUNS_A_NAME.is_match(words);
            let outer_strings = std::mem::replace(&mut self.runs_strings, strings);
            self.lines(first_line, words, Place::Code);
            self.names = outer_names;
            self.runs_code = outer_runs;
            self.runs_strings = outer_strings;
            self.flows(words, first_line, text);
            self.keep_only_new(start, before);
        }
        // The same flows with the names relative to a home folder the code changes into written from the home
        // (`cd ~/.claude/skills && for f in */SKILL.md; do … >> "$f"`): only what that reading adds.
        if grammar == Some(Grammar::Shell) && info.code.contains("cd ") {
            let through: Vec<String> = info
                .code
                .lines()
                .map(|l| names::through_cd(l).unwrap_or_else(|| l.to_owned()))
                .collect();
            let through = through.join("\n");
            if through.trim_end() != info.code.trim_end() {
                let before = self.out.len();
                self.flows(&through, first_line, text);
                self.keep_only_new(start, before);
            }
        }
        // The lines after a comment that marks them as what not to do (`# ❌ Bad: hardcoded secret`, `# VULNERABLE:
        // mounting host paths`), up to a blank line or the next comment, are shown as bad examples, not run; so is
        // a whole block whose lead-in says it shows an attack. Only in documentation (a skill's scripts run whatever
        // their comments say), one step less, not silence (a label is cheap for a hostile skill to write), and not
        // when the prose after the block asks to run it.
        let docs = matches!(self.kind, FileKind::Markdown | FileKind::SkillMd) && !self.shown_then_asked;
        let bad = if docs {
            bad_example_lines(text, first_line, &info.comments)
        } else {
            HashSet::new()
        };
        let lead_in = self.described_block.clone().filter(|_| docs);
        for f in self.out[start..]
            .iter_mut()
            .filter(|f| docs && f.severity > Severity::Info)
        {
            if let Some(label) = &lead_in {
                f.severity = one_less(f.severity);
                f.message = format!(
                    "{SHOWN_AS_ATTACK} (after `{label}`): {}",
                    lowercase_first(&f.message)
                );
            } else if bad.contains(&f.line) {
                f.severity = one_less(f.severity);
                f.message = format!("{SHOWN_AS_BAD}: {}", lowercase_first(&f.message));
            }
        }
        for (line, comment) in &info.comments {
            if !comment.starts_with("#!") {
                self.lines(*line, comment, Place::Comment);
            }
        }
        for (line, callee) in &info.exec_sites {
            self.out.push(Finding {
                rule: "exec/call".to_owned(),
                severity: Severity::Medium,
                file: self.file.to_owned(),
                line: *line,
                evidence: visible(
                    text.lines()
                        .nth((line - first_line) as usize)
                        .unwrap_or(callee)
                        .trim(),
                    160,
                ),
                message: format!(
                    "Starts a program or evaluates code via `{}`.",
                    visible(callee, 60)
                ),
                context: FindingContext::Code,
            });
        }
        facts.add(self.file, info.exec_sites.len(), info.command_count);
        info.code
    }

    fn hidden_characters(&mut self, text: &str) {
        for (i, line) in text.lines().enumerate() {
            // Every invisible character and variation selector is outside ASCII.
            if line.is_ascii() {
                continue;
            }
            let chars: Vec<char> = line.chars().collect();
            // A joiner between two visible letters or symbols of other scripts shapes them (Persian `می‌خواهم`, the
            // emoji `👨‍👩‍👧`): it hides nothing.
            let shaping = |at: usize| {
                matches!(chars[at], '\u{200c}' | '\u{200d}')
                    && at > 0
                    && chars
                        .get(at + 1)
                        .is_some_and(|n| !n.is_ascii() && !is_hidden_char(*n))
                    && !chars[at - 1].is_ascii()
                    && !is_hidden_char(chars[at - 1])
            };
            let hidden: Vec<char> = (0..chars.len())
                .filter(|at| is_hidden_char(chars[*at]) && !shaping(*at))
                .map(|at| chars[at])
                .collect();
            // Bytes hidden in a run of variation selectors after a visible character ("emoji smuggling").
            let selectors = decode::variation_selector_text(&chars);
            // A lone byte-order mark at the very start of a file is harmless.
            if selectors.is_none()
                && (hidden.is_empty() || (i == 0 && hidden == ['\u{feff}'] && line.starts_with('\u{feff}')))
            {
                continue;
            }
            let tags: String = hidden
                .iter()
                .filter_map(|c| {
                    let v = *c as u32;
                    (0xE0020..=0xE007E)
                        .contains(&v)
                        .then(|| char::from_u32(v - 0xE0000))
                        .flatten()
                })
                .collect();
            // Two zero-width characters standing for the bits of a text (`\u{200b}` for 0, `\u{200c}` for 1).
            let tags = if !tags.is_empty() {
                tags
            } else if let Some(text) = selectors {
                text
            } else {
                decode::zero_width_bits(&hidden).unwrap_or_default()
            };
            // One zero-width character alone is a common way to show a fence inside a fence; bidi controls, tag
            // characters and runs of zero-width characters hide or reorder what the agent reads.
            let bidi = hidden
                .iter()
                .any(|c| matches!(*c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}'));
            let lone = tags.is_empty() && !bidi && hidden.len() == 1;
            let message = if lone {
                "One invisible (zero-width) character; alone it hides nothing, but check what it is for."
                    .to_owned()
            } else if tags.is_empty() {
                format!("{} invisible character(s) (zero-width or bidi controls) can hide or reorder text the agent reads.", hidden.len())
            } else {
                format!(
                    "Invisible characters (Unicode tags, variation selectors, or two zero-width characters as bits) spell out hidden text: \"{}\".",
                    visible(&tags, 120)
                )
            };
            self.out.push(Finding {
                rule: "prompt/hidden-text".to_owned(),
                severity: if lone { Severity::Low } else { Severity::High },
                file: self.file.to_owned(),
                line: u32::try_from(i + 1).unwrap_or(0),
                evidence: visible(line.trim(), 160),
                message,
                context: FindingContext::Instruction,
            });
            if !tags.is_empty() {
                self.line(u32::try_from(i + 1).unwrap_or(0), &tags, Place::Hidden, &[]);
            }
        }
    }
}

use Where as Place;

fn lowercase_first(text: &str) -> String {
    let mut chars = text.chars();
    match chars.next() {
        Some(c) => c.to_lowercase().chain(chars).collect(),
        None => String::new(),
    }
}

/// Whether the label right before a markdown code block says the block shows an attack or what not to do (`A reverse
/// shell usually looks like:`, `Attackers extract credentials via:`, `Never do this:`): what the planner lists as
/// an example rather than a step.
pub(crate) fn shows_an_attack(label: &str) -> bool {
    labels::describing_lead_in(label)
}

use airlock_types::{SHOWN_AS_ATTACK, SHOWN_AS_BAD};

/// Compiles the rules now (on any core), so that the first file scanned does not wait for them.
pub fn prepare() {
    LazyLock::force(&COMPILED);
}

/// The language given to a data file a script of the skill loads and runs commands beside
/// ([`crate::follow::loaded_and_run`]).
pub const LOADED_DATA: &str = "data a script loads";

re!(
    /// A line that runs what it decodes: an evaluation, a program started, a pipe into a shell.
    EXEC_SINK, r"(?i)\b(exec|eval|system|popen|call|run|check_output|execSync|exec_command|spawn|spawnSync|Function|iex|Invoke-Expression|runInThisContext|runInNewContext|runInContext)\s*\(|\|\s*(sudo\s+)?(ba|z|da)?sh\b|\|\s*(python3?|node|perl|ruby|iex)\b|\s-e(nc|ncodedcommand)?\s|\$\(|\b(ba)?sh\s+-c\b");

/// A file whose name says it is an example or a template (`api-store-example.ts`, `config.sample.py`).
fn is_example_name(path: &str) -> bool {
    let name = path.rsplit('/').next().unwrap_or(path).to_ascii_lowercase();
    let stem = name.split('.').next().unwrap_or(&name);
    stem.split(['-', '_'])
        .any(|w| matches!(w, "example" | "examples" | "sample" | "template"))
        || name
            .split('.')
            .any(|w| matches!(w, "example" | "sample" | "template"))
}

/// A severity one step higher.
fn one_more(severity: Severity) -> Severity {
    match severity {
        Severity::Info => Severity::Low,
        Severity::Low => Severity::Medium,
        Severity::Medium => Severity::High,
        Severity::High | Severity::Critical => Severity::Critical,
    }
}

/// A severity one step lower (information stays information).
fn one_less(severity: Severity) -> Severity {
    match severity {
        Severity::Critical => Severity::High,
        Severity::High => Severity::Medium,
        Severity::Medium | Severity::Low => Severity::Low,
        Severity::Info => Severity::Info,
    }
}

/// Sorts findings worst first, removes repeats of a rule on one line, and bounds each rule per file.
pub fn finish(findings: &mut Vec<Finding>) {
    findings.sort_by(|a, b| {
        b.severity
            .cmp(&a.severity)
            .then_with(|| a.file.cmp(&b.file))
            .then(a.line.cmp(&b.line))
            .then(a.rule.cmp(&b.rule))
    });
    let mut seen = HashSet::new();
    let mut per_rule: std::collections::HashMap<(String, String), usize> = std::collections::HashMap::new();
    findings.retain(|f| {
        if !seen.insert((f.rule.clone(), f.file.clone(), f.line)) {
            return false;
        }
        let count = per_rule.entry((f.rule.clone(), f.file.clone())).or_default();
        *count += 1;
        *count <= MAX_PER_RULE_AND_FILE
    });
}

#[cfg(test)]
mod flow_tests;
#[cfg(test)]
mod lesser_tests;
#[cfg(test)]
mod reach_tests;
#[cfg(test)]
mod tests;
