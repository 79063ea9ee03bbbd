//! `doctor`'s report: a short table for people, or one JSON object for scripts (its fields are
//! the contract in docs/cli.md).

use serde_json::json;

use super::findings::{Admission, Gate, Node, Server};
use super::verdict::Verdict;
use crate::cli::DoctorOutput;
use crate::output::stdout;

/// One JSON object: `api_server`, `nodes`, `admission`, and the verdict's fields.
pub fn json(
    server: &Server,
    nodes: &Result<Vec<Node>, String>,
    admission: &Admission,
    verdict: &Verdict,
) {
    let mut report = json!({
        "api_server": server,
        "nodes": nodes.as_ref().ok(),
        "admission": admission,
        "status": super::verdict::status(verdict),
    });
    if let (Ok(verdict), Some(report)) = (serde_json::to_value(verdict), report.as_object_mut()) {
        if let Some(fields) = verdict.as_object() {
            report.extend(fields.clone());
        }
    }
    stdout(&report.to_string());
}

/// The report when the API server could not be asked at all.
pub fn unreachable(why: &str, output: DoctorOutput) {
    match output {
        DoctorOutput::Json => {
            let report = json!({"verdict": "incomplete", "status": 3,
                "fix": "reach the API server, then run doctor again",
                "problems": [], "failed": [format!("API server: {why}")]});
            stdout(&report.to_string());
        }
        DoctorOutput::Table => stdout(&format!("API server: {why}")),
    }
}

/// `on`, `off` or `?`.
fn word(gate: &Gate) -> &'static str {
    match gate.sidecars {
        Some(true) => "on",
        Some(false) => "off",
        None => "?",
    }
}

/// The table: the API server, one row per node, admission, the verdict and its fix.
pub fn table(
    server: &Server,
    nodes: &Result<Vec<Node>, String>,
    admission: &Admission,
    verdict: &Verdict,
    label: Option<&str>,
) {
    let version = if server.version.is_empty() {
        "?"
    } else {
        &server.version
    };
    stdout(&format!(
        "API server  {version}  built-in sidecars {} (by {})",
        word(&server.gate),
        server.gate.judged_by
    ));
    let mut notes = Vec::new();
    if let Some(note) = &server.gate.note {
        notes.push(format!("API server: {note}"));
    }
    match nodes {
        Err(why) => stdout(&format!("Nodes       {why}")),
        Ok(nodes) => {
            let mut rows = vec![[
                "NODE".to_string(),
                "KUBELET".into(),
                "SKEW".into(),
                "SIDECARS".into(),
                "BY".into(),
                label.map(str::to_uppercase).unwrap_or_default(),
            ]];
            for node in nodes {
                rows.push([
                    node.name.clone(),
                    node.kubelet.clone(),
                    node.skew
                        .map(|s| s.to_string())
                        .unwrap_or_else(|| "?".into()),
                    word(&node.gate).into(),
                    node.gate.judged_by.into(),
                    node.label.clone().unwrap_or_else(|| {
                        if label.is_some() {
                            "-".into()
                        } else {
                            String::new()
                        }
                    }),
                ]);
                if let Some(note) = &node.gate.note {
                    notes.push(format!("{}: {note}", node.name));
                }
            }
            let widths: Vec<usize> = (0..6)
                .map(|i| rows.iter().map(|r| r[i].chars().count()).max().unwrap_or(0))
                .collect();
            for row in rows {
                let cells: Vec<String> = row
                    .iter()
                    .zip(&widths)
                    .map(|(cell, width)| format!("{cell:<width$}"))
                    .collect();
                stdout(cells.join("  ").trim_end());
            }
        }
    }
    let ns = &admission.namespace;
    let admitted = match admission.restart_policy_survived {
        Some(true) => format!("restartPolicy: Always survived a dry-run pod CREATE in {ns}"),
        Some(false) => {
            format!("restartPolicy: Always did NOT survive a dry-run pod CREATE in {ns}")
        }
        None => format!("the dry-run pod CREATE in {ns} could not tell"),
    };
    stdout(&format!("Admission   {admitted}"));
    if let Some(note) = &admission.note {
        notes.push(format!("admission: {note}"));
    }
    for suspect in &admission.suspects {
        notes.push(format!(
            "suspect: mutating webhook {} (in {})",
            suspect.webhook, suspect.configuration
        ));
    }
    for note in notes {
        stdout(&format!("  {note}"));
    }
    for problem in &verdict.problems {
        stdout(&format!("Problem     {problem}"));
    }
    for failed in &verdict.failed {
        stdout(&format!("Failed      {failed}"));
    }
    stdout(&format!("Verdict     {}", verdict.verdict));
    stdout(&format!("Fix         {}", verdict.fix));
}
