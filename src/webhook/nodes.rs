//! `--mode auto` at admission: the nodes kept by a watch (started with the server), and the
//! sidecar's form chosen from them per pod without a request: the pod's own node when it is
//! already bound to one, else the form that runs on every node (kept until the nodes change).

use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::inject::auto;
use crate::inject::sidecar::Mode;
use crate::kind::k8s::nodes::{follow, NodeCache};
use crate::kind::k8s::Cluster;
use crate::net::resolve::Resolver;

/// How long one request to the API server (the node list, a watch's answer) may take.
pub const ASK_WITHIN: Duration = Duration::from_secs(10);

/// The watched nodes and the form chosen across them.
pub struct Chooser {
    cache: Arc<NodeCache>,
    /// The form across all nodes, and the generation of the nodes it was chosen from.
    across: Mutex<Option<(u64, Mode)>>,
}

impl Chooser {
    /// Starts watching the nodes of `cluster`, on the running runtime, for as long as the
    /// process runs.
    pub fn start(cluster: Cluster) -> Chooser {
        let cache = Arc::new(NodeCache::default());
        let watch = follow(
            Arc::new(cluster),
            Arc::new(Resolver::default()),
            cache.clone(),
        );
        drop(tokio::spawn(watch));
        Chooser {
            cache,
            across: Mutex::new(None),
        }
    }

    /// Whether the nodes were listed: until then the server is not ready.
    pub fn ready(&self) -> bool {
        self.cache.ready()
    }

    /// The form for a pod bound to `node` (`spec.nodeName`), or for any node.
    pub fn mode(&self, node: Option<&str>) -> Mode {
        self.cache.with(|kubelets, generation| {
            let Some(kubelets) = kubelets else {
                return Mode::Universal;
            };
            if let Some(kubelet) = node.and_then(|node| kubelets.get(node)) {
                return auto::on_node(kubelet);
            }
            let mut across = self.across.lock().unwrap_or_else(|e| e.into_inner());
            match *across {
                Some((kept, mode)) if kept == generation => mode,
                _ => {
                    let mode = auto::across(kubelets.values());
                    *across = Some((generation, mode));
                    mode
                }
            }
        })
    }
}
