//! Gives each build of the sandbox crate an id. The runner passes it to the helper executable, which refuses an id
//! from another build: a helper left over from an older build (next to a newer `airlock`) would otherwise speak an
//! older protocol.

fn main() {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    println!(
        "cargo:rustc-env=AIRLOCK_SANDBOX_BUILD={}-{nanos:x}",
        std::env::var("CARGO_PKG_VERSION").unwrap_or_default()
    );
}
