//! The sinkhole of a detonation: every name the sandbox looks up resolves to it, every TCP connect ends in it, and
//! nothing goes further. It reads what a skill sends: plain HTTP as is, TLS by opening it with a certificate for the
//! asked name from a certificate authority made for this one run (the sandbox trusts it, nothing else does), other
//! bytes as they come; it answers HTTP with an empty `200 OK`. A connection that sends nothing and waits is asked to
//! run `echo` with a marker: when the marker comes back, a remote shell is on the line.
//!
//! Planted secrets (canaries) are looked for in every byte read, as is, in base64 and in hex, and in the names
//! looked up.

use std::collections::HashMap;
use std::io::{Read, Write};
use std::net::{IpAddr, Shutdown, TcpStream};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use airlock_types::{Catch, NetDecision};
use base64::Engine as _;

use crate::{dest, lock, sni, split_authority, Egress, EgressError, Verdict};

/// Most bytes read from one connection.
const CAPTURE_LIMIT: usize = 256 * 1024;
/// Most characters of a connection's bytes kept in the record.
const SAMPLE_CHARS: usize = 2048;
/// A connection silent this long is done (or, when it sent nothing, is probed as a shell).
const SILENCE: Duration = Duration::from_millis(1500);
/// The longest a connection is served.
const SERVE_LIMIT: Duration = Duration::from_secs(8);

/// One form a canary may travel in, and whether it is looked for whatever its case.
type Form = (Vec<u8>, bool);

/// A secret planted in a detonation's sandbox, looked for in what leaves it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Canary {
    /// What it is and where it was planted (`AWS_SECRET_ACCESS_KEY (environment)`, `~/.aws/credentials`).
    pub name: String,
    /// The planted value (letters and digits, at least 16 of them, so it is found however it is carried).
    pub value: String,
}

/// The sinkhole's certificate authority, the canaries, and the certificates made so far.
pub struct Sinkhole {
    ca_key: rcgen::KeyPair,
    ca: rcgen::Certificate,
    /// Each canary's name and the forms it may travel in, each with whether it is looked for whatever its case.
    needles: Vec<(String, Vec<Form>)>,
    servers: Mutex<HashMap<String, Arc<rustls::ServerConfig>>>,
    probe: String,
}

impl std::fmt::Debug for Sinkhole {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Sinkhole({} canaries)", self.needles.len())
    }
}

impl Sinkhole {
    /// A sinkhole with a new certificate authority, looking for these canaries; `marker` (letters and digits) is
    /// what its shell probe echoes and what the code it serves runs (`/bin/true <marker>`), for the caller to find in
    /// the run's record.
    pub fn new(canaries: &[Canary], marker: &str) -> Result<Self, EgressError> {
        let tls = |e: rcgen::Error| EgressError::Tls(e.to_string());
        let ca_key = rcgen::KeyPair::generate().map_err(tls)?;
        let mut params = rcgen::CertificateParams::new(Vec::<String>::new()).map_err(tls)?;
        params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
        params
            .distinguished_name
            .push(rcgen::DnType::CommonName, "airlock detonation sinkhole");
        let ca = params.self_signed(&ca_key).map_err(tls)?;
        let needles = canaries
            .iter()
            .map(|c| (c.name.clone(), encodings(&c.value)))
            .collect();
        let probe = marker.to_owned();
        Ok(Self {
            ca_key,
            ca,
            needles,
            servers: Mutex::new(HashMap::new()),
            probe,
        })
    }

    /// The certificate authority the sandbox is given to trust (PEM).
    pub fn ca_pem(&self) -> String {
        self.ca.pem()
    }

    /// The canaries found in `bytes`, by name.
    pub fn canaries_in(&self, bytes: &[u8]) -> Vec<String> {
        let lower = bytes.to_ascii_lowercase();
        self.needles
            .iter()
            .filter(|(_, forms)| {
                forms.iter().any(|(form, blind)| {
                    // The value itself and hex are looked for whatever their case (a DNS name loses it); base64
                    // is not.
                    crate::find(if *blind { &lower } else { bytes }, form).is_some()
                })
            })
            .map(|(name, _)| name.clone())
            .collect()
    }

    /// A server configuration with a certificate for `name`, signed by this sinkhole's authority.
    fn server(&self, name: &str) -> Option<Arc<rustls::ServerConfig>> {
        if let Some(s) = lock(&self.servers).get(name) {
            return Some(s.clone());
        }
        let key = rcgen::KeyPair::generate().ok()?;
        let params = rcgen::CertificateParams::new(vec![name.to_owned()]).ok()?;
        let cert = params.signed_by(&key, &self.ca, &self.ca_key).ok()?;
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let config = rustls::ServerConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .ok()?
            .with_no_client_auth()
            .with_single_cert(
                vec![cert.der().clone()],
                rustls::pki_types::PrivateKeyDer::Pkcs8(key.serialize_der().into()),
            )
            .ok()?;
        let config = Arc::new(config);
        lock(&self.servers).insert(name.to_owned(), config.clone());
        Some(config)
    }
}

/// The forms a value may travel in: as is and in hex (looked for whatever the case), in base64 (standard and
/// URL-safe, at each of the three alignments it can have inside a longer text).
fn encodings(value: &str) -> Vec<Form> {
    let v = value.as_bytes();
    let mut forms = vec![(v.to_ascii_lowercase(), true)];
    for skip in 0..3.min(v.len()) {
        for engine in [
            &base64::engine::general_purpose::STANDARD,
            &base64::engine::general_purpose::URL_SAFE,
        ] {
            let encoded = engine.encode(&v[skip..]);
            // The last group depends on what follows the value: keep only whole groups before it.
            let whole = (v.len() - skip) / 3 * 4;
            let core = encoded.as_bytes()[..whole.saturating_sub(4)].to_vec();
            if core.len() >= 16 && !forms.iter().any(|(f, _)| *f == core) {
                forms.push((core, false));
            }
        }
    }
    let hex: String = v.iter().map(|b| format!("{b:02x}")).collect();
    forms.push((hex.into_bytes(), true));
    // Reversed, as a string turned around before it is sent.
    let mut reversed = v.to_ascii_lowercase();
    reversed.reverse();
    forms.push((reversed, true));
    forms
}

/// The views of what was sent that a canary is looked for in: the bytes, the bytes percent-decoded, and an HTTP
/// request's body with its chunked framing and gzip or deflate encoding undone.
fn views(bytes: &[u8]) -> Vec<Vec<u8>> {
    let mut out = vec![bytes.to_vec(), percent_decoded(bytes)];
    if let Some(end) = crate::find(bytes, b"\r\n\r\n") {
        let head = String::from_utf8_lossy(&bytes[..end]).to_ascii_lowercase();
        let mut body = bytes[end + 4..].to_vec();
        if head.contains("transfer-encoding: chunked") {
            body = dechunked(&body);
            out.push(body.clone());
        }
        if head.contains("content-encoding: gzip") || head.contains("content-encoding: deflate") {
            let mut plain = Vec::new();
            let gz = std::io::Read::read_to_end(
                &mut std::io::Read::take(flate2::read::MultiGzDecoder::new(&body[..]), CAPTURE_LIMIT as u64),
                &mut plain,
            );
            if gz.is_err() || plain.is_empty() {
                plain.clear();
                let _ = std::io::Read::read_to_end(
                    &mut std::io::Read::take(flate2::read::ZlibDecoder::new(&body[..]), CAPTURE_LIMIT as u64),
                    &mut plain,
                );
            }
            out.push(percent_decoded(&plain));
            out.push(plain);
        }
    }
    out
}

/// `%XX` and `+` undone.
fn percent_decoded(b: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        match (b[i], b.get(i + 1..i + 3)) {
            (b'%', Some(h)) if h.iter().all(u8::is_ascii_hexdigit) => {
                let hex = std::str::from_utf8(h).unwrap_or("00");
                out.push(u8::from_str_radix(hex, 16).unwrap_or(0));
                i += 3;
            }
            (b'+', _) => {
                out.push(b' ');
                i += 1;
            }
            (c, _) => {
                out.push(c);
                i += 1;
            }
        }
    }
    out
}

/// A chunked body's data, the framing left out.
fn dechunked(mut b: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    while let Some(eol) = crate::find(b, b"\r\n") {
        let size = std::str::from_utf8(&b[..eol])
            .ok()
            .and_then(|l| usize::from_str_radix(l.split(';').next().unwrap_or("").trim(), 16).ok());
        let Some(size) = size.filter(|n| *n > 0) else {
            break;
        };
        let start = eol + 2;
        let Some(chunk) = b.get(start..start + size) else {
            out.extend_from_slice(&b[start.min(b.len())..]);
            break;
        };
        out.extend_from_slice(chunk);
        b = b.get(start + size + 2..).unwrap_or_default();
    }
    out
}

/// The canaries found in a request's credential headers (`Authorization`, `X-Api-Key`, ...), and nowhere else of
/// what was sent: what a client sends as the request's own credential.
fn credential_only(sink: &Sinkhole, bytes: &[u8], found: &[String]) -> Vec<String> {
    let Some(end) = crate::find(bytes, b"\r\n\r\n") else {
        return Vec::new();
    };
    let head = String::from_utf8_lossy(&bytes[..end]);
    let (credential, other): (Vec<&str>, Vec<&str>) = head.split("\r\n").skip(1).partition(|l| {
        let name = l.split(':').next().unwrap_or("").trim().to_ascii_lowercase();
        matches!(
            name.as_str(),
            "authorization" | "x-api-key" | "api-key" | "x-auth-token"
        )
    });
    let mut rest = head.split("\r\n").next().unwrap_or("").to_owned();
    for l in other {
        rest.push('\n');
        rest.push_str(l);
    }
    let mut rest = rest.into_bytes();
    rest.extend_from_slice(&bytes[end..]);
    let in_credentials = sink.canaries_in(credential.join("\n").as_bytes());
    let elsewhere: Vec<String> = views(&rest).iter().flat_map(|v| sink.canaries_in(v)).collect();
    found
        .iter()
        .filter(|c| in_credentials.contains(c) && !elsewhere.contains(c))
        .cloned()
        .collect()
}

/// What a connection was going to, as the sinkhole learns it.
struct Target {
    host: Option<String>,
    ip: Option<IpAddr>,
    port: u16,
}

/// Reads from bytes already taken off the socket, then the socket.
struct Prefixed {
    pre: Vec<u8>,
    at: usize,
    inner: TcpStream,
}

impl Read for Prefixed {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if self.at < self.pre.len() {
            let n = buf.len().min(self.pre.len() - self.at);
            buf[..n].copy_from_slice(&self.pre[self.at..self.at + n]);
            self.at += n;
            return Ok(n);
        }
        self.inner.read(buf)
    }
}

impl Write for Prefixed {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.inner.write(buf)
    }
    fn flush(&mut self) -> std::io::Result<()> {
        self.inner.flush()
    }
}

/// Serves one connection that reached the sinkhole: `target` is where a captured connect was going, `None` for a
/// client of the explicit proxy.
pub(crate) fn serve(
    egress: &Egress,
    sink: &Sinkhole,
    client: TcpStream,
    pid: i32,
    target: Option<(IpAddr, u16)>,
) {
    let t_ms = egress.t_ms();
    let started = Instant::now();
    let _ = client.set_read_timeout(Some(SILENCE));
    let _ = client.set_write_timeout(Some(SILENCE));
    let mut stream = Prefixed {
        pre: Vec::new(),
        at: 0,
        inner: client,
    };
    let (to, protocol, mut catch) = match target {
        Some((ip, port)) => {
            let to = Target {
                host: egress.name_of(ip),
                ip: Some(ip),
                port,
            };
            let catch = take(sink, &mut stream, started, &to);
            (to, "tcp", catch)
        }
        None => match explicit(sink, &mut stream, started) {
            Some(found) => found,
            None => return,
        },
    };
    let _ = stream.inner.shutdown(Shutdown::Both);
    // The bytes as read (carried through the catch one char per byte).
    let raw: Vec<u8> = std::mem::take(&mut catch.sample)
        .chars()
        .map(|c| u8::try_from(u32::from(c)).unwrap_or(b'?'))
        .collect();
    let bytes = raw.len() as u64;
    catch.sample = printable(&raw);
    for view in views(&raw) {
        for c in sink.canaries_in(&view) {
            if !catch.canaries.contains(&c) {
                catch.canaries.push(c);
            }
        }
    }
    catch.credential_only = credential_only(sink, &raw, &catch.canaries);
    let verdict = Verdict::refuse(
        None,
        "taken by the detonation's sinkhole on this machine; nothing left it",
    );
    let mut a = crate::attempt(
        t_ms,
        pid,
        protocol,
        dest(to.host.as_deref(), to.ip, to.port),
        to.host.clone(),
        Some(to.port),
        &verdict,
    );
    a.decision = NetDecision::Sinkholed;
    a.bytes_up = bytes;
    a.catch = Some(Box::new(catch));
    egress.record(a);
}

/// A client of `HTTP_PROXY`: a plain HTTP request is the catch itself; `CONNECT` is answered and what follows is
/// read as a captured connect would be.
fn explicit(
    sink: &Sinkhole,
    stream: &mut Prefixed,
    started: Instant,
) -> Option<(Target, &'static str, Catch)> {
    let bytes = read_some(stream, started, Vec::new(), |b| {
        crate::find(b, b"\r\n\r\n").is_some()
    });
    let end = crate::find(&bytes, b"\r\n\r\n")? + 4;
    let head = String::from_utf8_lossy(&bytes[..end]).into_owned();
    let mut first = head.lines().next().unwrap_or_default().split(' ');
    let (method, target) = (first.next()?, first.next()?);
    if method == "CONNECT" {
        let (host, port) = split_authority(target, 443)?;
        stream
            .inner
            .write_all(b"HTTP/1.1 200 Connection Established\r\n\r\n")
            .ok()?;
        stream.pre = bytes[end..].to_vec();
        stream.at = 0;
        let to = Target {
            host: crate::valid_domain(&host),
            ip: host.parse().ok(),
            port,
        };
        let catch = take(sink, stream, started, &to);
        return Some((to, "https-connect", catch));
    }
    let rest = target.strip_prefix("http://")?;
    let authority = rest.split(['/', '?', '#']).next().unwrap_or_default();
    let (host, port) = split_authority(authority, 80)?;
    let to = Target {
        host: crate::valid_domain(&host),
        ip: host.parse().ok(),
        port,
    };
    let all = read_some(stream, started, bytes, http_done);
    let _ = stream.write_all(&reply(sink, &all));
    let catch = Catch {
        kind: "http".into(),
        request: request_line(&all),
        sample: latin1(&all),
        ..Catch::default()
    };
    Some((to, "http", catch))
}

const OK: &[u8] =
    b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 0\r\nConnection: close\r\n\r\n";

/// What a download gets: a script that is valid shell and valid Python and runs `/bin/true <marker>` in both, so
/// fetched code that is then run shows in the run's record as that exec.
fn served(marker: &str) -> Vec<u8> {
    let body = format!(
        "\"\"\"\":\n/bin/true {marker}\nexit 0\n\"\"\"\n__import__(\"os\").execv(\"/bin/true\", [\"/bin/true\", \"{marker}\"])\n"
    );
    let mut out = format!(
        "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    )
    .into_bytes();
    out.extend_from_slice(body.as_bytes());
    out
}

/// Reads what a connection sends and answers it as the sinkhole does; the catch's `sample` holds the bytes read
/// (made printable by the caller).
fn take(sink: &Sinkhole, stream: &mut Prefixed, started: Instant, to: &Target) -> Catch {
    let mut first = std::mem::take(&mut stream.pre);
    stream.at = 0;
    if first.is_empty() {
        first = read_some(stream, started, first, |b| !b.is_empty());
    }
    if first.first() == Some(&0x16) {
        first = read_some(stream, started, first, |b| {
            !matches!(sni::parse(b), sni::Hello::Incomplete)
        });
        let name = match sni::parse(&first) {
            sni::Hello::Sni(n) => Some(n),
            _ => to.host.clone(),
        };
        let Some(server) = name.as_deref().and_then(|n| sink.server(n)) else {
            return Catch {
                kind: "tls".into(),
                ..Catch::default()
            };
        };
        let Ok(conn) = rustls::ServerConnection::new(server) else {
            return Catch {
                kind: "tls".into(),
                ..Catch::default()
            };
        };
        let inner = match stream.inner.try_clone() {
            Ok(s) => s,
            Err(_) => return Catch::default(),
        };
        let mut tls = rustls::StreamOwned::new(
            conn,
            Prefixed {
                pre: first,
                at: 0,
                inner,
            },
        );
        let bytes = read_some(&mut tls, started, Vec::new(), http_done);
        if bytes.is_empty() && tls.conn.is_handshaking() {
            // The client did not take the sinkhole's certificate: only the name is known.
            return Catch {
                kind: "tls".into(),
                sample: name.map(|n| format!("TLS for {n}")).unwrap_or_default(),
                ..Catch::default()
            };
        }
        let catch = answer(&mut tls, sink, started, bytes, "https");
        tls.conn.send_close_notify();
        let _ = tls.flush();
        return catch;
    }
    let bytes = read_some(stream, started, first, http_done);
    answer(stream, sink, started, bytes, "http")
}

/// Answers what was read: HTTP gets an empty `200 OK`; a connection that sent nothing or no HTTP is probed as a
/// shell.
fn answer(
    stream: &mut (impl Read + Write),
    sink: &Sinkhole,
    started: Instant,
    bytes: Vec<u8>,
    http: &str,
) -> Catch {
    if looks_http(&bytes) {
        let _ = stream.write_all(&reply(sink, &bytes));
        let _ = stream.flush();
        return Catch {
            kind: http.into(),
            request: request_line(&bytes),
            sample: latin1(&bytes),
            ..Catch::default()
        };
    }
    let mut catch = Catch {
        kind: if http == "https" { "tls" } else { "raw" }.into(),
        sample: latin1(&bytes),
        ..Catch::default()
    };
    if started.elapsed() < SERVE_LIMIT
        && stream
            .write_all(format!("echo {}\n", sink.probe).as_bytes())
            .is_ok()
    {
        let _ = stream.flush();
        // An interactive shell without a terminal echoes the line it read before it runs it: the marker in
        // that echo is no answer yet, the wait goes on for its output.
        let reply = read_patiently(stream, started, PROBE_WAIT, |b| ran(b, &sink.probe));
        catch.shell = ran(&reply, &sink.probe);
        if catch.shell {
            catch.kind = "shell".into();
        }
        catch.sample.push_str(&latin1(&reply));
    }
    catch
}

/// The answer to an HTTP request: a download (`GET`) gets the served script, anything else an empty `200 OK`.
fn reply(sink: &Sinkhole, request: &[u8]) -> Vec<u8> {
    if request.starts_with(b"GET ") {
        served(&sink.probe)
    } else {
        OK.to_vec()
    }
}

/// Whether the marker came back as output (not only as the echoed command).
fn ran(reply: &[u8], marker: &str) -> bool {
    let text = String::from_utf8_lossy(reply);
    text.match_indices(marker)
        .any(|(i, _)| !text[..i].ends_with("echo "))
}

/// How long a probed connection is given to answer (a loaded machine's shell takes its time).
const PROBE_WAIT: Duration = Duration::from_secs(5);

/// Reads until `done` says so, the connection closes, `wait` has passed or the limits are reached: silences
/// shorter than `wait` do not end it.
fn read_patiently(
    r: &mut impl Read,
    started: Instant,
    wait: Duration,
    done: impl Fn(&[u8]) -> bool,
) -> Vec<u8> {
    let until = Instant::now() + wait;
    let mut buf = Vec::new();
    let mut chunk = [0u8; 8192];
    while !done(&buf)
        && buf.len() < CAPTURE_LIMIT
        && started.elapsed() < SERVE_LIMIT
        && Instant::now() < until
    {
        match r.read(&mut chunk) {
            Ok(0) => break,
            Ok(n) => buf.extend_from_slice(&chunk[..n]),
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ) => {}
            Err(_) => break,
        }
    }
    buf
}

/// Reads until `done` says so, the connection is silent or closed, or the limits are reached.
fn read_some(r: &mut impl Read, started: Instant, mut buf: Vec<u8>, done: impl Fn(&[u8]) -> bool) -> Vec<u8> {
    let mut chunk = [0u8; 8192];
    while !done(&buf) && buf.len() < CAPTURE_LIMIT && started.elapsed() < SERVE_LIMIT {
        match r.read(&mut chunk) {
            Ok(0) | Err(_) => break,
            Ok(n) => buf.extend_from_slice(&chunk[..n]),
        }
    }
    buf
}

/// Whether `b` holds a whole HTTP request (its head and as much body as it announces), or is not HTTP.
fn http_done(b: &[u8]) -> bool {
    if b.is_empty() {
        return false;
    }
    if !looks_http(b) {
        // Not (yet) HTTP: a few bytes may still become a request line.
        return b.len() >= 16 || b.contains(&b'\n');
    }
    let Some(end) = crate::find(b, b"\r\n\r\n") else {
        return false;
    };
    let head = String::from_utf8_lossy(&b[..end]).to_ascii_lowercase();
    let length = head
        .lines()
        .find_map(|l| l.strip_prefix("content-length:"))
        .and_then(|v| v.trim().parse::<usize>().ok());
    match length {
        Some(n) => b.len() >= end + 4 + n,
        // Chunked bodies end with an empty chunk; without either there is no body.
        None if head.contains("transfer-encoding: chunked") => crate::find(&b[end..], b"\r\n0\r\n").is_some(),
        None => true,
    }
}

fn looks_http(b: &[u8]) -> bool {
    let method_end = b.iter().position(|&c| c == b' ');
    matches!(method_end, Some(n) if (3..=7).contains(&n) && b[..n].iter().all(u8::is_ascii_uppercase))
        && b.windows(6).take(2100).any(|w| w == b" HTTP/")
}

/// `METHOD /path` of an HTTP request, bounded.
fn request_line(b: &[u8]) -> Option<String> {
    let line = b.split(|&c| c == b'\r' || c == b'\n').next()?;
    let text = String::from_utf8_lossy(line);
    let mut words = text.split(' ');
    let (method, mut path) = (words.next()?, words.next()?);
    // A proxy's client names the whole URL: the path is what follows its authority.
    if let Some(rest) = path.strip_prefix("http://") {
        path = rest.find('/').map_or("/", |i| &rest[i..]);
    }
    Some(
        printable(format!("{method} {path}").as_bytes())
            .chars()
            .take(300)
            .collect(),
    )
}

/// Bytes as a string of one char per byte (U+0000 to U+00FF), so binary bodies survive until they are decoded.
fn latin1(b: &[u8]) -> String {
    b.iter().map(|&c| char::from(c)).collect()
}

/// Bytes as text a terminal and a page show safely: control characters and invalid UTF-8 as escapes, bounded.
fn printable(b: &[u8]) -> String {
    let text = String::from_utf8_lossy(b);
    let mut out = String::new();
    for c in text.chars() {
        if out.chars().count() >= SAMPLE_CHARS {
            out.push_str(" [airlock: cut]");
            break;
        }
        match c {
            '\n' => out.push('\n'),
            '\r' => {}
            '\t' => out.push('\t'),
            c if c.is_control() || c == '\u{fffd}' => {
                out.push_str(&format!("\\x{:02x}", u32::from(c) & 0xff))
            }
            c => out.push(c),
        }
    }
    out
}

/// A DNS name looked up in a detonation: the canaries it carries, if any.
pub(crate) fn dns_catch(sink: &Sinkhole, name: &str) -> Catch {
    Catch {
        kind: "dns".into(),
        sample: printable(name.as_bytes()),
        canaries: sink.canaries_in(name.as_bytes()),
        ..Catch::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sink() -> Sinkhole {
        Sinkhole::new(
            &[Canary {
                name: "AWS_SECRET_ACCESS_KEY (environment)".into(),
                value: "q8ZrT3mWx0LbN5vPc2KsY7hJd4GfA1eR9tUiOoXn".into(),
            }],
            "AIRLOCKTEST",
        )
        .unwrap()
    }

    #[test]
    fn canaries_are_found_however_they_travel() {
        let s = sink();
        let v = "q8ZrT3mWx0LbN5vPc2KsY7hJd4GfA1eR9tUiOoXn";
        let b64 = base64::engine::general_purpose::STANDARD;
        for carried in [
            format!("key={v}"),
            b64.encode(format!("k={v}&x=1")),
            b64.encode(format!("ab{v}")),
            b64.encode(format!("a{v}")),
            base64::engine::general_purpose::URL_SAFE.encode(format!("{{\"k\":\"{v}\"}}")),
            v.bytes().map(|b| format!("{b:02X}")).collect::<String>(),
            format!("{}.exfil.test", v.to_ascii_lowercase()),
        ] {
            let found = s.canaries_in(carried.as_bytes());
            assert_eq!(found, vec!["AWS_SECRET_ACCESS_KEY (environment)"], "{carried}");
        }
        assert!(s.canaries_in(b"q8ZrT3mWx0 nothing here").is_empty());
    }

    #[test]
    fn canaries_are_found_reversed_percent_encoded_chunked_and_gzipped() {
        use std::io::Write as _;
        let s = sink();
        let v = "q8ZrT3mWx0LbN5vPc2KsY7hJd4GfA1eR9tUiOoXn";
        let found = |bytes: &[u8]| views(bytes).iter().any(|b| !s.canaries_in(b).is_empty());
        let reversed: String = v.chars().rev().collect();
        assert!(found(format!("x={reversed}").as_bytes()));
        let percent: String = v.bytes().map(|b| format!("%{b:02X}")).collect();
        assert!(found(format!("GET /?k={percent} HTTP/1.1\r\n\r\n").as_bytes()));
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        gz.write_all(format!("{{\"k\":\"{v}\"}}").as_bytes()).unwrap();
        let mut request = b"POST /u HTTP/1.1\r\nContent-Encoding: gzip\r\n\r\n".to_vec();
        request.extend(gz.finish().unwrap());
        assert!(found(&request));
        let body = format!("k={v}");
        let mut chunked = b"POST /u HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n".to_vec();
        for piece in body.as_bytes().chunks(7) {
            chunked.extend(format!("{:x}\r\n", piece.len()).bytes());
            chunked.extend(piece);
            chunked.extend(b"\r\n");
        }
        chunked.extend(b"0\r\n\r\n");
        assert!(found(&chunked));
        // As a request's own credential only, it is said so.
        let bearer = format!("POST /v1/chat HTTP/1.1\r\nAuthorization: Bearer {v}\r\n\r\n{{}}");
        let all = s.canaries_in(bearer.as_bytes());
        assert_eq!(credential_only(&s, bearer.as_bytes(), &all), all);
        let both = format!("POST /v1 HTTP/1.1\r\nAuthorization: Bearer {v}\r\n\r\nk={v}");
        assert!(credential_only(&s, both.as_bytes(), &all).is_empty());
    }

    /// A reader that hands out one chunk per read, then the end.
    struct Chunks(Vec<Vec<u8>>);

    impl Read for Chunks {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            if self.0.is_empty() {
                return Ok(0);
            }
            let chunk = self.0.remove(0);
            buf[..chunk.len()].copy_from_slice(&chunk);
            Ok(chunk.len())
        }
    }

    #[test]
    fn requests_are_read_whole_and_shells_told_from_echoes() {
        assert!(!http_done(b"POST /x HTTP/1.1\r\nContent-Length: 5\r\n\r\nab"));
        assert!(http_done(b"POST /x HTTP/1.1\r\nContent-Length: 5\r\n\r\nabcde"));
        assert!(http_done(b"GET / HTTP/1.1\r\nHost: a\r\n\r\n"));
        assert!(http_done(b"SSH-2.0-OpenSSH_9.2\r\n"));
        assert_eq!(
            request_line(b"POST /upload?a=1 HTTP/1.1\r\n").as_deref(),
            Some("POST /upload?a=1")
        );
        assert_eq!(
            request_line(b"GET http://a.test:8080/x/y HTTP/1.1\r\n").as_deref(),
            Some("GET /x/y")
        );
        assert!(ran(b"$ AIRLOCK01\n$ ", "AIRLOCK01"));
        assert!(!ran(b"echo AIRLOCK01\n", "AIRLOCK01"));
        // A shell that echoes the probe line in one read and answers in the next is waited for.
        let mut chunks = Chunks(vec![
            b"bash-5.2$ echo AIRLOCK01\n".to_vec(),
            b"AIRLOCK01\nbash-5.2$ ".to_vec(),
        ]);
        let reply = read_patiently(&mut chunks, Instant::now(), PROBE_WAIT, |b| ran(b, "AIRLOCK01"));
        assert!(ran(&reply, "AIRLOCK01"), "{}", String::from_utf8_lossy(&reply));
        assert_eq!(printable(b"a\x1b[31mb\r\n"), "a\\x1b[31mb\n");
        // The served script runs the marker under sh and under Python.
        let reply = served("AIRLOCKTEST");
        let body = &reply[crate::find(&reply, b"\r\n\r\n").unwrap() + 4..];
        let dir = tempfile::tempdir().unwrap();
        let script = dir.path().join("s");
        fs_err::write(&script, body).unwrap();
        for shell in ["/bin/sh", "python3"] {
            let status = std::process::Command::new(shell).arg(&script).status().unwrap();
            assert!(status.success(), "{shell}");
        }
    }
}
