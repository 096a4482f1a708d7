//! The network flags shared by `airlock exec` and `airlock run`.

use std::path::PathBuf;

use clap::Args;

use airlock_egress::{ConnectTo, Ecosystem, EgressConfig, Policy, Rule, Secret, Upstream};

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
    /// A TOML policy file: `presets`, `allow`, `deny`, `connect_to` and `trusted_names` lists, `upstream_proxy`,
    /// `no_proxy` and a `[mirrors]` table (see docs/network.md).
    #[arg(long, value_name = "FILE")]
    pub net_policy: Option<PathBuf>,
    /// Send connections for HOST:PORT to IP:PORT instead of resolving HOST (the address counts as named by you).
    #[arg(long, value_name = "HOST:PORT=IP:PORT")]
    pub connect_to: Vec<String>,
    /// Add a secret header to plain-HTTP requests for HOST, which the proxy sends on over TLS: HOST=HEADER:ENV_VAR
    /// (the value is read from airlock's environment and never enters the sandbox or the record).
    #[arg(long, value_name = "HOST=HEADER:ENV_VAR")]
    pub secret: Vec<String>,
    /// The egress settings an operator would give every run: upstream proxy, trusted names, mirrors, CAs.
    #[command(flatten)]
    pub operator: OperatorNetArgs,
}

/// The upstream proxy: the flag's (`none` to go direct), else the one in airlock's environment. A proxy variable
/// airlock cannot use (a SOCKS proxy, say) is left aside with a warning rather than stopping every command;
/// `airlock doctor` says the same.
fn upstream(flag: Option<&str>) -> Result<Option<Upstream>, UsageError> {
    match flag {
        Some("none") => Ok(None),
        Some(url) => Upstream::single(url).map(Some).map_err(UsageError),
        None => Ok(Upstream::from_env().unwrap_or_else(|e| {
            tracing::warn!("{e}; allowed traffic goes direct");
            None
        })),
    }
}

/// Adds trusted names and mirrors (a later mirror for an ecosystem replaces an earlier one).
fn add_names_and_mirrors(
    policy: &mut Policy,
    trust_name: &[String],
    mirror: &[String],
) -> Result<(), UsageError> {
    let usage = |e: &dyn std::fmt::Display| UsageError(e.to_string());
    for t in trust_name {
        policy.trust_name(t).map_err(|e| usage(&e))?;
    }
    for m in mirror {
        let (eco, url) = m
            .split_once('=')
            .ok_or_else(|| UsageError(format!("invalid --mirror `{m}`: expected ECOSYSTEM=URL")))?;
        let eco = Ecosystem::parse(eco).ok_or_else(|| {
            UsageError(format!(
                "invalid --mirror `{m}`: unknown ecosystem `{eco}` (known: pypi, npm, cargo, apt)"
            ))
        })?;
        policy.add_mirror(eco, url).map_err(|e| usage(&e))?;
    }
    Ok(())
}

/// The egress settings an operator gives every run, whatever it allows: the upstream proxy (from the flag or
/// airlock's environment), trusted names and mirrors.
fn base_policy(
    upstream_proxy: Option<&str>,
    trust_name: &[String],
    mirror: &[String],
) -> Result<Policy, UsageError> {
    let mut policy = Policy {
        upstream: upstream(upstream_proxy)?,
        ..Policy::default()
    };
    add_names_and_mirrors(&mut policy, trust_name, mirror)?;
    Ok(policy)
}

/// The egress settings an operator gives every run (of `exec` and `run`, a server or a runner machine), whatever
/// the run allows.
#[derive(Debug, Clone, Default, Args)]
pub struct OperatorNetArgs {
    /// Trust this CA (PEM) for the TLS connections the proxy makes itself, and add it to the CA bundle programs
    /// inside the sandbox see.
    #[arg(long, value_name = "FILE")]
    pub egress_ca: Vec<PathBuf>,
    /// A name (or `*.domain`) whose private address is expected, such as an internal mirror or Git server: it
    /// resolves normally while every other name keeps the DNS rebinding rule. Repeat it, or give a list
    /// (`pypi.org,files.pythonhosted.org`).
    #[arg(long, value_name = "NAME[,NAME...]", value_delimiter = ',')]
    pub trust_name: Vec<String>,
    /// The proxy allowed traffic leaves through (`http://[user:password@]host:port`), instead of the one in
    /// airlock's environment (`HTTPS_PROXY`, `HTTP_PROXY`, `NO_PROXY`); `none` to go direct. Its credentials never
    /// enter the sandbox.
    #[arg(long, value_name = "URL|none")]
    pub upstream_proxy: Option<String>,
    /// Point an ecosystem's installs in the sandbox at a mirror, and allow and trust its host:
    /// ECOSYSTEM=URL with ECOSYSTEM one of pypi, npm, cargo, apt.
    #[arg(long, value_name = "ECOSYSTEM=URL")]
    pub mirror: Vec<String>,
}

impl OperatorNetArgs {
    /// The egress policy these settings give (nothing allowed yet).
    pub fn base_policy(&self) -> Result<Policy, UsageError> {
        base_policy(self.upstream_proxy.as_deref(), &self.trust_name, &self.mirror)
    }
}

impl NetArgs {
    /// The egress configuration, or `None` when nothing is allowed and nothing is set for the install phase
    /// (loopback only; a configuration whose policy allows nothing also keeps the run on loopback).
    pub fn egress(&self) -> Result<Option<EgressConfig>, UsageError> {
        NetRules {
            allow: &self.allow_net,
            deny: &self.deny_net,
            presets: &self.net_preset,
            connect_to: &self.connect_to,
            secrets: &self.secret,
            file: self.net_policy.as_deref(),
            upstream_proxy: self.operator.upstream_proxy.as_deref(),
            trust_name: &self.operator.trust_name,
            mirror: &self.operator.mirror,
            egress_ca: &self.operator.egress_ca,
        }
        .egress()
    }
}

/// What decides a run's egress, however it was given (flags, a `--json-io` request).
#[derive(Debug, Default)]
pub struct NetRules<'a> {
    pub allow: &'a [String],
    pub deny: &'a [String],
    pub presets: &'a [String],
    pub connect_to: &'a [String],
    /// `HOST=HEADER:ENV_VAR`.
    pub secrets: &'a [String],
    /// A TOML policy file.
    pub file: Option<&'a std::path::Path>,
    pub upstream_proxy: Option<&'a str>,
    pub trust_name: &'a [String],
    pub mirror: &'a [String],
    pub egress_ca: &'a [PathBuf],
}

impl NetRules<'_> {
    /// The egress configuration, or `None` when nothing is allowed and nothing is set for the install phase
    /// (loopback only; a configuration whose policy allows nothing also keeps the run on loopback).
    pub fn egress(&self) -> Result<Option<EgressConfig>, UsageError> {
        let usage = |e: &dyn std::fmt::Display| UsageError(e.to_string());
        // The environment, then the file, then the flags: a later one wins.
        let mut policy = base_policy(None, &[], &[])?;
        if let Some(file) = self.file {
            policy.add_file(file).map_err(|e| usage(&e))?;
        }
        if let Some(flag) = self.upstream_proxy {
            policy.upstream = upstream(Some(flag))?;
        }
        add_names_and_mirrors(&mut policy, self.trust_name, self.mirror)?;
        for p in self.presets {
            policy.add_preset(p).map_err(|e| usage(&e))?;
        }
        for a in self.allow {
            let rule = Rule::parse(a).map_err(|e| usage(&e))?;
            if matches!(&rule.target, airlock_egress::Target::Domain(d) if d == "localhost") {
                let port = rule.port.map_or("PORT".to_owned(), |p| p.to_string());
                tracing::warn!(
                    "--allow-net {a}: inside the sandbox `localhost` is the sandbox's own; to reach a service on this machine, use --allow-net 127.0.0.1:{port}"
                );
            }
            policy.allow.push(rule);
        }
        for d in self.deny {
            policy.deny.push(Rule::parse(d).map_err(|e| usage(&e))?);
        }
        for c in self.connect_to {
            policy
                .connect_to
                .push(ConnectTo::parse(c).map_err(|e| usage(&e))?);
        }
        let mut secrets = Vec::new();
        for s in self.secrets {
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
            // Nothing leaves the run itself; the operator's settings still serve its install phase.
            if policy.upstream.is_none()
                && policy.mirrors.is_empty()
                && policy.trusted.is_empty()
                && self.egress_ca.is_empty()
            {
                return Ok(None);
            }
        }
        Ok(Some(EgressConfig {
            policy,
            secrets,
            extra_ca: self.egress_ca.to_vec(),
            events: None,
            sinkhole: None,
        }))
    }
}

/// Reads an operator's policy file (`--policy FILE`): the schema of docs/policy.md, in TOML.
pub fn operator_policy(path: &std::path::Path) -> Result<airlock_types::policy::SourcedPolicy, UsageError> {
    let shown = path.display().to_string();
    let text = fs_err::read_to_string(path).map_err(|e| UsageError(format!("--policy {shown}: {e}")))?;
    let policy = airlock_scan::policy::parse_toml(&text, &shown)
        .map_err(|e| UsageError(format!("the operator's policy is not valid: {e}")))?;
    Ok(airlock_types::policy::SourcedPolicy {
        source: airlock_types::policy::PolicySource {
            role: "operator".into(),
            origin: "--policy".into(),
            file: shown,
            line: 1,
        },
        policy,
    })
}
