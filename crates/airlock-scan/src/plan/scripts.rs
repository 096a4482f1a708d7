//! What a script the instructions name is for, read from its text and the skill's other files: a program to run
//! as it stands, a helper other scripts import or source, a module meant for `python -m`, or a program that needs
//! arguments the instructions do not give. Only the first runs on its own in a plain run; the others are listed
//! with why.

use std::path::Path;

use regex::Regex;

/// Folders of material a skill copies, adapts or reads (templates, assets, examples, reference documents, tests),
/// not programs a plain run starts.
const MATERIAL_DIRS: &[(&str, &str)] = &[
    ("templates", "a template"),
    ("template", "a template"),
    ("assets", "an asset"),
    ("examples", "an example"),
    ("example", "an example"),
    ("references", "a reference document"),
    ("reference", "a reference document"),
    ("docs", "documentation"),
    ("tests", "a test"),
    ("test", "a test"),
];

/// Why a file the instructions name is material rather than a program: it sits in a folder of templates, assets,
/// examples or tests.
pub(super) fn material(rel: &str) -> Option<String> {
    let dirs: Vec<&str> = rel.split('/').collect();
    // `template_module.py`, `module_template.py`, `x.template.js`: a file to copy and fill in, wherever it sits.
    let name = dirs.last().copied().unwrap_or(rel).to_ascii_lowercase();
    let stem = name.split('.').next().unwrap_or(&name);
    if stem.starts_with("template_") || stem.ends_with("_template") || name.contains(".template.") {
        return Some(format!(
            "a template (by its name): material the skill copies or adapts, not a program to start; try --script {rel}"
        ));
    }
    dirs[..dirs.len().saturating_sub(1)].iter().find_map(|d| {
        MATERIAL_DIRS.iter().find(|(name, _)| d == name).map(|(name, what)| {
            format!("{what} ({name}/): material the skill copies or adapts, not a program to start; try --script {rel}")
        })
    })
}

/// Why a script in a `hooks/` folder is not a step: the agent runs it on an event (`Stop`, `SessionStart`,
/// `PreToolUse`), with the event's JSON on its stdin, which a step has none of.
pub(super) fn hook(rel: &str) -> Option<String> {
    let dirs: Vec<&str> = rel.split('/').collect();
    dirs[..dirs.len().saturating_sub(1)]
        .iter()
        .any(|d| matches!(*d, "hooks" | "hook"))
        .then(|| {
            format!(
                "a hook (hooks/): the agent runs it on an event, with the event on its stdin, not a step to run on \
                 its own; try --script {rel}"
            )
        })
}

/// Why a script named by the instructions is not run on its own, if it is not.
pub(super) fn not_standalone(
    rel: &str,
    text: &str,
    language: Option<&str>,
    others: &[(String, String)],
) -> Option<String> {
    if let Some(by) = imported_by(rel, language, others) {
        return Some(format!(
            "a helper: {by} imports it; it runs when that script does"
        ));
    }
    if language == Some("batch") {
        return Some("a Windows batch file: it runs under cmd.exe on Windows, not in a Linux sandbox".into());
    }
    if language == Some("python") {
        if rel.ends_with("__init__.py") {
            return Some("a package's __init__.py, not a program".into());
        }
        if RELATIVE_IMPORT.is_match(text) {
            return Some(format!(
                "a module of a package (it imports relatively): run it with `python -m {}`",
                rel.trim_end_matches(".py").replace('/', ".")
            ));
        }
        if !MAIN_GUARD.is_match(text) && !top_level_statement(text) {
            return Some("a library: it defines functions and classes and runs nothing on its own".into());
        }
    }
    if matches!(language, Some("javascript" | "typescript")) && js_library(text) {
        return Some("a library: it exports functions for other code and runs nothing on its own".into());
    }
    if language == Some("javascript") {
        if let Some(line) = crate::code::top_level_return(text) {
            return Some(format!(
                "the body of a function a tool wraps and calls (it returns at line {line}, outside any function): \
                 an agent's workflow script, not a program node runs"
            ));
        }
    }
    needs_arguments(text, language).map(|(line, evidence)| {
        format!(
            "it needs arguments the instructions do not give (line {line}: `{evidence}`); try --script {rel} -- ARGS"
        )
    })
}

/// Whether Python text imports relatively (`from .core import x`): a module of a package.
pub(super) fn imports_relatively(text: &str) -> bool {
    RELATIVE_IMPORT.is_match(text)
}

re!(MAIN_GUARD, r#"(?m)^if\s+__name__\s*==\s*['"]__main__['"]"#);
re!(RELATIVE_IMPORT, r"(?m)^\s*from\s+\.+[\w.]*\s+import\b");

re!(CONSTANT, r"^[A-Za-z_][\w]*\s*(?::[^=]+)?=[^=]");

/// Whether Python text does something at top level besides defining and importing (a script without a main guard).
fn top_level_statement(text: &str) -> bool {
    let mut in_string: Option<&str> = None;
    for line in text.lines() {
        let t = line.trim_end();
        if let Some(q) = in_string {
            if t.contains(q) {
                in_string = None;
            }
            continue;
        }
        if t.is_empty() || t.starts_with([' ', '\t', '#', ')', ']', '}']) {
            continue;
        }
        for q in ["\"\"\"", "'''"] {
            if t.contains(q) && t.matches(q).count() % 2 == 1 {
                in_string = Some(q);
            }
        }
        let first = t
            .split(|c: char| !c.is_alphanumeric() && c != '_')
            .next()
            .unwrap_or_default();
        let declarative = matches!(
            first,
            "def" | "class" | "import" | "from" | "async" | "try" | "except" | "finally" | "else" | "elif" | ""
        ) || t.starts_with('@')
            || t.starts_with("\"\"\"")
            || t.starts_with("'''")
            // A module-level constant (`NAME = ...`, `NAME: T = ...`) or the `if TYPE_CHECKING` of imports.
            || CONSTANT.is_match(t)
            || t.starts_with("if TYPE_CHECKING")
            || t.starts_with("__all__");
        if !declarative {
            return true;
        }
    }
    false
}

/// The first of the skill's other files that imports (Python, JavaScript) or sources (shell) this one.
fn imported_by(rel: &str, language: Option<&str>, others: &[(String, String)]) -> Option<String> {
    let re = import_of(rel, language)?;
    others
        .iter()
        .filter(|(path, _)| path != rel && !is_test(path))
        .find(|(_, text)| re.is_match(text))
        .map(|(path, _)| path.clone())
}

re!(
    /// A span of inline code: `` `validate-bounds.py -t conductor_temp -v 85` ``.
    INLINE_CODE,
    r"`([^`\n]+)`"
);

/// Where the instructions show this script run with arguments in inline code (a usage table's
/// `` `validate-bounds.py -t conductor_temp -v 85` ``, `` `python3 scripts/convert.py 25 C K` ``): the line and the
/// arguments. The script is named by its path in the skill or its file name, after an optional interpreter.
pub(super) fn usage_shown(rel: &str, body: &str, first_line: u32) -> Option<(u32, String)> {
    let file = rel.rsplit('/').next().unwrap_or(rel);
    for (i, line) in body.lines().enumerate() {
        for c in INLINE_CODE.captures_iter(line) {
            let mut words = c[1].split_whitespace().peekable();
            // The programs that start it, however many (`uv run python scripts/x.py`).
            while words.peek().is_some_and(|w| {
                matches!(
                    *w,
                    "python" | "python3" | "bash" | "sh" | "node" | "uv" | "npx" | "ruby" | "perl" | "run"
                )
            }) {
                words.next();
            }
            let Some(program) = words.next() else {
                continue;
            };
            let program = program.trim_start_matches("./");
            if program != rel && program != file && !program.ends_with(&format!("/{rel}")) {
                continue;
            }
            let args: Vec<&str> = words.collect();
            if !args.is_empty() {
                return Some((first_line + u32::try_from(i).unwrap_or(0), args.join(" ")));
            }
        }
    }
    None
}

/// The line of the instructions (SKILL.md's body, lines counted from `first_line`) whose code imports this script
/// (`from monte_carlo import simulate` in a Python block): the script is a module that code runs, not a program.
pub(super) fn imported_by_instructions(
    rel: &str,
    language: Option<&str>,
    body: &str,
    first_line: u32,
) -> Option<u32> {
    let re = import_of(rel, language)?;
    let at = re.find(body)?.start();
    Some(first_line + u32::try_from(body[..at].matches('\n').count()).unwrap_or(0))
}

/// How code imports (Python, JavaScript) or sources (shell) the script `rel`.
fn import_of(rel: &str, language: Option<&str>) -> Option<Regex> {
    let file = rel.rsplit('/').next().unwrap_or(rel);
    let (stem, _) = file.rsplit_once('.').unwrap_or((file, ""));
    if stem.is_empty() {
        return None;
    }
    let s = regex::escape(stem);
    let pattern = match language? {
        "python" => format!(
            r"(?m)^\s*(?:from\s+(?:[\w.]*\.)?{s}\s+import\b|import\s+(?:[\w.]*\.)?{s}\b|from\s+[\w.]+\s+import\s+(?:\(\s*)?(?:[\w\s,]*,\s*)?{s}\b)"
        ),
        "shell" => format!(
            r#"(?m)^\s*(?:source|\.)\s+[^;\n]*\b{}["']?(?:\s|;|$)"#,
            regex::escape(file)
        ),
        "javascript" | "typescript" => {
            format!(
                r#"(?:require\(\s*|\bfrom\s+|import\(\s*)["'][./]+(?:[\w./-]*/)?{s}(?:\.[cm]?[jt]s)?["']"#
            )
        }
        _ => return None,
    };
    Regex::new(&pattern).ok()
}

/// A test file: its imports of the skill's scripts do not make them helpers.
fn is_test(path: &str) -> bool {
    let name = path.rsplit('/').next().unwrap_or(path);
    name.starts_with("test_") || name.contains(".test.") || name.contains(".spec.") || path.contains("tests/")
}

re!(
    PY_POSITIONAL,
    r#"add_argument\(\s*["']([A-Za-z_][\w-]*)["']\s*(?:,|\))"#
);
re!(PY_ARGV, r"sys\.argv\[\s*[1-9]\s*\]");
re!(
    PY_ARGC,
    r"len\(\s*(?:sys\.)?argv\s*\)\s*(?:(?:<|!=|<=)\s*[2-9]|==\s*1\b)|\bnot\s+sys\.argv\[\s*1\s*:\s*\]"
);
// Options checked by hand: `if not args.handles and not args.import_:` then an error or an exit within a few lines.
re!(
    PY_OPTIONS_CHECKED,
    r"(?m)^[ \t]*if[ \t]+not[ \t]+(?:args|opts|options)\.\w+(?:[ \t]+(?:and|or)[ \t]+not[ \t]+(?:args|opts|options)\.\w+)*[ \t]*:[ \t]*\n(?:[^\n]*\n){0,3}?[^\n]*(?:\b(?:parser|p|ap|argparser)\.error|sys\.exit\([^0)]|exit\(1\)|return[ \t]+1\b)"
);
// An argparse option (or group, or subcommand) the parser insists on.
re!(PY_REQUIRED, r"\brequired\s*=\s*True\b");
re!(CLICK_ARGUMENT, r"@click\.argument\(");
re!(
    SH_ARG,
    r#"\$(?:1|\{1\})(?:[^\d:-]|$)|\$\{1:\?|"?\$#"?\s*-(?:lt|eq)\s*[0-9]|\(\(\s*\$?#\s*(?:==\s*0|<\s*[1-9])\s*\)\)|\[\s*-z\s+"?\$(?:1|\{1\})"?\s*\]"#
);
re!(
    /// The first argument read into a name with an empty default: `FEATURE_NAME="${1:-}"`.
    SH_EMPTY_DEFAULT, r#"(?m)^(?:readonly\s+)?([A-Za-z_]\w*)="?\$\{1:?-\}"?\s*$"#);
re!(SH_FUNCTION, r"^\s*(?:function\s+[\w:-]+|[\w:-]+\s*\(\s*\))");
re!(
    /// A read of the command line's arguments in bundled code (`process.argv.slice(2)`, `argv.slice(2)` of an
    /// imported `process`).
    BUNDLE_ARGV, r"\bargv\.slice\(\s*2\s*\)");
re!(JS_ARGV, r"process\.argv\[\s*[2-9]\s*\](?:\s*[^|?\s]|\s*$)");
re!(
    JS_ARGC,
    r"(?:process\.argv|args)\.length\s*(?:(?:<|!==|<=)\s*[1-9]|===?\s*0\b)|process\.argv\.length\s*===?\s*2\b|!\s*(?:process\.)?args?\.length\b"
);

re!(
    JS_EXPORTS,
    r"(?m)^\s*(?:module\.exports\b|exports\.\w+\s*=|export\s+(?:default|async|function|const|class|\{))"
);
re!(
    JS_TOP_LEVEL_CALL,
    r"(?m)^(?:await\s+|void\s+)?[A-Za-z_$][\w$.]*\s*\([^)]*\)\s*(?:\.(?:then|catch)\b|;|$)|^\(async|^\s*if\s*\(\s*require\.main\s*===|import\.meta\.(?:url|main)|process\.argv"
);

/// A JavaScript or TypeScript file that exports what it defines and starts nothing itself: no call at the top
/// level, no `require.main === module` or `import.meta` check, no read of its arguments.
fn js_library(text: &str) -> bool {
    JS_EXPORTS.is_match(text)
        && !JS_TOP_LEVEL_CALL.find_iter(text).any(|m| {
            !m.as_str().trim_start().starts_with("require(") && !m.as_str().starts_with("module.exports")
        })
}

/// Where the script shows it needs arguments: a required positional argument, a read of the first argument, a
/// check of the argument count.
fn needs_arguments(text: &str, language: Option<&str>) -> Option<(usize, String)> {
    let patterns: &[&Regex] = match language? {
        "python" => &[&PY_ARGC, &PY_ARGV, &CLICK_ARGUMENT],
        "shell" => &[&SH_ARG],
        "javascript" | "typescript" => &[&JS_ARGC, &JS_ARGV],
        _ => return None,
    };
    // A bundled program (minified: one line of thousands of characters) that reads its command line is a CLI whose
    // subcommands and operands its instructions give: its argument checks are behind names the bundler mangled.
    if matches!(language, Some("javascript" | "typescript")) {
        if let Some((i, _)) = text
            .lines()
            .enumerate()
            .find(|(_, l)| l.len() > 5000 && BUNDLE_ARGV.is_match(l))
        {
            return Some((
                i + 1,
                "a bundled program that reads its command line (process.argv)".to_owned(),
            ));
        }
    }
    // A shell function's `$1` is the function's argument, not the script's.
    let mut function_depth = 0usize;
    for (i, line) in text.lines().enumerate() {
        let code = line.split(" #").next().unwrap_or(line);
        if code.trim_start().starts_with(['#', '/']) {
            continue;
        }
        if language == Some("shell") {
            let opens = code.matches('{').count() - code.matches("${").count();
            let closes = code
                .matches('}')
                .count()
                .saturating_sub(code.matches("${").count());
            if function_depth == 0 && SH_FUNCTION.is_match(code) {
                function_depth = opens.max(1);
                function_depth = function_depth.saturating_sub(closes);
                continue;
            }
            if function_depth > 0 {
                function_depth = (function_depth + opens).saturating_sub(closes);
                continue;
            }
        }
        if language == Some("python") {
            if PY_REQUIRED.is_match(code) && text.contains("argparse") {
                return Some((i + 1, code.trim().chars().take(80).collect()));
            }
            // A positional argparse argument is required unless it says otherwise.
            if let Some(c) = PY_POSITIONAL.captures(code) {
                let optional = ["nargs=\"?\"", "nargs='?'", "nargs=\"*\"", "nargs='*'", "default="]
                    .iter()
                    .any(|o| code.contains(o));
                if !optional && c.get(1).is_some() {
                    return Some((i + 1, code.trim().chars().take(80).collect()));
                }
            }
        }
        if patterns.iter().any(|p| p.is_match(code)) {
            return Some((i + 1, code.trim().chars().take(80).collect()));
        }
    }
    // The first argument read with an empty default and then required (`NAME="${1:-}"`, then `if [[ -z "$NAME" ]]`
    // and an exit).
    if language == Some("shell") {
        for c in SH_EMPTY_DEFAULT.captures_iter(text) {
            let name = &c[1];
            let tested = [
                format!("-z \"${name}\""),
                format!("-z \"${{{name}}}\""),
                format!("-z ${name}"),
            ];
            if tested.iter().any(|t| text.contains(t.as_str())) {
                let line = text[..c.get(0).map_or(0, |m| m.start())].matches('\n').count() + 1;
                return Some((line, c[0].trim().chars().take(80).collect()));
            }
        }
    }
    if language == Some("python") {
        if let Some(m) = PY_OPTIONS_CHECKED.find(text) {
            let line = text[..m.start()].matches('\n').count() + 1;
            let first = m.as_str().lines().next().unwrap_or_default();
            return Some((line, first.trim().chars().take(80).collect()));
        }
    }
    None
}

/// The text of the skill's scripts (and other code) that may import or source one another, as (path inside the
/// skill, text), bounded in size.
pub(super) fn code_files(
    tree_root: &Path,
    prefix: &str,
    inventory: &[airlock_types::InventoryEntry],
) -> Vec<(String, String)> {
    inventory
        .iter()
        .filter(|f| f.path.starts_with(prefix) && f.size <= 512 * 1024)
        .filter(|f| {
            matches!(
                f.language.as_deref(),
                Some("python" | "shell" | "javascript" | "typescript")
            )
        })
        .filter_map(|f| {
            let text = fs_err::read_to_string(tree_root.join(&f.path)).ok()?;
            Some((f.path[prefix.len()..].to_owned(), text))
        })
        .collect()
}

re!(
    /// A line of a setup script that installs what the skill's manifests declare (`npm install --production`,
    /// `pip install -r requirements.txt`, `uv sync`): what the install phase does from the same manifests.
    MANIFEST_INSTALL,
    r"^(?:npm\s+(?:install|i|ci)(?:\s+--?(?:production|omit=dev|no-audit|no-fund|silent|quiet|prefer-offline))*|(?:pnpm|yarn|bun)(?:\s+install)?(?:\s+--?[\w=-]+)*|(?:python3?\s+-m\s+)?pip3?\s+install\s+(?:-q\s+)?-r\s+\S*requirements[\w.-]*\.txt|uv\s+sync(?:\s+--?[\w=-]+)*)$"
);

/// Whether a setup script only installs what the skill's manifests declare (and moves about or prints while it
/// does): the install phase installs the same, with the registries it may reach, so the script is not run again.
pub(super) fn only_installs(text: &str) -> bool {
    let mut installs = false;
    for line in text.lines().map(str::trim) {
        if line.is_empty()
            || line.starts_with('#')
            || line.starts_with("set ")
            || line.starts_with("cd ")
            || line.starts_with("echo ")
        {
            continue;
        }
        if !MANIFEST_INSTALL.is_match(line) {
            return false;
        }
        installs = true;
    }
    installs
}

#[cfg(test)]
mod tests {
    use super::*;

    fn others(files: &[(&str, &str)]) -> Vec<(String, String)> {
        files
            .iter()
            .map(|(p, t)| ((*p).to_owned(), (*t).to_owned()))
            .collect()
    }

    #[test]
    fn a_helper_another_script_imports_is_not_run_alone() {
        let skill = others(&[
            (
                "scripts/recalc.py",
                "from office.soffice import get_soffice_env\n",
            ),
            (
                "scripts/office/soffice.py",
                "def get_soffice_env():\n    pass\nif __name__ == '__main__':\n    main()\n",
            ),
            ("scripts/lib.sh", "say() { echo hi; }\n"),
            (
                "scripts/go.sh",
                "#!/bin/bash\nsource \"$(dirname \"$0\")/lib.sh\"\nsay\n",
            ),
            ("scripts/util.js", "module.exports = {}\n"),
            ("scripts/main.js", "const u = require('./util');\n"),
        ]);
        let why = not_standalone("scripts/office/soffice.py", &skill[1].1, Some("python"), &skill);
        assert!(why.unwrap().contains("scripts/recalc.py imports it"));
        assert!(not_standalone("scripts/lib.sh", &skill[2].1, Some("shell"), &skill).is_some());
        assert!(not_standalone("scripts/util.js", &skill[4].1, Some("javascript"), &skill).is_some());
        // The importers themselves run.
        assert_eq!(
            not_standalone(
                "scripts/recalc.py",
                "from office.soffice import x\nx()\n",
                Some("python"),
                &skill
            ),
            None
        );
        assert_eq!(
            not_standalone("scripts/go.sh", &skill[3].1, Some("shell"), &skill),
            None
        );
    }

    /// A workflow script that returns outside any function is a body a tool wraps; returns inside functions, a
    /// class or an arrow function are a program's.
    #[test]
    fn a_script_that_returns_at_top_level_is_a_tools_body() {
        let body = "let opts = args || {};\nif (!opts.text) {\n  throw new Error('needs args');\n}\nconst out = run(opts);\nif (out.done) {\n  return { revisedText: out.text };\n}\n";
        assert!(
            not_standalone("workflows/humanize.js", body, Some("javascript"), &[])
                .is_some_and(|w| w.contains("returns at line 7"))
        );
        let program = "function main() {\n  if (!globalThis.ready) { return 1; }\n  const f = () => { return 2; };\n  class A { m() { return 3; } }\n  console.log(f());\n}\nmain();\n";
        assert_eq!(
            not_standalone("scripts/main.js", program, Some("javascript"), &[]),
            None
        );
    }

    #[test]
    fn javascript_libraries_are_not_programs() {
        let lib = "const { chromium } = require('playwright');\nconst path = require('path');\n\nasync function html2pptx(file, pres) {\n  return 1;\n}\n\nmodule.exports = html2pptx;\n";
        assert!(
            not_standalone("scripts/html2pptx.js", lib, Some("javascript"), &[])
                .is_some_and(|w| w.contains("a library"))
        );
        let esm = "export function render(x) {\n  return x;\n}\nexport default render;\n";
        assert!(js_library(esm));
        for program in [
            "async function main() {}\nmain();\nmodule.exports = main;\n",
            "function main() {}\nif (require.main === module) {\n  main();\n}\nmodule.exports = { main };\n",
            "export async function run() {}\nawait run();\n",
            "export const x = 1;\nconsole.log(process.argv[2]);\n",
            "const fs = require('fs');\nconsole.log(fs.readdirSync('.'));\n",
        ] {
            assert!(!js_library(program), "{program}");
        }
    }

    #[test]
    fn templates_by_name_are_material() {
        for rel in [
            "scripts/template_lightning_module.py",
            "scripts/datamodule_template.py",
            "scripts/app.template.js",
        ] {
            assert!(material(rel).is_some_and(|w| w.contains("a template")), "{rel}");
        }
        for rel in [
            "scripts/render_templates.py",
            "scripts/templater.py",
            "scripts/run.py",
        ] {
            assert_eq!(material(rel), None, "{rel}");
        }
    }

    #[test]
    fn libraries_modules_and_programs_that_need_arguments() {
        let lib = "\"\"\"Helpers.\"\"\"\nimport os\n\nLIMIT = 3\n\ndef f():\n    return os.getcwd()\n";
        assert!(not_standalone("scripts/h.py", lib, Some("python"), &[])
            .unwrap()
            .contains("a library"));
        let module = "from .core import run\n\nrun()\n";
        assert!(not_standalone("scripts/pkg/cli.py", module, Some("python"), &[])
            .unwrap()
            .contains("python -m scripts.pkg.cli"));
        for (text, lang) in [
            (
                "import argparse\np = argparse.ArgumentParser()\np.add_argument(\"input\")\n",
                "python",
            ),
            (
                "import sys\npath = sys.argv[1]\nprint(open(path).read())\n",
                "python",
            ),
            (
                "import sys\nif len(sys.argv) < 2:\n    sys.exit('usage')\n",
                "python",
            ),
            ("#!/bin/bash\nset -e\nfile=$1\ncat \"$file\"\n", "shell"),
            ("#!/bin/bash\n: \"${1:?usage: go.sh FILE}\"\n", "shell"),
            (
                "const file = process.argv[2];\nconsole.log(file);\n",
                "javascript",
            ),
            (
                "import argparse\np = argparse.ArgumentParser()\np.add_argument(\n    '--prompt',\n    required=True,\n)\n",
                "python",
            ),
            (
                "import sys\nif len(sys.argv) == 1:\n    print('usage: inspect.py <deck.pptx>')\n    sys.exit(1)\n",
                "python",
            ),
            (
                "import sys\ndef main(argv):\n    if len(argv) != 2:\n        return 2\nraise SystemExit(main(sys.argv))\n",
                "python",
            ),
            ("#!/bin/bash\nif [ \"$#\" -eq 0 ]; then\n  echo usage; exit 1\nfi\n", "shell"),
            ("#!/bin/bash\nif (( $# == 0 )); then echo usage; exit 1; fi\n", "shell"),
            (
                "const args = process.argv.slice(2);\nif (args.length === 0) { usage(); }\n",
                "javascript",
            ),
            (
                "import argparse, sys\np = argparse.ArgumentParser()\np.add_argument('--handles')\np.add_argument('--import', dest='import_')\nargs = p.parse_args()\nif not args.handles and not args.import_:\n    print('Error: provide --handles or --import')\n    sys.exit(1)\n",
                "python",
            ),
            // The parser's error under another name (`p.error`), and a first argument read with an empty default,
            // then required.
            (
                "import argparse, sys\np = argparse.ArgumentParser()\np.add_argument('--tune')\nargs = p.parse_args()\nif not args.tune or not args.instrument:\n    p.error('use --tune')\n",
                "python",
            ),
            (
                "#!/usr/bin/env bash\nset -euo pipefail\nFEATURE_NAME=\"${1:-}\"\nif [[ -z \"$FEATURE_NAME\" ]]; then\n    echo \"Error: FEATURE_NAME is required\"\n    exit 1\nfi\n",
                "shell",
            ),
        ] {
            let why = not_standalone("scripts/x", text, Some(lang), &[]);
            assert!(
                why.as_deref().is_some_and(|w| w.contains("needs arguments")),
                "{text}"
            );
        }
        for (text, lang) in [
            ("import argparse\np = argparse.ArgumentParser()\np.add_argument('--input')\np.add_argument('out', nargs='?')\np.parse_args()\n", "python"),
            ("import argparse\np = argparse.ArgumentParser()\np.add_argument('--v', required=False)\np.parse_args()\n", "python"),
            ("import argparse\np = argparse.ArgumentParser()\np.add_argument('--out')\nargs = p.parse_args()\nif not args.out:\n    args.out = 'report.md'\n", "python"),
            ("print('hello')\n", "python"),
            ("import sys\nmain(sys.argv[1:])\n", "python"),
            ("#!/bin/bash\nname=${1:-world}\necho \"hi $name\"\n", "shell"),
            // An empty default that is only used when given, or a function's own first argument.
            ("#!/bin/bash\nFILTER=\"${1:-}\"\nls | grep \"$FILTER\"\n", "shell"),
            ("#!/bin/bash\nf() {\n  local name=\"${1:-}\"\n  [ -z \"$name\" ] && return 1\n}\nf x\n", "shell"),
            ("#!/bin/bash\nlog() {\n  echo \"[x] $1\"\n}\nfunction warn {\n  if true; then\n    echo \"$1\"\n  fi\n}\nlog start\n", "shell"),
            ("const file = process.argv[2] || 'in.txt';\n", "javascript"),
        ] {
            assert_eq!(not_standalone("scripts/x", text, Some(lang), &[]), None, "{text}");
        }
        // A bundled CLI (one minified line) that reads its command line needs the arguments its instructions give;
        // the same read in readable code is judged by what it does with them.
        let bundle = format!(
            "{}async function qR(D=S7.argv.slice(2)){{let F=DR({{args:[...D]}});}}\n",
            "var a=1;".repeat(800)
        );
        let why = not_standalone("scripts/cli.mjs", &bundle, Some("javascript"), &[]);
        assert!(
            why.as_deref().is_some_and(|w| w.contains("needs arguments")),
            "{why:?}"
        );
        let readable = "const args = process.argv.slice(2);\nmain(args);\n";
        assert_eq!(
            not_standalone("scripts/cli.mjs", readable, Some("javascript"), &[]),
            None
        );
    }
}
