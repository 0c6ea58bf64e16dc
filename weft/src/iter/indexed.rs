//! Adapters that need their base's indices: `rev`, `step_by`, `chunks`,
//! `fold_chunks` and `positions`. Each maps its own indices to its
//! base's, so it splits where the driver asks, as any indexed iterator.

use super::adapters::EnumerateProducer;
use super::plumbing::Producer;
use super::sources::{chunk_count, chunk_start};
use super::stateful::{CloneSeed, InitSeed, PieceSeed, Seed};
use super::{Enumerate, IndexedParallelIterator, ParallelIterator};

// ------------------------------------------------------------------- rev

/// `iter.rev()`: the items in the opposite order.
#[derive(Clone, Debug)]
pub struct Rev<I> {
    pub(crate) base: I,
}

/// The producer of [`Rev`]: a piece of its base, read from its end.
#[derive(Debug)]
pub struct RevProducer<P> {
    base: P,
}

impl<I: IndexedParallelIterator> ParallelIterator for Rev<I> {
    type Item = I::Item;
    type Producer<'a>
        = RevProducer<I::Producer<'a>>
    where
        Self: 'a;
    type Seq = std::iter::Rev<std::vec::IntoIter<I::Item>>;
    fn producer(&mut self) -> Self::Producer<'_> {
        // The base's length, asked now: a chain longer than `usize::MAX`
        // has no last index to start from, and panics before running.
        IndexedParallelIterator::len(&self.base);
        RevProducer {
            base: self.base.producer(),
        }
    }
    fn into_seq(self) -> Self::Seq {
        // Only `flat_map`'s inner iterators run this way, sequentially: a
        // base that cannot be read backwards is gathered first.
        self.base.into_seq().collect::<Vec<_>>().into_iter().rev()
    }
    fn opt_len(&self) -> Option<usize> {
        Some(self.base.len())
    }
}

impl<I: IndexedParallelIterator> IndexedParallelIterator for Rev<I> {
    fn len(&self) -> usize {
        self.base.len()
    }
}

impl<P: Producer> Producer for RevProducer<P> {
    type Item = P::Item;
    type IntoIter = RevIter<P>;
    fn len(&self) -> usize {
        self.base.len()
    }
    fn split_at(self, index: usize) -> (Self, Self) {
        let at = self.base.len() - index;
        let (left, right) = self.base.split_at(at);
        (RevProducer { base: right }, RevProducer { base: left })
    }
    fn into_iter(self) -> RevIter<P> {
        RevIter {
            rest: Some(self.base),
        }
    }
    /// The base read forwards.
    fn fold_back<B, F>(self, init: B, fold: F) -> B
    where
        F: FnMut(B, P::Item) -> B,
    {
        self.base.into_iter().fold(init, fold)
    }
    forward_hints!();
}

/// The sequential iterator of a [`Rev`] piece. Producers need not read
/// backwards, but all split: each item is split off the end of what is
/// left, which costs a split of the base (a few instructions for a slice
/// or a range, under every adapter on top of it) per item.
#[derive(Debug)]
pub struct RevIter<P> {
    rest: Option<P>,
}

impl<P: Producer> Iterator for RevIter<P> {
    type Item = P::Item;
    fn next(&mut self) -> Option<P::Item> {
        let rest = self.rest.take()?;
        let len = rest.len();
        if len == 0 {
            return None;
        }
        let (front, last) = rest.split_at(len - 1);
        self.rest = Some(front);
        last.into_iter().next()
    }
    fn size_hint(&self) -> (usize, Option<usize>) {
        let left = self.rest.as_ref().map_or(0, Producer::len);
        (left, Some(left))
    }
    /// What is left, through the base's `fold_back`: its own reversed
    /// iterator where it has one.
    fn fold<B, F>(self, init: B, fold: F) -> B
    where
        F: FnMut(B, P::Item) -> B,
    {
        match self.rest {
            Some(rest) => rest.fold_back(init, fold),
            None => init,
        }
    }
}

// --------------------------------------------------------------- step_by

/// `iter.step_by(step)`: the items at indices 0, `step`, `2 * step`...
#[derive(Clone, Debug)]
pub struct StepBy<I> {
    pub(crate) base: I,
    pub(crate) step: usize,
}

/// The producer of [`StepBy`]: a piece of its base that starts at a
/// multiple of the step.
#[derive(Debug)]
pub struct StepByProducer<P> {
    base: P,
    step: usize,
}

impl<I: IndexedParallelIterator> ParallelIterator for StepBy<I> {
    type Item = I::Item;
    type Producer<'a>
        = StepByProducer<I::Producer<'a>>
    where
        Self: 'a;
    type Seq = std::iter::StepBy<I::Seq>;
    fn producer(&mut self) -> Self::Producer<'_> {
        IndexedParallelIterator::len(&self.base);
        StepByProducer {
            base: self.base.producer(),
            step: self.step,
        }
    }
    fn into_seq(self) -> Self::Seq {
        self.base.into_seq().step_by(self.step)
    }
    fn opt_len(&self) -> Option<usize> {
        Some(IndexedParallelIterator::len(self))
    }
}

impl<I: IndexedParallelIterator> IndexedParallelIterator for StepBy<I> {
    fn len(&self) -> usize {
        chunk_count(self.base.len(), self.step)
    }
}

impl<P: Producer> Producer for StepByProducer<P> {
    type Item = P::Item;
    type IntoIter = std::iter::StepBy<P::IntoIter>;
    fn len(&self) -> usize {
        chunk_count(self.base.len(), self.step)
    }
    fn split_at(self, index: usize) -> (Self, Self) {
        let at = chunk_start(index, self.step, self.base.len());
        let (left, right) = self.base.split_at(at);
        let step = self.step;
        (
            StepByProducer { base: left, step },
            StepByProducer { base: right, step },
        )
    }
    fn into_iter(self) -> Self::IntoIter {
        self.base.into_iter().step_by(self.step)
    }
    forward_hints!();
}

// ---------------------------------------------------------------- chunks

/// `iter.chunks(size)`: the items in `Vec`s of `size`, the last possibly
/// shorter.
#[derive(Clone, Debug)]
pub struct IterChunks<I> {
    pub(crate) base: I,
    pub(crate) size: usize,
}

/// The producer of [`IterChunks`]: a piece of its base that starts at a
/// multiple of the chunk size.
#[derive(Debug)]
pub struct IterChunksProducer<P> {
    base: P,
    size: usize,
}

impl<I: IndexedParallelIterator> ParallelIterator for IterChunks<I> {
    type Item = Vec<I::Item>;
    type Producer<'a>
        = IterChunksProducer<I::Producer<'a>>
    where
        Self: 'a;
    type Seq = Grouped<I::Seq>;
    fn producer(&mut self) -> Self::Producer<'_> {
        IndexedParallelIterator::len(&self.base);
        IterChunksProducer {
            base: self.base.producer(),
            size: self.size,
        }
    }
    fn into_seq(self) -> Self::Seq {
        Grouped {
            base: self.base.into_seq(),
            size: self.size,
        }
    }
    fn opt_len(&self) -> Option<usize> {
        Some(IndexedParallelIterator::len(self))
    }
}

impl<I: IndexedParallelIterator> IndexedParallelIterator for IterChunks<I> {
    fn len(&self) -> usize {
        chunk_count(self.base.len(), self.size)
    }
}

impl<P: Producer> Producer for IterChunksProducer<P> {
    type Item = Vec<P::Item>;
    type IntoIter = Grouped<P::IntoIter>;
    fn len(&self) -> usize {
        chunk_count(self.base.len(), self.size)
    }
    fn split_at(self, index: usize) -> (Self, Self) {
        let at = chunk_start(index, self.size, self.base.len());
        let (left, right) = self.base.split_at(at);
        let size = self.size;
        (
            IterChunksProducer { base: left, size },
            IterChunksProducer { base: right, size },
        )
    }
    fn into_iter(self) -> Self::IntoIter {
        Grouped {
            base: self.base.into_iter(),
            size: self.size,
        }
    }
    forward_hints!();
}

/// The sequential iterator of an [`IterChunks`] piece: its base's items,
/// `size` at a time.
#[derive(Debug)]
pub struct Grouped<It> {
    base: It,
    size: usize,
}

impl<It: Iterator> Iterator for Grouped<It> {
    type Item = Vec<It::Item>;
    fn next(&mut self) -> Option<Vec<It::Item>> {
        let group: Vec<It::Item> = self.base.by_ref().take(self.size).collect();
        (!group.is_empty()).then_some(group)
    }
}

// ----------------------------------------------------------- fold_chunks

/// `iter.fold_chunks(size, identity, fold_op)` and
/// `iter.fold_chunks_with(size, init, fold_op)`: each run of `size` items,
/// the last possibly shorter, folded from a fresh state.
#[derive(Clone, Debug)]
pub struct FoldChunksSeeded<I, S, F> {
    pub(crate) base: I,
    pub(crate) size: usize,
    pub(crate) seed: S,
    pub(crate) f: F,
}

/// `iter.fold_chunks(size, identity, fold_op)`: each chunk folded from
/// `identity()`.
pub type FoldChunks<I, ID, F> = FoldChunksSeeded<I, InitSeed<ID>, F>;

/// `iter.fold_chunks_with(size, init, fold_op)`: each chunk folded from a
/// clone of `init`.
pub type FoldChunksWith<I, T, F> = FoldChunksSeeded<I, CloneSeed<T>, F>;

/// The producer of [`FoldChunksSeeded`]: a piece of its base that starts
/// at a multiple of the chunk size.
#[derive(Debug)]
pub struct FoldChunksProducer<'f, P, S, F> {
    base: P,
    size: usize,
    seed: S,
    f: &'f F,
}

/// The sequential iterator of a [`FoldChunksSeeded`] piece: its base's
/// items `size` at a time, each run folded from a fresh state.
#[derive(Debug)]
pub struct FoldedChunks<It, S, F> {
    base: It,
    size: usize,
    seed: S,
    f: F,
}

impl<It, S, F, T> Iterator for FoldedChunks<It, S, F>
where
    It: Iterator,
    S: PieceSeed<State = T>,
    F: Fn(T, It::Item) -> T,
{
    type Item = T;
    fn next(&mut self) -> Option<T> {
        let first = self.base.next()?;
        let start = (self.f)(self.seed.split().state(), first);
        Some(self.base.by_ref().take(self.size - 1).fold(start, &self.f))
    }
}

impl<I, S, F, T> ParallelIterator for FoldChunksSeeded<I, S, F>
where
    I: IndexedParallelIterator,
    S: Seed<State = T>,
    F: Fn(T, I::Item) -> T + Sync + Send,
    T: Send,
{
    type Item = T;
    type Producer<'a>
        = FoldChunksProducer<'a, I::Producer<'a>, S::Piece<'a>, F>
    where
        Self: 'a;
    type Seq = std::vec::IntoIter<T>;
    fn producer(&mut self) -> Self::Producer<'_> {
        IndexedParallelIterator::len(&self.base);
        FoldChunksProducer {
            base: self.base.producer(),
            size: self.size,
            seed: self.seed.piece(),
            f: &self.f,
        }
    }
    fn into_seq(self) -> Self::Seq {
        // Only `flat_map`'s inner iterators run this way: the chunks are
        // folded at once, as the states borrow from the adapter.
        let chunks = FoldedChunks {
            base: self.base.into_seq(),
            size: self.size,
            seed: self.seed.piece(),
            f: &self.f,
        };
        chunks.collect::<Vec<_>>().into_iter()
    }
    fn opt_len(&self) -> Option<usize> {
        Some(IndexedParallelIterator::len(self))
    }
}

impl<I, S, F, T> IndexedParallelIterator for FoldChunksSeeded<I, S, F>
where
    I: IndexedParallelIterator,
    S: Seed<State = T>,
    F: Fn(T, I::Item) -> T + Sync + Send,
    T: Send,
{
    fn len(&self) -> usize {
        chunk_count(self.base.len(), self.size)
    }
}

impl<'f, P, S, F, T> Producer for FoldChunksProducer<'f, P, S, F>
where
    P: Producer,
    S: PieceSeed<State = T>,
    F: Fn(T, P::Item) -> T + Sync,
{
    type Item = T;
    type IntoIter = FoldedChunks<P::IntoIter, S, &'f F>;
    fn len(&self) -> usize {
        chunk_count(self.base.len(), self.size)
    }
    fn split_at(self, index: usize) -> (Self, Self) {
        let at = chunk_start(index, self.size, self.base.len());
        let (left, right) = self.base.split_at(at);
        let right = FoldChunksProducer {
            base: right,
            size: self.size,
            seed: self.seed.split(),
            f: self.f,
        };
        let left = FoldChunksProducer {
            base: left,
            size: self.size,
            seed: self.seed,
            f: self.f,
        };
        (left, right)
    }
    fn into_iter(self) -> Self::IntoIter {
        FoldedChunks {
            base: self.base.into_iter(),
            size: self.size,
            seed: self.seed,
            f: self.f,
        }
    }
    forward_hints!();
}

// ------------------------------------------------------------- positions

/// `iter.positions(predicate)`: the indices of the items for which
/// `predicate` holds, in order.
#[derive(Clone, Debug)]
pub struct Positions<I, F> {
    pub(crate) base: Enumerate<I>,
    pub(crate) f: F,
}

closure_producer!(PositionsProducer);

/// The sequential iterator of a [`Positions`] piece: the indices of the
/// enumerated items that pass.
#[derive(Debug)]
pub struct PositionsIter<It, F> {
    base: It,
    f: F,
}

impl<It, T, F> Iterator for PositionsIter<It, F>
where
    It: Iterator<Item = (usize, T)>,
    F: Fn(T) -> bool,
{
    type Item = usize;
    fn next(&mut self) -> Option<usize> {
        let f = &self.f;
        self.base
            .by_ref()
            .find_map(|(index, item)| f(item).then_some(index))
    }
}

impl<I, F> ParallelIterator for Positions<I, F>
where
    I: IndexedParallelIterator,
    F: Fn(I::Item) -> bool + Sync + Send,
{
    type Item = usize;
    type Producer<'a>
        = PositionsProducer<'a, EnumerateProducer<I::Producer<'a>>, F>
    where
        Self: 'a;
    type Seq = PositionsIter<std::iter::Enumerate<I::Seq>, F>;
    fn producer(&mut self) -> Self::Producer<'_> {
        PositionsProducer {
            base: self.base.producer(),
            f: &self.f,
        }
    }
    fn into_seq(self) -> Self::Seq {
        PositionsIter {
            base: self.base.into_seq(),
            f: self.f,
        }
    }
}

impl<'f, P, T, F> Producer for PositionsProducer<'f, P, F>
where
    P: Producer<Item = (usize, T)>,
    F: Fn(T) -> bool + Sync,
{
    type Item = usize;
    type IntoIter = PositionsIter<P::IntoIter, &'f F>;
    fn len(&self) -> usize {
        self.base.len()
    }
    split_closure_producer!(PositionsProducer);
    fn into_iter(self) -> Self::IntoIter {
        PositionsIter {
            base: self.base.into_iter(),
            f: self.f,
        }
    }
    forward_hints!();
}
