//! What the webhook counts, and its `/metrics` in the Prometheus text format: admissions by
//! verdict and how long each review took, and answers by HTTP status.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::Duration;

use crate::metrics::{Exposition, Histogram, Type};

/// The verdicts an admission is counted under, all shown from the start (`review.rs` names them).
const VERDICTS: [&str; 4] = ["mutated", "unchanged", "skipped", "refused"];

/// Everything counted since start.
#[derive(Default)]
pub struct Counts {
    /// Admissions answered, by verdict (in [`VERDICTS`]' order).
    admissions: [AtomicU64; VERDICTS.len()],
    /// How long each review on `/mutate` took, from its head to its answer.
    durations: Histogram,
    /// Answers by HTTP status: a handful, so a list.
    answers: Mutex<Vec<(u16, u64)>>,
}

impl Counts {
    /// Counts an admission answered with `verdict`.
    pub fn admitted(&self, verdict: &str) {
        if let Some(at) = VERDICTS.iter().position(|&known| known == verdict) {
            self.admissions[at].fetch_add(1, Ordering::Relaxed);
        }
    }

    /// Counts a review answered (whatever the answer) after `took`.
    pub fn reviewed(&self, took: Duration) {
        self.durations.observe(took);
    }

    /// Counts an answer with `status`.
    pub fn answered(&self, status: u16) {
        let Ok(mut answers) = self.answers.lock() else {
            return;
        };
        match answers.iter_mut().find(|(seen, _)| *seen == status) {
            Some((_, count)) => *count += 1,
            None => answers.push((status, 1)),
        }
    }

    /// The exposition of everything counted so far.
    pub fn render(&self) -> String {
        let mut out = Exposition::default();
        out.family(
            "readygate_admissions_total",
            Type::Counter,
            "Admission reviews answered, by verdict (mutated, unchanged, skipped, refused).",
        );
        for (verdict, count) in VERDICTS.iter().zip(&self.admissions) {
            let labels = [("verdict", *verdict)];
            out.sample(
                "readygate_admissions_total",
                &labels,
                count.load(Ordering::Relaxed),
            );
        }
        out.family(
            "readygate_admission_duration_seconds",
            Type::Histogram,
            "How long each review on /mutate took, from its request head to its answer.",
        );
        out.histogram("readygate_admission_duration_seconds", &[], &self.durations);
        out.family(
            "readygate_answers_total",
            Type::Counter,
            "HTTP answers given, by status code.",
        );
        let answers = self.answers.lock().map(|a| a.clone()).unwrap_or_default();
        for (status, count) in answers {
            let code = status.to_string();
            out.sample("readygate_answers_total", &[("code", &code)], count);
        }
        out.into_text()
    }
}
