//! `readygate inject`: manifests in, the same manifests with readygate's gate and the sidecar
//! added out (or the JSON Patch that adds them). Documents are read into an ordered tree, never
//! into typed structs, so fields inject does not know pass through; a document it leaves alone
//! is written back as its own text. The whole output is built before a byte is written: a bad
//! document anywhere writes nothing.

mod annotations;
pub mod auto;
mod document;
mod json;
mod patch;
mod pod;
mod probe;
mod shared;
pub mod sidecar;
mod tree;
mod yaml;

use std::io::{Read, Write};
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use crate::cli::{InjectArgs, InjectOutput, InjectionArgs, SidecarMode};
use crate::exit::Exit;
use crate::kind::k8s::{kubeconfig, nodes};
use crate::secrets::Secrets;
pub use pod::Injection;
use sidecar::Sidecar;
pub use tree::Node;

/// The JSON Patch that injects `pod` (a Pod object, as the API server sends it), or `None`
/// when there is nothing to add; the error names the field at fault.
pub fn pod_patch(pod: &Node, injection: &Injection) -> Result<Option<String>, String> {
    let mut after = pod.clone();
    document::inject(&mut after, 1, injection)?;
    let ops = patch::diff(pod, &after);
    Ok((!ops.is_empty()).then(|| patch::to_json(&ops)))
}

/// How long `--mode auto` may take to list the nodes.
const AUTO_TIMEOUT: Duration = Duration::from_secs(30);

/// Runs `readygate inject`.
pub fn run(args: InjectArgs, secrets: Arc<Secrets>) -> Exit {
    let mut injection = match injection(&args.injection) {
        Ok(injection) => injection,
        Err(message) => return Exit::Usage(message),
    };
    if injection.auto {
        match cluster_mode(&args.injection, secrets) {
            Ok(mode) => injection = injection.with_mode(mode),
            Err(exit) => return exit,
        }
    }
    let mut out = String::new();
    let inputs: Vec<&Path> = match args.files.is_empty() {
        true => vec![Path::new("-")],
        false => args.files.iter().map(|p| p.as_path()).collect(),
    };
    let named = args.files.len() > 1;
    for input in inputs {
        let shown = match input == Path::new("-") {
            true => "stdin".to_string(),
            false => input.display().to_string(),
        };
        let text = match read(input) {
            Ok(text) => text,
            Err(message) => return Exit::Usage(format!("{shown}: {message}")),
        };
        let stream = match args.output {
            InjectOutput::Manifest => manifests(&text, &injection),
            InjectOutput::Patch => patches(&text, &injection),
        };
        match stream {
            Ok(text) => {
                // Documents of the next file start a document of their own.
                if !out.is_empty() && args.output == InjectOutput::Manifest && !is_json(&text) {
                    if !out.ends_with('\n') {
                        out.push('\n');
                    }
                    if !text.starts_with("---") {
                        out.push_str("---\n");
                    }
                }
                out.push_str(&text);
            }
            Err(message) if named || !args.files.is_empty() => {
                return Exit::Usage(format!("{shown}: {message}"))
            }
            Err(message) => return Exit::Usage(message),
        }
    }
    let mut stdout = std::io::stdout().lock();
    match stdout
        .write_all(out.as_bytes())
        .and_then(|()| stdout.flush())
    {
        Ok(()) => Exit::Ready,
        Err(err) => Exit::Failed(format!(
            "cannot write the manifests: {}",
            crate::error::describe_io(&err)
        )),
    }
}

/// The injection the options describe, its sidecar file read and checked.
pub fn injection(args: &InjectionArgs) -> Result<Injection, String> {
    let Some(path) = &args.sidecar else {
        return injection_of(&args.image, None, args.mode);
    };
    let shown = path.display();
    let text = read(path).map_err(|e| format!("--sidecar {shown}: {e}"))?;
    injection_of(&args.image, Some(&text), args.mode).map_err(|e| format!("--sidecar {shown}: {e}"))
}

/// The injection of `--image`, a `--sidecar` file's text (YAML or JSON) and `--mode`; the error
/// says what is wrong with the sidecar. The fuzz targets make theirs here too.
pub fn injection_of(
    image: &str,
    sidecar: Option<&str>,
    mode: SidecarMode,
) -> Result<Injection, String> {
    let sidecar = match sidecar {
        None => None,
        Some(text) => {
            let container = match is_json(text) {
                true => serde_json::from_str::<Node>(text).map_err(|e| e.to_string()),
                false => yaml::load("", text).and_then(|node| node.ok_or("empty".into())),
            };
            Some(Sidecar::new(container?, mode)?)
        }
    };
    Ok(Injection {
        image: image.to_string(),
        sidecar,
        auto: mode == SidecarMode::Auto,
    })
}

/// Where the cluster of `--mode auto` is found: the kubeconfig, else the service account.
pub fn access(args: &InjectionArgs) -> kubeconfig::Access {
    kubeconfig::Access {
        kubeconfig: args.kubeconfig.clone(),
        context: args.context.clone(),
        service_account_dir: args.k8s_serviceaccount_dir.clone(),
    }
}

/// `--mode auto` for `inject`: the form that runs on every node, from one list of the nodes.
fn cluster_mode(args: &InjectionArgs, secrets: Arc<Secrets>) -> Result<sidecar::Mode, Exit> {
    let cluster = kubeconfig::find(&access(args), secrets, AUTO_TIMEOUT).map_err(Exit::Usage)?;
    let runtime = crate::runtime::runtime()
        .map_err(|e| Exit::Failed(format!("cannot start: {}", crate::error::describe_io(&e))))?;
    let listed = runtime.block_on(async {
        let resolver = crate::net::resolve::Resolver::default();
        let end = tokio::time::Instant::now() + AUTO_TIMEOUT;
        nodes::list(&cluster, &resolver, end).await
    });
    match listed {
        Ok((_, kubelets)) => Ok(auto::across(kubelets.values())),
        Err(failure) => Err(Exit::Failed(format!(
            "--mode auto: cannot read the nodes: {failure}"
        ))),
    }
}

/// The text of FILE, or of stdin for `-`.
fn read(path: &Path) -> Result<String, String> {
    let mut bytes = Vec::new();
    let read = match path == Path::new("-") {
        true => std::io::stdin().lock().read_to_end(&mut bytes).map(drop),
        false => {
            std::fs::File::open(path).and_then(|mut file| file.read_to_end(&mut bytes).map(drop))
        }
    };
    read.map_err(|e| crate::error::describe_io(&e))?;
    String::from_utf8(bytes).map_err(|_| "not UTF-8 text".to_string())
}

/// Whether a stream is JSON: its first character past white space opens an object.
fn is_json(text: &str) -> bool {
    text.trim_start().starts_with('{')
}

/// The stream with every document injected: a document left alone as its own text. The fuzz
/// targets call it as `inject` does.
pub fn manifests(text: &str, injection: &Injection) -> Result<String, String> {
    let mut out = String::with_capacity(text.len());
    if is_json(text) {
        let mut written = 0;
        for (index, (range, mut node)) in json::load_stream(text)?.into_iter().enumerate() {
            out.push_str(&text[written..range.start]);
            let before = node.clone();
            document::inject(&mut node, index + 1, injection)?;
            match node == before {
                true => out.push_str(&text[range.clone()]),
                false => out.push_str(json::emit(&node)?.trim_end_matches('\n')),
            }
            written = range.end;
        }
        out.push_str(&text[written..]);
        return Ok(out);
    }
    for (index, piece) in yaml::split(text).into_iter().enumerate() {
        let fail = |e: String| format!("document {}: {e}", index + 1);
        let Some(mut node) = yaml::load(piece.separator, piece.body).map_err(fail)? else {
            out.push_str(piece.separator);
            out.push_str(piece.body);
            continue;
        };
        let before = node.clone();
        document::inject(&mut node, index + 1, injection)?;
        if node == before {
            out.push_str(piece.separator);
            out.push_str(piece.body);
            continue;
        }
        out.push_str(yaml::bare_separator(piece.separator));
        out.push_str(yaml::leading_comments(piece.body));
        out.push_str(&yaml::emit(&node).map_err(fail)?);
    }
    Ok(out)
}

/// One JSON Patch per document, a line each (`[]` for a document left alone); a document of
/// comments only has none. Documents are counted as in the manifests' errors.
fn patches(text: &str, injection: &Injection) -> Result<String, String> {
    let documents: Vec<(usize, Node)> = match is_json(text) {
        true => (json::load_stream(text)?.into_iter().enumerate())
            .map(|(index, (_, node))| (index + 1, node))
            .collect(),
        false => {
            let mut nodes = Vec::new();
            for (index, piece) in yaml::split(text).into_iter().enumerate() {
                let node = yaml::load(piece.separator, piece.body)
                    .map_err(|e| format!("document {}: {e}", index + 1))?;
                nodes.extend(node.map(|node| (index + 1, node)));
            }
            nodes
        }
    };
    let mut out = String::new();
    for (index, before) in &documents {
        let mut after = before.clone();
        document::inject(&mut after, *index, injection)?;
        out.push_str(&patch::to_json(&patch::diff(before, &after)));
        out.push('\n');
    }
    Ok(out)
}
