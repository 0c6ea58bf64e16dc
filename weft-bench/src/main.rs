//! weft-bench: runs the same workloads on weft and on the schedulers people
//! would pick instead, each (scenario, scheduler, workers, repetition) in its
//! own child process, and reports wall time, CPU time and the ratio to weft.
//! This file owns the command line and the top-level flow.

mod chart;
mod child;
mod latch;
mod paired;
mod rayon_on_weft;
mod record;
mod report;
mod runner;
mod rusage;
mod scenarios;
mod scheds;
mod stats;
mod trace_cmd;
mod work;

use clap::{CommandFactory, FromArgMatches, Parser, Subcommand};
use record::{Meta, Record, Results, Status};
use scenarios::{Case, Mode};
use scheds::SchedKind;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::{Duration, Instant, SystemTime};

/// Side-by-side benchmark of weft against rayon, tokio, async-executor,
/// threadpool, chili and forte, with bare std threads as the machine's floor.
///
/// Default: the quick suite (every scenario at small sizes, 2 workers, 3
/// repetitions; `--workers 2,8` adds the column of more workers than cores
/// that docs/BENCHMARKS.md carries). Each run happens in its own child process; tables go to
/// stdout, the report (report.md, results.json, one SVG chart per scenario)
/// to --out.
#[derive(Parser)]
#[command(name = "weft-bench", version)]
struct Cli {
    #[command(subcommand)]
    child: Option<Sub>,

    /// All sizes, workers 1, 2, 4, ... 64 and this machine's count, 5 repetitions.
    #[arg(long, conflicts_with = "smoke")]
    full: bool,

    /// Every scenario once at a tiny size on every scheduler, 2 workers (for tests).
    #[arg(long)]
    smoke: bool,

    /// Run only this scenario: a family (marl), scenario (marl/fork-join) or
    /// case ("marl/fork-join sleep"). Repeatable.
    #[arg(long, value_name = "NAME")]
    only: Vec<String>,

    /// Peers to compare with (weft always runs). Default: all but
    /// rayon-on-weft, which runs only when named here (rayon's code on weft
    /// through rayon-core/, in a second build of this source that the run
    /// makes first: minutes the first time).
    #[arg(long, value_enum, value_delimiter = ',', value_name = "LIST")]
    peers: Option<Vec<SchedKind>>,

    /// Worker counts, e.g. 2,8,64.
    #[arg(long, value_delimiter = ',', value_name = "LIST")]
    workers: Option<Vec<usize>>,

    /// Repetitions of each run (default 3, 5 with --full, 1 with --smoke).
    #[arg(long)]
    reps: Option<usize>,

    /// Report directory.
    #[arg(long, default_value = "target/weft-report")]
    out: PathBuf,

    /// Print results.json to stdout instead of the tables.
    #[arg(long)]
    json: bool,

    /// Seconds before a child run is killed and recorded as failed (a
    /// deadlock); default 10, 5 with --smoke, 300 with --full.
    #[arg(long, value_name = "SECS")]
    timeout: Option<u64>,
}

#[derive(Subcommand)]
enum Sub {
    /// Internal: run one measurement and print its JSON record.
    #[command(hide = true)]
    Child(child::ChildArgs),
    /// Run marl's fork-and-join scenario (rounds of one 10 ms task per worker)
    /// on a traced weft pool; write trace.json (Perfetto UI, chrome://tracing)
    /// and timeline.svg.
    Trace(trace_cmd::TraceArgs),
    /// Compare a few columns on one case in interleaved children: every
    /// round runs one child of each column in turn, and each column's
    /// figure and CPU time are divided by the first column's of the same
    /// round (medians over the rounds). A column may be another build of
    /// weft-bench (`PATH:SCHEDULER`), to judge a change against the code
    /// before it.
    Paired(paired::PairedArgs),
}

/// The scenario list for --help, one line each, plus what stands in for
/// weft's primitives on each peer.
fn scenario_help() -> String {
    let mut s = String::from("Scenarios (ratios: ");
    s.push_str(report::RATIO_HELP);
    s.push_str("):\n");
    for c in scenarios::catalogue() {
        let [smoke, quick, full] = c.sizes;
        s.push_str(&format!(
            "  {:<24} {} [sizes {smoke}/{quick}/{full} smoke/quick/full]\n",
            c.name(),
            c.about
        ));
    }
    s.push_str(
        "\nEquivalents on peers: rayon and threadpool have no wait group, event or ticket \
         queue, so std Mutex+Condvar versions stand in, blocking the worker (weft's own waits suspend the task on its fiber and the worker runs other tasks); \
         tokio tasks await tokio::sync::Notify (events) and a oneshot chain (tickets), its \
         outside waiter uses the std wait group; event-chain, event-baton and ticket run as \
         plain blocking tasks on weft, rayon and threadpool, and as futures in their `async` \
         variant (weft's wait_async beside tokio's own code); \
         par/* runs the same loop source against weft::prelude and rayon::prelude, from the \
         main thread into each one's global pool, with sequential std::iter code as the floor; \
         rayon-on-weft (only when --peers names it) is the rayon row's very code, built a \
         second time with rayon-core patched to rayon-core/, rayon's API over weft; \
         chili and forte (heartbeat pools; forte's spawn keeps tasks on the caller's own \
         worker) run join/* and the idle test only; std (bare threads started up front, each \
         handed its tasks directly, no scheduler: the machine's floor) runs fork-join and \
         wake/* only; async-executor (smol's executor, one thread per worker) runs async/* only, \
         where weft, tokio and async-executor share futures-channel oneshots and each waits \
         with its own block_on. blocking/* sets weft::blocking against tokio's \
         task::block_in_place; rayon and threadpool, which have no stand-in, make the call \
         directly in the task (blocking/capacity only). Anything else is shown as n/a.",
    );
    s
}

fn about(scenario: &str) -> String {
    scenarios::catalogue()
        .iter()
        .filter(|c| c.scenario == scenario)
        .map(|c| format!("{}: {}.", c.name(), c.about))
        .collect::<Vec<_>>()
        .join(" ")
}

fn main() -> ExitCode {
    let matches = Cli::command().after_help(scenario_help()).get_matches();
    let cli = match Cli::from_arg_matches(&matches) {
        Ok(cli) => cli,
        Err(e) => e.exit(),
    };
    match cli.child {
        Some(Sub::Child(args)) => child::run(args),
        Some(Sub::Trace(args)) => trace_cmd::run(args),
        Some(Sub::Paired(args)) => paired::run(args),
        None => suite(cli),
    }
}

fn default_workers(mode: Mode) -> Vec<usize> {
    match mode {
        Mode::Smoke => vec![2],
        // One column keeps the README's main job under 3 minutes on 2
        // cores; scripts/update-benchmarks.sh asks for 2,8.
        Mode::Quick => vec![2],
        Mode::Full => {
            let mut w: Vec<usize> = (0..7).map(|i| 1 << i).collect();
            w.push(runner::cpus());
            w.sort_unstable();
            w.dedup();
            w
        }
    }
}

fn select_cases(only: &[String]) -> Result<Vec<Case>, String> {
    let all = scenarios::catalogue();
    if let Some(bad) = only.iter().find(|f| !all.iter().any(|c| c.matches(f))) {
        let names: Vec<String> = all.iter().map(Case::name).collect();
        return Err(format!(
            "unknown scenario {bad:?}; known: {}",
            names.join(", ")
        ));
    }
    Ok(all
        .into_iter()
        .filter(|c| only.is_empty() || only.iter().any(|f| c.matches(f)))
        .collect())
}

fn machine() -> String {
    let model = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split(':').nth(1))
                .map(|m| m.trim().to_string())
        })
        .unwrap_or_else(|| "unknown CPU".into());
    format!(
        "{} {}, {model}",
        std::env::consts::OS,
        std::env::consts::ARCH
    )
}

fn suite(cli: Cli) -> ExitCode {
    let mode = if cli.smoke {
        Mode::Smoke
    } else if cli.full {
        Mode::Full
    } else {
        Mode::Quick
    };
    let cases = match select_cases(&cli.only) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("{e}");
            return ExitCode::FAILURE;
        }
    };
    let mut scheds = vec![SchedKind::Weft];
    let peers = cli.peers.unwrap_or_else(SchedKind::defaults);
    scheds.extend(peers.into_iter().filter(|p| *p != SchedKind::Weft));
    scheds.dedup();
    let workers = cli.workers.unwrap_or_else(|| default_workers(mode));
    if workers.contains(&0) {
        eprintln!("--workers: every count must be at least 1");
        return ExitCode::FAILURE;
    }
    let reps = cli.reps.unwrap_or(match mode {
        Mode::Smoke => 1,
        Mode::Quick => 3,
        Mode::Full => 5,
    });
    let timeout = cli.timeout.unwrap_or(match mode {
        Mode::Smoke => 5,
        Mode::Quick => 10,
        Mode::Full => 300,
    });
    let apart_exe = if scheds.iter().any(|s| s.built_apart()) {
        match rayon_on_weft::build() {
            Ok(exe) => Some(exe),
            Err(e) => {
                eprintln!("rayon-on-weft: {e}");
                return ExitCode::FAILURE;
            }
        }
    } else {
        None
    };
    let plan = runner::Plan {
        mode,
        cases,
        scheds,
        apart_exe,
        workers,
        reps: reps.max(1),
        timeout: Duration::from_secs(timeout),
    };

    let started = Instant::now();
    let started_unix_s = SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let records: Vec<Record> = runner::run(&plan);
    let results = Results {
        meta: Meta {
            mode: mode.name().into(),
            command: std::env::args().collect::<Vec<_>>().join(" "),
            cpus: runner::cpus(),
            os: machine(),
            started_unix_s,
            wall_s: started.elapsed().as_secs_f64(),
        },
        records,
    };

    if cli.json {
        println!(
            "{}",
            serde_json::to_string_pretty(&results).expect("results serialise")
        );
    } else {
        println!("{}\n", report::RATIO_HELP);
        for table in report::tables(&results.records) {
            println!("{}", report::render_text(&table));
        }
    }
    if let Err(e) = report::write_dir(&cli.out, &results, &about) {
        eprintln!("cannot write the report to {}: {e}", cli.out.display());
        return ExitCode::FAILURE;
    }
    eprintln!(
        "report: {} ({:.0} s)",
        cli.out.display(),
        results.meta.wall_s
    );

    let mismatches = runner::checksum_mismatches(&results.records);
    for m in &mismatches {
        eprintln!("CHECKSUM MISMATCH between schedulers: {m}");
    }
    let failed = results
        .records
        .iter()
        .filter(|r| r.status == Status::Failed)
        .count();
    if failed > 0 {
        eprintln!("{failed} run(s) FAILED; see the tables and results.json");
    }
    if failed > 0 || !mismatches.is_empty() {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}
