//! `weft-bench paired`: one case, a few columns, many rounds, each round
//! running one child of every column in turn; a column's figure is the
//! median over the rounds of its time (or other figure) over the first
//! column's in the same round. This VM-proof way of comparing is what the
//! docs call "interleaved" or "paired" children: the machine's drift moves
//! whole rounds, and a ratio taken within a round cancels most of it,
//! where medians of each column taken apart can move by a third between
//! minutes. A column may be another build of weft-bench (an older commit,
//! a scratch variant), which is how a change is judged against the code
//! before it.

use crate::rayon_on_weft;
use crate::record::{Record, Status};
use crate::runner::run_child;
use crate::scenarios::{self, Case, Fit, Mode};
use crate::scheds::SchedKind;
use crate::stats::Spread;
use clap::{Args, ValueEnum};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

/// What `weft-bench paired` takes.
#[derive(Args)]
pub struct PairedArgs {
    /// The scenario, as in the tables ("join/fib", "par/sum-squares").
    #[arg(long)]
    scenario: String,
    /// Its variant ("100k", "cache-resident"), if it has several.
    #[arg(long, default_value = "")]
    variant: String,
    #[arg(long, default_value_t = 2)]
    workers: usize,
    /// The case's size; the quick suite's when not given.
    #[arg(long)]
    size: Option<u64>,
    #[arg(long, default_value_t = 9)]
    rounds: usize,
    /// A column: a scheduler (`weft`, `rayon`, `chili`, `rayon-on-weft`...),
    /// or `PATH:SCHEDULER` to run that scheduler from another build of
    /// weft-bench at PATH. Repeat for each column; the first is the one the
    /// others are divided by.
    #[arg(long = "column", required = true, value_name = "[PATH:]SCHEDULER")]
    columns: Vec<String>,
    /// Seconds a child may run before it is killed and counted as failed.
    #[arg(long, default_value_t = 600)]
    timeout: u64,
}

/// One column: which binary runs which scheduler.
#[derive(Clone, Debug, PartialEq)]
struct Column {
    /// Another build of weft-bench; `None` is this binary (or, for a
    /// scheduler built apart, the second build made beside it).
    exe: Option<PathBuf>,
    sched: SchedKind,
}

impl Column {
    /// `SCHEDULER` or `PATH:SCHEDULER` (the path may itself hold colons:
    /// the scheduler is what follows the last one).
    fn parse(text: &str) -> Result<Column, String> {
        let (exe, sched) = match text.rsplit_once(':') {
            Some((path, sched)) if !path.is_empty() => (Some(PathBuf::from(path)), sched),
            _ => (None, text),
        };
        let sched = SchedKind::from_str(sched, true)
            .map_err(|_| format!("{sched:?} in column {text:?} is no scheduler"))?;
        Ok(Column { exe, sched })
    }

    fn label(&self) -> String {
        match &self.exe {
            Some(exe) => format!("{} ({})", self.sched.name(), exe.display()),
            None => self.sched.name().to_string(),
        }
    }
}

/// What one child gave: its figure and CPU time, or nothing if it failed.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Sample {
    figure: f64,
    cpu_ns: Option<u64>,
}

fn sample(record: &Record) -> Option<Sample> {
    match (record.status, record.figure) {
        (Status::Ok, Some(figure)) => Some(Sample {
            figure,
            cpu_ns: record.cpu_ns,
        }),
        _ => None,
    }
}

/// A column over the rounds: its own figures, and its figures and CPU
/// times over the first column's of the same round (rounds where either
/// child failed are left out of the ratios).
#[derive(Debug, PartialEq)]
struct Summary {
    figure: Option<Spread>,
    ratio: Option<Spread>,
    cpu_ratio: Option<Spread>,
    failed: usize,
}

/// `rounds[r][c]`: column `c`'s sample in round `r`.
fn summarize(rounds: &[Vec<Option<Sample>>], columns: usize) -> Vec<Summary> {
    (0..columns)
        .map(|c| {
            let own: Vec<f64> = rounds
                .iter()
                .filter_map(|r| r[c])
                .map(|s| s.figure)
                .collect();
            let pairs: Vec<(Sample, Sample)> =
                rounds.iter().filter_map(|r| Some((r[c]?, r[0]?))).collect();
            let ratios: Vec<f64> = pairs
                .iter()
                .map(|(s, first)| s.figure / first.figure)
                .collect();
            let cpu_ratios: Vec<f64> = pairs
                .iter()
                .filter_map(|(s, first)| Some(s.cpu_ns? as f64 / first.cpu_ns? as f64))
                .collect();
            Summary {
                figure: Spread::of(&own),
                ratio: Spread::of(&ratios),
                cpu_ratio: Spread::of(&cpu_ratios),
                failed: rounds.iter().filter(|r| r[c].is_none()).count(),
            }
        })
        .collect()
}

/// Runs the rounds and prints the table.
pub fn run(args: PairedArgs) -> ExitCode {
    match paired(&args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(why) => {
            eprintln!("paired: {why}");
            ExitCode::FAILURE
        }
    }
}

fn paired(args: &PairedArgs) -> Result<(), String> {
    let case = scenarios::find(&args.scenario, &args.variant)
        .ok_or_else(|| format!("no case {:?} {:?}", args.scenario, args.variant))?;
    let columns = args
        .columns
        .iter()
        .map(|c| Column::parse(c))
        .collect::<Result<Vec<_>, _>>()?;
    let exes = executables(&columns, &case, args.workers)?;
    let size = args.size.unwrap_or_else(|| case.size(Mode::Quick));
    let timeout = Duration::from_secs(args.timeout);
    let mut rounds = Vec::with_capacity(args.rounds);
    for round in 0..args.rounds {
        eprint!("round {}/{}\r", round + 1, args.rounds);
        let samples = columns
            .iter()
            .zip(&exes)
            .map(|(column, exe)| {
                let record =
                    run_child(exe, &case, column.sched, args.workers, size, round, timeout);
                if record.status != Status::Ok {
                    eprintln!(
                        "{} failed in round {}: {}",
                        column.label(),
                        round + 1,
                        record.note
                    );
                }
                sample(&record)
            })
            .collect();
        rounds.push(samples);
    }
    eprintln!();
    print_table(
        args,
        &case,
        size,
        &columns,
        &summarize(&rounds, columns.len()),
    );
    Ok(())
}

/// The binary each column runs, after checking that its scheduler can run
/// the case: this one, the one its `PATH:` names, or for a scheduler built
/// apart (rayon-on-weft) the second build, made now if it is out of date.
fn executables(columns: &[Column], case: &Case, workers: usize) -> Result<Vec<PathBuf>, String> {
    let own = std::env::current_exe().map_err(|e| format!("own executable path: {e}"))?;
    let mut apart = None;
    columns
        .iter()
        .map(|column| {
            if let Fit::No(why) = case.fit(column.sched, workers) {
                return Err(format!(
                    "{} cannot run {}: {why}",
                    column.sched.name(),
                    case.name()
                ));
            }
            match (&column.exe, column.sched.built_apart()) {
                (Some(exe), _) => Ok(exe.clone()),
                (None, false) => Ok(own.clone()),
                (None, true) => {
                    if apart.is_none() {
                        apart = Some(rayon_on_weft::build()?);
                    }
                    Ok(apart.clone().expect("built just above"))
                }
            }
        })
        .collect()
}

fn print_table(args: &PairedArgs, case: &Case, size: u64, columns: &[Column], rows: &[Summary]) {
    let first = columns[0].label();
    println!(
        "{} at {} worker{}, size {size}, {} rounds; ratio: each round's figure ({}, {}) over {first}'s in the same round, median [min-max] over the rounds; cpu: the same for CPU time",
        case.name(),
        args.workers,
        if args.workers == 1 { "" } else { "s" },
        args.rounds,
        case.unit,
        if case.higher_is_better {
            "higher is better"
        } else {
            "lower is better"
        },
    );
    println!();
    println!("| column | figure, median [min-max] | ratio | cpu ratio | failed |");
    println!("|---|---|---|---|---|");
    let spread = |s: &Option<Spread>| match s {
        Some(s) => format!("{:.3} [{:.3}-{:.3}]", s.median, s.min, s.max),
        None => "-".to_string(),
    };
    for (column, row) in columns.iter().zip(rows) {
        println!(
            "| {} | {} | {} | {} | {} |",
            column.label(),
            spread(&row.figure),
            spread(&row.ratio),
            spread(&row.cpu_ratio),
            row.failed
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_column_is_a_scheduler_or_a_path_and_a_scheduler() {
        assert_eq!(
            Column::parse("chili").unwrap(),
            Column {
                exe: None,
                sched: SchedKind::Chili
            }
        );
        assert_eq!(
            Column::parse("/tmp/old:build/weft-bench:rayon-on-weft").unwrap(),
            Column {
                exe: Some(PathBuf::from("/tmp/old:build/weft-bench")),
                sched: SchedKind::RayonOnWeft
            }
        );
        assert!(Column::parse("/tmp/weft-bench:nonesuch").is_err());
        assert!(Column::parse("nonesuch").is_err());
    }

    fn s(figure: f64, cpu_ns: u64) -> Option<Sample> {
        Some(Sample {
            figure,
            cpu_ns: Some(cpu_ns),
        })
    }

    #[test]
    fn ratios_are_taken_within_a_round_and_skip_failed_children() {
        // The machine doubles its times in round 2: the ratios do not move.
        let rounds = vec![
            vec![s(10.0, 100), s(12.0, 150)],
            vec![s(20.0, 200), s(24.0, 300)],
            vec![s(10.0, 100), None],
            vec![None, s(99.0, 990)],
        ];
        let summary = summarize(&rounds, 2);
        let ratio = summary[1].ratio.unwrap();
        assert_eq!((ratio.median, ratio.count), (1.2, 2));
        let cpu = summary[1].cpu_ratio.unwrap();
        assert_eq!((cpu.median, cpu.count), (1.5, 2));
        assert_eq!(summary[1].failed, 1);
        assert_eq!(summary[0].failed, 1);
        assert_eq!(summary[0].ratio.unwrap().median, 1.0);
        assert_eq!(summary[1].figure.unwrap().count, 3);
    }
}
