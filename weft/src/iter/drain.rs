//! `par_drain` (rayon's [`ParallelDrainRange`]): a range of a `Vec`, a
//! `VecDeque` or a `String` moved out by a parallel loop, the rest closed
//! up behind it.
//!
//! A `Vec`'s range is handed to the loop in place: the `Vec` is first cut
//! to the range's start, the loop's pieces own the range's items (each is
//! moved out or dropped once, as a `Vec`'s by value), and the tail moves
//! down when the [`Drain`] goes, also when the loop panics. A
//! `VecDeque`'s or a `String`'s range is moved out by std's sequential
//! `drain` into a `Vec` first (a move per item), which the loop then takes
//! by value; so are all the items of the collections that drain whole
//! ([`ParallelDrainFull`]: `HashMap`, `HashSet`, `BinaryHeap`).

use std::ops::{Bound, Range, RangeBounds};
use std::ptr;

use super::sources::{DrainProducer, IntoIter};
use super::{IndexedParallelIterator, ParallelIterator};
use std::collections::{BinaryHeap, HashMap, HashSet, VecDeque};

/// `collection.par_drain(range)`: the items in `range`, by value, in
/// parallel; the collection keeps the others, in order (rayon's
/// `ParallelDrainRange`). The range's items are removed even if the
/// iterator is dropped unused.
///
/// # Panics
///
/// If the range starts after it ends or ends past the collection's
/// length, or, for a `String`, if either end is not on a char boundary.
///
/// ```
/// use weft::prelude::*;
/// let mut v: Vec<u32> = (0..10).collect();
/// let middle: Vec<u32> = v.par_drain(3..7).map(|x| x * 10).collect();
/// assert_eq!(middle, [30, 40, 50, 60]);
/// assert_eq!(v, [0, 1, 2, 7, 8, 9]);
///
/// let mut text = String::from("añb");
/// assert_eq!(text.par_drain(1..3).collect::<String>(), "ñ");
/// assert_eq!(text, "ab");
/// ```
pub trait ParallelDrainRange<Idx = usize> {
    /// The iterator over the drained items.
    type Iter: ParallelIterator<Item = Self::Item>;
    /// The drained items.
    type Item: Send;
    /// Drains `range`.
    fn par_drain<R: RangeBounds<Idx>>(self, range: R) -> Self::Iter;
}

/// `range` as start and end in a collection of `len`, checked as std's
/// `drain` checks it.
fn bounds(range: impl RangeBounds<usize>, len: usize) -> Range<usize> {
    let start = match range.start_bound() {
        Bound::Included(&start) => start,
        Bound::Excluded(&start) => start
            .checked_add(1)
            .expect("par_drain's range starts past usize::MAX"),
        Bound::Unbounded => 0,
    };
    let end = match range.end_bound() {
        Bound::Included(&end) => end
            .checked_add(1)
            .expect("par_drain's range ends past usize::MAX"),
        Bound::Excluded(&end) => end,
        Bound::Unbounded => len,
    };
    assert!(
        start <= end,
        "par_drain's range starts at {start} but ends at {end}"
    );
    assert!(
        end <= len,
        "par_drain's range ends at {end}, past the length {len}"
    );
    start..end
}

/// `vec.par_drain(range)`: see [`ParallelDrainRange`].
#[derive(Debug)]
pub struct Drain<'a, T> {
    /// `None` once the drain is over (or handed to `into_seq`).
    vec: Option<&'a mut Vec<T>>,
    range: Range<usize>,
    /// The `Vec`'s length before the drain.
    len: usize,
    /// Whether a producer took the range's items.
    taken: bool,
}

impl<'a, T: Send> ParallelDrainRange<usize> for &'a mut Vec<T> {
    type Iter = Drain<'a, T>;
    type Item = T;
    fn par_drain<R: RangeBounds<usize>>(self, range: R) -> Drain<'a, T> {
        let len = self.len();
        Drain {
            range: bounds(range, len),
            vec: Some(self),
            len,
            taken: false,
        }
    }
}

impl<'a, T: Send> ParallelIterator for Drain<'a, T> {
    type Item = T;
    type Producer<'b>
        = DrainProducer<'b, T>
    where
        Self: 'b;
    type Seq = std::vec::Drain<'a, T>;
    fn producer(&mut self) -> DrainProducer<'_, T> {
        let vec = self.vec.as_mut().expect("a drain runs once");
        let Range { start, end } = self.range;
        self.taken = true;
        // SAFETY: `start..end` is inside the `Vec` (`bounds`). Cut to
        // `start`, the `Vec` no longer reads nor drops the range's items
        // nor its tail, so the producer owns the former (it moves each out
        // or drops it once) and the tail waits for `Drain::drop`, which
        // runs after the producer is gone (it borrows `self`).
        unsafe {
            vec.set_len(start);
            let range = std::slice::from_raw_parts_mut(vec.as_mut_ptr().add(start), end - start);
            DrainProducer::owning(range)
        }
    }
    fn into_seq(mut self) -> Self::Seq {
        let vec = self.vec.take().expect("a drain runs once");
        vec.drain(self.range.clone())
    }
    fn opt_len(&self) -> Option<usize> {
        Some(self.range.len())
    }
}

impl<T: Send> IndexedParallelIterator for Drain<'_, T> {
    fn len(&self) -> usize {
        self.range.len()
    }
}

impl<T> Drop for Drain<'_, T> {
    fn drop(&mut self) {
        let Some(vec) = self.vec.take() else { return };
        if !self.taken {
            // Never run: the range goes all the same, as with std's drain.
            vec.drain(self.range.clone());
            return;
        }
        let Range { start, end } = self.range;
        let tail = self.len - end;
        // SAFETY: the producer moved out or dropped every item of
        // `start..end` (also when the loop panicked: its pieces drop what
        // they did not yield as the panic unwinds through them), so those
        // slots are free; the tail's `tail` items at `end` are still
        // there, untouched since `producer`, and move down to `start`
        // (the regions may overlap: `copy`, not `copy_nonoverlapping`).
        unsafe {
            let base = vec.as_mut_ptr();
            ptr::copy(base.add(end), base.add(start), tail);
            vec.set_len(start + tail);
        }
    }
}

impl<T: Send> ParallelDrainRange<usize> for &mut VecDeque<T> {
    type Iter = IntoIter<T>;
    type Item = T;
    fn par_drain<R: RangeBounds<usize>>(self, range: R) -> IntoIter<T> {
        IntoIter {
            vec: self.drain(range).collect(),
        }
    }
}

impl ParallelDrainRange<usize> for &mut String {
    type Iter = IntoIter<char>;
    type Item = char;
    fn par_drain<R: RangeBounds<usize>>(self, range: R) -> IntoIter<char> {
        IntoIter {
            vec: self.drain(range).collect(),
        }
    }
}

/// `collection.par_drain()`: every item, by value, in parallel, the
/// collection left empty with its room kept (rayon's
/// `ParallelDrainFull`), for the collections that cannot drain a range:
/// `HashMap`, `HashSet` and `BinaryHeap`. Their items are moved out by
/// std's sequential `drain` into a `Vec` first (a move per item), which
/// the loop then takes by value; so the collection is empty even if the
/// iterator is dropped unused. The order is std's `drain`'s: arbitrary.
///
/// ```
/// use std::collections::HashMap;
/// use weft::prelude::*;
/// let mut ages: HashMap<&str, u32> = [("ada", 36), ("alan", 41)].into();
/// let total: u32 = ages.par_drain().map(|(_, age)| age).sum();
/// assert_eq!((total, ages.len()), (77, 0));
/// ```
pub trait ParallelDrainFull {
    /// The iterator over the drained items.
    type Iter: ParallelIterator<Item = Self::Item>;
    /// The drained items.
    type Item: Send;
    /// Drains every item.
    fn par_drain(self) -> Self::Iter;
}

/// Full drains through std's sequential `drain`.
macro_rules! drain_full {
    ($([$($generics:tt)*] $collection:ty, $item:ty;)*) => {$(
        impl<$($generics)*> ParallelDrainFull for &mut $collection {
            type Iter = IntoIter<$item>;
            type Item = $item;
            fn par_drain(self) -> IntoIter<$item> {
                IntoIter {
                    vec: self.drain().collect(),
                }
            }
        }
    )*};
}

drain_full! {
    [K: Send, V: Send, S] HashMap<K, V, S>, (K, V);
    [T: Send, S] HashSet<T, S>, T;
    [T: Send] BinaryHeap<T>, T;
}
