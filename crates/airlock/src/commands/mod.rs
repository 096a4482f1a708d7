//! One module per command.

pub mod exec;
pub mod scan;
