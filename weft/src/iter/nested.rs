//! Consumers that carry a loop's consumer down to a `flat_map`, so that
//! each outer item's inner loop runs through it in parallel (plumbing's
//! "Inner loops" says when and how).
//!
//! A `flat_map` drives its base's producer with [`Nested`], which folds
//! each outer item by running the item's inner loop through the consumer
//! the caller asked for (`plumbing::InnerLoops`), onto what the outer
//! items before it in the same piece folded to. The adapters that take
//! items one at a time above a `flat_map` drive it with [`Adapted`]: the
//! consumer, with their step applied to each item on its way in.
//!
//! Offsets: every item of an inner loop counts at its outer item's base
//! index ([`AtOffset`]), as it does when the inner loop runs sequentially.
//! Order-sensitive consumers compare pieces by offset and treat equal
//! offsets as not before each other (`find_first` still runs an inner
//! piece at the offset of its match, and `reduce` keeps the left match),
//! so inner pieces at one offset need no order of their own.

use std::sync::{Mutex, PoisonError};

use super::adapters::FlatMapSeq;
use super::plumbing::{at, keep, Consumer, InnerLoops};
use super::stateful::{PieceSeed, Seed};
use super::{IntoParallelIterator, ParallelIterator};

/// The methods a consumer wrapper passes to the consumer it wraps
/// (`self.consumer`) unchanged: the result type, `reduce`, `full`, and
/// `full_from` (at the piece's own offset, or at `$offset` for all).
macro_rules! pass_through {
    () => {
        pass_through!(@common);
        fn full_from(&self, offset: usize) -> bool {
            self.consumer.full_from(offset)
        }
    };
    (full_from at $offset:ident) => {
        pass_through!(@common);
        fn full_from(&self, _offset: usize) -> bool {
            self.consumer.full_from(self.$offset)
        }
    };
    (@common) => {
        type Result = C::Result;
        fn reduce(&self, left: C::Result, right: C::Result) -> C::Result {
            self.consumer.reduce(left, right)
        }
        fn full(&self) -> bool {
            self.consumer.full()
        }
    };
}

/// The consumer a `flat_map` drives its base with: each outer item's
/// inner loop runs through `consumer`.
pub(crate) struct Nested<'c, C, F> {
    pub(crate) consumer: &'c C,
    pub(crate) f: &'c F,
    /// The outer loop is deterministic: inner loops fold in one go.
    pub(crate) sequential: bool,
}

impl<T, C, F, U> Consumer<T> for Nested<'_, C, F>
where
    F: Fn(T) -> U + Sync,
    U: IntoParallelIterator,
    C: Consumer<U::Item>,
{
    pass_through!();

    fn fold<I: Iterator<Item = T>>(&self, offset: usize, items: I) -> C::Result {
        self.fold_onto(None, offset, items)
    }

    fn fold_more<I: Iterator<Item = T>>(
        &self,
        left: C::Result,
        offset: usize,
        items: I,
    ) -> C::Result {
        self.fold_onto(Some(left), offset, items)
    }
}

impl<C, F> Nested<'_, C, F> {
    /// Folds the outer items from base index `offset` on, each one's inner
    /// loop onto the result so far (`folded`), until they end or the
    /// consumer needs nothing more from them. Where inner loops fold in
    /// one go, the piece is one sequential run, as a `flat_map` of
    /// sequential iterators; otherwise an inner loop of known length that
    /// fits the chunk under way folds whole, without a driver, and the
    /// others each run as a loop of their own (`InnerLoops::run`).
    fn fold_onto<T, U, I>(
        &self,
        folded: Option<C::Result>,
        offset: usize,
        mut items: I,
    ) -> C::Result
    where
        I: Iterator<Item = T>,
        F: Fn(T) -> U + Sync,
        U: IntoParallelIterator,
        C: Consumer<U::Item>,
    {
        let Some(mut inner_loops) = InnerLoops::new(self.sequential) else {
            let run = FlatMapSeq::new(items, self.f);
            return match folded {
                None => self.consumer.fold(offset, run),
                Some(left) => self.consumer.fold_more(left, offset, run),
            };
        };
        let mut folded = folded;
        let mut index = offset;
        while !self.consumer.full_from(index) {
            let Some(item) = items.next() else { break };
            let mut inner = (self.f)(item).into_par_iter();
            folded = Some(match inner_loops.fits(inner.opt_len()) {
                Some(counted) => {
                    let seq = inner.into_seq();
                    let result = match folded {
                        None => self.consumer.fold(index, seq),
                        Some(left) => self.consumer.fold_more(left, index, seq),
                    };
                    inner_loops.folded_whole(counted);
                    result
                }
                None => {
                    let at_index = AtOffset {
                        consumer: self.consumer,
                        offset: index,
                    };
                    inner_loops.run(inner.producer(), &at_index, folded)
                }
            });
            index = at(index, 1);
        }
        let result = match folded {
            Some(result) => result,
            None => self.consumer.fold(offset, std::iter::empty()),
        };
        // The outer items the consumer no longer needs are dropped unused.
        keep(result, items)
    }
}

/// A consumer for one outer item's inner loop: every piece of it counts at
/// the outer item's base index.
pub(crate) struct AtOffset<'c, C> {
    consumer: &'c C,
    offset: usize,
}

impl<T, C: Consumer<T>> Consumer<T> for AtOffset<'_, C> {
    pass_through!(full_from at offset);

    fn fold<I: Iterator<Item = T>>(&self, _offset: usize, items: I) -> C::Result {
        self.consumer.fold(self.offset, items)
    }

    fn fold_more<I: Iterator<Item = T>>(
        &self,
        left: C::Result,
        _offset: usize,
        items: I,
    ) -> C::Result {
        self.consumer.fold_more(left, self.offset, items)
    }
}

/// An adapter's step on each item, applied on the consumer's side
/// ([`Adapted`]).
pub(crate) trait Step<T>: Sync {
    /// The items after the step.
    type Out;
    /// `items` with the step applied.
    fn apply<I: Iterator<Item = T>>(&self, items: I) -> impl Iterator<Item = Self::Out>;
}

/// `consumer`, with `step` applied to the items on their way in: what an
/// adapter above a `flat_map` drives it with.
pub(crate) struct Adapted<'c, C, S> {
    pub(crate) consumer: &'c C,
    pub(crate) step: S,
}

impl<T, C, S> Consumer<T> for Adapted<'_, C, S>
where
    S: Step<T>,
    C: Consumer<S::Out>,
{
    pass_through!();

    fn fold<I: Iterator<Item = T>>(&self, offset: usize, items: I) -> C::Result {
        self.consumer.fold(offset, self.step.apply(items))
    }

    fn fold_more<I: Iterator<Item = T>>(
        &self,
        left: C::Result,
        offset: usize,
        items: I,
    ) -> C::Result {
        self.consumer
            .fold_more(left, offset, self.step.apply(items))
    }
}

/// A step that is one method of `Iterator` with the adapter's closure.
macro_rules! closure_step {
    ($(#[$doc:meta])* $name:ident<$($g:ident)?>, $method:ident, $out:ty, $($bound:tt)+) => {
        $(#[$doc])*
        pub(crate) struct $name<'f, F>(pub(crate) &'f F);

        impl<T, $($g,)? F: $($bound)+ + Sync> Step<T> for $name<'_, F> {
            type Out = $out;
            fn apply<I: Iterator<Item = T>>(&self, items: I) -> impl Iterator<Item = $out> {
                items.$method(self.0)
            }
        }
    };
}

closure_step!(
    /// `map`'s step.
    MapStep<R>, map, R, Fn(T) -> R
);
closure_step!(
    /// `filter`'s step.
    FilterStep<>, filter, T, Fn(&T) -> bool
);
closure_step!(
    /// `filter_map`'s step.
    FilterMapStep<R>, filter_map, R, Fn(T) -> Option<R>
);
closure_step!(
    /// `inspect`'s step.
    InspectStep<>, inspect, T, Fn(&T)
);

/// `update`'s step.
pub(crate) struct UpdateStep<'f, F>(pub(crate) &'f F);

impl<T, F: Fn(&mut T) + Sync> Step<T> for UpdateStep<'_, F> {
    type Out = T;
    fn apply<I: Iterator<Item = T>>(&self, items: I) -> impl Iterator<Item = T> {
        items.map(|mut item| {
            (self.0)(&mut item);
            item
        })
    }
}

/// `flat_map_iter`'s step (its inner iterators are sequential).
pub(crate) struct FlatMapIterStep<'f, F>(pub(crate) &'f F);

impl<T, U, F> Step<T> for FlatMapIterStep<'_, F>
where
    F: Fn(T) -> U + Sync,
    U: IntoIterator,
{
    type Out = U::Item;
    fn apply<I: Iterator<Item = T>>(&self, items: I) -> impl Iterator<Item = U::Item> {
        items.flat_map(self.0)
    }
}

/// The step of a `flat_map` over a `flat_map`'s items: its own inner
/// loops fold sequentially, inside the parallel inner loops below it.
pub(crate) struct FlatMapSeqStep<'f, F>(pub(crate) &'f F);

impl<T, U, F> Step<T> for FlatMapSeqStep<'_, F>
where
    F: Fn(T) -> U + Sync,
    U: IntoParallelIterator,
{
    type Out = U::Item;
    fn apply<I: Iterator<Item = T>>(&self, items: I) -> impl Iterator<Item = U::Item> {
        items.flat_map(|item| (self.0)(item).into_par_iter().into_seq())
    }
}

/// `cloned`'s step.
pub(crate) struct ClonedStep;

impl<'a, T: Clone + 'a> Step<&'a T> for ClonedStep {
    type Out = T;
    fn apply<I: Iterator<Item = &'a T>>(&self, items: I) -> impl Iterator<Item = T> {
        items.cloned()
    }
}

/// `copied`'s step.
pub(crate) struct CopiedStep;

impl<'a, T: Copy + 'a> Step<&'a T> for CopiedStep {
    type Out = T;
    fn apply<I: Iterator<Item = &'a T>>(&self, items: I) -> impl Iterator<Item = T> {
        items.copied()
    }
}

/// The seed of `fold` or `fold_with` above a `flat_map`, shared by every
/// thread that folds a piece of an inner loop: a state is made under its
/// lock, since a value that is cloned for each state is `Send` but need
/// not be `Sync`. One lock a state, and a state a run of items
/// ([`FoldOnto`]), not an item.
pub(crate) struct SharedSeed<'s, S>(Mutex<&'s mut S>);

impl<'s, S: Seed> SharedSeed<'s, S> {
    pub(crate) fn new(seed: &'s mut S) -> Self {
        SharedSeed(Mutex::new(seed))
    }

    /// A new state, as a piece of the adapter's own producer would get.
    fn state(&self) -> S::State {
        // A seed whose `identity` or `clone` panicked is still whole: the
        // lock guards no invariant of its own.
        let seed = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        seed.piece().state()
    }
}

/// `fold`'s and `fold_with`'s consumer over a `flat_map`: folds the items
/// into accumulators, and hands each accumulator to `consumer` as an item
/// once its run of items ends. A run goes on across the pieces the driver
/// folds one after another (`fold_more`: an inner loop's chunks, and the
/// inner loops of one outer piece), so a `flat_map` of many short inner
/// loops makes an accumulator a piece of the outer loop, as the
/// sequential inner loops did, not one an inner loop.
pub(crate) struct FoldOnto<'c, C, S, F> {
    pub(crate) consumer: &'c C,
    pub(crate) seed: SharedSeed<'c, S>,
    pub(crate) f: &'c F,
}

/// What [`FoldOnto`] folds a piece to: the consumer's result for the
/// accumulators already handed over, and the accumulator of the run still
/// open, with the base index its run started at.
pub(crate) enum Open<R, A> {
    Closed(R),
    Acc(usize, A),
    ClosedThenAcc(R, usize, A),
}

impl<C, S: Seed, F> FoldOnto<'_, C, S, F> {
    /// Hands the open accumulator of `open`, if any, to the consumer.
    pub(crate) fn close(&self, open: Open<C::Result, S::State>) -> C::Result
    where
        C: Consumer<S::State>,
    {
        match open {
            Open::Closed(closed) => closed,
            Open::Acc(offset, acc) => self.consumer.fold(offset, std::iter::once(acc)),
            Open::ClosedThenAcc(closed, offset, acc) => {
                self.consumer
                    .fold_more(closed, offset, std::iter::once(acc))
            }
        }
    }
}

impl<T, C, S, F> Consumer<T> for FoldOnto<'_, C, S, F>
where
    S: Seed,
    S::State: Send,
    F: Fn(S::State, T) -> S::State + Sync,
    C: Consumer<S::State>,
{
    type Result = Open<C::Result, S::State>;

    fn fold<I: Iterator<Item = T>>(&self, offset: usize, items: I) -> Self::Result {
        Open::Acc(offset, items.fold(self.seed.state(), self.f))
    }

    fn fold_more<I: Iterator<Item = T>>(
        &self,
        left: Self::Result,
        offset: usize,
        items: I,
    ) -> Self::Result {
        match left {
            Open::Closed(closed) => {
                Open::ClosedThenAcc(closed, offset, items.fold(self.seed.state(), self.f))
            }
            Open::Acc(start, acc) => Open::Acc(start, items.fold(acc, self.f)),
            Open::ClosedThenAcc(closed, start, acc) => {
                Open::ClosedThenAcc(closed, start, items.fold(acc, self.f))
            }
        }
    }

    fn reduce(&self, left: Self::Result, right: Self::Result) -> Self::Result {
        let left = self.close(left);
        Open::Closed(self.consumer.reduce(left, self.close(right)))
    }

    fn full(&self) -> bool {
        self.consumer.full()
    }

    fn full_from(&self, offset: usize) -> bool {
        self.consumer.full_from(offset)
    }
}

/// The body of `drive_with` for an adapter that takes items one at a time:
/// over a base that nests, the consumer goes down to it with the
/// adapter's step (made from the adapter's closure, `f`, where it has
/// one); otherwise the loop runs through the adapter's own producer, as
/// any loop's does.
macro_rules! drive_nested_with_step {
    ($f:ident => $step:expr) => {
        const NESTS: bool = I::NESTS;
        fn drive_with<C: super::plumbing::Consumer<Self::Item>>(
            &mut self,
            consumer: &C,
        ) -> C::Result {
            if I::NESTS {
                let Self { base, f: $f, .. } = self;
                let $f = &*$f;
                base.drive_with(&super::nested::Adapted {
                    consumer,
                    step: $step,
                })
            } else {
                super::plumbing::drive(self.producer(), consumer)
            }
        }
    };
    ($step:expr) => {
        const NESTS: bool = I::NESTS;
        fn drive_with<C: super::plumbing::Consumer<Self::Item>>(
            &mut self,
            consumer: &C,
        ) -> C::Result {
            if I::NESTS {
                self.base.drive_with(&super::nested::Adapted {
                    consumer,
                    step: $step,
                })
            } else {
                super::plumbing::drive(self.producer(), consumer)
            }
        }
    };
}
