//! The two messages of `grpc.health.v1.Health/Check`, by hand: a request with one optional
//! string and a response with one enum are a few bytes of protobuf, not worth a code generator.
//!
//! ```proto
//! message HealthCheckRequest { string service = 1; }
//! message HealthCheckResponse { ServingStatus status = 1; }
//! ```

/// The largest answer read; a health response is a handful of bytes.
pub const MAX_RESPONSE: usize = 64 * 1024;

/// `HealthCheckResponse.ServingStatus`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ServingStatus {
    /// 0: the server does not know (or the field was absent).
    Unknown,
    /// 1: ready.
    Serving,
    /// 2: up, but not serving.
    NotServing,
    /// 3: the service name is not known (what `Watch` says; `Check` answers `NOT_FOUND`).
    ServiceUnknown,
    /// A value this version of the protocol does not define.
    Other(u64),
}

impl ServingStatus {
    /// The name the gRPC health protocol gives the value.
    pub fn name(self) -> String {
        match self {
            ServingStatus::Unknown => "UNKNOWN".into(),
            ServingStatus::Serving => "SERVING".into(),
            ServingStatus::NotServing => "NOT_SERVING".into(),
            ServingStatus::ServiceUnknown => "SERVICE_UNKNOWN".into(),
            ServingStatus::Other(value) => format!("unknown serving status {value}"),
        }
    }
}

/// The request body: one length-prefixed, uncompressed gRPC message asking about `service`.
pub fn encode_request(service: &str) -> Vec<u8> {
    let mut message = Vec::new();
    if !service.is_empty() {
        message.push(0x0a); // field 1, wire type 2 (length-delimited)
        put_varint(&mut message, service.len() as u64);
        message.extend_from_slice(service.as_bytes());
    }
    let mut frame = Vec::with_capacity(5 + message.len());
    frame.push(0); // not compressed
    frame.extend_from_slice(&(message.len() as u32).to_be_bytes());
    frame.extend_from_slice(&message);
    frame
}

/// The serving status in a response body (one length-prefixed message).
pub fn decode_response(body: &[u8]) -> Result<ServingStatus, String> {
    let Some((&compressed, rest)) = body.split_first() else {
        return Err("empty response".into());
    };
    if compressed != 0 {
        return Err("compressed response (none was asked for)".into());
    }
    let length: [u8; 4] = rest
        .get(..4)
        .and_then(|l| l.try_into().ok())
        .ok_or("response shorter than its gRPC frame header")?;
    let length = u32::from_be_bytes(length) as usize;
    let message = rest
        .get(4..4 + length)
        .ok_or("response shorter than its length prefix")?;
    let mut status = 0;
    let mut input = message;
    while !input.is_empty() {
        let key = take_varint(&mut input)?;
        match (key >> 3, key & 7) {
            (1, 0) => status = take_varint(&mut input)?,
            (_, 0) => {
                take_varint(&mut input)?;
            }
            (_, 1) => skip(&mut input, 8)?,
            (_, 2) => {
                let length = take_varint(&mut input)?;
                skip(
                    &mut input,
                    usize::try_from(length).map_err(|_| "bad length")?,
                )?;
            }
            (_, 5) => skip(&mut input, 4)?,
            (_, wire) => return Err(format!("undecodable response (wire type {wire})")),
        }
    }
    Ok(match status {
        0 => ServingStatus::Unknown,
        1 => ServingStatus::Serving,
        2 => ServingStatus::NotServing,
        3 => ServingStatus::ServiceUnknown,
        other => ServingStatus::Other(other),
    })
}

fn put_varint(out: &mut Vec<u8>, mut value: u64) {
    while value >= 0x80 {
        out.push((value as u8) | 0x80);
        value >>= 7;
    }
    out.push(value as u8);
}

fn take_varint(input: &mut &[u8]) -> Result<u64, String> {
    let mut value = 0u64;
    for shift in (0..64).step_by(7) {
        let (&byte, rest) = input.split_first().ok_or("truncated response")?;
        *input = rest;
        value |= u64::from(byte & 0x7f) << shift;
        if byte & 0x80 == 0 {
            return Ok(value);
        }
    }
    Err("undecodable response (varint too long)".into())
}

fn skip(input: &mut &[u8], count: usize) -> Result<(), String> {
    *input = input.get(count..).ok_or("truncated response")?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_encode_as_protoc_would() {
        assert_eq!(encode_request(""), [0, 0, 0, 0, 0]);
        assert_eq!(
            encode_request("etcd"),
            [0, 0, 0, 0, 6, 0x0a, 4, b'e', b't', b'c', b'd']
        );
        let long = "s".repeat(200);
        let frame = encode_request(&long);
        assert_eq!(&frame[..8], &[0, 0, 0, 0, 203, 0x0a, 0xc8, 0x01]);
        assert_eq!(frame.len(), 5 + 203);
    }

    #[test]
    fn responses_decode_every_status() {
        assert_eq!(
            decode_response(&[0, 0, 0, 0, 2, 0x08, 1]),
            Ok(ServingStatus::Serving)
        );
        assert_eq!(
            decode_response(&[0, 0, 0, 0, 2, 0x08, 2]),
            Ok(ServingStatus::NotServing)
        );
        assert_eq!(
            decode_response(&[0, 0, 0, 0, 2, 0x08, 3]),
            Ok(ServingStatus::ServiceUnknown)
        );
        // proto3 leaves out a zero value: an empty message is UNKNOWN.
        assert_eq!(
            decode_response(&[0, 0, 0, 0, 0]),
            Ok(ServingStatus::Unknown)
        );
        assert_eq!(
            decode_response(&[0, 0, 0, 0, 2, 0x08, 9]),
            Ok(ServingStatus::Other(9))
        );
    }

    #[test]
    fn unknown_fields_are_skipped() {
        // field 2 (string "x"), field 3 (fixed32), then status SERVING.
        let message = [0x12, 1, b'x', 0x1d, 1, 2, 3, 4, 0x08, 1];
        let mut body = vec![0, 0, 0, 0, message.len() as u8];
        body.extend_from_slice(&message);
        assert_eq!(decode_response(&body), Ok(ServingStatus::Serving));
    }

    #[test]
    fn malformed_responses_are_errors_not_panics() {
        for body in [
            &[][..],
            &[1, 0, 0, 0, 0],
            &[0, 0, 0],
            &[0, 0, 0, 0, 9, 0x08],
            &[0, 0, 0, 0, 1, 0x08],
            &[0, 0, 0, 0, 2, 0x0b, 1],
            &[
                0, 0, 0, 0, 11, 0x08, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
            ],
        ] {
            assert!(decode_response(body).is_err(), "{body:?}");
        }
    }
}
