//! Helpers the test files share: waiting for a condition with a deadline, and
//! running one case of a test binary in a child process of its own.
//!
//! Each test file is a crate of its own that includes this module with
//! `mod common;` and uses only part of it.
#![allow(dead_code)]

use std::io::Read;
use std::process::{Command, Stdio};
use std::thread;
use std::time::{Duration, Instant};

/// How many times [`eventually`] yields between polls before it sleeps.
const YIELDS: u32 = 1_000;

/// How long [`eventually`] sleeps between polls after its first [`YIELDS`].
const POLL: Duration = Duration::from_micros(200);

/// Polls `condition`, without helping any pool, until it holds or `limit`
/// passes; returns whether it holds (looked at once more at the deadline).
/// Yields between the first polls, so a wait that ends at once ends quickly,
/// then sleeps briefly, so that with more threads than cores the thread it
/// waits for gets to run.
pub fn eventually(limit: Duration, mut condition: impl FnMut() -> bool) -> bool {
    let deadline = Instant::now() + limit;
    let mut rounds = 0u32;
    while !condition() {
        if Instant::now() > deadline {
            return condition();
        }
        if rounds < YIELDS {
            thread::yield_now();
        } else {
            thread::sleep(POLL);
        }
        rounds += 1;
    }
    true
}

/// [`eventually`], failing the test with `what` if `condition` does not hold
/// within `limit`.
pub fn assert_eventually(limit: Duration, what: &str, condition: impl FnMut() -> bool) {
    assert!(
        eventually(limit, condition),
        "never happened within {limit:?}: {what}"
    );
}

/// Runs this test binary again as a child process that runs only its
/// `child_entry` test, with `case` in the environment variable `env` (the
/// child side reads it and runs that case), and fails unless the child exits
/// successfully within `limit`. A child past `limit` is killed. A failure
/// shows the tail of the child's stderr and stdout, which are read as the
/// child writes so that a chatty child never blocks.
pub fn run_child_case(env: &str, case: &str, limit: Duration) {
    let ended = child_case(env, case, limit);
    assert!(
        ended.status.success(),
        "case {case} ended with {} after {:?}\n{}",
        ended.status,
        ended.took,
        ended.report()
    );
}

/// How a child process of [`child_case`] ended.
pub struct ChildEnd {
    /// Its exit status.
    pub status: std::process::ExitStatus,
    /// What it wrote to standard error.
    pub stderr: String,
    /// What it wrote to standard output.
    pub stdout: String,
    /// How long it ran.
    pub took: Duration,
}

impl ChildEnd {
    /// The tails of the child's stderr and stdout, for a failure's message.
    pub fn report(&self) -> String {
        format!(
            "--- child stderr (tail) ---\n{}\n--- child stdout (tail) ---\n{}",
            tail(self.stderr.as_bytes(), 4000),
            tail(self.stdout.as_bytes(), 1500)
        )
    }
}

/// As [`run_child_case`], but returns how the child ended, whatever that
/// was, for a case that is meant to die; fails only if it hangs past
/// `limit` (it is killed then).
pub fn child_case(env: &str, case: &str, limit: Duration) -> ChildEnd {
    let exe = std::env::current_exe().expect("test binary path");
    let mut child = Command::new(exe)
        .args(["--exact", "child_entry", "--nocapture", "--test-threads=1"])
        .env(env, case)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start child");
    let out_reader = drain(child.stdout.take().expect("child stdout"));
    let err_reader = drain(child.stderr.take().expect("child stderr"));
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().expect("child status") {
            break Some(status);
        }
        if started.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        thread::sleep(Duration::from_millis(10));
    };
    let ended = |status| ChildEnd {
        status,
        stderr: String::from_utf8_lossy(&err_reader.join().unwrap_or_default()).into_owned(),
        stdout: String::from_utf8_lossy(&out_reader.join().unwrap_or_default()).into_owned(),
        took: started.elapsed(),
    };
    match status {
        Some(status) => ended(status),
        None => {
            let killed = ended(std::process::ExitStatus::default());
            panic!(
                "case {case} hung (killed after {limit:?})\n{}",
                killed.report()
            )
        }
    }
}

/// Reads `pipe` to its end on a thread of its own.
fn drain(mut pipe: impl Read + Send + 'static) -> thread::JoinHandle<Vec<u8>> {
    thread::spawn(move || {
        let mut bytes = Vec::new();
        let _ = pipe.read_to_end(&mut bytes);
        bytes
    })
}

/// The last `max` characters of `bytes`, read as UTF-8.
fn tail(bytes: &[u8], max: usize) -> String {
    let text = String::from_utf8_lossy(bytes);
    let chars: Vec<char> = text.chars().collect();
    let start = chars.len().saturating_sub(max);
    chars[start..].iter().collect()
}
