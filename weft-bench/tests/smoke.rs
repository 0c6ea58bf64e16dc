//! Smoke test: runs the built binary with --smoke (every scenario once at a
//! tiny size on every scheduler) and checks results.json is complete: every
//! case x scheduler present, ok or explicitly n/a with a reason. A peer must
//! never fail (that would be a bench bug). A weft failure (e.g. a deadlock
//! caught by the child timeout) is the bench doing its job: it must be
//! recorded with a reason and make the run exit non-zero, and is printed here.

use serde_json::Value;
use std::collections::BTreeSet;
use std::process::Command;
use std::time::{Duration, Instant};

const SCHEDULERS: [&str; 8] = [
    "weft",
    "rayon",
    "tokio",
    "async-executor",
    "threadpool",
    "chili",
    "forte",
    "std",
];

#[test]
fn smoke_run_reports_every_scenario_on_every_scheduler() {
    let out = std::env::temp_dir().join(format!("weft-bench-smoke-{}", std::process::id()));
    let started = Instant::now();
    let run = Command::new(env!("CARGO_BIN_EXE_weft-bench"))
        .args(["--smoke", "--json", "--out"])
        .arg(&out)
        .output()
        .expect("run weft-bench");
    let took = started.elapsed();
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(took < Duration::from_secs(60), "smoke run took {took:?}");
    let printed: Value = serde_json::from_slice(&run.stdout)
        .unwrap_or_else(|e| panic!("--json printed no results ({e}):\n{stderr}"));
    let written: Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("results.json")).unwrap())
            .expect("results.json is JSON");
    assert_eq!(printed, written, "--json and results.json agree");
    assert!(out.join("report.md").exists());

    let records = written["records"].as_array().expect("records array");
    let mut cases = BTreeSet::new();
    let mut seen = BTreeSet::new();
    let mut failures = 0;
    for r in records {
        let case = format!(
            "{} {}",
            r["scenario"].as_str().unwrap(),
            r["variant"].as_str().unwrap()
        );
        let sched = r["sched"].as_str().unwrap().to_string();
        match r["status"].as_str().unwrap() {
            "ok" => assert!(
                r["figure"].as_f64().is_some(),
                "{case} {sched}: ok without figure"
            ),
            "n/a" => assert!(
                !r["note"].as_str().unwrap().is_empty(),
                "{case} {sched}: n/a without a reason"
            ),
            "failed" if sched == "weft" => {
                assert!(!r["note"].as_str().unwrap().is_empty());
                failures += 1;
                eprintln!("weft FAILED {case}: {}", r["note"]);
            }
            other => panic!("{case} {sched}: status {other}: {}", r["note"]),
        }
        cases.insert(case.clone());
        seen.insert((case, sched));
    }
    // Every scenario family of the issue is there, each once per scheduler.
    for scenario in [
        "marl/empty",
        "marl/some-work",
        "marl/fork-join",
        "marl/wait-group",
        "marl/event-chain",
        "marl/event-baton",
        "marl/ticket",
        "tpcpp/throughput",
        "tpcpp/mandelbrot",
        "tpcpp/idle",
        "go/trickle",
        "wake/latency",
        "wake/fan-out",
        "join/fib",
        "join/tree-sum",
        "join/long-halves",
        "join/quicksort",
        "async/chained-spawn",
        "async/ping-pong",
        "async/spawn-many",
        "async/yield-many",
        "async/fan-out",
        "blocking/empty-call",
        "blocking/capacity",
    ] {
        assert!(
            cases.iter().any(|c| c.starts_with(&format!("{scenario} "))),
            "{scenario} missing"
        );
    }
    for case in &cases {
        for sched in SCHEDULERS {
            assert!(
                seen.contains(&(case.clone(), sched.to_string())),
                "{case} on {sched} missing"
            );
        }
    }
    // weft can express every scenario: the n/a cells are all peers'.
    assert!(records
        .iter()
        .filter(|r| r["sched"] == "weft")
        .all(|r| r["status"] != "n/a"));
    assert_eq!(
        run.status.success(),
        failures == 0,
        "exit status must say whether any run failed:\n{stderr}"
    );
    let sums: BTreeSet<u64> = records
        .iter()
        .filter(|r| r["scenario"] == "tpcpp/mandelbrot")
        .filter_map(|r| r["extra"]["checksum"].as_f64())
        .map(|c| c as u64)
        .collect();
    assert_eq!(sums.len(), 1, "mandelbrot checksums differ: {sums:?}");
    let _ = std::fs::remove_dir_all(&out);
}

/// `paired` runs its columns in interleaved children and prints one row a
/// column, the first divided by itself.
#[test]
fn paired_prints_a_row_a_column_with_ratios_to_the_first() {
    let run = Command::new(env!("CARGO_BIN_EXE_weft-bench"))
        .args([
            "paired",
            "--scenario",
            "join/fib",
            "--size",
            "12",
            "--rounds",
            "2",
        ])
        .args(["--column", "weft", "--column", "rayon"])
        .output()
        .expect("run weft-bench paired");
    let stdout = String::from_utf8_lossy(&run.stdout);
    assert!(
        run.status.success(),
        "paired failed:\n{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let rows: Vec<&str> = stdout.lines().filter(|l| l.starts_with("| ")).collect();
    assert_eq!(rows.len(), 3, "a header and two columns:\n{stdout}");
    assert!(rows[1].starts_with("| weft | ") && rows[1].contains("| 1.000 [1.000-1.000] |"));
    assert!(rows[2].starts_with("| rayon | ") && rows[2].ends_with("| 0 |"));
    // A scheduler that cannot run the case is refused before any round.
    let refused = Command::new(env!("CARGO_BIN_EXE_weft-bench"))
        .args([
            "paired",
            "--scenario",
            "join/fib",
            "--column",
            "weft",
            "--column",
            "tokio",
        ])
        .output()
        .expect("run weft-bench paired");
    assert!(!refused.status.success());
}
