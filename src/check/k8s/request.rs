//! One GET to the API server per attempt: a fresh connection, TLS verified with `ca.crt`, the
//! bearer token read afresh, and the answer's status turned into a reason a person can act on.

use http_body_util::Empty;
use hyper::body::Bytes;
use hyper::header::{HeaderValue, ACCEPT, AUTHORIZATION, CONNECTION, HOST, USER_AGENT};
use hyper::Request;
use serde::Deserialize;

use super::cluster::Cluster;
use crate::check::http::{read_body, roundtrip, AGENT};
use crate::error::Failure;
use crate::net::transport::{connect_tcp, BoxedIo};
use crate::target::k8s::selector;

/// The most of an answer that is read: a list of a few hundred pods.
const MAX_ANSWER: usize = 4 << 20;

/// The two RBAC verbs readygate needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Verb {
    /// One object by name.
    Get,
    /// The objects a label selector matches.
    List,
}

/// A request to the API server, and what RBAC must allow for it.
pub struct Query<'a> {
    /// `get` one object or `list` a collection.
    verb: Verb,
    /// The API group; empty for the core group.
    group: &'static str,
    /// The group's version, e.g. `v1`.
    version: &'static str,
    /// The resource, plural, e.g. `jobs`.
    resource: &'static str,
    /// The namespace asked in.
    namespace: &'a str,
    /// The object's name (`get`), or the label selector (`list`).
    name_or_selector: &'a str,
}

impl<'a> Query<'a> {
    /// `get` of one named object.
    pub fn get(
        (group, version, resource): (&'static str, &'static str, &'static str),
        namespace: &'a str,
        name: &'a str,
    ) -> Self {
        Query {
            verb: Verb::Get,
            group,
            version,
            resource,
            namespace,
            name_or_selector: name,
        }
    }

    /// `list` of the objects a label selector matches.
    pub fn list(
        (group, version, resource): (&'static str, &'static str, &'static str),
        namespace: &'a str,
        selector: &'a str,
    ) -> Self {
        Query {
            verb: Verb::List,
            ..Query::get((group, version, resource), namespace, selector)
        }
    }

    /// The request path, e.g. `/apis/batch/v1/namespaces/NS/jobs/NAME`.
    fn path(&self) -> String {
        let (namespace, resource) = (self.namespace, self.resource);
        let prefix = match self.group {
            "" => format!("/api/{}", self.version),
            group => format!("/apis/{group}/{}", self.version),
        };
        match self.verb {
            Verb::Get => format!(
                "{prefix}/namespaces/{namespace}/{resource}/{}",
                self.name_or_selector
            ),
            Verb::List => format!(
                "{prefix}/namespaces/{namespace}/{resource}?labelSelector={}",
                selector::encode(self.name_or_selector)
            ),
        }
    }

    /// `forbidden: get jobs/NAME in NS — grant get on jobs (apiGroup "batch")`.
    fn forbidden(&self) -> Failure {
        let (resource, namespace) = (self.resource, self.namespace);
        let (verb, object) = match self.verb {
            Verb::Get => ("get", format!("{resource}/{}", self.name_or_selector)),
            Verb::List => ("list", resource.to_string()),
        };
        let group = match self.group {
            "" => String::new(),
            group => format!(" (apiGroup \"{group}\")"),
        };
        Failure::Protocol(format!(
            "forbidden: {verb} {object} in {namespace} — grant {verb} on {resource}{group} to \
             the pod's service account"
        ))
    }
}

/// What the API server says when it refuses: a `Status` object.
#[derive(Deserialize)]
struct Status {
    /// Its message, e.g. `jobs.batch "x" not found`.
    #[serde(default)]
    message: String,
}

/// Sends `query`: the answer's body when found, `None` when there is no such object (404).
pub async fn get(cluster: &Cluster, query: &Query<'_>) -> Result<Option<Vec<u8>>, Failure> {
    let token = cluster.read_token().await?;
    let request = request(cluster, &query.path(), &token)?;
    let stream: BoxedIo = Box::new(connect_tcp(&cluster.endpoint).await?);
    let trust = "not the one in the service account's ca.crt";
    let stream =
        crate::net::tls::connect_with(stream, &cluster.endpoint.host, &cluster.tls, trust).await?;
    let (status, body) = roundtrip(stream, request, |response| async move {
        let status = response.status().as_u16();
        let body = read_body(response.into_body(), MAX_ANSWER + 1).await?;
        Ok((status, body))
    })
    .await?;
    if body.len() > MAX_ANSWER {
        return Err(Failure::Protocol(format!(
            "the API server's answer is over {} MiB",
            MAX_ANSWER >> 20
        )));
    }
    match status {
        200 => Ok(Some(body)),
        404 => Ok(None),
        401 => Err(
            "token rejected (401 Unauthorized): the API server does not accept the \
                    service account token"
                .into(),
        ),
        403 => Err(query.forbidden()),
        _ => {
            let message = serde_json::from_slice::<Status>(&body)
                .map(|status| status.message)
                .unwrap_or_default();
            Err(Failure::Protocol(format!(
                "status {status} from the API server{}{}",
                if message.is_empty() { "" } else { ": " },
                super::object::clip(&message)
            )))
        }
    }
}

/// The GET, with the token as a bearer credential marked sensitive.
fn request(cluster: &Cluster, path: &str, token: &str) -> Result<Request<Empty<Bytes>>, String> {
    let mut bearer = HeaderValue::from_str(&format!("Bearer {token}"))
        .map_err(|_| "the token is not a valid header value".to_string())?;
    bearer.set_sensitive(true);
    Request::get(path)
        .header(
            HOST,
            HeaderValue::from_str(&cluster.authority).map_err(|_| "invalid host".to_string())?,
        )
        .header(USER_AGENT, AGENT)
        .header(ACCEPT, "application/json")
        .header(CONNECTION, "close")
        .header(AUTHORIZATION, bearer)
        .body(Empty::new())
        .map_err(|e| format!("invalid request: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_and_forbidden_reasons() {
        let job = Query::get(("batch", "v1", "jobs"), "shop", "migrate");
        assert_eq!(job.path(), "/apis/batch/v1/namespaces/shop/jobs/migrate");
        assert_eq!(
            job.forbidden(),
            Failure::from(
                "forbidden: get jobs/migrate in shop — grant get on jobs (apiGroup \"batch\") to \
             the pod's service account"
            )
        );
        let pods = Query::list(("", "v1", "pods"), "default", "app=web,tier in (a,b)");
        assert_eq!(
            pods.path(),
            "/api/v1/namespaces/default/pods?labelSelector=app%3Dweb%2Ctier%20in%20%28a%2Cb%29"
        );
        assert!(pods
            .forbidden()
            .to_string()
            .starts_with("forbidden: list pods in default — grant list on pods to"));
    }
}
