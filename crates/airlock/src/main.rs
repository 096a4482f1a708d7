//! The `airlock` command: parses arguments, resolves settings and calls the library crates.

mod commands;
mod settings;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

use commands::{exec::ExecArgs, scan::ScanArgs, scan::SourceArgs};

/// Try a third-party AI agent skill without trusting it: import, scan, run sealed, review.
#[derive(Debug, Parser)]
#[command(name = "airlock", version, about, max_term_width = 110)]
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
    /// Export a run's patch, output or a sanitized bundle.
    Export(commands::runs::ExportArgs),
    /// Delete a stored run now.
    Discard(commands::runs::DiscardArgs),
    /// Delete expired runs, reports and files.
    Gc(commands::runs::GcArgs),
    /// Say which isolation layers this machine supports.
    Doctor {
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
    },
}

/// Exit codes, documented in the README.
pub mod exit {
    /// The command did what was asked; for scan, the risk is below `--fail-on`.
    pub const OK: u8 = 0;
    /// The scan reached the `--fail-on` level, or validation failed.
    pub const POLICY: u8 = 1;
    /// Bad arguments.
    pub const USAGE: u8 = 2;
    /// The source could not be imported: malformed, unreachable, too large or unsafe.
    pub const SOURCE: u8 = 3;
    /// Any other failure (I/O, disk full, internal).
    pub const FAILURE: u8 = 4;
    /// The sandbox could not be set up as asked (a layer this machine cannot enforce).
    pub const SANDBOX: u8 = 5;
    /// `airlock run` ran the skill and it did not succeed (failed, timed out, hit a limit, was killed).
    pub const RUN_FAILED: u8 = 6;
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
            return ExitCode::from(if err.use_stderr() { exit::USAGE } else { exit::OK });
        }
    };
    let result = match cli.command {
        Command::Scan(args) => commands::scan::scan(&args),
        Command::Validate(args) => commands::scan::validate(&args),
        Command::List(args) => commands::scan::list(&args),
        Command::Exec(args) => commands::exec::exec(&args),
        Command::Run(args) => commands::run::run(&args),
        Command::Runs(args) => commands::runs::runs(&args),
        Command::Show(args) => commands::runs::show(&args),
        Command::Export(args) => commands::runs::export(&args),
        Command::Discard(args) => commands::runs::discard(&args),
        Command::Gc(args) => commands::runs::gc(&args),
        Command::Doctor { json } => commands::exec::doctor(json),
    };
    match result {
        Ok(code) => ExitCode::from(code),
        Err(err) => {
            eprintln!("error: {}", settings::escape(&format!("{err:#}")));
            ExitCode::from(exit_code_of(&err))
        }
    }
}

/// Maps an error to its exit code, in this one place.
fn exit_code_of(err: &anyhow::Error) -> u8 {
    for cause in err.chain() {
        match cause.downcast_ref::<airlock_run::RunError>() {
            Some(airlock_run::RunError::Usage(_)) => return exit::USAGE,
            Some(airlock_run::RunError::Sandbox(_)) => return exit::SANDBOX,
            _ => {}
        }
        if let Some(source) = cause.downcast_ref::<airlock_source::SourceError>() {
            return match source {
                airlock_source::SourceError::Io(_) | airlock_source::SourceError::DiskFull { .. } => {
                    exit::FAILURE
                }
                _ => exit::SOURCE,
            };
        }
    }
    if err
        .chain()
        .any(|c| c.downcast_ref::<commands::net::UsageError>().is_some())
    {
        return exit::USAGE;
    }
    if err
        .chain()
        .any(|c| c.downcast_ref::<airlock_sandbox::SandboxError>().is_some())
    {
        return exit::SANDBOX;
    }
    exit::FAILURE
}
