//! Where a shared server's fetches may go: a [`FetchGuard`] sends every HTTP request of a clone (the first one and
//! every redirect) through an egress proxy of airlock's own on the host's loopback, which resolves each name itself
//! and connects only to the address it checked. Loopback, private, link-local, unique-local and the other internal
//! ranges are refused unless the operator named the host or range; so an import cannot be aimed at the server's own
//! network (a request forgery), whether by the URL, by a name that resolves inward, or by a redirect.

use std::net::{Ipv4Addr, TcpListener};
use std::time::{Duration, Instant};

use airlock_egress::{Egress, EgressConfig, Policy, PolicyError, Rule, Target};
use airlock_types::NetDecision;

/// The fetch policy of a server: public addresses, and the internal hosts and ranges its operator allows.
#[derive(Debug, Clone)]
pub struct FetchGuard {
    policy: Policy,
}

impl Default for FetchGuard {
    /// Public addresses only, directly (no upstream proxy, no trusted names).
    fn default() -> Self {
        Self {
            policy: Policy {
                allow: vec![Rule {
                    target: Target::Any,
                    port: None,
                    text: "*".into(),
                }],
                ..Policy::default()
            },
        }
    }
}

impl FetchGuard {
    /// A guard that keeps the operator's egress settings (upstream proxy, trusted names) and also allows each of
    /// `allow` (`git.corp.example`, `*.corp.example`, `10.1.0.0/16`, `10.1.2.3`) to be internal.
    pub fn new(base: &Policy, allow: &[String]) -> Result<Self, PolicyError> {
        let mut policy = Self::default().policy;
        policy.upstream = base.upstream.clone();
        policy.trusted = base.trusted.clone();
        for text in allow {
            let rule = Rule::parse(text)?;
            match rule.target {
                Target::Net { .. } => policy.allow.push(rule),
                Target::Domain(_) | Target::Wildcard(_) => policy.trust_name(text)?,
                Target::Any => {
                    return Err(PolicyError::Rule {
                        rule: text.clone(),
                        why: "name the hosts or ranges to allow; `*` would open the whole internal network"
                            .into(),
                    })
                }
            }
        }
        Ok(Self { policy })
    }

    /// Starts the proxy for one fetch.
    pub(crate) fn start(&self) -> std::io::Result<Guarded> {
        let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0))?;
        let url = format!("http://{}", listener.local_addr()?);
        let config = EgressConfig {
            policy: self.policy.clone(),
            ..EgressConfig::default()
        };
        let egress = Egress::new(config, Instant::now()).map_err(std::io::Error::other)?;
        egress.serve_proxy(listener);
        Ok(Guarded { egress, url })
    }
}

/// A proxy serving one fetch.
pub(crate) struct Guarded {
    egress: Egress,
    /// `http://127.0.0.1:PORT`.
    pub(crate) url: String,
}

impl Guarded {
    /// Stops the proxy; why it refused a connection, if it did.
    pub(crate) fn finish(self) -> Option<String> {
        let (attempts, _) = self.egress.finish(Duration::from_millis(200));
        let denied = attempts.into_iter().find(|a| a.decision == NetDecision::Denied)?;
        // The proxy's own hint names the flags of a sandboxed run; a fetch has its own.
        let reason = denied.reason.split("; if ").next().unwrap_or_default().to_owned();
        let host = denied.host.unwrap_or_else(|| denied.destination.clone());
        Some(format!(
            "{reason}; a server fetches from internal addresses only where its operator allows the host or range              (--allow-import {host})"
        ))
    }
}

/// Whether a git URL is fetched over HTTP(S), the one transport a guard can watch.
pub(crate) fn is_http(url: &str) -> bool {
    let lower = url.get(..8).unwrap_or(url).to_ascii_lowercase();
    lower.starts_with("https://") || lower.starts_with("http://")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn allowed_hosts_and_ranges_are_named_and_a_wildcard_is_refused() {
        let g = FetchGuard::new(
            &Policy::default(),
            &["git.corp.example".into(), "10.1.0.0/16".into()],
        )
        .unwrap();
        assert!(g.policy.is_trusted("git.corp.example"));
        assert!(!g.policy.is_trusted("other.corp.example"));
        let ip = "10.1.2.3".parse().unwrap();
        assert!(g.policy.check_ip(ip, 443).allowed);
        assert!(!g.policy.check_ip("10.2.0.1".parse().unwrap(), 443).allowed);
        assert!(!g.policy.check_ip("127.0.0.1".parse().unwrap(), 80).allowed);
        assert!(!g.policy.check_ip("169.254.169.254".parse().unwrap(), 80).allowed);
        assert!(g.policy.check_ip("140.82.112.3".parse().unwrap(), 443).allowed);
        let r = g
            .policy
            .check_resolved("evil.example", "127.0.0.1".parse().unwrap(), 80, false);
        assert!(!r.allowed);
        assert!(FetchGuard::new(&Policy::default(), &["*".into()]).is_err());
        assert!(FetchGuard::new(&Policy::default(), &["not a host".into()]).is_err());
    }

    #[test]
    fn only_http_urls_are_watched() {
        assert!(is_http("https://github.com/a/b"));
        assert!(is_http("HTTP://x/y"));
        for other in [
            "ssh://git@x/y",
            "git://x/y",
            "git@x:y",
            "file:///tmp/x",
            "ext::sh -c x",
        ] {
            assert!(!is_http(other), "{other}");
        }
    }
}
