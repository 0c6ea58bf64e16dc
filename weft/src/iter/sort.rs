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
//! Recursion stops at pieces of about `len / (8 * workers)`, enough for
//! stealing to even out the sides' sizes. As in pdqsort, a side whose
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

use std::cmp::Ordering;
use std::mem::{self, size_of};
use std::ptr;

use super::slices::{ChunksExactMut, RChunksExactMut, RChunksMut};
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

/// The plain passes (the presorted check, the reversal) split no further
/// than this: they cost about a nanosecond an element, so a piece is still
/// tens of microseconds of work, far above a `join`'s cost.
const SEQUENTIAL_PASS: usize = 1 << 16;

/// Parallel views and sorts of a mutable slice (rayon's `ParallelSliceMut`).
pub trait ParallelSliceMut<T: Send> {
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
}

impl<T: Send> ParallelSliceMut<T> for [T] {
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
            unstable_sort(self, &compare, Sizes::new(self.len(), QUICKSORT_PIECES));
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
    /// Pieces this long or shorter go to std's sorts.
    piece: usize,
    /// Merges this long or shorter run sequentially.
    merge: usize,
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
        }
    }
}

// ------------------------------------------------------------ presorted

/// Handles the inputs that need no sort: returns true when `v` was already
/// sorted, or was descending and has been reversed (strictly descending
/// only when `stable`, since a reversal reorders equal elements).
fn presorted<T, F>(v: &mut [T], compare: &F, stable: bool) -> bool
where
    T: Send,
    F: Fn(&T, &T) -> Ordering + Sync,
{
    if all_pairs(v, &|a, b| compare(a, b) != Ordering::Greater) {
        return true;
    }
    let descending = if stable {
        all_pairs(v, &|a, b| compare(a, b) == Ordering::Greater)
    } else {
        all_pairs(v, &|a, b| compare(a, b) != Ordering::Less)
    };
    if descending {
        par_reverse(v);
    }
    descending
}

/// Whether `ok` holds for every two neighbours in `v`. Long slices are
/// halved over a `join` tree (the pair across the cut checked first, so
/// that a slice out of order is usually told at once), since on a sorted
/// input this pass is the whole cost. (`&mut`: a `&[T]` would need
/// `T: Sync` to cross to another worker.)
fn all_pairs<T, F>(v: &mut [T], ok: &F) -> bool
where
    T: Send,
    F: Fn(&T, &T) -> bool + Sync,
{
    if v.len() <= SEQUENTIAL_PASS {
        // Stopping only between chunks lets the compiler vectorize the
        // comparisons within one.
        const CHUNK: usize = 64;
        let mut start = 0;
        while start + 1 < v.len() {
            let chunk = &v[start..v.len().min(start + CHUNK + 1)];
            let mut all = true;
            for i in 1..chunk.len() {
                all &= ok(&chunk[i - 1], &chunk[i]);
            }
            if !all {
                return false;
            }
            start += CHUNK;
        }
        return true;
    }
    let mid = v.len() / 2;
    if !ok(&v[mid - 1], &v[mid]) {
        return false;
    }
    let (left, right) = v.split_at_mut(mid);
    let (left, right) = crate::join(|| all_pairs(left, ok), || all_pairs(right, ok));
    left && right
}

/// Reverses `v`, the swaps split over a `join` tree.
fn par_reverse<T: Send>(v: &mut [T]) {
    let half = v.len() / 2;
    let (front, back) = v.split_at_mut(half);
    let back_len = back.len();
    swap_mirrored(front, &mut back[back_len - half..]);
}

/// Swaps `front[i]` with `back[back.len() - 1 - i]` for every `i`.
fn swap_mirrored<T: Send>(front: &mut [T], back: &mut [T]) {
    if front.len() <= SEQUENTIAL_PASS {
        for (a, b) in front.iter_mut().zip(back.iter_mut().rev()) {
            mem::swap(a, b);
        }
        return;
    }
    let mid = front.len() / 2;
    let (front_a, front_b) = front.split_at_mut(mid);
    let (back_b, back_a) = back.split_at_mut(back.len() - mid);
    crate::join(
        || swap_mirrored(front_a, back_a),
        || swap_mirrored(front_b, back_b),
    );
}

// ------------------------------------------------------------- unstable

fn unstable_sort<T, F>(v: &mut [T], compare: &F, sizes: Sizes)
where
    T: Send,
    F: Fn(&T, &T) -> Ordering + Sync,
{
    if size_of::<T>() == 0 || v.len() <= sizes.piece {
        v.sort_unstable_by(compare);
        return;
    }
    if presorted(v, compare, false) {
        return;
    }
    let limit = usize::BITS - v.len().leading_zeros();
    quicksort(v, compare, None, limit, sizes.piece);
}

/// Sorts `v`, every element of which is at least `floor` (when given): the
/// pivot of the split that made `v` its right side. (A `&mut`, so that it
/// may cross to another worker with `T` only `Send`.)
fn quicksort<'a, T, F>(
    mut v: &'a mut [T],
    compare: &F,
    mut floor: Option<&'a mut T>,
    mut limit: u32,
    piece: usize,
) where
    T: Send,
    F: Fn(&T, &T) -> Ordering + Sync,
{
    loop {
        let len = v.len();
        if len <= piece || limit == 0 {
            v.sort_unstable_by(compare);
            return;
        }
        let pivot = choose_pivot(v, compare);
        v.swap(0, pivot);
        let (pivot, rest) = v.split_first_mut().expect("a long slice");
        if let Some(floor) = floor.as_deref() {
            if compare(floor, pivot) != Ordering::Less {
                // The pivot is the least element; split off every copy of
                // it, which is then in place, and go on with the rest.
                let equal = partition(rest, |x| compare(pivot, x) != Ordering::Less);
                if equal + 1 < len / 8 {
                    // Few copies (a sample that hit them by design?): a
                    // lopsided split as any other.
                    limit -= 1;
                }
                v = &mut v[equal + 1..];
                continue;
            }
        }
        let mid = partition(rest, |x| compare(x, pivot) == Ordering::Less);
        v.swap(0, mid);
        let (left, right) = v.split_at_mut(mid);
        let (pivot, right) = right.split_first_mut().expect("the pivot");
        if left.len().min(right.len()) < len / 8 {
            limit -= 1;
        }
        if left.len() <= piece && right.len() <= piece {
            left.sort_unstable_by(compare);
            v = right;
            floor = Some(pivot);
            continue;
        }
        crate::join(
            || quicksort(left, compare, floor, limit, piece),
            || quicksort(right, compare, Some(pivot), limit, piece),
        );
        return;
    }
}

/// The index of a pivot for `v`: the median of a sample, spread evenly.
/// Longer slices take a larger sample: a lopsided split near the top
/// leaves workers idle, and the sample costs nothing next to the pass.
fn choose_pivot<T, F>(v: &[T], compare: &F) -> usize
where
    F: Fn(&T, &T) -> Ordering,
{
    const MAX_SAMPLE: usize = 63;
    let len = v.len();
    let count = if len >= 1 << 16 {
        MAX_SAMPLE
    } else if len >= 1 << 10 {
        15
    } else {
        3
    };
    let step = len / count;
    let mut sample = [0usize; MAX_SAMPLE];
    let sample = &mut sample[..count];
    for (i, slot) in sample.iter_mut().enumerate() {
        *slot = i * step + step / 2;
    }
    sample.sort_unstable_by(|&a, &b| compare(&v[a], &v[b]));
    sample[count / 2]
}

/// Moves the elements for which `goes_left` holds before the others and
/// returns how many there are. On a panic of `goes_left`, `v` is still a
/// permutation (only swaps move elements).
///
/// Block partition (Edelkamp and Weiss's BlockQuicksort): a block at each
/// end is scanned recording the offsets of its misplaced elements, without
/// a branch on the outcome, and then the misplaced pairs are swapped.
/// Random data makes the plain loop mispredict on every other element.
fn partition<T>(v: &mut [T], goes_left: impl Fn(&T) -> bool) -> usize {
    // Offsets fit in a `u8`, and masking by `BLOCK - 1` (a no-op, as a
    // count never passes its block) lets the stores skip bounds checks.
    const BLOCK: usize = 128;
    let mut left_offsets = [0u8; BLOCK];
    let mut right_offsets = [0u8; BLOCK];
    // Misplaced elements not yet swapped: `offsets[start..end]`.
    let (mut left_start, mut left_end) = (0usize, 0usize);
    let (mut right_start, mut right_end) = (0usize, 0usize);
    // Everything before `left` goes left, everything from `right` on
    // goes right; the blocks being worked on start at `left` and end at
    // `right`.
    let (mut left, mut right) = (0usize, v.len());
    while right - left >= 2 * BLOCK {
        if left_start == left_end {
            left_start = 0;
            left_end = 0;
            for (i, x) in v[left..left + BLOCK].iter().enumerate() {
                left_offsets[left_end & (BLOCK - 1)] = i as u8;
                left_end += usize::from(!goes_left(x));
            }
        }
        if right_start == right_end {
            right_start = 0;
            right_end = 0;
            for (i, x) in v[right - BLOCK..right].iter().rev().enumerate() {
                right_offsets[right_end & (BLOCK - 1)] = i as u8;
                right_end += usize::from(goes_left(x));
            }
        }
        let count = (left_end - left_start).min(right_end - right_start);
        let lefts = &left_offsets[left_start..left_start + count];
        let rights = &right_offsets[right_start..right_start + count];
        for (&l, &r) in lefts.iter().zip(rights) {
            v.swap(left + usize::from(l), right - 1 - usize::from(r));
        }
        left_start += count;
        right_start += count;
        if left_start == left_end {
            left += BLOCK;
        }
        if right_start == right_end {
            right -= BLOCK;
        }
    }
    // Less than two blocks are left between the cursors (one of them may
    // be half done, and is scanned again): a plain pass finishes them.
    left + partition_small(&mut v[left..right], goes_left)
}

/// As [`partition`], by Lomuto's scheme with the swap made unconditional
/// (so no branch on the outcome either).
fn partition_small<T>(v: &mut [T], goes_left: impl Fn(&T) -> bool) -> usize {
    let mut done = 0;
    for i in 0..v.len() {
        let left = goes_left(&v[i]);
        v.swap(done, i);
        done += usize::from(left);
    }
    done
}

// --------------------------------------------------------------- stable

fn stable_sort<T, F>(v: &mut [T], compare: &F, sizes: Sizes)
where
    T: Send,
    F: Fn(&T, &T) -> Ordering + Sync,
{
    let len = v.len();
    if size_of::<T>() == 0 || len <= sizes.piece {
        v.sort_by(compare);
        return;
    }
    if presorted(v, compare, true) {
        return;
    }
    let mut depth = 0;
    while len >> depth > sizes.piece {
        depth += 1;
    }
    // Room for every element; its length stays 0, so whatever is left in
    // it is never dropped (the elements are owned by `v` again by then).
    let mut buf = Vec::<T>::with_capacity(len);
    let sort = SortCtx {
        compare,
        merge: sizes.merge.max(2),
    };
    // SAFETY: `v` holds `len` live elements and `buf` room for `len` more,
    // apart from each other; both outlive the call, and neither is touched
    // through anything else meanwhile. The call leaves the elements in `v`
    // (`into_buf` false), whether it returns or unwinds.
    unsafe {
        sort.sort(
            Raw(v.as_mut_ptr()),
            Raw(buf.as_mut_ptr()),
            len,
            depth,
            false,
        );
    }
}

/// A pointer that may cross to another worker. The sorts hand each worker
/// a disjoint part of the slice and of the buffer, as `split_at_mut`
/// would, and wait for it before using the part again.
struct Raw<T>(*mut T);

impl<T> Clone for Raw<T> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<T> Copy for Raw<T> {}

// SAFETY: a `Raw` only carries an address; what is done through it is the
// sorts' business, which hands each part to one worker at a time, as if
// it were a `&mut [T]` (which is `Send` for `T: Send`).
unsafe impl<T: Send> Send for Raw<T> {}

// SAFETY: as for `Send`: no two workers use the same part at once.
unsafe impl<T: Send> Sync for Raw<T> {}

impl<T> Raw<T> {
    /// The pointer `count` elements further on.
    ///
    /// # Safety
    ///
    /// As `pointer::add`: in bounds of the same allocation.
    unsafe fn add(self, count: usize) -> Raw<T> {
        // SAFETY: the caller's.
        Raw(unsafe { self.0.add(count) })
    }
}

/// The comparison and sizes a stable sort runs with.
struct SortCtx<'a, F> {
    compare: &'a F,
    merge: usize,
}

impl<F> SortCtx<'_, F> {
    fn is_less<T>(&self, a: &T, b: &T) -> bool
    where
        F: Fn(&T, &T) -> Ordering,
    {
        (self.compare)(a, b) == Ordering::Less
    }

    /// Sorts the `len` elements at `v`, leaving them at `buf` if
    /// `into_buf`, else at `v`, after `depth` halvings (pieces of
    /// `len >> depth`, about, go to std's sort).
    ///
    /// # Safety
    ///
    /// `v` holds `len` live elements; `buf` is room for `len`, apart from
    /// `v`; nothing else uses either meanwhile. On return, *and on
    /// unwinding*, the elements are at the destination (sorted, on return)
    /// and the other place holds nothing live.
    unsafe fn sort<T>(&self, v: Raw<T>, buf: Raw<T>, len: usize, depth: u32, into_buf: bool)
    where
        T: Send,
        F: Fn(&T, &T) -> Ordering + Sync,
    {
        if depth == 0 {
            // Copies the piece into the buffer after the sort, or after
            // its unwinding (std's sort leaves a permutation).
            let _to_buf = into_buf.then(|| Move {
                from: v,
                to: buf,
                len,
            });
            // SAFETY: `v` holds `len` live elements that are ours alone.
            let piece = unsafe { std::slice::from_raw_parts_mut(v.0, len) };
            piece.sort_by(self.compare);
            return;
        }
        let mid = len / 2;
        // The halves land where this level merges from.
        let (from, to) = if into_buf { (v, buf) } else { (buf, v) };
        // If a half unwinds, `join` waits for the other, and both have
        // left their elements in `from`: move them to our destination.
        let unwinding = Move { from, to, len };
        // SAFETY: `mid <= len`, in bounds of both.
        let (v_right, buf_right) = unsafe { (v.add(mid), buf.add(mid)) };
        crate::join(
            // SAFETY: the first `mid` elements of `v` and `buf`, ours, and
            // apart from the other half's.
            || unsafe { self.sort(v, buf, mid, depth - 1, !into_buf) },
            // SAFETY: the other `len - mid`, likewise.
            || unsafe { self.sort(v_right, buf_right, len - mid, depth - 1, !into_buf) },
        );
        mem::forget(unwinding);
        // SAFETY: both halves are sorted at `from`, and `to` is room for
        // both, apart from `from`; `merge` leaves them all at `to`, even
        // if it unwinds.
        unsafe { self.merge(from, mid, from.add(mid), len - mid, to) }
    }

    /// Merges the sorted runs of `left_len` elements at `left` and
    /// `right_len` at `right` into `dest`, stably (a tie takes the left).
    ///
    /// # Safety
    ///
    /// The runs hold live elements, ours; `dest` is room for both, apart
    /// from them. On return and on unwinding every element has been moved
    /// to `dest` (in order, on return), the runs left holding nothing live.
    unsafe fn merge<T>(
        &self,
        left: Raw<T>,
        left_len: usize,
        right: Raw<T>,
        right_len: usize,
        dest: Raw<T>,
    ) where
        T: Send,
        F: Fn(&T, &T) -> Ordering + Sync,
    {
        // Until it is forgotten, this moves all of both runs on drop.
        let rest = Merge {
            left: left.0,
            left_end: left.0.wrapping_add(left_len),
            right: right.0,
            right_end: right.0.wrapping_add(right_len),
            dest: dest.0,
        };
        if left_len == 0 || right_len == 0 {
            return;
        }
        // SAFETY: both runs are non-empty and live.
        let (left_last, right_first) = unsafe { (&*left.0.add(left_len - 1), &*right.0) };
        if !self.is_less(right_first, left_last) {
            // Already in order: `rest` copies left, then right.
            return;
        }
        if left_len + right_len <= self.merge {
            // SAFETY: as ours.
            unsafe { self.merge_sequential(rest) };
            return;
        }
        // SAFETY: the runs are live, so slices of them are valid.
        let (left_run, right_run) = unsafe {
            (
                std::slice::from_raw_parts(left.0, left_len),
                std::slice::from_raw_parts(right.0, right_len),
            )
        };
        let (left_cut, right_cut) = self.split_for_merge(left_run, right_run);
        // Each half now answers for its own elements.
        mem::forget(rest);
        // SAFETY: the cuts are within the runs, and the first halves fill
        // exactly `left_cut + right_cut` of `dest`.
        let (left_b, right_b, dest_b) = unsafe {
            (
                left.add(left_cut),
                right.add(right_cut),
                dest.add(left_cut + right_cut),
            )
        };
        crate::join(
            // SAFETY: the runs' first parts and the start of `dest`: ours,
            // apart from the other half's; everything in them sorts before
            // everything in the second parts, with ties going left first.
            || unsafe { self.merge(left, left_cut, right, right_cut, dest) },
            // SAFETY: the second parts and the rest of `dest`, likewise.
            || unsafe {
                self.merge(
                    left_b,
                    left_len - left_cut,
                    right_b,
                    right_len - right_cut,
                    dest_b,
                )
            },
        );
    }

    /// Where to cut two sorted runs so that the two merges of the first
    /// parts and of the second parts concatenate to the stable merge of
    /// the whole: the middle of the longer run, and the place in the other
    /// that keeps ties in order (equal elements of the left run first).
    fn split_for_merge<T>(&self, left: &[T], right: &[T]) -> (usize, usize)
    where
        F: Fn(&T, &T) -> Ordering,
    {
        if left.len() >= right.len() {
            let cut = left.len() / 2;
            // Right elements equal to `left[cut]` come after it.
            let right_cut = right.partition_point(|x| self.is_less(x, &left[cut]));
            (cut, right_cut)
        } else {
            let cut = right.len() / 2;
            // Left elements equal to `right[cut]` come before it.
            let left_cut = left.partition_point(|x| !self.is_less(&right[cut], x));
            (left_cut, cut)
        }
    }

    /// The merge loop. It works from both ends at once, the lesser head
    /// to the front and the greater tail to the back: the two chains of
    /// dependent loads (each step's source depends on the last compare)
    /// then overlap, which nearly halves the time per element. Each step
    /// first checks that both runs have two elements left, so the front
    /// and the back never take the same element, whatever the comparator
    /// answers; one run nearly done, the rest goes from the front only.
    ///
    /// # Safety
    ///
    /// As [`Self::merge`], for the runs and destination in `rest`.
    unsafe fn merge_sequential<T>(&self, mut rest: Merge<T>)
    where
        F: Fn(&T, &T) -> Ordering,
    {
        // SAFETY: `dest` has room for what is left of both runs.
        let mut dest_back = unsafe {
            rest.dest
                .add(rest.left_end.offset_from(rest.left) as usize)
                .add(rest.right_end.offset_from(rest.right) as usize)
        };
        // `wrapping_add`: the comparisons are only of addresses, and the
        // runs may end at the end of their allocation.
        while rest.left.wrapping_add(1) < rest.left_end
            && rest.right.wrapping_add(1) < rest.right_end
        {
            // SAFETY: each run has at least two live elements between its
            // cursors, so `left`, `right`, `left_end - 1`, `right_end - 1`
            // are live and the front and the back take different ones.
            // `dest..dest_back` is exactly the room for the elements
            // between the cursors; each step moves one element into each
            // end of it and narrows both sides to match, so if a
            // comparison unwinds, `rest` moves exactly the elements not
            // yet taken into exactly the room left.
            unsafe {
                self.merge_front(&mut rest);

                // A tie goes to the right run's element, the later one.
                let left_last = rest.left_end.sub(1);
                let right_last = rest.right_end.sub(1);
                let take_left = self.is_less(&*right_last, &*left_last);
                let from = if take_left { left_last } else { right_last };
                dest_back = dest_back.sub(1);
                ptr::copy_nonoverlapping(from, dest_back, 1);
                rest.left_end = rest.left_end.sub(usize::from(take_left));
                rest.right_end = rest.right_end.sub(usize::from(!take_left));
            }
        }
        while rest.left < rest.left_end && rest.right < rest.right_end {
            // SAFETY: both cursors are before their ends, at live
            // elements; `dest` has room for all that is left. If the
            // comparison unwinds, `rest` moves the remaining elements.
            unsafe { self.merge_front(&mut rest) };
        }
        // `rest` moves what is left of the run that is not exhausted.
    }

    /// One step of the merge from the front: the lesser head moves to
    /// `dest` (a tie goes to the left run's, the earlier one) and its
    /// cursor and `dest` advance.
    ///
    /// # Safety
    ///
    /// Both cursors are at live elements before their ends, and `dest` is
    /// room for one element not overlapping either run.
    #[inline(always)]
    unsafe fn merge_front<T>(&self, rest: &mut Merge<T>)
    where
        F: Fn(&T, &T) -> Ordering,
    {
        // SAFETY: forwarded from this function's contract; if the
        // comparison unwinds, nothing has moved yet.
        unsafe {
            let take_right = self.is_less(&*rest.right, &*rest.left);
            let from = if take_right { rest.right } else { rest.left };
            ptr::copy_nonoverlapping(from, rest.dest, 1);
            rest.dest = rest.dest.add(1);
            rest.right = rest.right.add(usize::from(take_right));
            rest.left = rest.left.add(usize::from(!take_right));
        }
    }
}

/// Moves `len` elements from `from` to `to` when dropped.
struct Move<T> {
    from: Raw<T>,
    to: Raw<T>,
    len: usize,
}

impl<T> Drop for Move<T> {
    fn drop(&mut self) {
        // SAFETY: a `Move` is made only where the `len` elements at `from`
        // are (or, by the time it drops, will be) live and ours, with
        // `to` room for them apart from `from`.
        unsafe { ptr::copy_nonoverlapping(self.from.0, self.to.0, self.len) };
    }
}

/// The state of a merge: what is left of the two runs, and where the next
/// element goes. On drop it moves what is left, the left run then the
/// right, so that an unwinding merge still delivers every element.
struct Merge<T> {
    left: *mut T,
    left_end: *mut T,
    right: *mut T,
    right_end: *mut T,
    dest: *mut T,
}

impl<T> Drop for Merge<T> {
    fn drop(&mut self) {
        // SAFETY: `left..left_end` and `right..right_end` are the live
        // elements not yet moved, and `dest` has room for exactly them
        // (each step moves one element and advances `dest` by one).
        unsafe {
            let left_len = self.left_end.offset_from(self.left) as usize;
            ptr::copy_nonoverlapping(self.left, self.dest, left_len);
            let right_len = self.right_end.offset_from(self.right) as usize;
            ptr::copy_nonoverlapping(self.right, self.dest.add(left_len), right_len);
        }
    }
}

#[cfg(test)]
mod tests {
    use std::panic::{self, AssertUnwindSafe};
    use std::sync::atomic::{AtomicIsize, AtomicUsize, Ordering::Relaxed};
    use std::sync::Arc;

    use super::*;
    use crate::api::global::in_worker;
    use crate::prelude::*;

    /// Sizes that cut even tiny slices into pieces, so that Miri's small
    /// inputs go through the joins, the buffer and the parallel merge.
    const TINY: Sizes = Sizes { piece: 3, merge: 4 };

    struct Rng(u64);

    impl Rng {
        fn next(&mut self) -> u32 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            (self.0 >> 32) as u32
        }

        fn below(&mut self, n: u32) -> u32 {
            self.next() % n
        }
    }

    fn scale(full: usize, miri: usize) -> usize {
        if cfg!(miri) {
            miri
        } else {
            full
        }
    }

    /// Inputs of `len` elements in several shapes.
    fn shapes(len: usize, rng: &mut Rng) -> Vec<Vec<u32>> {
        let n = len as u32;
        vec![
            (0..len).map(|_| rng.next()).collect(),
            (0..len).map(|_| rng.below(4)).collect(),
            (0..len).map(|_| rng.below(n.max(1))).collect(),
            (0..n).collect(),
            (0..n).rev().collect(),
            vec![5; len],
            // Sawtooth and organ pipe: sorted runs the presorted check
            // does not catch.
            (0..n).map(|i| i % 17).collect(),
            (0..n).map(|i| i.min(n - i)).collect(),
            // Sorted but for the last element.
            (0..n).map(|i| if i + 1 == n { 0 } else { i + 1 }).collect(),
        ]
    }

    fn lengths() -> Vec<usize> {
        if cfg!(miri) {
            vec![0, 1, 3, 9, 33]
        } else {
            vec![0, 1, 2, 3, 5, 17, 100, 2048, 2049, 5000, 100_000]
        }
    }

    #[test]
    fn sorts_like_std() {
        let mut rng = Rng(0x2545_f491_4f6c_dd1d);
        for len in lengths() {
            for input in shapes(len, &mut rng) {
                let mut expected = input.clone();
                expected.sort();
                let sorts: [fn(&mut [u32]); 6] = [
                    |v| v.par_sort(),
                    |v| v.par_sort_by(|a, b| a.cmp(b)),
                    |v| v.par_sort_by_key(|&x| x),
                    |v| v.par_sort_unstable(),
                    |v| v.par_sort_unstable_by(|a, b| a.cmp(b)),
                    |v| v.par_sort_unstable_by_key(|&x| x),
                ];
                for sort in sorts {
                    let mut v = input.clone();
                    sort(&mut v);
                    assert_eq!(v, expected, "len {len}");
                }
                let mut v = input.clone();
                v.par_sort_by(|a, b| b.cmp(a));
                expected.reverse();
                assert_eq!(v, expected, "descending, len {len}");
            }
        }
    }

    /// The parallel paths on small inputs, cut into pieces of 3.
    #[test]
    fn sorts_like_std_cut_fine() {
        let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
        let lens: Vec<usize> = if cfg!(miri) {
            vec![0, 1, 2, 5, 8, 21]
        } else {
            (0..70).chain([3000]).collect()
        };
        for len in lens {
            for input in shapes(len, &mut rng) {
                let mut expected = input.clone();
                expected.sort();
                let mut v = input.clone();
                in_worker(|| stable_sort(&mut v, &u32::cmp, TINY));
                assert_eq!(v, expected, "stable, len {len}");
                let mut v = input.clone();
                in_worker(|| unstable_sort(&mut v, &u32::cmp, TINY));
                assert_eq!(v, expected, "unstable, len {len}");
                // Past the presorted check and with no allowance for
                // lopsided splits, too.
                for limit in [0, 1, 40] {
                    let mut v = input.clone();
                    in_worker(|| quicksort(&mut v, &u32::cmp, None, limit, 3));
                    assert_eq!(v, expected, "quicksort, len {len}, limit {limit}");
                }
            }
        }
    }

    #[test]
    fn stable_keeps_ties_in_order() {
        let mut rng = Rng(0x1234_5678_9abc_def1);
        let lens = [scale(100_000, 50), scale(5000, 30), scale(2049, 9), 17];
        for len in lens {
            for keys in [3, 50, 1 << 20] {
                let input: Vec<(u32, usize)> = (0..len).map(|i| (rng.below(keys), i)).collect();
                let mut expected = input.clone();
                expected.sort_by_key(|&(key, _)| key);
                let mut v = input.clone();
                v.par_sort_by_key(|&(key, _)| key);
                assert_eq!(v, expected, "len {len}, keys {keys}");
                let mut v = input.clone();
                v.par_sort_by(|a, b| a.0.cmp(&b.0));
                assert_eq!(v, expected, "len {len}, keys {keys}");
                let mut v = input.clone();
                in_worker(|| {
                    stable_sort(
                        &mut v,
                        &|a: &(u32, usize), b: &(u32, usize)| a.0.cmp(&b.0),
                        TINY,
                    )
                });
                assert_eq!(v, expected, "cut fine, len {len}, keys {keys}");
            }
            // Strictly descending keys are reversed, equal runs are not.
            let input: Vec<(u32, usize)> = (0..len).map(|i| ((len - i) as u32 / 2, i)).collect();
            let mut expected = input.clone();
            expected.sort_by_key(|&(key, _)| key);
            let mut v = input;
            v.par_sort_by_key(|&(key, _)| key);
            assert_eq!(v, expected, "descending with ties, len {len}");
        }
    }

    #[test]
    fn partition_splits_by_the_predicate() {
        let mut rng = Rng(0xdead_beef_cafe_f00d);
        for len in (0..scale(700, 40)).step_by(scale(7, 1)) {
            let input: Vec<u32> = (0..len).map(|_| rng.below(100)).collect();
            for cut in [0, 1, 30, 50, 99, 100] {
                let mut v = input.clone();
                let mid = partition(&mut v, |&x| x < cut);
                assert!(v[..mid].iter().all(|&x| x < cut));
                assert!(v[mid..].iter().all(|&x| x >= cut));
                v.sort();
                let mut sorted = input.clone();
                sorted.sort();
                assert_eq!(v, sorted);
            }
        }
    }

    #[test]
    fn split_for_merge_keeps_order() {
        let mut rng = Rng(0x0bad_cafe_1234_5678);
        let ctx = SortCtx {
            compare: &u32::cmp,
            merge: 2,
        };
        for _ in 0..scale(500, 30) {
            let mut left: Vec<u32> = (0..rng.below(20)).map(|_| rng.below(6)).collect();
            let mut right: Vec<u32> = (0..rng.below(20)).map(|_| rng.below(6)).collect();
            left.sort();
            right.sort();
            let (l, r) = ctx.split_for_merge(&left, &right);
            // Left before: not greater; right before: strictly less.
            assert!(left[..l].iter().all(|x| right[r..].iter().all(|y| x <= y)));
            assert!(right[..r].iter().all(|x| left[l..].iter().all(|y| x < y)));
        }
    }

    #[test]
    fn par_chunks_mut_covers_the_slice() {
        let mut v: Vec<usize> = vec![0; 1000];
        v.par_chunks_mut(7)
            .enumerate()
            .for_each(|(i, chunk)| chunk.fill(i));
        assert!(v.iter().enumerate().all(|(i, &c)| c == i / 7));
    }

    #[test]
    fn sorts_zero_sized() {
        let mut v = vec![(); scale(10_000, 20)];
        v.par_sort();
        v.par_sort_unstable();
        assert_eq!(v.len(), scale(10_000, 20));
    }

    /// An element that counts how many of its kind are alive, and owns a
    /// heap allocation (so that Miri sees a double drop or a use after
    /// drop).
    struct Tracked {
        key: Box<u32>,
        live: Arc<AtomicIsize>,
    }

    impl Tracked {
        fn new(key: u32, live: &Arc<AtomicIsize>) -> Self {
            live.fetch_add(1, Relaxed);
            Tracked {
                key: Box::new(key),
                live: Arc::clone(live),
            }
        }
    }

    impl Drop for Tracked {
        fn drop(&mut self) {
            self.live.fetch_sub(1, Relaxed);
        }
    }

    type Compare<'c> = &'c (dyn Fn(&Tracked, &Tracked) -> Ordering + Sync);

    type Sort<'s> = &'s dyn Fn(&mut [Tracked], Compare<'_>);

    /// The four ways in: both sorts, through the public methods and cut
    /// fine.
    fn each_sort(len: usize, check: impl Fn(usize, Sort<'_>)) {
        check(len, &|v, compare| v.par_sort_by(compare));
        check(len, &|v, compare| v.par_sort_unstable_by(compare));
        check(len, &|v, compare| {
            in_worker(|| stable_sort(v, &compare, TINY))
        });
        check(len, &|v, compare| {
            in_worker(|| unstable_sort(v, &compare, TINY))
        });
    }

    /// Runs `sort` on `len` tracked elements with `compare` (given the
    /// number of the call and the two keys), and checks that the slice
    /// ends a permutation of its input, whether the sort returned or
    /// panicked, and that every element is dropped exactly once. Returns
    /// whether it panicked.
    fn check_permutation(
        len: usize,
        sort: Sort<'_>,
        compare: &(dyn Fn(usize, u32, u32) -> Ordering + Sync),
    ) -> bool {
        let mut rng = Rng(0x5eed_5eed_5eed_5eed ^ len as u64);
        let live = Arc::new(AtomicIsize::new(0));
        let keys: Vec<u32> = (0..len).map(|_| rng.below(len as u32 / 2 + 1)).collect();
        let mut v: Vec<Tracked> = keys.iter().map(|&k| Tracked::new(k, &live)).collect();
        let calls = AtomicUsize::new(0);
        let counted =
            |a: &Tracked, b: &Tracked| compare(calls.fetch_add(1, Relaxed), *a.key, *b.key);
        let panicked = panic::catch_unwind(AssertUnwindSafe(|| sort(&mut v, &counted))).is_err();
        let mut after: Vec<u32> = v.iter().map(|t| *t.key).collect();
        after.sort();
        let mut before = keys;
        before.sort();
        assert_eq!(after, before, "a permutation, len {len}");
        drop(v);
        assert_eq!(live.load(Relaxed), 0, "each dropped once, len {len}");
        panicked
    }

    /// A comparator that panics on its `fuse`th call, or on every call
    /// from then on (so both sides of a `join` may panic), leaves a
    /// permutation of the input, every element dropped once.
    #[test]
    fn panicking_comparator_leaves_a_permutation() {
        // Under Miri (where an unwind is slow) two lengths and two fuses.
        let lens = if cfg!(miri) {
            vec![20, 2]
        } else {
            vec![100_000, 2049, 2]
        };
        for len in lens {
            let fuses = if cfg!(miri) {
                vec![0, 7]
            } else {
                vec![0, 1, 7, len / 3, len, 5 * len]
            };
            for fuse in fuses {
                for every in [false, true] {
                    each_sort(len, |len, sort| {
                        let compare = |call: usize, a: u32, b: u32| {
                            if call == fuse || (every && call > fuse) {
                                panic!("comparator panics on purpose");
                            }
                            a.cmp(&b)
                        };
                        let panicked = check_permutation(len, sort, &compare);
                        // Every sort compares at least `len - 1` times.
                        if fuse + 1 < len {
                            assert!(panicked, "fuse {fuse}, len {len}");
                        }
                    });
                }
            }
        }
    }

    /// A comparator that is no order at all still leaves a permutation:
    /// the merges take each element once whatever the answers.
    #[test]
    fn inconsistent_comparator_leaves_a_permutation() {
        for len in [scale(100_000, 24), scale(3000, 12), 5] {
            each_sort(len, |len, sort| {
                let compare = |call: usize, a: u32, b: u32| {
                    let mut rng = Rng((call as u64) << 32 ^ u64::from(a) << 16 ^ u64::from(b) | 1);
                    rng.next();
                    [Ordering::Less, Ordering::Equal, Ordering::Greater][rng.below(3) as usize]
                };
                check_permutation(len, sort, &compare);
            });
        }
    }
}
