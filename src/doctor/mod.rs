//! `readygate doctor`: can this cluster run built-in sidecars, and will pods keep them? Asks
//! the API server (version, feature gate), every node (kubelet version and gate through the
//! node proxy, skew) and admission (a dry-run pod CREATE), then gives a verdict and its fix,
//! as a table or as JSON. Cluster access is the `k8s://` kind's (kubeconfig or service account).

mod admission;
mod ask;
mod findings;
mod gate;
mod nodes;
mod render;
mod verdict;
mod version;

use std::sync::Arc;

use hyper::Method;
use serde::Deserialize;
use tokio::time::Instant;

use crate::cli::{DoctorArgs, DoctorOutput};
use crate::exit::Exit;
use crate::kind::k8s::kubeconfig::{self, Access};
use crate::net::resolve::Resolver;
use crate::secrets::Secrets;
use ask::{Answer, Asker};
use findings::Server;

/// Runs the checks and writes the report; the status says fine (0), a problem (1) or a check
/// that failed (3).
pub async fn run(args: DoctorArgs, secrets: Arc<Secrets>) -> Exit {
    let deadline = Instant::now() + args.timeout;
    let access = Access {
        kubeconfig: args.kubeconfig.clone(),
        context: args.context.clone(),
        service_account_dir: args.k8s_serviceaccount_dir.clone(),
    };
    let cluster = match kubeconfig::find(&access, secrets, args.timeout) {
        Ok(cluster) => cluster,
        Err(message) => return Exit::Usage(message),
    };
    let namespace = args
        .namespace
        .clone()
        .unwrap_or_else(|| cluster.namespace.clone());
    if let Err(e) = crate::kind::k8s::target::namespace_name(&namespace) {
        return Exit::Usage(format!("--namespace: {e}"));
    }
    let resolver = Resolver::default();
    let asker = Asker {
        cluster: &cluster,
        resolver: &resolver,
        deadline,
    };
    let server = match server(&asker).await {
        Ok(server) => server,
        Err(why) => {
            render::unreachable(&why, args.output);
            return Exit::Child(3);
        }
    };
    let server_minor = version::minor(&server.version);
    let label = args.node_label.as_deref();
    let nodes = nodes::check(&asker, server_minor, label).await;
    let admission = admission::check(&asker, &namespace).await;
    let verdict = verdict::judge(&server, &nodes, &admission, label);
    let status = verdict::status(&verdict);
    match args.output {
        DoctorOutput::Json => render::json(&server, &nodes, &admission, &verdict),
        DoctorOutput::Table => render::table(&server, &nodes, &admission, &verdict, label),
    }
    Exit::Child(status)
}

/// The API server's version and gate; `Err`: it cannot be asked at all (unreachable, or the
/// credentials refused), and why.
async fn server(asker: &Asker<'_>) -> Result<Server, String> {
    #[derive(Deserialize)]
    #[serde(rename_all = "camelCase")]
    struct Info {
        #[serde(default)]
        git_version: String,
    }
    let who = &asker.cluster.who;
    let (version, why) = match asker.json(Method::GET, "/version", None).await {
        Answer::Ok(body) => match serde_json::from_slice::<Info>(&body) {
            Ok(info) => (info.git_version, None),
            Err(_) => (String::new(), Some("/version: not a version".to_string())),
        },
        Answer::Forbidden(_) => {
            let grant = format!("grant get on nonResourceURLs /version to {who}");
            (String::new(), Some(format!("/version refused: {grant}")))
        }
        Answer::NotFound => (String::new(), Some("/version: not found".to_string())),
        Answer::Failed(why) => return Err(why),
    };
    let minor = version::minor(&version);
    let grant = "get on nonResourceURLs /metrics";
    let mut gate = gate::read(asker, "/metrics", grant, minor, asker.deadline).await;
    if let Some(why) = why {
        gate.note = Some(match gate.note {
            Some(note) => format!("{why}; {note}"),
            None => why,
        });
    }
    Ok(Server { version, gate })
}
