//! The skill's environment: a requirements file installed in the sealed install phase from a package index on
//! loopback (reached through the egress proxy with `--connect-to`), reused from the cache on the next run, skipped
//! with `--no-install`.

use std::net::TcpListener;
use std::path::Path;
use std::process::{Child, Command, Stdio};

use super::util::{airlock, skill_md, write};

/// A package index with one pure-Python wheel, `greetlib`, served over HTTP on loopback until dropped.
pub(super) struct Index {
    child: Child,
    pub(super) port: u16,
}

impl Drop for Index {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Index {
    /// The `run` flags that make the install phase use this index, reached as `pypi.test` through the proxy.
    fn run_flags(&self) -> Vec<String> {
        [
            "--allow-net",
            "pypi.test:80",
            "--connect-to",
            &format!("pypi.test:80=127.0.0.1:{}", self.port),
            "--pip-index-url",
            "http://pypi.test/simple/",
        ]
        .map(str::to_owned)
        .to_vec()
    }

    /// `airlock run ARGS…` with this index's flags after them.
    fn run(&self, data: &Path, args: &[&str]) -> super::util::Run {
        let flags = self.run_flags();
        let mut all: Vec<&str> = args.to_vec();
        all.extend(flags.iter().map(String::as_str));
        airlock(data, &all)
    }
}

pub(super) fn index(root: &Path) -> Index {
    publish(
        root,
        "greetlib",
        &[(
            "greetlib/__init__.py",
            "def greet():\n    return 'hello from greetlib'\n",
        )],
        None,
    );
    serve(&root.join("index"))
}

/// Writes a pure-Python wheel `NAME-1.0` with `files` (and a console script `NAME = NAME:main` when `script` is
/// given) into the loopback index under `root`, with its page in the simple index.
fn publish(root: &Path, name: &str, files: &[(&str, &str)], script: Option<&str>) {
    let dir = root.join("index/files");
    fs_err::create_dir_all(&dir).unwrap();
    let wheel = format!("{name}-1.0-py3-none-any.whl");
    let mut entries: Vec<(String, String)> = files
        .iter()
        .map(|(p, t)| ((*p).to_owned(), (*t).to_owned()))
        .collect();
    let info = format!("{name}-1.0.dist-info");
    entries.push((
        format!("{info}/METADATA"),
        format!("Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n"),
    ));
    entries.push((
        format!("{info}/WHEEL"),
        "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n".to_owned(),
    ));
    if let Some(script) = script {
        entries.push((
            format!("{info}/entry_points.txt"),
            format!("[console_scripts]\n{script}\n"),
        ));
    }
    let build = r#"
import sys, json, zipfile, hashlib, base64
path, info, files = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
record = []
with zipfile.ZipFile(path, "w") as z:
    for name, text in files:
        data = text.encode()
        z.writestr(name, data)
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        record.append(f"{name},sha256={digest},{len(data)}")
    record.append(info + "/RECORD,,")
    z.writestr(info + "/RECORD", "\n".join(record) + "\n")
"#;
    let ok = Command::new("python3")
        .args(["-c", build])
        .arg(dir.join(&wheel))
        .arg(&info)
        .arg(serde_json::to_string(&entries).unwrap())
        .status()
        .unwrap();
    assert!(ok.success());
    write(
        &root.join("index"),
        &format!("simple/{name}/index.html"),
        &format!("<html><body><a href=\"../../files/{wheel}\">{wheel}</a></body></html>\n"),
    );
}

/// Serves a folder over HTTP on loopback until dropped.
fn serve(dir: &Path) -> Index {
    let port = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let child = Command::new("python3")
        .args(["-m", "http.server", "--bind", "127.0.0.1", &port.to_string()])
        .current_dir(dir)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    for _ in 0..100 {
        if std::net::TcpStream::connect(("127.0.0.1", port)).is_ok() {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    Index { child, port }
}

/// A skill whose script needs `greetlib` from its `requirements.txt`.
fn greeter(root: &Path) -> std::path::PathBuf {
    let skill = root.join("greeter");
    write(
        &skill,
        "SKILL.md",
        &skill_md("greeter", "Greets.\n\nRun `python3 scripts/hello.py`.\n"),
    );
    write(&skill, "requirements.txt", "greetlib==1.0\n");
    write(
        &skill,
        "scripts/hello.py",
        "import greetlib\nprint(greetlib.greet())\n",
    );
    skill
}

#[test]
fn the_install_phases_limits_are_the_users_to_raise() {
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("data");
    let idx = index(tmp.path());
    let skill = greeter(tmp.path());
    let mut args = vec![
        "run",
        "--json",
        skill.to_str().unwrap(),
        "--script",
        "scripts/hello.py",
    ];
    let flags = idx.run_flags();
    args.extend(flags.iter().map(String::as_str));
    args.extend_from_slice(&["--install-memory", "24M"]);
    let cut = airlock(&data, &args);
    let rec = cut.json();
    let status = rec["environment"]["status"].as_str().unwrap_or_default();
    assert!(
        status.starts_with("incomplete"),
        "{:#}\n{}",
        rec["environment"],
        cut.stderr
    );
    let reason = rec["status_reason"].as_str().unwrap_or_default();
    assert!(
        reason.contains("--install-memory"),
        "{reason}\n{:#}",
        rec["environment"]
    );
}

#[test]
fn a_skills_requirements_are_installed_sealed_then_reused_from_the_cache() {
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("data");
    let idx = index(tmp.path());
    let skill = greeter(tmp.path());
    let flags = idx.run_flags();
    let run = |extra: &[&str]| {
        let mut args = vec![
            "run",
            "--json",
            skill.to_str().unwrap(),
            "--script",
            "scripts/hello.py",
        ];
        args.extend(flags.iter().map(String::as_str));
        args.extend_from_slice(extra);
        airlock(&data, &args)
    };
    let first = run(&[]);
    let rec = first.json();
    let env = &rec["environment"];
    assert_eq!(env["status"], "installed", "{env:#}\n{}", first.stderr);
    assert_eq!(rec["status"], "succeeded", "{rec:#}");
    assert!(rec["stdout"].as_str().unwrap().contains("hello from greetlib"));
    assert!(
        env["installed"].to_string().contains("-r requirements.txt"),
        "{env:#}"
    );
    // The install phase is recorded: pip ran, and reached the index through the proxy.
    assert!(
        env["installs"]
            .as_array()
            .unwrap()
            .iter()
            .any(|i| i["manager"] == "pip"),
        "{env:#}"
    );
    assert!(
        env["network"]
            .as_array()
            .unwrap()
            .iter()
            .any(|n| n["decision"] == "allowed" && n["host"] == "pypi.test"),
        "{env:#}"
    );
    // The package is not in the run's own changes or installs: it came from the read-only layer.
    assert!(rec["installs"].as_array().unwrap().is_empty(), "{rec:#}");
    assert_eq!(first.code, 0);

    // The second run reuses the cached layer: no install phase.
    let second = run(&[]).json();
    assert_eq!(
        second["environment"]["status"], "reused",
        "{:#}",
        second["environment"]
    );
    assert_eq!(second["environment"]["cached"], true);
    assert!(second["environment"]["network"].as_array().unwrap().is_empty());
    assert_eq!(second["status"], "succeeded");

    // --no-install: nothing installed, the import fails, and the summary says why.
    let r = airlock(
        &data,
        &[
            "run",
            skill.to_str().unwrap(),
            "--script",
            "scripts/hello.py",
            "--no-install",
        ],
    );
    assert_eq!(r.code, 1, "{}", r.stdout);
    assert!(r.stdout.contains("skipped (--no-install)"), "{}", r.stdout);
    assert!(
        r.stdout.contains("the Python module `greetlib` is not installed"),
        "{}",
        r.stdout
    );

    // An index the egress proxy refuses (its name does not resolve): the summary says why the install failed,
    // and `show --net` lists the install phase's attempts.
    let fresh = tmp.path().join("fresh");
    let index_url = "http://index.invalid/simple/";
    let r = airlock(
        &fresh,
        &[
            "run",
            skill.to_str().unwrap(),
            "--script",
            "scripts/hello.py",
            "--pip-index-url",
            index_url,
        ],
    );
    assert_eq!(r.code, 1, "{}", r.stdout);
    assert!(
        r.stdout.contains("network refused: ") && r.stdout.contains("index.invalid"),
        "{}",
        r.stdout
    );
    let id = r.stdout.split_whitespace().nth(1).unwrap().to_owned();
    let net = airlock(&fresh, &["show", &id, "--net"]);
    assert!(
        net.stdout.contains("install denied") && net.stdout.contains("index.invalid:80"),
        "{}",
        net.stdout
    );
}

/// Imported packages go to pip together; when one of them does not exist, the others are still installed.
#[test]
fn one_missing_package_does_not_stop_the_others() {
    let tmp = tempfile::tempdir().unwrap();
    let idx = index(tmp.path());
    let skill = tmp.path().join("two");
    write(
        &skill,
        "SKILL.md",
        &skill_md("two", "Run `python3 scripts/two.py`.\n"),
    );
    write(
        &skill,
        "scripts/two.py",
        "import greetlib\ntry:\n    import airlocknosuchpackage\nexcept ImportError:\n    pass\nprint(greetlib.greet())\n",
    );
    let mut args = vec![
        "run",
        "--json",
        skill.to_str().unwrap(),
        "--script",
        "scripts/two.py",
    ];
    let flags = idx.run_flags();
    args.extend(flags.iter().map(String::as_str));
    let r = airlock(&tmp.path().join("data"), &args);
    let rec = r.json();
    let env = &rec["environment"];
    assert_eq!(env["installed"], serde_json::json!(["greetlib"]), "{env:#}");
    assert_eq!(
        env["failed"],
        serde_json::json!(["airlocknosuchpackage"]),
        "{env:#}"
    );
    assert!(
        env["status"].as_str().unwrap().starts_with("incomplete"),
        "{env:#}"
    );
    assert_eq!(rec["status"], "succeeded", "{rec:#}");
    assert!(rec["stdout"].as_str().unwrap().contains("hello from greetlib"));
}

/// An npm registry on loopback with one package, `greet-node`: its packument and tarball as static files.
pub(super) fn npm_registry(root: &Path) -> Index {
    let reg = root.join("registry");
    write(
        &reg,
        "pkg/package/package.json",
        "{\"name\":\"greet-node\",\"version\":\"1.0.0\",\"main\":\"index.js\"}\n",
    );
    write(
        &reg,
        "pkg/package/index.js",
        "module.exports = () => 'hello from greet-node';\n",
    );
    let ok = Command::new("tar")
        .args(["czf", "../greet-node-1.0.0.tgz", "package"])
        .current_dir(reg.join("pkg"))
        .status()
        .unwrap();
    assert!(ok.success());
    let packument = r#"
import base64, hashlib, json, sys
reg = sys.argv[1]
data = open(f"{reg}/greet-node-1.0.0.tgz", "rb").read()
dist = {"tarball": "http://npm.test/greet-node-1.0.0.tgz",
        "integrity": "sha512-" + base64.b64encode(hashlib.sha512(data).digest()).decode(),
        "shasum": hashlib.sha1(data).hexdigest()}
doc = {"name": "greet-node", "dist-tags": {"latest": "1.0.0"},
       "versions": {"1.0.0": {"name": "greet-node", "version": "1.0.0", "main": "index.js", "dist": dist}}}
open(f"{reg}/greet-node", "w").write(json.dumps(doc))
"#;
    let ok = Command::new("python3")
        .args(["-c", packument])
        .arg(&reg)
        .status()
        .unwrap();
    assert!(ok.success());
    serve(&reg)
}

#[test]
fn a_skills_npm_dependencies_are_installed_and_node_runs_under_the_memory_limit() {
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("data");
    let reg = npm_registry(tmp.path());
    let skill = tmp.path().join("noder");
    write(
        &skill,
        "SKILL.md",
        &skill_md("noder", "Greets.\n\nRun `node scripts/hello.js`.\n"),
    );
    write(
        &skill,
        "package.json",
        "{\"name\":\"noder\",\"dependencies\":{\"greet-node\":\"^1.0.0\"}}\n",
    );
    write(
        &skill,
        "scripts/hello.js",
        "console.log(require('greet-node')())\n",
    );
    let connect = format!("npm.test:80=127.0.0.1:{}", reg.port);
    let run_script = |script: &str| {
        let args = [
            "run",
            "--json",
            skill.to_str().unwrap(),
            "--script",
            script,
            "--allow-net",
            "npm.test:80",
            "--connect-to",
            &connect,
            "--npm-registry",
            "http://npm.test/",
        ];
        let rec = airlock(&data, &args).json();
        assert_eq!(rec["status"], "succeeded", "{rec:#}");
        assert!(
            rec["stdout"].as_str().unwrap().contains("hello from greet-node"),
            "{rec:#}"
        );
        rec
    };
    let rec = run_script("scripts/hello.js");
    assert_eq!(
        rec["environment"]["status"], "installed",
        "{:#}",
        rec["environment"]
    );
    // An ES module's `import` finds the same packages (it does not read NODE_PATH).
    write(
        &skill,
        "scripts/hello.mjs",
        "import greet from 'greet-node';\nconsole.log(greet());\n",
    );
    run_script("scripts/hello.mjs");
}

/// A PEP 517 build backend that lives in the skill (`backend-path`), so the skill's own package builds with no
/// index at all: a wheel with the package and its console script `greet`.
const IN_TREE_BACKEND: &str = r#"
import base64, hashlib, os, zipfile
def get_requires_for_build_wheel(config_settings=None):
    return []
def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    name = "greetcli-1.0-py3-none-any.whl"
    files = {
        "greetcli/__init__.py": open("greetcli/__init__.py").read(),
        "greetcli-1.0.dist-info/METADATA": "Metadata-Version: 2.1\nName: greetcli\nVersion: 1.0\n",
        "greetcli-1.0.dist-info/WHEEL": "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
        "greetcli-1.0.dist-info/entry_points.txt": "[console_scripts]\ngreet = greetcli:main\n",
    }
    record = []
    with zipfile.ZipFile(os.path.join(wheel_directory, name), "w") as z:
        for n, t in files.items():
            d = t.encode()
            z.writestr(n, d)
            h = base64.urlsafe_b64encode(hashlib.sha256(d).digest()).rstrip(b"=").decode()
            record.append(f"{n},sha256={h},{len(d)}")
        record.append("greetcli-1.0.dist-info/RECORD,,")
        z.writestr("greetcli-1.0.dist-info/RECORD", "\n".join(record) + "\n")
    return name
"#;

/// A skill that is a Python package with a command-line program of its own, which SKILL.md calls in list items of
/// inline code: the run installs the skill (a copy of it) in the sealed install phase, runs the items that stand as
/// they are, and lists the one with a placeholder.
#[test]
fn a_skills_own_program_is_installed_with_it_and_its_commands_run() {
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("data");
    let idx = index(tmp.path());
    let skill = tmp.path().join("greet-cli");
    write(
        &skill,
        "SKILL.md",
        &skill_md(
            "greet-cli",
            "A safe wrapper for the `greet` CLI.\n\nExample invocations:\n\n- `greet --name world`\n- `greet --name <YOUR_NAME>`\n",
        ),
    );
    write(
        &skill,
        "pyproject.toml",
        "[build-system]\nrequires = []\nbuild-backend = \"backend\"\nbackend-path = [\"_build\"]\n\n[project]\nname = \"greetcli\"\nversion = \"1.0\"\n\n[project.scripts]\ngreet = \"greetcli:main\"\n",
    );
    write(&skill, "_build/backend.py", IN_TREE_BACKEND);
    write(
        &skill,
        "greetcli/__init__.py",
        "import sys\ndef main():\n    print('hello ' + sys.argv[sys.argv.index('--name') + 1] + ' from greet')\n",
    );
    let r = idx.run(&data, &["run", "--json", skill.to_str().unwrap()]);
    let rec = r.json();
    let env = &rec["environment"];
    assert_eq!(env["status"], "installed", "{env:#}\n{}", r.stderr);
    assert!(
        env["installed"].to_string().contains("the skill's own package"),
        "{env:#}"
    );
    assert_eq!(rec["status"], "succeeded", "{rec:#}");
    assert!(
        rec["stdout"].as_str().unwrap().contains("hello world from greet"),
        "{rec:#}"
    );
    let steps = rec["plan"]["steps"].as_array().unwrap();
    let placeholder = steps
        .iter()
        .find(|s| s["command"].as_str().unwrap().contains("YOUR_NAME"))
        .unwrap();
    assert!(
        placeholder["example"].as_str().unwrap().contains("placeholder"),
        "{placeholder:#}"
    );
    // The program is the skill's, not one missing from the machine.
    assert!(!env["missing_programs"].to_string().contains("greet"), "{env:#}");

    // A package that cannot be installed here (it wants another Python): the summary says the install is the
    // cause, and why pip refused it.
    write(
        &skill,
        "_build/backend.py",
        &IN_TREE_BACKEND.replace(
            "Version: 1.0\\n\",",
            "Version: 1.0\\nRequires-Python: >=3.99\\n\",",
        ),
    );
    let r = idx.run(&data, &["run", skill.to_str().unwrap()]);
    assert_ne!(r.code, 0, "{}", r.stdout);
    assert!(
        r.stdout
            .contains("`greet` is the skill's own program, and its package could not be installed"),
        "{}",
        r.stdout
    );
    assert!(r.stdout.contains("requires a different Python"), "{}", r.stdout);
}

/// Adds to the loopback index a wheel `greettool` whose console script `greettool` prints a greeting.
fn add_tool_wheel(root: &Path) {
    publish(
        root,
        "greettool",
        &[(
            "greettool/__init__.py",
            "import sys\ndef main():\n    print('hello ' + ' '.join(sys.argv[1:]) + ' from greettool')\n",
        )],
        Some("greettool = greettool:main"),
    );
}

/// `uvx TOOL` in a step and inside a script the skill ships: the tool is installed before the run, sealed, and
/// airlock's `uvx` starts it in the sandbox; with the install phase off, `uvx` says why the tool is missing.
#[test]
fn tools_started_with_uvx_are_installed_before_the_run() {
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("data");
    let idx = index(tmp.path());
    add_tool_wheel(tmp.path());
    let skill = tmp.path().join("uvx-user");
    write(
        &skill,
        "SKILL.md",
        &skill_md(
            "uvx-user",
            "Greets.\n\n```bash\nuvx greettool from-a-step\nbash scripts/hello.sh from-a-script\n```\n",
        ),
    );
    write(
        &skill,
        "scripts/hello.sh",
        "#!/bin/bash\nout=$(uvx --from greettool greettool \"$1\")\necho \"$out\"\nuv sync --quiet && uv run greettool via-uv-run\n",
    );
    let r = idx.run(&data, &["run", "--json", skill.to_str().unwrap()]);
    let rec = r.json();
    let env = &rec["environment"];
    assert!(
        env["installed"].to_string().contains("greettool"),
        "{env:#}\n{}",
        r.stderr
    );
    assert_eq!(rec["status"], "succeeded", "{rec:#}");
    let stdout = rec["stdout"].as_str().unwrap();
    assert!(stdout.contains("hello from-a-step from greettool"), "{stdout}");
    assert!(stdout.contains("hello from-a-script from greettool"), "{stdout}");
    // `uv sync` has nothing left to do; `uv run TOOL` starts the installed tool.
    assert!(stdout.contains("hello via-uv-run from greettool"), "{stdout}");
    assert!(!env["missing_programs"].to_string().contains("uvx"), "{env:#}");

    let r = airlock(
        &tmp.path().join("fresh"),
        &["run", "--json", skill.to_str().unwrap(), "--no-install"],
    );
    let rec = r.json();
    assert_eq!(rec["status"], "failed", "{rec:#}");
    let text = rec.to_string();
    assert!(text.contains("is not installed in this sandbox"), "{text}");
}
