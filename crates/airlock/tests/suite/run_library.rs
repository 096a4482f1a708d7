//! `airlock_run` called as a library, as the server and other faces call it: the same run as the CLI's, with
//! progress events while it happens.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use airlock_run::{ImportSettings, Invocation, Phase, RunEvent, RunRequest};
use airlock_types::{LiveEvent, RunMode, RunStatus};

use super::util::{skill_md, write};

fn request(settings: &ImportSettings, source: &std::path::Path, invocation: Invocation) -> RunRequest {
    RunRequest {
        source: settings.parse(source.to_str().unwrap()).unwrap(),
        mode: RunMode::Sandbox,
        target: "blank".into(),
        invocation,
        force: false,
        limits: airlock_sandbox::Limits {
            timeout: Duration::from_secs(30),
            ..airlock_sandbox::Limits::default()
        },
        egress: None,
        retention: Duration::from_secs(3600),
        run_id: Some("r-library-test".into()),
        cancel: None,
        helper: Some(env!("CARGO_BIN_EXE_airlock-sandbox-helper").into()),
        host_opt: false,
        environment: airlock_run::environment::EnvOptions::default(),
        policy: airlock_run::policy::PolicyOptions::default(),
        source_name: None,
        detonation: None,
    }
}

#[test]
fn a_library_run_reports_each_phase_and_what_the_sandbox_did_while_it_ran() {
    let tmp = tempfile::tempdir().unwrap();
    let skill = tmp.path().join("notes");
    write(
        &skill,
        "SKILL.md",
        &skill_md(
            "notes",
            "Writes notes.\n\n```bash\necho hello > notes.txt\ncat package.json\n```\n",
        ),
    );
    let settings = ImportSettings::new(tmp.path().join("data"));
    let mut store = airlock_store::Store::open(&settings.data_dir).unwrap();
    let events = Arc::new(Mutex::new(Vec::new()));
    let sink = events.clone();
    let outcome = airlock_run::execute(
        &request(&settings, &skill, Invocation::Plan),
        &settings,
        &mut store,
        &(Arc::new(move |e| sink.lock().unwrap().push(e)) as airlock_run::OnEvent),
    )
    .unwrap();
    assert_eq!(outcome.record.status, RunStatus::Succeeded);
    assert_eq!(outcome.record.run_id, "r-library-test");
    let events = events.lock().unwrap().clone();
    let phases: Vec<Phase> = events
        .iter()
        .filter_map(|e| match e {
            RunEvent::Phase { phase, .. } => Some(*phase),
            RunEvent::Sandbox { .. } => None,
        })
        .collect();
    assert_eq!(
        phases,
        [
            Phase::Importing,
            Phase::Scanned,
            Phase::Snapshotting,
            Phase::Installing,
            Phase::Running,
            Phase::Collecting,
            Phase::Stored
        ]
    );
    // Sandbox events arrive between `running` and `collecting`, and agree with the stored record.
    let at = |wanted: Phase| {
        events
            .iter()
            .position(|e| matches!(e, RunEvent::Phase { phase, .. } if *phase == wanted))
            .unwrap()
    };
    let (running, collecting) = (at(Phase::Running), at(Phase::Collecting));
    let live: Vec<&LiveEvent> = events[running..collecting]
        .iter()
        .filter_map(|e| match e {
            RunEvent::Sandbox { event } => Some(event),
            RunEvent::Phase { .. } => None,
        })
        .collect();
    let execs: Vec<&str> = live
        .iter()
        .filter_map(|e| match e {
            LiveEvent::Exec(x) => Some(x.path.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(execs.len(), outcome.record.timeline.len(), "{execs:?}");
    assert!(execs.iter().any(|p| p.ends_with("/cat")), "{execs:?}");
    assert!(live
        .iter()
        .any(|e| matches!(e, LiveEvent::FileWritten(f) if f.path == "/workspace/notes.txt")));
    assert!(live
        .iter()
        .any(|e| matches!(e, LiveEvent::FileRead(f) if f.path == "/workspace/package.json")));
    assert!(live
        .iter()
        .any(|e| matches!(e, LiveEvent::Exit { exit_code: 0, .. })));
    // The program's output arrives as it comes, the same bytes the record keeps.
    let printed: String = live
        .iter()
        .filter_map(|e| match e {
            LiveEvent::Output { stream, text, .. } if stream == "stdout" => Some(text.as_str()),
            _ => None,
        })
        .collect();
    assert!(printed.contains("\"name\""), "{printed:?}");
    assert_eq!(printed, outcome.record.stdout);
    // The stored run is the one returned.
    let (_, stored) = store.run("r-library-test").unwrap();
    assert_eq!(stored.unwrap(), outcome.record);
}

#[test]
fn a_library_run_can_be_cancelled_and_is_recorded_as_cancelled() {
    let tmp = tempfile::tempdir().unwrap();
    let skill = tmp.path().join("sleeper");
    write(
        &skill,
        "SKILL.md",
        &skill_md("sleeper", "Waits.\n\n```bash\nsleep 25\n```\n"),
    );
    let settings = ImportSettings::new(tmp.path().join("data"));
    let mut store = airlock_store::Store::open(&settings.data_dir).unwrap();
    let cancel = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let mut req = request(&settings, &skill, Invocation::Plan);
    req.cancel = Some(cancel.clone());
    let flag = cancel.clone();
    // Cancel as soon as the sleep starts.
    let on_event: airlock_run::OnEvent = Arc::new(move |e: RunEvent| {
        if let RunEvent::Sandbox {
            event: LiveEvent::Exec(x),
        } = e
        {
            if x.path.ends_with("/sleep") {
                flag.store(true, std::sync::atomic::Ordering::Relaxed);
            }
        }
    });
    let started = std::time::Instant::now();
    let outcome = airlock_run::execute(&req, &settings, &mut store, &on_event).unwrap();
    assert_eq!(outcome.record.status, RunStatus::Cancelled);
    assert!(started.elapsed() < Duration::from_secs(20));
}
