//! Reads the server name (SNI) from a TLS ClientHello without decrypting anything. Bounds-checked throughout: the
//! bytes come from the sandbox.

/// What the first bytes of a connection say.
#[derive(Debug, PartialEq, Eq)]
pub enum Hello {
    /// A ClientHello with this server name (lower case).
    Sni(String),
    /// A ClientHello without a server name.
    NoSni,
    /// Not (yet) a complete ClientHello record.
    Incomplete,
    /// Not TLS.
    NotTls,
}

/// Parses the first TLS record in `buf`.
pub fn parse(buf: &[u8]) -> Hello {
    if buf.is_empty() {
        return Hello::Incomplete;
    }
    if buf[0] != 0x16 {
        return Hello::NotTls;
    }
    if buf.len() < 5 {
        return Hello::Incomplete;
    }
    let len = usize::from(u16::from_be_bytes([buf[3], buf[4]]));
    let Some(record) = buf.get(5..5 + len) else {
        return Hello::Incomplete;
    };
    client_hello(record).unwrap_or(Hello::NotTls)
}

struct Cursor<'a>(&'a [u8]);

impl<'a> Cursor<'a> {
    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        let (head, rest) = (self.0.get(..n)?, self.0.get(n..)?);
        self.0 = rest;
        Some(head)
    }
    fn u8(&mut self) -> Option<usize> {
        self.take(1).map(|b| usize::from(b[0]))
    }
    fn u16(&mut self) -> Option<usize> {
        self.take(2)
            .map(|b| usize::from(u16::from_be_bytes([b[0], b[1]])))
    }
}

fn client_hello(record: &[u8]) -> Option<Hello> {
    let mut c = Cursor(record);
    if c.u8()? != 1 {
        return None;
    }
    let len = c.take(3)?;
    let len = (usize::from(len[0]) << 16) | (usize::from(len[1]) << 8) | usize::from(len[2]);
    let mut c = Cursor(c.take(len)?);
    c.take(2 + 32)?; // version, random
    let sid = c.u8()?;
    c.take(sid)?;
    let suites = c.u16()?;
    c.take(suites)?;
    let comp = c.u8()?;
    c.take(comp)?;
    if c.0.is_empty() {
        return Some(Hello::NoSni);
    }
    let ext_len = c.u16()?;
    let mut exts = Cursor(c.take(ext_len)?);
    while !exts.0.is_empty() {
        let kind = exts.u16()?;
        let len = exts.u16()?;
        let body = exts.take(len)?;
        if kind == 0 {
            let mut b = Cursor(body);
            let list = b.u16()?;
            let mut names = Cursor(b.take(list)?);
            while !names.0.is_empty() {
                let name_type = names.u8()?;
                let n = names.u16()?;
                let name = names.take(n)?;
                if name_type == 0 {
                    let name = std::str::from_utf8(name).ok()?;
                    return Some(Hello::Sni(name.trim_end_matches('.').to_ascii_lowercase()));
                }
            }
        }
    }
    Some(Hello::NoSni)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hello(name: Option<&str>) -> Vec<u8> {
        let mut ext = Vec::new();
        if let Some(n) = name {
            let n = n.as_bytes();
            let mut list = vec![0u8];
            list.extend_from_slice(&(n.len() as u16).to_be_bytes());
            list.extend_from_slice(n);
            let mut body = (list.len() as u16).to_be_bytes().to_vec();
            body.extend_from_slice(&list);
            ext.extend_from_slice(&[0, 0]);
            ext.extend_from_slice(&(body.len() as u16).to_be_bytes());
            ext.extend_from_slice(&body);
        }
        let mut hs = vec![3, 3];
        hs.extend_from_slice(&[7; 32]);
        hs.push(0);
        hs.extend_from_slice(&[0, 2, 0x13, 0x01, 1, 0]);
        hs.extend_from_slice(&(ext.len() as u16).to_be_bytes());
        hs.extend_from_slice(&ext);
        let mut msg = vec![1, 0, (hs.len() >> 8) as u8, hs.len() as u8];
        msg.extend_from_slice(&hs);
        let mut rec = vec![0x16, 3, 1, (msg.len() >> 8) as u8, msg.len() as u8];
        rec.extend_from_slice(&msg);
        rec
    }

    #[test]
    fn reads_the_server_name() {
        assert_eq!(parse(&hello(Some("Api.Test"))), Hello::Sni("api.test".into()));
        assert_eq!(parse(&hello(None)), Hello::NoSni);
        let full = hello(Some("api.test"));
        assert_eq!(parse(&full[..full.len() - 3]), Hello::Incomplete);
        assert_eq!(parse(b"GET / HTTP/1.1\r\n"), Hello::NotTls);
        // Truncated lengths inside a complete record never panic.
        for cut in 0..full.len() {
            let mut broken = full.clone();
            broken[cut] = 0xff;
            let _ = parse(&broken);
        }
    }
}
