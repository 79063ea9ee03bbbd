//! The two messages of `grpc.health.v1.Health/Check`, by hand: a request with one optional
//! string and a response with one enum are a few bytes of protobuf, not worth a code generator.
//!
//! ```proto
//! message HealthCheckRequest { string service = 1; }
//! message HealthCheckResponse { ServingStatus status = 1; }
//! ```

/// The largest answer read; a health response is a handful of bytes.
pub const MAX_RESPONSE: usize = 64 * 1024;

/// `ServingStatus.SERVING`: ready.
pub const SERVING: u64 = 1;

/// The name the health protocol gives a `ServingStatus` value (0, or absent, is `UNKNOWN`).
pub fn status_name(status: u64) -> String {
    match ["UNKNOWN", "SERVING", "NOT_SERVING", "SERVICE_UNKNOWN"].get(status as usize) {
        Some(name) => name.to_string(),
        None => format!("unknown serving status {status}"),
    }
}

/// The request body: one length-prefixed, uncompressed gRPC message asking about `service`.
pub fn encode_request(service: &str) -> Vec<u8> {
    let mut message = Vec::new();
    if !service.is_empty() {
        message.push(0x0a); // field 1, wire type 2 (length-delimited)
        let mut length = service.len();
        while length >= 0x80 {
            message.push((length as u8) | 0x80);
            length >>= 7;
        }
        message.push(length as u8);
        message.extend_from_slice(service.as_bytes());
    }
    let mut frame = vec![0]; // not compressed
    frame.extend_from_slice(&(message.len() as u32).to_be_bytes());
    frame.extend_from_slice(&message);
    frame
}

/// The serving status in a response body (one length-prefixed message).
pub fn decode_response(body: &[u8]) -> Result<u64, String> {
    let (&compressed, rest) = body.split_first().ok_or("empty response")?;
    if compressed != 0 {
        return Err("compressed response (none was asked for)".into());
    }
    let (length, rest) = rest
        .split_first_chunk()
        .ok_or("response shorter than its gRPC frame header")?;
    let mut input = rest
        .get(..u32::from_be_bytes(*length) as usize)
        .ok_or("response shorter than its length prefix")?;
    let mut status = 0;
    while !input.is_empty() {
        let key = take_varint(&mut input)?;
        let skip = match (key >> 3, key & 7) {
            (1, 0) => {
                status = take_varint(&mut input)?;
                0
            }
            (_, 0) => take_varint(&mut input).map(|_| 0)?,
            (_, 1) => 8,
            (_, 2) => usize::try_from(take_varint(&mut input)?).unwrap_or(usize::MAX),
            (_, 5) => 4,
            (_, wire) => return Err(format!("undecodable response (wire type {wire})")),
        };
        input = input.get(skip..).ok_or("truncated response")?;
    }
    Ok(status)
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
        for (body, status, name) in [
            (&[0, 0, 0, 0, 2, 0x08, 1][..], 1, "SERVING"),
            (&[0, 0, 0, 0, 2, 0x08, 2], 2, "NOT_SERVING"),
            (&[0, 0, 0, 0, 2, 0x08, 3], 3, "SERVICE_UNKNOWN"),
            // proto3 leaves out a zero value: an empty message is UNKNOWN.
            (&[0, 0, 0, 0, 0], 0, "UNKNOWN"),
            (&[0, 0, 0, 0, 2, 0x08, 9], 9, "unknown serving status 9"),
            // Unknown fields are skipped: field 2 (string "x"), field 3 (fixed32), then status.
            (
                &[0, 0, 0, 0, 10, 0x12, 1, b'x', 0x1d, 1, 2, 3, 4, 0x08, 1],
                1,
                "SERVING",
            ),
        ] {
            assert_eq!(decode_response(body), Ok(status), "{body:?}");
            assert_eq!(status_name(status), name);
        }
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
