//! `serve`'s validated plan: the shared plan of every target (each checked once however many
//! groups name it), the groups, and where and how to answer.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use crate::cli::{LogArgs, ServeArgs};
use crate::plan::{Mode, Plan};
use crate::secrets::Secrets;

/// Everything a `serve` run does, validated.
#[derive(Debug)]
pub struct ServePlan {
    /// The targets (`TARGET...` and every group's, each once) and how each attempt is made.
    pub plan: Plan,
    /// Where to listen.
    pub listen: SocketAddr,
    /// The `--group`s, in the order given.
    pub groups: Vec<Group>,
    /// How long one attempt's result answers requests.
    pub fresh_for: Duration,
    /// `--quiet-body`: answers carry no body naming targets.
    pub quiet_body: bool,
}

/// A `--group NAME=TARGET[,TARGET...]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Group {
    /// Its name: the path `/ready/NAME` and the gRPC service `NAME`.
    pub name: String,
    /// Its targets, as indices into the plan's targets.
    pub members: Vec<usize>,
}

impl ServePlan {
    /// The plan of `readygate serve`.
    pub fn new(
        mut args: ServeArgs,
        log: &LogArgs,
        secrets: Arc<Secrets>,
    ) -> Result<ServePlan, String> {
        let common = &args.common;
        for (given, option) in [
            (common.touch.is_some(), "--touch"),
            (common.termination_log.is_some(), "--termination-log"),
        ] {
            if given {
                return Err(format!(
                    "{option} is an option of wait and probe: serve answers each request instead"
                ));
            }
        }
        let mut texts: Vec<String> = match common.targets.is_empty() {
            false => common.targets.clone(),
            true => {
                let from_env = crate::plan::env("READYGATE_TARGETS")?.unwrap_or_default();
                let pieces = crate::kind::command::split_list(&from_env);
                pieces.into_iter().map(String::from).collect()
            }
        };
        let mut groups: Vec<Group> = Vec::new();
        for given in &args.groups {
            let (name, members) = parse_group(given)?;
            if groups.iter().any(|g| g.name == name) {
                return Err(format!("--group {name} is given twice"));
            }
            let members = members
                .into_iter()
                .map(|text| match texts.iter().position(|t| *t == text) {
                    Some(index) => index,
                    None => {
                        texts.push(text);
                        texts.len() - 1
                    }
                })
                .collect();
            groups.push(Group { name, members });
        }
        if texts.is_empty() {
            return Err(
                "no target given: pass TARGET..., --group NAME=TARGET[,TARGET...] or \
                        set READYGATE_TARGETS"
                    .into(),
            );
        }
        args.common.targets = texts;
        Ok(ServePlan {
            plan: Plan::common(Mode::Serve, args.common, None, log, false, false, secrets)?,
            listen: args.listen,
            groups,
            fresh_for: args.fresh_for,
            quiet_body: args.quiet_body,
        })
    }

    /// The targets behind `/ready/NAME` or gRPC service `NAME`; `None` for an unknown name.
    pub fn members(&self, name: &str) -> Option<&[usize]> {
        let group = self.groups.iter().find(|g| g.name == name)?;
        Some(&group.members)
    }
}

/// `NAME=TARGET[,TARGET...]`: the name (letters, digits, `.`, `_`, `-`: a path segment and a
/// gRPC service name as they are) and the targets' texts, each once.
fn parse_group(given: &str) -> Result<(String, Vec<String>), String> {
    let shown = || crate::text::quoted(given);
    let Some((name, targets)) = given.split_once('=') else {
        return Err(format!(
            "--group {}: expected NAME=TARGET[,TARGET...]",
            shown()
        ));
    };
    let allowed = |c: char| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-');
    if name.is_empty() || !name.chars().all(allowed) {
        return Err(format!(
            "--group {}: the name must be letters, digits, '.', '_' or '-'",
            shown()
        ));
    }
    let mut members: Vec<String> = Vec::new();
    for target in crate::kind::command::split_list(targets) {
        if !members.iter().any(|m| m == target) {
            members.push(target.to_string());
        }
    }
    if members.is_empty() {
        return Err(format!("--group {name} names no target"));
    }
    Ok((name.to_string(), members))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn groups_parse_and_name_their_faults() {
        let (name, members) = parse_group("db=tcp://a:1, tcp://b:2,tcp://a:1").unwrap();
        assert_eq!(name, "db");
        assert_eq!(members, ["tcp://a:1", "tcp://b:2"]);
        for (given, fault) in [
            ("db", "expected NAME=TARGET"),
            ("=tcp://a:1", "the name must be"),
            ("a/b=tcp://a:1", "the name must be"),
            ("db=", "names no target"),
            ("db= , ", "names no target"),
        ] {
            let error = parse_group(given).unwrap_err();
            assert!(error.contains(fault), "{given}: {error}");
        }
    }
}
