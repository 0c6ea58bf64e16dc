//! What a case is (name, description, unit, sizes per mode, what it needs
//! of a scheduler, how it runs) and how its fit on a scheduler follows from
//! the capabilities the adapter declares. Each family module lists its own
//! cases.

use super::Measured;
use crate::scheds::{Cap, SchedKind, Support};

/// How big a run is: the smoke test, the default quick suite, or --full.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    Smoke,
    Quick,
    Full,
}

impl Mode {
    pub fn name(self) -> &'static str {
        match self {
            Mode::Smoke => "smoke",
            Mode::Quick => "quick",
            Mode::Full => "full",
        }
    }
}

/// Whether a scheduler can run a scenario, and with what.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Fit {
    /// Runs it; the note names the primitive it uses.
    Yes(String),
    /// Cannot express it; the note says why.
    No(String),
}

/// Copy, so that a family can write a case as another with a few fields
/// changed (`Case { variant: "boxed", ..empty }`).
#[derive(Clone, Copy)]
pub struct Case {
    pub scenario: &'static str,
    pub variant: &'static str,
    pub about: &'static str,
    pub unit: &'static str,
    pub higher_is_better: bool,
    /// Size in smoke, quick and full mode (meaning per scenario, see `about`).
    pub sizes: [u64; 3],
    pub needs: Needs,
    /// Runs the case on (scheduler, workers, size) in this child process;
    /// only called where [`Case::fit`] says yes.
    pub run: fn(SchedKind, usize, u64) -> Measured,
}

impl Case {
    pub fn size(&self, mode: Mode) -> u64 {
        match mode {
            Mode::Smoke => self.sizes[0],
            Mode::Quick => self.sizes[1],
            Mode::Full => self.sizes[2],
        }
    }

    pub fn name(&self) -> String {
        crate::record::case_name(self.scenario, self.variant)
    }

    /// `--only` accepts a family ("marl"), a scenario ("marl/fork-join") or
    /// a case ("marl/fork-join sleep").
    pub fn matches(&self, filter: &str) -> bool {
        let family = self.scenario.split('/').next().unwrap_or("");
        filter == family || filter == self.scenario || filter == self.name()
    }

    pub fn fit(&self, kind: SchedKind, workers: usize) -> Fit {
        self.needs.fit(kind, workers)
    }
}

/// What a case needs of a scheduler: one or more ways to run it, each a set
/// of capabilities, and a family's own word where capabilities alone do not
/// settle it.
#[derive(Clone, Copy)]
pub struct Needs {
    ways: &'static [&'static [Cap]],
    adjust: Option<fn(SchedKind, usize, Fit) -> Fit>,
}

impl Needs {
    /// Ways to run the case, in order of preference: a scheduler runs it
    /// the first way it has every capability of. Its note is that of the
    /// way's last capability, the one the case is about; where it has none,
    /// the n/a reason is the first capability of the first way it lacks.
    pub const fn ways(ways: &'static [&'static [Cap]]) -> Needs {
        Needs { ways, adjust: None }
    }

    /// The family's own word on the fit the capabilities give: its own
    /// note, or n/a where they are not enough.
    pub const fn adjusted(self, adjust: fn(SchedKind, usize, Fit) -> Fit) -> Needs {
        Needs {
            adjust: Some(adjust),
            ..self
        }
    }

    pub fn fit(&self, kind: SchedKind, workers: usize) -> Fit {
        let fit = self
            .ways
            .iter()
            .find_map(|way| {
                let notes: Option<Vec<&str>> = way.iter().map(|&cap| has(kind, cap)).collect();
                notes.and_then(|notes| notes.last().map(|note| Fit::Yes(note.to_string())))
            })
            .unwrap_or_else(|| {
                let first_lacking = self.ways[0]
                    .iter()
                    .find_map(|&cap| match kind.support(cap) {
                        Support::Lacks(why) => Some(why),
                        Support::Has(_) => None,
                    });
                Fit::No(first_lacking.unwrap_or_default().to_string())
            });
        match self.adjust {
            Some(adjust) => adjust(kind, workers, fit),
            None => fit,
        }
    }
}

/// The primitive `kind` provides `cap` with, if it does.
pub fn has(kind: SchedKind, cap: Cap) -> Option<&'static str> {
    match kind.support(cap) {
        Support::Has(note) => Some(note),
        Support::Lacks(_) => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenarios::catalogue;

    const WORKERS: [usize; 4] = [1, 2, 8, 64];

    #[test]
    fn every_fit_says_what_or_why() {
        for case in catalogue() {
            for &kind in SchedKind::ALL {
                for workers in WORKERS {
                    let (Fit::Yes(note) | Fit::No(note)) = case.fit(kind, workers);
                    assert!(
                        !note.is_empty(),
                        "{} on {}: no note",
                        case.name(),
                        kind.name()
                    );
                }
            }
        }
    }

    #[test]
    fn weft_runs_every_case_beside_at_least_one_peer() {
        for case in catalogue() {
            for workers in WORKERS {
                assert!(
                    matches!(case.fit(SchedKind::Weft, workers), Fit::Yes(_)),
                    "weft cannot run {} on {workers} workers",
                    case.name()
                );
            }
            let peers = SchedKind::ALL.iter().filter(|&&kind| {
                kind != SchedKind::Weft && matches!(case.fit(kind, 2), Fit::Yes(_))
            });
            assert!(peers.count() > 0, "{} has no peer", case.name());
        }
    }

    #[test]
    fn case_names_are_unique() {
        let mut names: Vec<String> = catalogue().iter().map(Case::name).collect();
        let all = names.len();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), all);
    }
}
