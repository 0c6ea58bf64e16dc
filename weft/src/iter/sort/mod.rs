//! Parallel sorts of slices, and `par_chunks_mut` (rayon's
//! `ParallelSliceMut`).
//!
//! Both sorts leave the pieces to the standard library's sorts, which are
//! faster per element than anything generic we could write; the parallel
//! part is only how the slice is cut into independent pieces, and it aims
//! at few, large pieces (a handful per worker), since every pass of ours
//! over the whole slice is one std would not have made. With one worker
//! there is nothing to cut for, and std's sort runs alone.
//!
//! `par_sort_unstable*` is a quicksort whose two sides run as a `join`, in
//! place, with no allocation. The split pass is a block partition (the
//! offsets of misplaced elements gathered without a branch on the
//! comparison, then swapped in pairs): random data makes a plain loop
//! mispredict every other element, and the top pass runs alone, before
//! there is anything to share. The pivot is the median of a sample of up
//! to 63, so that the top splits are even: below them idle workers take
//! halves, but a lopsided split idles a worker until the next one.
//! The `join`s stop at pieces of about `len / (8 * workers)`, enough for
//! stealing to even out the sides' sizes; std's sort takes those pieces
//! whole, but for elements larger than two words, which our partition
//! goes on splitting (sequentially) down to a few thousand, since std's
//! sort is slower on those (`STD_SORTS_ELEMENT_BYTES_UP_TO`). As in pdqsort, a side whose
//! pivot equals the pivot bounding it on the left (so that is its least
//! element) is split into "equal" and "greater" instead, so duplicates
//! cost a pass, not a blow-up; and after `log2(len)` lopsided splits a
//! piece goes to std's sort, which is O(n log n) in the worst case.
//!
//! `par_sort*` (stable) is a merge sort through a buffer as long as the
//! slice: the slice is halved down to pieces of about `len / (4 *
//! workers)` (halves come out even, so fewer pieces do than for the
//! quicksort), each piece is sorted by std's stable sort, and the halves
//! are merged back up, each level from the slice into the buffer or back,
//! so no level copies more than it merges. A merge is itself split in
//! parallel (the middle of the longer run, its place in the other found by
//! binary search) so that the top levels are not sequential passes, and a
//! sequential merge works from both ends at once, which overlaps the two
//! chains of dependent loads and nearly halves its time. Merging needs
//! moves that safe code cannot express for a generic `T`; the unsafe part
//! keeps every element in exactly one place, the slice or the buffer, and
//! every step that may unwind (a comparator's panic) first arranges for
//! its elements to land in its destination anyway, so the slice ends a
//! permutation of its input with nothing dropped twice or leaked. Nothing
//! relies on the comparator being a total order for that.
//!
//! Both first check whether the slice is already sorted or (strictly, for
//! the stable sort) descending, over a `join` tree that stops at the first
//! pair out of order, so those inputs cost a pass (and a reversal) rather
//! than a sort, and a random input costs next to nothing.
//!
//! One file an algorithm: `presorted.rs` (the check and the reversal),
//! `quicksort.rs`, `mergesort.rs`; this module holds the public trait, the
//! sizes both cut to, and `tests.rs` tests them together.

use std::cmp::Ordering;

use self::mergesort::stable_sort;
use self::quicksort::unstable_sort;
use super::slices::{
    ChunkByMut, ChunkBySlices, ChunksExactMut, RChunksExactMut, RChunksMut, SplitInclusiveMut,
    SplitMut, SplitSlices,
};
use super::sources::ChunksMut;

/// Slices no longer than this are sorted sequentially: below it a `join`
/// costs more than it can win.
const SEQUENTIAL: usize = 2048;

/// Pieces per worker that the unstable sort aims for: enough for stealing
/// to even out the uneven sides a sampled pivot leaves; more cost next to
/// nothing (our partition passes stand in for std's), but gain nothing.
const QUICKSORT_PIECES: usize = 8;

/// Pieces per worker for the stable sort. Its pieces come out even (halves
/// of halves), so fewer do; each halving costs a merge pass over the slice.
const MERGESORT_PIECES: usize = 4;

/// Merges no longer than this run sequentially.
const SEQUENTIAL_MERGE: usize = 8192;

/// Elements larger than this (two words) are not left to std's unstable
/// sort in large pieces: our block partition goes on splitting a piece,
/// with no `join`, down to [`OWN_PARTITION_LEAF`]. std's sort is tuned
/// for small elements, and moves each element of a larger type several
/// times a pass where the block partition swaps only the misplaced ones.
/// One thread, 2-5M random elements by a `u64` key (AMD EPYC, medians of
/// 5; docs/PARALLEL.md, "Session 36"), our partition down to 4096 over
/// std's sort alone: 4- and 8-byte integers 1.08x and 1.09x, 16-byte
/// records 0.97x, 24-, 32- and 64-byte records 0.87x, 0.91x and 0.87x,
/// `String`s 0.86x.
const STD_SORTS_ELEMENT_BYTES_UP_TO: usize = 2 * std::mem::size_of::<usize>();

/// Where the sequential partitions of larger elements
/// ([`STD_SORTS_ELEMENT_BYTES_UP_TO`]) leave off for std's sort: 1024-16384 read
/// within 3% of each other.
const OWN_PARTITION_LEAF: usize = 4096;

/// The plain passes (the presorted check, the reversal) split no further
/// than this: they cost about a nanosecond an element, so a piece is still
/// tens of microseconds of work, far above a `join`'s cost.
const SEQUENTIAL_PASS: usize = 1 << 16;

/// Parallel views and sorts of a mutable slice (rayon's `ParallelSliceMut`).
pub trait ParallelSliceMut<T: Send> {
    /// The slice itself, which the other methods view or sort.
    fn as_parallel_slice_mut(&mut self) -> &mut [T];

    /// Non-overlapping mutable pieces of `size` elements, the last
    /// possibly shorter. Panics if `size` is 0.
    fn par_chunks_mut(&mut self, size: usize) -> ChunksMut<'_, T>;

    /// Non-overlapping mutable pieces of exactly `size` elements; the last
    /// `len % size` elements are left out, in the iterator's
    /// `remainder`. Panics if `size` is 0.
    ///
    /// ```
    /// use weft::prelude::*;
    /// let mut v = [1, 2, 3, 4, 5];
    /// v.par_chunks_exact_mut(2).for_each(|c| c.swap(0, 1));
    /// assert_eq!(v, [2, 1, 4, 3, 5]);
    /// ```
    fn par_chunks_exact_mut(&mut self, size: usize) -> ChunksExactMut<'_, T>;

    /// Non-overlapping mutable pieces of `size` elements counted from the
    /// end, the last (the slice's first `len % size`) possibly shorter.
    /// Panics if `size` is 0.
    ///
    /// ```
    /// use weft::prelude::*;
    /// let mut v = [1, 2, 3, 4, 5];
    /// v.par_rchunks_mut(2).for_each(|c| c.reverse());
    /// assert_eq!(v, [1, 3, 2, 5, 4]);
    /// ```
    fn par_rchunks_mut(&mut self, size: usize) -> RChunksMut<'_, T>;

    /// As `par_rchunks_mut`, the pieces all of `size`; the first
    /// `len % size` elements are left out, in the iterator's
    /// `remainder`. Panics if `size` is 0.
    ///
    /// ```
    /// use weft::prelude::*;
    /// let mut v = [1, 2, 3, 4, 5];
    /// let mut chunks = v.par_rchunks_exact_mut(2);
    /// chunks.take_remainder()[0] = 0;
    /// chunks.for_each(|c| c.reverse());
    /// assert_eq!(v, [0, 3, 2, 5, 4]);
    /// ```
    fn par_rchunks_exact_mut(&mut self, size: usize) -> RChunksExactMut<'_, T>;

    /// Sorts, stable, in parallel.
    fn par_sort(&mut self)
    where
        T: Ord;

    /// Sorts by `compare`, stable, in parallel.
    fn par_sort_by<F>(&mut self, compare: F)
    where
        F: Fn(&T, &T) -> Ordering + Sync;

    /// Sorts by `key`, stable, in parallel.
    fn par_sort_by_key<K, F>(&mut self, key: F)
    where
        K: Ord,
        F: Fn(&T) -> K + Sync;

    /// Sorts by `key`, stable, in parallel, calling `key` once per element
    /// (`slice::sort_by_cached_key`): the keys are computed in parallel
    /// and kept, with each element's index, in a buffer as long as the
    /// slice, which is sorted; the elements are then moved into their
    /// places in one sequential pass. Worth it over `par_sort_by_key` when
    /// a key is costly to compute.
    ///
    /// ```
    /// use weft::prelude::*;
    /// let mut v = [-5i32, 4, 32, -3, 2];
    /// v.par_sort_by_cached_key(|x| x.to_string());
    /// assert_eq!(v, [-3, -5, 2, 32, 4]);
    /// ```
    fn par_sort_by_cached_key<K, F>(&mut self, key: F)
    where
        K: Ord + Send,
        F: Fn(&T) -> K + Sync,
    {
        use super::{IndexedParallelIterator, IntoParallelRefMutIterator, ParallelIterator};
        let slice = self.as_parallel_slice_mut();
        if slice.len() < 2 {
            return;
        }
        // The index breaks ties between equal keys, so an unstable sort of
        // the pairs orders equal elements as they were: stable.
        let mut order: Vec<(K, usize)> = slice
            .par_iter_mut()
            .enumerate()
            .map(|(index, elem)| (key(elem), index))
            .collect();
        order.par_sort_unstable();
        permute(slice, order.into_iter().map(|(_, from)| from));
    }

    /// Sorts, not stable, in parallel.
    fn par_sort_unstable(&mut self)
    where
        T: Ord;

    /// Sorts by `compare`, not stable, in parallel.
    fn par_sort_unstable_by<F>(&mut self, compare: F)
    where
        F: Fn(&T, &T) -> Ordering + Sync;

    /// Sorts by `key`, not stable, in parallel.
    fn par_sort_unstable_by_key<K, F>(&mut self, key: F)
    where
        K: Ord,
        F: Fn(&T) -> K + Sync;

    /// The mutable pieces between the elements for which `separator`
    /// holds, in order, as `slice::split_mut` gives them: the separators
    /// in none, and empty pieces included (one for an empty slice).
    ///
    /// ```
    /// use weft::prelude::*;
    /// let mut v = [3, 1, 0, 5, 4, 2, 0, 7];
    /// v.par_split_mut(|&x| x == 0).for_each(|piece| piece.sort());
    /// assert_eq!(v, [1, 3, 0, 2, 4, 5, 0, 7]);
    /// ```
    fn par_split_mut<P>(&mut self, separator: P) -> SplitMut<'_, T, P>
    where
        P: Fn(&T) -> bool + Sync + Send,
    {
        SplitSlices::new(self.as_parallel_slice_mut(), separator)
    }

    /// The mutable pieces each ended by an element for which `separator`
    /// holds, that element included, as `slice::split_inclusive_mut`
    /// gives them (none for an empty slice).
    ///
    /// ```
    /// use weft::prelude::*;
    /// let mut v = [1, 2, 0, 3, 0, 4];
    /// v.par_split_inclusive_mut(|&x| x == 0).for_each(|piece| piece.reverse());
    /// assert_eq!(v, [0, 2, 1, 0, 3, 4]);
    /// ```
    fn par_split_inclusive_mut<P>(&mut self, separator: P) -> SplitInclusiveMut<'_, T, P>
    where
        P: Fn(&T) -> bool + Sync + Send,
    {
        SplitSlices::new(self.as_parallel_slice_mut(), separator)
    }

    /// The mutable runs of neighbours for which `same(left, right)` holds
    /// between each two in a row, as `slice::chunk_by_mut` gives them.
    ///
    /// ```
    /// use weft::prelude::*;
    /// let mut v = [1, 1, 2, 3, 3];
    /// v.par_chunk_by_mut(|a, b| a == b).for_each(|run| {
    ///     let len = run.len() as i32;
    ///     run.iter_mut().for_each(|x| *x *= len);
    /// });
    /// assert_eq!(v, [2, 2, 2, 6, 6]);
    /// ```
    fn par_chunk_by_mut<F>(&mut self, same: F) -> ChunkByMut<'_, T, F>
    where
        F: Fn(&T, &T) -> bool + Sync + Send,
    {
        ChunkBySlices::new(self.as_parallel_slice_mut(), same)
    }
}

/// Puts into place `i` the element that was at `sources`' `i`-th index, for
/// every `i`: `sources` is a permutation of the slice's indices. The
/// elements move by swaps; when place `i` is filled, the element that was
/// at `sources[i]` may have been swapped away already, to a place before
/// `i`, whose own entry says where that place's old element went: the
/// chase ends at an index not below `i`. Every entry is rewritten to where
/// its element now is, so each chase is short (as in std's
/// `sort_by_cached_key`, which does the same).
fn permute<T>(slice: &mut [T], sources: impl Iterator<Item = usize>) {
    let mut now_at: Vec<usize> = sources.collect();
    for place in 0..now_at.len() {
        let mut from = now_at[place];
        while from < place {
            from = now_at[from];
        }
        now_at[place] = from;
        slice.swap(place, from);
    }
}

impl<T: Send> ParallelSliceMut<T> for [T] {
    fn as_parallel_slice_mut(&mut self) -> &mut [T] {
        self
    }
    fn par_chunks_mut(&mut self, size: usize) -> ChunksMut<'_, T> {
        ChunksMut::new(self, size)
    }
    fn par_chunks_exact_mut(&mut self, size: usize) -> ChunksExactMut<'_, T> {
        ChunksExactMut::new(self, size)
    }
    fn par_rchunks_mut(&mut self, size: usize) -> RChunksMut<'_, T> {
        RChunksMut::new(self, size)
    }
    fn par_rchunks_exact_mut(&mut self, size: usize) -> RChunksExactMut<'_, T> {
        RChunksExactMut::new(self, size)
    }

    fn par_sort(&mut self)
    where
        T: Ord,
    {
        self.par_sort_by(T::cmp);
    }

    fn par_sort_by<F>(&mut self, compare: F)
    where
        F: Fn(&T, &T) -> Ordering + Sync,
    {
        if self.len() <= SEQUENTIAL {
            self.sort_by(compare);
            return;
        }
        crate::api::global::in_worker(|| {
            stable_sort(self, &compare, Sizes::new(self.len(), MERGESORT_PIECES));
        });
    }

    fn par_sort_by_key<K, F>(&mut self, key: F)
    where
        K: Ord,
        F: Fn(&T) -> K + Sync,
    {
        self.par_sort_by(|a, b| key(a).cmp(&key(b)));
    }

    fn par_sort_unstable(&mut self)
    where
        T: Ord,
    {
        self.par_sort_unstable_by(T::cmp);
    }

    fn par_sort_unstable_by<F>(&mut self, compare: F)
    where
        F: Fn(&T, &T) -> Ordering + Sync,
    {
        if self.len() <= SEQUENTIAL {
            self.sort_unstable_by(compare);
            return;
        }
        crate::api::global::in_worker(|| {
            let sizes = Sizes::new(self.len(), QUICKSORT_PIECES);
            unstable_sort(self, &compare, sizes.own_partitions_for::<T>());
        });
    }

    fn par_sort_unstable_by_key<K, F>(&mut self, key: F)
    where
        K: Ord,
        F: Fn(&T) -> K + Sync,
    {
        self.par_sort_unstable_by(|a, b| key(a).cmp(&key(b)));
    }
}

/// How finely a sort cuts its slice. The tests pass tiny ones, so that
/// small inputs (all Miri can afford) go through the parallel paths.
#[derive(Clone, Copy, Debug)]
struct Sizes {
    /// Pieces this long or shorter are sorted with no `join`.
    piece: usize,
    /// Merges this long or shorter run sequentially.
    merge: usize,
    /// The unstable sort's slices this long or shorter go to std's sort;
    /// longer ones are partitioned first (sequentially, once no longer
    /// than `piece`). At least `piece` but for large elements
    /// ([`Sizes::own_partitions_for`]).
    leaf: usize,
}

impl Sizes {
    /// For `len` elements cut into about `pieces` per worker; not cut at
    /// all for a single worker, which std's sort alone serves best.
    fn new(len: usize, pieces: usize) -> Sizes {
        let workers = crate::current_num_threads();
        let piece = if workers <= 1 {
            len
        } else {
            (len / (workers * pieces)).max(SEQUENTIAL)
        };
        Sizes {
            piece,
            merge: SEQUENTIAL_MERGE,
            leaf: piece,
        }
    }

    /// These sizes for an unstable sort of `T`: elements larger than
    /// [`STD_SORTS_ELEMENT_BYTES_UP_TO`] are partitioned by us down to
    /// [`OWN_PARTITION_LEAF`], where std's sort would be slower.
    fn own_partitions_for<T>(self) -> Sizes {
        if std::mem::size_of::<T>() > STD_SORTS_ELEMENT_BYTES_UP_TO {
            Sizes {
                leaf: OWN_PARTITION_LEAF,
                ..self
            }
        } else {
            self
        }
    }
}

mod mergesort;
mod presorted;
mod quicksort;
#[cfg(test)]
mod tests;
