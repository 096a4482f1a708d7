//! `airlock verify FILE`: checks a signed statement of a scan or a run (in-toto v1 in a DSSE envelope) against a
//! public key, and, when asked, against the skill (`--skill SOURCE`: its digest and commit) and the stored record
//! (a run in this data folder: its digest). Says in plain words (or JSON) what was attested and whether it holds.
//!
//! Exit codes: 0 every check holds; 1 one does not (the signature, the skill, the record); 125 nothing could be
//! checked (no such file, a key that is not one, no key at all).

use std::path::{Path, PathBuf};

use clap::Args;
use serde_json::json;

use airlock_attest::{Keys, Statement, RUN_PREDICATE, SCAN_PREDICATE, VSA_PREDICATE};

use crate::exit;
use crate::settings::{data_dir, escape};

#[derive(Debug, Args)]
pub struct VerifyArgs {
    /// The signed statement (`scan --attest`, `export --attestation`).
    pub file: PathBuf,
    /// The public key (64 hex digits, or a file holding them); this data folder's own by default.
    #[arg(long, value_name = "HEX|FILE")]
    pub key: Option<String>,
    /// Also check that this skill (a folder, an archive or a URL) is the one attested.
    #[arg(long, value_name = "SOURCE")]
    pub skill: Option<String>,
    /// Where the data folder's key and runs are.
    #[arg(long, env = "AIRLOCK_DATA_DIR")]
    pub data_dir: Option<PathBuf>,
    /// Base URL for GitHub sources.
    #[arg(long, env = "AIRLOCK_GITHUB_BASE", default_value = "https://github.com")]
    pub github_base: String,
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
}

/// Says on stderr what was signed and with which key.
pub fn signed(file: &Path, keys: &Keys) {
    eprintln!(
        "wrote {}, signed with key {} (public key {}; check it with `airlock verify {} --key {}`)",
        escape(&file.display().to_string()),
        keys.key_id(),
        keys.public_hex(),
        escape(&file.display().to_string()),
        keys.public_hex()
    );
}

/// One check and its outcome.
struct Check {
    what: &'static str,
    holds: bool,
    detail: String,
}

pub fn verify(args: &VerifyArgs) -> anyhow::Result<u8> {
    let data = data_dir(args.data_dir.as_ref())?;
    let envelope = match fs_err::read(&args.file) {
        Ok(b) => b,
        Err(e) => {
            eprintln!("{}", escape(&e.to_string()));
            return Ok(exit::AIRLOCK);
        }
    };
    let public = match &args.key {
        Some(k) => match airlock_attest::public_key(k) {
            Ok(p) => p,
            Err(e) => {
                eprintln!("{}", escape(&e.to_string()));
                return Ok(exit::AIRLOCK);
            }
        },
        None if Keys::path(&data).is_file() => {
            let keys = Keys::load_or_create(&data)?;
            airlock_attest::public_key(&keys.public_hex())?
        }
        None => {
            eprintln!("no --key given and no key in the data folder: give the signer's public key");
            return Ok(exit::AIRLOCK);
        }
    };
    // One envelope, or a bundle of them one a line (`scan --runtime --attest`: the scan and its verification
    // summary).
    let envelopes: Vec<&[u8]> = if serde_json::from_slice::<serde_json::Value>(&envelope).is_ok() {
        vec![&envelope[..]]
    } else {
        envelope
            .split(|b| *b == b'\n')
            .filter(|l| !l.iter().all(u8::is_ascii_whitespace))
            .collect()
    };
    let mut checks = Vec::new();
    let mut statements = Vec::new();
    for envelope in envelopes {
        let statement = match airlock_attest::verify(envelope, &public) {
            Ok(s) => {
                checks.push(Check {
                    what: "signature",
                    holds: true,
                    detail: format!("signed by the key {}", airlock_attest::hex(&public)),
                });
                s
            }
            Err(e) => {
                checks.push(Check {
                    what: "signature",
                    holds: false,
                    detail: e.to_string(),
                });
                continue;
            }
        };
        if let Some(source) = &args.skill {
            checks.push(skill_check(args, source, &statement)?);
        }
        if statement.predicate_type == RUN_PREDICATE {
            checks.push(record_check(&data, &statement));
        }
        if statement.predicate_type == VSA_PREDICATE {
            let passed = statement.predicate["verificationResult"] == "PASSED";
            checks.push(Check {
                what: "runtime check",
                holds: passed,
                detail: if passed {
                    "the skill stayed within its policy when it was run".into()
                } else {
                    "the skill went beyond its policy when it was run (verificationResult FAILED)".into()
                },
            });
        }
        statements.push(statement);
    }
    let statement = statements.first();
    let holds = checks.iter().all(|c| c.holds);
    if args.json {
        outln!(
            "{}",
            serde_json::to_string_pretty(&json!({
                "holds": holds,
                "statement": statement,
                "statements": statements,
                "checks": checks.iter().map(|c| json!({"what": c.what, "holds": c.holds, "detail": c.detail})).collect::<Vec<_>>(),
            }))?
        );
    } else {
        for s in &statements {
            for line in describe(s) {
                outln!("{}", escape(&line));
            }
        }
        for c in &checks {
            outln!(
                "{} {}: {}",
                if c.holds { "✓" } else { "✗" },
                c.what,
                escape(&c.detail)
            );
        }
        outln!("{}", if holds { "It holds." } else { "It does not hold." });
    }
    Ok(if holds { exit::OK } else { exit::POLICY })
}

/// What the statement says, in sentences.
fn describe(s: &Statement) -> Vec<String> {
    let p = &s.predicate;
    let text = |v: &serde_json::Value| v.as_str().map_or_else(|| v.to_string(), str::to_owned);
    let mut out = Vec::new();
    for subject in &s.subject {
        out.push(format!(
            "About {}: {}",
            subject.name,
            subject
                .digest
                .iter()
                .map(|(k, v)| format!("{k} {v}"))
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    match s.predicate_type.as_str() {
        SCAN_PREDICATE => out.push(format!(
            "A scan: risk {}, {}, {} finding(s) (their digest {}).",
            text(&p["risk_level"]),
            text(&p["classification"]),
            p["findings"],
            text(&p["findings_sha256"])
        )),
        RUN_PREDICATE => {
            out.push(format!(
                "A run: {} ({} mode) ended {}; its record's digest {}.",
                text(&p["run_id"]),
                text(&p["mode"]),
                text(&p["status"]),
                text(&p["record_sha256"])
            ));
            for v in p["verdict"].as_array().into_iter().flatten() {
                out.push(format!("  {}", text(v)));
            }
        }
        VSA_PREDICATE => out.push(format!(
            "A verification summary: the runtime policy check {} (policy {}; {} run(s) checked; levels {}).",
            text(&p["verificationResult"]),
            text(&p["policy"]["uri"]),
            p["inputAttestations"].as_array().map_or(0, Vec::len),
            p["verifiedLevels"]
        )),
        other => out.push(format!("A statement of type {other}.")),
    }
    out
}

/// Whether the skill given is the one the statement is about.
fn skill_check(args: &VerifyArgs, source: &str, s: &Statement) -> anyhow::Result<Check> {
    let mut settings = airlock_run::ImportSettings::new(data_dir(args.data_dir.as_ref())?);
    settings.github_base = args.github_base.clone();
    let imported = airlock_run::import(&settings.parse(source)?, &settings)?;
    let subject = airlock_attest::subject(&imported.staged.source);
    let holds = s.subject.iter().any(|attested| {
        subject
            .digest
            .iter()
            .all(|(k, v)| attested.digest.get(k) == Some(v))
    });
    Ok(Check {
        what: "skill",
        holds,
        detail: if holds {
            format!("{source} is the skill attested")
        } else {
            let attested_commit = s.subject.iter().find_map(|a| a.digest.get("gitCommit"));
            match (attested_commit, subject.digest.get("gitCommit")) {
                (Some(attested), Some(ours)) if attested != ours => format!(
                    "{source} is not the skill attested: it is commit {ours}, and the statement is about commit {}",
                    airlock_types::display::line(attested)
                ),
                _ => format!(
                    "{source} is not the skill attested: its digest is {}",
                    subject.digest.get("sha256").cloned().unwrap_or_default()
                ),
            }
        },
    })
}

/// Whether the run's stored record (when this data folder holds it) is the one signed.
fn record_check(data: &Path, s: &Statement) -> Check {
    let run_id = s.predicate["run_id"].as_str().unwrap_or_default();
    let signed = s.predicate["record_sha256"].as_str().unwrap_or_default();
    let stored = airlock_store::Store::open_shared(data)
        .ok()
        .and_then(|store| store.run(run_id).ok())
        .and_then(|(_, record)| record);
    match stored {
        Some(record) => {
            let now = airlock_attest::record_digest(&record);
            // The events' chain places an edit among them (a statement made before chains has none).
            let chain: Option<airlock_attest::EventChain> =
                serde_json::from_value(s.predicate["events"].clone()).ok();
            let changed = chain.as_ref().and_then(|signed| {
                airlock_attest::changed_events(signed, &airlock_attest::event_chain(&record))
            });
            let detail = match (now == signed, changed, &chain) {
                (true, _, Some(c)) => format!(
                    "the stored record of {run_id} is the one signed, its {} events in the order signed",
                    c.count
                ),
                (true, _, None) => format!("the stored record of {run_id} is the one signed"),
                (false, Some((from, to)), _) => format!(
                    "the stored record of {run_id} was changed after it was signed: its events {from} to {to} are not \
                     those signed (its digest is now {now})"
                ),
                (false, None, _) => format!(
                    "the stored record of {run_id} was changed after it was signed, outside its events (its digest is \
                     now {now})"
                ),
            };
            Check {
                what: "record",
                holds: now == signed,
                detail,
            }
        }
        None => Check {
            what: "record",
            holds: true,
            detail: format!("{run_id} is not in this data folder: its record's digest was {signed}"),
        },
    }
}
