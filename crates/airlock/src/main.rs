//! The `airlock` command: parses arguments, resolves settings and calls the library crates.

/// Prints to standard output through [`output::write`]: `airlock scan | head` ends the output, not the command.
macro_rules! out {
    ($($arg:tt)*) => { $crate::output::write(format_args!($($arg)*)) };
}

/// [`out!`] with a line break.
macro_rules! outln {
    () => { $crate::output::write(format_args!("\n")) };
    ($($arg:tt)*) => { $crate::output::write(format_args!("{}\n", format_args!($($arg)*))) };
}

mod commands;
mod output;
mod settings;

use std::process::ExitCode;

/// The scan allocates and frees many small strings on every core; mimalloc's per-thread heaps do that without the
/// system allocator's contention (a tenth of a scan's time was in glibc's `malloc` and `free`).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

use clap::{Parser, Subcommand};

use commands::{exec::ExecArgs, scan::ScanArgs, scan::SourceArgs};

const EXIT_CODES: &str = "Exit codes: 0 done; 1 the answer is no (scan at --fail-on, invalid SKILL.md, nothing to \
export); 120 no command to run (prompt-only, or only examples); 121 not a skill; 122 empty folder; 123 refused by the \
scan; 124 time limit; 125 airlock's own error (the message says which); 126 cannot run; 127 not found; 128+N killed \
by signal N; otherwise the command's (or the failing step's) own code.";

/// Try a third-party AI agent skill without trusting it: import, scan, run sealed, review.
#[derive(Debug, Parser)]
#[command(name = "airlock", version, about, max_term_width = 110, after_help = EXIT_CODES)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Import a skill and scan it: classification, risk level and findings with file:line.
    Scan(ScanArgs),
    /// Check SKILL.md against the Agent Skills spec.
    Validate(SourceArgs),
    /// List the scripts a skill ships.
    List(SourceArgs),
    /// Run a command in the sealed sandbox and record what it did.
    Exec(Box<ExecArgs>),
    /// Import, scan and run a skill (inspect, dry run or sandbox) against a disposable target; the run is stored.
    Run(Box<commands::run::RunArgs>),
    /// List stored runs.
    Runs(commands::runs::RunsArgs),
    /// Show a stored run: summary, timeline, files, diff, network.
    Show(commands::runs::ShowArgs),
    /// Export a run's patch, output, a sanitized bundle or a signed statement of it.
    Export(commands::runs::ExportArgs),
    /// Check a signed statement of a scan or a run against a key, the skill and the stored record.
    Verify(commands::verify::VerifyArgs),
    /// Delete a stored run now.
    Discard(commands::runs::DiscardArgs),
    /// Delete expired runs, reports and files.
    Gc(commands::runs::GcArgs),
    /// Save a trust decision: allow this commit with a policy, or cap what a repository's skills get.
    Trust(Box<commands::trust::TrustArgs>),
    /// List saved trust decisions.
    Trusted(commands::trust::TrustedArgs),
    /// Remove a trust decision.
    Untrust(commands::trust::UntrustArgs),
    /// Serve the control API (JSON over HTTP, live run events) on a local address.
    Serve(Box<commands::serve::ServeArgs>),
    /// Claim runs from airlock servers and carry them out on this machine (a runner of a team deployment).
    Runner(Box<commands::runner::RunnerArgs>),
    /// Say which isolation layers this machine supports.
    Doctor {
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
    },
}

/// Exit codes, one table for every command, documented in the README and `--help`. airlock's own failures use codes
/// a command run in the sandbox is not confused with (the convention of `timeout`, `env` and `docker run`).
pub mod exit {
    use airlock_types::RunStatus;

    /// Done: the scan is below `--fail-on`, SKILL.md is valid, the run succeeded, the command exited 0.
    pub const OK: u8 = 0;
    /// The answer is no, from a command that runs nothing: the scan reached `--fail-on`, SKILL.md is invalid, there
    /// is nothing to export, the machine cannot enforce every layer (`doctor`).
    pub const POLICY: u8 = 1;
    /// A plain run with no command to run: a prompt-only skill, or one whose commands are all examples to adapt.
    pub const NO_COMMAND: u8 = 120;
    /// The folder is not a skill (no SKILL.md).
    pub const NOT_A_SKILL: u8 = 121;
    /// The folder is empty.
    pub const EMPTY: u8 = 122;
    /// The scan says block, so the run was refused (`--force` runs it anyway).
    pub const REFUSED: u8 = 123;
    /// The time limit ended the command.
    pub const TIME_LIMIT: u8 = 124;
    /// airlock's own error: bad arguments, an import that failed, a layer this machine cannot enforce, the store,
    /// I/O or a full disk, an unknown run. The message says which.
    pub const AIRLOCK: u8 = 125;
    /// The command was found but could not be run.
    pub const CANNOT_RUN: u8 = 126;
    /// The command was not found.
    pub const NOT_FOUND: u8 = 127;

    /// The exit code of a sandboxed command: its own code, 128 + the signal that ended it, or 124 for the time limit.
    pub fn of_command(status: RunStatus, exit_code: Option<i32>, signal: Option<i32>) -> u8 {
        match (status, exit_code, signal) {
            (RunStatus::TimedOut, _, _) => TIME_LIMIT,
            (RunStatus::Refused, _, _) => REFUSED,
            (_, Some(code), _) if code != 0 => u8::try_from(code & 0xff).unwrap_or(AIRLOCK),
            (_, _, Some(sig)) => u8::try_from(128 + (sig & 0x7f)).unwrap_or(AIRLOCK),
            (RunStatus::Succeeded, _, _) => OK,
            // Ended by a limit or killed without a code of its own: as the kernel's SIGKILL would say.
            (RunStatus::Killed | RunStatus::LimitExceeded | RunStatus::Cancelled, _, _) => 137,
            (RunStatus::Failed, _, _) => POLICY,
        }
    }
}

fn main() -> ExitCode {
    // The sandbox re-enters this binary for its in-sandbox half; that path never returns. First, before anything
    // else starts: it is on every run's start-up path.
    airlock_sandbox::maybe_run_child();
    let filter = tracing_subscriber::EnvFilter::try_from_env("AIRLOCK_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn"));
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .init();

    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(err) => {
            let _ = err.print();
            return ExitCode::from(if err.use_stderr() { exit::AIRLOCK } else { exit::OK });
        }
    };
    let result = match cli.command {
        Command::Scan(args) => commands::scan::scan(&args),
        Command::Validate(args) => commands::scan::validate(&args),
        Command::List(args) => commands::scan::list(&args),
        Command::Exec(args) if args.json_io => commands::json_io::json_io(args.serve),
        Command::Exec(args) => commands::exec::exec(&args),
        Command::Run(args) => commands::run::run(&args),
        Command::Runs(args) => commands::runs::runs(&args),
        Command::Show(args) => commands::runs::show(&args),
        Command::Export(args) => commands::runs::export(&args),
        Command::Discard(args) => commands::runs::discard(&args),
        Command::Gc(args) => commands::runs::gc(&args),
        Command::Serve(args) => commands::serve::serve(&args),
        Command::Runner(args) => commands::runner::runner(&args),
        Command::Trust(args) => commands::trust::trust(&args),
        Command::Trusted(args) => commands::trust::trusted(&args),
        Command::Untrust(args) => commands::trust::untrust(&args),
        Command::Doctor { json } => commands::exec::doctor(json),
        Command::Verify(args) => commands::verify::verify(&args),
    };
    match (result, output::failure()) {
        // A reader that went away took what it wanted (`airlock show --output | head`): not a failure.
        (Err(err), _) if output::is_broken_pipe(&err) => ExitCode::from(exit::OK),
        (Ok(_), Some(err)) => {
            eprintln!("error: cannot write to standard output: {err}");
            ExitCode::from(exit::AIRLOCK)
        }
        (Ok(code), None) => ExitCode::from(code),
        (Err(err), _) => {
            eprintln!("error: {}", settings::escape(&format!("{err:#}")));
            ExitCode::from(exit_code_of(&err))
        }
    }
}

/// Maps an error to its exit code, in this one place: every error airlock reports itself is its own (125); the
/// message says what failed.
fn exit_code_of(err: &anyhow::Error) -> u8 {
    for cause in err.chain() {
        if let Some(airlock_run::RunError::NothingToRun { kind, .. }) = cause.downcast_ref() {
            return match kind {
                airlock_run::Nothing::NoCommand => exit::NO_COMMAND,
                airlock_run::Nothing::NotASkill => exit::NOT_A_SKILL,
                airlock_run::Nothing::Empty => exit::EMPTY,
            };
        }
    }
    exit::AIRLOCK
}
