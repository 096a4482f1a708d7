//! An upstream proxy: the company proxy that airlock's own traffic has to go through. Allowed connections leave
//! through it (`CONNECT` for TLS and other TCP, absolute-form requests for plain HTTP) unless `NO_PROXY` names the
//! destination. Its credentials come from airlock's environment or the operator's policy, are sent to the proxy
//! only, and never enter the sandbox or the record.

use std::io::{Read, Write};
use std::net::{IpAddr, TcpStream};
use std::time::Duration;

use base64::Engine as _;

use crate::policy::{split_host_port, to_canonical, valid_domain};

/// One proxy: where it is and, when it asks for them, the credentials to send it.
#[derive(Clone, PartialEq, Eq)]
pub struct ProxyAddr {
    pub host: String,
    pub port: u16,
    /// `Basic …` credentials for `Proxy-Authorization`; never printed.
    auth: Option<String>,
}

impl std::fmt::Debug for ProxyAddr {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "ProxyAddr({})", self)
    }
}

impl std::fmt::Display for ProxyAddr {
    /// `host:port`, and whether credentials go with it (never the credentials).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.host.contains(':') {
            write!(f, "[{}]:{}", self.host, self.port)?;
        } else {
            write!(f, "{}:{}", self.host, self.port)?;
        }
        if self.auth.is_some() {
            f.write_str(" (with credentials)")?;
        }
        Ok(())
    }
}

impl ProxyAddr {
    /// Parses `http://[user:password@]host[:port][/]` (a bare `host:port` is taken as `http://`). Credentials may
    /// be percent-encoded, as in curl.
    pub fn parse(url: &str) -> Result<Self, String> {
        let bad = |why: &str| format!("invalid upstream proxy `{}`: {why}", redact(url));
        let url = url.trim();
        let rest = match url.split_once("://") {
            Some((scheme, rest)) if scheme.eq_ignore_ascii_case("http") => rest,
            Some((scheme, _)) => {
                return Err(bad(&format!(
                    "the scheme `{scheme}` is not supported (an HTTP proxy, `http://`)"
                )))
            }
            None => url,
        };
        let authority = rest.trim_end_matches('/');
        if authority.contains(['/', '?', '#']) {
            return Err(bad("a proxy URL has no path"));
        }
        let (userinfo, hostport) = match authority.rsplit_once('@') {
            Some((u, h)) => (Some(u), h),
            None => (None, authority),
        };
        let (host, port) = split_host_port(hostport).map_err(bad)?;
        let host = if let Ok(ip) = host.parse::<IpAddr>() {
            ip.to_string()
        } else {
            valid_domain(host).ok_or_else(|| bad("bad host name"))?
        };
        let auth = userinfo.map(|u| {
            let (user, pass) = u.split_once(':').unwrap_or((u, ""));
            let plain = format!("{}:{}", percent_decode(user), percent_decode(pass));
            format!(
                "Basic {}",
                base64::engine::general_purpose::STANDARD.encode(plain)
            )
        });
        Ok(Self {
            host,
            port: port.unwrap_or(80),
            auth,
        })
    }
}

/// A URL with its credentials replaced, for messages.
fn redact(url: &str) -> String {
    match (url.find("://"), url.rfind('@')) {
        (Some(s), Some(at)) if at > s => format!("{}***{}", &url[..s + 3], &url[at..]),
        (None, Some(at)) => format!("***{}", &url[at..]),
        _ => url.to_owned(),
    }
}

fn percent_decode(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' && i + 2 < b.len() {
            let hex = std::str::from_utf8(&b[i + 1..i + 3]).unwrap_or("");
            if let Ok(v) = u8::from_str_radix(hex, 16) {
                out.push(v);
                i += 3;
                continue;
            }
        }
        out.push(b[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// One `NO_PROXY` entry.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Bypass {
    All,
    /// A name and every name below it (`example.com`, `.example.com`, `*.example.com`).
    Suffix(String),
    Net {
        addr: IpAddr,
        prefix: u8,
    },
}

/// Where allowed traffic leaves: through these proxies, except for what `NO_PROXY` names.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Upstream {
    /// For plain HTTP.
    pub http: Option<ProxyAddr>,
    /// For TLS and any other TCP (`CONNECT`).
    pub https: Option<ProxyAddr>,
    no_proxy: Vec<Bypass>,
}

impl Upstream {
    /// From airlock's own environment, as curl reads it: `https_proxy`/`HTTPS_PROXY`, `http_proxy`/`HTTP_PROXY`
    /// (lower case first), `no_proxy`/`NO_PROXY`. `None` when no proxy is set.
    pub fn from_env() -> Result<Option<Self>, String> {
        let var = |names: [&str; 2]| {
            names
                .iter()
                .find_map(|n| std::env::var(n).ok().filter(|v| !v.trim().is_empty()))
        };
        let http = var(["http_proxy", "HTTP_PROXY"]);
        let https = var(["https_proxy", "HTTPS_PROXY"]);
        if http.is_none() && https.is_none() {
            return Ok(None);
        }
        let mut up = Self {
            http: http.as_deref().map(ProxyAddr::parse).transpose()?,
            https: https.as_deref().map(ProxyAddr::parse).transpose()?,
            no_proxy: Vec::new(),
        };
        if let Some(list) = var(["no_proxy", "NO_PROXY"]) {
            up.add_no_proxy(&list);
        }
        Ok(Some(up))
    }

    /// One proxy for both plain HTTP and the rest.
    pub fn single(url: &str) -> Result<Self, String> {
        let p = ProxyAddr::parse(url)?;
        Ok(Self {
            http: Some(p.clone()),
            https: Some(p),
            no_proxy: Vec::new(),
        })
    }

    /// Adds `NO_PROXY` entries, comma or space separated: `*`, names (a leading `.` or `*.` is the same as
    /// none: the name and every name below it), addresses and CIDR networks; a `:port` is ignored, as curl does.
    pub fn add_no_proxy(&mut self, list: &str) {
        for entry in list.split([',', ' ']).map(str::trim).filter(|e| !e.is_empty()) {
            if entry == "*" {
                self.no_proxy.push(Bypass::All);
                continue;
            }
            if let Some((a, p)) = entry.split_once('/') {
                if let (Ok(addr), Ok(prefix)) = (a.parse::<IpAddr>(), p.parse::<u8>()) {
                    self.no_proxy.push(Bypass::Net { addr, prefix });
                }
                continue;
            }
            let host = split_host_port(entry).map_or(entry, |(h, _)| h);
            if let Ok(addr) = host.parse::<IpAddr>() {
                let prefix = if addr.is_ipv4() { 32 } else { 128 };
                self.no_proxy.push(Bypass::Net { addr, prefix });
            } else if let Some(name) = valid_domain(host.trim_start_matches("*.").trim_start_matches('.')) {
                self.no_proxy.push(Bypass::Suffix(name));
            }
        }
    }

    /// Whether `NO_PROXY` sends this destination (a name or an address) direct.
    pub fn bypassed(&self, host: &str) -> bool {
        let ip = host
            .trim_start_matches('[')
            .trim_end_matches(']')
            .parse::<IpAddr>()
            .ok()
            .map(to_canonical);
        let name = host.to_ascii_lowercase();
        self.no_proxy.iter().any(|b| match (b, ip) {
            (Bypass::All, _) => true,
            (Bypass::Net { addr, prefix }, Some(ip)) => crate::policy::in_net(ip, *addr, *prefix),
            (Bypass::Suffix(s), None) => {
                name == *s || (name.ends_with(s.as_str()) && name[..name.len() - s.len()].ends_with('.'))
            }
            _ => false,
        })
    }

    /// The proxy for a connection to `host`: plain HTTP (`http`) or anything else; `None` to go direct.
    pub fn route(&self, host: &str, http: bool) -> Option<&ProxyAddr> {
        if self.bypassed(host) {
            return None;
        }
        if http {
            self.http.as_ref()
        } else {
            self.https.as_ref()
        }
    }
}

/// The `Proxy-Authorization` header line for a proxy, if it takes credentials.
pub(crate) fn auth_header(p: &ProxyAddr) -> String {
    p.auth
        .as_ref()
        .map_or(String::new(), |a| format!("Proxy-Authorization: {a}\r\n"))
}

/// Opens a tunnel to `host:port` through the proxy with `CONNECT`.
pub(crate) fn connect(p: &ProxyAddr, host: &str, port: u16, timeout: Duration) -> Result<TcpStream, String> {
    let mut s = open(p, timeout)?;
    let authority = if host.contains(':') {
        format!("[{host}]:{port}")
    } else {
        format!("{host}:{port}")
    };
    let _ = s.set_read_timeout(Some(timeout));
    s.write_all(
        format!(
            "CONNECT {authority} HTTP/1.1\r\nHost: {authority}\r\n{}\r\n",
            auth_header(p)
        )
        .as_bytes(),
    )
    .map_err(|e| format!("the upstream proxy {p}: {e}"))?;
    // Read the answer's head byte by byte, so nothing of the tunnel is consumed.
    let mut head = Vec::new();
    let mut b = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") {
        if head.len() > 16 * 1024 {
            return Err(format!("the upstream proxy {p} sent an answer too long"));
        }
        match s.read(&mut b) {
            Ok(1) => head.push(b[0]),
            Ok(_) => return Err(format!("the upstream proxy {p} closed the connection")),
            Err(e) => return Err(format!("the upstream proxy {p}: {e}")),
        }
    }
    let first = String::from_utf8_lossy(&head);
    let status = first.lines().next().unwrap_or_default();
    let code = status.split(' ').nth(1).unwrap_or_default();
    if !code.starts_with('2') {
        let shown: String = status.chars().filter(|c| !c.is_control()).take(100).collect();
        return Err(format!("the upstream proxy {p} refused the tunnel: {shown}"));
    }
    let _ = s.set_read_timeout(None);
    Ok(s)
}

/// Connects to the proxy itself.
pub(crate) fn open(p: &ProxyAddr, timeout: Duration) -> Result<TcpStream, String> {
    let addrs = std::net::ToSocketAddrs::to_socket_addrs(&(p.host.as_str(), p.port))
        .map_err(|e| format!("the upstream proxy {p} did not resolve: {e}"))?;
    let mut last = format!("the upstream proxy {p} has no address");
    for a in addrs {
        match TcpStream::connect_timeout(&a, timeout) {
            Ok(s) => return Ok(s),
            Err(e) => last = format!("the upstream proxy {p} ({a}): {e}"),
        }
    }
    Err(last)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn proxy_urls_parse_and_never_show_credentials() {
        let p = ProxyAddr::parse("http://alice:s%40cret@proxy.corp:8080/").unwrap();
        assert_eq!((p.host.as_str(), p.port), ("proxy.corp", 8080));
        assert_eq!(
            p.auth.as_deref(),
            Some(
                format!(
                    "Basic {}",
                    base64::engine::general_purpose::STANDARD.encode("alice:s@cret")
                )
                .as_str()
            )
        );
        assert!(!format!("{p} {p:?}").contains("cret"));
        assert_eq!(
            ProxyAddr::parse("10.0.0.1:3128").unwrap().to_string(),
            "10.0.0.1:3128"
        );
        assert_eq!(
            ProxyAddr::parse("http://[::1]:3128").unwrap().to_string(),
            "[::1]:3128"
        );
        for bad in [
            "socks5://p:1080",
            "http://p:99999",
            "http://p/path",
            "http://bad host",
        ] {
            let e = ProxyAddr::parse(bad).unwrap_err();
            assert!(e.contains("invalid upstream proxy"), "{e}");
        }
        let e = ProxyAddr::parse("https://bob:hunter2@p:1").unwrap_err();
        assert!(!e.contains("hunter2"), "{e}");
    }

    #[test]
    fn no_proxy_matches_names_below_addresses_and_networks() {
        let mut up = Upstream::single("http://proxy.corp:3128").unwrap();
        up.add_no_proxy("internal.corp, .svc.local,*.mirror.test, 10.0.0.0/8,192.168.1.5:80, ::1");
        for direct in [
            "internal.corp",
            "a.internal.corp",
            "x.svc.local",
            "svc.local",
            "pkg.mirror.test",
            "10.2.3.4",
            "192.168.1.5",
            "[::1]",
        ] {
            assert!(up.route(direct, false).is_none(), "{direct}");
        }
        for proxied in ["pypi.org", "notinternal.corp", "192.168.1.6", "11.0.0.1"] {
            assert!(up.route(proxied, true).is_some(), "{proxied}");
        }
        up.add_no_proxy("*");
        assert!(up.route("pypi.org", false).is_none());
    }
}
