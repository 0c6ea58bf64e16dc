//! The inputs that need no sort: a slice already in order costs one pass
//! (over a `join` tree that stops at the first pair out of order), and a
//! descending one a pass and a reversal.

use std::cmp::Ordering;
use std::mem;

use super::SEQUENTIAL_PASS;

/// Handles the inputs that need no sort: returns true when `v` was already
/// sorted, or was descending and has been reversed (strictly descending
/// only when `stable`, since a reversal reorders equal elements).
pub(super) fn presorted<T, F>(v: &mut [T], compare: &F, stable: bool) -> bool
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
