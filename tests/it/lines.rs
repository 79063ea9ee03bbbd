//! Lines the contract promises are never lost without a word: a line too long for the output
//! queue is cut, not dropped; lines a late reader never got are counted in a last note (a JSON
//! line under `--log-format json`); a summary line names a few targets and counts the rest.

use std::io::{BufRead, Read, Write};
use std::process::{Child, Stdio};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering::SeqCst};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::support::held::Held;
use crate::support::http::{Answer, HttpServer};
use crate::support::pipe::full_pipe;
use crate::support::raw::Peer;
use crate::support::readygate;
use crate::support::run::RunExt;

/// `n` targets that fail at once, each a line of about 200 bytes when reported.
fn failing_targets(n: usize) -> Vec<String> {
    let closed = crate::support::closed_addr();
    (0..n)
        .map(|i| format!("http://{closed}/{i:04}/{}", "p".repeat(150)))
        .collect()
}

/// Waits for `child` to exit without reading its output (a reader later than its exit), then
/// reads what it left in its pipes.
fn read_after_exit(mut child: Child) -> (Option<i32>, String, String) {
    let status = child.wait().expect("wait for readygate");
    let (mut stdout, mut stderr) = (String::new(), String::new());
    child
        .stdout
        .take()
        .unwrap()
        .read_to_string(&mut stdout)
        .unwrap();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut stderr)
        .unwrap();
    (status.code(), stdout, stderr)
}

/// The count in `N lines not written: STREAM …`, if `text` holds that note.
fn lost_count(text: &str, stream: &str) -> Option<usize> {
    let note = format!(" lines not written: {stream} did not take them within 200ms of exit");
    let at = text.find(&note)?;
    let digits: String = text[..at]
        .chars()
        .rev()
        .take_while(char::is_ascii_digit)
        .collect();
    digits.chars().rev().collect::<String>().parse().ok()
}

/// The lines of `stdout`, each checked to be the next target's whole line (`TARGET: REASON`):
/// none cut, none twice, none skipped. The reason is not checked: under load an attempt may
/// time out (`no answer within 1.0s`) before its refusal is read.
fn whole_target_lines(stdout: &str, targets: &[String]) -> usize {
    assert!(
        stdout.is_empty() || stdout.ends_with('\n'),
        "the last line was cut: {:?}",
        stdout.lines().last()
    );
    for (at, line) in stdout.lines().enumerate() {
        let reason = targets
            .get(at)
            .and_then(|target| line.strip_prefix(target.as_str()))
            .and_then(|rest| rest.strip_prefix(": "));
        assert!(
            reason.is_some_and(|reason| !reason.is_empty()),
            "line {at} is not target {at}'s whole line: {line}"
        );
    }
    stdout.lines().count()
}

#[test]
fn lines_a_late_reader_never_got_are_counted_in_a_last_note() {
    for n in [400, 1500] {
        let targets = failing_targets(n);
        let mut probe = readygate(["probe", "-t", "10s"]);
        probe.args(&targets);
        let (child, _) = probe.spawn_captured();
        let (code, stdout, stderr) = read_after_exit(child);
        assert_eq!(code, Some(1), "{stderr}");
        let written = whole_target_lines(&stdout, &targets);
        let lost = lost_count(&stderr, "stdout").unwrap_or_else(|| panic!("no note: {stderr}"));
        assert_eq!(
            written + lost,
            n,
            "{written} written, {lost} said lost: {stderr}"
        );
        assert!(lost > 0 && written > 0, "{written} written, {lost} lost");
        assert!(!stderr.contains("not being read"), "{stderr}");
    }
}

#[test]
fn under_json_logs_the_last_note_is_a_json_line_too() {
    let n = 600;
    let mut wait = readygate(["wait", "--log-format", "json", "-t", "100ms"]);
    wait.args(failing_targets(n));
    let (child, _) = wait.spawn_captured();
    let (code, _, stderr) = read_after_exit(child);
    assert_eq!(code, Some(1));
    let lines: Vec<serde_json::Value> = stderr
        .lines()
        .map(|line| serde_json::from_str(line).unwrap_or_else(|e| panic!("{e}: {line:?}")))
        .collect();
    let messages: Vec<&str> = lines
        .iter()
        .map(|line| line["message"].as_str().unwrap())
        .collect();
    let failed = messages
        .iter()
        .filter(|m| m.contains("not ready after"))
        .count();
    let note = messages.last().unwrap();
    let lost = lost_count(note, "stderr").unwrap_or_else(|| panic!("no note: {note}"));
    assert_eq!(failed + lost, n, "{failed} written, {lost} said lost");
    assert!(lost > 0, "{failed} written");
    assert_eq!(lines.last().unwrap()["level"], "WARN");
    assert_eq!(lines.last().unwrap()["event"], "output");
}

#[test]
fn a_reader_in_time_or_a_regular_file_loses_nothing_and_gets_no_note() {
    let n = 1500;
    let mut probe = readygate(["probe", "-t", "10s"]);
    probe.args(failing_targets(n));
    let out = probe.outcome();
    out.expect_code(1);
    assert_eq!(out.stdout.lines().count(), n);
    assert!(!out.stderr.contains("lines"), "{}", out.stderr);
    let folder = crate::support::TempDir::new();
    let file = std::fs::File::create(folder.join("out")).unwrap();
    let mut probe = readygate(["probe", "-t", "10s"]);
    probe.args(failing_targets(n));
    let status = probe
        .stdout(file)
        .stderr(Stdio::piped())
        .output()
        .expect("run readygate");
    assert_eq!(status.status.code(), Some(1));
    let written = std::fs::read_to_string(folder.join("out")).unwrap();
    assert_eq!(written.lines().count(), n);
    assert!(
        status.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&status.stderr)
    );
}

#[test]
fn a_line_too_long_for_the_queue_is_cut_not_dropped() {
    // A path of 20 KiB in the target: its failure line on stdout is cut, saying how much; a
    // target of 100 KiB is refused in a usage error on stderr, cut the same way.
    let closed = crate::support::closed_addr();
    for (size, code) in [(20 << 10, 1), (100 << 10, 2)] {
        let target = format!("http://{closed}/{}", "q".repeat(size));
        let out = readygate(["probe", &target]).outcome();
        out.expect_code(code);
        let line = if code == 1 { &out.stdout } else { &out.stderr };
        assert!(
            line.contains(&format!("http://{closed}/qqqq")),
            "{}",
            &line[..80]
        );
        // Its start and its end are kept: what the line says of the target comes last.
        assert!(line.contains(" bytes cut) … qqq"), "{}", line.len());
        let end = if code == 1 {
            "qq: connection refused\n"
        } else {
            "\n"
        };
        assert!(line.ends_with(end), "{}", &line[line.len() - 80..]);
        assert_eq!(line.lines().count(), 1, "{}", line.len());
        assert!(line.len() <= 16 << 10, "{}", line.len());
    }
}

#[test]
fn a_summary_line_names_a_few_targets_and_counts_the_rest() {
    let targets = failing_targets(40);
    let mut wait = readygate(["wait", "-t", "100ms"]);
    wait.args(&targets);
    let out = wait.outcome();
    out.expect_code(1);
    let waiting = out
        .stderr
        .lines()
        .find(|line| line.contains("waiting up to"))
        .unwrap_or_else(|| panic!("{}", out.stderr));
    assert!(waiting.contains(&targets[4]), "{waiting}");
    assert!(!waiting.contains(&targets[5]), "{waiting}");
    assert!(waiting.contains(" and 35 more to be ready"), "{waiting}");
}

/// How long past the run's end the writer is held: well past exit's 200 ms wait for a stream
/// that is behind, well inside its 2 s for one that has room.
const HELD_PAST_EXIT: Duration = Duration::from_millis(700);

#[test]
fn exit_waits_for_a_writer_the_scheduler_has_not_run_while_its_stream_has_room() {
    // The stderr writer is held still from the first line on, as a loaded machine may leave
    // it, and let go 700 ms after the run has ended: its reader keeps up, so exit waits for it
    // (up to 2 s), and every line arrives. Were that wait 200 ms, the last lines would be
    // said lost.
    if crate::support::skip_under_qemu("ptrace is not emulated by qemu-user") {
        return;
    }
    let dir = crate::support::TempDir::new();
    let log = dir.join("termination-log");
    let closed = format!("tcp://{}", crate::support::closed_addr());
    let mut running = crate::support::Running::spawn(&mut readygate([
        "wait",
        "-v",
        "-t",
        "1s",
        "--termination-log",
        log.to_str().unwrap(),
        &closed,
    ]));
    running.line("waiting up to");
    let writers = Held::output_writers(running.pid());
    assert_eq!(writers.len(), 1, "one stream written to: {writers:?}");
    let held: Vec<Held> = writers.into_iter().map(Held::thread).collect();
    // The termination log is written after the last line is queued, just before exit.
    let ended = crate::support::wait_until("the termination log", || {
        std::fs::metadata(&log).is_ok_and(|file| file.len() > 0)
    });
    // The writer's delay itself, between the two bounds (not a wait for an event), counted
    // from the log's writing: a test slow to see it does not make the delay longer.
    let written = std::fs::metadata(&log).and_then(|file| file.modified());
    let release = written.expect("the log's time") + HELD_PAST_EXIT;
    if let Ok(left) = release.duration_since(std::time::SystemTime::now()) {
        std::thread::sleep(left);
    }
    drop(held);
    let released = std::time::Instant::now();
    let run = running.end();
    run.outcome.expect_code(1);
    // The run's last line (on a loaded machine the deadline may be said as 1.1s).
    let last = run.outcome.stderr.lines().last().unwrap_or_default();
    assert!(
        last.contains("not ready after 1.") && last.contains(&closed),
        "{}",
        run.outcome.stderr
    );
    assert!(
        !run.outcome.stderr.contains("not written"),
        "{}",
        run.outcome.stderr
    );
    assert!(
        run.at >= released,
        "exited {:?} after the run ended",
        run.at - ended
    );
}

/// Answers a request with 200 (the head read whole, however long), then waits for the client
/// to hang up and counts it: the client has its answer.
fn ready_until_hung_up(mut stream: std::net::TcpStream, hung_up: &AtomicUsize) {
    let (mut head, mut chunk) = (Vec::new(), [0u8; 16 * 1024]);
    while !head.windows(4).any(|end| end == b"\r\n\r\n") {
        match stream.read(&mut chunk) {
            Ok(read @ 1..) => head.extend_from_slice(&chunk[..read]),
            _ => return,
        }
    }
    let answer = b"HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n";
    if stream.write_all(answer).is_ok() {
        while matches!(stream.read(&mut chunk), Ok(1..)) {}
        hung_up.fetch_add(1, SeqCst);
    }
}

/// The lines counted in every `N lines dropped: …` note of `text`.
fn dropped_count(text: &str) -> usize {
    let note = " lines dropped: 1 MiB of lines was already waiting to be written to stderr";
    text.lines()
        .filter_map(|line| {
            let at = line.find(note)?;
            let digits: String = line[..at]
                .chars()
                .rev()
                .take_while(char::is_ascii_digit)
                .collect();
            digits
                .chars()
                .rev()
                .collect::<String>()
                .parse::<usize>()
                .ok()
        })
        .sum()
}

#[test]
fn lines_dropped_while_stderr_was_stuck_are_counted_once_it_moves() {
    // 90 targets ready at once, each a line of 15 KiB: 1.3 MiB of lines into a stderr that
    // takes nothing, past the 1 MiB queue. A gate target keeps the run going until the test
    // has read the note on what was dropped.
    let n = 90;
    let hung_up = Arc::new(AtomicUsize::new(0));
    let server = Peer::start_with({
        let hung_up = hung_up.clone();
        move |stream| ready_until_hung_up(stream, &hung_up)
    });
    let open = Arc::new(AtomicBool::new(false));
    let gate = HttpServer::start({
        let open = open.clone();
        move |_, _| Answer::status(if open.load(SeqCst) { 200 } else { 503 })
    });
    let targets: Vec<String> = (0..n)
        .map(|i| server.url("http", &format!("/{i:02}/{}", "r".repeat(15_000))))
        .collect();
    let (reader, writer) = full_pipe();
    let started = std::time::Instant::now();
    // Each attempt is given the time a loaded machine needs: one cut at the 1 s default would
    // hang up without its answer, and be counted here as an answer taken.
    let mut child = readygate(["wait", "-t", "60s", "--attempt-timeout", "30s"])
        .args(&targets)
        .arg(gate.url("/gate"))
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(writer)
        .spawn()
        .expect("spawn readygate");
    // readygate hangs up once it has an answer, and says the target ready then.
    crate::support::wait_until("every target's answer taken", || hung_up.load(SeqCst) >= n);
    // Two more attempts at the gate: the runtime has gone on past every answer since.
    let asked = gate.hits();
    crate::support::wait_until("two more attempts at the gate", || gate.hits() >= asked + 2);
    let text = Arc::new(Mutex::new(String::new()));
    let reading = std::thread::spawn({
        let text = text.clone();
        move || {
            let mut reader = std::io::BufReader::new(reader);
            let mut line = Vec::new();
            while matches!(reader.read_until(b'\n', &mut line), Ok(n) if n > 0) {
                text.lock()
                    .unwrap()
                    .push_str(&String::from_utf8_lossy(&line));
                line.clear();
            }
        }
    });
    crate::support::wait_until("the note on dropped lines", || {
        dropped_count(&text.lock().unwrap()) > 0
    });
    open.store(true, SeqCst);
    let status = child.wait().expect("wait for readygate");
    let run = started.elapsed();
    reading.join().expect("the reader");
    let text = text.lock().unwrap();
    assert_eq!(status.code(), Some(0), "{}", text.trim_start_matches('.'));
    let ready = text
        .lines()
        .filter(|line| line.contains("rrrr: ready after"))
        .count();
    let dropped = dropped_count(&text);
    let lost = lost_count(&text, "stderr").unwrap_or(0);
    // Every ready line is written or counted. A `still waiting` line (one per 5 s of the run at
    // most) that names a target not yet ready is as long as its URL: it too may be dropped, and
    // is counted with them.
    let said = ready + dropped + lost;
    let progress = usize::try_from(run.as_secs() / 5).unwrap();
    let progress_written = text
        .lines()
        .filter(|line| line.contains("still waiting after"))
        .count();
    assert!(
        said >= n && said - n <= progress.saturating_sub(progress_written),
        "{ready} ready lines written, {dropped} said dropped, {lost} said not written \
         ({progress_written} of at most {progress} 'still waiting' lines written in {run:?})"
    );
    assert!(ready > 0, "{ready} ready lines written");
}
