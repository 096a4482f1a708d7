//! A run's sanitized bundle: the skill's regular files at their pinned commit with a manifest of their hashes, the
//! risk report, the run record and its signed statement (when the store holds one), as a gzipped tar with fixed modes
//! and times. Built from the store alone.

use std::io::Write;

use airlock_store::Store;
use airlock_types::SkillRun;

/// Writes the bundle of `run` to `out`.
pub fn write(store: &Store, run: &SkillRun, out: impl Write) -> Result<(), airlock_store::StoreError> {
    let gz = flate2::write::GzEncoder::new(out, flate2::Compression::default());
    let mut tar = tar::Builder::new(gz);
    let mut add = |path: &str, bytes: &[u8], mode: u32| -> std::io::Result<()> {
        let mut header = tar::Header::new_gnu();
        header.set_size(bytes.len() as u64);
        header.set_mode(mode);
        header.set_mtime(0);
        header.set_cksum();
        tar.append_data(&mut header, path, bytes)
    };
    let mut manifest = Vec::new();
    for a in run.artifacts.iter().filter(|a| a.kind == "skill-file") {
        let bytes = store.read_object(&a.sha256)?;
        let mode = if a.summary.starts_with("mode 755") {
            0o755
        } else {
            0o644
        };
        add(&format!("skill/{}", a.path), &bytes, mode)?;
        manifest.push(serde_json::json!({"path": a.path, "sha256": a.sha256, "size": a.size}));
    }
    let manifest = serde_json::json!({
        "source": run.source,
        "files": manifest,
        "risk_level": run.risk_level,
        "run_id": run.run_id,
    });
    add("manifest.json", &serde_json::to_vec_pretty(&manifest)?, 0o644)?;
    if let Some(report) = run.artifacts.iter().find(|a| a.kind == "report") {
        add("report.json", &store.read_object(&report.sha256)?, 0o644)?;
    }
    add("run.json", &serde_json::to_vec_pretty(run)?, 0o644)?;
    // The statement signed as the record was stored (docs/attestations.md): `airlock verify` checks it.
    if let Some(envelope) = store.run_attestation(&run.run_id)? {
        add("attestation.intoto.json", &envelope, 0o644)?;
    }
    tar.into_inner()?.finish()?;
    Ok(())
}
