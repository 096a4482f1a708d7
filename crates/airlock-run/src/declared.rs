//! What the instructions and scripts declare about their environment in their own words: an install command in
//! SKILL.md (`pip install X`, `npm i -g X`, `uv pip install X`, `uvx X`), a script's inline metadata (PEP 723,
//! `# /// script`), and `uv run x.py`. The packages are installed in the sealed install phase like a requirements
//! file's, and the install command is listed as done there, not run again in the sandbox, where the network is off.

use std::path::Path;

use airlock_scan::skillmd::RuntimeInstall;
use airlock_types::Plan;

/// Why a plan's install command does not run in the sandbox when the install phase honours it.
pub const INSTALLED_BEFORE: &str = "installed before the run, in the sealed install phase";
/// Why it does not run when the install phase is off.
pub const NOT_INSTALLED: &str = "an install: the install phase is off (--no-install)";

/// The packages one install command declares.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Declared {
    /// Python requirement specifiers.
    pub python: Vec<String>,
    /// Requirements files, as paths inside the skill.
    pub requirements: Vec<String>,
    /// npm package specifiers.
    pub node: Vec<String>,
}

impl Declared {
    fn is_empty(&self) -> bool {
        self.python.is_empty() && self.requirements.is_empty() && self.node.is_empty()
    }

    pub(crate) fn extend(&mut self, other: Declared) {
        self.python.extend(other.python);
        self.requirements.extend(other.requirements);
        self.node.extend(other.node);
    }
}

/// A package name with an optional version range or extras, as a registry takes it (no URL, path, placeholder or
/// option).
fn package_spec(word: &str, node: bool) -> Option<String> {
    let w = word.trim_matches(['"', '\'']);
    let (name, rest) = if node {
        let at = w[1..].find('@').map_or(w.len(), |i| i + 1);
        (&w[..at], &w[at..])
    } else {
        let end = w.find(['[', '<', '>', '=', '!', '~']).unwrap_or(w.len());
        (&w[..end], &w[end..])
    };
    let name_ok = !name.is_empty()
        && name
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_alphanumeric() || node && c == '@')
        && name.chars().all(|c| {
            c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-') || node && matches!(c, '@' | '/')
        });
    let rest_ok = rest.chars().all(|c| {
        c.is_ascii_alphanumeric()
            || matches!(
                c,
                '.' | '_' | '-' | '[' | ']' | ',' | '<' | '>' | '=' | '!' | '~' | '*' | '^' | '@'
            )
    });
    (name_ok && rest_ok).then(|| w.to_owned())
}

/// The packages a single install command declares, when the install phase can honour all of it: packages from
/// the public registries, or a requirements file the skill ships. `None` for anything else (another index, a
/// local path, a URL, a placeholder, several commands joined), which stays a step of the plan.
pub fn parse(command: &str, skill_root: &Path) -> Option<Declared> {
    // A comment after the command (`pip install shap  # explanations`) is not part of it.
    let command = command.split_once(" #").map_or(command, |(code, _)| code).trim();
    if command.contains(['\n', ';', '|', '&', '$', '`', '#']) {
        return None;
    }
    let words: Vec<&str> = command.split_whitespace().collect();
    let words: &[&str] = match words.first() {
        Some(&"sudo") => &words[1..],
        _ => &words,
    };
    let (node, args): (bool, &[&str]) = match words {
        ["pip" | "pip3", "install", rest @ ..]
        | ["python" | "python3", "-m", "pip", "install", rest @ ..]
        | ["uv", "pip", "install", rest @ ..]
        | ["uv", "add", rest @ ..]
        | ["uv", "tool", "install", rest @ ..]
        | ["pipx", "install", rest @ ..] => (false, rest),
        ["npm", "i" | "install" | "add", rest @ ..]
        | ["pnpm", "add", rest @ ..]
        | ["yarn", "add", rest @ ..]
        | ["yarn", "global", "add", rest @ ..]
        | ["bun", "add" | "install" | "i", rest @ ..] => (true, rest),
        _ => return None,
    };
    let mut declared = Declared::default();
    let mut words = args.iter();
    while let Some(word) = words.next() {
        match *word {
            "-r" | "--requirement" if !node => {
                let file = words.next()?.trim_matches(['"', '\'']);
                let inside = !file.starts_with('/') && file.split('/').all(|c| c != "..");
                if !inside || !skill_root.join(file).is_file() {
                    return None;
                }
                declared.requirements.push(file.to_owned());
            }
            // Options that change nothing about what is installed from where.
            "-U"
            | "--upgrade"
            | "-q"
            | "--quiet"
            | "--user"
            | "--break-system-packages"
            | "--no-cache-dir"
            | "--system"
            | "-g"
            | "--global"
            | "-D"
            | "--save-dev"
            | "-S"
            | "--save"
            | "--save-exact"
            | "-E"
            | "--no-save"
            | "--silent" => {}
            w if w.starts_with('-') => return None,
            w => {
                let spec = package_spec(w, node)?;
                if node {
                    declared.node.push(spec);
                } else {
                    declared.python.push(spec);
                }
            }
        }
    }
    (!declared.is_empty()).then_some(declared)
}

/// Applies what the plan's commands declare: install commands the install phase honours are listed as installed
/// before the run (or as not run, with `--no-install`) and not run in the sandbox; `uv run x.py` becomes the
/// `python3` command it amounts to, said in the step's note. Returns the packages `uv run --with` names.
pub fn apply(plan: &mut Plan, skill_root: &Path, install: bool) -> Vec<String> {
    split_installs(plan, skill_root);
    let mut with = Vec::new();
    for step in plan.steps.iter_mut().filter(|s| s.example.is_none()) {
        if step.kind == "install" && parse(&step.command, skill_root).is_some() {
            step.example = Some(if install { INSTALLED_BEFORE } else { NOT_INSTALLED }.to_owned());
        } else if let Some((command, packages)) = uv_run(&step.command) {
            step.note = Some(format!(
                "`uv run` here is `python3`: the script's inline dependencies{} are installed before the run, sealed",
                if packages.is_empty() { String::new() } else { format!(" and {}", packages.join(", ")) }
            ));
            step.command = command;
            with.extend(packages);
        }
    }
    with
}

/// An install the install phase honours joined to what follows it (`pip install graphifyy && graphify --version`)
/// becomes two steps at the same line: the install, and the rest, which runs as a step of its own.
fn split_installs(plan: &mut Plan, skill_root: &Path) {
    let steps = std::mem::take(&mut plan.steps);
    for mut step in steps {
        // A check that installs only when it fails (`npm list -g pptxgenjs || npm install -g pptxgenjs`, `command
        // -v jq || pip install jq`): the install phase makes the package present, so the install is the step.
        let checked =
            (step.kind == "install" && step.example.is_none() && parse(&step.command, skill_root).is_none())
                .then(|| step.command.rsplit_once(" || "))
                .flatten()
                .filter(|(check, install)| {
                    !check.contains(['\n', ';', '&', '|', '`', '>']) && parse(install, skill_root).is_some()
                })
                .map(|(check, install)| (check.trim().to_owned(), install.trim().to_owned()));
        if let Some((check, install)) = checked {
            step.note = Some(format!(
                "the install after `{check} ||`: the check is answered by the install phase"
            ));
            step.command = install;
        }
        let split =
            (step.kind == "install" && step.example.is_none() && parse(&step.command, skill_root).is_none())
                .then(|| step.command.split_once(" && "))
                .flatten()
                .filter(|(head, rest)| !rest.trim().is_empty() && parse(head, skill_root).is_some());
        let Some((head, rest)) = split else {
            plan.steps.push(step);
            continue;
        };
        let (head, rest) = (head.trim().to_owned(), rest.trim().to_owned());
        let mut then = step.clone();
        then.kind = if airlock_scan::plan::install_manager(&rest).is_some() {
            "install"
        } else {
            "shell"
        }
        .into();
        then.note = Some(format!("what follows `{head}`, which is a step of its own"));
        then.command = rest;
        let mut first = step;
        first.command = head;
        plan.steps.push(first);
        plan.steps.push(then);
    }
}

/// Everything the plan's honoured install commands declare.
pub fn from_plan(plan: &Plan, skill_root: &Path) -> Declared {
    let mut all = Declared::default();
    for step in plan
        .steps
        .iter()
        .filter(|s| s.kind == "install" && s.example.as_deref() == Some(INSTALLED_BEFORE))
    {
        all.extend(parse(&step.command, skill_root).unwrap_or_default());
    }
    all
}

/// The packages the install entries of SKILL.md's OpenClaw metadata declare (`kind: node` and `kind: uv` with a
/// registry `package`), which the agent's runtime installs before the skill: installed in the sealed install phase
/// like an install command's. A download entry is never fetched: it stays the scan's finding.
pub fn from_runtime_metadata(skill_root: &Path) -> Declared {
    let mut all = Declared::default();
    let Ok(text) = fs_err::read_to_string(skill_root.join("SKILL.md")) else {
        return all;
    };
    let Some((yaml, _, _)) = airlock_scan::skillmd::split_frontmatter(&text) else {
        return all;
    };
    for (_, install) in airlock_scan::skillmd::runtime_installs(yaml) {
        match install {
            RuntimeInstall::Node(spec) => all.node.extend(package_spec(&spec, true)),
            RuntimeInstall::Uv(spec) => all.python.extend(package_spec(&spec, false)),
            RuntimeInstall::Download { .. } | RuntimeInstall::Go(_) | RuntimeInstall::Brew { .. } => {}
        }
    }
    all
}

/// The dependencies a Python script declares in its inline metadata (PEP 723): the `dependencies` list of the
/// `# /// script` block.
pub fn inline_dependencies(text: &str) -> Vec<String> {
    let mut block = String::new();
    let mut inside = false;
    for line in text.lines() {
        let t = line.trim_end();
        if !inside {
            inside = t == "# /// script";
            continue;
        }
        if t == "# ///" {
            return block
                .parse::<toml::Table>()
                .ok()
                .and_then(|t| t.get("dependencies")?.as_array().cloned())
                .unwrap_or_default()
                .iter()
                .filter_map(|d| d.as_str().map(str::to_owned))
                .collect();
        }
        let Some(content) = t.strip_prefix('#') else {
            return Vec::new();
        };
        block.push_str(content.strip_prefix(' ').unwrap_or(content));
        block.push('\n');
    }
    Vec::new()
}

/// The packages `uvx` (or `uv tool run`) starts tools from, wherever a line of `text` calls it (a step of the
/// plan, a script the skill ships): `uvx ruff check .` needs `ruff`, `uvx --from 'ddgs>=9' ddgs text q` needs
/// `ddgs>=9`, `uvx 'scrapling[shell]' install` needs `scrapling[shell]`, and each `--with X` needs `X`. The install
/// phase installs them before the run, sealed; in the sandbox, airlock's `uvx` starts the installed tool.
pub fn uvx_packages(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for line in text.lines() {
        let words: Vec<&str> = line.split_whitespace().collect();
        let mut i = 0;
        while i < words.len() {
            // The command may open a substitution (`out=$(uvx …`).
            let word = words[i].rsplit(['(', '`']).next().unwrap_or_default();
            let start = match (word, words.get(i + 1), words.get(i + 2)) {
                ("uvx", _, _) => Some(i + 1),
                ("uv", Some(&"tool"), Some(&"run")) => Some(i + 3),
                _ => None,
            };
            let Some(mut j) = start else {
                i += 1;
                continue;
            };
            let mut from = None;
            while j < words.len() {
                match words[j] {
                    "--from" => {
                        from = words.get(j + 1).and_then(|w| package_spec(w, false));
                        j += 2;
                    }
                    "--with" => {
                        out.extend(words.get(j + 1).and_then(|w| package_spec(w, false)));
                        j += 2;
                    }
                    "--python" | "-p" | "--index-url" | "--index" => j += 2,
                    w if w.starts_with('-') => j += 1,
                    _ => break,
                }
            }
            // `tool@1.2` is `tool==1.2`.
            let tool = words.get(j).map(|w| {
                let w = w.trim_matches(['"', '\'']);
                match w.split_once('@') {
                    Some((name, version)) if version != "latest" => format!("{name}=={version}"),
                    Some((name, _)) => name.to_owned(),
                    None => w.to_owned(),
                }
            });
            out.extend(from.or_else(|| tool.and_then(|t| package_spec(&t, false))));
            i = j + 1;
        }
    }
    out.sort();
    out.dedup();
    out
}

/// `uv run [options] x.py args` (or `uv run python x.py`): the same script run by the sandbox's `python3`, with
/// the packages of `--with` to install first. uv itself would build an environment from the network at that
/// moment; the install phase does that part before the run, sealed. `None` for any other command.
pub fn uv_run(command: &str) -> Option<(String, Vec<String>)> {
    // A here-document's body (`uv run --with x python3 << 'EOF'`) is the program's input, kept as it is.
    let (first, body) = command.split_once('\n').unwrap_or((command, ""));
    if !body.is_empty() && !first.contains("<<") {
        return None;
    }
    let rest = first.trim_start().strip_prefix("uv run ")?;
    let mut with = Vec::new();
    let mut words = rest.split_whitespace().peekable();
    while let Some(w) = words.peek().copied() {
        match w {
            "--with" => {
                words.next();
                with.push(package_spec(words.next()?, false)?);
            }
            "--python" | "-p" => {
                words.next();
                words.next();
            }
            "--script" | "--no-project" | "--isolated" | "-q" | "--quiet" | "--frozen" | "--locked" => {
                words.next();
            }
            w if w.starts_with('-') => return None,
            _ => break,
        }
    }
    let mut program: Vec<&str> = words.collect();
    let named_python = matches!(program.first(), Some(&("python" | "python3")));
    if named_python {
        program.remove(0);
    }
    let script = program.first().copied().unwrap_or_default();
    // A script, or python itself reading a here-document, standard input or `-c`.
    let stdin =
        named_python && (script.is_empty() || script.starts_with("<<") || script == "-" || script == "-c");
    if !stdin && !script.trim_matches(['"', '\'']).ends_with(".py") {
        return None;
    }
    let line = format!("python3 {}", program.join(" ")).trim_end().to_owned();
    Some((
        if body.is_empty() {
            line
        } else {
            format!("{line}\n{body}")
        },
        with,
    ))
}

/// The name of a Python requirement specifier (`erdantic>=1.0`, `x[extra]; python_version<"3.12"`, `y @ url`).
pub fn python_name(spec: &str) -> &str {
    spec.split(['<', '>', '=', '!', '~', '[', ';', ' ', '@'])
        .next()
        .unwrap_or_default()
}

/// The bare name of an npm package specifier (`@scope/name@1.2` gives `name`): the program it usually installs.
pub fn node_bin_name(spec: &str) -> &str {
    let bare = spec.rsplit('/').next().unwrap_or(spec);
    bare.split('@').next().unwrap_or(bare)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The runtime metadata's package entries are declared dependencies; its download entries are not.
    #[test]
    fn the_runtime_metadatas_packages_are_declared() {
        let dir = tempfile::tempdir().unwrap();
        fs_err::write(
            dir.path().join("SKILL.md"),
            "---\nname: t\ndescription: d\nmetadata:\n  openclaw:\n    install:\n      - kind: node\n        package: todoist-cli\n      - kind: uv\n        package: markitdown\n      - kind: download\n        url: https://x.example/t.tar.gz\n---\n# T\n",
        )
        .unwrap();
        let declared = from_runtime_metadata(dir.path());
        assert_eq!(declared.node, ["todoist-cli"]);
        assert_eq!(declared.python, ["markitdown"]);
        assert!(declared.requirements.is_empty());
    }

    #[test]
    fn the_packages_uvx_starts_tools_from() {
        assert_eq!(uvx_packages("uvx ruff check ."), ["ruff"]);
        assert_eq!(
            uvx_packages("out=$(uvx --from 'ddgs>=9' ddgs text \"$q\")\nuv tool run black@24.1 .\n"),
            ["black==24.1", "ddgs>=9"]
        );
        assert_eq!(
            uvx_packages("uvx --with httpx 'scrapling[shell]' install"),
            ["httpx", "scrapling[shell]"]
        );
        // Not a package: a variable, a URL, an option's value.
        assert!(uvx_packages("uvx \"$TOOL\" run").is_empty());
        assert!(uvx_packages("uvx git+https://github.com/a/b").is_empty());
        assert!(uvx_packages("echo use uv to install").is_empty());
    }

    #[test]
    fn install_commands_of_the_instructions() {
        let root = tempfile::tempdir().unwrap();
        fs_err::write(root.path().join("requirements.txt"), "pypdf\n").unwrap();
        let p = |c: &str| parse(c, root.path());
        assert_eq!(
            p("pip install pillow imageio numpy").unwrap().python,
            ["pillow", "imageio", "numpy"]
        );
        assert_eq!(
            p("pip3 install -U 'markitdown[pdf]' requests>=2.31")
                .unwrap()
                .python,
            ["markitdown[pdf]", "requests>=2.31"]
        );
        assert_eq!(
            p("python3 -m pip install -r requirements.txt")
                .unwrap()
                .requirements,
            ["requirements.txt"]
        );
        assert_eq!(
            p("npm install -g @mermaid-js/mermaid-cli@10").unwrap().node,
            ["@mermaid-js/mermaid-cli@10"]
        );
        assert_eq!(p("uv pip install --system pandas").unwrap().python, ["pandas"]);
        assert_eq!(
            p("pip install openpyxl pyarrow  # Excel and Parquet support")
                .unwrap()
                .python,
            ["openpyxl", "pyarrow"]
        );
        assert_eq!(
            p("bun add @tanstack/vue-table").unwrap().node,
            ["@tanstack/vue-table"]
        );
        for other in [
            "pip install <package>",
            "pip install -e .",
            "pip install --index-url https://x.example/simple evil",
            "pip install git+https://github.com/a/b",
            "pip install -r missing.txt",
            "pip install -r ../../etc/requirements.txt",
            "pip install x && rm -rf y",
            "npm install",
            "npm ci",
            "apt-get install -y jq",
            "pip install ./wheel.whl",
        ] {
            assert_eq!(p(other), None, "{other}");
        }
    }

    #[test]
    fn an_install_joined_to_what_follows_is_two_steps() {
        let root = tempfile::tempdir().unwrap();
        let step = |command: &str| airlock_types::PlanStep {
            kind: "install".into(),
            command: command.into(),
            interpreter: None,
            file: "SKILL.md".into(),
            line: 7,
            findings: Vec::new(),
            example: None,
            note: None,
            shown_arguments: None,
        };
        let mut plan = Plan {
            steps: vec![
                step("pip install graphifyy && graphify --version"),
                step("pip install x && rm -rf y && pip install z"),
                step("apt-get install -y jq && jq --version"),
                step("npm list -g pptxgenjs || npm install -g pptxgenjs"),
                step("test -f x || pip install y; rm z"),
            ],
            ..Plan::default()
        };
        apply(&mut plan, root.path(), true);
        let got: Vec<(&str, &str, Option<&str>)> = plan
            .steps
            .iter()
            .map(|s| (s.kind.as_str(), s.command.as_str(), s.example.as_deref()))
            .collect();
        assert_eq!(
            got,
            [
                ("install", "pip install graphifyy", Some(INSTALLED_BEFORE)),
                ("shell", "graphify --version", None),
                ("install", "pip install x", Some(INSTALLED_BEFORE)),
                ("install", "rm -rf y && pip install z", None),
                ("install", "apt-get install -y jq && jq --version", None),
                ("install", "npm install -g pptxgenjs", Some(INSTALLED_BEFORE)),
                ("install", "test -f x || pip install y; rm z", None),
            ]
        );
        assert_eq!(from_plan(&plan, root.path()).python, ["graphifyy", "x"]);
        assert_eq!(from_plan(&plan, root.path()).node, ["pptxgenjs"]);
        assert!(plan.steps[5]
            .note
            .as_deref()
            .is_some_and(|n| n.contains("npm list -g pptxgenjs")));
        assert!(plan.steps.iter().all(|s| s.line == 7));
    }

    #[test]
    fn inline_script_metadata() {
        let script = "#!/usr/bin/env python3\n# /// script\n# requires-python = \">=3.10\"\n# dependencies = [\n#   \"httpx\",\n#   \"rich>=13\",\n# ]\n# ///\nimport httpx\n";
        assert_eq!(inline_dependencies(script), ["httpx", "rich>=13"]);
        assert!(inline_dependencies("import os\n").is_empty());
        assert!(inline_dependencies("# /// script\n# dependencies = [\"x\"]\nprint(1)\n").is_empty());
    }

    #[test]
    fn uv_run_is_python_with_the_dependencies_installed_before() {
        assert_eq!(
            uv_run("uv run scripts/fetch.py --limit 3"),
            Some(("python3 scripts/fetch.py --limit 3".into(), vec![]))
        );
        assert_eq!(
            uv_run("uv run --with pandas python scripts/x.py"),
            Some(("python3 scripts/x.py".into(), vec!["pandas".into()]))
        );
        assert_eq!(
            uv_run("uv run --python 3.14 --with pymupdf python3 << 'EOF'\nimport fitz\nEOF"),
            Some((
                "python3 << 'EOF'\nimport fitz\nEOF".to_owned(),
                vec!["pymupdf".to_owned()]
            ))
        );
        assert_eq!(
            uv_run("uv run --with httpx python -c 'import httpx'").map(|(c, _)| c),
            Some("python3 -c 'import httpx'".to_owned())
        );
        assert_eq!(uv_run("uv run x.py\necho done"), None);
        assert_eq!(uv_run("uv run pytest"), None);
        assert_eq!(uv_run("uv run --env-file .env x.py"), None);
        assert_eq!(uv_run("python3 x.py"), None);
    }
}
