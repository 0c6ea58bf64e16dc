//! The parent side: plans every (case, scheduler, workers, repetition),
//! records n/a pairs without running them, runs each job in a child process
//! of this same binary (so getrusage sees that run alone), and collects the
//! JSON record each child prints.

use crate::record::{Record, Status};
use crate::scenarios::{Case, Fit, Mode};
use crate::scheds::SchedKind;
use indicatif::{ProgressBar, ProgressStyle};
use std::collections::BTreeMap;
use std::io::Read;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

pub fn cpus() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

pub struct Plan {
    pub mode: Mode,
    pub cases: Vec<Case>,
    pub scheds: Vec<SchedKind>,
    /// The binary that runs the peers built apart (`crate::rayon_on_weft`),
    /// where the plan has one.
    pub apart_exe: Option<std::path::PathBuf>,
    pub workers: Vec<usize>,
    pub reps: usize,
    /// A child running longer than this is killed and recorded as failed
    /// (a deadlocked scheduler must not hang the suite).
    pub timeout: Duration,
}

struct Job<'a> {
    case: &'a Case,
    sched: SchedKind,
    workers: usize,
    rep: usize,
}

/// A record with no measurement: n/a or failed.
pub fn empty_record(
    case: &Case,
    sched: SchedKind,
    workers: usize,
    rep: usize,
    size: u64,
) -> Record {
    Record {
        scenario: case.scenario.into(),
        variant: case.variant.into(),
        sched: sched.name().into(),
        workers,
        rep,
        size,
        status: Status::NotApplicable,
        note: String::new(),
        unit: case.unit.into(),
        higher_is_better: case.higher_is_better,
        figure: None,
        wall_ns: None,
        cpu_ns: None,
        extra: BTreeMap::new(),
    }
}

/// Runs the whole plan; records come back in report order.
pub fn run(plan: &Plan) -> Vec<Record> {
    let mut records = Vec::new();
    let mut jobs = Vec::new();
    for case in &plan.cases {
        let size = case.size(plan.mode);
        for &workers in &plan.workers {
            for rep in 0..plan.reps {
                for &sched in &plan.scheds {
                    match case.fit(sched, workers) {
                        Fit::No(why) if rep == 0 => {
                            let mut r = empty_record(case, sched, workers, 0, size);
                            r.note = why;
                            records.push(r);
                        }
                        Fit::No(_) => {}
                        // Schedulers interleaved within a repetition, so a
                        // slow drift of the machine hits them all alike.
                        Fit::Yes(_) => jobs.push(Job {
                            case,
                            sched,
                            workers,
                            rep,
                        }),
                    }
                }
            }
        }
    }

    let bar = ProgressBar::new(jobs.len() as u64);
    bar.set_style(
        ProgressStyle::with_template("{elapsed_precise} [{bar:30}] {pos}/{len} {msg}")
            .expect("progress template")
            .progress_chars("=> "),
    );
    let exe = std::env::current_exe().expect("own executable path");
    // A run that failed (often a deadlock, costing a whole timeout) is not
    // repeated: one failed record per (case, scheduler, workers) says it.
    let mut failed_runs: Vec<(String, SchedKind, usize)> = Vec::new();
    for job in &jobs {
        let key = (job.case.name(), job.sched, job.workers);
        if failed_runs.contains(&key) {
            bar.inc(1);
            continue;
        }
        bar.set_message(format!(
            "{} / {} / {}w",
            job.case.name(),
            job.sched.name(),
            job.workers
        ));
        let child_exe = match (job.sched.built_apart(), &plan.apart_exe) {
            (true, Some(apart)) => apart,
            _ => &exe,
        };
        let size = job.case.size(plan.mode);
        let record = run_child(
            child_exe,
            job.case,
            job.sched,
            job.workers,
            size,
            job.rep,
            plan.timeout,
        );
        if record.status == Status::Failed {
            bar.println(format!(
                "FAILED {} {} {}w rep {}: {}",
                record.case_name(),
                record.sched,
                record.workers,
                record.rep,
                record.note
            ));
            failed_runs.push(key);
        }
        records.push(record);
        bar.inc(1);
    }
    bar.finish_and_clear();

    let case_pos = |r: &Record| {
        plan.cases
            .iter()
            .position(|c| c.scenario == r.scenario && c.variant == r.variant)
    };
    let sched_pos = |r: &Record| plan.scheds.iter().position(|s| s.name() == r.sched);
    records.sort_by_key(|r| (case_pos(r), r.workers, sched_pos(r), r.rep));
    records
}

/// Runs one measurement in a child process of `exe` (this binary, or
/// another build of weft-bench) and returns the record it printed, or a
/// failed record that says why there is none; a child running past
/// `timeout` is killed.
pub fn run_child(
    exe: &std::path::Path,
    case: &Case,
    sched: SchedKind,
    workers: usize,
    size: u64,
    rep: usize,
    timeout: Duration,
) -> Record {
    let failed = |why: String| {
        let mut r = empty_record(case, sched, workers, rep, size);
        r.status = Status::Failed;
        r.note = why;
        r
    };
    let spawned = Command::new(exe)
        .args(["child", "--scenario", case.scenario])
        .args(["--variant", case.variant, "--sched", sched.name()])
        .args([
            "--workers",
            &workers.to_string(),
            "--size",
            &size.to_string(),
        ])
        .args(["--rep", &rep.to_string()])
        // Keep the panic message at the end of stderr, not a backtrace.
        .env("RUST_BACKTRACE", "0")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn();
    let mut child = match spawned {
        Ok(c) => c,
        Err(e) => return failed(format!("cannot start child: {e}")),
    };
    // Drain both pipes on threads so a chatty child cannot block on a full pipe.
    let drain = |mut pipe: Box<dyn Read + Send>| {
        std::thread::spawn(move || {
            let mut s = String::new();
            let _ = pipe.read_to_string(&mut s);
            s
        })
    };
    let out = drain(Box::new(child.stdout.take().expect("piped stdout")));
    let err = drain(Box::new(child.stderr.take().expect("piped stderr")));
    let deadline = Instant::now() + timeout;
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break Some(status),
            Ok(None) if Instant::now() >= deadline => {
                let _ = child.kill();
                let _ = child.wait();
                break None;
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(2)),
            Err(e) => return failed(format!("waiting for child: {e}")),
        }
    };
    let stdout = out.join().unwrap_or_default();
    let stderr = err.join().unwrap_or_default();
    let tail = |s: &str| {
        let s = s.trim();
        let start = s.char_indices().rev().nth(400).map_or(0, |(i, _)| i);
        s[start..].replace('\n', " / ")
    };
    match status {
        None => failed(format!(
            "timed out after {} s (deadlock or far too slow)",
            timeout.as_secs()
        )),
        Some(s) if !s.success() => failed(format!("child exited with {s}: {}", tail(&stderr))),
        Some(_) => match stdout.lines().last().map(serde_json::from_str::<Record>) {
            Some(Ok(record)) => record,
            _ => failed(format!("no record in child output: {}", tail(&stdout))),
        },
    }
}

/// Every scheduler must paint the same Mandelbrot image: returns the
/// mismatches (case, size, the distinct checksums) for the caller to report.
pub fn checksum_mismatches(records: &[Record]) -> Vec<String> {
    let mut seen: BTreeMap<(String, u64), Vec<(String, u64)>> = BTreeMap::new();
    for r in records.iter().filter(|r| r.status == Status::Ok) {
        if let Some(sum) = r.extra.get("checksum") {
            seen.entry((r.scenario.clone(), r.size))
                .or_default()
                .push((r.sched.clone(), *sum as u64));
        }
    }
    seen.into_iter()
        .filter(|(_, sums)| sums.iter().any(|s| s.1 != sums[0].1))
        .map(|((scenario, size), sums)| format!("{scenario} size {size}: {sums:?}"))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenarios::find;

    fn painted(sched: SchedKind, checksum: f64) -> Record {
        let case = find("tpcpp/mandelbrot", "pixels").unwrap();
        let mut r = empty_record(&case, sched, 2, 0, 32);
        r.status = Status::Ok;
        r.extra.insert("checksum".into(), checksum);
        r
    }

    #[test]
    fn checksums_must_agree_across_schedulers() {
        let same = [
            painted(SchedKind::Weft, 7.0),
            painted(SchedKind::Rayon, 7.0),
        ];
        assert!(checksum_mismatches(&same).is_empty());
        let differ = [
            painted(SchedKind::Weft, 7.0),
            painted(SchedKind::Tokio, 8.0),
        ];
        assert_eq!(checksum_mismatches(&differ).len(), 1);
    }
}
