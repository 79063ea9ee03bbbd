//! The requests `doctor` makes: a JSON GET or POST, and a metrics page scanned line by line
//! for one metric (an API server's `/metrics` runs to megabytes), each bounded by the run's
//! deadline; a refusal says which grant is missing and to whom.

use http_body_util::BodyExt;
use hyper::body::Incoming;
use hyper::{Method, Response};
use tokio::time::Instant;

use crate::error::Failure;
use crate::kind::http::roundtrip;
use crate::kind::k8s::request::{call, connect, refused, request, unauthorized};
use crate::kind::k8s::Cluster;
use crate::net::resolve::Resolver;
use crate::runtime::Attempt;

/// The longest metrics line kept while scanning: the ones read are short.
const MAX_LINE: usize = 64 * 1024;
/// The most of a metrics page read: past it the metric is taken as absent.
const MAX_METRICS: usize = 64 << 20;

/// What the API server said to one request.
pub enum Answer {
    /// 200 or 201, with the body.
    Ok(Vec<u8>),
    /// 403: RBAC (or admission) refused; the server's message.
    Forbidden(String),
    /// 404.
    NotFound,
    /// Anything else, or no answer: why.
    Failed(String),
}

/// What one check needs: the cluster, a resolver and the run's deadline.
pub struct Asker<'a> {
    pub cluster: &'a Cluster,
    pub resolver: &'a Resolver,
    pub deadline: Instant,
}

impl Asker<'_> {
    /// GET (or POST `body` to) `path`, within `bound` of the deadline.
    pub async fn json(&self, method: Method, path: &str, body: Option<Vec<u8>>) -> Answer {
        self.json_within(method, path, body, self.deadline).await
    }

    /// As [`Asker::json`], ending at `end` (before the deadline).
    pub async fn json_within(
        &self,
        method: Method,
        path: &str,
        body: Option<Vec<u8>>,
        end: Instant,
    ) -> Answer {
        let end = end.min(self.deadline);
        let at = Attempt::until(end);
        let asked = call(
            self.cluster,
            method,
            path.to_string(),
            body,
            self.resolver,
            &at,
        );
        match tokio::time::timeout_at(end, asked).await {
            Err(_) => Answer::Failed(format!("no answer from the API server to {path} in time")),
            Ok(Err(failure)) => Answer::Failed(failure.to_string()),
            Ok(Ok((status, body))) => sort(self.cluster, status, body),
        }
    }

    /// GETs the metrics page at `path` and finds the line `find` picks (`Ok(None)`: not
    /// there), reading no more of the page than that, until `end`.
    pub async fn metric(
        &self,
        path: &str,
        find: impl Fn(&str) -> bool,
        end: Instant,
    ) -> Result<Option<String>, Answer> {
        let end = end.min(self.deadline);
        let at = Attempt::until(end);
        let scan = async {
            let session = self.cluster.session().await?;
            let request = request(
                &self.cluster.api,
                path.to_string(),
                session.bearer.as_deref(),
            );
            let request = request.map_err(Failure::from)?;
            let stream = connect(self.cluster, &session, self.resolver, &at).await?;
            let read = |response: Response<Incoming>| async {
                let status = response.status().as_u16();
                if status != 200 {
                    let body = crate::kind::http::read_body(response.into_body(), 64 << 10).await?;
                    return Ok(Err(sort(self.cluster, status, body)));
                }
                Ok(Ok(scan(response.into_body(), &find).await?))
            };
            roundtrip(stream, request, read, &at).await
        };
        match tokio::time::timeout_at(end, scan).await {
            Err(_) => Err(Answer::Failed(format!("no answer to {path} in time"))),
            Ok(Err(failure)) => Err(Answer::Failed(failure.to_string())),
            Ok(Ok(found)) => found,
        }
    }
}

/// Reads a metrics page line by line until `find` picks one.
async fn scan(mut body: Incoming, find: &impl Fn(&str) -> bool) -> Result<Option<String>, Failure> {
    let (mut line, mut read) = (Vec::new(), 0);
    while let Some(frame) = body.frame().await {
        let frame = frame.map_err(|e| crate::error::describe_error(&e))?;
        let Ok(data) = frame.into_data() else {
            continue;
        };
        read += data.len();
        for &byte in data.iter() {
            if byte != b'\n' {
                if line.len() < MAX_LINE {
                    line.push(byte);
                }
                continue;
            }
            let text = String::from_utf8_lossy(&line);
            if find(&text) {
                return Ok(Some(text.into_owned()));
            }
            line.clear();
        }
        if read > MAX_METRICS {
            return Ok(None);
        }
    }
    let text = String::from_utf8_lossy(&line);
    Ok(find(&text).then(|| text.into_owned()))
}

/// An answer sorted by its status.
fn sort(cluster: &Cluster, status: u16, body: Vec<u8>) -> Answer {
    match status {
        200 | 201 => Answer::Ok(body),
        404 => Answer::NotFound,
        401 => Answer::Failed(unauthorized(cluster).to_string()),
        403 => {
            #[derive(serde::Deserialize)]
            struct Status {
                #[serde(default)]
                message: String,
            }
            let message = serde_json::from_slice::<Status>(&body)
                .map(|s| s.message)
                .unwrap_or_default();
            Answer::Forbidden(crate::text::peer_text(&message))
        }
        _ => Answer::Failed(refused(status, &body).to_string()),
    }
}
