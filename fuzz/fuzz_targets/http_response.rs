//! Fuzzes what a server may answer: the bytes become the raw HTTP/1 response to readygate's
//! request (hyper parses it as the check does), and a redirect in it goes through
//! `redirect::next` and the next request's `request::build`. An input starting with `L` is a
//! `Location` value only, sent in a 302, so that most runs reach the redirect path; the
//! input's length picks the kubelet's redirect rule or wget's (the `wait-for` drop-in). Never a panic; a `Location` that
//! cannot be followed is a one-line reason; a followed one always makes a valid request.

#![no_main]

mod common;

use common::assert_one_line;
use http_body_util::BodyExt;
use hyper::header::LOCATION;
use hyper_util::rt::TokioIo;
use libfuzzer_sys::fuzz_target;
use readygate::redirect::{self, Redirect, Redirects};
use readygate::request::{self, Carry};
use readygate::{Header, HttpTarget, Kind, Target};
use tokio::io::AsyncWriteExt;

thread_local! {
    static RUNTIME: tokio::runtime::Runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("runtime");
}

/// The request a response answers: with credentials and a secret header, so that a followed
/// redirect exercises what is carried and what is not.
fn current() -> HttpTarget {
    match Target::parse("http://user:p%40ss@example.test:8080/a/b?q=1")
        .expect("a valid target")
        .kind
    {
        Kind::Http(http) => http,
        _ => unreachable!(),
    }
}

fuzz_target!(|input: &[u8]| {
    let response = match input.strip_prefix(b"L") {
        Some(location) => [
            &b"HTTP/1.1 302 Found\r\nLocation: "[..],
            location,
            b"\r\nContent-Length: 0\r\n\r\n",
        ]
        .concat(),
        None => input.to_vec(),
    };
    let response = &response[..];
    let current = current();
    let headers = vec![
        Header::parse("Authorization: Bearer t").unwrap(),
        Header::parse("X-Plain: p").unwrap(),
    ];
    let first = request::build(&current, hyper::Method::GET, &headers, Carry::ALL)
        .expect("the first request is valid");
    RUNTIME.with(|runtime| {
        runtime.block_on(async {
            let (client, mut server) = tokio::io::duplex(1 << 16);
            let write = async move {
                let _ = server.write_all(response).await;
                let _ = server.shutdown().await;
                // Keep the server end open until the client is done reading.
                std::future::pending::<()>().await
            };
            let Ok((mut sender, connection)) =
                hyper::client::conn::http1::handshake::<_, http_body_util::Empty<hyper::body::Bytes>>(
                    TokioIo::new(client),
                )
                .await
            else {
                return;
            };
            let exchange = async {
                let Ok(answer) = sender.send_request(first).await else {
                    return;
                };
                let status = answer.status();
                let policy = match input.len() % 2 {
                    0 => Redirects::SameHost,
                    _ => Redirects::AnyHost,
                };
                match redirect::next(&current, status, answer.headers().get(LOCATION), policy) {
                    Err(reason) => assert_one_line(&reason),
                    Ok(Redirect::Answer) => {}
                    Ok(Redirect::Follow { next, absolute }) => {
                        let carry = Carry {
                            custom_host: !absolute,
                            secrets: next.tls == current.tls && next.endpoint == current.endpoint,
                        };
                        request::build(&next, hyper::Method::GET, &headers, carry)
                            .expect("a followed redirect makes a valid request");
                    }
                }
                let mut body = answer.into_body();
                let mut read = 0;
                while read < 64 * 1024 {
                    match body.frame().await {
                        Some(Ok(frame)) => {
                            read += frame.data_ref().map_or(0, |d| d.len());
                        }
                        _ => break,
                    }
                }
            };
            tokio::select! {
                () = exchange => {}
                _ = connection => {}
                () = write => {}
            }
        });
    });
});
