//! What is kept of a list (`k8s://pods?selector=`, `k8s://service/`): each item by name, cut to
//! what its kind's judge needs. A GET's answer fills it; a watch's events change it, one item
//! at a time, and the same judge reads it after each.

use serde::de::DeserializeOwned;

use super::object::{parse, List, MAX_ITEMS};
use crate::error::Failure;

/// The longest name kept: a Kubernetes object's name is at most 253 bytes.
const MAX_NAME: usize = 253;

/// One item as its kind's judge sees it.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Item {
    /// Ready endpoints of a slice; for a pod, 1 if it is ready, else 0.
    pub ready: usize,
    /// Endpoints of a slice; 1 for a pod.
    pub total: usize,
    /// Why a pod is not ready, already clipped.
    pub why: String,
}

/// A list's items by name, in the order the list gave them (a watch's new ones last).
#[derive(Clone, Debug, Default)]
pub struct Items(Vec<(String, Item)>);

impl Items {
    pub fn len(&self) -> usize {
        self.0.len()
    }

    pub fn iter(&self) -> impl Iterator<Item = (&String, &Item)> {
        self.0.iter().map(|(name, item)| (name, item))
    }

    pub fn values(&self) -> impl Iterator<Item = &Item> {
        self.0.iter().map(|(_, item)| item)
    }
}

/// An object a list holds, read as far as its judge needs.
pub trait Listed: DeserializeOwned {
    fn name(&self) -> &str;
    fn item(&self) -> Item;
}

/// A list answer: the version a watch of it starts from, and its items.
pub fn read<T: Listed>(body: &[u8]) -> Result<(Option<String>, Items), Failure> {
    let list: List<T> = parse(body)?;
    let version = super::watch::usable(list.metadata.resource_version);
    let items = list.items.iter().map(|o| (key(o.name()), o.item()));
    Ok((version, Items(items.collect())))
}

/// A watch event's object: its name and item.
pub fn one<T: Listed>(object: &[u8]) -> Result<(String, Item), Failure> {
    let object: T = parse(object)?;
    Ok((key(object.name()), object.item()))
}

/// An item added or changed (`Some`) or deleted (`None`); past [`MAX_ITEMS`] the list is refused,
/// as a list answer of that length is.
pub fn change(items: &mut Items, name: String, item: Option<Item>) -> Result<(), Failure> {
    let at = items.0.iter().position(|(kept, _)| *kept == name);
    match (at, item) {
        (Some(at), None) => drop(items.0.remove(at)),
        (None, None) => {}
        (Some(at), Some(item)) => items.0[at].1 = item,
        (None, Some(item)) => {
            if items.0.len() == MAX_ITEMS {
                let too_long = format!("more than {MAX_ITEMS} items in a list");
                return Err(format!("the API server's answer is too large: {too_long}").into());
            }
            items.0.push((name, item));
        }
    }
    Ok(())
}

/// A name as kept: cut to [`MAX_NAME`] bytes, so a thousand hostile names stay small.
fn key(name: &str) -> String {
    crate::text::head(name, MAX_NAME).to_string()
}
