//! DNS messages through `hickory-proto`: answers come from the network, so the parsing of
//! untrusted bytes (names, compression pointers, record lengths) is the well-kept crate's, not
//! ours (it is the standard Rust DNS codec; without its `std` feature no rand and no runtime
//! code is linked). This adapter only decides what a response means for one question: it
//! must echo the question's id and question, and only addresses of the asked type and class
//! count.

use std::net::IpAddr;

use hickory_proto::op::{Header, Message, MessageType, OpCode, Query, ResponseCode};
use hickory_proto::rr::{DNSClass, Name, RData, Record};

/// A record type to ask for ([`A`] or [`AAAA`]).
pub use hickory_proto::rr::RecordType;
use hickory_proto::serialize::binary::{BinDecodable, BinDecoder};

/// Record type A: an IPv4 address.
pub const A: RecordType = RecordType::A;
/// Record type AAAA: an IPv6 address.
pub const AAAA: RecordType = RecordType::AAAA;

/// What a server said about a name and type. A TTL is in seconds, as sent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Answer {
    /// The addresses it has (at least one), and the lowest TTL of the records that led to
    /// them (the CNAME chain and the address RRset).
    Addresses(Vec<IpAddr>, u32),
    /// The name does not exist (NXDOMAIN); with how long that may be believed, if the
    /// authority section says (RFC 2308).
    NoSuchName(Option<u32>),
    /// The name exists but has no record of this type (NODATA); TTL as for `NoSuchName`.
    NoData(Option<u32>),
    /// The answer was cut to fit a UDP datagram: ask over TCP.
    Truncated,
    /// The server could not answer (its RCODE: 2 SERVFAIL, 5 REFUSED, ...).
    Failed(u16),
}

/// One recursive question for a name and type, kept with its wire form so a response can be
/// checked against it.
pub struct Question {
    id: u16,
    query: Query,
    wire: Vec<u8>,
}

impl Question {
    /// A recursive query for `name` (no trailing dot) and `qtype`, with id `id`. The labels
    /// are taken as bytes: no IDNA, no escapes (names are ASCII by now).
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

    /// The query as sent.
    pub fn wire(&self) -> &[u8] {
        &self.wire
    }

    /// Reads a response. `Ok(None)` is a message that is not the response to this question
    /// (another id or question: ignored, as a resolver must); `Err` a malformed one.
    pub fn answer(&self, response: &[u8]) -> Result<Option<Answer>, String> {
        // The crate's reason is not shown: its text may spell out names from the answer, and
        // doing so links IDNA's Unicode tables into the binary.
        let malformed = |_| String::from("malformed DNS answer");
        let mut decoder = BinDecoder::new(response);
        let header = Header::read(&mut decoder).map_err(malformed)?;
        if header.metadata.id != self.id
            || header.metadata.message_type != MessageType::Response
            || header.counts.queries != 1
        {
            return Ok(None);
        }
        // Name comparison is case-insensitive (0x20 randomisation is still the same question).
        let echoed = Query::read(&mut decoder).map_err(malformed)?;
        if echoed != self.query {
            return Ok(None);
        }
        // A truncated answer is read no further: whatever was cut off is asked again over TCP.
        if header.metadata.truncation {
            return Ok(Some(Answer::Truncated));
        }
        let negative = match header.metadata.response_code {
            ResponseCode::NoError => false,
            ResponseCode::NXDomain => true,
            rcode => return Ok(Some(Answer::Failed(rcode.into()))),
        };
        let read = |decoder: &mut BinDecoder<'_>, count: u16| {
            Message::read_records(decoder, usize::from(count), false, header.metadata.op_code)
                .map(|(records, _, _)| records)
        };
        let records = read(&mut decoder, header.counts.answers).map_err(malformed)?;
        // The answer section holds any CNAME chain and then the target's addresses; like musl,
        // every address of the asked type in it is taken.
        let asked = self.query.query_type();
        let mut addresses = Vec::new();
        let mut ttl = u32::MAX;
        for record in records.iter().filter(|r| r.dns_class == DNSClass::IN) {
            match &record.data {
                RData::A(a) if asked == A => addresses.push(IpAddr::V4(a.0)),
                RData::AAAA(aaaa) if asked == AAAA => addresses.push(IpAddr::V6(aaaa.0)),
                RData::CNAME(_) => {}
                _ => continue,
            }
            ttl = ttl.min(record.ttl);
        }
        if !negative && !addresses.is_empty() {
            return Ok(Some(Answer::Addresses(addresses, ttl)));
        }
        // A negative answer stands even when the authority section cannot be read: it is then
        // only not kept.
        let negative_ttl = read(&mut decoder, header.counts.authorities)
            .ok()
            .and_then(|records| negative_ttl(&records));
        Ok(Some(match negative {
            true => Answer::NoSuchName(negative_ttl),
            false => Answer::NoData(negative_ttl),
        }))
    }
}

/// How long a negative answer may be kept (RFC 2308, section 5): the smaller of the SOA
/// record's own TTL and its MINIMUM field, from the authority section; `None` without an SOA.
fn negative_ttl(authority: &[Record]) -> Option<u32> {
    authority
        .iter()
        .filter(|record| record.dns_class == DNSClass::IN)
        .find_map(|record| match &record.data {
            RData::SOA(soa) => Some(record.ttl.min(soa.minimum)),
            _ => None,
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Record type CNAME.
    const CNAME: u16 = 5;
    /// Record type SOA.
    const SOA: u16 = 6;
    /// Header flag: the answer did not fit.
    const TC: u16 = 0x0200;

    fn question(id: u16, name: &str, qtype: RecordType) -> Question {
        Question::new(id, name, qtype).unwrap()
    }

    /// A response to `query`, built by hand so the crate is tested against independent bytes:
    /// header flags, then answer records (name as a pointer to the question, type, data), all
    /// with TTL 30.
    fn response(query: &[u8], flags: u16, records: &[(u16, &[u8])]) -> Vec<u8> {
        let records: Vec<_> = records.iter().map(|&(t, d)| (t, 30, d)).collect();
        response_with(query, flags, &records, &[])
    }

    /// As [`response`], with a TTL per answer record and an authority section.
    fn response_with(
        query: &[u8],
        flags: u16,
        answers: &[(u16, u32, &[u8])],
        authority: &[(u16, u32, &[u8])],
    ) -> Vec<u8> {
        let mut message = query[..2].to_vec();
        message.extend_from_slice(&(flags | 0x8000).to_be_bytes());
        message.extend_from_slice(&[0, 1]);
        message.extend_from_slice(&(answers.len() as u16).to_be_bytes());
        message.extend_from_slice(&(authority.len() as u16).to_be_bytes());
        message.extend_from_slice(&[0, 0]);
        message.extend_from_slice(&query[12..]);
        for (rtype, ttl, data) in answers.iter().chain(authority) {
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
        let mut data = vec![0, 0];
        for field in [1, 7200, 1800, 86400, minimum] {
            data.extend_from_slice(&u32::to_be_bytes(field));
        }
        data
    }

    #[test]
    fn queries_encode_as_rfc_1035() {
        let q = question(0x1234, "web.default", A);
        assert_eq!(
            q.wire(),
            [
                0x12, 0x34, 0x01, 0x00, 0, 1, 0, 0, 0, 0, 0, 0, 3, b'w', b'e', b'b', 7, b'd', b'e',
                b'f', b'a', b'u', b'l', b't', 0, 0, 1, 0, 1
            ]
        );
        assert_eq!(question(1, "web", AAAA).wire()[16..], [0, 0, 28, 0, 1]);
        assert!(Question::new(1, "a..b", A).is_err());
        assert!(Question::new(1, &"x".repeat(64), A).is_err());
        let long = vec!["abcdefghij"; 25].join(".");
        assert!(Question::new(1, &long, A).is_err());
    }

    #[test]
    fn addresses_are_read_past_a_cname_chain() {
        let q = question(7, "web", A);
        let cname = [3, b'w', b'w', b'w', 0xc0, 12];
        let r = response(
            q.wire(),
            0,
            &[(CNAME, &cname), (1, &[10, 0, 0, 1]), (1, &[10, 0, 0, 2])],
        );
        assert_eq!(
            q.answer(&r),
            Ok(Some(Answer::Addresses(
                vec!["10.0.0.1".parse().unwrap(), "10.0.0.2".parse().unwrap()],
                30
            )))
        );
        let q6 = question(8, "web", AAAA);
        let mut v6 = [0u8; 16];
        v6[15] = 1;
        let r = response(q6.wire(), 0, &[(28, &v6), (1, &[10, 0, 0, 1])]);
        assert_eq!(
            q6.answer(&r),
            Ok(Some(Answer::Addresses(vec!["::1".parse().unwrap()], 30)))
        );
    }

    #[test]
    fn negative_and_failed_answers_are_told_apart() {
        let q = question(9, "missing", A);
        let w = q.wire();
        assert_eq!(
            q.answer(&response(w, 3, &[])),
            Ok(Some(Answer::NoSuchName(None)))
        );
        assert_eq!(
            q.answer(&response(w, 0, &[])),
            Ok(Some(Answer::NoData(None)))
        );
        assert_eq!(q.answer(&response(w, 2, &[])), Ok(Some(Answer::Failed(2))));
        assert_eq!(q.answer(&response(w, 5, &[])), Ok(Some(Answer::Failed(5))));
        assert_eq!(q.answer(&response(w, TC, &[])), Ok(Some(Answer::Truncated)));
        // A truncated answer may be cut anywhere after the question: still "ask over TCP".
        let mut cut = response(w, TC, &[(1, &[10, 0, 0, 1])]);
        cut.truncate(cut.len() - 3);
        assert_eq!(q.answer(&cut), Ok(Some(Answer::Truncated)));
    }

    #[test]
    fn answers_to_other_queries_are_ignored() {
        let q = question(10, "web", A);
        let other_id = question(11, "web", A);
        assert_eq!(q.answer(&response(other_id.wire(), 0, &[])), Ok(None));
        let other_name = question(10, "wex", A);
        assert_eq!(q.answer(&response(other_name.wire(), 0, &[])), Ok(None));
        let other_type = question(10, "web", AAAA);
        assert_eq!(q.answer(&response(other_type.wire(), 0, &[])), Ok(None));
        let mut not_a_response = response(q.wire(), 0, &[]);
        not_a_response[2] &= 0x7f;
        assert_eq!(q.answer(&not_a_response), Ok(None));
        // Case may differ (0x20 randomisation): still the same question.
        let upper = question(10, "WEB", A);
        assert_eq!(
            q.answer(&response(upper.wire(), 0, &[])),
            Ok(Some(Answer::NoData(None)))
        );
    }

    #[test]
    fn records_of_another_type_or_class_are_not_addresses() {
        let q = question(13, "web", A);
        let mut chaos = response(q.wire(), 0, &[(1, &[10, 0, 0, 1])]);
        let class_at = chaos.len() - 4 - 2 - 4 - 2;
        chaos[class_at..class_at + 2].copy_from_slice(&[0, 3]);
        assert_eq!(q.answer(&chaos), Ok(Some(Answer::NoData(None))));
        let mut v6 = [0u8; 16];
        v6[15] = 1;
        let r = response(q.wire(), 0, &[(28, &v6)]);
        assert_eq!(q.answer(&r), Ok(Some(Answer::NoData(None))));
    }

    #[test]
    fn the_lowest_ttl_of_the_chain_is_the_answers() {
        let q = question(14, "web", A);
        let cname = [3, b'w', b'w', b'w', 0xc0, 12];
        let r = response_with(
            q.wire(),
            0,
            &[
                (CNAME, 7, &cname),
                (1, 20, &[10, 0, 0, 1]),
                (1, 9, &[10, 0, 0, 2]),
            ],
            &[],
        );
        let Ok(Some(Answer::Addresses(ips, ttl))) = q.answer(&r) else {
            panic!("no addresses in {r:?}");
        };
        assert_eq!((ips.len(), ttl), (2, 7));
        let r = response_with(q.wire(), 0, &[(1, 0, &[10, 0, 0, 1])], &[]);
        assert!(matches!(q.answer(&r), Ok(Some(Answer::Addresses(_, 0)))));
    }

    #[test]
    fn a_negative_answer_lasts_the_soa_minimum_or_its_ttl_if_lower() {
        let q = question(15, "missing", A);
        let w = q.wire();
        let cases = [
            (3, 60, 5, Answer::NoSuchName(Some(5))),
            (3, 2, 5, Answer::NoSuchName(Some(2))),
            (0, 30, 30, Answer::NoData(Some(30))),
            (0, 0, 30, Answer::NoData(Some(0))),
        ];
        for (flags, ttl, minimum, expected) in cases {
            let soa = soa(minimum);
            let r = response_with(w, flags, &[], &[(SOA, ttl, &soa)]);
            assert_eq!(q.answer(&r), Ok(Some(expected)));
        }
        // An authority section that cannot be read leaves the answer negative, only not kept.
        let soa = soa(5);
        let mut r = response_with(w, 3, &[], &[(SOA, 60, &soa)]);
        r.truncate(r.len() - 2);
        assert_eq!(q.answer(&r), Ok(Some(Answer::NoSuchName(None))));
    }

    #[test]
    fn malformed_answers_are_errors_not_panics() {
        let q = question(12, "web", A);
        let full = response(q.wire(), 0, &[(1, &[10, 0, 0, 1])]);
        for cut in 0..full.len() {
            let _ = q.answer(&full[..cut]);
        }
        assert!(q.answer(&full[..full.len() - 1]).is_err());
        let mut bad_label = full.clone();
        bad_label[q.wire().len()] = 0x80;
        assert!(q.answer(&bad_label).is_err());
        // A compression pointer that points at itself must not loop.
        let mut looping = full.clone();
        let at = q.wire().len();
        looping[at..at + 2].copy_from_slice(&[0xc0, at as u8]);
        assert!(q.answer(&looping).is_err());
    }
}
