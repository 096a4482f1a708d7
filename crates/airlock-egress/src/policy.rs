//! The egress policy: allow and deny rules by domain (with `*.` wildcards), IP or CIDR, and port. Deny wins; with
//! no rule that allows, the answer is no. Names resolve on the host; an address that is private, loopback or
//! link-local is refused even for an allowed name unless the user named that address (an IP or CIDR rule, or a
//! `connect_to` mapping).

use std::net::IpAddr;
use std::path::Path;

use serde::Deserialize;

#[derive(Debug, thiserror::Error)]
pub enum PolicyError {
    #[error("invalid network rule `{rule}`: {why}")]
    Rule { rule: String, why: String },
    #[error("unknown network preset `{0}` (known: none, package-registries, model-api)")]
    Preset(String),
    #[error("invalid `--connect-to` `{0}`: expected HOST:PORT=IP:PORT")]
    ConnectTo(String),
    #[error("network policy file {path}: {why}")]
    File { path: String, why: String },
    #[error("invalid trusted name `{0}`: expected a host name or `*.domain`, without a port")]
    Trust(String),
    #[error("invalid {ecosystem} mirror `{url}`: {why}")]
    Mirror {
        ecosystem: String,
        url: String,
        why: String,
    },
    #[error("{0}")]
    Upstream(String),
}

/// What a rule matches.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    /// An exact name (lower case, no trailing dot).
    Domain(String),
    /// `*.example.com`: any name below example.com (not example.com itself).
    Wildcard(String),
    /// An address or network.
    Net { addr: IpAddr, prefix: u8 },
    /// Everything (`*`).
    Any,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rule {
    pub target: Target,
    /// `None`: any port.
    pub port: Option<u16>,
    /// The rule as the user wrote it, quoted in the record.
    pub text: String,
}

impl Rule {
    /// Parses `example.com`, `*.example.com:443`, `10.0.0.0/8`, `[::1]:8080`, `1.2.3.4:80`, `*`.
    pub fn parse(text: &str) -> Result<Self, PolicyError> {
        let bad = |why: &str| PolicyError::Rule {
            rule: text.to_owned(),
            why: why.to_owned(),
        };
        let t = text.trim();
        if t.is_empty() {
            return Err(bad("empty"));
        }
        let (host, port) = split_host_port(t).map_err(bad)?;
        if port == Some(0) {
            return Err(bad("port 0"));
        }
        let target = if host == "*" {
            Target::Any
        } else if let Some((addr, prefix)) = host.split_once('/') {
            let addr: IpAddr = addr.parse().map_err(|_| bad("bad network address"))?;
            let max = if addr.is_ipv4() { 32 } else { 128 };
            let prefix: u8 = prefix.parse().map_err(|_| bad("bad prefix length"))?;
            if prefix > max {
                return Err(bad("prefix length too long"));
            }
            Target::Net { addr, prefix }
        } else if let Ok(addr) = host.parse::<IpAddr>() {
            Target::Net {
                addr,
                prefix: if addr.is_ipv4() { 32 } else { 128 },
            }
        } else if let Some(domain) = host.strip_prefix("*.") {
            Target::Wildcard(valid_domain(domain).ok_or_else(|| bad("bad domain"))?)
        } else {
            Target::Domain(valid_domain(host).ok_or_else(|| bad("bad domain"))?)
        };
        Ok(Self {
            target,
            port,
            text: t.to_owned(),
        })
    }

    fn port_ok(&self, port: u16) -> bool {
        self.port.is_none_or(|p| p == port)
    }

    fn matches_name(&self, name: &str, port: u16) -> bool {
        self.port_ok(port)
            && match &self.target {
                Target::Domain(d) => d == name,
                Target::Wildcard(d) => {
                    name.len() > d.len() + 1 && name.ends_with(d.as_str()) && {
                        name.as_bytes()[name.len() - d.len() - 1] == b'.'
                    }
                }
                Target::Any => true,
                Target::Net { .. } => false,
            }
    }

    fn matches_ip(&self, ip: IpAddr, port: u16) -> bool {
        self.port_ok(port)
            && match &self.target {
                Target::Net { addr, prefix } => in_net(ip, *addr, *prefix),
                Target::Any => true,
                _ => false,
            }
    }

    /// Whether every destination this rule allows is also allowed by `outer` (an operator's cap on a skill's rule).
    pub fn within(&self, outer: &Rule) -> bool {
        let port_ok = match (outer.port, self.port) {
            (None, _) => true,
            (Some(o), Some(i)) => o == i,
            (Some(_), None) => false,
        };
        port_ok
            && match (&outer.target, &self.target) {
                (Target::Any, _) => true,
                (_, Target::Any) => false,
                (Target::Domain(o), Target::Domain(i)) => o == i,
                (Target::Wildcard(o), Target::Domain(i) | Target::Wildcard(i)) => {
                    i.len() > o.len() && i.ends_with(&format!(".{o}"))
                        || matches!(self.target, Target::Wildcard(_)) && i == o
                }
                (Target::Net { addr: oa, prefix: op }, Target::Net { addr: ia, prefix: ip }) => {
                    ip >= op && in_net(*ia, *oa, *op)
                }
                _ => false,
            }
    }

    /// Whether this rule names an address explicitly (so a private address it covers is allowed).
    fn names_ip(&self, ip: IpAddr, port: u16) -> bool {
        matches!(self.target, Target::Net { .. }) && self.matches_ip(ip, port)
    }
}

/// Splits `host`, `host:port`, `[v6]` or `[v6]:port` (a bare IPv6 address is all host).
pub fn split_host_port(t: &str) -> Result<(&str, Option<u16>), &'static str> {
    let port = |p: &str| p.parse::<u16>().map_err(|_| "bad port");
    if let Some(rest) = t.strip_prefix('[') {
        let (inner, after) = rest.split_once(']').ok_or("unclosed `[`")?;
        return match after.strip_prefix(':') {
            Some(p) => Ok((inner, Some(port(p)?))),
            None if after.is_empty() => Ok((inner, None)),
            None => Err("text after `]`"),
        };
    }
    match t.split_once(':') {
        Some((h, p)) if !p.contains(':') => Ok((h, Some(port(p)?))),
        _ => Ok((t, None)),
    }
}

/// A name in canonical form, or `None` when it is not a plausible DNS name.
pub fn valid_domain(name: &str) -> Option<String> {
    let name = name.trim_end_matches('.').to_ascii_lowercase();
    let ok = !name.is_empty()
        && name.len() <= 253
        && name.split('.').all(|label| {
            !label.is_empty()
                && label.len() <= 63
                && label
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
                && !label.starts_with('-')
        });
    ok.then_some(name)
}

pub(crate) fn in_net(ip: IpAddr, net: IpAddr, prefix: u8) -> bool {
    let (ip, net, bits) = match (to_canonical(ip), to_canonical(net)) {
        (IpAddr::V4(a), IpAddr::V4(b)) => (u128::from(u32::from(a)), u128::from(u32::from(b)), 32u32),
        (IpAddr::V6(a), IpAddr::V6(b)) => (u128::from(a), u128::from(b), 128u32),
        _ => return false,
    };
    let prefix = u32::from(prefix);
    if prefix == 0 {
        return true;
    }
    let shift = bits - prefix;
    (ip >> shift) == (net >> shift)
}

/// IPv4-mapped IPv6 addresses compare as IPv4.
pub fn to_canonical(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(ip, IpAddr::V4),
        v4 => v4,
    }
}

/// Addresses of the host's own networks: loopback, private, link-local, shared, unspecified, multicast and the
/// like. A name that resolves to one is refused unless the address is named by a rule (DNS rebinding).
pub fn is_internal(ip: IpAddr) -> bool {
    match to_canonical(ip) {
        IpAddr::V4(v4) => {
            let o = v4.octets();
            v4.is_loopback()
                || v4.is_private()
                || v4.is_link_local()
                || v4.is_unspecified()
                || v4.is_broadcast()
                || v4.is_multicast()
                || v4.is_documentation()
                || o[0] == 0
                || (o[0] == 100 && (64..128).contains(&o[1]))
                || (o[0] == 198 && (o[1] == 18 || o[1] == 19))
                || o[0] >= 240
        }
        IpAddr::V6(v6) => {
            let s = v6.segments();
            v6.is_loopback()
                || v6.is_unspecified()
                || v6.is_multicast()
                || (s[0] & 0xfe00) == 0xfc00
                || (s[0] & 0xffc0) == 0xfe80
                || (s[0] == 0x2001 && s[1] == 0x0db8)
                || (s[0] == 0x64 && s[1] == 0xff9b)
        }
    }
}

/// A connection the user pointed somewhere else (`--connect-to api.test:443=127.0.0.1:8443`), like curl's
/// option of the same name. The address counts as named by the user.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConnectTo {
    pub host: String,
    pub port: u16,
    pub addr: std::net::SocketAddr,
}

impl ConnectTo {
    pub fn parse(text: &str) -> Result<Self, PolicyError> {
        let bad = || PolicyError::ConnectTo(text.to_owned());
        let (from, to) = text.split_once('=').ok_or_else(bad)?;
        let (host, port) = from.rsplit_once(':').ok_or_else(bad)?;
        Ok(Self {
            host: valid_domain(host).ok_or_else(bad)?,
            port: port.parse().map_err(|_| bad())?,
            addr: to.parse().map_err(|_| bad())?,
        })
    }
}

/// What the package managers fetch from: pip and uv (index and file hosts), npm, pnpm and yarn (classic and
/// berry), cargo (the sparse index, the API and the crate files) and Debian's and Ubuntu's apt archives (apt
/// fetches over plain HTTP and checks signatures itself). HTTPS only except apt.
pub const PACKAGE_REGISTRIES: &[&str] = &[
    "pypi.org:443",
    "files.pythonhosted.org:443",
    "registry.npmjs.org:443",
    "registry.yarnpkg.com:443",
    "repo.yarnpkg.com:443",
    "crates.io:443",
    "index.crates.io:443",
    "static.crates.io:443",
    "deb.debian.org:80",
    "deb.debian.org:443",
    "security.debian.org:80",
    "security.debian.org:443",
    "archive.ubuntu.com:80",
    "security.ubuntu.com:80",
];

/// A package ecosystem whose installs can be pointed at a mirror.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Ecosystem {
    /// pip and uv.
    Pypi,
    /// npm, pnpm and yarn.
    Npm,
    Cargo,
    Apt,
}

impl Ecosystem {
    pub fn parse(name: &str) -> Option<Self> {
        Some(match name {
            "pypi" | "pip" => Self::Pypi,
            "npm" => Self::Npm,
            "cargo" => Self::Cargo,
            "apt" => Self::Apt,
            _ => return None,
        })
    }

    pub fn name(self) -> &'static str {
        match self {
            Self::Pypi => "pypi",
            Self::Npm => "npm",
            Self::Cargo => "cargo",
            Self::Apt => "apt",
        }
    }
}

/// A registry mirror the operator named: installs in the sandbox are pointed at it, and its host is allowed and
/// trusted (it may have a private address).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mirror {
    pub ecosystem: Ecosystem,
    /// The URL as given (no credentials: they would be visible inside the sandbox).
    pub url: String,
    pub host: String,
    pub port: u16,
}

impl Mirror {
    pub fn parse(ecosystem: Ecosystem, url: &str) -> Result<Self, PolicyError> {
        let bad = |why: &str| PolicyError::Mirror {
            ecosystem: ecosystem.name().to_owned(),
            url: url.to_owned(),
            why: why.to_owned(),
        };
        // cargo's `sparse+` prefix is allowed.
        let plain = url.strip_prefix("sparse+").unwrap_or(url);
        let (scheme, rest) = plain
            .split_once("://")
            .ok_or_else(|| bad("expected an http:// or https:// URL"))?;
        let default_port = match scheme {
            "http" => 80,
            "https" => 443,
            _ => return Err(bad("expected an http:// or https:// URL")),
        };
        let authority = rest.split(['/', '?', '#']).next().unwrap_or_default();
        if authority.contains('@') {
            return Err(bad(
                "credentials in a mirror URL would be visible inside the sandbox; give them to the upstream proxy or with --secret",
            ));
        }
        if url
            .chars()
            .any(|c| c.is_whitespace() || c.is_control() || c == '"' || c == '\\')
        {
            return Err(bad("the URL holds a space, a quote or a control character"));
        }
        let (host, port) = split_host_port(authority).map_err(bad)?;
        let host = valid_domain(host).ok_or_else(|| bad("bad host name"))?;
        Ok(Self {
            ecosystem,
            url: url.to_owned(),
            host,
            port: port.unwrap_or(default_port),
        })
    }
}

/// The model APIs of the common agent CLIs, HTTPS only.
pub const MODEL_APIS: &[&str] = &[
    "api.anthropic.com:443",
    "api.openai.com:443",
    "generativelanguage.googleapis.com:443",
];

/// The rules that decide a run's network access.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Policy {
    pub allow: Vec<Rule>,
    pub deny: Vec<Rule>,
    pub connect_to: Vec<ConnectTo>,
    /// Presets that were applied, for the record.
    pub presets: Vec<String>,
    /// Names whose private addresses are expected (an internal mirror, a company Git server): they resolve
    /// normally, while every other name keeps the rebinding rule.
    pub trusted: Vec<Rule>,
    /// Registry mirrors that installs in the sandbox are pointed at.
    pub mirrors: Vec<Mirror>,
    /// The proxy allowed traffic leaves through, if any.
    pub upstream: Option<crate::Upstream>,
}

/// The outcome of a check, with the rule (or the reason) that decided.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Verdict {
    pub allowed: bool,
    pub rule: Option<String>,
    pub reason: String,
}

impl Verdict {
    fn allow(rule: &Rule) -> Self {
        Self {
            allowed: true,
            rule: Some(rule.text.clone()),
            reason: format!("allowed by `{}`", rule.text),
        }
    }

    fn deny(rule: Option<&Rule>, reason: impl Into<String>) -> Self {
        Self::refuse(rule.map(|r| r.text.clone()), reason)
    }

    /// A refusal, with the text of the rule that decided when one did.
    pub fn refuse(rule: Option<String>, reason: impl Into<String>) -> Self {
        Self {
            allowed: false,
            rule,
            reason: reason.into(),
        }
    }

    /// Allowed by no particular rule (an answer of the DNS stub, an address check that found nothing wrong).
    pub fn pass(reason: impl Into<String>) -> Self {
        Self {
            allowed: true,
            rule: None,
            reason: reason.into(),
        }
    }
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct PolicyFile {
    #[serde(default)]
    presets: Vec<String>,
    #[serde(default)]
    allow: Vec<String>,
    #[serde(default)]
    deny: Vec<String>,
    #[serde(default)]
    connect_to: Vec<String>,
    #[serde(default)]
    trusted_names: Vec<String>,
    /// `http://[user:password@]host:port`, or `none` to ignore the environment's proxy.
    upstream_proxy: Option<String>,
    #[serde(default)]
    no_proxy: Vec<String>,
    #[serde(default)]
    mirrors: std::collections::BTreeMap<String, String>,
}

impl Policy {
    /// Whether anything at all may leave the sandbox.
    pub fn is_open(&self) -> bool {
        !self.allow.is_empty()
    }

    pub fn add_preset(&mut self, name: &str) -> Result<(), PolicyError> {
        let rules: &[&str] = match name {
            "none" => &[],
            "package-registries" => PACKAGE_REGISTRIES,
            "model-api" => MODEL_APIS,
            other => return Err(PolicyError::Preset(other.to_owned())),
        };
        for r in rules {
            self.allow.push(Rule::parse(r)?);
        }
        self.presets.push(name.to_owned());
        Ok(())
    }

    /// Adds the rules of a TOML policy file: `presets`, `allow`, `deny` and `connect_to` lists.
    pub fn add_file(&mut self, path: &Path) -> Result<(), PolicyError> {
        let err = |why: String| PolicyError::File {
            path: path.display().to_string(),
            why,
        };
        let text = fs_err::read_to_string(path).map_err(|e| err(e.to_string()))?;
        let file: PolicyFile = toml::from_str(&text).map_err(|e| err(e.to_string()))?;
        for p in &file.presets {
            self.add_preset(p)?;
        }
        for a in &file.allow {
            self.allow.push(Rule::parse(a)?);
        }
        for d in &file.deny {
            self.deny.push(Rule::parse(d)?);
        }
        for c in &file.connect_to {
            self.connect_to.push(ConnectTo::parse(c)?);
        }
        for t in &file.trusted_names {
            self.trust_name(t)?;
        }
        for (name, url) in &file.mirrors {
            let eco = Ecosystem::parse(name)
                .ok_or_else(|| err(format!("unknown mirror `{name}` (known: pypi, npm, cargo, apt)")))?;
            self.add_mirror(eco, url)?;
        }
        match file.upstream_proxy.as_deref() {
            Some("none") => self.upstream = None,
            Some(url) => {
                self.upstream = Some(crate::Upstream::single(url).map_err(PolicyError::Upstream)?);
            }
            None => {}
        }
        if !file.no_proxy.is_empty() {
            let up = self
                .upstream
                .as_mut()
                .ok_or_else(|| err("`no_proxy` without an upstream proxy (`upstream_proxy`)".to_owned()))?;
            up.add_no_proxy(&file.no_proxy.join(","));
        }
        Ok(())
    }

    /// Trusts a name (or `*.domain`) to have a private address.
    pub fn trust_name(&mut self, text: &str) -> Result<(), PolicyError> {
        let rule = Rule::parse(text).map_err(|_| PolicyError::Trust(text.to_owned()))?;
        if rule.port.is_some() || !matches!(rule.target, Target::Domain(_) | Target::Wildcard(_)) {
            return Err(PolicyError::Trust(text.to_owned()));
        }
        self.trusted.push(rule);
        Ok(())
    }

    /// Whether a name is trusted to have a private address.
    pub fn is_trusted(&self, name: &str) -> bool {
        valid_domain(name).is_some_and(|n| self.trusted.iter().any(|r| r.matches_name(&n, 0)))
    }

    /// Points an ecosystem's installs at a mirror and trusts its host; the host is allowed wherever the
    /// `package-registries` preset is (the last mirror given for an ecosystem wins).
    pub fn add_mirror(&mut self, ecosystem: Ecosystem, url: &str) -> Result<(), PolicyError> {
        let m = Mirror::parse(ecosystem, url)?;
        self.trusted.push(Rule::parse(&m.host)?);
        self.mirrors.retain(|o| o.ecosystem != ecosystem);
        self.mirrors.push(m);
        Ok(())
    }

    /// The mirror for an ecosystem.
    pub fn mirror(&self, ecosystem: Ecosystem) -> Option<&Mirror> {
        self.mirrors.iter().find(|m| m.ecosystem == ecosystem)
    }

    /// May the sandbox reach `name:port`? (Before resolution; see [`Policy::check_resolved`].)
    pub fn check_name(&self, name: &str, port: u16) -> Verdict {
        let Some(name) = valid_domain(name) else {
            return Verdict::deny(None, "not a valid host name");
        };
        if let Some(r) = self.deny.iter().find(|r| r.matches_name(&name, port)) {
            return Verdict::deny(Some(r), format!("denied by `{}`", r.text));
        }
        if let Some(r) = self.allow.iter().find(|r| r.matches_name(&name, port)) {
            return Verdict::allow(r);
        }
        if self.presets.iter().any(|p| p == "package-registries") {
            if let Some(m) = self.mirrors.iter().find(|m| m.host == name && m.port == port) {
                return Verdict {
                    allowed: true,
                    rule: Some(format!("mirror {}={}", m.ecosystem.name(), m.url)),
                    reason: format!(
                        "allowed as the {} mirror (package-registries)",
                        m.ecosystem.name()
                    ),
                };
            }
        }
        Verdict::deny(None, format!("{name}:{port} is not on the allowlist"))
    }

    /// Whether the DNS stub answers `name`: some port of it is allowed (the connect is checked with its port).
    pub fn answers_name(&self, name: &str) -> bool {
        let ports = [443, 80]
            .into_iter()
            .chain(self.allow.iter().filter_map(|r| r.port));
        ports.into_iter().any(|p| self.check_name(name, p).allowed)
    }

    /// May the sandbox reach this address directly (a connect to a raw IP)?
    pub fn check_ip(&self, ip: IpAddr, port: u16) -> Verdict {
        let ip = to_canonical(ip);
        if let Some(r) = self.deny.iter().find(|r| r.matches_ip(ip, port)) {
            return Verdict::deny(Some(r), format!("denied by `{}`", r.text));
        }
        if is_internal(ip) && !self.allow.iter().any(|r| r.names_ip(ip, port)) {
            return Verdict::deny(
                None,
                format!("{ip} is a private or local address and no rule names it"),
            );
        }
        match self.allow.iter().find(|r| r.matches_ip(ip, port)) {
            Some(r) => Verdict::allow(r),
            None => Verdict::deny(None, format!("{ip}:{port} is not on the allowlist")),
        }
    }

    /// After resolving an allowed name: may the connection go to this address? Deny rules on addresses apply,
    /// and an internal address must be named by the user (a rule or a `connect_to`).
    pub fn check_resolved(&self, name: &str, ip: IpAddr, port: u16, via_connect_to: bool) -> Verdict {
        let ip = to_canonical(ip);
        if let Some(r) = self.deny.iter().find(|r| r.matches_ip(ip, port)) {
            return Verdict::deny(
                Some(r),
                format!("{name} resolved to {ip}, denied by `{}`", r.text),
            );
        }
        if is_internal(ip)
            && !via_connect_to
            && !self.is_trusted(name)
            && !self.allow.iter().any(|r| r.names_ip(ip, port))
        {
            return Verdict::deny(
                None,
                format!(
                    "{name} resolved to {ip}, a private or local address (DNS rebinding is refused); if {name} is an internal service you trust, add --trust-name {name} (or `trusted_names` in the policy file)"
                ),
            );
        }
        Verdict::pass("")
    }

    /// The allow rule that names this loopback address and port explicitly (`127.0.0.1:8080`): the user means a
    /// service on the host, so a connect to it inside the sandbox is sent there through the proxy.
    pub fn loopback_service(&self, ip: IpAddr, port: u16) -> Option<&Rule> {
        let ip = to_canonical(ip);
        if !ip.is_loopback() {
            return None;
        }
        self.allow
            .iter()
            .find(|r| {
                r.port == Some(port) && matches!(r.target, Target::Net { .. }) && r.matches_ip(ip, port)
            })
            .filter(|_| !self.deny.iter().any(|d| d.matches_ip(ip, port)))
    }

    /// Where to connect for `name:port`: the user's `connect_to` mapping if there is one.
    pub fn connect_to(&self, name: &str, port: u16) -> Option<std::net::SocketAddr> {
        self.connect_to
            .iter()
            .find(|c| c.host == name && c.port == port)
            .map(|c| c.addr)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn policy(allow: &[&str], deny: &[&str]) -> Policy {
        Policy {
            allow: allow.iter().map(|r| Rule::parse(r).unwrap()).collect(),
            deny: deny.iter().map(|r| Rule::parse(r).unwrap()).collect(),
            ..Policy::default()
        }
    }

    #[test]
    fn domains_wildcards_ports_and_deny_wins() {
        let p = policy(
            &["example.com", "*.pkg.test:443", "10.1.0.0/16:8080"],
            &["bad.pkg.test"],
        );
        assert!(p.check_name("example.com", 80).allowed);
        assert!(p.check_name("EXAMPLE.com.", 443).allowed);
        assert!(!p.check_name("www.example.com", 443).allowed);
        assert!(p.check_name("a.pkg.test", 443).allowed);
        assert!(!p.check_name("a.pkg.test", 80).allowed);
        assert!(!p.check_name("pkg.test", 443).allowed);
        assert!(!p.check_name("evilpkg.test", 443).allowed);
        let v = p.check_name("bad.pkg.test", 443);
        assert!(!v.allowed);
        assert_eq!(v.rule.as_deref(), Some("bad.pkg.test"));
        assert!(p.check_ip("10.1.2.3".parse().unwrap(), 8080).allowed);
        assert!(!p.check_ip("10.1.2.3".parse().unwrap(), 80).allowed);
        assert!(!p.check_ip("10.2.0.1".parse().unwrap(), 8080).allowed);
        assert!(p.check_ip("::ffff:10.1.0.9".parse().unwrap(), 8080).allowed);
    }

    #[test]
    fn internal_addresses_need_a_rule_that_names_them() {
        let p = policy(&["*"], &[]);
        assert!(!p.check_ip("127.0.0.1".parse().unwrap(), 80).allowed);
        assert!(!p.check_ip("169.254.169.254".parse().unwrap(), 80).allowed);
        assert!(
            !p.check_resolved("a.test", "192.168.1.1".parse().unwrap(), 443, false)
                .allowed
        );
        assert!(
            p.check_resolved("a.test", "192.168.1.1".parse().unwrap(), 443, true)
                .allowed
        );
        assert!(p.check_ip("93.184.216.34".parse().unwrap(), 443).allowed);
        let named = policy(&["127.0.0.1:8080"], &[]);
        assert!(named.check_ip("127.0.0.1".parse().unwrap(), 8080).allowed);
        assert!(
            named
                .check_resolved("a.test", "127.0.0.1".parse().unwrap(), 8080, false)
                .allowed
        );
    }

    #[test]
    fn bad_rules_are_errors() {
        for bad in [
            "",
            "a b",
            "1.2.3.4/40",
            "host:0",
            "host:99999",
            "[::1",
            "-bad.test",
            "x..y",
        ] {
            assert!(Rule::parse(bad).is_err(), "{bad}");
        }
        assert!(ConnectTo::parse("api.test:443=127.0.0.1:8443").is_ok());
        assert!(ConnectTo::parse("api.test=127.0.0.1").is_err());
    }

    #[test]
    fn a_policy_file_holds_trusted_names_an_upstream_proxy_and_mirrors() {
        let dir = std::env::temp_dir().join(format!("airlock-policy-file-{}", std::process::id()));
        fs_err::create_dir_all(&dir).unwrap();
        let file = dir.join("net.toml");
        fs_err::write(
            &file,
            "presets = [\"package-registries\"]\ntrusted_names = [\"git.corp\", \"*.svc.corp\"]\nupstream_proxy = \"http://u:p@proxy.corp:3128\"\nno_proxy = [\".corp\"]\n[mirrors]\npypi = \"https://pypi.mirror/simple/\"\n",
        )
        .unwrap();
        let mut p = Policy::default();
        p.add_file(&file).unwrap();
        assert!(p.is_trusted("git.corp") && p.is_trusted("a.svc.corp") && !p.is_trusted("other.test"));
        let up = p.upstream.clone().unwrap();
        assert!(up.route("pypi.org", false).is_some() && up.route("git.corp", false).is_none());
        assert_eq!(
            p.check_name("pypi.mirror", 443).rule.as_deref(),
            Some("mirror pypi=https://pypi.mirror/simple/")
        );
        for (bad, says) in [
            ("[mirrors]\ngems = \"https://x.test/\"\n", "unknown mirror `gems`"),
            (
                "no_proxy = [\"a\"]\nupstream_proxy = \"none\"\n",
                "without an upstream proxy",
            ),
            ("trusted_names = [\"10.0.0.1\"]\n", "invalid trusted name"),
            ("trusted_names = [\"a.test:443\"]\n", "invalid trusted name"),
            ("upstream_proxy = \"socks5://p:1\"\n", "not supported"),
            ("trusted = [\"a.test\"]\n", "unknown field `trusted`"),
        ] {
            fs_err::write(&file, bad).unwrap();
            let e = Policy::default().add_file(&file).unwrap_err().to_string();
            assert!(e.contains(says), "{bad}: {e}");
        }
        let _ = fs_err::remove_dir_all(dir);
    }
}
