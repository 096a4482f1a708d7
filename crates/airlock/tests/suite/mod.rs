mod egress;
mod escape;
mod run_cli;
mod run_library;
mod scan_cli;
mod util;
