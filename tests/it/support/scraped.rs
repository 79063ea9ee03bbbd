//! A `/metrics` answer read as a Prometheus server reads it: parsed by `prometheus_client`'s
//! own parser (installed by `scripts/install-test-deps.sh` in the test venv), so a test checks
//! the format against a real reader, not against what readygate meant to write.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};

use super::served::GRPC_PYTHON;

/// One metric family: its name (without `_total` for a counter), type, help and samples.
#[derive(Debug, Clone)]
pub struct Family {
    pub name: String,
    pub kind: String,
    pub help: String,
    pub samples: Vec<Sample>,
}

/// One sample: its full name (`…_total`, `…_bucket`), labels and value.
#[derive(Debug, Clone)]
pub struct Sample {
    pub name: String,
    pub labels: BTreeMap<String, String>,
    pub value: f64,
}

/// Every family of one scrape, in the order written.
#[derive(Debug)]
pub struct Scrape {
    pub families: Vec<Family>,
}

impl Scrape {
    /// Parses `text` with prometheus_client; fails the test with the parser's complaint.
    #[track_caller]
    pub fn parse(text: &str) -> Scrape {
        let script =
            Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/it/support/metrics_parser.py");
        let mut child = Command::new(GRPC_PYTHON)
            .arg(script)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| {
                panic!("{GRPC_PYTHON}: {e}: run scripts/install-test-deps.sh (as root)")
            });
        let mut stdin = child.stdin.take().expect("the parser's stdin");
        stdin.write_all(text.as_bytes()).expect("feed the parser");
        drop(stdin);
        let output = child.wait_with_output().expect("run the parser");
        let stdout = String::from_utf8_lossy(&output.stdout);
        assert!(
            output.status.success(),
            "prometheus_client rejected the exposition: {}\n{text}",
            String::from_utf8_lossy(&output.stderr)
        );
        let families = stdout
            .lines()
            .map(|line| {
                let v: serde_json::Value = serde_json::from_str(line).expect("the parser's JSON");
                let samples = v["samples"].as_array().expect("samples");
                Family {
                    name: v["name"].as_str().unwrap_or_default().to_string(),
                    kind: v["type"].as_str().unwrap_or_default().to_string(),
                    help: v["help"].as_str().unwrap_or_default().to_string(),
                    samples: samples
                        .iter()
                        .map(|s| Sample {
                            name: s[0].as_str().unwrap_or_default().to_string(),
                            labels: serde_json::from_value(s[1].clone()).expect("labels"),
                            value: s[2].as_f64().expect("a number"),
                        })
                        .collect(),
                }
            })
            .collect();
        Scrape { families }
    }

    /// The family named `name` (a counter's without `_total`); fails the test when missing.
    #[track_caller]
    pub fn family(&self, name: &str) -> &Family {
        self.families
            .iter()
            .find(|f| f.name == name)
            .unwrap_or_else(|| panic!("no family {name} in {self:#?}"))
    }

    /// The value of the sample `name` with exactly `labels`, if there is one.
    pub fn value(&self, name: &str, labels: &[(&str, &str)]) -> Option<f64> {
        let wanted: BTreeMap<String, String> = labels
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        self.families
            .iter()
            .flat_map(|f| &f.samples)
            .find(|s| s.name == name && s.labels == wanted)
            .map(|s| s.value)
    }

    /// As [`Scrape::value`], failing the test when there is no such sample.
    #[track_caller]
    pub fn get(&self, name: &str, labels: &[(&str, &str)]) -> f64 {
        self.value(name, labels)
            .unwrap_or_else(|| panic!("no sample {name}{labels:?} in {self:#?}"))
    }
}
