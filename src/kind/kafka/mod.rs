//! `kafka://` and `kafkas://`: ApiVersions, then what the listener knows of its cluster. A
//! broker's listener answers Metadata: ready when it names a controller and lists this broker
//! among the live ones (a broker starting up or fenced lists none, or not itself). A KRaft
//! controller's listener takes no Metadata: it answers DescribeCluster, which names the
//! active controller only once the quorum has one.

mod wire;

use std::sync::atomic::Ordering;

use super::exchange::{server_text, Exchange};
use super::target::Target;
use super::url_parts::{plain, Ignored, TargetUrl};
use super::Context;
use super::Kind;
use crate::error::Failure;
use crate::net::endpoint::{Endpoint, Host};
use crate::runtime::Attempt;
use wire::{ApiVersions, DescribeCluster, Metadata, Node};

/// `kafka://HOST[:9092]` or `kafkas://HOST[:9092]` (TLS): one listener, asked without a login.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KafkaTarget {
    /// `kafkas://`: TLS.
    pub tls: bool,
    pub endpoint: Endpoint,
}

/// Parses a `kafka://` or `kafkas://` URL: a user and password are dropped, never sent.
pub fn parse(url: &TargetUrl) -> Result<Kind, String> {
    let tls = url.scheme == "kafkas";
    let endpoint = plain(url, 9092, Ignored::Userinfo)?;
    Ok(Kind::Kafka(KafkaTarget { tls, endpoint }))
}

/// The most bytes of one answer: Metadata without topics lists every live broker, a few dozen
/// bytes each.
const MAX_FRAME: usize = 256 * 1024;

/// One attempt: ApiVersions v0, then Metadata v1 (a broker) or DescribeCluster v1 (a
/// controller), on one connection.
pub async fn check(
    kafka: &KafkaTarget,
    target: &Target,
    context: &Context,
    at: &Attempt,
) -> Result<(), Failure> {
    let tls = kafka.tls.then_some("kafka://");
    let mut exchange = Exchange::open(&kafka.endpoint, context, tls, "a Kafka", at).await?;
    exchange.limit = MAX_FRAME;
    at.if_cut_suspect("a Kafka broker answers at once: does this port speak another protocol?");
    let versions = ask(&mut exchange, wire::API_VERSIONS, 0, &[]).await?;
    let versions = ApiVersions::parse(&versions)?;
    if versions.error != 0 {
        return Err(format!("ApiVersions: {}", error_name(versions.error)).into());
    }
    if versions.takes(wire::METADATA, 1) {
        let body = ask(&mut exchange, wire::METADATA, 1, wire::METADATA_NO_TOPICS).await?;
        let metadata = Metadata::parse(&body)?;
        judge_broker(&metadata, kafka, exchange.peer, |brokers| {
            if !context.kafka_unlisted_told.swap(true, Ordering::Relaxed) {
                tracing::info!(
                    "{target}: no live broker advertises this address (brokers: {brokers}; a \
                     Service in front?): taken as ready, as the cluster has live brokers and a \
                     controller, but whether the broker that answered is one of them cannot \
                     be seen (name a broker as it advertises itself)"
                );
            }
        })
    } else if versions.takes(wire::DESCRIBE_CLUSTER, 1) {
        let request = wire::DESCRIBE_CONTROLLERS;
        let body = ask(&mut exchange, wire::DESCRIBE_CLUSTER, 1, request).await?;
        judge_controller(&DescribeCluster::parse(&body)?)
    } else {
        Err(
            "the listener takes neither Metadata v1 nor DescribeCluster v1 (too old a Kafka?)"
                .into(),
        )
    }
}

/// Sends one request and reads its answer's body. DescribeCluster is a flexible version (its
/// headers carry tagged fields); the other two are not.
async fn ask(
    exchange: &mut Exchange,
    key: i16,
    version: i16,
    body: &[u8],
) -> Result<Vec<u8>, Failure> {
    let flexible = key == wire::DESCRIBE_CLUSTER;
    exchange
        .send(&wire::request(key, version, i32::from(key), flexible, body))
        .await?;
    match wire::answer(exchange, i32::from(key), flexible).await? {
        Some(body) => Ok(body),
        // A listener that wants a login answers ApiVersions, then closes on anything else.
        None if key != wire::API_VERSIONS => Err(format!(
            "the listener closed the connection at {} (it wants a SASL login, which readygate \
             does not make?)",
            name(key)
        )
        .into()),
        None => Err("connection closed without an answer (not a Kafka server?)".into()),
    }
}

fn name(key: i16) -> &'static str {
    match key {
        wire::METADATA => "Metadata",
        wire::DESCRIBE_CLUSTER => "DescribeCluster",
        _ => "ApiVersions",
    }
}

/// A broker's Metadata: a controller, and this broker among the live ones. When no live broker
/// advertises the target's address (a Service, another name), `unlisted` is told their
/// addresses and any live broker will do.
fn judge_broker(
    metadata: &Metadata,
    kafka: &KafkaTarget,
    peer: Option<std::net::SocketAddr>,
    unlisted: impl FnOnce(&str),
) -> Result<(), Failure> {
    if metadata.brokers.is_empty() {
        return Err(
            "the broker lists no live broker, itself included (starting up, fenced or \
                    shutting down)"
                .into(),
        );
    }
    if metadata.controller < 0 {
        return Err("the broker knows no controller (no quorum?)".into());
    }
    let this = |node: &Node| advertises(node, &kafka.endpoint, peer);
    if !metadata.brokers.iter().any(this) {
        let all: Vec<String> = metadata.brokers.iter().map(ToString::to_string).collect();
        unlisted(&crate::engine::first_few(&all));
    }
    Ok(())
}

/// Whether `node` advertises the target's HOST:PORT, or the address connected to.
fn advertises(node: &Node, endpoint: &Endpoint, peer: Option<std::net::SocketAddr>) -> bool {
    let ip = node.host.parse::<std::net::IpAddr>().ok();
    let named = match &endpoint.host {
        Host::Name(name) => {
            let host = node.host.strip_suffix('.').unwrap_or(&node.host);
            host.eq_ignore_ascii_case(name.strip_suffix('.').unwrap_or(name))
        }
        Host::Ip(address) => ip.is_some_and(|ip| ip.to_canonical() == address.to_canonical()),
    };
    let connected = peer.is_some_and(|peer| {
        ip.is_some_and(|ip| ip.to_canonical() == peer.ip().to_canonical())
            && node.port == i32::from(peer.port())
    });
    (named && node.port == i32::from(endpoint.port)) || connected
}

/// A controller's DescribeCluster: the active controller, or the controller's own words.
fn judge_controller(answer: &DescribeCluster) -> Result<(), Failure> {
    if answer.error != 0 {
        let words = answer.message.as_deref().map(|m| server_text(m.as_bytes()));
        let code = error_name(answer.error);
        // A controller that has not read the metadata log (no quorum yet) cannot tell its
        // metadata version, and so refuses as if it were too old.
        let hint = match answer.error {
            35 => "; a controller says so until it has read the cluster's metadata: no quorum?",
            _ => "",
        };
        return Err(match words {
            Some(words) if !words.is_empty() => format!("KRaft controller: {words} ({code}{hint})"),
            _ => format!("KRaft controller: {code}{hint}"),
        }
        .into());
    }
    match answer.controller {
        id if id < 0 => Err("KRaft controller: the quorum has no active controller".into()),
        _ => Ok(()),
    }
}

/// The name Kafka gives an error code, for the ones a readiness answer may carry.
fn error_name(code: i16) -> String {
    let name = match code {
        -1 => "UNKNOWN_SERVER_ERROR",
        6 => "NOT_LEADER_OR_FOLLOWER",
        7 => "REQUEST_TIMED_OUT",
        8 => "BROKER_NOT_AVAILABLE",
        15 => "COORDINATOR_NOT_AVAILABLE",
        31 => "CLUSTER_AUTHORIZATION_FAILED",
        33 => "UNSUPPORTED_SASL_MECHANISM",
        34 => "ILLEGAL_SASL_STATE",
        35 => "UNSUPPORTED_VERSION",
        41 => "NOT_CONTROLLER",
        58 => "SASL_AUTHENTICATION_FAILED",
        _ => return format!("error {code}"),
    };
    name.to_string()
}

#[cfg(test)]
mod tests {
    use super::super::target::tests::{at, kind};
    use super::*;

    fn node(host: &str, port: i32) -> Node {
        let (id, host) = (1, host.to_string());
        Node { id, host, port }
    }

    fn target(text: &str) -> KafkaTarget {
        match kind(text) {
            Kind::Kafka(kafka) => kafka,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn kafka_urls() {
        let kafka = |endpoint, tls| Kind::Kafka(KafkaTarget { tls, endpoint });
        assert_eq!(kind("kafka://broker"), kafka(at("broker", 9092), false));
        assert_eq!(kind("kafkas://u:pw@b:9093/"), kafka(at("b", 9093), true));
    }

    #[test]
    fn this_broker_is_its_advertised_address_or_the_one_connected_to() {
        let peer = Some("10.0.0.5:9092".parse().unwrap());
        let kafka = target("kafka://Kafka-0.Kafka.svc.");
        assert!(advertises(
            &node("kafka-0.kafka.svc", 9092),
            &kafka.endpoint,
            None
        ));
        assert!(!advertises(
            &node("kafka-0.kafka.svc", 9093),
            &kafka.endpoint,
            None
        ));
        assert!(!advertises(
            &node("kafka-1.kafka.svc", 9092),
            &kafka.endpoint,
            None
        ));
        assert!(advertises(&node("10.0.0.5", 9092), &kafka.endpoint, peer));
        assert!(!advertises(&node("10.0.0.6", 9092), &kafka.endpoint, peer));
        let kafka = target("kafka://[::ffff:10.0.0.5]");
        assert!(advertises(&node("10.0.0.5", 9092), &kafka.endpoint, None));
    }

    #[test]
    fn a_broker_is_ready_with_a_controller_and_live_brokers() {
        let kafka = target("kafka://127.0.0.1:9092");
        let metadata = |brokers, controller| Metadata {
            brokers,
            controller,
        };
        let judge = |m: &Metadata| {
            let mut told = None;
            let verdict = judge_broker(m, &kafka, None, |b| told = Some(b.to_string()));
            (verdict.map_err(|e| e.to_string()), told)
        };
        let ready = metadata(vec![node("127.0.0.1", 9092)], 1);
        assert_eq!(judge(&ready), (Ok(()), None));
        let (verdict, _) = judge(&metadata(vec![], -1));
        assert!(verdict.unwrap_err().contains("lists no live broker"));
        let (verdict, _) = judge(&metadata(vec![node("127.0.0.1", 9092)], -1));
        assert!(verdict.unwrap_err().contains("knows no controller"));
        let others = metadata(vec![node("b1", 9092), node("b2", 9092)], 2);
        assert_eq!(judge(&others), (Ok(()), Some("b1:9092, b2:9092".into())));
    }

    #[test]
    fn a_controller_is_ready_with_an_active_controller() {
        let answer = |error, message: Option<&str>, controller| DescribeCluster {
            error,
            message: message.map(Into::into),
            controller,
            controllers: vec![],
        };
        assert!(judge_controller(&answer(0, None, 3)).is_ok());
        assert_eq!(
            judge_controller(&answer(0, None, -1)).unwrap_err(),
            Failure::from("KRaft controller: the quorum has no active controller")
        );
        let refused = judge_controller(&answer(35, Some("Not\nsupported."), -1));
        assert_eq!(
            refused.unwrap_err(),
            Failure::from(
                "KRaft controller: Not\\nsupported. (UNSUPPORTED_VERSION; a \
                 controller says so until it has read the cluster's metadata: no quorum?)"
            )
        );
        assert_eq!(
            judge_controller(&answer(99, None, -1)).unwrap_err(),
            Failure::from("KRaft controller: error 99")
        );
    }
}
