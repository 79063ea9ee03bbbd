//! DNS messages (RFC 1035), only as much as a stub resolver needs: a recursive query for one
//! name and type, and the addresses (or the reason for none) in its answer.

use std::net::IpAddr;

/// Record type A: an IPv4 address.
pub const A: u16 = 1;
/// Record type AAAA: an IPv6 address.
pub const AAAA: u16 = 28;
/// Class IN.
const IN: u16 = 1;
/// Header flags of a query: recursion desired.
const RD: u16 = 0x0100;
/// Header flag of a response.
const QR: u16 = 0x8000;
/// Header flag: the answer did not fit (UDP) and must be asked again over TCP.
const TC: u16 = 0x0200;

/// What a server said about a name and type.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Answer {
    /// The addresses it has (at least one).
    Addresses(Vec<IpAddr>),
    /// The name does not exist (NXDOMAIN).
    NoSuchName,
    /// The name exists but has no record of this type (NODATA).
    NoData,
    /// The answer was cut to fit a UDP datagram: ask over TCP.
    Truncated,
    /// The server could not answer (its RCODE: 2 SERVFAIL, 5 REFUSED, ...).
    Failed(u8),
}

/// A recursive query for `name` (no trailing dot) and `qtype`, with id `id`.
pub fn query(id: u16, name: &str, qtype: u16) -> Result<Vec<u8>, String> {
    let mut message = Vec::with_capacity(18 + name.len());
    message.extend_from_slice(&id.to_be_bytes());
    message.extend_from_slice(&RD.to_be_bytes());
    message.extend_from_slice(&[0, 1, 0, 0, 0, 0, 0, 0]); // one question, nothing else
    for label in name.split('.') {
        if label.is_empty() || label.len() > 63 {
            return Err(format!("invalid DNS name {name}"));
        }
        message.push(label.len() as u8);
        message.extend_from_slice(label.as_bytes());
    }
    message.push(0);
    if message.len() - 12 > 255 {
        return Err(format!("DNS name too long: {name}"));
    }
    message.extend_from_slice(&qtype.to_be_bytes());
    message.extend_from_slice(&IN.to_be_bytes());
    Ok(message)
}

/// Reads the response to `query`. `Ok(None)` is a message that is not its response (another
/// id or question: ignored, as a resolver must); `Err` a malformed one.
pub fn parse(query: &[u8], response: &[u8]) -> Result<Option<Answer>, String> {
    let mut reader = Reader {
        bytes: response,
        at: 0,
    };
    let id = reader.u16()?;
    let flags = reader.u16()?;
    let questions = reader.u16()?;
    let answers = reader.u16()?;
    reader.skip(4)?; // authority and additional counts
    let question = &query[12..];
    let echoed = response.get(12..12 + question.len());
    if id.to_be_bytes() != query[..2]
        || flags & QR == 0
        || questions != 1
        || !echoed.is_some_and(|echoed| echoed.eq_ignore_ascii_case(question))
    {
        return Ok(None);
    }
    if flags & TC != 0 {
        return Ok(Some(Answer::Truncated));
    }
    match (flags & 0x000f) as u8 {
        0 => {}
        3 => return Ok(Some(Answer::NoSuchName)),
        rcode => return Ok(Some(Answer::Failed(rcode))),
    }
    reader.skip(question.len())?;
    let qtype = u16::from_be_bytes([question[question.len() - 4], question[question.len() - 3]]);
    let mut addresses = Vec::new();
    // The answer section holds any CNAME chain and then the target's addresses; like musl,
    // every address of the asked type in it is taken.
    for _ in 0..answers {
        reader.skip_name()?;
        let rtype = reader.u16()?;
        let class = reader.u16()?;
        reader.skip(4)?; // TTL: nothing is kept, so it does not matter
        let length = usize::from(reader.u16()?);
        let data = reader.take(length)?;
        match (rtype, class, data.len()) {
            (A, IN, 4) if qtype == A => {
                addresses.push(IpAddr::from(<[u8; 4]>::try_from(data).expect("4 bytes")));
            }
            (AAAA, IN, 16) if qtype == AAAA => {
                addresses.push(IpAddr::from(<[u8; 16]>::try_from(data).expect("16 bytes")));
            }
            _ => {}
        }
    }
    Ok(Some(if addresses.is_empty() {
        Answer::NoData
    } else {
        Answer::Addresses(addresses)
    }))
}

/// A cursor over a message; running past its end is a malformed message, never a panic.
struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Reader<'a> {
    fn take(&mut self, count: usize) -> Result<&'a [u8], String> {
        let end = self
            .at
            .checked_add(count)
            .filter(|end| *end <= self.bytes.len());
        let end = end.ok_or("malformed DNS answer (too short)")?;
        let taken = &self.bytes[self.at..end];
        self.at = end;
        Ok(taken)
    }

    fn skip(&mut self, count: usize) -> Result<(), String> {
        self.take(count).map(drop)
    }

    fn u16(&mut self) -> Result<u16, String> {
        let bytes = self.take(2)?;
        Ok(u16::from_be_bytes([bytes[0], bytes[1]]))
    }

    /// Skips a name: labels up to the root, or up to a compression pointer (which ends it).
    fn skip_name(&mut self) -> Result<(), String> {
        loop {
            let length = self.take(1)?[0];
            match length {
                0 => return Ok(()),
                1..=63 => self.skip(usize::from(length))?,
                0xc0..=0xff => return self.skip(1),
                _ => return Err("malformed DNS answer (bad label)".into()),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A response to `query`: header flags, then answer records (name as a pointer to the
    /// question, type, data).
    fn response(query: &[u8], flags: u16, records: &[(u16, &[u8])]) -> Vec<u8> {
        let mut message = query[..2].to_vec();
        message.extend_from_slice(&(flags | QR).to_be_bytes());
        message.extend_from_slice(&[0, 1]);
        message.extend_from_slice(&(records.len() as u16).to_be_bytes());
        message.extend_from_slice(&[0, 0, 0, 0]);
        message.extend_from_slice(&query[12..]);
        for (rtype, data) in records {
            message.extend_from_slice(&[0xc0, 12]);
            message.extend_from_slice(&rtype.to_be_bytes());
            message.extend_from_slice(&IN.to_be_bytes());
            message.extend_from_slice(&[0, 0, 0, 30]);
            message.extend_from_slice(&(data.len() as u16).to_be_bytes());
            message.extend_from_slice(data);
        }
        message
    }

    #[test]
    fn queries_encode_as_rfc_1035() {
        let q = query(0x1234, "web.default", A).unwrap();
        assert_eq!(
            q,
            [
                0x12, 0x34, 0x01, 0x00, 0, 1, 0, 0, 0, 0, 0, 0, 3, b'w', b'e', b'b', 7, b'd', b'e',
                b'f', b'a', b'u', b'l', b't', 0, 0, 1, 0, 1
            ]
        );
        assert!(query(1, "a..b", A).is_err());
        assert!(query(1, &"x".repeat(64), A).is_err());
        let long = vec!["abcdefghij"; 25].join(".");
        assert!(query(1, &long, A).is_err());
    }

    #[test]
    fn addresses_are_read_past_a_cname_chain() {
        let q = query(7, "web", A).unwrap();
        let cname = [3, b'w', b'w', b'w', 0xc0, 12];
        let r = response(
            &q,
            0,
            &[(5, &cname), (A, &[10, 0, 0, 1]), (A, &[10, 0, 0, 2])],
        );
        assert_eq!(
            parse(&q, &r),
            Ok(Some(Answer::Addresses(vec![
                "10.0.0.1".parse().unwrap(),
                "10.0.0.2".parse().unwrap()
            ])))
        );
        let q6 = query(8, "web", AAAA).unwrap();
        let mut v6 = [0u8; 16];
        v6[15] = 1;
        let r = response(&q6, 0, &[(AAAA, &v6), (A, &[10, 0, 0, 1])]);
        assert_eq!(
            parse(&q6, &r),
            Ok(Some(Answer::Addresses(vec!["::1".parse().unwrap()])))
        );
    }

    #[test]
    fn negative_and_failed_answers_are_told_apart() {
        let q = query(9, "missing", A).unwrap();
        assert_eq!(
            parse(&q, &response(&q, 3, &[])),
            Ok(Some(Answer::NoSuchName))
        );
        assert_eq!(parse(&q, &response(&q, 0, &[])), Ok(Some(Answer::NoData)));
        assert_eq!(
            parse(&q, &response(&q, 2, &[])),
            Ok(Some(Answer::Failed(2)))
        );
        assert_eq!(
            parse(&q, &response(&q, 5, &[])),
            Ok(Some(Answer::Failed(5)))
        );
        assert_eq!(
            parse(&q, &response(&q, TC, &[])),
            Ok(Some(Answer::Truncated))
        );
    }

    #[test]
    fn answers_to_other_queries_are_ignored() {
        let q = query(10, "web", A).unwrap();
        let other_id = query(11, "web", A).unwrap();
        assert_eq!(parse(&q, &response(&other_id, 0, &[])), Ok(None));
        let other_name = query(10, "wex", A).unwrap();
        assert_eq!(parse(&q, &response(&other_name, 0, &[])), Ok(None));
        let mut not_a_response = response(&q, 0, &[]);
        not_a_response[2] &= 0x7f;
        assert_eq!(parse(&q, &not_a_response), Ok(None));
        // Case may differ (0x20 randomisation): still the same question.
        let upper = query(10, "WEB", A).unwrap();
        assert_eq!(
            parse(&q, &response(&upper, 0, &[])),
            Ok(Some(Answer::NoData))
        );
    }

    #[test]
    fn malformed_answers_are_errors_not_panics() {
        let q = query(12, "web", A).unwrap();
        let full = response(&q, 0, &[(A, &[10, 0, 0, 1])]);
        for cut in 0..full.len() {
            let _ = parse(&q, &full[..cut]);
        }
        assert!(parse(&q, &full[..full.len() - 1]).is_err());
        let mut bad_label = full.clone();
        bad_label[q.len()] = 0x80;
        assert!(parse(&q, &bad_label).is_err());
    }
}
