//! The child side: one measurement of one (case, scheduler, workers) in
//! this process, printed as one JSON record on stdout. Panics (a failed
//! check such as a Mandelbrot checksum mismatch) exit non-zero, and the
//! parent records the run as failed.

use crate::rayon_on_weft::rayon_is_on_weft;
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
    if let Err(why) = check_rayon_core(args.sched) {
        eprintln!("{why}");
        return ExitCode::FAILURE;
    }
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

/// The `rayon` and `rayon-on-weft` peers run the same adapter; only the
/// build tells them apart, so a record under the wrong name would compare
/// rayon with itself.
fn check_rayon_core(sched: SchedKind) -> Result<(), String> {
    let wanted = match sched {
        SchedKind::Rayon => false,
        SchedKind::RayonOnWeft => true,
        _ => return Ok(()),
    };
    match rayon_is_on_weft() {
        on_weft if on_weft == wanted => Ok(()),
        true => Err(
            "this binary's rayon runs on weft: the rayon peer needs weft-bench's own build".into(),
        ),
        false => Err(
            "this binary links the real rayon-core: rayon-on-weft runs in the build of \
             weft-bench/rayon-on-weft/Cargo.toml"
                .into(),
        ),
    }
}
