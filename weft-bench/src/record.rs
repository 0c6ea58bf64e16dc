//! The result record: one per (scenario, variant, scheduler, workers,
//! repetition). A child prints one as JSON; results.json holds them all.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Status {
    #[serde(rename = "ok")]
    Ok,
    /// The scheduler cannot express the scenario; `note` says why.
    #[serde(rename = "n/a")]
    NotApplicable,
    /// The child crashed, timed out or failed a check; `note` has the reason.
    #[serde(rename = "failed")]
    Failed,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Record {
    pub scenario: String,
    /// Sub-case of the scenario ("k=16", "sleep"); empty when there is one.
    pub variant: String,
    pub sched: String,
    pub workers: usize,
    pub rep: usize,
    /// Scenario-specific size (tasks, rounds, image side, ms...).
    pub size: u64,
    pub status: Status,
    /// n/a reason, failure message, or the primitive used as the equivalent.
    pub note: String,
    /// Unit of `figure`, e.g. "ns/task".
    pub unit: String,
    pub higher_is_better: bool,
    /// The scenario's headline figure.
    pub figure: Option<f64>,
    /// Wall time of the timed section.
    pub wall_ns: Option<u64>,
    /// Process CPU time (getrusage) of the timed section.
    pub cpu_ns: Option<u64>,
    /// Every other raw figure the scenario measured.
    pub extra: BTreeMap<String, f64>,
}

impl Record {
    /// "scenario" or "scenario variant": the name a table or chart shows.
    pub fn case_name(&self) -> String {
        case_name(&self.scenario, &self.variant)
    }
}

pub fn case_name(scenario: &str, variant: &str) -> String {
    if variant.is_empty() {
        scenario.to_string()
    } else {
        format!("{scenario} {variant}")
    }
}

/// Everything results.json holds: how the run was made, then the records.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Results {
    pub meta: Meta,
    pub records: Vec<Record>,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Meta {
    pub mode: String,
    pub command: String,
    pub cpus: usize,
    pub os: String,
    pub started_unix_s: u64,
    pub wall_s: f64,
}
