//! Adapters: each wraps its base iterator and its base's producer, and
//! splits where the base splits.

use super::plumbing::{drive, keep, Blocks, Consumer, Producer};
use super::{IndexedParallelIterator, IntoParallelIterator, ParallelIterator};

/// Declares an adapter's producer type, with the base producer and a
/// reference to the adapter's closure.
macro_rules! closure_producer {
    ($name:ident) => {
        /// The producer of the adapter of the same name.
        #[derive(Debug)]
        pub struct $name<'f, P, F> {
            base: P,
            f: &'f F,
        }
    };
}

// ------------------------------------------------------------------- map

/// `iter.map(f)`.
#[derive(Clone, Debug)]
pub struct Map<I, F> {
    pub(crate) base: I,
    pub(crate) f: F,
}

closure_producer!(MapProducer);

impl<I, F, R> ParallelIterator for Map<I, F>
where
    I: ParallelIterator,
    F: Fn(I::Item) -> R + Sync + Send,
    R: Send,
{
    type Item = R;
    type Producer<'a>
        = MapProducer<'a, I::Producer<'a>, F>
    where
        Self: 'a;
    type Seq = std::iter::Map<I::Seq, F>;
    fn producer(&mut self) -> Self::Producer<'_> {
        MapProducer {
            base: self.base.producer(),
            f: &self.f,
        }
    }
    fn into_seq(self) -> Self::Seq {
        self.base.into_seq().map(self.f)
    }
    drive_nested_with_step!(f => super::nested::MapStep(f));
    fn opt_len(&self) -> Option<usize> {
        self.base.opt_len()
    }
}

impl<I, F, R> IndexedParallelIterator for Map<I, F>
where
    I: IndexedParallelIterator,
    F: Fn(I::Item) -> R + Sync + Send,
    R: Send,
{
    fn len(&self) -> usize {
        self.base.len()
    }
}

impl<'f, P, F, R> Producer for MapProducer<'f, P, F>
where
    P: Producer,
    F: Fn(P::Item) -> R + Sync,
{
    type Item = R;
    type IntoIter = std::iter::Map<P::IntoIter, &'f F>;
    fn len(&self) -> usize {
        self.base.len()
    }
    fn split_at(self, index: usize) -> (Self, Self) {
        let (left, right) = self.base.split_at(index);
        (
            MapProducer {
                base: left,
                f: self.f,
            },
            MapProducer {
                base: right,
                f: self.f,
            },
        )
    }
    fn into_iter(self) -> Self::IntoIter {
        self.base.into_iter().map(self.f)
    }
    fn fold_back<B, G>(self, init: B, mut fold: G) -> B
    where
        G: FnMut(B, R) -> B,
    {
        let f = self.f;
        self.base
            .fold_back(init, |folded, item| fold(folded, f(item)))
    }
    fn min_len(&self) -> usize {
        self.base.min_len()
    }
    fn max_len(&self) -> usize {
        self.base.max_len()
    }
    fn deterministic(&self) -> bool {
        self.base.deterministic()
    }
    fn folds_leaves_whole(&self) -> bool {
        self.base.folds_leaves_whole()
    }
    fn blocks(&self) -> Option<Blocks> {
        self.base.blocks()
    }
}

/// Forwards the splitting hints of a producer with one base; with
/// `folds_leaves_whole: true`, a producer whose pieces make a state of
/// their own (the seeded adapters of stateful.rs) folds its leaves whole
/// whatever its base.
macro_rules! forward_hints {
    () => {
        forward_hints!(@lengths);
        fn folds_leaves_whole(&self) -> bool {
            self.base.folds_leaves_whole()
        }
    };
    (folds_leaves_whole: true) => {
        forward_hints!(@lengths);
        fn folds_leaves_whole(&self) -> bool {
            true
        }
    };
    (@lengths) => {
        fn min_len(&self) -> usize {
            self.base.min_len()
        }
        fn max_len(&self) -> usize {
            self.base.max_len()
        }
        fn deterministic(&self) -> bool {
            self.base.deterministic()
        }
        fn blocks(&self) -> Option<$crate::iter::plumbing::Blocks> {
            self.base.blocks()
        }
    };
}

/// Combines the splitting hints of a producer with two bases, `a` and
/// `b`, both always present: the stricter bound of each, and either's
/// `deterministic` and `folds_leaves_whole`.
macro_rules! forward_pair_hints {
    () => {
        fn min_len(&self) -> usize {
            self.a.min_len().max(self.b.min_len())
        }
        fn max_len(&self) -> usize {
            self.a.max_len().min(self.b.max_len())
        }
        fn deterministic(&self) -> bool {
            self.a.deterministic() || self.b.deterministic()
        }
        fn folds_leaves_whole(&self) -> bool {
            self.a.folds_leaves_whole() || self.b.folds_leaves_whole()
        }
        fn blocks(&self) -> Option<$crate::iter::plumbing::Blocks> {
            self.a.blocks().or(self.b.blocks())
        }
    };
}

/// Splits a producer with one base and a closure reference.
macro_rules! split_closure_producer {
    ($name:ident) => {
        fn split_at(self, index: usize) -> (Self, Self) {
            let (left, right) = self.base.split_at(index);
            (
                $name {
                    base: left,
                    f: self.f,
                },
                $name {
                    base: right,
                    f: self.f,
                },
            )
        }
    };
}

// ---------------------------------------------------------------- filter

/// `iter.filter(predicate)`.
#[derive(Clone, Debug)]
pub struct Filter<I, F> {
    pub(crate) base: I,
    pub(crate) f: F,
}

closure_producer!(FilterProducer);

impl<I, F> ParallelIterator for Filter<I, F>
where
    I: ParallelIterator,
    F: Fn(&I::Item) -> bool + Sync + Send,
{
    type Item = I::Item;
    type Producer<'a>
        = FilterProducer<'a, I::Producer<'a>, F>
    where
        Self: 'a;
    type Seq = std::iter::Filter<I::Seq, F>;
    fn producer(&mut self) -> Self::Producer<'_> {
        FilterProducer {
            base: self.base.producer(),
            f: &self.f,
        }
    }
    fn into_seq(self) -> Self::Seq {
        self.base.into_seq().filter(self.f)
    }
    drive_nested_with_step!(f => super::nested::FilterStep(f));
}

impl<'f, P, F> Producer for FilterProducer<'f, P, F>
where
    P: Producer,
    F: Fn(&P::Item) -> bool + Sync,
{
    type Item = P::Item;
    type IntoIter = std::iter::Filter<P::IntoIter, &'f F>;
    fn len(&self) -> usize {
        self.base.len()
    }
    split_closure_producer!(FilterProducer);
    fn into_iter(self) -> Self::IntoIter {
        self.base.into_iter().filter(self.f)
    }
    forward_hints!();
}

// ------------------------------------------------------------ filter_map

/// `iter.filter_map(f)`.
#[derive(Clone, Debug)]
pub struct FilterMap<I, F> {
    pub(crate) base: I,
    pub(crate) f: F,
}

closure_producer!(FilterMapProducer);

impl<I, F, R> ParallelIterator for FilterMap<I, F>
where
    I: ParallelIterator,
    F: Fn(I::Item) -> Option<R> + Sync + Send,
    R: Send,
{
    type Item = R;
    type Producer<'a>
        = FilterMapProducer<'a, I::Producer<'a>, F>
    where
        Self: 'a;
    type Seq = std::iter::FilterMap<I::Seq, F>;
    fn producer(&mut self) -> Self::Producer<'_> {
        FilterMapProducer {
            base: self.base.producer(),
            f: &self.f,
        }
    }
    fn into_seq(self) -> Self::Seq {
        self.base.into_seq().filter_map(self.f)
    }
    drive_nested_with_step!(f => super::nested::FilterMapStep(f));
}

impl<'f, P, F, R> Producer for FilterMapProducer<'f, P, F>
where
    P: Producer,
    F: Fn(P::Item) -> Option<R> + Sync,
{
    type Item = R;
    type IntoIter = std::iter::FilterMap<P::IntoIter, &'f F>;
    fn len(&self) -> usize {
        self.base.len()
    }
    split_closure_producer!(FilterMapProducer);
    fn into_iter(self) -> Self::IntoIter {
        self.base.into_iter().filter_map(self.f)
    }
    forward_hints!();
}

// -------------------------------------------------------------- flat_map

/// `iter.flat_map(f)`: `f` returns something that converts into a parallel
/// iterator; each such inner iterator runs in parallel through the loop's
/// consumer (`drive_with`, and plumbing's "Inner loops"), or, behind an
/// adapter that does not pass its consumer down, sequentially on the
/// thread that took its outer item (the pieces' iterator, `FlatMapSeq`).
#[derive(Clone, Debug)]
pub struct FlatMap<I, F> {
    pub(crate) base: I,
    pub(crate) f: F,
}

closure_producer!(FlatMapProducer);

impl<I, F, U> ParallelIterator for FlatMap<I, F>
where
    I: ParallelIterator,
    F: Fn(I::Item) -> U + Sync + Send,
    U: IntoParallelIterator,
{
    type Item = U::Item;
    type Producer<'a>
        = FlatMapProducer<'a, I::Producer<'a>, F>
    where
        Self: 'a;
    type Seq = FlatMapSeq<I::Seq, F, <U::Iter as ParallelIterator>::Seq>;
    fn producer(&mut self) -> Self::Producer<'_> {
        FlatMapProducer {
            base: self.base.producer(),
            f: &self.f,
        }
    }
    fn into_seq(self) -> Self::Seq {
        FlatMapSeq::new(self.base.into_seq(), self.f)
    }
    const NESTS: bool = true;
    fn drive_with<C: Consumer<U::Item>>(&mut self, consumer: &C) -> C::Result {
        if I::NESTS {
            // The base's inner loops run in parallel; these fold as its
            // items, sequentially.
            let step = super::nested::FlatMapSeqStep(&self.f);
            return self
                .base
                .drive_with(&super::nested::Adapted { consumer, step });
        }
        let producer = self.base.producer();
        let nested = super::nested::Nested {
            consumer,
            f: &self.f,
            sequential: producer.deterministic(),
        };
        drive(producer, &nested)
    }
}

impl<'f, P, F, U> Producer for FlatMapProducer<'f, P, F>
where
    P: Producer,
    F: Fn(P::Item) -> U + Sync,
    U: IntoParallelIterator,
{
    type Item = U::Item;
    type IntoIter = FlatMapSeq<P::IntoIter, &'f F, <U::Iter as ParallelIterator>::Seq>;
    fn len(&self) -> usize {
        self.base.len()
    }
    split_closure_producer!(FlatMapProducer);
    fn into_iter(self) -> Self::IntoIter {
        FlatMapSeq::new(self.base.into_iter(), self.f)
    }
    forward_hints!();
}

/// The sequential iterator of a [`FlatMap`] piece: each outer item's
/// parallel iterator, run sequentially in turn.
#[derive(Debug)]
pub struct FlatMapSeq<It, F, S> {
    base: It,
    f: F,
    inner: Option<S>,
}

impl<It, F, S> FlatMapSeq<It, F, S> {
    pub(crate) fn new(base: It, f: F) -> Self {
        FlatMapSeq {
            base,
            f,
            inner: None,
        }
    }
}

impl<It, F, U> Iterator for FlatMapSeq<It, F, <U::Iter as ParallelIterator>::Seq>
where
    It: Iterator,
    F: Fn(It::Item) -> U,
    U: IntoParallelIterator,
{
    type Item = U::Item;
    fn next(&mut self) -> Option<U::Item> {
        loop {
            if let Some(item) = self.inner.as_mut().and_then(Iterator::next) {
                return Some(item);
            }
            let outer = self.base.next()?;
            self.inner = Some((self.f)(outer).into_par_iter().into_seq());
        }
    }

    /// Each inner iterator folded whole, by its own `fold`: a consumer that
    /// folds its items (`sum`, `for_each`, `collect`'s push) runs the inner
    /// loops as tight as the sequential `flat_map`, where `next` above
    /// takes one item at a time across the two levels (a sum over a slice
    /// per outer item took 1.7x rayon's time at 1 worker through `next`:
    /// docs/PARALLEL.md, "Session 28").
    fn fold<B, G>(self, init: B, mut fold: G) -> B
    where
        G: FnMut(B, Self::Item) -> B,
    {
        let FlatMapSeq { base, f, inner } = self;
        let folded = match inner {
            Some(inner) => inner.fold(init, &mut fold),
            None => init,
        };
        base.fold(folded, |folded, outer| {
            f(outer).into_par_iter().into_seq().fold(folded, &mut fold)
        })
    }
}

/// `iter.flatten()`: [`FlatMap`] with the identity, each item itself a
/// parallel iterator (or something that converts into one) whose items
/// are yielded in turn, sequentially on the worker that produced it.
pub type Flatten<I> =
    FlatMap<I, fn(<I as ParallelIterator>::Item) -> <I as ParallelIterator>::Item>;

/// `iter.flatten_iter()`: [`FlatMapIter`] with the identity, each item a
/// sequential iterator (or something that converts into one).
pub type FlattenIter<I> =
    FlatMapIter<I, fn(<I as ParallelIterator>::Item) -> <I as ParallelIterator>::Item>;

// --------------------------------------------------------- flat_map_iter

/// `iter.flat_map_iter(f)`: `f` returns a sequential iterator (rayon's
/// `flat_map_iter`).
#[derive(Clone, Debug)]
pub struct FlatMapIter<I, F> {
    pub(crate) base: I,
    pub(crate) f: F,
}

closure_producer!(FlatMapIterProducer);

impl<I, F, U> ParallelIterator for FlatMapIter<I, F>
where
    I: ParallelIterator,
    F: Fn(I::Item) -> U + Sync + Send,
    U: IntoIterator,
    U::Item: Send,
{
    type Item = U::Item;
    type Producer<'a>
        = FlatMapIterProducer<'a, I::Producer<'a>, F>
    where
        Self: 'a;
    type Seq = std::iter::FlatMap<I::Seq, U, F>;
    fn producer(&mut self) -> Self::Producer<'_> {
        FlatMapIterProducer {
            base: self.base.producer(),
            f: &self.f,
        }
    }
    fn into_seq(self) -> Self::Seq {
        self.base.into_seq().flat_map(self.f)
    }
    drive_nested_with_step!(f => super::nested::FlatMapIterStep(f));
}

impl<'f, P, F, U> Producer for FlatMapIterProducer<'f, P, F>
where
    P: Producer,
    F: Fn(P::Item) -> U + Sync,
    U: IntoIterator,
{
    type Item = U::Item;
    type IntoIter = std::iter::FlatMap<P::IntoIter, U, &'f F>;
    fn len(&self) -> usize {
        self.base.len()
    }
    split_closure_producer!(FlatMapIterProducer);
    fn into_iter(self) -> Self::IntoIter {
        self.base.into_iter().flat_map(self.f)
    }
    forward_hints!();
}

// ------------------------------------------------------- copied, cloned

/// `iter.copied()`.
#[derive(Clone, Debug)]
pub struct Copied<I> {
    pub(crate) base: I,
}

/// `iter.cloned()`.
#[derive(Clone, Debug)]
pub struct Cloned<I> {
    pub(crate) base: I,
}

/// The producer of [`Copied`] and [`Cloned`].
#[derive(Debug)]
pub struct CopiedProducer<P> {
    base: P,
}

/// The producer of [`Cloned`].
#[derive(Debug)]
pub struct ClonedProducer<P> {
    base: P,
}

macro_rules! by_value {
    ($adapter:ident, $producer:ident, $bound:ident, $method:ident, $seq:ident, $step:ident) => {
        impl<'t, I, T> ParallelIterator for $adapter<I>
        where
            I: ParallelIterator<Item = &'t T>,
            T: $bound + Send + Sync + 't,
        {
            type Item = T;
            type Producer<'a>
                = $producer<I::Producer<'a>>
            where
                Self: 'a;
            type Seq = std::iter::$seq<I::Seq>;
            fn producer(&mut self) -> Self::Producer<'_> {
                $producer {
                    base: self.base.producer(),
                }
            }
            fn into_seq(self) -> Self::Seq {
                self.base.into_seq().$method()
            }
            drive_nested_with_step!(super::nested::$step);
            fn opt_len(&self) -> Option<usize> {
                self.base.opt_len()
            }
        }

        impl<'t, I, T> IndexedParallelIterator for $adapter<I>
        where
            I: IndexedParallelIterator<Item = &'t T>,
            T: $bound + Send + Sync + 't,
        {
            fn len(&self) -> usize {
                self.base.len()
            }
        }

        impl<'t, P, T> Producer for $producer<P>
        where
            P: Producer<Item = &'t T>,
            T: $bound + 't,
        {
            type Item = T;
            type IntoIter = std::iter::$seq<P::IntoIter>;
            fn len(&self) -> usize {
                self.base.len()
            }
            fn split_at(self, index: usize) -> (Self, Self) {
                let (left, right) = self.base.split_at(index);
                ($producer { base: left }, $producer { base: right })
            }
            fn into_iter(self) -> Self::IntoIter {
                self.base.into_iter().$method()
            }
            fn fold_back<B, F>(self, init: B, mut fold: F) -> B
            where
                F: FnMut(B, T) -> B,
            {
                // `Option`'s `copied` / `cloned`: the item by value.
                self.base.fold_back(init, |folded, item| {
                    fold(folded, Some(item).$method().unwrap())
                })
            }
            forward_hints!();
        }
    };
}

by_value!(Copied, CopiedProducer, Copy, copied, Copied, CopiedStep);
by_value!(Cloned, ClonedProducer, Clone, cloned, Cloned, ClonedStep);

// ------------------------------------------------------------- enumerate

/// `iter.enumerate()`.
#[derive(Clone, Debug)]
pub struct Enumerate<I> {
    pub(crate) base: I,
}

/// The producer of [`Enumerate`]: its base and the index of its first item.
#[derive(Debug)]
pub struct EnumerateProducer<P> {
    base: P,
    offset: usize,
}

impl<I: IndexedParallelIterator> ParallelIterator for Enumerate<I> {
    type Item = (usize, I::Item);
    type Producer<'a>
        = EnumerateProducer<I::Producer<'a>>
    where
        Self: 'a;
    type Seq = std::iter::Enumerate<I::Seq>;
    fn producer(&mut self) -> Self::Producer<'_> {
        // Every index must fit in a `usize`: the length of a chain longer
        // than that panics here, before anything runs.
        IndexedParallelIterator::len(&self.base);
        EnumerateProducer {
            base: self.base.producer(),
            offset: 0,
        }
    }
    fn into_seq(self) -> Self::Seq {
        self.base.into_seq().enumerate()
    }
    fn opt_len(&self) -> Option<usize> {
        Some(self.base.len())
    }
}

impl<I: IndexedParallelIterator> IndexedParallelIterator for Enumerate<I> {
    fn len(&self) -> usize {
        self.base.len()
    }
}

impl<P: Producer> Producer for EnumerateProducer<P> {
    type Item = (usize, P::Item);
    type IntoIter = std::iter::Zip<std::ops::Range<usize>, P::IntoIter>;
    fn len(&self) -> usize {
        self.base.len()
    }
    fn split_at(self, index: usize) -> (Self, Self) {
        let (left, right) = self.base.split_at(index);
        (
            EnumerateProducer {
                base: left,
                offset: self.offset,
            },
            EnumerateProducer {
                base: right,
                offset: self.offset + index,
            },
        )
    }
    fn into_iter(self) -> Self::IntoIter {
        // A bounded range, not `offset..`: the last index of a source
        // `usize::MAX` long is `usize::MAX - 1`, and an open range would
        // overflow stepping past it when `zip` asks it for one more.
        let end = self.offset + self.base.len();
        (self.offset..end).zip(self.base.into_iter())
    }
    fn fold_back<B, F>(self, init: B, mut fold: F) -> B
    where
        F: FnMut(B, Self::Item) -> B,
    {
        let mut index = self.offset + self.base.len();
        self.base.fold_back(init, |folded, item| {
            index -= 1;
            fold(folded, (index, item))
        })
    }
    forward_hints!();
}

// ------------------------------------------------------------------- zip

/// `a.zip(b)`: pairs, as long as the shorter of the two.
#[derive(Clone, Debug)]
pub struct Zip<A, B> {
    pub(crate) a: A,
    pub(crate) b: B,
}

/// `a.zip_eq(b)`: [`Zip`], the lengths checked equal at the call.
pub type ZipEq<A, B> = Zip<A, B>;

/// The producer of [`Zip`].
#[derive(Debug)]
pub struct ZipProducer<A, B> {
    a: A,
    b: B,
}

impl<A, B> ParallelIterator for Zip<A, B>
where
    A: IndexedParallelIterator,
    B: IndexedParallelIterator,
{
    type Item = (A::Item, B::Item);
    type Producer<'a>
        = ZipProducer<A::Producer<'a>, B::Producer<'a>>
    where
        Self: 'a;
    type Seq = std::iter::Zip<A::Seq, B::Seq>;
    fn producer(&mut self) -> Self::Producer<'_> {
        let len = IndexedParallelIterator::len(self);
        // Both cut to the shorter length, so that they split alike; the
        // longer one's extra items are dropped unused.
        let (a, a_extra) = self.a.producer().split_at(len);
        let (b, b_extra) = self.b.producer().split_at(len);
        ZipProducer {
            a: keep(a, a_extra),
            b: keep(b, b_extra),
        }
    }
    fn into_seq(self) -> Self::Seq {
        self.a.into_seq().zip(self.b.into_seq())
    }
    fn opt_len(&self) -> Option<usize> {
        Some(IndexedParallelIterator::len(self))
    }
}

impl<A, B> IndexedParallelIterator for Zip<A, B>
where
    A: IndexedParallelIterator,
    B: IndexedParallelIterator,
{
    fn len(&self) -> usize {
        self.a.len().min(self.b.len())
    }
}

impl<A: Producer, B: Producer> Producer for ZipProducer<A, B> {
    type Item = (A::Item, B::Item);
    type IntoIter = std::iter::Zip<A::IntoIter, B::IntoIter>;
    fn len(&self) -> usize {
        self.a.len().min(self.b.len())
    }
    fn split_at(self, index: usize) -> (Self, Self) {
        let (a_left, a_right) = self.a.split_at(index);
        let (b_left, b_right) = self.b.split_at(index);
        (
            ZipProducer {
                a: a_left,
                b: b_left,
            },
            ZipProducer {
                a: a_right,
                b: b_right,
            },
        )
    }
    fn into_iter(self) -> Self::IntoIter {
        self.a.into_iter().zip(self.b.into_iter())
    }
    forward_pair_hints!();
}

// ----------------------------------------------------------------- chain

/// `a.chain(b)`: `a`'s items, then `b`'s.
#[derive(Clone, Debug)]
pub struct Chain<A, B> {
    pub(crate) a: A,
    pub(crate) b: B,
}

/// The producer of [`Chain`]: a piece of `a`, a piece of `b`, or both.
#[derive(Debug)]
pub struct ChainProducer<A, B> {
    a: Option<A>,
    b: Option<B>,
}

impl<A, B> ChainProducer<A, B> {
    /// A piece of `a` alone.
    pub(crate) fn first(a: A) -> Self {
        ChainProducer {
            a: Some(a),
            b: None,
        }
    }

    /// A piece of `b` alone.
    pub(crate) fn second(b: B) -> Self {
        ChainProducer {
            a: None,
            b: Some(b),
        }
    }
}

impl<A, B> ParallelIterator for Chain<A, B>
where
    A: ParallelIterator,
    B: ParallelIterator<Item = A::Item>,
{
    type Item = A::Item;
    type Producer<'a>
        = ChainProducer<A::Producer<'a>, B::Producer<'a>>
    where
        Self: 'a;
    type Seq = std::iter::Chain<A::Seq, B::Seq>;
    fn producer(&mut self) -> Self::Producer<'_> {
        ChainProducer {
            a: Some(self.a.producer()),
            b: Some(self.b.producer()),
        }
    }
    fn into_seq(self) -> Self::Seq {
        self.a.into_seq().chain(self.b.into_seq())
    }
    fn opt_len(&self) -> Option<usize> {
        // Unknown, rather than wrapped, when the sum overflows.
        self.a.opt_len()?.checked_add(self.b.opt_len()?)
    }
}

impl<A, B> IndexedParallelIterator for Chain<A, B>
where
    A: IndexedParallelIterator,
    B: IndexedParallelIterator<Item = A::Item>,
{
    fn len(&self) -> usize {
        summed_len(self.a.len(), self.b.len(), "the chain")
    }
}

/// The length of an indexed iterator of `a` and `b` items (`chain`,
/// `interleave`): it has an index for each only if their sum fits.
pub(crate) fn summed_len(a: usize, b: usize, what: &str) -> usize {
    a.checked_add(b)
        .unwrap_or_else(|| panic!("{what} is longer than usize::MAX"))
}

impl<A, B> Producer for ChainProducer<A, B>
where
    A: Producer,
    B: Producer<Item = A::Item>,
{
    type Item = A::Item;
    type IntoIter = std::iter::Chain<
        std::iter::Flatten<std::option::IntoIter<A::IntoIter>>,
        std::iter::Flatten<std::option::IntoIter<B::IntoIter>>,
    >;
    fn len(&self) -> usize {
        // Saturated, for a chain whose consumer needs no length nor index
        // (`find_first`): see `Producer::len`.
        let a = self.a.as_ref().map_or(0, Producer::len);
        a.saturating_add(self.b.as_ref().map_or(0, Producer::len))
    }
    fn split_at(self, index: usize) -> (Self, Self) {
        let a_len = self.a.as_ref().map_or(0, Producer::len);
        if index <= a_len {
            let (a_left, a_right) = match self.a {
                Some(a) => {
                    let (left, right) = a.split_at(index);
                    (Some(left), Some(right))
                }
                None => (None, None),
            };
            (
                ChainProducer { a: a_left, b: None },
                ChainProducer {
                    a: a_right,
                    b: self.b,
                },
            )
        } else {
            let (b_left, b_right) = match self.b {
                Some(b) => {
                    let (left, right) = b.split_at(index - a_len);
                    (Some(left), Some(right))
                }
                None => (None, None),
            };
            (
                ChainProducer {
                    a: self.a,
                    b: b_left,
                },
                ChainProducer {
                    a: None,
                    b: b_right,
                },
            )
        }
    }
    fn into_iter(self) -> Self::IntoIter {
        let a = self.a.map(Producer::into_iter).into_iter().flatten();
        let b = self.b.map(Producer::into_iter).into_iter().flatten();
        a.chain(b)
    }
    fn min_len(&self) -> usize {
        let a = self.a.as_ref().map_or(1, Producer::min_len);
        let b = self.b.as_ref().map_or(1, Producer::min_len);
        a.max(b)
    }
    fn max_len(&self) -> usize {
        let a = self.a.as_ref().map_or(usize::MAX, Producer::max_len);
        let b = self.b.as_ref().map_or(usize::MAX, Producer::max_len);
        a.min(b)
    }
    fn deterministic(&self) -> bool {
        self.a.as_ref().is_some_and(Producer::deterministic)
            || self.b.as_ref().is_some_and(Producer::deterministic)
    }
    fn folds_leaves_whole(&self) -> bool {
        self.a.as_ref().is_some_and(Producer::folds_leaves_whole)
            || self.b.as_ref().is_some_and(Producer::folds_leaves_whole)
    }
}

// ------------------------------------------------------------ take, skip

/// `iter.take(n)`.
#[derive(Clone, Debug)]
pub struct Take<I> {
    pub(crate) base: I,
    pub(crate) n: usize,
}

/// `iter.skip(n)`.
#[derive(Clone, Debug)]
pub struct Skip<I> {
    pub(crate) base: I,
    pub(crate) n: usize,
}

impl<I: IndexedParallelIterator> ParallelIterator for Take<I> {
    type Item = I::Item;
    type Producer<'a>
        = I::Producer<'a>
    where
        Self: 'a;
    type Seq = std::iter::Take<I::Seq>;
    fn producer(&mut self) -> Self::Producer<'_> {
        let n = IndexedParallelIterator::len(self);
        let (taken, untaken) = self.base.producer().split_at(n);
        keep(taken, untaken)
    }
    fn into_seq(self) -> Self::Seq {
        self.base.into_seq().take(self.n)
    }
    fn opt_len(&self) -> Option<usize> {
        Some(IndexedParallelIterator::len(self))
    }
}

impl<I: IndexedParallelIterator> IndexedParallelIterator for Take<I> {
    fn len(&self) -> usize {
        self.base.len().min(self.n)
    }
}

impl<I: IndexedParallelIterator> ParallelIterator for Skip<I> {
    type Item = I::Item;
    type Producer<'a>
        = I::Producer<'a>
    where
        Self: 'a;
    type Seq = std::iter::Skip<I::Seq>;
    fn producer(&mut self) -> Self::Producer<'_> {
        let n = self.n.min(self.base.len());
        let (skipped, rest) = self.base.producer().split_at(n);
        keep(rest, skipped)
    }
    fn into_seq(self) -> Self::Seq {
        self.base.into_seq().skip(self.n)
    }
    fn opt_len(&self) -> Option<usize> {
        Some(IndexedParallelIterator::len(self))
    }
}

impl<I: IndexedParallelIterator> IndexedParallelIterator for Skip<I> {
    fn len(&self) -> usize {
        self.base.len().saturating_sub(self.n)
    }
}

// ------------------------------------------ with_min_len, with_max_len

/// `iter.with_min_len(n)`, `iter.with_max_len(n)`, `iter.deterministic()`,
/// `iter.by_uniform_blocks(n)` and `iter.by_exponential_blocks()`: the
/// same items, with a splitting hint.
#[derive(Clone, Debug)]
pub struct Hinted<I> {
    pub(crate) base: I,
    pub(crate) hint: Hint,
}

/// A splitting hint of [`Hinted`].
#[derive(Clone, Copy, Debug)]
pub(crate) enum Hint {
    MinLen(usize),
    MaxLen(usize),
    Deterministic,
    Blocks(Blocks),
}

/// `iter.by_uniform_blocks(n)`: [`Hinted`] with blocks of `n` items.
pub type UniformBlocks<I> = Hinted<I>;

/// `iter.by_exponential_blocks()`: [`Hinted`] with blocks that double.
pub type ExponentialBlocks<I> = Hinted<I>;

/// The producer of [`Hinted`].
#[derive(Debug)]
pub struct HintedProducer<P> {
    base: P,
    hint: Hint,
}

impl<I: ParallelIterator> ParallelIterator for Hinted<I> {
    type Item = I::Item;
    type Producer<'a>
        = HintedProducer<I::Producer<'a>>
    where
        Self: 'a;
    type Seq = I::Seq;
    fn producer(&mut self) -> Self::Producer<'_> {
        HintedProducer {
            base: self.base.producer(),
            hint: self.hint,
        }
    }
    fn into_seq(self) -> Self::Seq {
        self.base.into_seq()
    }
    fn opt_len(&self) -> Option<usize> {
        self.base.opt_len()
    }
}

impl<I: IndexedParallelIterator> IndexedParallelIterator for Hinted<I> {
    fn len(&self) -> usize {
        self.base.len()
    }
}

impl<P: Producer> Producer for HintedProducer<P> {
    type Item = P::Item;
    type IntoIter = P::IntoIter;
    fn len(&self) -> usize {
        self.base.len()
    }
    fn split_at(self, index: usize) -> (Self, Self) {
        let (left, right) = self.base.split_at(index);
        let hint = self.hint;
        (
            HintedProducer { base: left, hint },
            HintedProducer { base: right, hint },
        )
    }
    fn into_iter(self) -> Self::IntoIter {
        self.base.into_iter()
    }
    fn fold_back<B, F>(self, init: B, fold: F) -> B
    where
        F: FnMut(B, Self::Item) -> B,
    {
        self.base.fold_back(init, fold)
    }
    fn min_len(&self) -> usize {
        match self.hint {
            Hint::MinLen(min) => min.max(self.base.min_len()),
            _ => self.base.min_len(),
        }
    }
    fn max_len(&self) -> usize {
        match self.hint {
            Hint::MaxLen(max) => max.min(self.base.max_len()),
            _ => self.base.max_len(),
        }
    }
    fn deterministic(&self) -> bool {
        matches!(self.hint, Hint::Deterministic) || self.base.deterministic()
    }
    fn folds_leaves_whole(&self) -> bool {
        self.base.folds_leaves_whole()
    }
    fn blocks(&self) -> Option<Blocks> {
        match self.hint {
            Hint::Blocks(blocks) => Some(blocks),
            _ => self.base.blocks(),
        }
    }
}

// -------------------------------------------------------- inspect, update

/// Declares an adapter that hands each item to its closure by reference
/// (`$($by)+` is `&` or `&mut`) and then yields it: its producer and its
/// sequential iterator.
macro_rules! touching {
    ($(#[$doc:meta])* $name:ident, $producer:ident, $seq:ident, $step:ident, $($by:tt)+) => {
        $(#[$doc])*
        #[derive(Clone, Debug)]
        pub struct $name<I, F> {
            pub(crate) base: I,
            pub(crate) f: F,
        }

        closure_producer!($producer);

        /// The sequential iterator of the adapter of the same name.
        #[derive(Debug)]
        pub struct $seq<It, F> {
            base: It,
            f: F,
        }

        impl<It: Iterator, F: Fn($($by)+ It::Item)> Iterator for $seq<It, F> {
            type Item = It::Item;
            // `mut` serves the `&mut` form only.
            #[allow(unused_mut)]
            fn next(&mut self) -> Option<It::Item> {
                let mut item = self.base.next()?;
                (self.f)($($by)+ item);
                Some(item)
            }
            fn size_hint(&self) -> (usize, Option<usize>) {
                self.base.size_hint()
            }
        }

        impl<I, F> ParallelIterator for $name<I, F>
        where
            I: ParallelIterator,
            F: Fn($($by)+ I::Item) + Sync + Send,
        {
            type Item = I::Item;
            type Producer<'a>
                = $producer<'a, I::Producer<'a>, F>
            where
                Self: 'a;
            type Seq = $seq<I::Seq, F>;
            fn producer(&mut self) -> Self::Producer<'_> {
                $producer {
                    base: self.base.producer(),
                    f: &self.f,
                }
            }
            fn into_seq(self) -> Self::Seq {
                $seq {
                    base: self.base.into_seq(),
                    f: self.f,
                }
            }
            drive_nested_with_step!(f => super::nested::$step(f));
            fn opt_len(&self) -> Option<usize> {
                self.base.opt_len()
            }
        }

        impl<I, F> IndexedParallelIterator for $name<I, F>
        where
            I: IndexedParallelIterator,
            F: Fn($($by)+ I::Item) + Sync + Send,
        {
            fn len(&self) -> usize {
                self.base.len()
            }
        }

        impl<'f, P, F> Producer for $producer<'f, P, F>
        where
            P: Producer,
            F: Fn($($by)+ P::Item) + Sync,
        {
            type Item = P::Item;
            type IntoIter = $seq<P::IntoIter, &'f F>;
            fn len(&self) -> usize {
                self.base.len()
            }
            split_closure_producer!($producer);
            fn into_iter(self) -> Self::IntoIter {
                $seq {
                    base: self.base.into_iter(),
                    f: self.f,
                }
            }
            forward_hints!();
        }
    };
}

touching!(
    /// `iter.inspect(f)`: `f` sees each item before it goes on.
    Inspect,
    InspectProducer,
    InspectIter,
    InspectStep,
    &
);

touching!(
    /// `iter.update(f)`: `f` changes each item in place before it goes on.
    Update,
    UpdateProducer,
    UpdateIter,
    UpdateStep,
    &mut
);

// ------------------------------------------------------------ while_some

/// `iter.while_some()`: the values of the `Some`s, until a `None`.
#[derive(Debug)]
pub struct WhileSome<I> {
    pub(crate) base: I,
    /// Set at the first `None` any piece meets.
    pub(crate) ended: std::sync::atomic::AtomicBool,
}

/// The producer of [`WhileSome`].
#[derive(Debug)]
pub struct WhileSomeProducer<'e, P> {
    base: P,
    ended: &'e std::sync::atomic::AtomicBool,
}

/// The sequential iterator of a [`WhileSome`] piece.
#[derive(Debug)]
pub struct WhileSomeIter<'e, It> {
    base: It,
    ended: &'e std::sync::atomic::AtomicBool,
}

impl<It: Iterator<Item = Option<T>>, T> Iterator for WhileSomeIter<'_, It> {
    type Item = T;
    fn next(&mut self) -> Option<T> {
        use std::sync::atomic::Ordering;
        // Relaxed: a hint to stop; what a piece yielded travels by join.
        if self.ended.load(Ordering::Relaxed) {
            return None;
        }
        // The end of the piece (`None`) is not a `None` item (`Some(None)`).
        let next = self.base.next()?;
        if next.is_none() {
            self.ended.store(true, Ordering::Relaxed);
        }
        next
    }
}

impl<I, T> ParallelIterator for WhileSome<I>
where
    I: ParallelIterator<Item = Option<T>>,
    T: Send,
{
    type Item = T;
    type Producer<'a>
        = WhileSomeProducer<'a, I::Producer<'a>>
    where
        Self: 'a;
    type Seq = std::iter::MapWhile<I::Seq, fn(Option<T>) -> Option<T>>;
    fn producer(&mut self) -> Self::Producer<'_> {
        WhileSomeProducer {
            base: self.base.producer(),
            ended: &self.ended,
        }
    }
    fn into_seq(self) -> Self::Seq {
        self.base.into_seq().map_while(std::convert::identity)
    }
}

impl<'e, P, T> Producer for WhileSomeProducer<'e, P>
where
    P: Producer<Item = Option<T>>,
{
    type Item = T;
    type IntoIter = WhileSomeIter<'e, P::IntoIter>;
    fn len(&self) -> usize {
        self.base.len()
    }
    fn split_at(self, index: usize) -> (Self, Self) {
        let (left, right) = self.base.split_at(index);
        let ended = self.ended;
        (
            WhileSomeProducer { base: left, ended },
            WhileSomeProducer { base: right, ended },
        )
    }
    fn into_iter(self) -> Self::IntoIter {
        WhileSomeIter {
            base: self.base.into_iter(),
            ended: self.ended,
        }
    }
    forward_hints!();
}

#[cfg(test)]
mod tests {
    use crate::prelude::*;

    #[test]
    fn flat_map_seq_folds_what_next_left() {
        let expected: Vec<u32> = (0..5u32).flat_map(|i| 0..i).collect();
        for taken in 0..=expected.len() {
            let mut seq = (0..5u32)
                .into_par_iter()
                .flat_map(|i| (0..i).into_par_iter())
                .into_seq();
            // `next` leaves an inner iterator part way; `fold` goes on from it.
            let mut items: Vec<u32> = seq.by_ref().take(taken).collect();
            items = seq.fold(items, |mut items, item| {
                items.push(item);
                items
            });
            assert_eq!(items, expected, "after {taken} taken by next");
        }
    }
}
