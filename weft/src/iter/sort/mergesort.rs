//! `par_sort*`: a merge sort through a buffer as long as the slice, its
//! merges split in parallel too (the design, and the argument that every
//! element stays in exactly one place whatever panics, are in the parent
//! module's docs).

use std::cmp::Ordering;
use std::mem::{self, size_of};
use std::ptr;

use super::presorted::presorted;
use super::Sizes;

pub(super) fn stable_sort<T, F>(v: &mut [T], compare: &F, sizes: Sizes)
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
pub(super) struct SortCtx<'a, F> {
    pub(super) compare: &'a F,
    pub(super) merge: usize,
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
    pub(super) fn split_for_merge<T>(&self, left: &[T], right: &[T]) -> (usize, usize)
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
