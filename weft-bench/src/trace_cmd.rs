//! `weft-bench trace`: runs marl issue 232's scenario (rounds of one 10 ms
//! task per worker, submitted to a pool that parked between rounds) on a
//! traced weft pool, and writes the trace as `trace.json` (Chrome trace event
//! format: Perfetto UI, chrome://tracing) and `timeline.svg` (one row per
//! worker). The benchmark itself never turns tracing on.

use clap::Args;
use std::collections::HashSet;
use std::fs::File;
use std::io::BufWriter;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Arguments of `weft-bench trace`.
#[derive(Args)]
pub struct TraceArgs {
    /// Worker threads (and tasks per round).
    #[arg(long, default_value_t = 8)]
    pub workers: usize,
    /// Rounds of one task per worker.
    #[arg(long, default_value_t = 8)]
    pub rounds: usize,
    /// Where trace.json and timeline.svg go.
    #[arg(long, default_value = "target/weft-trace")]
    pub out: PathBuf,
}

/// How long each task holds its worker.
const TASK: Duration = Duration::from_millis(10);
/// The pause before each round: long enough for every worker to park.
const GAP: Duration = Duration::from_millis(20);
/// Ring size per worker: far more than the scenario records.
const EVENTS_PER_WORKER: usize = 100_000;

pub fn run(args: TraceArgs) -> ExitCode {
    if args.workers == 0 {
        eprintln!("--workers must be at least 1");
        return ExitCode::FAILURE;
    }
    let pool = match weft::Pool::builder()
        .workers(args.workers)
        .trace(EVENTS_PER_WORKER)
        .build()
    {
        Ok(pool) => pool,
        Err(e) => {
            eprintln!("cannot build the pool: {e}");
            return ExitCode::FAILURE;
        }
    };
    println!("round  wall      workers used");
    for round in 0..args.rounds {
        std::thread::sleep(GAP);
        // Task names are `&'static str`: one short leak per round.
        let name: &'static str = Box::leak(format!("r{round}").into_boxed_str());
        let used = Arc::new(Mutex::new(HashSet::new()));
        let started = Instant::now();
        pool.scope(|s| {
            weft::name_current_task("scope");
            for _ in 0..args.workers {
                let used = Arc::clone(&used);
                s.spawn(move |_| {
                    weft::name_current_task(name);
                    used.lock().unwrap().insert(weft::current_worker_index());
                    std::thread::sleep(TASK);
                });
            }
        });
        let wall = started.elapsed();
        let used = used.lock().unwrap().len();
        println!("{round:>5}  {wall:>7.2?}  {used}/{}", args.workers);
    }
    // Let the last round's workers finish their bookkeeping and park.
    std::thread::sleep(Duration::from_millis(5));
    let trace = pool.trace();
    println!("\n{}", pool.stats());
    if let Err(e) = write(&args.out, &trace) {
        eprintln!("cannot write the trace to {}: {e}", args.out.display());
        return ExitCode::FAILURE;
    }
    eprintln!(
        "trace: {0}/trace.json (Perfetto UI, chrome://tracing), {0}/timeline.svg",
        args.out.display()
    );
    ExitCode::SUCCESS
}

fn write(dir: &Path, trace: &weft::Trace) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    trace.write_chrome_json(BufWriter::new(File::create(dir.join("trace.json"))?))?;
    trace.write_svg(BufWriter::new(File::create(dir.join("timeline.svg"))?))
}
