//! One module per command.

pub mod exec;
pub mod net;
pub mod scan;
