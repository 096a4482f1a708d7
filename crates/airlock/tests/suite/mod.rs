mod egress;
mod escape;
mod scan_cli;
mod util;
