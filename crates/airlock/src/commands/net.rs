//! The network flags shared by `airlock exec` and `airlock run`.

use std::path::PathBuf;

use clap::Args;

use airlock_egress::{ConnectTo, EgressConfig, Policy, Rule, Secret};

/// A mistake in the command line: exit code 2.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct UsageError(pub String);

#[derive(Debug, Clone, Default, Args)]
pub struct NetArgs {
    /// Allow network to a host, `*.domain`, IP or CIDR, with an optional port (HOST[:PORT]). Goes through
    /// airlock's egress proxy; everything else stays refused and recorded.
    #[arg(long, value_name = "HOST[:PORT]")]
    pub allow_net: Vec<String>,
    /// Deny a host, `*.domain`, IP or CIDR (deny wins over allow).
    #[arg(long, value_name = "HOST[:PORT]")]
    pub deny_net: Vec<String>,
    /// A set of allowed hosts: none, package-registries (npm, PyPI, crates.io), model-api.
    #[arg(long, value_name = "PRESET")]
    pub net_preset: Vec<String>,
    /// A TOML policy file with `presets`, `allow`, `deny` and `connect_to` lists.
    #[arg(long, value_name = "FILE")]
    pub net_policy: Option<PathBuf>,
    /// Send connections for HOST:PORT to IP:PORT instead of resolving HOST (the address counts as named by you).
    #[arg(long, value_name = "HOST:PORT=IP:PORT")]
    pub connect_to: Vec<String>,
    /// Add a secret header to plain-HTTP requests for HOST, which the proxy sends on over TLS: HOST=HEADER:ENV_VAR
    /// (the value is read from airlock's environment and never enters the sandbox or the record).
    #[arg(long, value_name = "HOST=HEADER:ENV_VAR")]
    pub secret: Vec<String>,
    /// Trust this CA (PEM) for the TLS connections the proxy makes itself.
    #[arg(long, value_name = "FILE")]
    pub egress_ca: Vec<PathBuf>,
}

impl NetArgs {
    /// The egress configuration, or `None` when nothing is allowed (loopback only).
    pub fn egress(&self) -> Result<Option<EgressConfig>, UsageError> {
        let usage = |e: &dyn std::fmt::Display| UsageError(e.to_string());
        let mut policy = Policy::default();
        if let Some(file) = &self.net_policy {
            policy.add_file(file).map_err(|e| usage(&e))?;
        }
        for p in &self.net_preset {
            policy.add_preset(p).map_err(|e| usage(&e))?;
        }
        for a in &self.allow_net {
            policy.allow.push(Rule::parse(a).map_err(|e| usage(&e))?);
        }
        for d in &self.deny_net {
            policy.deny.push(Rule::parse(d).map_err(|e| usage(&e))?);
        }
        for c in &self.connect_to {
            policy
                .connect_to
                .push(ConnectTo::parse(c).map_err(|e| usage(&e))?);
        }
        let mut secrets = Vec::new();
        for s in &self.secret {
            let secret = Secret::from_env_spec(s).map_err(|e| usage(&e))?;
            if !policy.check_name(&secret.host, 443).allowed {
                return Err(UsageError(format!(
                    "--secret for {} needs that host allowed on port 443 (--allow-net {}:443)",
                    secret.host, secret.host
                )));
            }
            secrets.push(secret);
        }
        if !policy.is_open() {
            if !secrets.is_empty() || !policy.connect_to.is_empty() {
                return Err(UsageError(
                    "--secret and --connect-to need a host allowed with --allow-net".into(),
                ));
            }
            return Ok(None);
        }
        Ok(Some(EgressConfig {
            policy,
            secrets,
            extra_ca: self.egress_ca.clone(),
            events: None,
        }))
    }
}
