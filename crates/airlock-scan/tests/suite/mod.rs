mod behaviours;
mod fixtures;
