//! Targets checked on demand: a request makes at most one attempt per target within the
//! freshness window, and concurrent requests share the attempt in flight (single flight). The
//! attempt runs on a task of its own, so a client that hangs up does not cut it short, and
//! nothing is attempted while nobody asks.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::{watch, Semaphore};
use tokio::time::Instant;

use super::metrics::Tally;
use crate::engine;
use crate::kind::Check;

/// Most attempts in flight at once, over all targets; the others wait for a turn.
const IN_FLIGHT: usize = 64;

/// A target's state: ready, or why not (one line, as the logs would say it).
pub type Outcome = Result<(), String>;

/// Every target of the run, each with its last result and its attempt in flight.
pub struct Targets {
    cells: Vec<Arc<Cell>>,
    /// How long a result answers requests, from its attempt's start.
    fresh_for: Duration,
    /// Bound on one attempt.
    bound: Duration,
    /// `--invert`: a target is ready when its attempt fails.
    invert: bool,
    /// Turns for attempts in flight.
    turns: Arc<Semaphore>,
}

/// One target.
struct Cell {
    check: Check,
    /// Its name as shown (secrets hidden).
    name: String,
    state: Mutex<Latest>,
    /// Its attempts counted, for `/metrics`.
    tally: Tally,
}

/// A target's latest attempts: the last that finished, and the one in flight.
#[derive(Default)]
struct Latest {
    /// When the last finished attempt started, and how it ended.
    last: Option<(Instant, Outcome)>,
    /// The attempt in flight: its outcome arrives here.
    flight: Option<watch::Receiver<Option<Outcome>>>,
}

/// A target's outcome, known or on its way.
pub enum Pending {
    Known(Outcome),
    Coming(watch::Receiver<Option<Outcome>>),
}

impl Pending {
    /// The outcome, once the attempt it waits for has ended.
    pub async fn outcome(self) -> Outcome {
        match self {
            Pending::Known(outcome) => outcome,
            Pending::Coming(mut receiver) => match receiver.wait_for(Option::is_some).await {
                Ok(outcome) => outcome.clone().unwrap_or(Ok(())),
                Err(_) => Err("internal error: the attempt ended without a result".into()),
            },
        }
    }
}

impl Targets {
    /// The targets of `checks` (named by `names`), each attempt bounded by `bound`.
    pub fn new(
        checks: Vec<Check>,
        names: Vec<String>,
        fresh_for: Duration,
        bound: Duration,
        invert: bool,
    ) -> Targets {
        let cells = checks
            .into_iter()
            .zip(names)
            .map(|(check, name)| {
                let (state, tally) = (Mutex::default(), Tally::default());
                Arc::new(Cell {
                    check,
                    name,
                    state,
                    tally,
                })
            })
            .collect();
        Targets {
            cells,
            fresh_for,
            bound,
            invert,
            turns: Arc::new(Semaphore::new(IN_FLIGHT)),
        }
    }

    /// How many targets there are.
    pub fn len(&self) -> usize {
        self.cells.len()
    }

    /// The name of target `index`.
    pub fn name(&self, index: usize) -> &str {
        &self.cells[index].name
    }

    /// Whether target `index`'s last finished attempt found it ready; `None` before its first.
    pub fn last(&self, index: usize) -> Option<bool> {
        let state = self.cells[index].state.lock().ok()?;
        state.last.as_ref().map(|(_, outcome)| outcome.is_ok())
    }

    /// Target `index`'s attempts counted.
    pub fn tally(&self, index: usize) -> &Tally {
        &self.cells[index].tally
    }

    /// Target `index`'s outcome: the last one while fresh, else that of the attempt in flight,
    /// else of a new attempt started now. Never waits itself.
    pub fn ask(&self, index: usize) -> Pending {
        let cell = &self.cells[index];
        let mut state = cell.state.lock().expect("target state");
        if let Some((started, outcome)) = &state.last {
            if started.elapsed() < self.fresh_for {
                return Pending::Known(outcome.clone());
            }
        }
        if let Some(flight) = &state.flight {
            return Pending::Coming(flight.clone());
        }
        let (sender, receiver) = watch::channel(None);
        state.flight = Some(receiver.clone());
        let (cell, turns) = (cell.clone(), self.turns.clone());
        let (bound, invert) = (self.bound, self.invert);
        tokio::spawn(async move {
            let started = Instant::now();
            let outcome = match turns.acquire_owned().await {
                Ok(_turn) => {
                    // Timed from its turn: a wait for one is the server's, not the target's.
                    let began = Instant::now();
                    let outcome = engine::once(&cell.check, bound, invert).await;
                    cell.tally.attempted(outcome.is_ok(), began.elapsed());
                    outcome.map_err(|missed| crate::text::one_line(&missed.to_string()))
                }
                Err(_) => Err("internal error: no turn for an attempt".into()),
            };
            let mut state = cell.state.lock().expect("target state");
            let before = state.last.as_ref().map(|(_, last)| last.is_ok());
            match (&outcome, before) {
                (Ok(()), Some(true)) | (Err(_), Some(false)) => {}
                (Ok(()), _) => {
                    tracing::info!(event = "ready", target = cell.name, "{}: ready", cell.name)
                }
                (Err(reason), _) => tracing::info!(
                    event = "not_ready",
                    target = cell.name,
                    reason,
                    "{}: not ready: {reason}",
                    cell.name
                ),
            }
            state.last = Some((started, outcome.clone()));
            state.flight = None;
            drop(state);
            let _ = sender.send(Some(outcome));
        });
        Pending::Coming(receiver)
    }

    /// The outcome of each of `members`, in order, their attempts made together.
    pub async fn outcomes(&self, members: &[usize]) -> Vec<Outcome> {
        let pending: Vec<Pending> = members.iter().map(|&index| self.ask(index)).collect();
        let mut outcomes = Vec::with_capacity(pending.len());
        for pending in pending {
            outcomes.push(pending.outcome().await);
        }
        outcomes
    }
}
