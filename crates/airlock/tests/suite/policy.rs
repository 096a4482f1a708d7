//! Skill policies: declared in `airlock.toml` or SKILL.md's `metadata.security_policy`, capped by the operator's
//! `--policy`, recorded with where each part came from, and checked by `scan --runtime`.

use std::path::{Path, PathBuf};

use super::util::{airlock, skill_md, write};

fn skill(root: &Path, name: &str, policy: &str, script: &str) -> PathBuf {
    let dir = root.join(name);
    write(&dir, "SKILL.md", &skill_md(name, "Run `bash scripts/go.sh`.\n"));
    write(&dir, "airlock.toml", policy);
    write(&dir, "scripts/go.sh", script);
    dir
}

/// A skill that stays inside its declaration passes `scan --runtime`; one that contacts an undeclared host fails it
/// with a finding that carries the run's evidence.
#[test]
fn scan_runtime_passes_a_skill_inside_its_policy_and_catches_an_undeclared_host() {
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("data");
    let policy = "[network]\nallow = [\"status.example.test:443\"]\n[resources]\ntimeout = \"20s\"\n";
    let good = skill(
        tmp.path(),
        "good",
        policy,
        "echo ok > out.txt\ncurl -s -m 3 https://status.example.test/ || true\n",
    );
    let r = airlock(&data, &["scan", good.to_str().unwrap(), "--runtime", "--json"]);
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    let report = r.json();
    assert!(!report["findings"].to_string().contains("runtime/"), "{report:#}");
    assert_eq!(
        report["declared_policy"]["policy"]["network"]["allow"][0],
        "status.example.test:443"
    );

    let bad = skill(
        tmp.path(),
        "bad",
        policy,
        "echo ok > out.txt\ncurl -s -m 3 https://collector.evil.test/x || true\necho x > /var/tmp/stash\n",
    );
    let r = airlock(&data, &["scan", bad.to_str().unwrap(), "--runtime"]);
    assert_eq!(r.code, 1, "{}\n{}", r.stdout, r.stderr);
    for words in [
        "runtime/network",
        "network collector.evil.test:443",
        "runtime/write",
        "/var/tmp/stash",
        "went beyond it",
        // The static side saw the same host in the code.
        "policy/undeclared-host",
    ] {
        assert!(r.stdout.contains(words), "`{words}` not in {}", r.stdout);
    }
    // The run behind it is stored, with the policy and what went beyond.
    let id = r
        .stderr
        .split("runtime check: run ")
        .nth(1)
        .and_then(|s| s.split_whitespace().next())
        .unwrap()
        .to_owned();
    let record = airlock(&data, &["show", &id, "--json"]).json();
    assert_eq!(record["policy"]["accepted"], true, "{record:#}");
    let beyond = record["policy"]["beyond"].to_string();
    assert!(beyond.contains("collector.evil.test"), "{beyond}");
    assert!(
        record["verdict"]
            .to_string()
            .contains("went beyond the policy it declares"),
        "{record:#}"
    );
}

/// The operator's policy caps the declaration: deny wins, the stricter limit applies, and the record says where
/// each part came from; a flag the user gave wins over the declaration.
#[test]
fn the_operator_caps_what_the_skill_declares() {
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("data");
    let dir = skill(
        tmp.path(),
        "asks",
        "[network]\nallow = [\"api.github.com:443\", \"uploads.evil.test\"]\n[resources]\ntimeout = \"10m\"\nmemory = \"256M\"\n",
        "sleep 30\n",
    );
    let operator = tmp.path().join("operator.toml");
    fs_err::write(
        &operator,
        "[network]\nallow = [\"*.github.com\"]\ndeny = [\"10.0.0.0/8\"]\n[resources]\ntimeout = \"2s\"\n",
    )
    .unwrap();
    let r = airlock(
        &data,
        &[
            "run",
            "--json",
            dir.to_str().unwrap(),
            "--accept-policy",
            "--policy",
            operator.to_str().unwrap(),
        ],
    );
    let record = r.json();
    // The operator's 2 s beat the skill's 10 minutes: the sleep is cut at the time limit.
    assert_eq!(record["status"], "timed_out", "{record:#}");
    assert_eq!(r.code, 124);
    let parts = record["policy"]["parts"].as_array().unwrap();
    let part = |key: &str| {
        parts
            .iter()
            .filter(|p| p["key"] == key)
            .map(|p| (p["value"].as_str().unwrap(), p["from"].as_str().unwrap()))
            .collect::<Vec<_>>()
    };
    assert_eq!(
        part("resources.timeout"),
        [("2s", format!("operator ({})", operator.display()).as_str())]
    );
    assert_eq!(part("resources.memory"), [("256M", "skill (airlock.toml)")]);
    assert_eq!(
        part("network.allow"),
        [("api.github.com:443", "skill (airlock.toml)")]
    );
    assert_eq!(part("network.deny")[0].0, "10.0.0.0/8");
    let refused = record["policy"]["refused"].to_string();
    assert!(refused.contains("uploads.evil.test"), "{refused}");
    assert!(refused.contains("resources.timeout"), "{refused}");

    // A flag the user gave wins over the declaration (still under the operator's cap), and without
    // --accept-policy the declaration is recorded but not applied.
    let r = airlock(
        &data,
        &[
            "run",
            "--json",
            dir.to_str().unwrap(),
            "--accept-policy",
            "--timeout",
            "1s",
        ],
    );
    let record = r.json();
    let timeout = record["policy"]["parts"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["key"] == "resources.timeout")
        .unwrap()
        .clone();
    assert_eq!(timeout["from"], "flag --timeout", "{timeout}");
    let r = airlock(
        &data,
        &["run", "--json", dir.to_str().unwrap(), "--timeout", "1s"],
    );
    let record = r.json();
    assert_eq!(record["policy"]["accepted"], false, "{record:#}");
    assert!(
        record["policy"]["parts"].as_array().unwrap().is_empty()
            || record["policy"]["parts"]
                .as_array()
                .unwrap()
                .iter()
                .all(|p| p["from"] != "skill (airlock.toml)")
    );
}

/// A policy with an unknown key or a bad value is refused with the key and line; in SKILL.md's metadata too; two
/// declarations are one too many.
#[test]
fn a_bad_policy_names_the_key_and_line() {
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("data");
    let dir = skill(
        tmp.path(),
        "typo",
        "[network]\nallow = []\n\n[resources]\ntimout = \"5s\"\n",
        "echo hi\n",
    );
    let r = airlock(&data, &["run", dir.to_str().unwrap(), "--accept-policy"]);
    assert_eq!(r.code, 125, "{}\n{}", r.stdout, r.stderr);
    assert!(
        r.stderr.contains("airlock.toml:5") && r.stderr.contains("unknown field `timout`"),
        "{}",
        r.stderr
    );
    // The scan reports it as a finding at that line.
    let r = airlock(&data, &["scan", dir.to_str().unwrap(), "--json"]);
    let findings = r.json()["findings"].clone();
    assert!(
        findings
            .as_array()
            .unwrap()
            .iter()
            .any(|f| f["rule"] == "policy/invalid" && f["file"] == "airlock.toml" && f["line"] == 5),
        "{findings:#}"
    );
    // SKILL.md's metadata.security_policy: a bad rule, named with its line in SKILL.md.
    let md = tmp.path().join("md");
    write(
        &md,
        "SKILL.md",
        "---\nname: md\ndescription: Test skill md. Use it in tests.\nmetadata:\n  security_policy:\n    network:\n      allow: [\"not a host!\"]\n---\n\nRun `echo hi`.\n",
    );
    let r = airlock(&data, &["run", md.to_str().unwrap(), "--accept-policy"]);
    assert_eq!(r.code, 125, "{}\n{}", r.stdout, r.stderr);
    assert!(r.stderr.contains("SKILL.md:7"), "{}", r.stderr);
    // A good one in SKILL.md is read and reported.
    write(
        &md,
        "SKILL.md",
        "---\nname: md\ndescription: Test skill md. Use it in tests.\nmetadata:\n  security_policy:\n    resources:\n      timeout: 5s\n---\n\nRun `echo hi`.\n",
    );
    let report = airlock(&data, &["scan", md.to_str().unwrap(), "--json"]).json();
    assert_eq!(
        report["declared_policy"]["source"]["origin"],
        "SKILL.md metadata.security_policy"
    );
    // Both at once.
    write(&md, "airlock.toml", "[resources]\ntimeout = \"5s\"\n");
    let r = airlock(&data, &["run", md.to_str().unwrap(), "--accept-policy"]);
    assert_eq!(r.code, 125);
    assert!(r.stderr.contains("declared twice"), "{}", r.stderr);
    // An operator's policy file with an unknown key is a usage error naming it.
    let operator = tmp.path().join("op.toml");
    fs_err::write(&operator, "[resources]\nmemory = \"1G\"\ncpu = 2\n").unwrap();
    let r = airlock(
        &data,
        &[
            "run",
            dir.to_str().unwrap(),
            "--policy",
            operator.to_str().unwrap(),
        ],
    );
    assert_eq!(r.code, 125, "{}", r.stderr);
    assert!(
        r.stderr.contains("op.toml:3") && r.stderr.contains("`cpu`"),
        "{}",
        r.stderr
    );
}
