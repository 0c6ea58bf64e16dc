//! Parallel sorts of slices, and `par_chunks_mut` (rayon's
//! `ParallelSliceMut`).
//!
//! `par_sort_unstable*` is a quicksort whose two sides run as a `join`: the
//! pivot is the median of a sample, the partition one sequential pass, and
//! slices below [`SEQUENTIAL`] elements are left to the standard library's
//! `sort_unstable_by`. `par_sort*` (stable) sorts the two halves as a `join`
//! and merges them through a buffer, the merge itself split in parallel by
//! binary search once it is long.

use std::cmp::Ordering;

use super::sources::ChunksMut;

/// Slices shorter than this are sorted sequentially: below it a `join`
/// costs more than it can win.
const SEQUENTIAL: usize = 2048;

/// Parallel views and sorts of a mutable slice (rayon's `ParallelSliceMut`).
pub trait ParallelSliceMut<T: Send> {
    /// Non-overlapping mutable pieces of `size` elements, the last
    /// possibly shorter. Panics if `size` is 0.
    fn par_chunks_mut(&mut self, size: usize) -> ChunksMut<'_, T>;

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
        crate::api::global::in_worker(|| merge_sort(self, &compare));
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
        crate::api::global::in_worker(|| quicksort(self, &compare, depth_limit(self.len())));
    }

    fn par_sort_unstable_by_key<K, F>(&mut self, key: F)
    where
        K: Ord,
        F: Fn(&T) -> K + Sync,
    {
        self.par_sort_unstable_by(|a, b| key(a).cmp(&key(b)));
    }
}

/// Partitions allowed before a slice is handed to the sequential sort
/// (which is O(n log n) in the worst case): 2 log2(n), as introsort.
fn depth_limit(len: usize) -> u32 {
    2 * (usize::BITS - len.leading_zeros())
}

fn quicksort<T, F>(v: &mut [T], compare: &F, depth: u32)
where
    T: Send,
    F: Fn(&T, &T) -> Ordering + Sync,
{
    if v.len() <= SEQUENTIAL || depth == 0 {
        v.sort_unstable_by(compare);
        return;
    }
    let pivot = choose_pivot(v, compare);
    v.swap(0, pivot);
    let mid = partition(v, compare);
    let (left, right) = v.split_at_mut(mid);
    // The pivot sits at `right[0]`, in its final place.
    let right = &mut right[1..];
    crate::join(
        || quicksort(left, compare, depth - 1),
        || quicksort(right, compare, depth - 1),
    );
}

/// The index of the median of nine elements spread over `v`.
fn choose_pivot<T, F>(v: &[T], compare: &F) -> usize
where
    F: Fn(&T, &T) -> Ordering,
{
    let step = v.len() / 9;
    let mut sample: [usize; 9] = std::array::from_fn(|i| i * step + step / 2);
    sample.sort_unstable_by(|&a, &b| compare(&v[a], &v[b]));
    sample[4]
}

/// Partitions `v` around its first element: afterwards everything before
/// the returned index is less than the pivot, the pivot is at the index,
/// and everything after is not less. Hoare's scheme, two cursors meeting.
fn partition<T, F>(v: &mut [T], compare: &F) -> usize
where
    F: Fn(&T, &T) -> Ordering,
{
    let (pivot, rest) = v.split_first_mut().expect("a slice to partition");
    let (mut low, mut high) = (0, rest.len());
    loop {
        while low < high && compare(&rest[low], pivot).is_lt() {
            low += 1;
        }
        while low < high && !compare(&rest[high - 1], pivot).is_lt() {
            high -= 1;
        }
        if low >= high {
            break;
        }
        high -= 1;
        rest.swap(low, high);
        low += 1;
    }
    v.swap(0, low);
    low
}

fn merge_sort<T, F>(v: &mut [T], compare: &F)
where
    T: Send,
    F: Fn(&T, &T) -> Ordering + Sync,
{
    if v.len() <= SEQUENTIAL {
        v.sort_by(compare);
        return;
    }
    let mid = v.len() / 2;
    {
        let (left, right) = v.split_at_mut(mid);
        crate::join(|| merge_sort(left, compare), || merge_sort(right, compare));
    }
    if compare(&v[mid], &v[mid - 1]).is_ge() {
        return;
    }
    // Merging in place by rotation keeps the code safe at O(n log n) moves
    // per level for the parts that interleave; the halves are sorted, so
    // the rotation count is bounded by the interleavings.
    merge_in_place(v, mid, compare);
}

/// Merges the sorted runs `v[..mid]` and `v[mid..]`, stably, by splitting
/// the longer run at its middle, finding where that element falls in the
/// other run, rotating the two middle parts into place, and recursing on
/// both sides (in parallel while they are long).
fn merge_in_place<T, F>(v: &mut [T], mid: usize, compare: &F)
where
    T: Send,
    F: Fn(&T, &T) -> Ordering + Sync,
{
    let len = v.len();
    if mid == 0 || mid == len {
        return;
    }
    if len <= 16 {
        // Insertion of the right run into the left, stable.
        for i in mid..len {
            let mut j = i;
            while j > 0 && compare(&v[j], &v[j - 1]).is_lt() {
                v.swap(j, j - 1);
                j -= 1;
            }
        }
        return;
    }
    let (left_cut, right_cut) = if mid >= len - mid {
        let left_cut = mid / 2;
        // Elements of the right run strictly less than the cut element go
        // before it (stability: equal ones stay after).
        let right_cut = mid + v[mid..].partition_point(|x| compare(x, &v[left_cut]).is_lt());
        (left_cut, right_cut)
    } else {
        let right_cut = mid + (len - mid) / 2;
        // Elements of the left run not greater than the cut element stay
        // before it.
        let left_cut = v[..mid].partition_point(|x| compare(x, &v[right_cut]).is_le());
        (left_cut, right_cut)
    };
    v[left_cut..right_cut].rotate_left(mid - left_cut);
    let new_mid = left_cut + (right_cut - mid);
    let (left, right) = v.split_at_mut(new_mid);
    let left_mid = left_cut;
    let right_mid = right_cut - new_mid;
    if len >= SEQUENTIAL {
        crate::join(
            || merge_in_place(left, left_mid, compare),
            || merge_in_place(right, right_mid, compare),
        );
    } else {
        merge_in_place(left, left_mid, compare);
        merge_in_place(right, right_mid, compare);
    }
}
