//! How a parallel iterator runs: [`Producer`]s that split, and the one
//! driver that decides where to split and in which order the pieces'
//! results are combined.
//!
//! A producer is a piece of the input that can be cut in two at an index
//! and turned into a plain iterator. Every source (a range, a slice, a
//! `Vec`) is one, and every adapter wraps its base's producer (a `map`
//! producer splits where its base splits and maps what its base yields).
//! A consumer (`sum`, `collect`, `find_any`...) says how to fold one
//! piece sequentially and how to combine two adjacent pieces' results,
//! left then right, so any split tree gives the sequential answer for
//! associative operations.
//!
//! # Where it splits (the splitting rule, here and nowhere else)
//!
//! No grain size is asked of the user. A piece splits while it has a
//! *split budget* left; the budget starts at the pool's worker count and
//! halves at every split, so a loop starts as about one piece per worker,
//! at the cost of one `join` per split (a few nanoseconds when nobody takes
//! the other half, weft's join stack). A piece that *migrated* (its half
//! of a `join` was taken by another worker: `FnContext::migrated`) found
//! an idle worker, which is evidence that more splitting pays: its budget
//! is reset to the worker count. So a balanced loop splits about
//! `workers * log2(workers)` times, whatever its length; an unbalanced one
//! keeps splitting where thieves keep finding work; a loop over a few slow
//! elements splits down to single elements, one per worker. Pieces never
//! split below `with_min_len` nor stay above `with_max_len`.
//!
//! With [`deterministic`](super::ParallelIterator::deterministic) the
//! budget ignores migration: the split tree then depends only on the
//! input's length and the worker count, so a floating-point reduction
//! gives the same bits on every run.
//!
//! # Stopping early
//!
//! A consumer may be *full* (`any` found its match, a split panicked):
//! pieces not yet started then fold nothing, and started ones stop at their
//! next item where the consumer checks.

use std::panic::{self, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, Ordering};

/// A piece of a parallel iterator's input: it splits at an index, and
/// becomes a sequential iterator where the driver stops splitting.
///
/// `len` counts the base input's elements, which is the item count for
/// indexed iterators (`map`, `enumerate`, `zip`...) and an upper bound for
/// the others (`filter`).
pub trait Producer: Send + Sized {
    /// What the iterator yields.
    type Item;
    /// The sequential iterator over one piece.
    type IntoIter: Iterator<Item = Self::Item>;

    /// Elements of the base input in this piece.
    fn len(&self) -> usize;

    /// Whether the piece is empty.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Splits into the elements before `index` and those from it on.
    fn split_at(self, index: usize) -> (Self, Self);

    /// The piece as a sequential iterator.
    fn into_iter(self) -> Self::IntoIter;

    /// The shortest piece worth splitting off (`with_min_len`).
    fn min_len(&self) -> usize {
        1
    }

    /// The longest piece to leave unsplit (`with_max_len`).
    fn max_len(&self) -> usize {
        usize::MAX
    }

    /// Whether the split tree must not depend on timing (`deterministic`).
    fn deterministic(&self) -> bool {
        false
    }
}

/// What a consuming call does with the pieces: fold each sequentially,
/// combine neighbours left then right.
pub(crate) trait Consumer<T>: Sync {
    type Result: Send;

    /// Folds the piece that starts at base index `offset`.
    fn fold<I: Iterator<Item = T>>(&self, offset: usize, items: I) -> Self::Result;

    /// Combines a piece's result with the result of the piece after it.
    fn reduce(&self, left: Self::Result, right: Self::Result) -> Self::Result;

    /// Whether the answer is known, so that the rest need not run.
    fn full(&self) -> bool {
        false
    }
}

/// Runs `producer` through `consumer` on the calling worker's pool (the
/// global pool outside any pool, as `weft::join` does).
pub(crate) fn drive<P, C>(producer: P, consumer: &C) -> C::Result
where
    P: Producer,
    C: Consumer<P::Item>,
{
    let stop = AtomicBool::new(false);
    let drive = Drive {
        consumer,
        stop: &stop,
    };
    crate::api::global::in_worker(|| {
        let budget = Budget::new(&producer);
        drive.run(producer, 0, budget, false)
    })
}

/// How many more times a piece may split without evidence of idle
/// workers (the splitting rule in the module docs).
#[derive(Clone, Copy)]
struct Budget {
    splits: usize,
    /// The worker count the budget is reset to on migration.
    workers: usize,
    deterministic: bool,
}

impl Budget {
    fn new<P: Producer>(producer: &P) -> Budget {
        let workers = crate::current_num_threads().max(1);
        Budget {
            splits: workers,
            workers,
            deterministic: producer.deterministic(),
        }
    }

    /// Whether a piece of `len` elements splits now, and the budget each
    /// half then gets.
    fn split<P: Producer>(self, producer: &P, migrated: bool) -> Option<Budget> {
        let len = producer.len();
        let min = producer.min_len().max(1);
        if len / 2 < min {
            return None;
        }
        let mut splits = self.splits;
        if migrated && !self.deterministic {
            splits = splits.max(self.workers);
        }
        if splits == 0 && len <= producer.max_len() {
            return None;
        }
        Some(Budget {
            splits: splits / 2,
            ..self
        })
    }
}

struct Drive<'c, C> {
    consumer: &'c C,
    /// Set when a piece panicked: the others stop, and the panic goes on
    /// to the caller once they have.
    stop: &'c AtomicBool,
}

impl<C> Drive<'_, C> {
    fn stopped<T>(&self) -> bool
    where
        C: Consumer<T>,
    {
        // Relaxed: a hint to skip work; the panic itself travels by join.
        self.stop.load(Ordering::Relaxed) || self.consumer.full()
    }

    fn run<P>(&self, producer: P, offset: usize, budget: Budget, migrated: bool) -> C::Result
    where
        P: Producer,
        C: Consumer<P::Item>,
    {
        if self.stopped() {
            return self.consumer.fold(offset, std::iter::empty());
        }
        if let Some(halves) = budget.split(&producer, migrated) {
            let mid = producer.len() / 2;
            let (left, right) = producer.split_at(mid);
            let (left, right) = crate::join_context(
                |ctx| self.run(left, offset, halves, ctx.migrated()),
                |ctx| self.run(right, offset + mid, halves, ctx.migrated()),
            );
            return self.consumer.reduce(left, right);
        }
        let fold = || self.consumer.fold(offset, producer.into_iter());
        match panic::catch_unwind(AssertUnwindSafe(fold)) {
            Ok(result) => result,
            Err(payload) => {
                self.stop.store(true, Ordering::Relaxed);
                panic::resume_unwind(payload)
            }
        }
    }
}
