-- The signed statement of a run, made when its record was stored (a content file named by its SHA-256).
ALTER TABLE sandbox_runs ADD COLUMN attestation_sha TEXT;
