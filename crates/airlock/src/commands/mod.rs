//! One module per command.

pub mod exec;
pub mod json_io;
pub mod net;
pub mod remote;
pub mod run;
pub mod runner;
pub mod runs;
pub mod scan;
pub mod serve;
pub mod trust;
pub mod verify;
