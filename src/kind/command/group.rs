//! The process group of a command that may be running, killed whole when its attempt stops
//! waiting for it, when its leader exits (what it left behind), and before readygate exits or
//! becomes COMMAND: no command of a check outlives the check or readygate.
//!
//! The group is killed only while its leader is not reaped yet: a zombie keeps its PID and its
//! group's ID from being reused, so the kill can never reach another process.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use rustix::process::{kill_process_group, Pid, Signal};

/// Every group an attempt may still be running, for [`end_all`]: process-wide, as the exit and
/// exec it serves are.
static LIVE: Mutex<Vec<Arc<Group>>> = Mutex::new(Vec::new());

/// Set by [`end_all`]: a command that starts from now on is killed at once.
static ENDING: AtomicBool = AtomicBool::new(false);

/// How long [`end_all`] waits for a command that is being started to appear, to kill it too.
const SPAWN_GRACE: Duration = Duration::from_millis(100);

/// One attempt's command: its leader's PID while it is not reaped.
#[derive(Debug, Default)]
pub struct Group {
    state: Mutex<State>,
    /// Told when a spawn under way is over, for [`end_all`] to kill what it started.
    spawned: Condvar,
}

#[derive(Debug, Default)]
struct State {
    /// The leader (its PID is the group's ID), until it exits and its group is killed.
    leader: Option<Pid>,
    /// The attempt stopped waiting: kill whatever starts.
    ended: bool,
    /// A spawn is under way: its PID is not known yet.
    spawning: bool,
}

impl Group {
    /// Before the spawn: whether the command may start (its attempt still waits for it).
    pub fn may_start(&self) -> bool {
        let mut state = self.state();
        state.spawning = !state.ended && !ENDING.load(Ordering::SeqCst);
        state.spawning
    }

    /// After the spawn: the leader, if it started, killed with its group at once when its
    /// attempt or readygate ended meanwhile.
    pub fn started(&self, leader: Option<Pid>) {
        let mut state = self.state();
        state.spawning = false;
        state.leader = leader;
        if state.ended || ENDING.load(Ordering::SeqCst) {
            kill(&state);
        }
        self.spawned.notify_all();
    }

    /// The leader exited (and is not reaped yet): what it left in its group is killed, and
    /// the group forgotten, before the caller reaps it.
    pub fn leader_exited(&self) {
        let mut state = self.state();
        kill(&state);
        state.leader = None;
    }

    /// The attempt stopped waiting, or readygate ends: kill the group if it runs.
    fn end(&self) {
        let mut state = self.state();
        state.ended = true;
        kill(&state);
    }

    fn state(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Waits until no spawn is under way, up to `until`.
    fn spawn_over(&self, until: Instant) {
        let left = until.saturating_duration_since(Instant::now());
        let state = self.state();
        let _ = self
            .spawned
            .wait_timeout_while(state, left, |state| state.spawning);
    }
}

fn kill(state: &State) {
    if let Some(leader) = state.leader {
        let _ = kill_process_group(leader, Signal::KILL);
    }
}

/// Held by an attempt while it waits for its command: dropping it (the attempt's end, by
/// timeout, deadline or signal) kills the group.
#[derive(Debug)]
pub struct Guard(Arc<Group>);

impl Guard {
    /// A new group, listed for [`end_all`], and its guard.
    pub fn new() -> (Guard, Arc<Group>) {
        let group = Arc::new(Group::default());
        live().push(group.clone());
        (Guard(group.clone()), group)
    }
}

impl Drop for Guard {
    fn drop(&mut self) {
        self.0.end();
        live().retain(|group| !Arc::ptr_eq(group, &self.0));
    }
}

fn live() -> MutexGuard<'static, Vec<Arc<Group>>> {
    LIVE.lock().unwrap_or_else(|e| e.into_inner())
}

/// Kills every command still running, before readygate exits or becomes COMMAND (an attempt
/// cut by the end of the run may not have been dropped yet); one being started is waited for,
/// briefly, to be killed as it appears.
pub fn end_all() {
    ENDING.store(true, Ordering::SeqCst);
    let groups: Vec<Arc<Group>> = live().clone();
    groups.iter().for_each(|group| group.end());
    let until = Instant::now() + SPAWN_GRACE;
    groups.iter().for_each(|group| group.spawn_over(until));
}
