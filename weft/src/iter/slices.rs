//! The views of a shared slice ([`ParallelSlice`]), and the other
//! chunkings of a slice, shared and mutable: exact chunks
//! (`par_chunks_exact`, their remainder aside), chunks counted from the
//! end (`par_rchunks`), the pieces between separators (`par_split`) and
//! the runs that a predicate on neighbours groups (`par_chunk_by`).
//!
//! The pieces between separators and the runs are found as the driver
//! cuts: a cut moves to the nearest separator (or run border) after the
//! index the driver asks for, else the nearest before, as the `str`
//! producers' do (strings.rs). Each piece is then whole in exactly one
//! producer, and the producers in order give std's pieces in order.

use std::ops::Range;

use super::plumbing::Producer;
use super::sources::{chunk_count, chunk_start, Chunks, ChunksMut, Windows};
use super::{IndexedParallelIterator, Map, ParallelIterator};

/// Parallel views of a shared slice (rayon's `ParallelSlice`).
pub trait ParallelSlice<T: Sync> {
    /// The slice itself, which the other methods view.
    fn as_parallel_slice(&self) -> &[T];

    /// Non-overlapping pieces of `size` elements, the last possibly
    /// shorter. Panics if `size` is 0.
    ///
    /// ```
    /// use weft::prelude::*;
    /// let sums: Vec<i32> = [1, 2, 3, 4, 5].par_chunks(2).map(|c| c.iter().sum()).collect();
    /// assert_eq!(sums, [3, 7, 5]);
    /// ```
    fn par_chunks(&self, size: usize) -> Chunks<'_, T> {
        Chunks::new(self.as_parallel_slice(), size)
    }

    /// Every run of `size` neighbours. Panics if `size` is 0.
    ///
    /// ```
    /// use weft::prelude::*;
    /// let v: Vec<&[i32]> = [1, 2, 3].par_windows(2).collect();
    /// assert_eq!(v, [&[1, 2][..], &[2, 3]]);
    /// ```
    fn par_windows(&self, size: usize) -> Windows<'_, T> {
        Windows::new(self.as_parallel_slice(), size)
    }

    /// Every run of `N` neighbours, as a reference to an array (an indexed
    /// iterator). Panics if `N` is 0.
    ///
    /// ```
    /// use weft::prelude::*;
    /// let rises = [1, 3, 2, 5].par_array_windows().filter(|[a, b]| a < b).count();
    /// assert_eq!(rises, 2);
    /// ```
    fn par_array_windows<const N: usize>(&self) -> ArrayWindows<'_, T, N> {
        self.par_windows(N).map(as_array as fn(&[T]) -> &[T; N])
    }

    /// Non-overlapping pieces of exactly `size` elements; the last
    /// `len % size` elements are left out, in
    /// [`remainder`](Exact::remainder). Panics if `size` is 0.
    ///
    /// ```
    /// use weft::prelude::*;
    /// let v = [1, 2, 3, 4, 5];
    /// let chunks = v.par_chunks_exact(2);
    /// assert_eq!(chunks.remainder(), [5]);
    /// assert_eq!(chunks.map(|c| c.iter().sum::<i32>()).collect::<Vec<_>>(), [3, 7]);
    /// ```
    fn par_chunks_exact(&self, size: usize) -> ChunksExact<'_, T> {
        ChunksExact::new(self.as_parallel_slice(), size)
    }

    /// Non-overlapping pieces of `size` elements counted from the end: the
    /// first is the last `size` elements, and the last, the slice's
    /// first `len % size`, possibly shorter. Panics if `size` is 0.
    ///
    /// ```
    /// use weft::prelude::*;
    /// let v = [1, 2, 3, 4, 5];
    /// let chunks: Vec<&[i32]> = v.par_rchunks(2).collect();
    /// assert_eq!(chunks, [&[4, 5][..], &[2, 3], &[1]]);
    /// ```
    fn par_rchunks(&self, size: usize) -> RChunks<'_, T> {
        RChunks::new(self.as_parallel_slice(), size)
    }

    /// As [`par_rchunks`](Self::par_rchunks), the pieces all of `size`;
    /// the first `len % size` elements are left out, in
    /// [`remainder`](Exact::remainder). Panics if `size` is 0.
    ///
    /// ```
    /// use weft::prelude::*;
    /// let v = [1, 2, 3, 4, 5];
    /// let chunks = v.par_rchunks_exact(2);
    /// assert_eq!(chunks.remainder(), [1]);
    /// assert_eq!(chunks.collect::<Vec<_>>(), [&[4, 5][..], &[2, 3]]);
    /// ```
    fn par_rchunks_exact(&self, size: usize) -> RChunksExact<'_, T> {
        RChunksExact::new(self.as_parallel_slice(), size)
    }

    /// The pieces between the elements for which `separator` holds, in
    /// order, as `slice::split` gives them: the separators in none, and
    /// empty pieces included (one for an empty slice).
    ///
    /// ```
    /// use weft::prelude::*;
    /// let sums: Vec<i32> = [1, 2, 0, 3, 0, 0, 4]
    ///     .par_split(|&x| x == 0)
    ///     .map(|piece| piece.iter().sum())
    ///     .collect();
    /// assert_eq!(sums, [3, 3, 0, 4]);
    /// ```
    fn par_split<P>(&self, separator: P) -> SliceSplit<'_, T, P>
    where
        P: Fn(&T) -> bool + Sync + Send,
    {
        SplitSlices::new(self.as_parallel_slice(), separator)
    }

    /// The pieces each ended by an element for which `separator` holds,
    /// that element included, as `slice::split_inclusive` gives them: the
    /// last piece ends with the slice if no separator ends it, and an
    /// empty slice has none.
    ///
    /// ```
    /// use weft::prelude::*;
    /// let v: Vec<&[i32]> = [1, 0, 2, 3, 0].par_split_inclusive(|&x| x == 0).collect();
    /// assert_eq!(v, [&[1, 0][..], &[2, 3, 0]]);
    /// ```
    fn par_split_inclusive<P>(&self, separator: P) -> SliceSplitInclusive<'_, T, P>
    where
        P: Fn(&T) -> bool + Sync + Send,
    {
        SplitSlices::new(self.as_parallel_slice(), separator)
    }

    /// The runs of neighbours for which `same(left, right)` holds between
    /// each two in a row, in order, as `slice::chunk_by` gives them (none
    /// for an empty slice).
    ///
    /// ```
    /// use weft::prelude::*;
    /// let runs: Vec<&[i32]> = [1, 1, 2, 3, 3, 3].par_chunk_by(|a, b| a == b).collect();
    /// assert_eq!(runs, [&[1, 1][..], &[2], &[3, 3, 3]]);
    /// ```
    fn par_chunk_by<F>(&self, same: F) -> ChunkBy<'_, T, F>
    where
        F: Fn(&T, &T) -> bool + Sync + Send,
    {
        ChunkBySlices::new(self.as_parallel_slice(), same)
    }
}

impl<T: Sync> ParallelSlice<T> for [T] {
    fn as_parallel_slice(&self) -> &[T] {
        self
    }
}

/// `slice.par_array_windows::<N>()`.
pub type ArrayWindows<'a, T, const N: usize> = Map<Windows<'a, T>, fn(&'a [T]) -> &'a [T; N]>;

fn as_array<T, const N: usize>(window: &[T]) -> &[T; N] {
    window.try_into().expect("a window of N elements")
}

/// Chunks that all have the same length, and the remainder that is
/// shorter than one, aside (`par_chunks_exact`, `par_rchunks_exact` and
/// their mutable forms): the chunks iterator `I` runs over the slice
/// without the remainder.
#[derive(Debug)]
pub struct Exact<I, R> {
    chunks: I,
    remainder: R,
}

/// `slice.par_chunks_exact(size)`.
pub type ChunksExact<'a, T> = Exact<Chunks<'a, T>, &'a [T]>;
/// `slice.par_chunks_exact_mut(size)`.
pub type ChunksExactMut<'a, T> = Exact<ChunksMut<'a, T>, &'a mut [T]>;
/// `slice.par_rchunks_exact(size)`.
pub type RChunksExact<'a, T> = Exact<RChunks<'a, T>, &'a [T]>;
/// `slice.par_rchunks_exact_mut(size)`.
pub type RChunksExactMut<'a, T> = Exact<RChunksMut<'a, T>, &'a mut [T]>;

impl<'a, I, T> Exact<I, &'a [T]> {
    /// The elements left out of the chunks (after the last chunk, or
    /// before it counting from the end), fewer than the chunk size.
    pub fn remainder(&self) -> &'a [T] {
        self.remainder
    }
}

impl<'a, I, T> Exact<I, &'a mut [T]> {
    /// The elements left out of the chunks, fewer than the chunk size.
    pub fn remainder(&mut self) -> &mut [T] {
        self.remainder
    }
    /// The elements left out of the chunks, for as long as the slice.
    pub fn into_remainder(self) -> &'a mut [T] {
        self.remainder
    }
    /// Takes the elements left out of the chunks, leaving none.
    pub fn take_remainder(&mut self) -> &'a mut [T] {
        std::mem::take(&mut self.remainder)
    }
}

impl<'a, T> ChunksExact<'a, T> {
    pub(crate) fn new(slice: &'a [T], size: usize) -> Self {
        assert!(size != 0, "chunk size must be non-zero");
        let (chunks, remainder) = slice.split_at(slice.len() - slice.len() % size);
        Exact {
            chunks: Chunks::new(chunks, size),
            remainder,
        }
    }
}

impl<'a, T> ChunksExactMut<'a, T> {
    pub(crate) fn new(slice: &'a mut [T], size: usize) -> Self {
        assert!(size != 0, "chunk size must be non-zero");
        let at = slice.len() - slice.len() % size;
        let (chunks, remainder) = slice.split_at_mut(at);
        Exact {
            chunks: ChunksMut::new(chunks, size),
            remainder,
        }
    }
}

impl<'a, T> RChunksExact<'a, T> {
    pub(crate) fn new(slice: &'a [T], size: usize) -> Self {
        assert!(size != 0, "chunk size must be non-zero");
        let (remainder, chunks) = slice.split_at(slice.len() % size);
        Exact {
            chunks: RChunks {
                slice: chunks,
                size,
            },
            remainder,
        }
    }
}

impl<'a, T> RChunksExactMut<'a, T> {
    pub(crate) fn new(slice: &'a mut [T], size: usize) -> Self {
        assert!(size != 0, "chunk size must be non-zero");
        let (remainder, chunks) = slice.split_at_mut(slice.len() % size);
        Exact {
            chunks: RChunksMut {
                slice: chunks,
                size,
            },
            remainder,
        }
    }
}

impl<I: ParallelIterator, R: Send> ParallelIterator for Exact<I, R> {
    type Item = I::Item;
    type Producer<'b>
        = I::Producer<'b>
    where
        Self: 'b;
    type Seq = I::Seq;
    fn producer(&mut self) -> Self::Producer<'_> {
        self.chunks.producer()
    }
    fn into_seq(self) -> Self::Seq {
        self.chunks.into_seq()
    }
    fn opt_len(&self) -> Option<usize> {
        self.chunks.opt_len()
    }
}

impl<I: IndexedParallelIterator, R: Send> IndexedParallelIterator for Exact<I, R> {
    fn len(&self) -> usize {
        self.chunks.len()
    }
}

/// Declares a chunking counted from the end of a slice: the iterator, its
/// producer, and how each takes its slice (`$take`) and cuts it.
macro_rules! rchunks {
    (
        $(#[$doc:meta])*
        $name:ident, $producer:ident, $bound:ident, [$($slice:tt)+];
        item $item:ty, seq $seq:ident, $rchunks:ident, $split:ident, $take:expr
    ) => {
        $(#[$doc])*
        #[derive(Debug)]
        pub struct $name<'a, T> {
            slice: $($slice)+ [T],
            size: usize,
        }

        /// The producer of the iterator of the same name.
        #[derive(Debug)]
        pub struct $producer<'a, T> {
            slice: $($slice)+ [T],
            size: usize,
        }

        impl<'a, T> $name<'a, T> {
            pub(crate) fn new(slice: $($slice)+ [T], size: usize) -> Self {
                assert!(size != 0, "chunk size must be non-zero");
                $name { slice, size }
            }
        }

        impl<'a, T: $bound> ParallelIterator for $name<'a, T> {
            type Item = $item;
            type Producer<'b>
                = $producer<'a, T>
            where
                Self: 'b;
            type Seq = std::slice::$seq<'a, T>;
            fn producer(&mut self) -> $producer<'a, T> {
                let take: fn(&mut $($slice)+ [T]) -> $($slice)+ [T] = $take;
                $producer {
                    slice: take(&mut self.slice),
                    size: self.size,
                }
            }
            fn into_seq(self) -> Self::Seq {
                self.slice.$rchunks(self.size)
            }
            fn opt_len(&self) -> Option<usize> {
                Some(chunk_count(self.slice.len(), self.size))
            }
        }

        impl<T: $bound> IndexedParallelIterator for $name<'_, T> {
            fn len(&self) -> usize {
                chunk_count(self.slice.len(), self.size)
            }
        }

        impl<'a, T: $bound> Producer for $producer<'a, T> {
            type Item = $item;
            type IntoIter = std::slice::$seq<'a, T>;
            fn len(&self) -> usize {
                chunk_count(self.slice.len(), self.size)
            }
            fn split_at(self, index: usize) -> (Self, Self) {
                // The first `index` chunks are the slice's last elements.
                let len = self.slice.len();
                let at = len - chunk_start(index, self.size, len);
                let (rest, first) = self.slice.$split(at);
                let size = self.size;
                ($producer { slice: first, size }, $producer { slice: rest, size })
            }
            fn into_iter(self) -> Self::IntoIter {
                self.slice.$rchunks(self.size)
            }
        }
    };
}

rchunks!(
    /// `slice.par_rchunks(size)`: non-overlapping pieces of `size`
    /// elements from the end, the last (the slice's first elements)
    /// possibly shorter.
    RChunks, RChunksProducer, Sync, [&'a];
    item &'a [T], seq RChunks, rchunks, split_at, |slice| *slice
);

rchunks!(
    /// `slice.par_rchunks_mut(size)`.
    RChunksMut, RChunksMutProducer, Send, [&'a mut];
    item &'a mut [T], seq RChunksMut, rchunks_mut, split_at_mut,
    // The slice moves into the producer, so no element is lent twice.
    |slice| std::mem::take(slice)
);

// ------------------------------------------ pieces between separators

/// A slice that the pieces between separators and the runs are cut from:
/// `&[T]` and `&mut [T]`, whose pieces are slices of the same kind.
pub trait SubSlice: Sized + Send + Default {
    /// The elements.
    type Elem;
    /// The elements, to look at.
    fn elems(&self) -> &[Self::Elem];
    /// The elements before `at` and those from it on.
    fn cut(self, at: usize) -> (Self, Self);
}

impl<T: Sync> SubSlice for &[T] {
    type Elem = T;
    fn elems(&self) -> &[T] {
        self
    }
    fn cut(self, at: usize) -> (Self, Self) {
        self.split_at(at)
    }
}

impl<T: Send> SubSlice for &mut [T] {
    type Elem = T;
    fn elems(&self) -> &[T] {
        self
    }
    fn cut(self, at: usize) -> (Self, Self) {
        self.split_at_mut(at)
    }
}

/// The first position in `range` at or after `index` that `is_cut`
/// accepts, else the last one before it.
fn nearest_cut(index: usize, range: Range<usize>, is_cut: impl Fn(usize) -> bool) -> Option<usize> {
    let index = index.clamp(range.start, range.end.max(range.start));
    (index..range.end)
        .find(|&at| is_cut(at))
        .or_else(|| (range.start..index).rev().find(|&at| is_cut(at)))
}

/// The pieces of a slice (`S`: `&[T]` or `&mut [T]`) between the elements
/// for which `separator` holds; with `INCLUSIVE`, each piece with the
/// separator that ends it. See the aliases [`SliceSplit`],
/// [`SliceSplitInclusive`], [`SplitMut`] and [`SplitInclusiveMut`].
#[derive(Debug)]
pub struct SplitSlices<S, P, const INCLUSIVE: bool> {
    slice: S,
    separator: P,
}

/// `slice.par_split(separator)` (rayon's `slice::Split`).
pub type SliceSplit<'a, T, P> = SplitSlices<&'a [T], P, false>;
/// `slice.par_split_inclusive(separator)` (rayon's
/// `slice::SplitInclusive`).
pub type SliceSplitInclusive<'a, T, P> = SplitSlices<&'a [T], P, true>;
/// `slice.par_split_mut(separator)`.
pub type SplitMut<'a, T, P> = SplitSlices<&'a mut [T], P, false>;
/// `slice.par_split_inclusive_mut(separator)`.
pub type SplitInclusiveMut<'a, T, P> = SplitSlices<&'a mut [T], P, true>;

impl<S, P, const INCLUSIVE: bool> SplitSlices<S, P, INCLUSIVE> {
    pub(crate) fn new(slice: S, separator: P) -> Self {
        SplitSlices { slice, separator }
    }
}

/// The producer of [`SplitSlices`]: a piece of the slice that starts after
/// a separator (or at the start) and ends before one (after it, when
/// `INCLUSIVE`) or at the end, or nothing at all (`None`), which yields no
/// piece, not even an empty one.
#[derive(Debug)]
pub struct SplitSlicesProducer<'p, S, P, const INCLUSIVE: bool> {
    slice: Option<S>,
    separator: &'p P,
}

/// The sequential iterator over the pieces of a slice between separators;
/// `Q`, the separator, is borrowed by a producer's piece and owned by the
/// whole iterator run sequentially.
#[derive(Debug)]
pub struct SplitSlicesIter<S, Q, const INCLUSIVE: bool> {
    rest: Option<S>,
    separator: Q,
}

impl<S, Q, const INCLUSIVE: bool> Iterator for SplitSlicesIter<S, Q, INCLUSIVE>
where
    S: SubSlice,
    Q: Fn(&S::Elem) -> bool,
{
    type Item = S;
    fn next(&mut self) -> Option<S> {
        let slice = self.rest.take()?;
        if INCLUSIVE && slice.elems().is_empty() {
            // What follows a last separator: no piece.
            return None;
        }
        let Some(at) = slice.elems().iter().position(&self.separator) else {
            return Some(slice);
        };
        let (piece, rest) = slice.cut(at + 1);
        self.rest = Some(rest);
        Some(if INCLUSIVE { piece } else { piece.cut(at).0 })
    }
}

impl<S, P, const INCLUSIVE: bool> ParallelIterator for SplitSlices<S, P, INCLUSIVE>
where
    S: SubSlice,
    P: Fn(&S::Elem) -> bool + Sync + Send,
{
    type Item = S;
    type Producer<'b>
        = SplitSlicesProducer<'b, S, P, INCLUSIVE>
    where
        Self: 'b;
    type Seq = SplitSlicesIter<S, P, INCLUSIVE>;
    fn producer(&mut self) -> Self::Producer<'_> {
        // The iterator is consumed by the call that asked: a mutable slice
        // moves into the producer, so no element is lent out twice.
        SplitSlicesProducer {
            slice: Some(std::mem::take(&mut self.slice)),
            separator: &self.separator,
        }
    }
    fn into_seq(self) -> Self::Seq {
        SplitSlicesIter {
            rest: Some(self.slice),
            separator: self.separator,
        }
    }
}

impl<'p, S, P, const INCLUSIVE: bool> Producer for SplitSlicesProducer<'p, S, P, INCLUSIVE>
where
    S: SubSlice,
    P: Fn(&S::Elem) -> bool + Sync,
{
    type Item = S;
    type IntoIter = SplitSlicesIter<S, &'p P, INCLUSIVE>;
    fn len(&self) -> usize {
        self.slice.as_ref().map_or(0, |slice| slice.elems().len())
    }
    fn split_at(self, index: usize) -> (Self, Self) {
        let separator = self.separator;
        let piece = |slice| SplitSlicesProducer { slice, separator };
        let Some(slice) = self.slice else {
            return (piece(None), piece(None));
        };
        // The separator nearest after the cut, else the nearest before; it
        // belongs to neither side, or to the left one when `INCLUSIVE`.
        // With none, the slice is one piece.
        let elems = slice.elems();
        let Some(at) = nearest_cut(index, 0..elems.len(), |at| separator(&elems[at])) else {
            return (piece(Some(slice)), piece(None));
        };
        let (left, right) = slice.cut(at + 1);
        let left = if INCLUSIVE { left } else { left.cut(at).0 };
        (piece(Some(left)), piece(Some(right)))
    }
    fn into_iter(self) -> Self::IntoIter {
        SplitSlicesIter {
            rest: self.slice,
            separator: self.separator,
        }
    }
}

// ------------------------------------------------------------- chunk_by

/// The runs of a slice (`S`: `&[T]` or `&mut [T]`) whose neighbours `same`
/// groups. See the aliases [`ChunkBy`] and [`ChunkByMut`].
#[derive(Debug)]
pub struct ChunkBySlices<S, P> {
    slice: S,
    same: P,
}

/// `slice.par_chunk_by(same)`.
pub type ChunkBy<'a, T, P> = ChunkBySlices<&'a [T], P>;
/// `slice.par_chunk_by_mut(same)`.
pub type ChunkByMut<'a, T, P> = ChunkBySlices<&'a mut [T], P>;

impl<S, P> ChunkBySlices<S, P> {
    pub(crate) fn new(slice: S, same: P) -> Self {
        ChunkBySlices { slice, same }
    }
}

/// The producer of [`ChunkBySlices`]: a piece of the slice cut between two
/// runs.
#[derive(Debug)]
pub struct ChunkBySlicesProducer<'p, S, P> {
    slice: S,
    same: &'p P,
}

/// The sequential iterator over the runs of a slice; `Q`, the predicate,
/// is borrowed by a producer's piece and owned by the whole iterator run
/// sequentially.
#[derive(Debug)]
pub struct ChunkByIter<S, Q> {
    rest: S,
    same: Q,
}

/// Where the run that starts `elems` ends.
fn run_end<T>(elems: &[T], same: impl Fn(&T, &T) -> bool) -> usize {
    (1..elems.len())
        .find(|&at| !same(&elems[at - 1], &elems[at]))
        .unwrap_or(elems.len())
}

impl<S, Q> Iterator for ChunkByIter<S, Q>
where
    S: SubSlice,
    Q: Fn(&S::Elem, &S::Elem) -> bool,
{
    type Item = S;
    fn next(&mut self) -> Option<S> {
        let elems = self.rest.elems();
        if elems.is_empty() {
            return None;
        }
        let end = run_end(elems, &self.same);
        let (run, rest) = std::mem::take(&mut self.rest).cut(end);
        self.rest = rest;
        Some(run)
    }
}

impl<S, P> ParallelIterator for ChunkBySlices<S, P>
where
    S: SubSlice,
    P: Fn(&S::Elem, &S::Elem) -> bool + Sync + Send,
{
    type Item = S;
    type Producer<'b>
        = ChunkBySlicesProducer<'b, S, P>
    where
        Self: 'b;
    type Seq = ChunkByIter<S, P>;
    fn producer(&mut self) -> Self::Producer<'_> {
        // As `SplitSlices::producer`: a mutable slice moves out.
        ChunkBySlicesProducer {
            slice: std::mem::take(&mut self.slice),
            same: &self.same,
        }
    }
    fn into_seq(self) -> Self::Seq {
        ChunkByIter {
            rest: self.slice,
            same: self.same,
        }
    }
}

impl<'p, S, P> Producer for ChunkBySlicesProducer<'p, S, P>
where
    S: SubSlice,
    P: Fn(&S::Elem, &S::Elem) -> bool + Sync,
{
    type Item = S;
    type IntoIter = ChunkByIter<S, &'p P>;
    fn len(&self) -> usize {
        self.slice.elems().len()
    }
    fn split_at(self, index: usize) -> (Self, Self) {
        // The border between two runs nearest after the cut, else the
        // nearest before (a border at `at` is between elements `at - 1`
        // and `at`). With none, the slice is one run.
        let same = self.same;
        let elems = self.slice.elems();
        let len = elems.len();
        let border = nearest_cut(index, 1..len, |at| !same(&elems[at - 1], &elems[at]));
        let (left, right) = self.slice.cut(border.unwrap_or(len));
        (
            ChunkBySlicesProducer { slice: left, same },
            ChunkBySlicesProducer { slice: right, same },
        )
    }
    fn into_iter(self) -> Self::IntoIter {
        ChunkByIter {
            rest: self.slice,
            same: self.same,
        }
    }
}
