mod egress;
mod escape;
mod run_cli;
mod scan_cli;
mod util;
