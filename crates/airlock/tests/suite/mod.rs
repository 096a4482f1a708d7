mod egress;
mod environment;
mod escape;
mod integrity;
mod run_cli;
mod run_library;
mod scan_cli;
mod util;
