//! Egress for sandboxed runs. The sandbox's network namespace has only `lo`; when a policy allows anything, the
//! sandbox's init opens a TCP listener on `127.0.0.1:3128` and a UDP socket on `127.0.0.1:53` inside that
//! namespace and hands both to the supervisor, which serves them here, on the host side:
//!
//! - the TCP listener is an HTTP proxy (`CONNECT` with the TLS server name checked against the host, and plain
//!   HTTP with the Host header checked against the URL) for programs that honour `HTTP_PROXY`, and the end point
//!   of every other TCP connect, which the runner captures and hands over with its original destination
//!   ([`Egress::capture`]);
//! - the UDP socket is a DNS stub that answers allowed names with addresses from a reserved range mapped back to
//!   the names, and nothing else.
//!
//! The proxy resolves names itself, refuses internal addresses that the user did not name, adds per-host secret
//! headers that never enter the sandbox, and records every attempt with the rule that decided it and the bytes
//! that went each way.

mod dns;
mod policy;
mod setup;
mod sinkhole;
mod sni;
mod upstream;

use std::collections::HashMap;
use std::io::{Read, Write};
use std::net::{IpAddr, Ipv4Addr, Shutdown, SocketAddr, TcpListener, TcpStream, UdpSocket};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use airlock_types::{NetAttempt, NetDecision};

pub use policy::{
    is_internal, split_host_port, to_canonical, valid_domain, ConnectTo, Ecosystem, Mirror, Policy,
    PolicyError, Rule, Target, Verdict,
};
pub use setup::{FileContent, SandboxSetup, SANDBOX_ETC};
pub use sinkhole::{Canary, Sinkhole};
pub use upstream::{ProxyAddr, Upstream};

/// The proxy's port inside the sandbox.
pub const PROXY_PORT: u16 = 3128;
/// Most attempts kept in a record.
const MAX_ATTEMPTS: usize = 10_000;
const HEAD_LIMIT: usize = 64 * 1024;
const BODY_LIMIT: usize = 64 << 20;
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
/// Most connections served at once; more are refused (and recorded) so a run cannot exhaust the host's threads.
const MAX_ACTIVE: usize = 256;
const IO_TIMEOUT: Duration = Duration::from_secs(300);

/// A secret header the proxy adds to requests for one host. The value never enters the sandbox and is never
/// recorded or printed.
#[derive(Clone)]
pub struct Secret {
    pub host: String,
    pub header: String,
    pub value: String,
}

impl std::fmt::Debug for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Secret({} for {}, value hidden)", self.header, self.host)
    }
}

impl Secret {
    /// Parses `HOST=HEADER:ENV_VAR`, taking the value from airlock's own environment variable.
    pub fn from_env_spec(spec: &str) -> Result<Self, String> {
        let bad = || format!("invalid --secret `{spec}`: expected HOST=HEADER:ENV_VAR");
        let (host, rest) = spec.split_once('=').ok_or_else(bad)?;
        let (header, var) = rest.split_once(':').ok_or_else(bad)?;
        let host = valid_domain(host).ok_or_else(bad)?;
        if header.is_empty()
            || !header
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
        {
            return Err(bad());
        }
        let value =
            std::env::var(var).map_err(|_| format!("--secret: environment variable {var} is not set"))?;
        if value.bytes().any(|b| b == b'\r' || b == b'\n') {
            return Err(format!("--secret: {var} holds a line break"));
        }
        Ok(Self {
            host,
            header: header.to_owned(),
            value,
        })
    }
}

/// Everything that decides a run's egress.
#[derive(Debug, Clone, Default)]
pub struct EgressConfig {
    pub policy: Policy,
    pub secrets: Vec<Secret>,
    /// Extra CA certificates (PEM) trusted for TLS the proxy starts itself (secret injection).
    pub extra_ca: Vec<PathBuf>,
    /// Where each attempt is also reported as it is recorded (live progress).
    pub events: Option<airlock_types::EventSink>,
    /// A detonation: every name resolves to the sinkhole and every TCP connect ends there; the policy is not
    /// consulted and nothing leaves the machine.
    pub sinkhole: Option<Arc<Sinkhole>>,
}

impl EgressConfig {
    pub fn is_open(&self) -> bool {
        self.policy.is_open() || self.sinkhole.is_some()
    }
}

#[derive(Debug, thiserror::Error)]
pub enum EgressError {
    #[error("CA file {0}: {1}")]
    Ca(String, String),
    #[error("TLS set-up: {0}")]
    Tls(String),
}

/// Where a captured connect was going.
#[derive(Debug, Clone)]
pub struct Captured {
    pub pid: i32,
    /// `None` for a client of the explicit proxy.
    pub target: Option<(IpAddr, u16)>,
}

/// What the runner should do with a connect to a non-loopback address.
#[derive(Debug)]
pub enum ConnectDecision {
    /// Hand the socket to the proxy.
    Capture,
    /// Refuse it (the attempt is already recorded).
    Refuse,
}

struct Names {
    by_name: HashMap<String, Ipv4Addr>,
    by_addr: HashMap<Ipv4Addr, String>,
    next: u32,
}

struct Inner {
    config: EgressConfig,
    tls: Option<Arc<rustls::ClientConfig>>,
    started: Instant,
    attempts: Mutex<Vec<NetAttempt>>,
    dropped: AtomicUsize,
    captured: Mutex<HashMap<u16, Captured>>,
    names: Mutex<Names>,
    seen_queries: Mutex<std::collections::HashSet<(String, u16, bool)>>,
    stop: AtomicBool,
    active: AtomicUsize,
}

/// The host side of a run's egress. Cheap to clone.
#[derive(Clone)]
pub struct Egress {
    inner: Arc<Inner>,
}

const FAKE_BASE: u32 = u32::from_be_bytes([198, 18, 0, 1]);
const FAKE_LAST: u32 = u32::from_be_bytes([198, 19, 255, 254]);

impl Egress {
    pub fn new(config: EgressConfig, started: Instant) -> Result<Self, EgressError> {
        let tls = if config.secrets.is_empty() {
            None
        } else {
            Some(Arc::new(tls_config(&config.extra_ca)?))
        };
        Ok(Self {
            inner: Arc::new(Inner {
                config,
                tls,
                started,
                attempts: Mutex::new(Vec::new()),
                dropped: AtomicUsize::new(0),
                captured: Mutex::new(HashMap::new()),
                names: Mutex::new(Names {
                    by_name: HashMap::new(),
                    by_addr: HashMap::new(),
                    next: FAKE_BASE,
                }),
                seen_queries: Mutex::new(std::collections::HashSet::new()),
                stop: AtomicBool::new(false),
                active: AtomicUsize::new(0),
            }),
        })
    }

    pub fn policy(&self) -> &Policy {
        &self.inner.config.policy
    }

    /// Serves the proxy listener and the DNS stub (both created inside the sandbox) on background threads.
    pub fn serve(&self, listener: TcpListener, dns: UdpSocket) {
        let me = self.clone();
        std::thread::spawn(move || me.accept_loop(&listener));
        let me = self.clone();
        std::thread::spawn(move || me.dns_loop(&dns));
    }

    /// Serves only the HTTP proxy, on a listener of the host's own (a server's imports go through it), on a
    /// background thread; [`Egress::finish`] stops it.
    pub fn serve_proxy(&self, listener: TcpListener) {
        let me = self.clone();
        std::thread::spawn(move || me.accept_loop(&listener));
    }

    /// Called by the runner for a connect to `ip:port` from sandbox process `pid`: decides from the policy and the
    /// DNS stub's names whether the proxy takes the connection. A refusal is recorded here.
    pub fn decide_connect(&self, pid: i32, ip: IpAddr, port: u16, stream: bool) -> ConnectDecision {
        let ip = policy::to_canonical(ip);
        let host = self.name_of(ip);
        let destination = dest(host.as_deref(), Some(ip), port);
        let sinkhole = self.inner.config.sinkhole.is_some();
        if sinkhole && stream {
            return ConnectDecision::Capture;
        }
        let verdict = if !stream && sinkhole {
            Verdict::refuse(None, "UDP is recorded, not carried: the sinkhole takes TCP only")
        } else if !stream {
            Verdict::refuse(None, "UDP (and QUIC) is refused; only TCP goes through the proxy")
        } else if let Some(h) = &host {
            self.policy().check_name(h, port)
        } else if matches!(ip, IpAddr::V4(v4) if (FAKE_BASE..=FAKE_LAST).contains(&u32::from(v4))) {
            Verdict::refuse(None, "not an address the DNS stub gave out")
        } else {
            self.policy().check_ip(ip, port)
        };
        if verdict.allowed {
            return ConnectDecision::Capture;
        }
        let protocol = if stream { "tcp" } else { "udp" };
        self.record(attempt(
            self.t_ms(),
            pid,
            protocol,
            destination,
            host,
            Some(port),
            &verdict,
        ));
        ConnectDecision::Refuse
    }

    /// Registers a captured connection by the sandbox-side local port it will arrive from.
    pub fn capture(&self, local_port: u16, captured: Captured) {
        lock(&self.inner.captured).insert(local_port, captured);
    }

    /// Records an attempt seen elsewhere (the runner's refusals of raw sockets).
    pub fn record(&self, a: NetAttempt) {
        if let Some(sink) = &self.inner.config.events {
            sink.send(airlock_types::LiveEvent::Net(a.clone()));
        }
        let mut list = lock(&self.inner.attempts);
        if list.len() < MAX_ATTEMPTS {
            list.push(a);
        } else {
            self.inner.dropped.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// Stops serving (after waiting up to `grace` for open connections) and returns every attempt, in order.
    pub fn finish(&self, grace: Duration) -> (Vec<NetAttempt>, u64) {
        self.inner.stop.store(true, Ordering::Relaxed);
        let until = Instant::now() + grace;
        while self.inner.active.load(Ordering::Relaxed) > 0 && Instant::now() < until {
            std::thread::sleep(Duration::from_millis(5));
        }
        let mut list = lock(&self.inner.attempts).clone();
        list.sort_by_key(|a| a.t_ms);
        (list, self.inner.dropped.load(Ordering::Relaxed) as u64)
    }

    fn t_ms(&self) -> u64 {
        u64::try_from(self.inner.started.elapsed().as_millis()).unwrap_or(u64::MAX)
    }

    fn name_of(&self, ip: IpAddr) -> Option<String> {
        let IpAddr::V4(v4) = ip else { return None };
        lock(&self.inner.names).by_addr.get(&v4).cloned()
    }

    fn fake_addr(&self, name: &str) -> Option<Ipv4Addr> {
        let mut names = lock(&self.inner.names);
        if let Some(a) = names.by_name.get(name) {
            return Some(*a);
        }
        if names.next > FAKE_LAST {
            return None;
        }
        let addr = Ipv4Addr::from(names.next);
        names.next += 1;
        names.by_name.insert(name.to_owned(), addr);
        names.by_addr.insert(addr, name.to_owned());
        Some(addr)
    }

    fn dns_loop(&self, sock: &UdpSocket) {
        let _ = sock.set_read_timeout(Some(Duration::from_millis(100)));
        let mut buf = [0u8; 512];
        while !self.inner.stop.load(Ordering::Relaxed) {
            let Ok((n, from)) = sock.recv_from(&mut buf) else {
                continue;
            };
            let Some(q) = dns::parse(&buf[..n]) else {
                continue;
            };
            let sinkhole = self.inner.config.sinkhole.as_deref();
            let name_ok = sinkhole.is_some() || self.policy().answers_name(&q.name);
            let addr = if name_ok && q.qtype == dns::TYPE_A {
                self.fake_addr(&q.name)
            } else {
                None
            };
            let reply = dns::answer(&q, addr, !name_ok);
            let _ = sock.send_to(&reply, from);
            let first = {
                let mut seen = lock(&self.inner.seen_queries);
                seen.len() < MAX_ATTEMPTS && seen.insert((q.name.clone(), q.qtype, name_ok))
            };
            if let (Some(sink), true) = (sinkhole, first) {
                let mut a = attempt(
                    self.t_ms(),
                    0,
                    "dns",
                    format!("{} ({})", q.name, dns::type_name(q.qtype)),
                    Some(q.name.clone()),
                    Some(53),
                    &Verdict::refuse(None, "answered with a sinkhole address; nothing is forwarded"),
                );
                a.decision = NetDecision::Sinkholed;
                a.catch = Some(Box::new(sinkhole::dns_catch(sink, &q.name)));
                self.record(a);
            } else if first {
                let verdict = if name_ok {
                    Verdict::pass("answered by the DNS stub with a proxy address; nothing is forwarded")
                } else {
                    Verdict::refuse(
                        None,
                        "name not on the allowlist: answered NXDOMAIN, nothing is forwarded",
                    )
                };
                self.record(attempt(
                    self.t_ms(),
                    0,
                    "dns",
                    format!("{} ({})", q.name, dns::type_name(q.qtype)),
                    Some(q.name.clone()),
                    Some(53),
                    &verdict,
                ));
            }
        }
    }

    fn accept_loop(&self, listener: &TcpListener) {
        let _ = listener.set_nonblocking(true);
        while !self.inner.stop.load(Ordering::Relaxed) {
            match listener.accept() {
                Ok((stream, peer)) => {
                    if self.inner.active.load(Ordering::Relaxed) >= MAX_ACTIVE {
                        let pid = lock(&self.inner.captured)
                            .remove(&peer.port())
                            .map_or(0, |c| c.pid);
                        let _ = stream.shutdown(Shutdown::Both);
                        self.record(attempt(
                            self.t_ms(),
                            pid,
                            "tcp",
                            "proxy".into(),
                            None,
                            None,
                            &Verdict::refuse(None, format!("more than {MAX_ACTIVE} connections at once")),
                        ));
                        continue;
                    }
                    let _ = stream.set_nonblocking(false);
                    let me = self.clone();
                    me.inner.active.fetch_add(1, Ordering::Relaxed);
                    std::thread::spawn(move || {
                        me.handle(stream, peer);
                        me.inner.active.fetch_sub(1, Ordering::Relaxed);
                    });
                }
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                    let mut pfd = libc::pollfd {
                        fd: std::os::fd::AsRawFd::as_raw_fd(listener),
                        events: libc::POLLIN,
                        revents: 0,
                    };
                    // SAFETY: one valid pollfd.
                    unsafe { libc::poll(&mut pfd, 1, 100) };
                }
                Err(_) => std::thread::sleep(Duration::from_millis(10)),
            }
        }
    }

    fn handle(&self, client: TcpStream, peer: SocketAddr) {
        let captured = lock(&self.inner.captured).remove(&peer.port());
        let pid = captured.as_ref().map_or(0, |c| c.pid);
        if let Some(sink) = self.inner.config.sinkhole.clone() {
            return sinkhole::serve(self, &sink, client, pid, captured.and_then(|c| c.target));
        }
        let _ = client.set_read_timeout(Some(IO_TIMEOUT));
        let _ = client.set_write_timeout(Some(IO_TIMEOUT));
        let t_ms = self.t_ms();
        let mut conn = Conn {
            egress: self,
            client,
            pid,
            t_ms,
            via: None,
        };
        match captured.and_then(|c| c.target) {
            Some((ip, port)) => conn.transparent(ip, port),
            None => conn.explicit(),
        }
    }
}

struct Conn<'a> {
    egress: &'a Egress,
    client: TcpStream,
    pid: i32,
    t_ms: u64,
    /// The upstream proxy the connection went through, for the record.
    via: Option<String>,
}

/// How a connection leaves.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Leg {
    /// A plain HTTP request that airlock forwards itself: through the upstream HTTP proxy in absolute form.
    Http,
    /// Anything else: through the upstream proxy with `CONNECT`.
    Tunnel,
}

/// An open connection towards the destination.
struct Upstreamed {
    stream: TcpStream,
    verdict: Verdict,
    name: Option<String>,
    /// The address connected to; `None` when an upstream proxy resolved the name.
    ip: Option<IpAddr>,
    /// Set when the stream is to the upstream HTTP proxy itself: requests go in absolute form with this
    /// `Proxy-Authorization` line (possibly empty).
    absolute: Option<String>,
}

/// What a request head says.
struct Head {
    method: String,
    target: String,
    headers: Vec<(String, String)>,
    /// Bytes after the head that were already read.
    rest: Vec<u8>,
}

impl Head {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

impl Conn<'_> {
    fn policy(&self) -> &Policy {
        self.egress.policy()
    }

    fn finish(
        &self,
        protocol: &str,
        host: Option<String>,
        ip: Option<IpAddr>,
        port: u16,
        verdict: &Verdict,
        (up, down, secret): (u64, u64, bool),
    ) {
        let destination = dest(host.as_deref(), ip, port);
        let mut a = attempt(
            self.t_ms,
            self.pid,
            protocol,
            destination,
            host,
            Some(port),
            verdict,
        );
        a.via.clone_from(&self.via);
        a.bytes_up = up;
        a.bytes_down = down;
        a.secret_injected = secret;
        self.egress.record(a);
    }

    fn refuse(
        &mut self,
        protocol: &str,
        host: Option<String>,
        ip: Option<IpAddr>,
        port: u16,
        verdict: &Verdict,
        http: bool,
    ) {
        if http {
            let body = format!("airlock: {}\n", verdict.reason);
            let _ = write!(
                self.client,
                "HTTP/1.1 403 Forbidden\r\nX-Airlock-Reason: {}\r\nContent-Type: text/plain\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{}",
                verdict.reason.replace(['\r', '\n'], " "),
                body.len(),
                body
            );
        }
        let _ = self.client.shutdown(Shutdown::Both);
        self.finish(protocol, host, ip, port, verdict, (0, 0, false));
    }

    /// Reads a request head from the client.
    fn read_head(&mut self, initial: Vec<u8>) -> Option<Head> {
        let mut buf = initial;
        let mut chunk = [0u8; 4096];
        let end = loop {
            if let Some(i) = find(&buf, b"\r\n\r\n") {
                break i + 4;
            }
            if buf.len() > HEAD_LIMIT {
                return None;
            }
            let n = self.client.read(&mut chunk).ok()?;
            if n == 0 {
                return None;
            }
            buf.extend_from_slice(&chunk[..n]);
        };
        let text = std::str::from_utf8(&buf[..end]).ok()?;
        let mut lines = text.split("\r\n");
        let mut first = lines.next()?.split(' ');
        let (method, target, version) = (first.next()?, first.next()?, first.next()?);
        if !version.starts_with("HTTP/1.")
            || method.is_empty()
            || !method.bytes().all(|b| b.is_ascii_uppercase())
        {
            return None;
        }
        let mut headers = Vec::new();
        for l in lines.filter(|l| !l.is_empty()) {
            let (k, v) = l.split_once(':')?;
            headers.push((k.trim().to_owned(), v.trim().to_owned()));
        }
        Some(Head {
            method: method.to_owned(),
            target: target.to_owned(),
            headers,
            rest: buf[end..].to_vec(),
        })
    }

    fn bad_request(&mut self, reason: Option<&str>) {
        let reason = reason.map_or(String::new(), |r| format!("X-Airlock-Reason: {r}\r\n"));
        let _ = write!(
            self.client,
            "HTTP/1.1 400 Bad Request\r\n{reason}Connection: close\r\n\r\n"
        );
    }

    /// A client of `HTTP_PROXY`: `CONNECT host:port` or an absolute-form plain HTTP request.
    fn explicit(&mut self) {
        let Some(head) = self.read_head(Vec::new()) else {
            return self.bad_request(None);
        };
        if head.method == "CONNECT" {
            let Some((host, port)) = split_authority(&head.target, 443) else {
                return self.bad_request(None);
            };
            self.connect_tunnel(&host, port, &head.rest);
        } else if let Some(rest) = head.target.strip_prefix("http://") {
            let authority = rest.split(['/', '?', '#']).next().unwrap_or_default();
            let Some((host, port)) = split_authority(authority, 80) else {
                return self.bad_request(None);
            };
            let path = &rest[authority.len()..];
            let path = if path.is_empty() {
                "/".to_owned()
            } else {
                path.to_owned()
            };
            self.plain_http(&host, port, &head, &path, "http");
        } else {
            self.bad_request(Some("only CONNECT and http:// requests go through this proxy"));
        }
    }

    /// Checks a destination given by name or address and connects to it, directly or through the upstream proxy;
    /// records and answers a refusal.
    fn open_upstream(
        &mut self,
        protocol: &str,
        host: &str,
        port: u16,
        http: bool,
        leg: Leg,
    ) -> Option<Upstreamed> {
        let ip_given = host
            .trim_start_matches('[')
            .trim_end_matches(']')
            .parse::<IpAddr>()
            .ok();
        let (verdict, name) = if let Some(ip) = ip_given {
            let v = self.policy().check_ip(ip, port);
            if !v.allowed {
                self.refuse(protocol, None, Some(ip), port, &v, http);
                return None;
            }
            (v, None)
        } else {
            let Some(name) = valid_domain(host) else {
                let v = Verdict::refuse(None, "not a valid host name");
                self.refuse(
                    protocol,
                    Some(host.chars().take(100).collect()),
                    None,
                    port,
                    &v,
                    http,
                );
                return None;
            };
            let v = self.policy().check_name(&name, port);
            if !v.allowed {
                self.refuse(protocol, Some(name), None, port, &v, http);
                return None;
            }
            (v, Some(name))
        };
        // A `connect_to` mapping says where to connect: it never goes through the upstream proxy.
        let mapped = name.as_deref().and_then(|n| self.policy().connect_to(n, port));
        let target = name
            .clone()
            .unwrap_or_else(|| ip_given.map(|i| i.to_string()).unwrap_or_default());
        // Nor does this machine's own loopback.
        let loopback = ip_given.is_some_and(|i| to_canonical(i).is_loopback());
        let proxy = if mapped.is_some() || loopback {
            None
        } else {
            self.policy()
                .upstream
                .as_ref()
                .and_then(|u| u.route(&target, leg == Leg::Http))
                .cloned()
        };
        if let Some(p) = proxy {
            self.via = Some(format!("upstream proxy {p}"));
            let opened = match leg {
                Leg::Http => {
                    upstream::open(&p, CONNECT_TIMEOUT).map(|s| (s, Some(upstream::auth_header(&p))))
                }
                Leg::Tunnel => upstream::connect(&p, &target, port, CONNECT_TIMEOUT).map(|s| (s, None)),
            };
            return match opened {
                Ok((stream, absolute)) => Some(Upstreamed {
                    stream,
                    verdict,
                    name,
                    ip: ip_given,
                    absolute,
                }),
                Err(e) => {
                    let v = Verdict::refuse(verdict.rule, format!("allowed, but {e}"));
                    self.refuse(protocol, name, ip_given, port, &v, http);
                    None
                }
            };
        }
        if let Some(ip) = ip_given {
            return match TcpStream::connect_timeout(&SocketAddr::new(ip, port), CONNECT_TIMEOUT) {
                Ok(stream) => Some(Upstreamed {
                    stream,
                    verdict,
                    name: None,
                    ip: Some(ip),
                    absolute: None,
                }),
                Err(e) => {
                    let v = Verdict::refuse(verdict.rule, format!("allowed, but the connection failed: {e}"));
                    self.refuse(protocol, None, Some(ip), port, &v, http);
                    None
                }
            };
        }
        let name = name.unwrap_or_default();
        let (addrs, mapped) = match mapped {
            Some(a) => (vec![a], true),
            None => match std::net::ToSocketAddrs::to_socket_addrs(&(name.as_str(), port)) {
                Ok(a) => (a.collect(), false),
                Err(e) => {
                    let v =
                        Verdict::refuse(verdict.rule, format!("allowed, but {name} did not resolve: {e}"));
                    self.refuse(protocol, Some(name), None, port, &v, http);
                    return None;
                }
            },
        };
        let mut last = None;
        for addr in addrs {
            let check = self
                .policy()
                .check_resolved(&name, addr.ip(), addr.port(), mapped);
            if !check.allowed {
                last = Some(check);
                continue;
            }
            match TcpStream::connect_timeout(&addr, CONNECT_TIMEOUT) {
                Ok(stream) => {
                    return Some(Upstreamed {
                        stream,
                        verdict,
                        name: Some(name),
                        ip: Some(addr.ip()),
                        absolute: None,
                    })
                }
                Err(e) => {
                    last = Some(Verdict::refuse(
                        verdict.rule.clone(),
                        format!("allowed, but the connection to {addr} failed: {e}"),
                    ));
                }
            }
        }
        let v = last.unwrap_or(Verdict::refuse(None, format!("{name} has no address")));
        self.refuse(protocol, Some(name), None, port, &v, http);
        None
    }

    fn connect_tunnel(&mut self, host: &str, port: u16, early: &[u8]) {
        let Some(Upstreamed {
            stream: upstream,
            verdict,
            name,
            ip,
            ..
        }) = self.open_upstream("https-connect", host, port, true, Leg::Tunnel)
        else {
            return;
        };
        if self
            .client
            .write_all(b"HTTP/1.1 200 Connection Established\r\n\r\n")
            .is_err()
        {
            return;
        }
        let Some(first) = self.read_hello(early.to_vec()) else {
            return;
        };
        if let Some(name) = &name {
            if let Err(why) = sni_matches(&first, name) {
                let v = Verdict::refuse(verdict.rule, why);
                self.refuse("https-connect", Some(name.clone()), ip, port, &v, false);
                return;
            }
        }
        let (up, down) = splice(&self.client, upstream, &first);
        self.finish("https-connect", name, ip, port, &verdict, (up, down, false));
    }

    /// Reads until the first bytes can be classified (a complete ClientHello, or clearly not TLS).
    fn read_hello(&mut self, mut buf: Vec<u8>) -> Option<Vec<u8>> {
        let mut chunk = [0u8; 4096];
        let _ = self.client.set_read_timeout(Some(Duration::from_secs(30)));
        loop {
            if !matches!(sni::parse(&buf), sni::Hello::Incomplete) || buf.len() > HEAD_LIMIT {
                let _ = self.client.set_read_timeout(Some(IO_TIMEOUT));
                return Some(buf);
            }
            match self.client.read(&mut chunk) {
                Ok(0) | Err(_) => return if buf.is_empty() { None } else { Some(buf) },
                Ok(n) => buf.extend_from_slice(&chunk[..n]),
            }
        }
    }

    /// A plain HTTP request for `host:port`: the Host header must agree, the request goes out with
    /// `Connection: close`, and a secret for the host is added (upstream over TLS on 443).
    fn plain_http(&mut self, host: &str, port: u16, head: &Head, path: &str, protocol: &str) {
        let host_l = host.to_ascii_lowercase();
        if let Some(h) = head.header("host") {
            let given = split_authority(h, port).map(|(h, p)| (h.to_ascii_lowercase(), p));
            if given != Some((host_l.clone(), port)) {
                let v = Verdict::refuse(
                    None,
                    format!(
                        "the Host header `{}` does not match the request's host {host}:{port}",
                        h.chars().take(100).collect::<String>()
                    ),
                );
                self.refuse(protocol, valid_domain(host), None, port, &v, true);
                return;
            }
        }
        let secret = self
            .egress
            .inner
            .config
            .secrets
            .iter()
            .find(|s| s.host == host_l)
            .cloned();
        let up_port = if secret.is_some() { 443 } else { port };
        let leg = if secret.is_some() { Leg::Tunnel } else { Leg::Http };
        let Some(Upstreamed {
            stream: upstream,
            verdict,
            name,
            ip,
            absolute,
        }) = self.open_upstream(protocol, host, up_port, true, leg)
        else {
            return;
        };
        let mut out = match &absolute {
            // Through the upstream HTTP proxy: the absolute form, with the proxy's credentials.
            Some(auth) => {
                let authority = if port == 80 {
                    host.to_owned()
                } else {
                    format!("{host}:{port}")
                };
                format!("{} http://{authority}{} HTTP/1.1\r\n{auth}", head.method, path)
            }
            None => format!("{} {} HTTP/1.1\r\n", head.method, path),
        };
        for (k, v) in &head.headers {
            let k_l = k.to_ascii_lowercase();
            let secret_header = secret.as_ref().is_some_and(|s| s.header.eq_ignore_ascii_case(k));
            if k_l.starts_with("proxy-") || k_l == "connection" || k_l == "keep-alive" || secret_header {
                continue;
            }
            out.push_str(&format!("{k}: {v}\r\n"));
        }
        if head.header("host").is_none() {
            out.push_str(&format!("Host: {host}\r\n"));
        }
        out.push_str("Connection: close\r\n");
        let mut wire = out.into_bytes();
        if let Some(s) = &secret {
            wire.extend_from_slice(format!("{}: {}\r\n", s.header, s.value).as_bytes());
        }
        wire.extend_from_slice(b"\r\n");
        let Some(secret) = secret else {
            let (up, down) = splice(
                &self.client,
                upstream,
                &[wire.as_slice(), head.rest.as_slice()].concat(),
            );
            self.finish(protocol, name, ip, port, &verdict, (up, down, false));
            return;
        };
        // With a secret: TLS upstream, whole request body first (by Content-Length), then stream the response.
        if head.header("transfer-encoding").is_some() {
            let v = Verdict::refuse(verdict.rule, "a request with a secret must give Content-Length");
            let _ = self
                .client
                .write_all(b"HTTP/1.1 411 Length Required\r\nConnection: close\r\n\r\n");
            self.finish(protocol, name, ip, port, &v, (0, 0, false));
            return;
        }
        let len: usize = head
            .header("content-length")
            .and_then(|v| v.parse().ok())
            .unwrap_or(0);
        if len > BODY_LIMIT {
            let v = Verdict::refuse(verdict.rule, "request body too large");
            let _ = self
                .client
                .write_all(b"HTTP/1.1 413 Content Too Large\r\nConnection: close\r\n\r\n");
            self.finish(protocol, name, ip, port, &v, (0, 0, false));
            return;
        }
        let mut body = head.rest.clone();
        let mut chunk = [0u8; 16384];
        while body.len() < len {
            match self.client.read(&mut chunk) {
                Ok(0) | Err(_) => break,
                Ok(n) => body.extend_from_slice(&chunk[..n]),
            }
        }
        body.truncate(len);
        let result = (|| -> Result<(u64, u64), String> {
            let tls = self.egress.inner.tls.clone().ok_or("no TLS configuration")?;
            let server =
                rustls::pki_types::ServerName::try_from(host_l.clone()).map_err(|e| e.to_string())?;
            let conn = rustls::ClientConnection::new(tls, server).map_err(|e| e.to_string())?;
            let _ = upstream.set_read_timeout(Some(IO_TIMEOUT));
            let mut stream = rustls::StreamOwned::new(conn, upstream);
            stream.write_all(&wire).map_err(|e| e.to_string())?;
            stream.write_all(&body).map_err(|e| e.to_string())?;
            stream.flush().map_err(|e| e.to_string())?;
            let mut down = 0u64;
            loop {
                match stream.read(&mut chunk) {
                    Ok(0) => break,
                    Ok(n) => {
                        self.client.write_all(&chunk[..n]).map_err(|e| e.to_string())?;
                        down += n as u64;
                    }
                    Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => break,
                    Err(e) => return Err(e.to_string()),
                }
            }
            Ok(((wire.len() + body.len()) as u64 - secret_len(&secret), down))
        })();
        let _ = self.client.shutdown(Shutdown::Both);
        match result {
            Ok((up, down)) => self.finish(protocol, name, ip, port, &verdict, (up, down, true)),
            Err(e) => {
                let v = Verdict {
                    allowed: true,
                    rule: verdict.rule,
                    reason: format!("allowed; the upstream TLS exchange failed: {e}"),
                };
                self.finish(protocol, name, ip, port, &v, (0, 0, true));
            }
        }
    }

    /// A connect captured by the runner, to an address the DNS stub gave out (a name) or an allowed address.
    fn transparent(&mut self, ip: IpAddr, port: u16) {
        let host = self.egress.name_of(ip);
        let first = self.read_hello(Vec::new()).unwrap_or_default();
        let tls = !matches!(sni::parse(&first), sni::Hello::NotTls | sni::Hello::Incomplete);
        let looks_http = first.len() >= 4
            && first[..first.len().min(8)]
                .iter()
                .take_while(|b| b.is_ascii_uppercase())
                .count()
                >= 3
            && first.contains(&b' ');
        match &host {
            Some(name) if !tls && looks_http => {
                let name = name.clone();
                if let Some(head) = self.read_head(first) {
                    let path = if head.target.starts_with('/') {
                        head.target.clone()
                    } else {
                        "/".into()
                    };
                    self.plain_http(&name, port, &head, &path, "http");
                }
            }
            _ => {
                // Any other protocol to a name, or anything to an allowed address: checked and spliced through.
                let target = host.clone().unwrap_or_else(|| ip.to_string());
                let tls_to_name = tls && host.is_some();
                if let (true, Some(name)) = (tls, &host) {
                    if let Err(why) = sni_matches(&first, name) {
                        let rule = self.policy().check_name(name, port).rule;
                        let v = Verdict::refuse(rule, why);
                        self.refuse("tls", host, None, port, &v, false);
                        return;
                    }
                }
                let Some(Upstreamed {
                    stream: upstream,
                    verdict,
                    ip: up_ip,
                    ..
                }) = self.open_upstream("tcp", &target, port, false, Leg::Tunnel)
                else {
                    return;
                };
                let (up, down) = splice(&self.client, upstream, &first);
                let protocol = if tls_to_name { "tls" } else { "tcp" };
                self.finish(protocol, host, up_ip, port, &verdict, (up, down, false));
            }
        }
    }
}

fn secret_len(s: &Secret) -> u64 {
    (s.header.len() + 2 + s.value.len() + 2) as u64
}

fn sni_matches(first: &[u8], name: &str) -> Result<(), String> {
    match sni::parse(first) {
        sni::Hello::Sni(s) if s == name => Ok(()),
        sni::Hello::Sni(s) => Err(format!(
            "TLS server name `{}` does not match the host {name}",
            s.chars().take(100).collect::<String>()
        )),
        sni::Hello::NoSni => Err(format!("TLS without a server name to {name}")),
        sni::Hello::NotTls | sni::Hello::Incomplete => Ok(()),
    }
}

/// Copies both ways until both sides are done; returns bytes up (client to server) and down.
fn splice(client: &TcpStream, mut upstream: TcpStream, first: &[u8]) -> (u64, u64) {
    let _ = upstream.set_read_timeout(Some(IO_TIMEOUT));
    if !first.is_empty() && upstream.write_all(first).is_err() {
        return (0, 0);
    }
    let (Ok(mut c_read), Ok(mut u_write)) = (client.try_clone(), upstream.try_clone()) else {
        return (0, 0);
    };
    let up = std::thread::spawn(move || {
        let n = std::io::copy(&mut c_read, &mut u_write).unwrap_or(0);
        let _ = u_write.shutdown(Shutdown::Write);
        n
    });
    let mut c_write = match client.try_clone() {
        Ok(c) => c,
        Err(_) => return (0, 0),
    };
    let down = std::io::copy(&mut upstream, &mut c_write).unwrap_or(0);
    let _ = c_write.shutdown(Shutdown::Write);
    let up = up.join().unwrap_or(0);
    let _ = client.shutdown(Shutdown::Both);
    (up + first.len() as u64, down)
}

/// The host and port of a request target or Host header, with the scheme's port when none is given.
fn split_authority(a: &str, default_port: u16) -> Option<(String, u16)> {
    if a.is_empty() || a.len() > 300 {
        return None;
    }
    let (host, port) = policy::split_host_port(a).ok()?;
    Some((host.to_owned(), port.unwrap_or(default_port)))
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

/// `host:port` when the name is known, else `address:port`.
fn dest(host: Option<&str>, ip: Option<IpAddr>, port: u16) -> String {
    match (host, ip) {
        (Some(h), _) => format!("{h}:{port}"),
        (None, Some(ip)) => SocketAddr::new(ip, port).to_string(),
        (None, None) => format!("?:{port}"),
    }
}

fn attempt(
    t_ms: u64,
    pid: i32,
    protocol: &str,
    destination: String,
    host: Option<String>,
    port: Option<u16>,
    v: &Verdict,
) -> NetAttempt {
    NetAttempt {
        t_ms,
        pid,
        protocol: protocol.to_owned(),
        destination,
        host,
        port,
        decision: if v.allowed {
            NetDecision::Allowed
        } else {
            NetDecision::Denied
        },
        rule: v.rule.clone(),
        reason: v.reason.clone(),
        bytes_up: 0,
        bytes_down: 0,
        secret_injected: false,
        via: None,
        catch: None,
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

fn tls_config(extra: &[PathBuf]) -> Result<rustls::ClientConfig, EgressError> {
    let mut roots = rustls::RootCertStore::empty();
    let native = rustls_native_certs::load_native_certs();
    for cert in native.certs {
        let _ = roots.add(cert);
    }
    for path in extra {
        let pem =
            fs_err::read(path).map_err(|e| EgressError::Ca(path.display().to_string(), e.to_string()))?;
        let mut n = 0;
        for cert in rustls::pki_types::pem::PemObject::pem_slice_iter(&pem) {
            let cert: rustls::pki_types::CertificateDer<'static> =
                cert.map_err(|e| EgressError::Ca(path.display().to_string(), e.to_string()))?;
            roots
                .add(cert)
                .map_err(|e| EgressError::Ca(path.display().to_string(), e.to_string()))?;
            n += 1;
        }
        if n == 0 {
            return Err(EgressError::Ca(
                path.display().to_string(),
                "no certificate in it".into(),
            ));
        }
    }
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    Ok(rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| EgressError::Tls(e.to_string()))?
        .with_root_certificates(roots)
        .with_no_client_auth())
}
