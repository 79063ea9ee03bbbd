//! The cluster to talk to from outside a pod, found as kubectl finds it: `--kubeconfig FILE`,
//! else the files `KUBECONFIG` lists (merged, the first to set a name winning), else
//! `~/.kube/config`; the current context (or `--context`) names the server and the user. In a
//! pod without any of those, the service account ([`Cluster::find`]).

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use base64::Engine;
use serde::Deserialize;
use serde_json::{json, Value};

use super::cluster::Cluster;
use super::credential::Credential;
use super::exec::{Plugin, API_VERSIONS};
use crate::kind::http::HttpTarget;
use crate::kind::target::Target;
use crate::kind::Kind;
use crate::net::tls::Certificate;
use crate::secrets::Secrets;
use crate::text::quoted;

/// The largest kubeconfig read: real ones with dozens of clusters are tens of KB.
const MAX_FILE: u64 = 4 << 20;

/// Where the user said the cluster is.
#[derive(Debug, Default, Clone)]
pub struct Access {
    /// `--kubeconfig FILE`.
    pub kubeconfig: Option<PathBuf>,
    /// `--context NAME`: instead of the current context.
    pub context: Option<String>,
    /// The service account folder, in a pod (tests point it elsewhere).
    pub service_account_dir: Option<PathBuf>,
}

/// A kubeconfig, as far as readygate reads it; paths already resolved against the folder of
/// the file that held them.
#[derive(Default, Deserialize)]
#[serde(default, rename_all = "kebab-case")]
struct Config {
    current_context: String,
    clusters: Vec<Named<ClusterEntry>>,
    users: Vec<Named<UserEntry>>,
    contexts: Vec<Named<ContextEntry>>,
}

#[derive(Deserialize)]
struct Named<T> {
    name: String,
    #[serde(alias = "cluster", alias = "user", alias = "context")]
    entry: Option<T>,
}

#[derive(Default, Deserialize)]
#[serde(default, rename_all = "kebab-case")]
struct ClusterEntry {
    server: String,
    certificate_authority: Option<PathBuf>,
    certificate_authority_data: Option<String>,
    insecure_skip_tls_verify: bool,
    tls_server_name: Option<String>,
    proxy_url: Option<String>,
}

#[derive(Default, Deserialize)]
#[serde(default, rename_all = "kebab-case")]
struct UserEntry {
    token: Option<String>,
    #[serde(rename = "tokenFile")]
    token_file: Option<PathBuf>,
    client_certificate: Option<PathBuf>,
    client_certificate_data: Option<String>,
    client_key: Option<PathBuf>,
    client_key_data: Option<String>,
    exec: Option<ExecEntry>,
    auth_provider: Option<Value>,
    username: Option<String>,
}

#[derive(Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
struct ExecEntry {
    command: String,
    args: Vec<String>,
    env: Option<Vec<EnvEntry>>,
    api_version: String,
    install_hint: Option<String>,
    provide_cluster_info: bool,
    interactive_mode: Option<String>,
}

#[derive(Default, Deserialize)]
#[serde(default)]
struct EnvEntry {
    name: String,
    value: String,
}

#[derive(Default, Deserialize)]
#[serde(default)]
struct ContextEntry {
    cluster: String,
    user: String,
    namespace: Option<String>,
}

/// The cluster `access` names, with `attempt_timeout` as the bound of a watch's answer. Every
/// fault is a one-line usage error naming the file and the field.
pub fn find(
    access: &Access,
    secrets: Arc<Secrets>,
    attempt_timeout: Duration,
) -> Result<Cluster, String> {
    let files = match &access.kubeconfig {
        Some(file) => vec![file.clone()],
        None => kubeconfig_files(),
    };
    let mut config = Config::default();
    let mut read_any = false;
    for file in &files {
        if access.kubeconfig.is_none() && !file.exists() {
            // As kubectl: a listed file that is not there is skipped.
            continue;
        }
        merge(&mut config, read(file)?);
        read_any = true;
    }
    if !read_any {
        if std::env::var_os("KUBERNETES_SERVICE_HOST").is_some() {
            if access.context.is_some() {
                return Err(
                    "--context needs a kubeconfig (--kubeconfig FILE or KUBECONFIG)".into(),
                );
            }
            let dir = access.service_account_dir.as_deref();
            return Cluster::find(dir, secrets, attempt_timeout);
        }
        return Err(
            "no cluster to ask: give --kubeconfig FILE, set KUBECONFIG, or run in a \
                    pod with a service account"
                .into(),
        );
    }
    let shown = files
        .iter()
        .map(|f| f.display().to_string())
        .collect::<Vec<_>>()
        .join(":");
    let from = format!("the kubeconfig {}", quoted(&shown));
    let name = match &access.context {
        Some(name) => name.clone(),
        None if config.current_context.is_empty() => {
            return Err(format!(
                "{from} has no current-context: give --context NAME"
            ));
        }
        None => config.current_context.clone(),
    };
    let context = pick(&config.contexts, &name)
        .ok_or_else(|| format!("{from} has no context {}", quoted(&name)))?;
    let cluster = pick(&config.clusters, &context.cluster).ok_or_else(|| {
        let cluster = quoted(&context.cluster);
        format!(
            "{from}: context {} names cluster {cluster}, which it does not have",
            quoted(&name)
        )
    })?;
    let user = match context.user.as_str() {
        "" => &UserEntry::default(),
        user => pick(&config.users, user).ok_or_else(|| {
            let user = quoted(user);
            format!(
                "{from}: context {} names user {user}, which it does not have",
                quoted(&name)
            )
        })?,
    };
    let at = format!("{from}, context {}", quoted(&name));
    let mut built = build(cluster, user, &at, secrets, attempt_timeout)?;
    built.namespace = context
        .namespace
        .clone()
        .filter(|ns| !ns.is_empty())
        .unwrap_or_else(|| "default".into());
    built.who = match context.user.as_str() {
        "" => format!("the anonymous user of context {}", quoted(&name)),
        user => format!("user {} of context {}", quoted(user), quoted(&name)),
    };
    Ok(built)
}

/// The cluster of `k8s://` targets: `--kubeconfig`/`--context`; else `--k8s-serviceaccount-dir`;
/// else the files `KUBECONFIG` lists; else, in a pod (`KUBERNETES_SERVICE_HOST` set), its
/// service account; else `~/.kube/config`. Unlike kubectl, a pod's own `~/.kube/config` never
/// takes the place of its service account, which the RBAC examples grant.
pub fn for_targets(
    access: &Access,
    secrets: Arc<Secrets>,
    attempt_timeout: Duration,
) -> Result<Cluster, String> {
    let given = access.kubeconfig.is_some() || access.context.is_some();
    let listed = std::env::var_os("KUBECONFIG").is_some_and(|v| !v.is_empty());
    let in_pod = std::env::var_os("KUBERNETES_SERVICE_HOST").is_some_and(|v| !v.is_empty());
    let dir = access.service_account_dir.as_deref();
    if given || (dir.is_none() && (listed || !in_pod)) {
        let home = kubeconfig_files();
        if !given && !listed && !home.iter().any(|file| file.exists()) {
            return Err(
                "k8s:// targets need a cluster: in a pod, KUBERNETES_SERVICE_HOST is \
                        set (it is not); outside one, give --kubeconfig FILE or set KUBECONFIG \
                        (there is no ~/.kube/config)"
                    .into(),
            );
        }
        return find(access, secrets, attempt_timeout);
    }
    Cluster::find(dir, secrets, attempt_timeout)
}

/// The files `KUBECONFIG` lists, else `~/.kube/config`.
fn kubeconfig_files() -> Vec<PathBuf> {
    match std::env::var_os("KUBECONFIG").filter(|v| !v.is_empty()) {
        Some(list) => std::env::split_paths(&list)
            .filter(|p| !p.as_os_str().is_empty())
            .collect(),
        None => std::env::var_os("HOME")
            .map(|home| vec![Path::new(&home).join(".kube").join("config")])
            .unwrap_or_default(),
    }
}

/// The entry named `name`.
fn pick<'a, T>(entries: &'a [Named<T>], name: &str) -> Option<&'a T> {
    let named = entries.iter().find(|e| e.name == name)?;
    named.entry.as_ref()
}

/// Adds `more` to `config`: a name already there keeps its first entry, as kubectl merges.
fn merge(config: &mut Config, more: Config) {
    if config.current_context.is_empty() {
        config.current_context = more.current_context;
    }
    fn add<T>(into: &mut Vec<Named<T>>, more: Vec<Named<T>>) {
        for entry in more {
            if !into.iter().any(|e| e.name == entry.name) {
                into.push(entry);
            }
        }
    }
    add(&mut config.clusters, more.clusters);
    add(&mut config.users, more.users);
    add(&mut config.contexts, more.contexts);
}

/// Reads one kubeconfig file, its relative paths resolved against its folder.
fn read(file: &Path) -> Result<Config, String> {
    let shown = quoted(&file.display().to_string());
    let bytes = crate::regular_file::read_head(file, MAX_FILE + 1)
        .map_err(|e| format!("kubeconfig {shown}: {}", crate::error::describe_io(&e)))?;
    if bytes.len() as u64 > MAX_FILE {
        return Err(format!("kubeconfig {shown}: larger than 4 MiB"));
    }
    let text = String::from_utf8(bytes).map_err(|_| format!("kubeconfig {shown}: not UTF-8"))?;
    let documents = yaml_rust2::YamlLoader::load_from_str(&text)
        .map_err(|e| format!("kubeconfig {shown}: not YAML ({e})"))?;
    let value = documents
        .into_iter()
        .next()
        .map(json)
        .unwrap_or(Value::Null);
    if value.is_null() {
        return Ok(Config::default());
    }
    let mut config: Config = serde_json::from_value(value)
        .map_err(|e| format!("kubeconfig {shown}: not a kubeconfig ({e})"))?;
    let folder = file.parent().unwrap_or(Path::new("."));
    let resolve = |path: &mut Option<PathBuf>| {
        if let Some(p) = path.as_mut().filter(|p| p.is_relative()) {
            *p = folder.join(&*p);
        }
    };
    for cluster in config.clusters.iter_mut().filter_map(|c| c.entry.as_mut()) {
        resolve(&mut cluster.certificate_authority);
    }
    for user in config.users.iter_mut().filter_map(|u| u.entry.as_mut()) {
        resolve(&mut user.token_file);
        resolve(&mut user.client_certificate);
        resolve(&mut user.client_key);
        // As client-go: a command with a slash in it is a path, relative to the file's folder.
        if let Some(exec) = user.exec.as_mut() {
            let command = Path::new(&exec.command);
            if exec.command.contains('/') && command.is_relative() {
                exec.command = folder.join(command).display().to_string();
            }
        }
    }
    Ok(config)
}

/// A YAML document as JSON, for serde: mapping keys become strings.
fn json(yaml: yaml_rust2::Yaml) -> Value {
    use yaml_rust2::Yaml;
    match yaml {
        Yaml::Real(text) => text
            .parse::<f64>()
            .map(Value::from)
            .unwrap_or(Value::String(text)),
        Yaml::Integer(n) => Value::from(n),
        Yaml::String(text) => Value::String(text),
        Yaml::Boolean(b) => Value::Bool(b),
        Yaml::Array(items) => Value::Array(items.into_iter().map(json).collect()),
        Yaml::Hash(map) => Value::Object(
            map.into_iter()
                .map(|(k, v)| {
                    let key = match json(k) {
                        Value::String(text) => text,
                        other => other.to_string(),
                    };
                    (key, json(v))
                })
                .collect(),
        ),
        Yaml::Alias(_) | Yaml::Null | Yaml::BadValue => Value::Null,
    }
}

/// The cluster `cluster` and `user` describe; `at` names where, for errors.
fn build(
    cluster: &ClusterEntry,
    user: &UserEntry,
    at: &str,
    secrets: Arc<Secrets>,
    attempt_timeout: Duration,
) -> Result<Cluster, String> {
    let server = cluster.server.trim();
    let api = match Target::parse(server).map(|t| t.kind) {
        Ok(Kind::Http(api)) if server.starts_with("http") && api.credentials.is_none() => api,
        _ => {
            let server = quoted(server);
            return Err(format!(
                "{at}: server {server} is not an http:// or https:// URL"
            ));
        }
    };
    if cluster.proxy_url.is_some() {
        return Err(format!("{at}: proxy-url is not supported"));
    }
    if user.auth_provider.is_some() {
        return Err(format!(
            "{at}: auth-provider is not supported: use an exec credential plugin (client.authentication.k8s.io)"
        ));
    }
    if user.username.is_some() {
        return Err(format!(
            "{at}: username/password is not supported: use a token"
        ));
    }
    let roots = roots(cluster, at)?;
    let identity = identity(user, at)?;
    let tls = match api.tls {
        false => None,
        true => Some(
            crate::net::tls::for_cluster(
                roots.as_deref(),
                cluster.insecure_skip_tls_verify,
                identity.as_ref(),
            )
            .map_err(|e| format!("{at}: {e}"))?,
        ),
    };
    let server_name = match &cluster.tls_server_name {
        None => None,
        Some(name) => Some(
            rustls::pki_types::ServerName::try_from(name.clone())
                .map_err(|_| format!("{at}: tls-server-name {} is not a name", quoted(name)))?,
        ),
    };
    let credential = credential(user, cluster, &api, roots, at)?;
    if let Credential::Token(token) = &credential {
        secrets.learn(token.as_bytes());
    }
    let trust = match (
        &cluster.certificate_authority,
        &cluster.certificate_authority_data,
    ) {
        (_, Some(_)) => "not the one in the kubeconfig's certificate-authority-data".into(),
        (Some(file), None) => format!("not the one in {}", quoted(&file.display().to_string())),
        (None, None) => "give the cluster's certificate-authority in the kubeconfig".into(),
    };
    Ok(Cluster {
        api,
        namespace: String::new(),
        attempt_timeout,
        who: String::new(),
        trust,
        server_name,
        credential,
        tls,
        lane: crate::runtime::lane::Lane::default(),
        secrets,
    })
}

/// The cluster's CA: `certificate-authority-data`, else `certificate-authority`'s file.
fn roots(cluster: &ClusterEntry, at: &str) -> Result<Option<Vec<Certificate>>, String> {
    if let Some(data) = &cluster.certificate_authority_data {
        let pem = decode(data, at, "certificate-authority-data")?;
        let what = format!("{at}: certificate-authority-data");
        return crate::net::tls::roots_from_pem(&pem, &what).map(Some);
    }
    match &cluster.certificate_authority {
        Some(file) => {
            crate::net::tls::read_roots(file, &format!("{at}: certificate-authority")).map(Some)
        }
        None => Ok(None),
    }
}

/// The user's client certificate and key, as data or files.
fn identity(user: &UserEntry, at: &str) -> Result<Option<crate::net::tls::Identity>, String> {
    let cert = match (&user.client_certificate_data, &user.client_certificate) {
        (Some(data), _) => Some(decode(data, at, "client-certificate-data")?),
        (None, Some(file)) => Some(read_pem(file, at, "client-certificate")?),
        (None, None) => None,
    };
    let key = match (&user.client_key_data, &user.client_key) {
        (Some(data), _) => Some(decode(data, at, "client-key-data")?),
        (None, Some(file)) => Some(read_pem(file, at, "client-key")?),
        (None, None) => None,
    };
    match (cert, key) {
        (None, None) => Ok(None),
        (Some(cert), Some(key)) => {
            crate::net::tls::identity_from_pem(&cert, &key, &format!("{at}: user")).map(Some)
        }
        _ => Err(format!(
            "{at}: a client certificate needs its key, and a key its certificate"
        )),
    }
}

/// How the user proves who they are besides a client certificate.
fn credential(
    user: &UserEntry,
    cluster: &ClusterEntry,
    api: &HttpTarget,
    roots: Option<Vec<Certificate>>,
    at: &str,
) -> Result<Credential, String> {
    if let Some(token) = user
        .token
        .as_deref()
        .map(str::trim)
        .filter(|t| !t.is_empty())
    {
        if !token.bytes().all(|b| b.is_ascii_graphic()) {
            return Err(format!(
                "{at}: the user's token holds characters a token has not"
            ));
        }
        return Ok(Credential::Token(token.to_string()));
    }
    if let Some(file) = &user.token_file {
        return Ok(Credential::File(file.clone()));
    }
    let Some(exec) = &user.exec else {
        return Ok(Credential::Anonymous);
    };
    if !API_VERSIONS.contains(&exec.api_version.as_str()) {
        let version = quoted(&exec.api_version);
        return Err(format!(
            "{at}: exec apiVersion {version} is not client.authentication.k8s.io/v1 or v1beta1"
        ));
    }
    if exec.command.is_empty() {
        return Err(format!("{at}: exec has no command"));
    }
    if exec.interactive_mode.as_deref() == Some("Always") {
        return Err(format!(
            "{at}: the exec credential plugin needs a terminal (interactiveMode: Always)"
        ));
    }
    let mut info = json!({
        "apiVersion": exec.api_version,
        "kind": "ExecCredential",
        "spec": {"interactive": false},
    });
    if exec.provide_cluster_info {
        let ca = match (&cluster.certificate_authority_data, &roots) {
            (Some(data), _) => Some(data.clone()),
            (None, Some(roots)) => Some(super::exec::encode(pem(roots).as_bytes())),
            (None, None) => None,
        };
        info["spec"]["cluster"] = json!({
            "server": cluster.server,
            "certificate-authority-data": ca,
            "insecure-skip-tls-verify": cluster.insecure_skip_tls_verify,
        });
    }
    let env = exec.env.iter().flatten();
    Ok(Credential::Exec(Box::new(Plugin {
        command: exec.command.clone(),
        args: exec.args.clone(),
        env: env.map(|e| (e.name.clone(), e.value.clone())).collect(),
        api_version: exec.api_version.clone(),
        install_hint: exec.install_hint.clone(),
        info: info.to_string(),
        insecure: cluster.insecure_skip_tls_verify,
        roots: roots.filter(|_| api.tls),
        cache: Default::default(),
    })))
}

/// Certificates back as PEM text.
fn pem(roots: &[Certificate]) -> String {
    let b64 = base64::engine::general_purpose::STANDARD;
    roots
        .iter()
        .map(|c| {
            let body = b64.encode(c.as_ref());
            let lines: Vec<&str> = body
                .as_bytes()
                .chunks(64)
                .map(|l| std::str::from_utf8(l).unwrap_or_default())
                .collect();
            format!(
                "-----BEGIN CERTIFICATE-----\n{}\n-----END CERTIFICATE-----\n",
                lines.join("\n")
            )
        })
        .collect()
}

/// A `*-data` field: base64 of PEM.
fn decode(data: &str, at: &str, field: &str) -> Result<Vec<u8>, String> {
    let compact: String = data.split_whitespace().collect();
    base64::engine::general_purpose::STANDARD
        .decode(compact)
        .map_err(|_| format!("{at}: {field} is not base64"))
}

/// A PEM file a field names, bounded.
fn read_pem(file: &Path, at: &str, field: &str) -> Result<Vec<u8>, String> {
    let shown = quoted(&file.display().to_string());
    let bytes = crate::regular_file::read_head(file, MAX_FILE + 1)
        .map_err(|e| format!("{at}: {field} {shown}: {}", crate::error::describe_io(&e)))?;
    if bytes.len() as u64 > MAX_FILE {
        return Err(format!("{at}: {field} {shown}: larger than 4 MiB"));
    }
    Ok(bytes)
}
