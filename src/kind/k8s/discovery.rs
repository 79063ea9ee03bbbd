//! Which resource a `k8s://TYPE.VERSION.GROUP/NAME` target names: asked once of the API
//! server's discovery (`GET /apis/GROUP/VERSION`, `/api/v1` for the core group, which every
//! authenticated user may read), as kubectl maps a type to its resource: by kind (case aside),
//! plural or singular name. What is not there yet (a CRD installed later) is not ready.

use std::borrow::Cow;

use hyper::Method;
use serde::Deserialize;

use super::cluster::Cluster;
use super::object::{nullable, parse};
use super::request::{call, refused, unauthorized, Resource};
use super::target::AnyObject;
use crate::error::Failure;
use crate::net::resolve::Resolver;
use crate::runtime::Attempt;

/// An `APIResourceList`, as far as it maps a type to a resource.
#[derive(Deserialize)]
struct ResourceList {
    #[serde(default, deserialize_with = "nullable")]
    resources: Vec<Entry>,
}

#[derive(Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
struct Entry {
    /// The plural, e.g. `certificates`; `certificates/status` for a subresource.
    name: String,
    singular_name: String,
    namespaced: bool,
    kind: String,
}

/// The path of `any`'s group and version in discovery.
fn group_version(any: &AnyObject) -> String {
    match any.group.as_str() {
        "" => format!("/api/{}", any.version),
        group => format!("/apis/{group}/{}", any.version),
    }
}

/// Asks discovery which resource `any`'s type is, within `at`.
pub(super) async fn find(
    any: &AnyObject,
    cluster: &Cluster,
    resolver: &Resolver,
    at: &Attempt,
) -> Result<Resource, Failure> {
    let path = group_version(any);
    let shown = path
        .trim_start_matches("/api/")
        .trim_start_matches("/apis/");
    let (status, body) = call(cluster, Method::GET, path.clone(), None, resolver, at).await?;
    match status {
        200 => {}
        404 => return Err(format!("the API server has no API {shown} (yet)").into()),
        401 => return Err(unauthorized(cluster)),
        403 => {
            let who = &cluster.who;
            return Err(format!(
                "forbidden: discovery of {shown} — grant get on nonResourceURLs {path} to {who}"
            )
            .into());
        }
        _ => return Err(refused(status, &body)),
    }
    let list: ResourceList = parse(&body)?;
    let wanted = &any.type_name;
    // A plural the path can carry as it is: a hostile answer cannot steer the request.
    let usable = |name: &str| {
        !name.is_empty()
            && name
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-' || b == b'.')
    };
    let entry = list.resources.into_iter().find(|e| {
        usable(&e.name)
            && (e.name == *wanted
                || e.singular_name == *wanted
                || e.kind.eq_ignore_ascii_case(wanted))
    });
    match entry {
        Some(entry) => Ok(Resource {
            group: Cow::Owned(any.group.clone()),
            version: Cow::Owned(any.version.clone()),
            plural: Cow::Owned(entry.name),
            namespaced: entry.namespaced,
        }),
        None => Err(format!("the API server has no type {wanted} in {shown} (yet)").into()),
    }
}
