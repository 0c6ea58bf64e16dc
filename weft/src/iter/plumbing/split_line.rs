//! The split line: how long a loop's rest must be, at the rate its chunks
//! show, for the loop to split it rather than fold it alone; learned by
//! each thread from what its own splits near the line bought.
//!
//! A split pays when the other worker's half, started late by the steal
//! and run on a cold cache, still ends before the owner would have folded
//! it: the line is what a steal costs, which is the machine's, not the
//! loop's. The floor is twice [`ALONE_FOR`] (4 us), where a steal paid on
//! the AMD VMs this project measured first. On session 47's Intel VM it
//! did not: loops of 3,000 items (4.7 us) split in a pool of 2 took 1.03x
//! the sequential loop's time and twice its CPU, and in a pool of 8 on 2
//! cores 1.5x its time; a split paid there from between 5 and 9 us a loop
//! at 2 workers, past 9 us at 8 (docs/PARALLEL.md, "Session 47").
//!
//! So a loop that splits near the line is judged when it ends: the time
//! its split part took (`actual`) against the time its rate, as the split
//! was decided, put on that part alone (`predicted`). The loops judged are
//! those whose split and time are their own (mod.rs, `Drive::alone_first`;
//! outside.rs for a caller's handover): not a `flat_map`'s inner loop,
//! whose owner runs other outer items while it waits for a stolen piece;
//! not one whose rest is too short for its minimum length to split; not
//! one that a search ended early, whose time says nothing of a split.
//!
//! - Under [`PAID`] of the prediction, the split paid: the line comes
//!   down to two thirds of that rest if that is lower (never up, never
//!   below the floor), so that loops as long split whatever the jitter of
//!   their rate.
//! - At [`NO_GAIN`] of it or more, it bought nothing. After [`FAILS_TO_RAISE`]
//!   such loops in a row the line goes up to half as much again as the
//!   last one's rest, if that is higher (never above [`CAP`]): one loop
//!   slowed by an interrupt does not move it, a machine on which such
//!   splits never pay does.
//! - Between the two, it leaves the line, and ends a run of failures.
//!
//! A loop whose owner, waiting for a stolen piece, runs other tasks (its
//! wait suspends, or helps) counts that time in `actual`: a pool busy with
//! other tasks can raise its workers' lines. The cap bounds what that
//! holds back, and explorations (below) bring the line down again.
//!
//! Only a loop whose rest was under [`NEAR`] times the line is judged: a
//! long loop's split says nothing about a short one's. A loop held back by
//! a raised line is never judged, so one loop in a period on a thread
//! decides by the floor instead ([`line_for_next_loop`]): where the
//! machine's steals turn cheap again, such a loop pays and brings the line
//! down. An exploration that does not pay costs one loop's split (a wake
//! and a wait for a stolen half: in a pool of 8 on 2 cores, tens of
//! microseconds), so the period starts at [`EXPLORE_FIRST`] loops, doubles
//! with each run of failures that reaches [`FAILS_TO_RAISE`] (whether or
//! not the line could still go up), up to [`EXPLORE_AT_MOST`], and starts
//! again when a split pays.
//!
//! The line decides a loop's alone phase only; a piece's split on demand,
//! between its chunks while workers search with nothing to take
//! (`rest_worth_splitting`), keeps the floor, so a long uneven loop
//! rebalances as before.
//!
//! Per thread, with no sharing: a worker's loops are judged by that
//! worker's steals, a caller outside the pool by its handovers' (a worker
//! inside `weft::blocking` calls loops as such a caller); a thread keeps
//! its line for its life. The line is a hint to a rule of speed, never of
//! correctness: any value gives the same items folded once each.

use std::cell::Cell;

use super::{Nanos, ALONE_FOR};

/// The lowest line: twice [`ALONE_FOR`], where a steal paid on the AMD
/// VMs (docs/PARALLEL.md, "Session 43").
pub(super) const FLOOR: Nanos = Nanos(2 * ALONE_FOR.0);

/// The highest line: a loop whose rest takes longer always splits, so a
/// line raised by a run of bad luck holds back loops of tens of
/// microseconds at most.
const CAP: Nanos = Nanos(16 * ALONE_FOR.0);

// The rule's clamps assume the floor is under the cap.
const _: () = assert!(FLOOR.0 < CAP.0);

/// A split part that took under this share of its prediction paid (in
/// 1024ths: 0.8).
const PAID: u64 = 819;

/// A split part that took this share of its prediction or more bought
/// nothing (in 1024ths: 0.95).
const NO_GAIN: u64 = 973;

/// How many loops in a row whose split bought nothing raise the line.
const FAILS_TO_RAISE: u8 = 3;

/// A loop whose rest was under this many times the line is judged.
const NEAR: u64 = 4;

/// The first period of explorations: one loop a thread starts in this
/// many decides by [`FLOOR`].
const EXPLORE_FIRST: u32 = 32;

/// The longest period of explorations.
const EXPLORE_AT_MOST: u32 = 1024;

#[derive(Clone, Copy)]
struct Learned {
    line: Nanos,
    /// Judged loops in a row whose split bought nothing.
    fails: u8,
    /// Loops started on this thread, for the period.
    started: u32,
    /// One loop in this many decides by [`FLOOR`].
    period: u32,
}

thread_local! {
    static LEARNED: Cell<Learned> = const {
        Cell::new(Learned { line: FLOOR, fails: 0, started: 0, period: EXPLORE_FIRST })
    };
}

/// The line a loop starting now decides by: the thread's, or [`FLOOR`]
/// for one loop in the period (module docs).
pub(super) fn line_for_next_loop() -> Nanos {
    LEARNED.with(|cell| {
        let mut learned = cell.get();
        learned.started = learned.started.wrapping_add(1);
        cell.set(learned);
        if learned.started % learned.period == 0 {
            FLOOR
        } else {
            learned.line
        }
    })
}

/// Judges a loop that split a rest its rate put at `predicted` and whose
/// split part took `actual` (module docs).
pub(super) fn judge(predicted: Nanos, actual: Nanos) {
    LEARNED.with(|cell| cell.set(judged(cell.get(), predicted, actual)));
}

/// What [`judge`] makes of `learned`: the rule, apart from the thread.
fn judged(mut learned: Learned, predicted: Nanos, actual: Nanos) -> Learned {
    if predicted.0 == 0 || predicted.0 >= learned.line.0.saturating_mul(NEAR) {
        return learned;
    }
    let share = actual.0.saturating_mul(1024) / predicted.0;
    if share < PAID {
        let below = predicted.0 - predicted.0 / 3;
        learned.line = Nanos(below.clamp(FLOOR.0, learned.line.0.max(FLOOR.0)));
        learned.fails = 0;
        learned.period = EXPLORE_FIRST;
    } else if share >= NO_GAIN {
        learned.fails += 1;
        if learned.fails >= FAILS_TO_RAISE {
            let above = predicted.0.saturating_add(predicted.0 / 2);
            learned.line = Nanos(above.clamp(learned.line.0, CAP.0));
            learned.fails = 0;
            learned.period = (learned.period * 2).min(EXPLORE_AT_MOST);
        }
    } else {
        learned.fails = 0;
    }
    learned
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(line: u64) -> Learned {
        Learned {
            line: Nanos(line),
            fails: 0,
            started: 0,
            period: EXPLORE_FIRST,
        }
    }

    #[test]
    fn a_run_of_splits_that_bought_nothing_raises_the_line_above_them() {
        let mut learned = at(FLOOR.0);
        for _ in 0..FAILS_TO_RAISE - 1 {
            learned = judged(learned, Nanos(5_000), Nanos(5_200));
            assert_eq!(learned.line, FLOOR, "one bad split is not a machine");
        }
        learned = judged(learned, Nanos(5_000), Nanos(5_200));
        assert_eq!(learned.line, Nanos(7_500));
        assert_eq!(learned.fails, 0);
        assert_eq!(learned.period, 2 * EXPLORE_FIRST, "explorations grow rarer");
        let learned = judged(learned, Nanos(9_000), Nanos(5_000));
        assert_eq!(learned.line, Nanos(6_000));
        assert_eq!(
            learned.period, EXPLORE_FIRST,
            "a split that paid starts them again"
        );
    }

    #[test]
    fn a_neutral_split_ends_a_run_of_failures() {
        let mut learned = at(FLOOR.0);
        learned = judged(learned, Nanos(5_000), Nanos(5_000));
        learned = judged(learned, Nanos(5_000), Nanos(5_000));
        learned = judged(learned, Nanos(5_000), Nanos(4_500));
        learned = judged(learned, Nanos(5_000), Nanos(5_000));
        assert_eq!(learned.line, FLOOR);
    }

    #[test]
    fn a_split_that_paid_brings_the_line_below_its_rest_not_below_the_floor() {
        let learned = judged(at(20_000), Nanos(9_000), Nanos(5_000));
        assert_eq!(learned.line, Nanos(6_000));
        let learned = judged(at(20_000), Nanos(3_000), Nanos(1_000));
        assert_eq!(learned.line, FLOOR);
        // A split far past the line that paid leaves it.
        let learned = judged(at(5_000), Nanos(9_000), Nanos(5_000));
        assert_eq!(learned.line, Nanos(5_000));
    }

    #[test]
    fn the_line_stays_within_floor_and_cap() {
        let mut learned = at(CAP.0 / 2);
        for _ in 0..10 * u32::from(FAILS_TO_RAISE) {
            learned = judged(learned, Nanos(CAP.0 - 1), Nanos(CAP.0 * 2));
        }
        assert_eq!(learned.line, CAP);
        assert_eq!(learned.period, EXPLORE_AT_MOST);
        for _ in 0..10 {
            learned = judged(learned, Nanos(FLOOR.0 + 1), Nanos(1));
        }
        assert_eq!(learned.line, FLOOR);
        assert_eq!(learned.period, EXPLORE_FIRST);
    }

    #[test]
    fn far_or_unmeasured_rests_are_not_judged() {
        let learned = judged(at(FLOOR.0), Nanos(NEAR * FLOOR.0), Nanos(u64::MAX));
        assert_eq!(learned.line, FLOOR);
        assert_eq!(learned.fails, 0);
        let learned = judged(at(FLOOR.0), Nanos(0), Nanos(1));
        assert_eq!(learned.fails, 0);
    }

    #[test]
    fn one_loop_in_a_period_decides_by_the_floor() {
        std::thread::spawn(|| {
            LEARNED.with(|cell| cell.set(at(CAP.0)));
            let lines: Vec<Nanos> = (0..EXPLORE_FIRST).map(|_| line_for_next_loop()).collect();
            assert_eq!(lines.iter().filter(|&&line| line == FLOOR).count(), 1);
            assert_eq!(
                lines.iter().filter(|&&line| line == CAP).count(),
                EXPLORE_FIRST as usize - 1
            );
        })
        .join()
        .unwrap();
    }
}
