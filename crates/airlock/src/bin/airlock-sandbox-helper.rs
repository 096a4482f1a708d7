//! The sandbox's in-sandbox half as a small executable of its own. The runner starts it when it sits next to the
//! running program (as `cargo install` and `cargo build` put it): it starts about a millisecond faster than
//! re-executing the full `airlock`, and every run starts it once. Without it the runner re-executes itself.

fn main() {
    airlock_sandbox::maybe_run_child();
    eprintln!("airlock-sandbox-helper is started by airlock's sandbox runner, not by hand");
    std::process::exit(2);
}
