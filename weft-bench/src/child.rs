//! The child side: one measurement of one (case, scheduler, workers) in
//! this process, printed as one JSON record on stdout. Panics (a failed
//! check such as a Mandelbrot checksum mismatch) exit non-zero, and the
//! parent records the run as failed.

use crate::record::Status;
use crate::runner;
use crate::scenarios::{self, Fit};
use crate::scheds::SchedKind;
use clap::Args;
use std::process::ExitCode;

/// What the parent passes to `weft-bench child`.
#[derive(Args)]
pub struct ChildArgs {
    #[arg(long)]
    pub scenario: String,
    #[arg(long, default_value = "")]
    pub variant: String,
    #[arg(long, value_enum)]
    pub sched: SchedKind,
    #[arg(long)]
    pub workers: usize,
    #[arg(long)]
    pub size: u64,
    #[arg(long, default_value_t = 0)]
    pub rep: usize,
}

/// Runs the measurement the arguments name and prints its record.
pub fn run(args: ChildArgs) -> ExitCode {
    let Some(case) = scenarios::find(&args.scenario, &args.variant) else {
        eprintln!("unknown scenario {:?} {:?}", args.scenario, args.variant);
        return ExitCode::FAILURE;
    };
    let note = match case.fit(args.sched, args.workers) {
        Fit::Yes(note) => note,
        Fit::No(why) => {
            eprintln!("{} cannot run {}: {why}", args.sched.name(), case.name());
            return ExitCode::FAILURE;
        }
    };
    let m = (case.run)(args.sched, args.workers, args.size);
    let mut record = runner::empty_record(&case, args.sched, args.workers, args.rep, args.size);
    record.status = Status::Ok;
    record.note = note;
    record.figure = Some(m.figure);
    record.wall_ns = Some(m.wall.as_nanos() as u64);
    record.cpu_ns = Some(m.cpu.as_nanos() as u64);
    record.extra = m
        .extra
        .into_iter()
        .map(|(k, v)| (k.to_string(), v))
        .collect();
    println!(
        "{}",
        serde_json::to_string(&record).expect("record serialises")
    );
    ExitCode::SUCCESS
}
