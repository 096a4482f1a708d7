//! One module per command.

pub mod scan;
