//! The skill's environment: what its scripts need (Python packages from requirements files and imports, programs
//! from its commands and metadata), installed before the run in a sealed install phase whose network reaches only
//! the package registries, and cached by a digest of its inputs as a read-only layer that later runs reuse.
//!
//! The install phase is a sandbox run like any other: `pip install --target /env/python` into a copy-on-write folder,
//! recorded (execs, network, installs), with its own limits. What it wrote becomes `envs/<digest>/` in the data
//! folder, mounted read-only at `/env` in the run, with `PYTHONPATH` pointing at it.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::LazyLock;
use std::time::{Duration, Instant};

use regex::Regex;

use airlock_sandbox::{Config, Mount};
use airlock_types::{Environment, Plan, ScanReport};

use crate::{OnEvent, RunError, RunEvent, SKILL_DIR};

/// Where the environment is mounted in the sandbox.
pub const ENV_DIR: &str = "/env";
/// Bumped when what the install phase does changes, so older caches are not reused.
const LAYOUT: &str = "env-v1";

/// How the install phase may run.
#[derive(Debug, Clone)]
pub struct EnvOptions {
    /// `false` with `--no-install`: nothing is installed, and nothing cached is used.
    pub install: bool,
    /// The Python package index (a mirror), instead of PyPI.
    pub pip_index_url: Option<String>,
    /// The npm registry (a mirror), instead of registry.npmjs.org.
    pub npm_registry: Option<String>,
    /// What the install phase may use: time, memory, disk.
    pub limits: InstallLimits,
    /// The registries installs may use (`pypi`, `npm`), when a policy names them; all when `None`.
    pub registries: Option<Vec<String>>,
    /// Use an environment installed before, never run the install phase (a detonation: nothing leaves the
    /// machine).
    pub cached_only: bool,
}

/// The install phase's own limits (a large dependency set, torch or chromadb, needs more than the defaults): a
/// setting of the machine that runs it, like the mirrors, not of the run request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct InstallLimits {
    pub timeout: Duration,
    pub memory_bytes: u64,
    pub disk_bytes: u64,
}

impl Default for InstallLimits {
    fn default() -> Self {
        Self {
            timeout: Duration::from_secs(300),
            memory_bytes: 1 << 30,
            disk_bytes: 2 << 30,
        }
    }
}

impl Default for EnvOptions {
    fn default() -> Self {
        Self {
            install: true,
            pip_index_url: None,
            npm_registry: None,
            limits: InstallLimits::default(),
            registries: None,
            cached_only: false,
        }
    }
}

/// Import names whose package on PyPI has another name.
const PACKAGE_NAMES: &[(&str, &str)] = &[
    ("PIL", "Pillow"),
    ("cv2", "opencv-python-headless"),
    ("yaml", "PyYAML"),
    ("docx", "python-docx"),
    ("pptx", "python-pptx"),
    ("bs4", "beautifulsoup4"),
    ("sklearn", "scikit-learn"),
    ("fitz", "PyMuPDF"),
    ("dateutil", "python-dateutil"),
    ("dotenv", "python-dotenv"),
    ("jwt", "PyJWT"),
    ("Crypto", "pycryptodome"),
    ("magic", "python-magic"),
    ("attr", "attrs"),
    ("google.protobuf", "protobuf"),
];

static IMPORT: LazyLock<Option<Regex>> = LazyLock::new(|| {
    Regex::new(r"(?m)^[ \t]*(?:from[ \t]+([A-Za-z_][\w.]*)[ \t]+import\b|import[ \t]+([A-Za-z_][\w.]*(?:[ \t]*,[ \t]*[A-Za-z_][\w.]*)*))")
        .ok()
});

/// How the install phase names the skill's own package in what it installed or failed to install.
pub const OWN_PACKAGE: &str = "the skill's own package (pyproject.toml)";

/// What the skill needs from its environment.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Needs {
    /// Requirements files, as paths inside the skill.
    pub requirements: Vec<String>,
    /// Python requirement specifiers from `pyproject.toml`'s `[project] dependencies`.
    pub python_specs: Vec<String>,
    /// npm packages (`name@range`) from the skill's `package.json` `dependencies`.
    pub node_specs: Vec<String>,
    /// Packages for the top-level modules its Python files import that it does not ship itself (standard modules
    /// and those already installed are sorted out inside the sandbox, by the interpreter that will run them).
    pub modules: Vec<(String, String)>,
    /// Programs its commands or metadata name that this machine does not have.
    pub missing_programs: Vec<String>,
    /// Of those, the ones on this machine outside the folders a sandbox sees, with where.
    pub outside_sandbox: std::collections::BTreeMap<String, String>,
    /// The skill is a Python package whose own command-line program a step runs: the install phase installs the
    /// skill itself (a copy of it, its `pyproject.toml` at its root). The skill's content digest, which names the
    /// layer with the rest of the inputs (its code is what is installed).
    pub own_package: Option<String>,
}

impl Needs {
    /// Adds Python requirement specifiers, once each.
    pub fn add_python(&mut self, specs: impl IntoIterator<Item = String>) {
        self.python_specs.extend(specs);
        self.python_specs.sort();
        self.python_specs.dedup();
    }

    fn is_empty(&self) -> bool {
        self.requirements.is_empty()
            && self.modules.is_empty()
            && self.python_specs.is_empty()
            && self.node_specs.is_empty()
            && self.own_package.is_none()
    }
}

/// Works out what the skill at `skill_root` needs: requirements files, imports of its Python files, and the
/// programs named by its runnable commands and by `requires.bins` in SKILL.md's metadata.
pub fn needs(skill_root: &Path, report: &ScanReport, plan: &Plan) -> Needs {
    let prefix = if report.source.subpath.is_empty() {
        String::new()
    } else {
        format!("{}/", report.source.subpath)
    };
    let files: Vec<&airlock_types::InventoryEntry> = report
        .inventory
        .files
        .iter()
        .filter(|f| f.path.starts_with(&prefix))
        .collect();
    let rel = |f: &airlock_types::InventoryEntry| f.path[prefix.len()..].to_owned();
    let mut needs = Needs::default();
    for f in &files {
        let name = f.path.rsplit('/').next().unwrap_or_default();
        let r = rel(f);
        if r.contains("node_modules/") || r.contains("/test") {
            continue;
        }
        if name.starts_with("requirements") && name.ends_with(".txt") {
            needs.requirements.push(r);
        } else if name == "pyproject.toml" {
            let deps = fs_err::read_to_string(skill_root.join(&r))
                .ok()
                .and_then(|t| t.parse::<toml::Table>().ok())
                .and_then(|t| t.get("project")?.get("dependencies")?.as_array().cloned())
                .unwrap_or_default();
            needs
                .python_specs
                .extend(deps.iter().filter_map(|d| d.as_str().map(str::to_owned)));
        } else if name == "package.json" {
            let deps = fs_err::read(skill_root.join(&r))
                .ok()
                .and_then(|b| serde_json::from_slice::<serde_json::Value>(&b).ok())
                .and_then(|v| v.get("dependencies")?.as_object().cloned())
                .unwrap_or_default();
            needs.node_specs.extend(deps.iter().filter_map(|(name, range)| {
                let range = range.as_str()?;
                // Only registry packages: not local paths, git URLs or tarballs.
                let plain = !range.contains([':', '/']) && !name.starts_with('.');
                plain.then(|| format!("{name}@{range}"))
            }));
        }
    }
    // What the instructions' install commands and the scripts' inline metadata declare.
    let mut declared = crate::declared::from_plan(plan, skill_root);
    // And what the skill's runtime metadata has the agent's runtime install before it runs.
    declared.extend(crate::declared::from_runtime_metadata(skill_root));
    needs.requirements.extend(declared.requirements);
    needs.requirements.sort();
    needs.requirements.dedup();
    needs.node_specs.extend(declared.node);
    needs.node_specs.sort();
    needs.node_specs.dedup();
    // Modules the skill ships itself (a `helpers.py` or a `helpers/` package anywhere in it).
    let local: BTreeSet<String> = files
        .iter()
        .flat_map(|f| {
            let r = rel(f);
            let mut names = vec![r
                .rsplit('/')
                .next()
                .unwrap_or_default()
                .trim_end_matches(".py")
                .to_owned()];
            names.extend(r.split('/').rev().skip(1).map(str::to_owned));
            names
        })
        .collect();
    let mut modules = BTreeSet::new();
    // Read once: the modules each Python file imports, and the dependencies it declares inline (PEP 723).
    let mut inline = Vec::new();
    for f in files.iter().filter(|f| f.language.as_deref() == Some("python")) {
        let Ok(text) = fs_err::read_to_string(skill_root.join(rel(f))) else {
            continue;
        };
        inline.extend(crate::declared::inline_dependencies(&text));
        let Some(re) = IMPORT.as_ref() else { break };
        for c in re.captures_iter(&text) {
            let names = c.get(1).or_else(|| c.get(2)).map_or("", |m| m.as_str());
            for name in names.split(',') {
                let top = name.trim().split('.').next().unwrap_or_default();
                if !top.is_empty() && !local.contains(top) && top != "__future__" {
                    modules.insert(top.to_owned());
                }
            }
        }
    }
    // Tools started with `uvx` by a step or by one of the skill's scripts.
    let mut uvx = Vec::new();
    for step in plan
        .steps
        .iter()
        .filter(|s| s.example.is_none() && s.kind != "script")
    {
        uvx.extend(crate::declared::uvx_packages(&step.command));
    }
    for f in files
        .iter()
        .filter(|f| matches!(f.language.as_deref(), Some("shell" | "python")))
    {
        if let Ok(text) = fs_err::read_to_string(skill_root.join(rel(f))) {
            uvx.extend(crate::declared::uvx_packages(&text));
        }
    }
    needs.add_python(declared.python.into_iter().chain(inline).chain(uvx));
    let standard = standard_modules();
    needs.modules = modules
        .into_iter()
        .filter(|m| !standard.contains(m))
        .map(|m| {
            let package = PACKAGE_NAMES
                .iter()
                .find(|(module, _)| *module == m)
                .map_or_else(|| m.clone(), |(_, p)| (*p).to_owned());
            (m, package)
        })
        .collect();
    let mut programs = BTreeSet::new();
    let own = airlock_scan::plan::own_programs(skill_root);
    for step in plan
        .steps
        .iter()
        .filter(|s| s.example.is_none() && s.kind != "script")
    {
        if let Some(program) = first_program(&step.command) {
            if own.contains(&program) {
                // The skill's own program: installed with the skill, not looked for on the machine.
                needs.own_package = Some(report.source.digest.clone());
            } else {
                programs.insert(program);
            }
        }
    }
    programs.extend(declared_bins(skill_root));
    for f in files.iter().filter(|f| {
        matches!(
            f.language.as_deref(),
            Some("python" | "javascript" | "typescript")
        )
    }) {
        if let Ok(text) = fs_err::read_to_string(skill_root.join(rel(f))) {
            programs.extend(started_programs(&text));
        }
    }
    // A program a package the install phase installs provides under its own name (`pip install erdantic` gives
    // `erdantic`): on the environment's path in the run, not looked for on the machine.
    let packaged: BTreeSet<&str> = needs
        .python_specs
        .iter()
        .map(|s| crate::declared::python_name(s))
        .chain(needs.node_specs.iter().map(|s| crate::declared::node_bin_name(s)))
        .collect();
    needs.missing_programs = programs
        .into_iter()
        .filter(|p| !on_this_machine(p) && !packaged.contains(p.as_str()))
        .collect();
    // Found on airlock's own PATH (a home folder, /opt, a version manager's shims): there, but not in a sandbox.
    let path = std::env::var_os("PATH").unwrap_or_default();
    for program in &needs.missing_programs {
        if let Some(at) = std::env::split_paths(&path)
            .map(|d| d.join(program))
            .find(|p| p.is_file())
        {
            needs
                .outside_sandbox
                .insert(program.clone(), at.display().to_string());
        }
    }
    needs
}

/// The standard library's top-level modules of the interpreter the sandbox runs (`/usr/bin/python3`, the host's
/// own, asked once): a skill that imports only these needs no install phase.
fn standard_modules() -> &'static BTreeSet<String> {
    static NAMES: std::sync::OnceLock<BTreeSet<String>> = std::sync::OnceLock::new();
    NAMES.get_or_init(|| {
        std::process::Command::new("/usr/bin/python3")
            .args([
                "-I",
                "-c",
                "import sys; print(' '.join(sorted(sys.stdlib_module_names)))",
            ])
            .stdin(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .output()
            .ok()
            .filter(|o| o.status.success())
            .map(|o| {
                String::from_utf8_lossy(&o.stdout)
                    .split_whitespace()
                    .map(str::to_owned)
                    .collect()
            })
            .unwrap_or_default()
    })
}

/// Programs a script starts by a literal name: `subprocess.run(["soffice", ...])`, `cmd = ["qpdf", ...]`,
/// `os.system("pdftotext ...")`, `execSync("magick ...")`, `spawn("ffmpeg", ...)`. A name looked up first
/// (`shutil.which`) or probed (`[name, "--version"]`) anywhere in the file is optional and not counted.
fn started_programs(text: &str) -> BTreeSet<String> {
    static STARTS: std::sync::LazyLock<Option<regex::Regex>> = std::sync::LazyLock::new(|| {
        regex::Regex::new(
            r#"(?m)(?:(?:subprocess\.(?:run|call|check_call|check_output|Popen)|os\.(?:system|popen))\(\s*\[?|\b(?:cmd|command)\s*=\s*\[|(?:^|child_process\.|[^.\w])(?:execSync|execFileSync|execFile|spawnSync|spawn)\(\s*\[?)\s*[rbf]?["'`]([A-Za-z][A-Za-z0-9_+-]*(?:\.[0-9]+)?)["'` ]"#,
        )
        .ok()
    });
    let Some(re) = STARTS.as_ref() else {
        return BTreeSet::new();
    };
    let mut started = BTreeSet::new();
    let mut optional = BTreeSet::new();
    for c in re.captures_iter(text) {
        let Some(m) = c.get(1) else { continue };
        // `[name, "--version"]` probes whether an optional program is there.
        let after = text.get(m.end()..).unwrap_or_default();
        if after.chars().take(24).collect::<String>().contains("--version") {
            optional.insert(m.as_str());
        } else {
            started.insert(m.as_str());
        }
    }
    // A program of another system, started only on it (`if sys.platform == "win32": run(["cmd", "/c", …])`): not one
    // the skill needs here.
    let branches = PLATFORM_CHECK.as_ref().is_some_and(|r| r.is_match(text));
    started
        .into_iter()
        .filter(|p| !(branches && OTHER_SYSTEMS.contains(p)))
        .filter(|p| {
            !optional.contains(p)
                && !text.contains(&format!("which(\"{p}\")"))
                && !text.contains(&format!("which('{p}')"))
                && !matches!(*p, "python" | "python3" | "node" | "bash" | "sh" | "git")
        })
        .map(str::to_owned)
        .collect()
}

/// Programs of Windows and macOS that a script starts only there, behind a check of the platform.
const OTHER_SYSTEMS: &[&str] = &[
    "cmd",
    "powershell",
    "explorer",
    "start",
    "wmic",
    "taskkill",
    "open",
    "osascript",
    "pbcopy",
    "pbpaste",
    "afplay",
    "say",
    "sw_vers",
    "launchctl",
];

/// A check of which system a script runs on.
static PLATFORM_CHECK: std::sync::LazyLock<Option<regex::Regex>> = std::sync::LazyLock::new(|| {
    regex::Regex::new(r"sys\.platform|platform\.system\(\)|os\.name\b|process\.platform|\bOSTYPE\b|\buname\b")
        .ok()
});

/// The program a command line starts: its first word, past variable assignments and `sudo`/`env`.
fn first_program(command: &str) -> Option<String> {
    const BUILTINS: &[&str] = &[
        "cd", "echo", "export", "set", "source", ".", "test", "[", "[[", "printf", "read", "exit", "true",
        "false", "if", "then", "fi", "for", "do", "done", "while", "case", "esac", "unset", "alias", "eval",
        "exec", "pwd", "{", "}", "(", "!", "time", "local", "return", "shift", "trap", "wait", "ulimit",
        "umask", "type", "command",
    ];
    let word = command
        .split_whitespace()
        .find(|w| !w.contains('=') && !matches!(*w, "sudo" | "env" | "nohup"))?;
    let word = word.trim_start_matches('(');
    // `X=1  # a comment`: an assignment, then a comment, starts no program.
    if word.is_empty()
        || word.starts_with('#')
        || word.contains('/')
        || word.contains(['$', '`', '"', '\'', '<', '>', '|', ';', '&'])
        || BUILTINS.contains(&word)
    {
        return None;
    }
    Some(word.to_owned())
}

/// Programs SKILL.md's metadata declares (`metadata: {requires: {bins: [...]}}`, as several registries write it).
fn declared_bins(skill_root: &Path) -> Vec<String> {
    let Ok(text) = fs_err::read_to_string(skill_root.join("SKILL.md")) else {
        return Vec::new();
    };
    let Some(yaml) = text
        .strip_prefix("---")
        .and_then(|rest| rest.split_once("\n---").map(|(y, _)| y))
    else {
        return Vec::new();
    };
    let Ok(doc) = serde_yaml::from_str::<serde_yaml::Value>(yaml) else {
        return Vec::new();
    };
    let bins = &doc["metadata"]["requires"]["bins"];
    bins.as_sequence()
        .map(|list| {
            list.iter()
                .filter_map(|b| b.as_str())
                .filter(|b| !b.is_empty() && !b.contains(['/', ' ']))
                .map(str::to_owned)
                .collect()
        })
        .unwrap_or_default()
}

/// Whether a program is in the system folders the sandbox sees.
pub(crate) fn on_this_machine(program: &str) -> bool {
    ["/usr/bin", "/bin", "/usr/sbin", "/sbin", "/usr/local/bin"]
        .iter()
        .any(|d| Path::new(d).join(program).exists())
        || airlock_sandbox::ALIASES
            .iter()
            .any(|(name, target)| *name == program && Path::new(target).exists())
        || airlock_sandbox::SHIMS.iter().any(|(name, _)| *name == program)
}

/// The digest of what the install phase gets: it names the cached layer.
fn digest(needs: &Needs, skill_root: &Path, options: &EnvOptions) -> String {
    use sha2::Digest as _;
    let mut h = sha2::Sha256::new();
    h.update(LAYOUT);
    for r in &needs.requirements {
        h.update(b"\0req\0");
        h.update(r);
        h.update(fs_err::read(skill_root.join(r)).unwrap_or_default());
    }
    for (m, p) in &needs.modules {
        h.update(format!("\0mod\0{m}={p}"));
    }
    for spec in &needs.python_specs {
        h.update(format!("\0spec\0{spec}"));
    }
    for spec in &needs.node_specs {
        h.update(format!("\0npm\0{spec}"));
    }
    if let Some(skill) = &needs.own_package {
        // The skill's own code is what is installed: its content digest names the layer.
        h.update(format!("\0own\0{skill}"));
    }
    h.update(format!(
        "\0registry\0{}",
        options.npm_registry.as_deref().unwrap_or("")
    ));
    h.update(format!(
        "\0index\0{}",
        options.pip_index_url.as_deref().unwrap_or("")
    ));
    // The interpreter the packages are installed for.
    let python = fs_err::canonicalize("/usr/bin/python3").unwrap_or_default();
    h.update(format!("\0python\0{}", python.display()));
    format!("{:x}", h.finalize())
}

/// The install phase's driver, run by the sandbox's `python3`: installs each requirements file, then the packages of
/// the imported modules the interpreter cannot find, together, or one at a time when that fails (one that does not
/// exist does not stop the others), into `/env/python`. Prints one JSON line with what it did.
const DRIVER: &str = r#"
import importlib.util, json, subprocess, sys
args = json.loads(sys.argv[1])
target = "/env/python"
sys.path.insert(0, target)
base = [sys.executable, "-m", "pip", "install", "--target", target, "--disable-pip-version-check", "--no-input",
        "--no-warn-script-location", "--progress-bar", "off", "--retries", "1", "--timeout", "20"]
if args["index"]:
    base += ["--index-url", args["index"]]
    if args["index"].startswith("http://"):
        # A plain-HTTP mirror the operator named; the egress proxy still checks every connection.
        base += ["--trusted-host", args["index"].split("/")[2].split(":")[0]]
done = {"requirements": [], "installed": [], "present": [], "failed": []}
def install(cmd, what):
    # A package manager stopped by a signal prints nothing of its own: say what stopped it.
    code = subprocess.run(cmd).returncode
    if code < 0:
        import signal
        name = signal.Signals(-code).name if -code in {s.value for s in signal.Signals} else str(-code)
        print(f"airlock: installing {what} was stopped by {name} (the install phase's memory, disk or time limit: raise them with --install-memory, --install-disk, --install-timeout)",
              file=sys.stderr)
    return code == 0
if args["own"]:
    # The skill's own package, from a copy (a build writes beside its sources, and /skill is read-only).
    import shutil, tempfile
    copy = tempfile.mkdtemp() + "/skill"
    shutil.copytree("/skill", copy, ignore=shutil.ignore_patterns(".git", "node_modules", ".venv"))
    ok = install(base + [copy], "the skill's own package")
    (done["installed"] if ok else done["failed"]).append(args["own"])
for req in args["requirements"]:
    ok = install(base + ["-r", "/skill/" + req], req)
    (done["requirements"] if ok else done["failed"]).append(req)
for spec in args["specs"]:
    ok = install(base + [spec], spec)
    (done["installed"] if ok else done["failed"]).append(spec)
if args["npm"]:
    npm = ["npm", "install", "--prefix", "/env/node", "--no-audit", "--no-fund", "--no-package-lock",
           "--cache", "/tmp/npm-cache", "--loglevel", "error"]
    if args["registry"]:
        npm += ["--registry", args["registry"]]
    ok = install(npm + args["npm"], " ".join(args["npm"]))
    (done["installed"] if ok else done["failed"]).extend("npm:" + s for s in args["npm"])
importlib.invalidate_caches()
wanted = []
for module, package in args["modules"]:
    if module in sys.stdlib_module_names or importlib.util.find_spec(module) is not None:
        done["present"].append(module)
    elif package not in wanted:
        wanted.append(package)
# All at once (one resolution, one start of pip); when that fails, one at a time so that a package that does not
# exist does not stop the others.
if len(wanted) > 1 and install(base + wanted, " ".join(wanted)):
    done["installed"].extend(wanted)
    wanted = []
for package in wanted:
    ok = install(base + [package], package)
    (done["installed"] if ok else done["failed"]).append(package)
print("airlock-env:" + json.dumps(done))
sys.exit(1 if done["failed"] else 0)
"#;

/// The folder a run mounts at [`ENV_DIR`]: a cached layer, or what an incomplete install phase managed to install,
/// which this run uses and nothing keeps (it is removed when this is dropped).
#[derive(Debug)]
pub struct Layer {
    path: PathBuf,
    _partial: Option<tempfile::TempDir>,
}

impl Layer {
    pub fn path(&self) -> &Path {
        &self.path
    }
}

/// Prepares the skill's environment for a run: reuses the cached layer for these inputs, or installs it in a sealed
/// install phase. Returns what the record says about it and the layer to mount (none when nothing was needed or
/// installed). An incomplete install is used for this run (the packages that did install) but never cached.
pub fn prepare(
    skill_root: &Path,
    needs: &Needs,
    options: &EnvOptions,
    egress: Option<&airlock_egress::EgressConfig>,
    data_dir: &Path,
    helper: Option<PathBuf>,
    on_event: &OnEvent,
) -> Result<(Environment, Option<Layer>), RunError> {
    // A policy that names registries leaves out what the others would install.
    let allowed;
    let needs = match &options.registries {
        Some(registries) => {
            let mut n = needs.clone();
            if !registries.iter().any(|r| r == "pypi") {
                n.requirements.clear();
                n.python_specs.clear();
                n.modules.clear();
                n.own_package = None;
            }
            if !registries.iter().any(|r| r == "npm") {
                n.node_specs.clear();
            }
            allowed = n;
            &allowed
        }
        None => needs,
    };
    let mut env = Environment {
        requirements: needs
            .requirements
            .iter()
            .chain(&needs.python_specs)
            .cloned()
            .chain(needs.node_specs.iter().map(|s| format!("npm:{s}")))
            .collect(),
        modules: needs.modules.iter().map(|(m, _)| m.clone()).collect(),
        missing_programs: needs.missing_programs.clone(),
        outside_sandbox: needs.outside_sandbox.clone(),
        ..Environment::default()
    };
    if needs.is_empty() {
        env.status = "nothing to install".into();
        return Ok((env, None));
    }
    // The operator's mirrors stand in for an index or registry the caller did not name.
    let mut options = options.clone();
    if let Some(policy) = egress.map(|e| &e.policy) {
        let url = |eco| policy.mirror(eco).map(|m| m.url.clone());
        options.pip_index_url = options
            .pip_index_url
            .or_else(|| url(airlock_egress::Ecosystem::Pypi));
        options.npm_registry = options
            .npm_registry
            .or_else(|| url(airlock_egress::Ecosystem::Npm));
    }
    let options = &options;
    if !options.install {
        env.status = "skipped (--no-install)".into();
        return Ok((env, None));
    }
    let digest = digest(needs, skill_root, options);
    env.digest = Some(digest.clone());
    let envs = data_dir.join("envs");
    let layer = envs.join(&digest);
    if layer.join(".airlock-env.json").is_file() {
        let saved: Environment =
            serde_json::from_slice(&fs_err::read(layer.join(".airlock-env.json"))?).unwrap_or_default();
        env.installed = saved.installed;
        env.present = saved.present;
        env.status = "reused".into();
        env.cached = true;
        return Ok((
            env,
            Some(Layer {
                path: layer,
                _partial: None,
            }),
        ));
    }
    if options.cached_only {
        env.status =
            "not installed: a detonation installs nothing, so nothing leaves the machine (an environment \
                      a run installed before is reused)"
                .into();
        return Ok((env, None));
    }
    let t0 = Instant::now();
    fs_err::create_dir_all(&envs)?;
    let work = tempfile::Builder::new().prefix(".install-").tempdir_in(&envs)?;
    let keep = work.path().join("keep");
    // What the sandbox mounts lives where its user can reach it (as root, the data folder may not be).
    let scratch = airlock_sandbox::scratch::scratch_dir("airlock-env-")?;
    let open = |p: &Path| std::fs::set_permissions(p, std::os::unix::fs::PermissionsExt::from_mode(0o755));
    open(scratch.path())?;
    let upper_src = scratch.path().join("env");
    fs_err::create_dir_all(&upper_src)?;
    open(&upper_src)?;
    let skill_src = if nix::unistd::geteuid().is_root() {
        std::os::unix::fs::lchown(
            &upper_src,
            Some(airlock_sandbox::ROOT_MODE_HOST_UID),
            Some(airlock_sandbox::ROOT_MODE_HOST_UID),
        )?;
        crate::target::copy_tree(skill_root, &scratch.path().join("skill"), None)?;
        scratch.path().join("skill")
    } else {
        skill_root.to_path_buf()
    };
    let args = serde_json::json!({
        "requirements": needs.requirements,
        "modules": needs.modules,
        "specs": needs.python_specs,
        "npm": needs.node_specs,
        "own": needs.own_package.as_ref().map(|_| OWN_PACKAGE),
        "index": options.pip_index_url,
        "registry": options.npm_registry,
    });
    let mut config = Config::new(vec![
        "/usr/bin/python3".into(),
        "-c".into(),
        DRIVER.into(),
        args.to_string(),
    ]);
    config.mounts.push(Mount::Rw {
        host: upper_src,
        sandbox: ENV_DIR.into(),
    });
    config.mounts.push(Mount::Ro {
        host: skill_src,
        sandbox: SKILL_DIR.into(),
    });
    config.workdir = Some(ENV_DIR.into());
    config.keep_changes = Some(keep.clone());
    config.limits.timeout = options.limits.timeout;
    config.limits.memory_bytes = options.limits.memory_bytes;
    config.limits.disk_bytes = options.limits.disk_bytes;
    // Network only to the package registries (and the index given), through the egress proxy; the run's own
    // name mappings and CAs apply.
    let mut e = egress.cloned().unwrap_or_default();
    e.sinkhole = None;
    e.policy.allow.clear();
    e.policy.presets.clear();
    e.secrets.clear();
    e.policy
        .add_preset("package-registries")
        .map_err(|err| RunError::Usage(err.to_string()))?;
    for (flag, url) in [
        ("--pip-index-url", &options.pip_index_url),
        ("--npm-registry", &options.npm_registry),
    ] {
        let Some(url) = url else { continue };
        let (scheme, rest) = url.split_once("://").unwrap_or(("https", url.as_str()));
        let authority = rest.split('/').next().unwrap_or_default();
        let with_port = if authority.contains(':') {
            authority.to_owned()
        } else {
            format!("{authority}:{}", if scheme == "http" { 80 } else { 443 })
        };
        let rule = airlock_egress::Rule::parse(&with_port)
            .map_err(|err| RunError::Usage(format!("{flag} {url}: {err}")))?;
        e.policy.allow.push(rule);
    }
    let forward = on_event.clone();
    e.events = Some(airlock_types::EventSink::new(move |event| {
        forward(RunEvent::Sandbox { event });
    }));
    config.egress = Some(e);
    let result = airlock_sandbox::run(&config, helper)?;
    env.duration_ms = u64::try_from(t0.elapsed().as_millis()).unwrap_or(u64::MAX);
    let report_line = result
        .stdout
        .lines()
        .rev()
        .find_map(|l| l.strip_prefix("airlock-env:"))
        .and_then(|j| serde_json::from_str::<serde_json::Value>(j).ok())
        .unwrap_or_default();
    let list = |k: &str| -> Vec<String> {
        report_line[k]
            .as_array()
            .map(|a| a.iter().filter_map(|v| v.as_str().map(str::to_owned)).collect())
            .unwrap_or_default()
    };
    env.installed = list("installed");
    env.installed
        .extend(list("requirements").into_iter().map(|r| format!("-r {r}")));
    env.present = list("present");
    env.failed = list("failed");
    env.installs = crate::verdict::installs(&result.timeline, &result.files_written);
    env.network = result.network;
    env.execs = result.timeline.len();
    env.exit_code = result.exit_code;
    let tail: Vec<&str> = result.stderr.lines().rev().take(8).collect();
    env.errors_tail = tail.into_iter().rev().map(str::to_owned).collect();
    // What the phase wrote under /env is the layer.
    let written = keep.join("0");
    if !written.is_dir() {
        fs_err::create_dir_all(&written)?;
    }
    env.status = if env.failed.is_empty() && result.status == airlock_types::RunStatus::Succeeded {
        if env.installed.is_empty() {
            "nothing to install (all present)".into()
        } else {
            "installed".into()
        }
    } else {
        format!(
            "incomplete: {}",
            if env.failed.is_empty() {
                airlock_types::wire_name(&result.status)
            } else {
                format!("could not install {}", env.failed.join(", "))
            }
        )
    };
    if env.failed.is_empty() && result.status == airlock_types::RunStatus::Succeeded {
        fs_err::write(
            written.join(".airlock-env.json"),
            serde_json::to_vec(&env).unwrap_or_default(),
        )?;
        // Another run may have made the same layer meanwhile: theirs is as good.
        if fs_err::rename(&written, &layer).is_err() && !layer.is_dir() {
            return Err(RunError::Io(std::io::Error::other(format!(
                "cannot keep the environment in {}",
                layer.display()
            ))));
        }
        return Ok((
            env,
            Some(Layer {
                path: layer,
                _partial: None,
            }),
        ));
    }
    // Not cached: this run uses what did install, and the record says what failed.
    if env.installed.is_empty() {
        return Ok((env, None));
    }
    let partial = tempfile::Builder::new().prefix(".partial-").tempdir_in(&envs)?;
    fs_err::rename(&written, partial.path().join("0"))?;
    Ok((
        env,
        Some(Layer {
            path: partial.path().join("0"),
            _partial: Some(partial),
        }),
    ))
}

/// The layer as the sandbox can mount it: the cached folder itself for an ordinary user; as root (whose data folder
/// the sandbox's mapped user may not reach) a copy in `scratch` made of hard links where the file system allows.
pub fn mountable(layer: &Path, scratch: &Path) -> std::io::Result<PathBuf> {
    if !nix::unistd::geteuid().is_root() {
        return Ok(layer.to_path_buf());
    }
    let to = scratch.join("env");
    link_tree(layer, &to)?;
    Ok(to)
}

fn link_tree(from: &Path, to: &Path) -> std::io::Result<()> {
    fs_err::create_dir_all(to)?;
    std::fs::set_permissions(to, std::os::unix::fs::PermissionsExt::from_mode(0o755))?;
    for entry in fs_err::read_dir(from)? {
        let entry = entry?;
        let (src, dst) = (entry.path(), to.join(entry.file_name()));
        let ft = entry.file_type()?;
        if ft.is_dir() {
            link_tree(&src, &dst)?;
        } else if ft.is_symlink() {
            std::os::unix::fs::symlink(fs_err::read_link(&src)?, &dst)?;
        } else if ft.is_file() && std::fs::hard_link(&src, &dst).is_err() {
            fs_err::copy(&src, &dst)?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    /// A package manager the install phase stops with a signal (its memory or disk limit) prints nothing itself:
    /// the driver says what stopped it, and that is what the summary shows.
    #[test]
    fn an_install_stopped_by_a_signal_says_so() {
        let head = &super::DRIVER[..super::DRIVER.find("if args[\"own\"]:").unwrap()];
        let program = format!("{head}print(install([\"sh\", \"-c\", \"kill -9 $$\"], \"chromadb\"))\n");
        let args = r#"{"index": null}"#;
        let out = std::process::Command::new("python3")
            .args(["-c", &program, args])
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            stderr.contains("installing chromadb was stopped by SIGKILL"),
            "{stderr}"
        );
        assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "False");
    }

    use super::started_programs;

    #[test]
    fn programs_a_script_starts_by_name() {
        let found = |text: &str| started_programs(text).into_iter().collect::<Vec<_>>();
        assert_eq!(
            found("subprocess.run(\n  [\n    \"soffice\", \"--headless\"])"),
            ["soffice"]
        );
        assert_eq!(found("os.system('pdftotext -layout a b')"), ["pdftotext"]);
        assert_eq!(found("cmd = [\"qpdf\", \"--check\", path]"), ["qpdf"]);
        assert_eq!(found("const out = execSync(`magick convert ${a}`);"), ["magick"]);
        assert_eq!(found("child_process.spawn('ffmpeg', args)"), ["ffmpeg"]);
        // Not programs: a string assigned to a name, a regular expression's exec, a lookup, an interpreter.
        assert!(found("command = \"Hello world\"").is_empty());
        assert!(found("const m = re.exec('abc');").is_empty());
        assert!(found("if shutil.which('gtimeout'):").is_empty());
        assert!(found(
            "subprocess.run([\"gtimeout\", \"--version\"])\nif mac:\n    cmd = [\"gtimeout\", \"5\"] + cmd"
        )
        .is_empty());
        assert!(found("if shutil.which('rg'):\n    subprocess.run(['rg', x])").is_empty());
        assert!(found("subprocess.run([\"python3\", \"x.py\"])").is_empty());
        // An argument list is not a program; another system's program behind a check of the platform is not needed.
        assert!(found("const args = ['check', '--no-fetch'];\nspawnSync(process.execPath, args)").is_empty());
        assert!(found(
            "if sys.platform == \"win32\":\n    subprocess.run([\"cmd\", \"/c\", \"start\", \"\", p])\nelse:\n    subprocess.run([\"xdg-open\", p])"
        ) == ["xdg-open"]);
        assert_eq!(found("subprocess.run([\"osascript\", \"-e\", s])"), ["osascript"]);
    }

    #[test]
    fn an_assignment_and_its_comment_start_no_program() {
        assert_eq!(
            super::first_program("SOCKET_DIR=${TMPDIR:-/tmp}/s  # well-known dir"),
            None
        );
        assert_eq!(super::first_program("X=1 tmux new -d"), Some("tmux".to_owned()));
    }
}
