//! A DNS stub for the sandbox: it answers A queries for names the policy allows with an address from a reserved
//! range (198.18.0.0/15) that the egress proxy maps back to the name, answers nothing else, and forwards nothing:
//! a query can neither reach a real resolver nor carry data out.

/// A parsed question.
#[derive(Debug, PartialEq, Eq)]
pub struct Query {
    pub id: u16,
    pub name: String,
    pub qtype: u16,
    /// The question section as received, echoed in the answer.
    question: Vec<u8>,
    rd: bool,
}

pub const TYPE_A: u16 = 1;
pub const TYPE_AAAA: u16 = 28;

/// The record type's name for the record: `A`, `AAAA` or `other`.
pub fn type_name(qtype: u16) -> &'static str {
    match qtype {
        TYPE_A => "A",
        TYPE_AAAA => "AAAA",
        _ => "other",
    }
}

/// Parses a query with exactly one question; `None` for anything else.
pub fn parse(packet: &[u8]) -> Option<Query> {
    if packet.len() < 12 || packet.len() > 512 {
        return None;
    }
    let id = u16::from_be_bytes([packet[0], packet[1]]);
    let flags = u16::from_be_bytes([packet[2], packet[3]]);
    if flags & 0x8000 != 0 || u16::from_be_bytes([packet[4], packet[5]]) != 1 {
        return None;
    }
    let mut at = 12;
    let mut labels = Vec::new();
    loop {
        let len = usize::from(*packet.get(at)?);
        at += 1;
        if len == 0 {
            break;
        }
        if len > 63 {
            return None; // compression pointers have no place in a question
        }
        let label = packet.get(at..at + len)?;
        labels.push(String::from_utf8_lossy(label).to_ascii_lowercase());
        at += len;
        if at > 12 + 255 {
            return None;
        }
    }
    let qtype = u16::from_be_bytes([*packet.get(at)?, *packet.get(at + 1)?]);
    let question = packet.get(12..at + 4)?.to_vec();
    Some(Query {
        id,
        name: labels.join("."),
        qtype,
        question,
        rd: flags & 0x0100 != 0,
    })
}

/// The answer: `Some(addr)` answers an A query, `None` with `refuse` answers NXDOMAIN, else an empty NOERROR.
pub fn answer(q: &Query, addr: Option<std::net::Ipv4Addr>, refuse: bool) -> Vec<u8> {
    let rcode: u16 = if refuse { 3 } else { 0 };
    let mut flags = 0x8000 | 0x0400 | 0x0080 | rcode; // response, authoritative, recursion available
    if q.rd {
        flags |= 0x0100;
    }
    let ancount: u16 = u16::from(addr.is_some() && q.qtype == TYPE_A);
    let mut out = Vec::with_capacity(64);
    out.extend_from_slice(&q.id.to_be_bytes());
    out.extend_from_slice(&flags.to_be_bytes());
    out.extend_from_slice(&1u16.to_be_bytes());
    out.extend_from_slice(&ancount.to_be_bytes());
    out.extend_from_slice(&[0, 0, 0, 0]);
    out.extend_from_slice(&q.question);
    if let (Some(ip), 1) = (addr, ancount) {
        out.extend_from_slice(&[0xc0, 12]); // the name in the question
        out.extend_from_slice(&TYPE_A.to_be_bytes());
        out.extend_from_slice(&1u16.to_be_bytes());
        out.extend_from_slice(&30u32.to_be_bytes());
        out.extend_from_slice(&4u16.to_be_bytes());
        out.extend_from_slice(&ip.octets());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn query(name: &str, qtype: u16) -> Vec<u8> {
        let mut p = vec![0x12, 0x34, 0x01, 0x00, 0, 1, 0, 0, 0, 0, 0, 0];
        for l in name.split('.') {
            p.push(l.len() as u8);
            p.extend_from_slice(l.as_bytes());
        }
        p.push(0);
        p.extend_from_slice(&qtype.to_be_bytes());
        p.extend_from_slice(&[0, 1]);
        p
    }

    #[test]
    fn answers_a_queries_and_refuses_cleanly() {
        let q = parse(&query("Api.Test", TYPE_A)).unwrap();
        assert_eq!(q.name, "api.test");
        let a = answer(&q, Some("198.18.0.1".parse().unwrap()), false);
        assert_eq!(&a[..2], &[0x12, 0x34]);
        assert_eq!(a[7], 1);
        assert_eq!(&a[a.len() - 4..], &[198, 18, 0, 1]);
        let n = answer(&q, None, true);
        assert_eq!(n[3] & 0x0f, 3);
        assert!(parse(&[0; 5]).is_none());
        let mut bad = query("x.test", TYPE_A);
        bad[12] = 0xc0;
        assert!(parse(&bad).is_none());
        for cut in 0..20 {
            let _ = parse(&query("api.test", TYPE_A)[..cut]);
        }
    }
}
