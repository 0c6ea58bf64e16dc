//! Parallel iterators (an extension over the API): data-parallel loops with
//! rayon's names and semantics, so that switching a loop from rayon is an
//! import change (`use weft::prelude::*;`).
//!
//! ```
//! use weft::prelude::*;
//!
//! let squares: u64 = (0..1_000u64).into_par_iter().map(|x| x * x).sum();
//! assert_eq!(squares, (0..1_000u64).map(|x| x * x).sum());
//!
//! let mut v: Vec<u32> = (0..10_000).rev().collect();
//! v.par_iter_mut().for_each(|x| *x *= 2);
//! v.par_sort_unstable();
//! assert_eq!(v[..3], [0, 2, 4]);
//! ```
//!
//! It owns the iterator traits ([`ParallelIterator`],
//! [`IndexedParallelIterator`], the `IntoParallel*` conversions and the
//! slice extensions), the sources (`sources`), the adapters (`adapters`),
//! the consumers (`consumers`, `collect`, `partition` for those that fill
//! two collections, `nested` for those that carry a loop's consumer down
//! to a `flat_map`'s inner loops) and the parallel sorts (`sort`).
//! Every loop runs through one driver, [`plumbing`], which alone decides
//! where to split: there is no grain size to tune (see there for the rule),
//! and `with_min_len` / `with_max_len` exist only as bounds.
//!
//! Semantics a rayon user can count on: `collect` and the order-sensitive
//! consumers (`find_first`, `min`/`max` ties, `reduce`'s combination order)
//! follow the input's order; `find_any`, `any`, `all`, `position_any`,
//! `try_for_each` and `try_reduce` stop the pieces not yet started once
//! the answer is known; a panic in a
//! closure stops the pieces not yet started and reaches the caller once
//! the started ones have finished. Closures run on the pool of the calling
//! worker, or on the global pool when called from outside any pool.
//!
//! A floating-point `sum` or `reduce` depends on the split tree, which
//! follows the timing of idle workers. [`ParallelIterator::deterministic`]
//! fixes the tree for a given input length and worker count, so the result
//! is the same on every run.
//!
//! # Items by value
//!
//! Every item of a source by value (a `Vec`, an array) is dropped exactly
//! once: by the closure it is handed to, by the caller it is returned to,
//! or unused, when nothing needs it (what `skip` skips and `take` leaves,
//! the extra items of the longer side of a `zip`, what a search leaves
//! unsearched once it has its answer, the match that lost to another).
//! This holds when a closure or an item's destructor panics: the other
//! items are dropped all the same, and the panic reaches the caller. A
//! second panic, while the first unwinds, may abort the process, as it
//! does in std.

pub mod plumbing;

#[macro_use]
mod nested;
#[macro_use]
mod adapters;
mod bridge;
mod collect;
mod collections;
mod consumers;
mod drain;
mod gated;
mod generators;
mod indexed;
mod interleave;
mod multizip;
mod partition;
mod slices;
mod sort;
mod sources;
mod splitter;
mod stateful;
mod strings;
mod walk_tree;

use std::collections::LinkedList;
use std::marker::PhantomData;
use std::sync::atomic::{AtomicBool, AtomicUsize};

pub use adapters::{
    Chain, ChainProducer, Cloned, ClonedProducer, Copied, CopiedProducer, Enumerate,
    EnumerateProducer, ExponentialBlocks, Filter, FilterMap, FilterMapProducer, FilterProducer,
    FlatMap, FlatMapIter, FlatMapIterProducer, FlatMapProducer, FlatMapSeq, Flatten, FlattenIter,
    Hinted, HintedProducer, Inspect, InspectIter, InspectProducer, Map, MapProducer, Skip, Take,
    UniformBlocks, Update, UpdateIter, UpdateProducer, WhileSome, WhileSomeIter, WhileSomeProducer,
    Zip, ZipEq, ZipProducer,
};
pub use bridge::{BridgeProducer, IterBridge, ParallelBridge, Pull};
pub use collect::{FromParallelIterator, ParallelExtend};
pub use collections::{OptionIter, OptionProducer};
pub use consumers::Try;
pub use drain::{Drain, ParallelDrainFull, ParallelDrainRange};
pub use gated::{
    Admit, Fuse, Gate, Gated, GatedIter, GatedProducer, PanicFuse, SkipAny, SkipAnyWhile, Skipping,
    SkippingWhile, TakeAny, TakeAnyWhile, Taking, TakingWhile,
};
#[allow(deprecated)]
pub use generators::repeatn;
pub use generators::{
    empty, once, repeat, repeat_n, Empty, Once, Repeat, RepeatN, RepeatNProducer,
};
pub use indexed::{
    FoldChunks, FoldChunksProducer, FoldChunksSeeded, FoldChunksWith, FoldedChunks, Grouped,
    IterChunks, IterChunksProducer, Positions, PositionsIter, PositionsProducer, Rev, RevIter,
    RevProducer, StepBy, StepByProducer,
};
pub use interleave::{
    Interleave, InterleaveIter, InterleaveProducer, InterleaveShortest, Intersperse,
    IntersperseIter, IntersperseProducer,
};
pub use multizip::{MultiZip, MultiZipIter, MultiZipProducer};
pub use partition::Either;
pub use slices::{
    ArrayWindows, ChunkBy, ChunkByIter, ChunkByMut, ChunkBySlices, ChunkBySlicesProducer,
    ChunksExact, ChunksExactMut, Exact, ParallelSlice, RChunks, RChunksExact, RChunksExactMut,
    RChunksMut, RChunksMutProducer, RChunksProducer, SliceSplit, SliceSplitInclusive,
    SplitInclusiveMut, SplitMut, SplitSlices, SplitSlicesIter, SplitSlicesProducer, SubSlice,
};
pub use sort::ParallelSliceMut;
pub use sources::{
    Chunks, ChunksMut, ChunksMutProducer, ChunksProducer, DrainIter, DrainProducer, IntoIter, Iter,
    IterMut, RangeInteger, RangeIter, RangeProducer, SliceMutProducer, SliceProducer, Windows,
    WindowsProducer,
};
pub use splitter::{split, SplitData, SplitDataProducer};
pub use stateful::{
    CloneSeed, Fold, FoldSeeded, FoldSeededProducer, FoldWith, InitSeed, MapInit, MapSeeded,
    MapSeededProducer, MapWith, PieceSeed, Seed, TryFold, TryFoldSeeded, TryFoldSeededProducer,
    TryFoldWith, WithState,
};
pub use strings::{
    AsciiWhitespace, Bytes, CharIndices, CharIndicesProducer, CharPattern, Chars, EncodeUtf16,
    Lines, MatchIndices, MatchIndicesIter, MatchIndicesProducer, Matches, OffsetCharIndices,
    ParallelString, PatternRef, Split, SplitAsciiWhitespace, SplitInclusive, SplitIter,
    SplitProducer, SplitSeq, SplitWhitespace, Utf16Units, Whitespace,
};

pub use walk_tree::{
    walk_tree, walk_tree_postfix, walk_tree_prefix, WalkIter, WalkTree, WalkTreePostfix,
    WalkTreePrefix, WalkTreeProducer,
};

use adapters::Hint;
use consumers::{
    Count, Extreme, FindAny, FindFirst, FindLast, ForEach, MinMax, Product, ReduceOptional,
    ReduceWith, Sum, TryReduce,
};
use plumbing::{drive, Consumer, Producer};
use stateful::{CloneSeed as WithClone, InitSeed as WithInit};

/// A parallel iterator: a loop whose items are produced and consumed on
/// several workers at once (rayon's `ParallelIterator`).
///
/// Adapters (`map`, `filter`...) return new parallel iterators; consuming
/// methods (`for_each`, `sum`, `collect`...) run the loop and wait for it.
pub trait ParallelIterator: Sized + Send {
    /// The items.
    type Item: Send;

    /// The producer of this iterator's pieces (see [`plumbing`]).
    #[doc(hidden)]
    type Producer<'a>: Producer<Item = Self::Item>
    where
        Self: 'a;

    /// The same items as a sequential iterator (what `flat_map` runs for
    /// each outer item).
    #[doc(hidden)]
    type Seq: Iterator<Item = Self::Item>;

    /// The producer over all the items. Called once, by the consuming
    /// method, which then drops `self`.
    #[doc(hidden)]
    fn producer(&mut self) -> Self::Producer<'_>;

    #[doc(hidden)]
    fn into_seq(self) -> Self::Seq;

    /// The exact number of items, when known without running the loop.
    #[doc(hidden)]
    fn opt_len(&self) -> Option<usize> {
        None
    }

    /// Whether [`drive_with`](Self::drive_with) runs inner loops in
    /// parallel (a `flat_map`, or an adapter that passes its consumer down
    /// to one): see plumbing's "Inner loops".
    #[doc(hidden)]
    const NESTS: bool = false;

    /// Runs the loop through `consumer`: what every consuming method calls,
    /// once, before it drops `self`. Overridden where [`NESTS`](Self::NESTS).
    #[doc(hidden)]
    fn drive_with<C: Consumer<Self::Item>>(&mut self, consumer: &C) -> C::Result {
        drive(self.producer(), consumer)
    }

    // ------------------------------------------------------- adapters

    /// Applies `f` to each item.
    fn map<F, R>(self, f: F) -> Map<Self, F>
    where
        F: Fn(Self::Item) -> R + Sync + Send,
        R: Send,
    {
        Map { base: self, f }
    }

    /// Keeps the items for which `predicate` holds.
    fn filter<P>(self, predicate: P) -> Filter<Self, P>
    where
        P: Fn(&Self::Item) -> bool + Sync + Send,
    {
        Filter {
            base: self,
            f: predicate,
        }
    }

    /// Maps and keeps the `Some`s.
    fn filter_map<F, R>(self, f: F) -> FilterMap<Self, F>
    where
        F: Fn(Self::Item) -> Option<R> + Sync + Send,
        R: Send,
    {
        FilterMap { base: self, f }
    }

    /// Maps each item to a parallel iterator and yields their items in
    /// turn, in order. Each inner iterator runs in parallel through the
    /// loop's consumer, on the worker that took its outer item and on any
    /// that join it, so that a few outer items with long inner loops use
    /// the whole pool; a short inner loop folds whole, at about the cost of
    /// [`flat_map_iter`](Self::flat_map_iter)'s sequential iterators. Where
    /// an adapter other than `map`, `filter`, `filter_map`, `inspect`,
    /// `update`, `cloned`, `copied`, `flat_map_iter`, `fold` or `fold_with`
    /// follows it, the inner iterators run sequentially, the outer loop
    /// giving the parallelism.
    ///
    /// ```
    /// use weft::prelude::*;
    ///
    /// let rows = vec![vec![1, 2, 3], vec![], vec![4, 5]];
    /// let all: Vec<i32> = rows
    ///     .par_iter()
    ///     .flat_map(|row| row.par_iter().map(|x| x * 10))
    ///     .collect();
    /// assert_eq!(all, [10, 20, 30, 40, 50]);
    /// ```
    fn flat_map<F, U>(self, f: F) -> FlatMap<Self, F>
    where
        F: Fn(Self::Item) -> U + Sync + Send,
        U: IntoParallelIterator,
    {
        FlatMap { base: self, f }
    }

    /// Maps each item to a sequential iterator and yields their items in
    /// turn (rayon's `flat_map_iter`).
    fn flat_map_iter<F, U>(self, f: F) -> FlatMapIter<Self, F>
    where
        F: Fn(Self::Item) -> U + Sync + Send,
        U: IntoIterator,
        U::Item: Send,
    {
        FlatMapIter { base: self, f }
    }

    /// Each item, a parallel iterator or something that converts into
    /// one (a `Vec`, a range), replaced by its items in turn (rayon's
    /// `flatten`): [`flat_map`](Self::flat_map) with the identity, so each
    /// inner iterator runs sequentially on the worker that produced it.
    ///
    /// ```
    /// use weft::prelude::*;
    /// let nested = vec![vec![1, 2], vec![], vec![3]];
    /// let flat: Vec<u32> = nested.into_par_iter().flatten().collect();
    /// assert_eq!(flat, [1, 2, 3]);
    /// ```
    fn flatten(self) -> Flatten<Self>
    where
        Self::Item: IntoParallelIterator,
    {
        FlatMap {
            base: self,
            f: std::convert::identity,
        }
    }

    /// Each item, a sequential iterator or something that converts into
    /// one, replaced by its items in turn (rayon's `flatten_iter`):
    /// [`flat_map_iter`](Self::flat_map_iter) with the identity.
    ///
    /// ```
    /// use weft::prelude::*;
    /// let ranges = vec![0..2u32, 5..7];
    /// let flat: Vec<u32> = ranges.into_par_iter().flatten_iter().collect();
    /// assert_eq!(flat, [0, 1, 5, 6]);
    /// ```
    fn flatten_iter(self) -> FlattenIter<Self>
    where
        Self::Item: IntoIterator,
        <Self::Item as IntoIterator>::Item: Send,
    {
        FlatMapIter {
            base: self,
            f: std::convert::identity,
        }
    }

    /// This iterator's items, then `other`'s.
    ///
    /// # Panics
    ///
    /// An indexed chain whose two lengths add up to more than `usize::MAX`
    /// panics, with the message "the chain is longer than usize::MAX" and
    /// before running anything, when asked its length or an index: by
    /// `len`, `zip`, `take`, `skip`, `enumerate` and `position_any`. What
    /// needs neither runs such a chain as any other: `find_first`,
    /// `find_any`, `any`, `all`, `for_each` and the other consumers of
    /// [`ParallelIterator`].
    fn chain<C>(self, other: C) -> Chain<Self, C::Iter>
    where
        C: IntoParallelIterator<Item = Self::Item>,
    {
        Chain {
            a: self,
            b: other.into_par_iter(),
        }
    }

    /// Copies referenced items.
    fn copied<'a, T>(self) -> Copied<Self>
    where
        T: 'a + Copy + Send + Sync,
        Self: ParallelIterator<Item = &'a T>,
    {
        Copied { base: self }
    }

    /// Clones referenced items.
    fn cloned<'a, T>(self) -> Cloned<Self>
    where
        T: 'a + Clone + Send + Sync,
        Self: ParallelIterator<Item = &'a T>,
    {
        Cloned { base: self }
    }

    /// Folds each piece the driver makes into one accumulator, starting
    /// from `identity()`, and yields the accumulators (rayon's `fold`):
    /// follow it with `reduce` or `sum` to combine them.
    ///
    /// ```
    /// use weft::prelude::*;
    /// let total = (1..101u32)
    ///     .collect::<Vec<_>>()
    ///     .into_par_iter()
    ///     .fold(|| 0u64, |sum, x| sum + u64::from(x))
    ///     .sum::<u64>();
    /// assert_eq!(total, 5050);
    /// ```
    fn fold<T, ID, F>(self, identity: ID, fold_op: F) -> Fold<Self, ID, F>
    where
        ID: Fn() -> T + Sync + Send,
        F: Fn(T, Self::Item) -> T + Sync + Send,
        T: Send,
    {
        FoldSeeded {
            base: self,
            seed: WithInit(identity),
            f: fold_op,
        }
    }

    /// [`fold`](Self::fold), each piece starting from a clone of `init`
    /// (rayon's `fold_with`).
    ///
    /// ```
    /// use weft::prelude::*;
    /// let words = vec!["par", "iter", "fold"];
    /// let total: usize = words
    ///     .par_iter()
    ///     .fold_with(0, |len, w| len + w.len())
    ///     .sum();
    /// assert_eq!(total, 11);
    /// ```
    fn fold_with<T, F>(self, init: T, fold_op: F) -> FoldWith<Self, T, F>
    where
        F: Fn(T, Self::Item) -> T + Sync + Send,
        T: Send + Clone,
    {
        FoldSeeded {
            base: self,
            seed: WithClone(init),
            f: fold_op,
        }
    }

    /// [`fold`](Self::fold) with a fallible `fold_op` (rayon's `try_fold`):
    /// yields, per piece, the accumulator wrapped as an output (`Ok`,
    /// `Some`, `Continue`), or the first residual (`Err`, `None`, `Break`)
    /// that stopped that piece's fold. Follow it with
    /// [`try_reduce`](Self::try_reduce) to stop the whole loop there.
    ///
    /// ```
    /// use weft::prelude::*;
    /// let sum = (0..1_000u32)
    ///     .into_par_iter()
    ///     .try_fold(|| 0u32, |sum, x| sum.checked_add(x))
    ///     .try_reduce(|| 0, |a, b| a.checked_add(b));
    /// assert_eq!(sum, Some(499_500));
    /// let overflow = (0..255u8)
    ///     .into_par_iter()
    ///     .try_fold(|| 0u8, |sum, x| sum.checked_add(x))
    ///     .try_reduce(|| 0, |a, b| a.checked_add(b));
    /// assert_eq!(overflow, None);
    /// ```
    fn try_fold<T, R, ID, F>(self, identity: ID, fold_op: F) -> TryFold<Self, ID, F>
    where
        F: Fn(T, Self::Item) -> R + Sync + Send,
        ID: Fn() -> T + Sync + Send,
        R: Try<Output = T> + Send,
    {
        TryFoldSeeded {
            base: self,
            seed: WithInit(identity),
            f: fold_op,
        }
    }

    /// [`try_fold`](Self::try_fold), each piece starting from a clone of
    /// `init` (rayon's `try_fold_with`).
    ///
    /// ```
    /// use weft::prelude::*;
    /// let parsed: Result<Vec<u32>, _> = ["1", "2", "x"]
    ///     .par_iter()
    ///     .try_fold_with(Vec::new(), |mut v, s| {
    ///         v.push(s.parse::<u32>()?);
    ///         Ok::<_, std::num::ParseIntError>(v)
    ///     })
    ///     .try_reduce(Vec::new, |mut a, b| {
    ///         a.extend(b);
    ///         Ok(a)
    ///     });
    /// assert!(parsed.is_err());
    /// ```
    fn try_fold_with<F, T, R>(self, init: T, fold_op: F) -> TryFoldWith<Self, T, F>
    where
        F: Fn(T, Self::Item) -> R + Sync + Send,
        R: Try<Output = T> + Send,
        T: Clone + Send,
    {
        TryFoldSeeded {
            base: self,
            seed: WithClone(init),
            f: fold_op,
        }
    }

    /// Maps each item with a mutable state that each piece the driver
    /// folds clones from `init` (rayon's `map_with`): for a scratch value
    /// or a handle (a channel's sender) that a closure may not share.
    ///
    /// ```
    /// use std::sync::mpsc::channel;
    /// use weft::prelude::*;
    /// let (sender, receiver) = channel();
    /// let doubled: Vec<u32> = (0..5u32)
    ///     .into_par_iter()
    ///     .map_with(sender, |sender, x| {
    ///         sender.send(x).unwrap();
    ///         x * 2
    ///     })
    ///     .collect();
    /// assert_eq!(doubled, [0, 2, 4, 6, 8]);
    /// let mut sent: Vec<u32> = receiver.iter().collect();
    /// sent.sort();
    /// assert_eq!(sent, [0, 1, 2, 3, 4]);
    /// ```
    fn map_with<F, T, R>(self, init: T, map_op: F) -> MapWith<Self, T, F>
    where
        F: Fn(&mut T, Self::Item) -> R + Sync + Send,
        T: Send + Clone,
        R: Send,
    {
        MapSeeded {
            base: self,
            seed: WithClone(init),
            f: map_op,
        }
    }

    /// Maps each item with a mutable state that `init()` makes for each
    /// piece the driver folds (rayon's `map_init`): never once per item
    /// when items are cheap, as a piece then holds many.
    ///
    /// ```
    /// use weft::prelude::*;
    /// let lines: Vec<String> = (0..100u32)
    ///     .into_par_iter()
    ///     .map_init(String::new, |buffer, x| {
    ///         buffer.clear();
    ///         buffer.push_str(&x.to_string());
    ///         buffer.clone()
    ///     })
    ///     .collect();
    /// assert_eq!(lines[42], "42");
    /// ```
    fn map_init<F, INIT, T, R>(self, init: INIT, map_op: F) -> MapInit<Self, INIT, F>
    where
        F: Fn(&mut T, Self::Item) -> R + Sync + Send,
        INIT: Fn() -> T + Sync + Send,
        R: Send,
    {
        MapSeeded {
            base: self,
            seed: WithInit(init),
            f: map_op,
        }
    }

    /// The values of the `Some` items, until a `None` (rayon's
    /// `while_some`): once any piece meets a `None`, every piece stops at
    /// its next item. The items before the first `None` in the input's
    /// order are not all yielded, as pieces after it may have stopped
    /// first, and items after it may be, from pieces that ran ahead;
    /// `collect` keeps the order of those yielded.
    ///
    /// ```
    /// use weft::prelude::*;
    /// let v: Vec<u32> = vec![Some(1), Some(2), None, Some(4)]
    ///     .into_par_iter()
    ///     .while_some()
    ///     .collect();
    /// assert!(!v.contains(&3) && v.len() <= 3);
    /// ```
    fn while_some<T>(self) -> WhileSome<Self>
    where
        Self: ParallelIterator<Item = Option<T>>,
        T: Send,
    {
        WhileSome {
            base: self,
            ended: AtomicBool::new(false),
        }
    }

    /// The same items; once a closure of the loop panics, every piece
    /// stops at its next item rather than at its next chunk (rayon's
    /// `panic_fuse`). The panic reaches the caller either way (see the
    /// [module docs](crate::iter)); the fuse costs a relaxed load per item.
    ///
    /// ```
    /// use std::panic::{catch_unwind, AssertUnwindSafe};
    /// use std::sync::atomic::{AtomicUsize, Ordering};
    /// use weft::prelude::*;
    /// // One thread runs the items, so that how many run after the panic
    /// // does not depend on how the threads were scheduled: with more, the
    /// // others may have run them all while the panicking one waited for a
    /// // core.
    /// let pool = weft::Pool::builder().workers(1).build().unwrap();
    /// let seen = AtomicUsize::new(0);
    /// let result = catch_unwind(AssertUnwindSafe(|| {
    ///     pool.install(|| {
    ///         (0..1_000_000u32).into_par_iter().panic_fuse().for_each(|x| {
    ///             seen.fetch_add(1, Ordering::Relaxed);
    ///             assert!(x != 10, "ten");
    ///         })
    ///     })
    /// }));
    /// assert!(result.is_err());
    /// assert!(seen.into_inner() < 1_000_000);
    /// ```
    fn panic_fuse(self) -> PanicFuse<Self> {
        Gated {
            base: self,
            gate: Fuse::default(),
        }
    }

    /// `n` items, or all if there are fewer, from anywhere in the input
    /// (rayon's `take_any`): the first `n` that pieces get to, whatever
    /// their indices. They keep the input's order between them (in
    /// `collect`, `reduce`); once `n` are taken, every piece stops, and
    /// the items not taken are dropped unused (see [Items by
    /// value](crate::iter#items-by-value)). Which items are taken depends
    /// on timing; [`IndexedParallelIterator::take`] takes the first `n`.
    ///
    /// ```
    /// use weft::prelude::*;
    /// let some: Vec<u32> = (0..1_000u32).into_par_iter().filter(|x| x % 3 == 0).take_any(5).collect();
    /// assert_eq!(some.len(), 5);
    /// assert!(some.windows(2).all(|w| w[0] < w[1]) && some.iter().all(|x| x % 3 == 0));
    /// ```
    fn take_any(self, n: usize) -> TakeAny<Self> {
        Gated {
            base: self,
            gate: Taking {
                limit: n,
                claimed: AtomicUsize::new(0),
            },
        }
    }

    /// All but `n` items from anywhere in the input, or none if there are
    /// fewer (rayon's `skip_any`): the first `n` that pieces get to are
    /// dropped unused, whatever their indices, and the others go on in
    /// the input's order. Which ones are skipped depends on timing;
    /// [`IndexedParallelIterator::skip`] skips the first `n`.
    ///
    /// ```
    /// use weft::prelude::*;
    /// let rest: Vec<u32> = (0..1_000u32).into_par_iter().filter(|x| x % 3 == 0).skip_any(5).collect();
    /// assert_eq!(rest.len(), 329);
    /// assert!(rest.windows(2).all(|w| w[0] < w[1]));
    /// ```
    fn skip_any(self, n: usize) -> SkipAny<Self> {
        Gated {
            base: self,
            gate: Skipping {
                limit: n,
                claimed: AtomicUsize::new(0),
            },
        }
    }

    /// Items from anywhere in the input while `predicate` holds (rayon's
    /// `take_any_while`): the first item that fails it, in whichever piece
    /// meets one first, is dropped and ends every piece at its next item;
    /// the items passed on keep the input's order. Unlike std's
    /// `take_while`, items after the first failure in the input's order
    /// may be passed on (from pieces that got there first), and items
    /// before it left out. `predicate` may look at shared state, not only
    /// the item.
    ///
    /// ```
    /// use weft::prelude::*;
    /// let small: Vec<u32> = (0..1_000u32).into_par_iter().take_any_while(|&x| x < 500).collect();
    /// assert!(small.len() <= 500 && small.iter().all(|&x| x < 500));
    /// assert!(small.windows(2).all(|w| w[0] < w[1]));
    /// ```
    fn take_any_while<P>(self, predicate: P) -> TakeAnyWhile<Self, P>
    where
        P: Fn(&Self::Item) -> bool + Sync + Send,
    {
        Gated {
            base: self,
            gate: TakingWhile {
                predicate,
                ended: AtomicBool::new(false),
            },
        }
    }

    /// Drops items from anywhere in the input while `predicate` holds
    /// (rayon's `skip_any_while`): once an item fails it, in whichever
    /// piece meets one first, that item and every item any piece pulls
    /// after it go on, `predicate` unasked. What goes on keeps the input's
    /// order; which items are dropped depends on timing.
    ///
    /// ```
    /// use weft::prelude::*;
    /// let rest: Vec<u32> = (0..1_000u32).into_par_iter().skip_any_while(|&x| x < 500).collect();
    /// assert!(rest.len() >= 500 && rest.windows(2).all(|w| w[0] < w[1]));
    /// ```
    fn skip_any_while<P>(self, predicate: P) -> SkipAnyWhile<Self, P>
    where
        P: Fn(&Self::Item) -> bool + Sync + Send,
    {
        Gated {
            base: self,
            gate: SkippingWhile {
                predicate,
                ended: AtomicBool::new(false),
            },
        }
    }

    /// Calls `f` on a reference to each item, which then goes on
    /// unchanged (rayon's `inspect`).
    ///
    /// ```
    /// use std::sync::atomic::{AtomicUsize, Ordering};
    /// use weft::prelude::*;
    /// let seen = AtomicUsize::new(0);
    /// let sum: u32 = (1..11u32)
    ///     .into_par_iter()
    ///     .inspect(|_| {
    ///         seen.fetch_add(1, Ordering::Relaxed);
    ///     })
    ///     .sum();
    /// assert_eq!((sum, seen.into_inner()), (55, 10));
    /// ```
    fn inspect<F>(self, inspect_op: F) -> Inspect<Self, F>
    where
        F: Fn(&Self::Item) + Sync + Send,
    {
        Inspect {
            base: self,
            f: inspect_op,
        }
    }

    /// Changes each item in place with `f`, which then goes on (rayon's
    /// `update`).
    ///
    /// ```
    /// use weft::prelude::*;
    /// let v: Vec<Vec<u32>> = (0..3u32)
    ///     .into_par_iter()
    ///     .map(|x| vec![x])
    ///     .update(|v| v.push(9))
    ///     .collect();
    /// assert_eq!(v, [vec![0, 9], vec![1, 9], vec![2, 9]]);
    /// ```
    fn update<F>(self, update_op: F) -> Update<Self, F>
    where
        F: Fn(&mut Self::Item) + Sync + Send,
    {
        Update {
            base: self,
            f: update_op,
        }
    }

    /// The same items, split by a tree that depends only on the input's
    /// length and the pool's worker count, never on timing: a reduction
    /// that is not associative in practice (floating-point addition) then
    /// gives the same result on every run. Costs the adaptive splitting's
    /// response to idle workers.
    ///
    /// ```
    /// use weft::prelude::*;
    /// let xs: Vec<f64> = (0..100_000).map(|i| 1.0 / (1.0 + i as f64)).collect();
    /// let first = xs.par_iter().deterministic().sum::<f64>();
    /// for _ in 0..5 {
    ///     assert_eq!(xs.par_iter().deterministic().sum::<f64>().to_bits(), first.to_bits());
    /// }
    /// ```
    fn deterministic(self) -> Hinted<Self> {
        Hinted {
            base: self,
            hint: Hint::Deterministic,
        }
    }

    /// A clone of `separator` between each two items (rayon's
    /// `intersperse`). On an indexed iterator the result is indexed too
    /// (`len`, `zip`, `rev`...), and the items are woven as the loop
    /// produces them. An unindexed iterator's pieces cannot know whether
    /// an earlier piece yields anything (a `filter`'s may not), so its
    /// items are first gathered, in order, into a `Vec` that the loop then
    /// weaves: a separator never starts or ends the result, at the cost of
    /// holding every item at once and of running the base whole, even
    /// before a search that stops early.
    ///
    /// # Panics
    ///
    /// When the result would be longer than `usize::MAX` (or, unindexed,
    /// the base's input is `usize::MAX` items long), before running
    /// anything.
    ///
    /// ```
    /// use weft::prelude::*;
    /// let csv: String = ["a", "b", "c"].par_iter().copied().intersperse(",").collect();
    /// assert_eq!(csv, "a,b,c");
    /// let evens: Vec<u32> = (0..7u32).into_par_iter().filter(|x| x % 2 == 0).intersperse(9).collect();
    /// assert_eq!(evens, [0, 9, 2, 9, 4, 9, 6]);
    /// ```
    fn intersperse(self, separator: Self::Item) -> Intersperse<Self>
    where
        Self::Item: Clone,
    {
        Intersperse::new(self, separator)
    }

    // ------------------------------------------------------ consumers

    /// Calls `f` on every item.
    fn for_each<F>(mut self, f: F)
    where
        F: Fn(Self::Item) + Sync + Send,
    {
        self.drive_with(&ForEach(&f));
    }

    /// Calls `op` on every item with a mutable state that each piece the
    /// driver folds clones from `init` (rayon's `for_each_with`).
    ///
    /// ```
    /// use std::sync::mpsc::channel;
    /// use weft::prelude::*;
    /// let (sender, receiver) = channel();
    /// (0..5u32)
    ///     .into_par_iter()
    ///     .for_each_with(sender, |sender, x| sender.send(x).unwrap());
    /// assert_eq!(receiver.iter().sum::<u32>(), 10);
    /// ```
    fn for_each_with<OP, T>(self, init: T, op: OP)
    where
        OP: Fn(&mut T, Self::Item) + Sync + Send,
        T: Send + Clone,
    {
        self.map_with(init, op).for_each(|()| ());
    }

    /// Calls `op` on every item with a mutable state that `init()` makes
    /// for each piece the driver folds (rayon's `for_each_init`).
    ///
    /// ```
    /// use std::sync::atomic::{AtomicUsize, Ordering};
    /// use weft::prelude::*;
    /// let digits = AtomicUsize::new(0);
    /// (0..100u32).into_par_iter().for_each_init(String::new, |s, x| {
    ///     s.clear();
    ///     s.push_str(&x.to_string());
    ///     digits.fetch_add(s.len(), Ordering::Relaxed);
    /// });
    /// assert_eq!(digits.into_inner(), 190);
    /// ```
    fn for_each_init<OP, INIT, T>(self, init: INIT, op: OP)
    where
        OP: Fn(&mut T, Self::Item) + Sync + Send,
        INIT: Fn() -> T + Sync + Send,
    {
        self.map_init(init, op).for_each(|()| ());
    }

    /// Calls `op` on every item until one call returns a residual (`Err`,
    /// `None`, `Break`), which is returned; else the output `()` (rayon's
    /// `try_for_each`). Once a residual is found, the pieces not yet
    /// started are skipped and the started ones stop at their next item,
    /// as for [`find_any`](Self::find_any); the items not looked at are
    /// dropped unused. When several calls fail, which residual is
    /// returned depends on timing.
    ///
    /// ```
    /// use weft::prelude::*;
    /// let checked = (0..1_000u32)
    ///     .into_par_iter()
    ///     .try_for_each(|x| if x < 500 { Ok(()) } else { Err(x) });
    /// assert!(matches!(checked, Err(x) if x >= 500));
    /// assert_eq!((0..10u32).into_par_iter().try_for_each(|_| Some(())), Some(()));
    /// ```
    fn try_for_each<OP, R>(self, op: OP) -> R
    where
        OP: Fn(Self::Item) -> R + Sync + Send,
        R: Try<Output = ()> + Send,
    {
        self.map(op).try_reduce(|| (), |(), ()| R::from_output(()))
    }

    /// [`try_for_each`](Self::try_for_each) with a mutable state that each
    /// piece clones from `init` (rayon's `try_for_each_with`).
    ///
    /// ```
    /// use std::sync::mpsc::channel;
    /// use weft::prelude::*;
    /// let (sender, receiver) = channel();
    /// let sent = (0..5u32)
    ///     .into_par_iter()
    ///     .try_for_each_with(sender, |sender, x| sender.send(x));
    /// assert!(sent.is_ok());
    /// assert_eq!(receiver.iter().count(), 5);
    /// ```
    fn try_for_each_with<OP, T, R>(self, init: T, op: OP) -> R
    where
        OP: Fn(&mut T, Self::Item) -> R + Sync + Send,
        T: Send + Clone,
        R: Try<Output = ()> + Send,
    {
        self.map_with(init, op)
            .try_reduce(|| (), |(), ()| R::from_output(()))
    }

    /// [`try_for_each`](Self::try_for_each) with a mutable state that
    /// `init()` makes for each piece (rayon's `try_for_each_init`).
    ///
    /// ```
    /// use std::fmt::Write;
    /// use weft::prelude::*;
    /// let written = (0..100u32).into_par_iter().try_for_each_init(String::new, |s, x| {
    ///     s.clear();
    ///     write!(s, "{x}")
    /// });
    /// assert!(written.is_ok());
    /// ```
    fn try_for_each_init<OP, INIT, T, R>(self, init: INIT, op: OP) -> R
    where
        OP: Fn(&mut T, Self::Item) -> R + Sync + Send,
        INIT: Fn() -> T + Sync + Send,
        R: Try<Output = ()> + Send,
    {
        self.map_init(init, op)
            .try_reduce(|| (), |(), ()| R::from_output(()))
    }

    /// Sums the items.
    fn sum<S>(mut self) -> S
    where
        S: Send + std::iter::Sum<Self::Item> + std::iter::Sum<S>,
    {
        self.drive_with(&Sum(PhantomData))
    }

    /// Multiplies the items.
    fn product<P>(mut self) -> P
    where
        P: Send + std::iter::Product<Self::Item> + std::iter::Product<P>,
    {
        self.drive_with(&Product(PhantomData))
    }

    /// Counts the items.
    fn count(mut self) -> usize {
        self.drive_with(&Count)
    }

    /// Combines the items with `op`, starting each piece from `identity()`;
    /// `op` must be associative for a result independent of the splits.
    fn reduce<ID, OP>(mut self, identity: ID, op: OP) -> Self::Item
    where
        ID: Fn() -> Self::Item + Sync + Send,
        OP: Fn(Self::Item, Self::Item) -> Self::Item + Sync + Send,
    {
        self.drive_with(&ReduceWith {
            identity: &identity,
            op: &op,
        })
    }

    /// [`reduce`](Self::reduce) without an identity (rayon's
    /// `reduce_with`): `None` when there are no items, else the items
    /// combined by `op`, neighbours left then right, so an associative
    /// `op` gives the sequential `Iterator::reduce`'s result.
    ///
    /// ```
    /// use weft::prelude::*;
    /// let longest = ["a", "abc", "ab"].par_iter().copied().reduce_with(|a, b| {
    ///     if b.len() > a.len() { b } else { a }
    /// });
    /// assert_eq!(longest, Some("abc"));
    /// assert_eq!(Vec::<u32>::new().into_par_iter().reduce_with(|a, b| a + b), None);
    /// ```
    fn reduce_with<OP>(mut self, op: OP) -> Option<Self::Item>
    where
        OP: Fn(Self::Item, Self::Item) -> Self::Item + Sync + Send,
    {
        self.drive_with(&ReduceOptional(&op))
    }

    /// [`reduce`](Self::reduce) over fallible items with a fallible `op`
    /// (rayon's `try_reduce`): the items' outputs (`Ok`'s, `Some`'s or
    /// `Continue`'s values) are combined by `op`, each piece starting from
    /// `identity()`, until an item or a combination is a residual (`Err`,
    /// `None`, `Break`), which is returned. Then the pieces not yet
    /// started are skipped and the started ones stop at their next item,
    /// as for [`find_any`](Self::find_any), dropping what they did not
    /// look at; of several residuals, which one is returned depends on
    /// timing.
    ///
    /// ```
    /// use weft::prelude::*;
    /// let total = (1..101u64)
    ///     .into_par_iter()
    ///     .map(Some)
    ///     .try_reduce(|| 0, |a, b| a.checked_add(b));
    /// assert_eq!(total, Some(5050));
    /// let parsed: Result<u32, _> = ["1", "2", "three"]
    ///     .par_iter()
    ///     .map(|s| s.parse::<u32>())
    ///     .try_reduce(|| 0, |a, b| Ok(a + b));
    /// assert!(parsed.is_err());
    /// ```
    fn try_reduce<T, OP, ID>(mut self, identity: ID, op: OP) -> Self::Item
    where
        OP: Fn(T, T) -> Self::Item + Sync + Send,
        ID: Fn() -> T + Sync + Send,
        Self::Item: Try<Output = T>,
    {
        self.drive_with(&TryReduce {
            identity: &identity,
            op: &op,
            stopped: AtomicBool::new(false),
        })
    }

    /// [`try_reduce`](Self::try_reduce) without an identity (rayon's
    /// `try_reduce_with`): `None` when there are no items, else the
    /// combination of all the outputs or a residual. `T` must be `Send`,
    /// as the outputs travel between workers.
    ///
    /// ```
    /// use weft::prelude::*;
    /// let max = (1..101u32)
    ///     .into_par_iter()
    ///     .map(Ok::<u32, String>)
    ///     .try_reduce_with(|a, b| Ok(a.max(b)));
    /// assert_eq!(max, Some(Ok(100)));
    /// let none = Vec::<Option<u32>>::new().into_par_iter().try_reduce_with(|a, b| a.checked_add(b));
    /// assert_eq!(none, None);
    /// ```
    fn try_reduce_with<T, OP>(self, op: OP) -> Option<Self::Item>
    where
        OP: Fn(T, T) -> Self::Item + Sync + Send,
        Self::Item: Try<Output = T>,
        T: Send,
    {
        use std::ops::ControlFlow;
        // The outputs as `Some`, so that `None` is the missing identity;
        // a residual rides in `Break` whole.
        let lifted = |item: Self::Item| match item.branch() {
            ControlFlow::Continue(output) => ControlFlow::Continue(Some(output)),
            ControlFlow::Break(residual) => ControlFlow::Break(Self::Item::from_residual(residual)),
        };
        let combine = |left: Option<T>, right: Option<T>| match (left, right) {
            (Some(left), Some(right)) => lifted(op(left, right)),
            (left, right) => ControlFlow::Continue(left.or(right)),
        };
        match self.map(lifted).try_reduce(|| None, combine) {
            ControlFlow::Continue(output) => output.map(Self::Item::from_output),
            ControlFlow::Break(residual) => Some(residual),
        }
    }

    /// The least item; the first of equal ones.
    fn min(self) -> Option<Self::Item>
    where
        Self::Item: Ord,
    {
        self.min_by(Ord::cmp)
    }

    /// The greatest item; the last of equal ones.
    fn max(self) -> Option<Self::Item>
    where
        Self::Item: Ord,
    {
        self.max_by(Ord::cmp)
    }

    /// The least item by `compare`; the first of equal ones.
    fn min_by<F>(mut self, compare: F) -> Option<Self::Item>
    where
        F: Fn(&Self::Item, &Self::Item) -> std::cmp::Ordering + Sync + Send,
    {
        self.drive_with(&MinMax {
            compare: &compare,
            keep: Extreme::Min,
        })
    }

    /// The greatest item by `compare`; the last of equal ones.
    fn max_by<F>(mut self, compare: F) -> Option<Self::Item>
    where
        F: Fn(&Self::Item, &Self::Item) -> std::cmp::Ordering + Sync + Send,
    {
        self.drive_with(&MinMax {
            compare: &compare,
            keep: Extreme::Max,
        })
    }

    /// The item with the least key; the first of equal ones.
    fn min_by_key<K, F>(self, key: F) -> Option<Self::Item>
    where
        K: Ord,
        F: Fn(&Self::Item) -> K + Sync + Send,
    {
        self.min_by(|a, b| key(a).cmp(&key(b)))
    }

    /// The item with the greatest key; the last of equal ones.
    fn max_by_key<K, F>(self, key: F) -> Option<Self::Item>
    where
        K: Ord,
        F: Fn(&Self::Item) -> K + Sync + Send,
    {
        self.max_by(|a, b| key(a).cmp(&key(b)))
    }

    /// Collects the items, in order, into any [`FromParallelIterator`]
    /// collection (`Vec`, `HashMap`, `String`...).
    fn collect<C>(self) -> C
    where
        C: FromParallelIterator<Self::Item>,
    {
        C::from_par_iter(self)
    }

    /// The items in `Vec`s, one per piece the driver folded, linked in the
    /// input's order (rayon's `collect_vec_list`): what a `collect` into a
    /// `Vec` gathers before joining them, without the copy that joins
    /// them. No `Vec` in the list is empty.
    ///
    /// ```
    /// use weft::prelude::*;
    /// let pieces = (0..100u32).into_par_iter().filter(|x| x % 2 == 0).collect_vec_list();
    /// let flat: Vec<u32> = pieces.into_iter().flatten().collect();
    /// assert_eq!(flat, (0..100).step_by(2).collect::<Vec<_>>());
    /// ```
    fn collect_vec_list(mut self) -> LinkedList<Vec<Self::Item>> {
        collect::collect_pieces(&mut self)
    }

    /// Splits pairs into two collections, each in the input's order
    /// (rayon's `unzip`): the first of each pair into `FromA`, the second
    /// into `FromB`.
    ///
    /// ```
    /// use weft::prelude::*;
    /// let (squares, cubes): (Vec<u32>, Vec<u32>) =
    ///     (1..4u32).into_par_iter().map(|x| (x * x, x * x * x)).unzip();
    /// assert_eq!((squares, cubes), (vec![1, 4, 9], vec![1, 8, 27]));
    /// ```
    fn unzip<A, B, FromA, FromB>(self) -> (FromA, FromB)
    where
        Self: ParallelIterator<Item = (A, B)>,
        A: Send,
        B: Send,
        FromA: Default + Send + ParallelExtend<A>,
        FromB: Default + Send + ParallelExtend<B>,
    {
        let (a, b) = partition::unzip_pieces(self);
        (partition::gather(a), partition::gather(b))
    }

    /// Splits the items into two collections, each in the input's order
    /// (rayon's `partition`): those for which `predicate` holds into `A`,
    /// the others into `B`.
    ///
    /// ```
    /// use weft::prelude::*;
    /// let (even, odd): (Vec<u32>, Vec<u32>) = (0..7u32).into_par_iter().partition(|x| x % 2 == 0);
    /// assert_eq!((even, odd), (vec![0, 2, 4, 6], vec![1, 3, 5]));
    /// ```
    fn partition<A, B, P>(self, predicate: P) -> (A, B)
    where
        A: Default + Send + ParallelExtend<Self::Item>,
        B: Default + Send + ParallelExtend<Self::Item>,
        P: Fn(&Self::Item) -> bool + Sync + Send,
    {
        self.partition_map(|item| {
            if predicate(&item) {
                Either::Left(item)
            } else {
                Either::Right(item)
            }
        })
    }

    /// Maps each item to an [`Either`] and collects the `Left` values into
    /// `A` and the `Right` ones into `B`, each in the input's order
    /// (rayon's `partition_map`).
    ///
    /// ```
    /// use weft::iter::Either;
    /// use weft::prelude::*;
    /// let (numbers, words): (Vec<u32>, Vec<&str>) = ["1", "two", "3"]
    ///     .par_iter()
    ///     .partition_map(|s| match s.parse::<u32>() {
    ///         Ok(n) => Either::Left(n),
    ///         Err(_) => Either::Right(*s),
    ///     });
    /// assert_eq!((numbers, words), (vec![1, 3], vec!["two"]));
    /// ```
    fn partition_map<A, B, P, L, R>(self, predicate: P) -> (A, B)
    where
        A: Default + Send + ParallelExtend<L>,
        B: Default + Send + ParallelExtend<R>,
        P: Fn(Self::Item) -> Either<L, R> + Sync + Send,
        L: Send,
        R: Send,
    {
        let (lefts, rights) = partition::either_sides(self.map(predicate));
        (partition::gather(lefts), partition::gather(rights))
    }

    /// Some item for which `predicate` holds, if any: whichever a worker
    /// finds first. The pieces not yet started are skipped once one is
    /// found, and their items dropped unused (see [Items by
    /// value](crate::iter#items-by-value)).
    fn find_any<P>(mut self, predicate: P) -> Option<Self::Item>
    where
        P: Fn(&Self::Item) -> bool + Sync + Send,
    {
        let matches = |item: Self::Item| predicate(&item).then_some(item);
        self.drive_with(&FindAny {
            found: AtomicBool::new(false),
            matches: &matches,
        })
    }

    /// [`find_any`](Self::find_any), under the name rayon keeps for old
    /// code.
    #[deprecated(note = "use `find_any`, or `find_first` for the first match in order")]
    #[doc(hidden)]
    fn find<P>(self, predicate: P) -> Option<Self::Item>
    where
        P: Fn(&Self::Item) -> bool + Sync + Send,
    {
        self.find_any(predicate)
    }

    /// The first item, in the input's order, for which `predicate` holds.
    /// The items it need not look at are dropped unused (see [Items by
    /// value](crate::iter#items-by-value)).
    fn find_first<P>(mut self, predicate: P) -> Option<Self::Item>
    where
        P: Fn(&Self::Item) -> bool + Sync + Send,
    {
        let matches = |item: Self::Item| predicate(&item).then_some(item);
        self.drive_with(&FindFirst {
            best: AtomicUsize::new(usize::MAX),
            matches: &matches,
        })
    }

    /// The last item, in the input's order, for which `predicate` holds
    /// (rayon's `find_last`). The pieces left of a piece with a match are
    /// skipped, and what is not looked at dropped unused.
    ///
    /// ```
    /// use weft::prelude::*;
    /// assert_eq!((0..100u32).into_par_iter().find_last(|x| x % 7 == 0), Some(98));
    /// ```
    fn find_last<P>(mut self, predicate: P) -> Option<Self::Item>
    where
        P: Fn(&Self::Item) -> bool + Sync + Send,
    {
        let matches = |item: Self::Item| predicate(&item).then_some(item);
        self.drive_with(&FindLast {
            best: AtomicUsize::new(0),
            matches: &matches,
        })
    }

    /// Some `Some` that `f` returns for an item, whichever a worker finds
    /// first (rayon's `find_map_any`); stops as [`find_any`](Self::find_any).
    ///
    /// ```
    /// use weft::prelude::*;
    /// let parsed = ["a", "7", "b"].par_iter().find_map_any(|s| s.parse::<u32>().ok());
    /// assert_eq!(parsed, Some(7));
    /// ```
    fn find_map_any<F, R>(mut self, f: F) -> Option<R>
    where
        F: Fn(Self::Item) -> Option<R> + Sync + Send,
        R: Send,
    {
        self.drive_with(&FindAny {
            found: AtomicBool::new(false),
            matches: &f,
        })
    }

    /// The first `Some`, in the input's order, that `f` returns for an item
    /// (rayon's `find_map_first`); stops as [`find_first`](Self::find_first).
    ///
    /// ```
    /// use weft::prelude::*;
    /// let first = ["a", "7", "8"].par_iter().find_map_first(|s| s.parse::<u32>().ok());
    /// assert_eq!(first, Some(7));
    /// ```
    fn find_map_first<F, R>(mut self, f: F) -> Option<R>
    where
        F: Fn(Self::Item) -> Option<R> + Sync + Send,
        R: Send,
    {
        self.drive_with(&FindFirst {
            best: AtomicUsize::new(usize::MAX),
            matches: &f,
        })
    }

    /// The last `Some`, in the input's order, that `f` returns for an item
    /// (rayon's `find_map_last`); skips as [`find_last`](Self::find_last).
    ///
    /// ```
    /// use weft::prelude::*;
    /// let last = ["a", "7", "8"].par_iter().find_map_last(|s| s.parse::<u32>().ok());
    /// assert_eq!(last, Some(8));
    /// ```
    fn find_map_last<F, R>(mut self, f: F) -> Option<R>
    where
        F: Fn(Self::Item) -> Option<R> + Sync + Send,
        R: Send,
    {
        self.drive_with(&FindLast {
            best: AtomicUsize::new(0),
            matches: &f,
        })
    }

    /// Whether `predicate` holds for some item; stops once one is found,
    /// and drops the items it did not look at unused.
    fn any<P>(mut self, predicate: P) -> bool
    where
        P: Fn(Self::Item) -> bool + Sync + Send,
    {
        let matches = |item: Self::Item| predicate(item).then_some(());
        self.drive_with(&FindAny {
            found: AtomicBool::new(false),
            matches: &matches,
        })
        .is_some()
    }

    /// Whether `predicate` holds for every item; stops at the first that
    /// fails it, and drops the items it did not look at unused.
    fn all<P>(mut self, predicate: P) -> bool
    where
        P: Fn(Self::Item) -> bool + Sync + Send,
    {
        let fails = |item: Self::Item| (!predicate(item)).then_some(());
        self.drive_with(&FindAny {
            found: AtomicBool::new(false),
            matches: &fails,
        })
        .is_none()
    }
}

/// A parallel iterator that knows its length and the index of each item,
/// so it can be zipped, enumerated and cut (rayon's
/// `IndexedParallelIterator`).
pub trait IndexedParallelIterator: ParallelIterator {
    /// The number of items.
    fn len(&self) -> usize;

    /// Whether there are no items.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Pairs each item with its index.
    ///
    /// # Panics
    ///
    /// When the items are more than `usize::MAX` (a [`chain`](ParallelIterator::chain)),
    /// whose last indices would not fit.
    fn enumerate(self) -> Enumerate<Self> {
        Enumerate { base: self }
    }

    /// Pairs items with `other`'s, as long as the shorter of the two; the
    /// longer one's extra items are dropped unused (see [Items by
    /// value](crate::iter#items-by-value)).
    fn zip<Z>(self, other: Z) -> Zip<Self, Z::Iter>
    where
        Z: IntoParallelIterator,
        Z::Iter: IndexedParallelIterator,
    {
        Zip {
            a: self,
            b: other.into_par_iter(),
        }
    }

    /// Pairs items with `other`'s, which must be as long (rayon's
    /// `zip_eq`).
    ///
    /// # Panics
    ///
    /// If the two lengths differ, at the call, before anything runs.
    ///
    /// ```
    /// use weft::prelude::*;
    /// let pairs: Vec<(u32, char)> = vec![1, 2].into_par_iter().zip_eq(vec!['a', 'b']).collect();
    /// assert_eq!(pairs, [(1, 'a'), (2, 'b')]);
    /// ```
    fn zip_eq<Z>(self, other: Z) -> ZipEq<Self, Z::Iter>
    where
        Z: IntoParallelIterator,
        Z::Iter: IndexedParallelIterator,
    {
        let other = other.into_par_iter();
        let (len, other_len) = (self.len(), other.len());
        assert_eq!(len, other_len, "zip_eq of iterators of different lengths");
        self.zip(other)
    }

    /// The first `n` items; the others are dropped unused (see [Items by
    /// value](crate::iter#items-by-value)).
    fn take(self, n: usize) -> Take<Self> {
        Take { base: self, n }
    }

    /// All but the first `n` items, which are dropped unused (see [Items by
    /// value](crate::iter#items-by-value)).
    fn skip(self, n: usize) -> Skip<Self> {
        Skip { base: self, n }
    }

    /// The items in the opposite order (rayon's `rev`).
    ///
    /// Producers in weft need not read backwards: each piece yields its
    /// items by splitting the last one off, a split of its source per item
    /// (a few instructions for a slice or a range).
    ///
    /// ```
    /// use weft::prelude::*;
    /// let v: Vec<u32> = (0..5u32).into_par_iter().rev().collect();
    /// assert_eq!(v, [4, 3, 2, 1, 0]);
    /// ```
    fn rev(self) -> Rev<Self> {
        Rev { base: self }
    }

    /// The items at indices 0, `step`, `2 * step`... (rayon's `step_by`).
    ///
    /// # Panics
    ///
    /// If `step` is 0.
    ///
    /// ```
    /// use weft::prelude::*;
    /// let v: Vec<u32> = (0..10u32).into_par_iter().step_by(4).collect();
    /// assert_eq!(v, [0, 4, 8]);
    /// ```
    fn step_by(self, step: usize) -> StepBy<Self> {
        assert!(step != 0, "step_by's step must be non-zero");
        StepBy { base: self, step }
    }

    /// The items in `Vec`s of `chunk_size`, in order, the last one
    /// possibly shorter (rayon's `chunks`).
    ///
    /// # Panics
    ///
    /// If `chunk_size` is 0.
    ///
    /// ```
    /// use weft::prelude::*;
    /// let v: Vec<Vec<u32>> = (0..5u32).into_par_iter().chunks(2).collect();
    /// assert_eq!(v, [vec![0, 1], vec![2, 3], vec![4]]);
    /// ```
    fn chunks(self, chunk_size: usize) -> IterChunks<Self> {
        assert!(chunk_size != 0, "chunk size must be non-zero");
        IterChunks {
            base: self,
            size: chunk_size,
        }
    }

    /// Each run of `chunk_size` items, in order, the last possibly
    /// shorter, folded by `fold_op` from `identity()` (rayon's
    /// `fold_chunks`): [`chunks`](Self::chunks) without the `Vec`s. Unlike
    /// [`fold`](ParallelIterator::fold), whose runs are the driver's
    /// pieces, the runs are fixed by `chunk_size` alone.
    ///
    /// # Panics
    ///
    /// If `chunk_size` is 0.
    ///
    /// ```
    /// use weft::prelude::*;
    /// let sums: Vec<u32> = (1..=7u32).into_par_iter().fold_chunks(3, || 0, |a, x| a + x).collect();
    /// assert_eq!(sums, [6, 15, 7]);
    /// ```
    fn fold_chunks<T, ID, F>(
        self,
        chunk_size: usize,
        identity: ID,
        fold_op: F,
    ) -> FoldChunks<Self, ID, F>
    where
        ID: Fn() -> T + Send + Sync,
        F: Fn(T, Self::Item) -> T + Send + Sync,
        T: Send,
    {
        assert!(chunk_size != 0, "chunk size must be non-zero");
        FoldChunksSeeded {
            base: self,
            size: chunk_size,
            seed: WithInit(identity),
            f: fold_op,
        }
    }

    /// [`fold_chunks`](Self::fold_chunks), each chunk folded from a clone
    /// of `init` (rayon's `fold_chunks_with`).
    ///
    /// # Panics
    ///
    /// If `chunk_size` is 0.
    ///
    /// ```
    /// use weft::prelude::*;
    /// let words: Vec<String> = ["a", "b", "c"].par_iter().fold_chunks_with(2, String::new(), |s, w| s + w).collect();
    /// assert_eq!(words, ["ab", "c"]);
    /// ```
    fn fold_chunks_with<T, F>(
        self,
        chunk_size: usize,
        init: T,
        fold_op: F,
    ) -> FoldChunksWith<Self, T, F>
    where
        T: Send + Clone,
        F: Fn(T, Self::Item) -> T + Send + Sync,
    {
        assert!(chunk_size != 0, "chunk size must be non-zero");
        FoldChunksSeeded {
            base: self,
            size: chunk_size,
            seed: WithClone(init),
            f: fold_op,
        }
    }

    /// The same items, the loop run as blocks of `block_size` items, one
    /// after the other (rayon's `by_uniform_blocks`): each block splits
    /// across the pool as a whole loop would, and the next starts once it
    /// has ended, so a search that finds its answer in a block
    /// (`find_first`, `any`, `try_for_each`...) does not start the blocks
    /// after it, and a `fold` never folds across two blocks.
    ///
    /// Unlike rayon's, the result stays indexed (`zip`, `collect` into
    /// place...); the blocks then count the items of the iterator the loop
    /// runs, which are this one's unless an adapter after it groups or
    /// spreads them (`chunks`, `step_by`, `intersperse`).
    ///
    /// # Panics
    ///
    /// If `block_size` is 0.
    ///
    /// ```
    /// use weft::prelude::*;
    /// let firsts: Vec<u32> = (0..10u32)
    ///     .into_par_iter()
    ///     .by_uniform_blocks(4)
    ///     .fold(|| None, |first: Option<u32>, x| first.or(Some(x)))
    ///     .flatten_iter()
    ///     .collect();
    /// // No fold spans two blocks: 0, 4 and 8 each start one.
    /// assert!([0, 4, 8].iter().all(|x| firsts.contains(x)));
    /// ```
    fn by_uniform_blocks(self, block_size: usize) -> UniformBlocks<Self> {
        assert!(block_size != 0, "block size must be non-zero");
        Hinted {
            base: self,
            hint: Hint::Blocks(plumbing::Blocks::Uniform(block_size)),
        }
    }

    /// The same items, the loop run as blocks one after the other, the
    /// first of one item per worker and each next one twice as long
    /// (rayon's `by_exponential_blocks`): a search whose answer is near
    /// the front (`find_first`) stops after a few short blocks instead of
    /// having half the pool work on the back half, at the cost of a few
    /// more loops on a long input (their number grows with the log of its
    /// length). Indexed, as [`by_uniform_blocks`](Self::by_uniform_blocks).
    ///
    /// ```
    /// use weft::prelude::*;
    /// let found = (0..1_000_000u32).into_par_iter().by_exponential_blocks().find_first(|&x| x == 4_999);
    /// assert_eq!(found, Some(4_999));
    /// ```
    fn by_exponential_blocks(self) -> ExponentialBlocks<Self> {
        Hinted {
            base: self,
            hint: Hint::Blocks(plumbing::Blocks::Exponential),
        }
    }

    /// The items compared with `other`'s in order, as std's
    /// `Iterator::cmp` (rayon's `cmp`): by the first pair that differs,
    /// else by the lengths. Stops as
    /// [`find_first`](ParallelIterator::find_first) once a pair differs.
    ///
    /// ```
    /// use std::cmp::Ordering;
    /// use weft::prelude::*;
    /// assert_eq!([1, 2, 3].par_iter().cmp(&[1, 2, 4]), Ordering::Less);
    /// assert_eq!([1, 2].par_iter().cmp(&[1, 2, 0]), Ordering::Less);
    /// assert_eq!((0..9).into_par_iter().cmp(0..9), Ordering::Equal);
    /// ```
    fn cmp<I>(self, other: I) -> std::cmp::Ordering
    where
        I: IntoParallelIterator<Item = Self::Item>,
        I::Iter: IndexedParallelIterator,
        Self::Item: Ord,
    {
        let other = other.into_par_iter();
        let lengths = self.len().cmp(&other.len());
        self.zip(other)
            .map(|(a, b)| Ord::cmp(&a, &b))
            .find_first(|order| order.is_ne())
            .unwrap_or(lengths)
    }

    /// The items compared with `other`'s in order, as std's
    /// `Iterator::partial_cmp` (rayon's `partial_cmp`): by the first pair
    /// that is not equal (`None` if that pair is unordered), else by the
    /// lengths.
    ///
    /// ```
    /// use std::cmp::Ordering;
    /// use weft::prelude::*;
    /// assert_eq!([1.0, 2.0].par_iter().partial_cmp(&[1.0, 3.0]), Some(Ordering::Less));
    /// assert_eq!([f64::NAN].par_iter().partial_cmp(&[1.0]), None);
    /// ```
    fn partial_cmp<I>(self, other: I) -> Option<std::cmp::Ordering>
    where
        I: IntoParallelIterator,
        I::Iter: IndexedParallelIterator,
        Self::Item: PartialOrd<I::Item>,
    {
        let other = other.into_par_iter();
        let lengths = self.len().cmp(&other.len());
        self.zip(other)
            .map(|(a, b)| PartialOrd::partial_cmp(&a, &b))
            .find_first(|order| *order != Some(std::cmp::Ordering::Equal))
            .unwrap_or(Some(lengths))
    }

    /// Whether the items equal `other`'s, pair by pair, and the lengths
    /// are equal (rayon's `eq`). Different lengths answer at once; else
    /// it stops as [`all`](ParallelIterator::all) at a pair that differs.
    ///
    /// ```
    /// use weft::prelude::*;
    /// assert!((0..5).into_par_iter().eq(vec![0, 1, 2, 3, 4]));
    /// assert!(!(0..5).into_par_iter().eq(0..4));
    /// ```
    fn eq<I>(self, other: I) -> bool
    where
        I: IntoParallelIterator,
        I::Iter: IndexedParallelIterator,
        Self::Item: PartialEq<I::Item>,
    {
        let other = other.into_par_iter();
        self.len() == other.len() && self.zip(other).all(|(a, b)| a == b)
    }

    /// `!self.eq(other)` (rayon's `ne`).
    ///
    /// ```
    /// use weft::prelude::*;
    /// assert!([1, 2].par_iter().ne(&[1, 3]));
    /// ```
    fn ne<I>(self, other: I) -> bool
    where
        I: IntoParallelIterator,
        I::Iter: IndexedParallelIterator,
        Self::Item: PartialEq<I::Item>,
    {
        !IndexedParallelIterator::eq(self, other)
    }

    /// Whether [`partial_cmp`](Self::partial_cmp) is `Less` (rayon's `lt`).
    ///
    /// ```
    /// use weft::prelude::*;
    /// assert!([1, 2].par_iter().lt(&[1, 3]));
    /// ```
    fn lt<I>(self, other: I) -> bool
    where
        I: IntoParallelIterator,
        I::Iter: IndexedParallelIterator,
        Self::Item: PartialOrd<I::Item>,
    {
        IndexedParallelIterator::partial_cmp(self, other).is_some_and(std::cmp::Ordering::is_lt)
    }

    /// Whether [`partial_cmp`](Self::partial_cmp) is `Less` or `Equal`
    /// (rayon's `le`).
    ///
    /// ```
    /// use weft::prelude::*;
    /// assert!([1, 2].par_iter().le(&[1, 2]));
    /// ```
    fn le<I>(self, other: I) -> bool
    where
        I: IntoParallelIterator,
        I::Iter: IndexedParallelIterator,
        Self::Item: PartialOrd<I::Item>,
    {
        IndexedParallelIterator::partial_cmp(self, other).is_some_and(std::cmp::Ordering::is_le)
    }

    /// Whether [`partial_cmp`](Self::partial_cmp) is `Greater` (rayon's
    /// `gt`).
    ///
    /// ```
    /// use weft::prelude::*;
    /// assert!([1, 3].par_iter().gt(&[1, 2, 9]));
    /// ```
    fn gt<I>(self, other: I) -> bool
    where
        I: IntoParallelIterator,
        I::Iter: IndexedParallelIterator,
        Self::Item: PartialOrd<I::Item>,
    {
        IndexedParallelIterator::partial_cmp(self, other).is_some_and(std::cmp::Ordering::is_gt)
    }

    /// Whether [`partial_cmp`](Self::partial_cmp) is `Greater` or `Equal`
    /// (rayon's `ge`).
    ///
    /// ```
    /// use weft::prelude::*;
    /// assert!([1, 2].par_iter().ge(&[1]));
    /// ```
    fn ge<I>(self, other: I) -> bool
    where
        I: IntoParallelIterator,
        I::Iter: IndexedParallelIterator,
        Self::Item: PartialOrd<I::Item>,
    {
        IndexedParallelIterator::partial_cmp(self, other).is_some_and(std::cmp::Ordering::is_ge)
    }

    /// Collects the items, in order, into `target`, which is cleared
    /// first; its room is reused (rayon's `collect_into_vec`).
    ///
    /// ```
    /// use weft::prelude::*;
    /// let mut squares = vec![7; 100];
    /// (0..4u32).into_par_iter().map(|x| x * x).collect_into_vec(&mut squares);
    /// assert_eq!(squares, [0, 1, 4, 9]);
    /// ```
    fn collect_into_vec(self, target: &mut Vec<Self::Item>) {
        target.clear();
        target.par_extend(self);
    }

    /// Splits pairs into `left` and `right`, in order, both cleared first;
    /// their room is reused (rayon's `unzip_into_vecs`).
    ///
    /// ```
    /// use weft::prelude::*;
    /// let (mut evens, mut odds) = (vec![0], Vec::new());
    /// (0..3u32)
    ///     .into_par_iter()
    ///     .map(|x| (2 * x, 2 * x + 1))
    ///     .unzip_into_vecs(&mut evens, &mut odds);
    /// assert_eq!((evens, odds), (vec![0, 2, 4], vec![1, 3, 5]));
    /// ```
    fn unzip_into_vecs<A, B>(self, left: &mut Vec<A>, right: &mut Vec<B>)
    where
        Self: IndexedParallelIterator<Item = (A, B)>,
        A: Send,
        B: Send,
    {
        left.clear();
        right.clear();
        let (a, b) = partition::unzip_pieces(self);
        collect::append_pieces(left, a);
        collect::append_pieces(right, b);
    }

    /// The indices of the items for which `predicate` holds, in order
    /// (rayon's `positions`).
    ///
    /// # Panics
    ///
    /// As [`enumerate`](Self::enumerate).
    ///
    /// ```
    /// use weft::prelude::*;
    /// let at: Vec<usize> = [3, 8, 5, 8].par_iter().positions(|&x| x == 8).collect();
    /// assert_eq!(at, [1, 3]);
    /// ```
    fn positions<P>(self, predicate: P) -> Positions<Self, P>
    where
        P: Fn(Self::Item) -> bool + Sync + Send,
    {
        Positions {
            base: self.enumerate(),
            f: predicate,
        }
    }

    /// This iterator's first item, `other`'s first, this one's second...;
    /// once one runs out, the rest of the other (rayon's `interleave`).
    ///
    /// # Panics
    ///
    /// When the two lengths add up to more than `usize::MAX`, before
    /// running anything.
    ///
    /// ```
    /// use weft::prelude::*;
    /// let woven: Vec<u32> = vec![1, 2, 3, 4].into_par_iter().interleave(vec![10, 20]).collect();
    /// assert_eq!(woven, [1, 10, 2, 20, 3, 4]);
    /// ```
    fn interleave<I>(self, other: I) -> Interleave<Self, I::Iter>
    where
        I: IntoParallelIterator<Item = Self::Item>,
        I::Iter: IndexedParallelIterator<Item = Self::Item>,
    {
        Interleave {
            a: self,
            b: other.into_par_iter(),
        }
    }

    /// [`interleave`](Self::interleave) that stops at the first item the
    /// side whose turn it is lacks (rayon's `interleave_shortest`); the
    /// items left over are dropped unused (see [Items by
    /// value](crate::iter#items-by-value)).
    ///
    /// ```
    /// use weft::prelude::*;
    /// let woven: Vec<u32> = vec![1, 2, 3, 4].into_par_iter().interleave_shortest(vec![10, 20]).collect();
    /// assert_eq!(woven, [1, 10, 2, 20, 3]);
    /// ```
    fn interleave_shortest<I>(self, other: I) -> InterleaveShortest<Self, I::Iter>
    where
        I: IntoParallelIterator<Item = Self::Item>,
        I::Iter: IndexedParallelIterator<Item = Self::Item>,
    {
        let other = other.into_par_iter();
        let (len, other_len) = (self.len(), other.len());
        // This side goes first: it yields one more than the other only
        // when the other is the shorter.
        let (taken, other_taken) = if len > other_len {
            (other_len + 1, other_len)
        } else {
            (len, len)
        };
        self.take(taken).interleave(other.take(other_taken))
    }

    /// Never splits a piece shorter than `min` items off: for loops whose
    /// items are so cheap that even an unstolen split costs too much.
    fn with_min_len(self, min: usize) -> Hinted<Self> {
        Hinted {
            base: self,
            hint: Hint::MinLen(min),
        }
    }

    /// Always splits pieces longer than `max` items, whether or not a
    /// worker is idle.
    fn with_max_len(self, max: usize) -> Hinted<Self> {
        Hinted {
            base: self,
            hint: Hint::MaxLen(max),
        }
    }

    /// The index of some item for which `predicate` holds; stops once one
    /// is found, and drops the items it did not look at unused.
    ///
    /// # Panics
    ///
    /// As [`enumerate`](Self::enumerate), when the items are more than
    /// `usize::MAX`, before running anything.
    fn position_any<P>(self, predicate: P) -> Option<usize>
    where
        P: Fn(Self::Item) -> bool + Sync + Send,
    {
        let mut iter = self.enumerate();
        let matches = |(index, item): (usize, Self::Item)| predicate(item).then_some(index);
        drive(
            iter.producer(),
            &FindAny {
                found: AtomicBool::new(false),
                matches: &matches,
            },
        )
    }

    /// [`position_any`](Self::position_any), under the name rayon keeps
    /// for old code.
    #[deprecated(note = "use `position_any`, or `position_first` for the first match in order")]
    #[doc(hidden)]
    fn position<P>(self, predicate: P) -> Option<usize>
    where
        P: Fn(Self::Item) -> bool + Sync + Send,
    {
        self.position_any(predicate)
    }

    /// The index of the first item, in order, for which `predicate` holds
    /// (rayon's `position_first`); stops as
    /// [`find_first`](ParallelIterator::find_first).
    ///
    /// # Panics
    ///
    /// As [`enumerate`](Self::enumerate).
    ///
    /// ```
    /// use weft::prelude::*;
    /// assert_eq!([3, 8, 5, 8].par_iter().position_first(|&x| x == 8), Some(1));
    /// ```
    fn position_first<P>(self, predicate: P) -> Option<usize>
    where
        P: Fn(Self::Item) -> bool + Sync + Send,
    {
        self.enumerate()
            .find_map_first(|(index, item)| predicate(item).then_some(index))
    }

    /// The index of the last item, in order, for which `predicate` holds
    /// (rayon's `position_last`); skips as
    /// [`find_last`](ParallelIterator::find_last).
    ///
    /// # Panics
    ///
    /// As [`enumerate`](Self::enumerate).
    ///
    /// ```
    /// use weft::prelude::*;
    /// assert_eq!([3, 8, 5, 8].par_iter().position_last(|&x| x == 8), Some(3));
    /// ```
    fn position_last<P>(self, predicate: P) -> Option<usize>
    where
        P: Fn(Self::Item) -> bool + Sync + Send,
    {
        self.enumerate()
            .find_map_last(|(index, item)| predicate(item).then_some(index))
    }
}

/// Conversion into a parallel iterator (rayon's name): ranges, `Vec`s,
/// arrays, slices, every parallel iterator, and std's other collections
/// (`VecDeque`, `BinaryHeap`, `Box<[T]>`, `HashMap`, `HashSet`,
/// `BTreeMap`, `BTreeSet`, `LinkedList`, `Option`, `Result`'s `Ok`) by
/// value, by reference and, where std lends them, by mutable reference.
///
/// A map's items are `(key, value)` pairs, as its sequential `iter`'s; a
/// `VecDeque` and the slice-backed ones split as slices, the others first
/// gather their items (or references) into a `Vec` in one sequential
/// pass, as they cannot be cut in the middle.
///
/// ```
/// use std::collections::{BTreeMap, HashSet, VecDeque};
/// use weft::prelude::*;
///
/// let ages: BTreeMap<&str, u32> = [("ada", 36), ("alan", 41)].into();
/// assert_eq!(ages.par_iter().map(|(_, &age)| age).sum::<u32>(), 77);
///
/// let mut queue: VecDeque<u32> = (1..=4).collect();
/// queue.push_front(0);
/// queue.par_iter_mut().for_each(|x| *x *= 10);
/// assert_eq!(queue, [0, 10, 20, 30, 40]);
///
/// let set: HashSet<u32> = queue.into_par_iter().collect();
/// assert!(set.contains(&40));
/// assert_eq!(Some(3).into_par_iter().sum::<i32>(), 3);
/// ```
pub trait IntoParallelIterator {
    /// The items.
    type Item: Send;
    /// The iterator.
    type Iter: ParallelIterator<Item = Self::Item>;
    /// Converts.
    fn into_par_iter(self) -> Self::Iter;
}

impl<I: ParallelIterator> IntoParallelIterator for I {
    type Item = I::Item;
    type Iter = I;
    fn into_par_iter(self) -> I {
        self
    }
}

/// `collection.par_iter()`: a parallel iterator over references (rayon's
/// name), for everything whose reference converts.
pub trait IntoParallelRefIterator<'data> {
    /// The items: references.
    type Item: Send + 'data;
    /// The iterator.
    type Iter: ParallelIterator<Item = Self::Item>;
    /// Iterates over `&self`'s items.
    fn par_iter(&'data self) -> Self::Iter;
}

impl<'data, C: ?Sized + 'data> IntoParallelRefIterator<'data> for C
where
    &'data C: IntoParallelIterator,
{
    type Item = <&'data C as IntoParallelIterator>::Item;
    type Iter = <&'data C as IntoParallelIterator>::Iter;
    fn par_iter(&'data self) -> Self::Iter {
        self.into_par_iter()
    }
}

/// `collection.par_iter_mut()`: a parallel iterator over mutable
/// references (rayon's name).
pub trait IntoParallelRefMutIterator<'data> {
    /// The items: mutable references.
    type Item: Send + 'data;
    /// The iterator.
    type Iter: ParallelIterator<Item = Self::Item>;
    /// Iterates over `&mut self`'s items.
    fn par_iter_mut(&'data mut self) -> Self::Iter;
}

impl<'data, C: ?Sized + 'data> IntoParallelRefMutIterator<'data> for C
where
    &'data mut C: IntoParallelIterator,
{
    type Item = <&'data mut C as IntoParallelIterator>::Item;
    type Iter = <&'data mut C as IntoParallelIterator>::Iter;
    fn par_iter_mut(&'data mut self) -> Self::Iter {
        self.into_par_iter()
    }
}
