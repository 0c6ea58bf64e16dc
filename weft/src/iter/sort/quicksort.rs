//! `par_sort_unstable*`: a quicksort whose two sides run as a `join`, in
//! place, with no allocation (the design is in the parent module's docs).

use std::cmp::Ordering;
use std::mem::size_of;

use super::presorted::presorted;
use super::Sizes;

pub(super) fn unstable_sort<T, F>(v: &mut [T], compare: &F, sizes: Sizes)
where
    T: Send,
    F: Fn(&T, &T) -> Ordering + Sync,
{
    // As the quicksort's own first test: no pass of ours over a slice it
    // would give to std's sort whole.
    if size_of::<T>() == 0 || v.len() <= sizes.leaf {
        v.sort_unstable_by(compare);
        return;
    }
    if presorted(v, compare, false) {
        return;
    }
    let limit = usize::BITS - v.len().leading_zeros();
    quicksort(v, compare, None, limit, sizes);
}

/// Sorts `v`, every element of which is at least `floor` (when given): the
/// pivot of the split that made `v` its right side. (A `&mut`, so that it
/// may cross to another worker with `T` only `Send`.) Splits with a `join`
/// while a side is longer than `sizes.piece`, then sequentially down to
/// `sizes.leaf`, where std's sort takes over.
pub(super) fn quicksort<'a, T, F>(
    mut v: &'a mut [T],
    compare: &F,
    mut floor: Option<&'a mut T>,
    mut limit: u32,
    sizes: Sizes,
) where
    T: Send,
    F: Fn(&T, &T) -> Ordering + Sync,
{
    loop {
        let len = v.len();
        if len <= sizes.leaf || limit == 0 {
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
        if left.len() > sizes.piece || right.len() > sizes.piece {
            crate::join(
                || quicksort(left, compare, floor, limit, sizes),
                || quicksort(right, compare, Some(pivot), limit, sizes),
            );
            return;
        }
        // No `join` below here: the shorter side first, by recursion, so
        // the stack grows by at most `log2(len)` frames, the longer one in
        // this loop.
        if left.len() <= right.len() {
            quicksort(left, compare, floor, limit, sizes);
            v = right;
            floor = Some(pivot);
        } else {
            quicksort(right, compare, Some(pivot), limit, sizes);
            v = left;
        }
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
pub(super) fn partition<T>(v: &mut [T], goes_left: impl Fn(&T) -> bool) -> usize {
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
