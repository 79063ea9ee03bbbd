//! The few bytes of Kafka's protocol a readiness check needs, written by hand: a request frame
//! (header v1, or v2 for a flexible version), and a bounded reader of the three answers
//! (ApiVersions v0, Metadata v1, DescribeCluster v1). Every length and count is checked against
//! the bytes that are there before anything is kept, so a hostile answer costs no more memory
//! than its frame, which the caller caps.

use super::super::exchange::Exchange;
use crate::error::Failure;

/// The client id every request carries, as the broker's request log shows it.
const CLIENT_ID: &[u8] = b"readygate";

/// ApiVersions: which requests, in which versions, the listener takes.
pub const API_VERSIONS: i16 = 18;
/// Metadata: the live brokers and the controller, as a broker sees them.
pub const METADATA: i16 = 3;
/// DescribeCluster: what a KRaft controller's listener answers about the quorum.
pub const DESCRIBE_CLUSTER: i16 = 60;

/// A request frame: size, header (key, version, correlation id, client id, and for a flexible
/// version no tagged fields), then `body`.
pub fn request(key: i16, version: i16, correlation: i32, flexible: bool, body: &[u8]) -> Vec<u8> {
    let mut frame = vec![0; 4];
    frame.extend_from_slice(&key.to_be_bytes());
    frame.extend_from_slice(&version.to_be_bytes());
    frame.extend_from_slice(&correlation.to_be_bytes());
    frame.extend_from_slice(&(CLIENT_ID.len() as i16).to_be_bytes());
    frame.extend_from_slice(CLIENT_ID);
    if flexible {
        frame.push(0);
    }
    frame.extend_from_slice(body);
    let size = i32::try_from(frame.len() - 4).unwrap_or(i32::MAX);
    frame[..4].copy_from_slice(&size.to_be_bytes());
    frame
}

/// The body of the answer to request `correlation`, read whole when its size is within the
/// exchange's cap; `None` when the server closed the connection before answering at all.
pub async fn answer(
    exchange: &mut Exchange,
    correlation: i32,
    flexible: bool,
) -> Result<Option<Vec<u8>>, Failure> {
    let Some(size) = exchange.exact_or_closed(4).await? else {
        return Ok(None);
    };
    let length = i32::from_be_bytes([size[0], size[1], size[2], size[3]]);
    let fits = usize::try_from(length).is_ok_and(|n| (4..=exchange.limit).contains(&n));
    if !fits {
        return Err(exchange.unexpected(&size));
    }
    let frame = exchange.exact(length as usize).await?;
    let mut reader = Reader::new(&frame);
    if reader.i32().ok() != Some(correlation) {
        return Err(exchange.unexpected(&[&size[..], &frame].concat()));
    }
    if flexible {
        reader.skip_tags()?;
    }
    Ok(Some(reader.rest().to_vec()))
}

/// One API a listener takes, and its versions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Api {
    pub key: i16,
    pub min: i16,
    pub max: i16,
}

/// ApiVersions v0's answer.
#[derive(Debug, PartialEq, Eq)]
pub struct ApiVersions {
    pub error: i16,
    pub apis: Vec<Api>,
}

impl ApiVersions {
    pub fn parse(body: &[u8]) -> Result<ApiVersions, Malformed> {
        let mut reader = Reader::new(body);
        let error = reader.i16()?;
        let count = reader.count(6)?;
        let mut apis = Vec::with_capacity(count);
        for _ in 0..count {
            let (key, min, max) = (reader.i16()?, reader.i16()?, reader.i16()?);
            apis.push(Api { key, min, max });
        }
        Ok(ApiVersions { error, apis })
    }

    /// Whether the listener takes `key` at `version`.
    pub fn takes(&self, key: i16, version: i16) -> bool {
        let api = self.apis.iter().find(|api| api.key == key);
        api.is_some_and(|api| (api.min..=api.max).contains(&version))
    }
}

/// A broker (or, from a controller's listener, a controller) as an answer lists it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Node {
    pub id: i32,
    /// The advertised host, as the node gave it.
    pub host: String,
    pub port: i32,
}

impl std::fmt::Display for Node {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let host = crate::text::peer_text(&self.host);
        match host.contains(':') {
            true => write!(f, "[{host}]:{}", self.port),
            false => write!(f, "{host}:{}", self.port),
        }
    }
}

/// Metadata v1's answer to a request for no topics.
#[derive(Debug, PartialEq, Eq)]
pub struct Metadata {
    /// The live (unfenced) brokers.
    pub brokers: Vec<Node>,
    /// A live broker's id (KRaft), the controller's (ZooKeeper mode), or -1: none.
    pub controller: i32,
}

/// The request body of Metadata v1 for no topics (a null array would ask for all of them).
pub const METADATA_NO_TOPICS: &[u8] = &[0, 0, 0, 0];

impl Metadata {
    pub fn parse(body: &[u8]) -> Result<Metadata, Malformed> {
        let mut reader = Reader::new(body);
        // Each broker: id, host (2 + n bytes), port, rack (2 + n bytes, or -1).
        let count = reader.count(12)?;
        let mut brokers = Vec::with_capacity(count);
        for _ in 0..count {
            let id = reader.i32()?;
            let host = reader.string()?.unwrap_or_default();
            let port = reader.i32()?;
            reader.string()?;
            brokers.push(Node { id, host, port });
        }
        let controller = reader.i32()?;
        Ok(Metadata {
            brokers,
            controller,
        })
    }
}

/// DescribeCluster v1's request body: no authorized operations, a controller's endpoint.
pub const DESCRIBE_CONTROLLERS: &[u8] = &[0, 2, 0];

/// DescribeCluster v1's answer from a controller's listener.
#[derive(Debug, PartialEq, Eq)]
pub struct DescribeCluster {
    pub error: i16,
    pub message: Option<String>,
    /// The active controller's id, or -1.
    pub controller: i32,
    pub controllers: Vec<Node>,
}

impl DescribeCluster {
    pub fn parse(body: &[u8]) -> Result<DescribeCluster, Malformed> {
        let mut reader = Reader::new(body);
        let _throttle = reader.i32()?;
        let error = reader.i16()?;
        let message = reader.compact_string()?;
        let _endpoint_type = reader.i8()?;
        let _cluster_id = reader.compact_string()?;
        let controller = reader.i32()?;
        // Each: id, host (1 + n bytes), port, rack (1 + n bytes), tags (1 byte).
        let count = reader.compact_count(11)?;
        let mut controllers = Vec::with_capacity(count);
        for _ in 0..count {
            let id = reader.i32()?;
            let host = reader.compact_string()?.unwrap_or_default();
            let port = reader.i32()?;
            reader.compact_string()?;
            reader.skip_tags()?;
            controllers.push(Node { id, host, port });
        }
        Ok(DescribeCluster {
            error,
            message,
            controller,
            controllers,
        })
    }
}

/// An answer that ends inside a field, or whose counts and lengths do not fit it.
#[derive(Debug, PartialEq, Eq)]
pub struct Malformed;

impl From<Malformed> for Failure {
    fn from(_: Malformed) -> Failure {
        Failure::Text("not a Kafka answer: a malformed frame".into())
    }
}

/// Reads big-endian fields off an answer, never past its end.
struct Reader<'a> {
    bytes: &'a [u8],
}

impl<'a> Reader<'a> {
    fn new(bytes: &'a [u8]) -> Reader<'a> {
        Reader { bytes }
    }

    fn take(&mut self, n: usize) -> Result<&'a [u8], Malformed> {
        if n > self.bytes.len() {
            return Err(Malformed);
        }
        let (taken, rest) = self.bytes.split_at(n);
        self.bytes = rest;
        Ok(taken)
    }

    fn rest(&self) -> &'a [u8] {
        self.bytes
    }

    fn i8(&mut self) -> Result<i8, Malformed> {
        Ok(i8::from_be_bytes([self.take(1)?[0]]))
    }

    fn i16(&mut self) -> Result<i16, Malformed> {
        let b = self.take(2)?;
        Ok(i16::from_be_bytes([b[0], b[1]]))
    }

    fn i32(&mut self) -> Result<i32, Malformed> {
        let b = self.take(4)?;
        Ok(i32::from_be_bytes([b[0], b[1], b[2], b[3]]))
    }

    /// An unsigned varint of at most 5 bytes (what a 32-bit length needs).
    fn uvarint(&mut self) -> Result<u32, Malformed> {
        let mut value: u32 = 0;
        for shift in (0..35).step_by(7) {
            let byte = self.take(1)?[0];
            value |= u32::from(byte & 0x7f).checked_shl(shift).ok_or(Malformed)?;
            if byte & 0x80 == 0 {
                return Ok(value);
            }
        }
        Err(Malformed)
    }

    /// An array's count, each element at least `least` bytes: one that cannot fit is refused
    /// before anything is allocated for it.
    fn count(&mut self, least: usize) -> Result<usize, Malformed> {
        let count = usize::try_from(self.i32()?).map_err(|_| Malformed)?;
        self.fits(count, least)
    }

    /// A compact array's count (n + 1; 0 is null, taken as empty).
    fn compact_count(&mut self, least: usize) -> Result<usize, Malformed> {
        let count = (self.uvarint()? as usize).saturating_sub(1);
        self.fits(count, least)
    }

    fn fits(&self, count: usize, least: usize) -> Result<usize, Malformed> {
        match count.checked_mul(least) {
            Some(bytes) if bytes <= self.bytes.len() => Ok(count),
            _ => Err(Malformed),
        }
    }

    /// A nullable string with an i16 length.
    fn string(&mut self) -> Result<Option<String>, Malformed> {
        match self.i16()? {
            -1 => Ok(None),
            n => {
                let n = usize::try_from(n).map_err(|_| Malformed)?;
                Ok(Some(String::from_utf8_lossy(self.take(n)?).into_owned()))
            }
        }
    }

    /// A compact nullable string (length + 1 as a varint; 0 is null).
    fn compact_string(&mut self) -> Result<Option<String>, Malformed> {
        match self.uvarint()? as usize {
            0 => Ok(None),
            n => Ok(Some(
                String::from_utf8_lossy(self.take(n - 1)?).into_owned(),
            )),
        }
    }

    /// Tagged fields: a count, then each tag's number, size and bytes, all skipped.
    fn skip_tags(&mut self) -> Result<(), Malformed> {
        let count = self.uvarint()?;
        for _ in 0..count {
            self.uvarint()?;
            let size = self.uvarint()? as usize;
            self.take(size)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_request_frame_has_its_size_and_header() {
        let frame = request(API_VERSIONS, 0, 1, false, &[]);
        assert_eq!(
            frame,
            b"\0\0\0\x13\0\x12\0\0\0\0\0\x01\0\x09readygate".to_vec()
        );
        let frame = request(DESCRIBE_CLUSTER, 1, 2, true, DESCRIBE_CONTROLLERS);
        assert_eq!(&frame[..4], &(frame.len() as i32 - 4).to_be_bytes());
        assert_eq!(&frame[frame.len() - 4..], b"\0\0\x02\0");
    }

    #[test]
    fn a_real_brokers_metadata_is_read() {
        // As Kafka 4.1 answered: broker 1 at 127.0.0.1:39092, no rack, controller 1, no topics.
        let body = b"\0\0\0\x01\0\0\0\x01\0\x09127.0.0.1\0\0\x98\xb4\xff\xff\0\0\0\x01\0\0\0\0";
        let metadata = Metadata::parse(body).unwrap();
        let broker = Node {
            id: 1,
            host: "127.0.0.1".into(),
            port: 39092,
        };
        assert_eq!(
            metadata,
            Metadata {
                brokers: vec![broker],
                controller: 1
            }
        );
    }

    #[test]
    fn a_real_controllers_describe_cluster_is_read() {
        // As a Kafka 4.1 controller answered, with a quorum, then without one.
        let body = b"\0\0\0\0\0\0\0\x02\x17MkU3OEVBNTcwNTJENDM2Qk\0\0\0\x01\x02\0\0\0\x01\x0a127.0.0.1\0\0\x98\xb5\0\0\x80\0\0\0\0";
        let answer = DescribeCluster::parse(body).unwrap();
        assert_eq!((answer.error, answer.controller), (0, 1));
        assert_eq!(answer.controllers[0].to_string(), "127.0.0.1:39093");
        let body = b"\0\0\0\0\0\x23\x0fNot supported.\x01\x01\xff\xff\xff\xff\x01\x80\0\0\0\0";
        let answer = DescribeCluster::parse(body).unwrap();
        assert_eq!(answer.error, 35);
        assert_eq!(answer.message.as_deref(), Some("Not supported."));
        assert_eq!((answer.controller, answer.controllers.len()), (-1, 0));
    }

    #[test]
    fn counts_and_lengths_past_the_end_are_malformed_not_allocated() {
        assert_eq!(ApiVersions::parse(b"\0\0\x7f\xff\xff\xff"), Err(Malformed));
        assert_eq!(ApiVersions::parse(b"\0\0\xff\xff\xff\xff"), Err(Malformed));
        assert_eq!(
            Metadata::parse(b"\0\0\0\x01\0\0\0\x01\x7f\xff"),
            Err(Malformed)
        );
        assert_eq!(
            Metadata::parse(b"\0\0\0\0"),
            Err(Malformed),
            "no controller"
        );
        let endless_varint = b"\0\0\0\0\0\0\xff\xff\xff\xff\xff\xff";
        assert_eq!(DescribeCluster::parse(endless_varint), Err(Malformed));
        let versions = ApiVersions::parse(b"\0\0\0\0\0\x01\0\x03\0\0\0\x0d").unwrap();
        assert!(versions.takes(METADATA, 1));
        assert!(!versions.takes(DESCRIBE_CLUSTER, 1));
    }
}
