//! DNS messages through `hickory-proto`, so untrusted bytes (names, compression pointers,
//! record lengths) are parsed by the well-kept crate. This adapter only decides what a response
//! means for one question: it must echo the id and question; only addresses of the asked type
//! and class count.

use std::net::IpAddr;

use hickory_proto::op::{Header, Message, MessageType, OpCode, Query, ResponseCode};
use hickory_proto::rr::{DNSClass, Name, RData, RecordType};
use hickory_proto::serialize::binary::{BinDecodable, BinDecoder};

/// What a server said about a name and type. A TTL is in seconds, as sent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Answer {
    /// At least one address, and the lowest TTL of the CNAME chain and address records.
    Addresses(Vec<IpAddr>, u32),
    /// NXDOMAIN or NODATA; with how long that may be believed, if an SOA says (RFC 2308).
    Negative(Option<u32>),
    /// Cut to fit a UDP datagram: ask over TCP.
    Truncated,
    /// The server could not answer: its RCODE (2 SERVFAIL, 5 REFUSED, ...).
    Failed(u16),
}

/// One recursive question, kept with its wire form so a response can be checked against it.
pub struct Question {
    id: u16,
    query: Query,
    pub wire: Vec<u8>,
}

impl Question {
    /// A recursive query for `name` (no trailing dot, labels taken as ASCII bytes) and `qtype`.
    pub fn new(id: u16, name: &str, qtype: RecordType) -> Result<Self, String> {
        let labels = name.split('.').map(str::as_bytes);
        let name = Name::from_labels(labels).map_err(|_| format!("invalid DNS name {name}"))?;
        let query = Query::query(name, qtype);
        let mut message = Message::new(id, MessageType::Query, OpCode::Query);
        message.metadata.recursion_desired = true;
        message.add_query(query.clone());
        let wire = message
            .to_vec()
            .map_err(|e| format!("cannot encode a DNS query: {e}"))?;
        Ok(Self { id, query, wire })
    }

    /// Reads a response: `Ok(None)` when it answers another question (ignored, as a resolver
    /// must), `Err` when it is malformed.
    pub fn answer(&self, response: &[u8]) -> Result<Option<Answer>, String> {
        // Not the crate's reason: it may spell out names, which links IDNA's Unicode tables.
        let malformed = |_| String::from("malformed DNS answer");
        let mut decoder = BinDecoder::new(response);
        let header = Header::read(&mut decoder).map_err(malformed)?;
        let metadata = header.metadata;
        if metadata.id != self.id
            || metadata.message_type != MessageType::Response
            || header.counts.queries != 1
        {
            return Ok(None);
        }
        // Compared without case: 0x20 randomisation is still the same question.
        if Query::read(&mut decoder).map_err(malformed)? != self.query {
            return Ok(None);
        }
        // Whatever a truncated answer holds is asked again over TCP.
        if metadata.truncation {
            return Ok(Some(Answer::Truncated));
        }
        let negative = match metadata.response_code {
            ResponseCode::NoError => false,
            ResponseCode::NXDomain => true,
            rcode => return Ok(Some(Answer::Failed(rcode.into()))),
        };
        let mut read = |count: u16| {
            let records =
                Message::read_records(&mut decoder, count.into(), false, metadata.op_code);
            records.map(|(records, ..)| records.into_iter().filter(|r| r.dns_class == DNSClass::IN))
        };
        // Like musl, every address of the asked type in the answer section, past any CNAMEs.
        let mut addresses = Vec::new();
        let mut ttl = u32::MAX;
        for record in read(header.counts.answers).map_err(malformed)? {
            match (record.data, self.query.query_type()) {
                (RData::A(a), RecordType::A) => addresses.push(IpAddr::V4(a.0)),
                (RData::AAAA(aaaa), RecordType::AAAA) => addresses.push(IpAddr::V6(aaaa.0)),
                (RData::CNAME(_), _) => {}
                _ => continue,
            }
            ttl = ttl.min(record.ttl);
        }
        if !negative && !addresses.is_empty() {
            return Ok(Some(Answer::Addresses(addresses, ttl)));
        }
        // RFC 2308, section 5: the smaller of the SOA's TTL and MINIMUM. An authority section
        // that cannot be read leaves the answer negative, only not kept.
        let mut authority = read(header.counts.authorities).into_iter().flatten();
        let ttl = authority.find_map(|record| match record.data {
            RData::SOA(soa) => Some(record.ttl.min(soa.minimum)),
            _ => None,
        });
        Ok(Some(Answer::Negative(ttl)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use RecordType::{A, AAAA};

    const CNAME: u16 = 5;
    const SOA: u16 = 6;
    /// Header flag: the answer did not fit.
    const TC: u16 = 0x0200;
    /// A CNAME's data: `www` and a pointer to the question's name.
    const WWW: &[u8] = &[3, b'w', b'w', b'w', 0xc0, 12];
    const IP1: &[u8] = &[10, 0, 0, 1];
    const IP2: &[u8] = &[10, 0, 0, 2];
    const V6_LOOPBACK: &[u8] = &[0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1];

    /// A record: type, TTL, data.
    type Rr<'a> = (u16, u32, &'a [u8]);

    fn question(id: u16, name: &str, qtype: RecordType) -> Question {
        Question::new(id, name, qtype).unwrap()
    }

    /// A response to `query` built by hand, so the crate is tested against independent bytes:
    /// header flags, then the records, each named by a pointer to the question (SOA records
    /// in the authority section, the others in the answer section).
    fn response(query: &[u8], flags: u16, records: &[Rr]) -> Vec<u8> {
        let (authority, answers): (Vec<Rr>, Vec<Rr>) = records.iter().partition(|r| r.0 == SOA);
        let mut message = query[..2].to_vec();
        message.extend_from_slice(&(flags | 0x8000).to_be_bytes());
        for count in [1, answers.len(), authority.len(), 0] {
            message.extend_from_slice(&(count as u16).to_be_bytes());
        }
        message.extend_from_slice(&query[12..]);
        for (rtype, ttl, data) in answers.iter().chain(&authority) {
            message.extend_from_slice(&[0xc0, 12]);
            message.extend_from_slice(&rtype.to_be_bytes());
            message.extend_from_slice(&[0, 1]); // class IN
            message.extend_from_slice(&ttl.to_be_bytes());
            message.extend_from_slice(&(data.len() as u16).to_be_bytes());
            message.extend_from_slice(data);
        }
        message
    }

    /// SOA data: root names for MNAME and RNAME, then serial, refresh, retry, expire, minimum.
    fn soa(minimum: u32) -> Vec<u8> {
        let fields = [1, 7200, 1800, 86400, minimum].map(u32::to_be_bytes);
        [&[0, 0], fields.as_flattened()].concat()
    }

    /// Addresses (separated by spaces) with their TTL.
    fn addrs(list: &str, ttl: u32) -> Answer {
        let ips = list.split(' ').map(|ip| ip.parse().unwrap()).collect();
        Answer::Addresses(ips, ttl)
    }

    #[test]
    fn queries_encode_as_rfc_1035() {
        let q = question(0x1234, "web.default", A);
        let mut expected = vec![0x12, 0x34, 0x01, 0x00, 0, 1, 0, 0, 0, 0, 0, 0, 3];
        expected.extend_from_slice(b"web\x07default\x00\x00\x01\x00\x01");
        assert_eq!(q.wire, expected);
        assert_eq!(question(1, "web", AAAA).wire[16..], [0, 0, 28, 0, 1]);
        let long = vec!["abcdefghij"; 25].join(".");
        for bad in ["a..b", &"x".repeat(64), &long] {
            assert!(Question::new(1, bad, A).is_err(), "{bad}");
        }
    }

    #[test]
    fn what_an_answer_means() {
        let (soa5, soa30) = (soa(5), soa(30));
        let chain = [(CNAME, 30, WWW), (1, 30, IP1), (1, 30, IP2)];
        let lowest = [(CNAME, 7, WWW), (1, 20, IP1), (1, 9, IP2)];
        let both = [(28, 30, V6_LOOPBACK), (1, 30, IP1)];
        let cases: [(RecordType, u16, &[Rr], Answer); 15] = [
            // Addresses past a CNAME chain, with the chain's lowest TTL.
            (A, 0, &chain, addrs("10.0.0.1 10.0.0.2", 30)),
            (A, 0, &lowest, addrs("10.0.0.1 10.0.0.2", 7)),
            (A, 0, &[(1, 0, IP1)], addrs("10.0.0.1", 0)),
            // Only records of the asked type.
            (AAAA, 0, &both, addrs("::1", 30)),
            (A, 0, &[(28, 30, V6_LOOPBACK)], Answer::Negative(None)),
            // NXDOMAIN and NODATA, kept as the SOA says: its MINIMUM or its TTL if lower.
            (A, 3, &[], Answer::Negative(None)),
            (A, 0, &[], Answer::Negative(None)),
            (A, 3, &[(SOA, 60, &soa5)], Answer::Negative(Some(5))),
            (A, 3, &[(SOA, 2, &soa5)], Answer::Negative(Some(2))),
            (A, 0, &[(SOA, 30, &soa30)], Answer::Negative(Some(30))),
            (A, 0, &[(SOA, 0, &soa30)], Answer::Negative(Some(0))),
            // Failures and truncation.
            (A, 2, &[], Answer::Failed(2)),
            (A, 5, &[], Answer::Failed(5)),
            (A, TC, &[], Answer::Truncated),
            (A, TC, &[(1, 30, IP1)], Answer::Truncated),
        ];
        for (qtype, flags, records, expected) in cases {
            let q = question(7, "web", qtype);
            let r = response(&q.wire, flags, records);
            assert_eq!(q.answer(&r), Ok(Some(expected)), "{r:?}");
        }
    }

    #[test]
    fn answers_cut_short_or_in_another_class() {
        let q = question(9, "web", A);
        // A truncated answer may be cut anywhere after the question: still "ask over TCP".
        let mut cut = response(&q.wire, TC, &[(1, 30, IP1)]);
        cut.truncate(cut.len() - 3);
        assert_eq!(q.answer(&cut), Ok(Some(Answer::Truncated)));
        // An authority section that cannot be read leaves the answer negative, only not kept.
        let mut r = response(&q.wire, 3, &[(SOA, 60, &soa(5))]);
        r.truncate(r.len() - 2);
        assert_eq!(q.answer(&r), Ok(Some(Answer::Negative(None))));
        let mut chaos = response(&q.wire, 0, &[(1, 30, IP1)]);
        let class_at = chaos.len() - 4 - 2 - 4 - 2;
        chaos[class_at..class_at + 2].copy_from_slice(&[0, 3]);
        assert_eq!(q.answer(&chaos), Ok(Some(Answer::Negative(None))));
    }

    #[test]
    fn answers_to_other_queries_are_ignored() {
        let q = question(10, "web", A);
        for (id, name, qtype) in [(11, "web", A), (10, "wex", A), (10, "web", AAAA)] {
            let other = question(id, name, qtype);
            assert_eq!(q.answer(&response(&other.wire, 0, &[])), Ok(None));
        }
        let mut not_a_response = response(&q.wire, 0, &[]);
        not_a_response[2] &= 0x7f;
        assert_eq!(q.answer(&not_a_response), Ok(None));
        // Case may differ (0x20 randomisation): still the same question.
        let upper = question(10, "WEB", A);
        let r = response(&upper.wire, 0, &[]);
        assert_eq!(q.answer(&r), Ok(Some(Answer::Negative(None))));
    }

    #[test]
    fn malformed_answers_are_errors_not_panics() {
        let q = question(12, "web", A);
        let full = response(&q.wire, 0, &[(1, 30, IP1)]);
        for cut in 0..full.len() {
            let _ = q.answer(&full[..cut]);
        }
        assert!(q.answer(&full[..full.len() - 1]).is_err());
        let at = q.wire.len();
        let mut bad_label = full.clone();
        bad_label[at] = 0x80;
        assert!(q.answer(&bad_label).is_err());
        // A compression pointer that points at itself must not loop.
        let mut looping = full.clone();
        looping[at..at + 2].copy_from_slice(&[0xc0, at as u8]);
        assert!(q.answer(&looping).is_err());
    }
}
