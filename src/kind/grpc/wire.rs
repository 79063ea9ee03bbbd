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
    let mut status = 0;
    fields(unframe(body, "response")?, |number, field| {
        if let (1, Field::Varint(value)) = (number, field) {
            status = value;
        }
    })?;
    Ok(status)
}

/// The service a request body (one length-prefixed message) asks about: `serve`'s side.
pub fn decode_request(body: &[u8]) -> Result<String, String> {
    let mut service = Ok(String::new());
    fields(unframe(body, "request")?, |number, field| {
        if let (1, Field::Bytes(name)) = (number, field) {
            service = String::from_utf8(name.to_vec()).map_err(|_| "service name not UTF-8".into());
        }
    })?;
    service
}

/// The response body saying `status`, as one length-prefixed message: `serve`'s side.
pub fn encode_response(status: u8) -> [u8; 7] {
    [0, 0, 0, 0, 2, 0x08, status]
}

/// The message in a body of one length-prefixed, uncompressed gRPC message; `what` names the
/// body in errors.
fn unframe<'a>(body: &'a [u8], what: &str) -> Result<&'a [u8], String> {
    let (&compressed, rest) = body.split_first().ok_or(format!("empty {what}"))?;
    if compressed != 0 {
        return Err(format!("compressed {what} (none was asked for)"));
    }
    let (length, rest) = rest
        .split_first_chunk()
        .ok_or(format!("{what} shorter than its gRPC frame header"))?;
    rest.get(..u32::from_be_bytes(*length) as usize)
        .ok_or(format!("{what} shorter than its length prefix"))
}

/// A field's value: the two wire types the health messages use (others are skipped).
enum Field<'a> {
    Varint(u64),
    Bytes(&'a [u8]),
}

/// Hands each varint and length-delimited field of `input` to `each`, with its number.
fn fields<'a>(mut input: &'a [u8], mut each: impl FnMut(u64, Field<'a>)) -> Result<(), String> {
    while !input.is_empty() {
        let key = take_varint(&mut input)?;
        let skip = match (key >> 3, key & 7) {
            (number, 0) => {
                each(number, Field::Varint(take_varint(&mut input)?));
                0
            }
            (_, 1) => 8,
            (number, 2) => {
                let length = usize::try_from(take_varint(&mut input)?).unwrap_or(usize::MAX);
                each(
                    number,
                    Field::Bytes(input.get(..length).ok_or("truncated message")?),
                );
                length
            }
            (_, 5) => 4,
            (_, wire) => return Err(format!("undecodable message (wire type {wire})")),
        };
        input = input.get(skip..).ok_or("truncated message")?;
    }
    Ok(())
}

fn take_varint(input: &mut &[u8]) -> Result<u64, String> {
    let mut value = 0u64;
    for shift in (0..64).step_by(7) {
        let (&byte, rest) = input.split_first().ok_or("truncated message")?;
        *input = rest;
        value |= u64::from(byte & 0x7f) << shift;
        if byte & 0x80 == 0 {
            return Ok(value);
        }
    }
    Err("undecodable message (varint too long)".into())
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
    fn requests_decode_and_responses_encode_for_serve() {
        for service in ["", "etcd", &"s".repeat(200)] {
            assert_eq!(
                decode_request(&encode_request(service)).as_deref(),
                Ok(service)
            );
        }
        // An unknown field before the name is skipped.
        let body = [0, 0, 0, 0, 7, 0x10, 5, 0x0a, 3, b'a', b'p', b'i'];
        assert_eq!(decode_request(&body).as_deref(), Ok("api"));
        for body in [
            &[0, 0, 0, 0, 3, 0x0a, 9, b'a'][..],
            &[0, 0, 0, 0, 3, 0x0a, 1, 0xff],
        ] {
            assert!(decode_request(body).is_err(), "{body:?}");
        }
        assert_eq!(decode_response(&encode_response(2)), Ok(2));
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
