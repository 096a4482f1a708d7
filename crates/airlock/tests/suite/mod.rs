mod scan_cli;
mod util;
