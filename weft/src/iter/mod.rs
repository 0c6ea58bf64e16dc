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
//! the consumers (`consumers`, `collect`) and the parallel sorts (`sort`).
//! Every loop runs through one driver, [`plumbing`], which alone decides
//! where to split: there is no grain size to tune (see there for the rule),
//! and `with_min_len` / `with_max_len` exist only as bounds.
//!
//! Semantics a rayon user can count on: `collect` and the order-sensitive
//! consumers (`find_first`, `min`/`max` ties, `reduce`'s combination order)
//! follow the input's order; `find_any`, `any`, `all` and `position_any`
//! stop the pieces not yet started once the answer is known; a panic in a
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

mod adapters;
mod collect;
mod collections;
mod consumers;
mod sort;
mod sources;

use std::marker::PhantomData;
use std::sync::atomic::{AtomicBool, AtomicUsize};

pub use adapters::{
    Chain, ChainProducer, Cloned, ClonedProducer, Copied, CopiedProducer, Enumerate,
    EnumerateProducer, Filter, FilterMap, FilterMapProducer, FilterProducer, FlatMap, FlatMapIter,
    FlatMapIterProducer, FlatMapProducer, Flatten, Fold, FoldProducer, Hinted, HintedProducer, Map,
    MapProducer, Skip, Take, Zip, ZipProducer,
};
pub use collect::{FromParallelIterator, ParallelExtend};
pub use collections::{OptionIter, OptionProducer};
pub use sort::ParallelSliceMut;
pub use sources::{
    Chunks, ChunksMut, ChunksMutProducer, ChunksProducer, DrainIter, DrainProducer, IntoIter, Iter,
    IterMut, RangeIter, RangeProducer, SliceMutProducer, SliceProducer, Windows, WindowsProducer,
};

use adapters::Hint;
use consumers::{Count, Extreme, FindAny, FindFirst, ForEach, MinMax, Product, ReduceWith, Sum};
use plumbing::{drive, Producer};

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
    /// turn. Each inner iterator runs sequentially on the worker that
    /// produced its outer item; the outer loop gives the parallelism.
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
    /// let total = (1..=100u32)
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
        Fold {
            base: self,
            identity,
            fold: fold_op,
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

    // ------------------------------------------------------ consumers

    /// Calls `f` on every item.
    fn for_each<F>(mut self, f: F)
    where
        F: Fn(Self::Item) + Sync + Send,
    {
        drive(self.producer(), &ForEach(&f));
    }

    /// Sums the items.
    fn sum<S>(mut self) -> S
    where
        S: Send + std::iter::Sum<Self::Item> + std::iter::Sum<S>,
    {
        drive(self.producer(), &Sum(PhantomData))
    }

    /// Multiplies the items.
    fn product<P>(mut self) -> P
    where
        P: Send + std::iter::Product<Self::Item> + std::iter::Product<P>,
    {
        drive(self.producer(), &Product(PhantomData))
    }

    /// Counts the items.
    fn count(mut self) -> usize {
        drive(self.producer(), &Count)
    }

    /// Combines the items with `op`, starting each piece from `identity()`;
    /// `op` must be associative for a result independent of the splits.
    fn reduce<ID, OP>(mut self, identity: ID, op: OP) -> Self::Item
    where
        ID: Fn() -> Self::Item + Sync + Send,
        OP: Fn(Self::Item, Self::Item) -> Self::Item + Sync + Send,
    {
        drive(
            self.producer(),
            &ReduceWith {
                identity: &identity,
                op: &op,
            },
        )
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
        drive(
            self.producer(),
            &MinMax {
                compare: &compare,
                keep: Extreme::Min,
            },
        )
    }

    /// The greatest item by `compare`; the last of equal ones.
    fn max_by<F>(mut self, compare: F) -> Option<Self::Item>
    where
        F: Fn(&Self::Item, &Self::Item) -> std::cmp::Ordering + Sync + Send,
    {
        drive(
            self.producer(),
            &MinMax {
                compare: &compare,
                keep: Extreme::Max,
            },
        )
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

    /// Splits pairs into two collections, in order.
    fn unzip<A, B, FromA, FromB>(self) -> (FromA, FromB)
    where
        Self: ParallelIterator<Item = (A, B)>,
        A: Send,
        B: Send,
        FromA: Default + Extend<A>,
        FromB: Default + Extend<B>,
    {
        let pairs: Vec<(A, B)> = self.collect();
        pairs.into_iter().unzip()
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
        drive(
            self.producer(),
            &FindAny {
                found: AtomicBool::new(false),
                matches: &matches,
            },
        )
    }

    /// The first item, in the input's order, for which `predicate` holds.
    /// The items it need not look at are dropped unused (see [Items by
    /// value](crate::iter#items-by-value)).
    fn find_first<P>(mut self, predicate: P) -> Option<Self::Item>
    where
        P: Fn(&Self::Item) -> bool + Sync + Send,
    {
        let matches = |item: Self::Item| predicate(&item).then_some(item);
        drive(
            self.producer(),
            &FindFirst {
                best: AtomicUsize::new(usize::MAX),
                matches: &matches,
            },
        )
    }

    /// Whether `predicate` holds for some item; stops once one is found,
    /// and drops the items it did not look at unused.
    fn any<P>(mut self, predicate: P) -> bool
    where
        P: Fn(Self::Item) -> bool + Sync + Send,
    {
        let matches = |item: Self::Item| predicate(item).then_some(());
        drive(
            self.producer(),
            &FindAny {
                found: AtomicBool::new(false),
                matches: &matches,
            },
        )
        .is_some()
    }

    /// Whether `predicate` holds for every item; stops at the first that
    /// fails it, and drops the items it did not look at unused.
    fn all<P>(mut self, predicate: P) -> bool
    where
        P: Fn(Self::Item) -> bool + Sync + Send,
    {
        let fails = |item: Self::Item| (!predicate(item)).then_some(());
        drive(
            self.producer(),
            &FindAny {
                found: AtomicBool::new(false),
                matches: &fails,
            },
        )
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

/// Parallel views of a shared slice (rayon's `ParallelSlice`).
pub trait ParallelSlice<T: Sync> {
    /// Non-overlapping pieces of `size` elements, the last possibly
    /// shorter. Panics if `size` is 0.
    fn par_chunks(&self, size: usize) -> Chunks<'_, T>;
    /// Every run of `size` neighbours. Panics if `size` is 0.
    fn par_windows(&self, size: usize) -> Windows<'_, T>;
}

impl<T: Sync> ParallelSlice<T> for [T] {
    fn par_chunks(&self, size: usize) -> Chunks<'_, T> {
        Chunks::new(self, size)
    }
    fn par_windows(&self, size: usize) -> Windows<'_, T> {
        Windows::new(self, size)
    }
}
