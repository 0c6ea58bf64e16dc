//! Where parallel iterators start: integer ranges, slices (by reference,
//! by mutable reference, in chunks and windows), `Vec`s and arrays by
//! value.

use std::marker::PhantomData;
use std::ops::{Range, RangeInclusive};
use std::ptr;

use super::plumbing::Producer;
use super::{Chain, IndexedParallelIterator, IntoParallelIterator, OptionIter, ParallelIterator};

// ---------------------------------------------------------------- ranges

/// A parallel iterator over an integer range (`(0..n).into_par_iter()`).
#[derive(Clone, Debug)]
pub struct RangeIter<T> {
    pub(super) range: Range<T>,
}

/// The producer of [`RangeIter`].
#[derive(Debug)]
pub struct RangeProducer<T> {
    range: Range<T>,
}

/// `ParallelIterator` for the range of `$t`, whose exact length, if
/// known, `$opt_len` gives.
macro_rules! range_iterator {
    ($(#[$doc:meta])* $t:ty, $opt_len:expr) => {
        $(#[$doc])*
        impl ParallelIterator for RangeIter<$t> {
            type Item = $t;
            type Producer<'a> = RangeProducer<$t>;
            type Seq = Range<$t>;
            #[inline]
            fn producer(&mut self) -> RangeProducer<$t> {
                RangeProducer { range: self.range.clone() }
            }
            #[inline]
            fn into_seq(self) -> Range<$t> {
                self.range
            }
            #[inline]
            fn opt_len(&self) -> Option<usize> {
                let opt_len: fn(&Self) -> Option<usize> = $opt_len;
                opt_len(self)
            }
        }
    };
}

macro_rules! ranges {
    ($($t:ty),*) => {$(
        range_iterator!($t, |iter| Some(IndexedParallelIterator::len(iter)));

        impl RangeInteger for $t {
            fn successor(self) -> Option<$t> {
                self.checked_add(1)
            }
        }

        impl IndexedParallelIterator for RangeIter<$t> {
            #[inline]
            fn len(&self) -> usize {
                range_len(self.range.start as i128, self.range.end as i128)
            }
        }

        impl Producer for RangeProducer<$t> {
            type Item = $t;
            type IntoIter = Range<$t>;
            #[inline]
            fn len(&self) -> usize {
                range_len(self.range.start as i128, self.range.end as i128)
            }
            #[inline]
            fn split_at(self, index: usize) -> (Self, Self) {
                // In range: `index <= len`, so the midpoint is a value of
                // the range's own type.
                let mid = (self.range.start as i128 + index as i128) as $t;
                (
                    RangeProducer { range: self.range.start..mid },
                    RangeProducer { range: mid..self.range.end },
                )
            }
            #[inline]
            fn into_iter(self) -> Range<$t> {
                self.range
            }
            #[inline]
            fn fold_back<B, F>(self, init: B, fold: F) -> B
            where
                F: FnMut(B, $t) -> B,
            {
                self.range.rev().fold(init, fold)
            }
        }
    )*};
}

ranges!(u8, u16, u32, u64, usize, i8, i16, i32, i64, isize);

/// The length of a range of a 128-bit type, or `usize::MAX` for a longer
/// one: its producers count so, as a chain's longer than `usize::MAX`
/// do (see `Producer::len`).
macro_rules! wide_ranges {
    ($($t:ty),*) => {$(
        impl RangeProducer<$t> {
            /// The exact length, if it fits in a `usize`.
            #[inline]
            fn exact_len(range: &Range<$t>) -> Option<usize> {
                let len = if range.end > range.start {
                    range.end.wrapping_sub(range.start) as u128
                } else {
                    0
                };
                usize::try_from(len).ok()
            }
        }

        // Not indexed, as rayon's: its length may not fit in a `usize`.
        range_iterator!($t, |iter| RangeProducer::<$t>::exact_len(&iter.range));

        impl RangeInteger for $t {
            fn successor(self) -> Option<$t> {
                self.checked_add(1)
            }
        }

        impl Producer for RangeProducer<$t> {
            type Item = $t;
            type IntoIter = Range<$t>;
            #[inline]
            fn len(&self) -> usize {
                RangeProducer::<$t>::exact_len(&self.range).unwrap_or(usize::MAX)
            }
            #[inline]
            fn split_at(self, index: usize) -> (Self, Self) {
                // `index <= len`, so the midpoint is within the range.
                let mid = self.range.start.wrapping_add(index as $t);
                (
                    RangeProducer { range: self.range.start..mid },
                    RangeProducer { range: mid..self.range.end },
                )
            }
            #[inline]
            fn into_iter(self) -> Range<$t> {
                self.range
            }
        }
    )*};
}

wide_ranges!(u128, i128);

/// The surrogate code points, which are no `char`s: a range of chars that
/// spans them skips them.
const SURROGATES: Range<u32> = 0xD800..0xE000;

/// The chars in `start..end`.
fn char_count(range: &Range<char>) -> usize {
    let (start, end) = (range.start as u32, range.end as u32);
    if end <= start {
        return 0;
    }
    let gap = if start < SURROGATES.start && end >= SURROGATES.end {
        SURROGATES.len() as u32
    } else {
        0
    };
    (end - start - gap) as usize
}

range_iterator!(
    /// `('a'..'z').into_par_iter()`: the chars of a range, the surrogate
    /// code points skipped, as an indexed iterator (and inclusive ranges
    /// of chars too).
    ///
    /// ```
    /// use weft::prelude::*;
    /// let letters: String = ('a'..='e').into_par_iter().collect();
    /// assert_eq!(letters, "abcde");
    /// assert_eq!(('\u{D7FF}'..'\u{E001}').into_par_iter().len(), 2);
    /// ```
    char, |iter| Some(char_count(&iter.range))
);

impl IndexedParallelIterator for RangeIter<char> {
    fn len(&self) -> usize {
        char_count(&self.range)
    }
}

impl RangeInteger for char {
    fn successor(self) -> Option<char> {
        if self as u32 + 1 == SURROGATES.start {
            char::from_u32(SURROGATES.end)
        } else {
            char::from_u32(self as u32 + 1)
        }
    }
}

impl Producer for RangeProducer<char> {
    type Item = char;
    type IntoIter = Range<char>;
    fn len(&self) -> usize {
        char_count(&self.range)
    }
    fn split_at(self, index: usize) -> (Self, Self) {
        // `index <= len`: the midpoint is a char of the range or its end.
        let start = self.range.start as u32;
        let mut mid = start + index as u32;
        if start < SURROGATES.start && mid >= SURROGATES.start {
            mid += SURROGATES.len() as u32;
        }
        let mid = char::from_u32(mid).expect("a char within the range");
        (
            RangeProducer {
                range: self.range.start..mid,
            },
            RangeProducer {
                range: mid..self.range.end,
            },
        )
    }
    fn into_iter(self) -> Range<char> {
        self.range
    }
}

// One generic impl rather than one per integer type, so that an untyped
// `(0..n).into_par_iter()` falls back to `i32` as a sequential range does.
impl<T> IntoParallelIterator for Range<T>
where
    RangeIter<T>: ParallelIterator,
{
    type Item = <RangeIter<T> as ParallelIterator>::Item;
    type Iter = RangeIter<T>;
    fn into_par_iter(self) -> RangeIter<T> {
        RangeIter { range: self }
    }
}

/// The types a parallel range runs over: `u8` to `u128`, `usize`, `i8`
/// to `i128`, `isize` and `char` (whose ranges skip the surrogate code
/// points). The ranges of the 128-bit types are not indexed, as rayon's
/// are not: their lengths may not fit in a `usize`.
pub trait RangeInteger: Copy + Ord {
    /// The next integer, if the type has one.
    fn successor(self) -> Option<Self>;
}

/// `(start..=end).into_par_iter()`: the range up to `end` excluded, and
/// `end` itself last when the range is not empty (the `end + 1` of a range
/// to the type's maximum does not exist).
///
/// ```
/// use weft::prelude::*;
/// assert_eq!((1..=100).into_par_iter().sum::<i32>(), 5050);
/// assert_eq!((250..=u8::MAX).into_par_iter().count(), 6);
/// assert_eq!((5..=4u8).into_par_iter().count(), 0);
/// ```
impl<T> IntoParallelIterator for RangeInclusive<T>
where
    T: RangeInteger + Send,
    RangeIter<T>: ParallelIterator<Item = T>,
{
    type Item = T;
    type Iter = Chain<RangeIter<T>, OptionIter<T>>;
    fn into_par_iter(self) -> Self::Iter {
        let (start, end) = self.clone().into_inner();
        // `is_empty` also knows a range whose iteration is exhausted.
        let (range, last) = if self.is_empty() {
            (start..start, None)
        } else {
            match end.successor() {
                Some(after) => (start..after, None),
                None => (start..end, Some(end)),
            }
        };
        Chain {
            a: RangeIter { range },
            b: OptionIter::new(last),
        }
    }
}

/// The length of `start..end`. A range longer than `usize::MAX` (a full
/// `u64` range on a 32-bit target) is not supported.
#[inline]
fn range_len(start: i128, end: i128) -> usize {
    let len = (end - start).max(0);
    usize::try_from(len).expect("a parallel range longer than usize::MAX")
}

// ---------------------------------------------------------------- slices

/// A parallel iterator over `&T` in a slice (`slice.par_iter()`).
#[derive(Debug)]
pub struct Iter<'a, T> {
    pub(super) slice: &'a [T],
}

impl<T> Clone for Iter<'_, T> {
    fn clone(&self) -> Self {
        Iter { slice: self.slice }
    }
}

/// The producer of [`Iter`] and of `par_chunks`' pieces' base.
#[derive(Debug)]
pub struct SliceProducer<'a, T> {
    slice: &'a [T],
}

impl<'a, T: Sync> IntoParallelIterator for &'a [T] {
    type Item = &'a T;
    type Iter = Iter<'a, T>;
    fn into_par_iter(self) -> Iter<'a, T> {
        Iter { slice: self }
    }
}

impl<'a, T: Sync> IntoParallelIterator for &'a Vec<T> {
    type Item = &'a T;
    type Iter = Iter<'a, T>;
    fn into_par_iter(self) -> Iter<'a, T> {
        Iter { slice: self }
    }
}

impl<'a, T: Sync> IntoParallelIterator for &'a Box<[T]> {
    type Item = &'a T;
    type Iter = Iter<'a, T>;
    fn into_par_iter(self) -> Iter<'a, T> {
        Iter { slice: self }
    }
}

impl<'a, T: Sync, const N: usize> IntoParallelIterator for &'a [T; N] {
    type Item = &'a T;
    type Iter = Iter<'a, T>;
    fn into_par_iter(self) -> Iter<'a, T> {
        Iter { slice: self }
    }
}

impl<'a, T: Sync> ParallelIterator for Iter<'a, T> {
    type Item = &'a T;
    type Producer<'b>
        = SliceProducer<'a, T>
    where
        Self: 'b;
    type Seq = std::slice::Iter<'a, T>;
    fn producer(&mut self) -> SliceProducer<'a, T> {
        SliceProducer { slice: self.slice }
    }
    fn into_seq(self) -> Self::Seq {
        self.slice.iter()
    }
    fn opt_len(&self) -> Option<usize> {
        Some(self.slice.len())
    }
}

impl<T: Sync> IndexedParallelIterator for Iter<'_, T> {
    fn len(&self) -> usize {
        self.slice.len()
    }
}

impl<'a, T: Sync> Producer for SliceProducer<'a, T> {
    type Item = &'a T;
    type IntoIter = std::slice::Iter<'a, T>;
    fn len(&self) -> usize {
        self.slice.len()
    }
    fn split_at(self, index: usize) -> (Self, Self) {
        let (left, right) = self.slice.split_at(index);
        (
            SliceProducer { slice: left },
            SliceProducer { slice: right },
        )
    }
    fn fold_back<B, F>(self, init: B, fold: F) -> B
    where
        F: FnMut(B, Self::Item) -> B,
    {
        self.slice.iter().rev().fold(init, fold)
    }
    fn into_iter(self) -> Self::IntoIter {
        self.slice.iter()
    }
}

/// A parallel iterator over `&mut T` in a slice (`slice.par_iter_mut()`).
#[derive(Debug)]
pub struct IterMut<'a, T> {
    pub(super) slice: &'a mut [T],
}

/// The producer of [`IterMut`].
#[derive(Debug)]
pub struct SliceMutProducer<'a, T> {
    slice: &'a mut [T],
}

impl<'a, T: Send> IntoParallelIterator for &'a mut [T] {
    type Item = &'a mut T;
    type Iter = IterMut<'a, T>;
    fn into_par_iter(self) -> IterMut<'a, T> {
        IterMut { slice: self }
    }
}

impl<'a, T: Send> IntoParallelIterator for &'a mut Vec<T> {
    type Item = &'a mut T;
    type Iter = IterMut<'a, T>;
    fn into_par_iter(self) -> IterMut<'a, T> {
        IterMut { slice: self }
    }
}

impl<'a, T: Send> IntoParallelIterator for &'a mut Box<[T]> {
    type Item = &'a mut T;
    type Iter = IterMut<'a, T>;
    fn into_par_iter(self) -> IterMut<'a, T> {
        IterMut { slice: self }
    }
}

impl<'a, T: Send, const N: usize> IntoParallelIterator for &'a mut [T; N] {
    type Item = &'a mut T;
    type Iter = IterMut<'a, T>;
    fn into_par_iter(self) -> IterMut<'a, T> {
        IterMut { slice: self }
    }
}

impl<'a, T: Send> ParallelIterator for IterMut<'a, T> {
    type Item = &'a mut T;
    type Producer<'b>
        = SliceMutProducer<'a, T>
    where
        Self: 'b;
    type Seq = std::slice::IterMut<'a, T>;
    fn producer(&mut self) -> SliceMutProducer<'a, T> {
        // The iterator is consumed by the call that asked: the slice moves
        // into the producer, so no element is lent out twice.
        SliceMutProducer {
            slice: std::mem::take(&mut self.slice),
        }
    }
    fn into_seq(self) -> Self::Seq {
        self.slice.iter_mut()
    }
    fn opt_len(&self) -> Option<usize> {
        Some(self.slice.len())
    }
}

impl<T: Send> IndexedParallelIterator for IterMut<'_, T> {
    fn len(&self) -> usize {
        self.slice.len()
    }
}

impl<'a, T: Send> Producer for SliceMutProducer<'a, T> {
    type Item = &'a mut T;
    type IntoIter = std::slice::IterMut<'a, T>;
    fn len(&self) -> usize {
        self.slice.len()
    }
    fn split_at(self, index: usize) -> (Self, Self) {
        let (left, right) = self.slice.split_at_mut(index);
        (
            SliceMutProducer { slice: left },
            SliceMutProducer { slice: right },
        )
    }
    fn fold_back<B, F>(self, init: B, fold: F) -> B
    where
        F: FnMut(B, Self::Item) -> B,
    {
        self.slice.iter_mut().rev().fold(init, fold)
    }
    fn into_iter(self) -> Self::IntoIter {
        self.slice.iter_mut()
    }
}

// ------------------------------------------------------ chunks, windows

/// `slice.par_chunks(size)`: non-overlapping pieces of `size` elements, the
/// last possibly shorter.
#[derive(Debug)]
pub struct Chunks<'a, T> {
    slice: &'a [T],
    size: usize,
}

/// `slice.par_chunks_mut(size)`.
#[derive(Debug)]
pub struct ChunksMut<'a, T> {
    slice: &'a mut [T],
    size: usize,
}

/// `slice.par_windows(size)`: every run of `size` neighbours, overlapping.
#[derive(Debug)]
pub struct Windows<'a, T> {
    slice: &'a [T],
    size: usize,
}

/// The producer of [`Chunks`].
#[derive(Debug)]
pub struct ChunksProducer<'a, T> {
    slice: &'a [T],
    size: usize,
}

/// The producer of [`ChunksMut`].
#[derive(Debug)]
pub struct ChunksMutProducer<'a, T> {
    slice: &'a mut [T],
    size: usize,
}

/// The producer of [`Windows`].
#[derive(Debug)]
pub struct WindowsProducer<'a, T> {
    slice: &'a [T],
    size: usize,
}

impl<'a, T> Chunks<'a, T> {
    pub(crate) fn new(slice: &'a [T], size: usize) -> Self {
        assert!(size != 0, "chunk size must be non-zero");
        Chunks { slice, size }
    }
}

impl<'a, T> ChunksMut<'a, T> {
    pub(crate) fn new(slice: &'a mut [T], size: usize) -> Self {
        assert!(size != 0, "chunk size must be non-zero");
        ChunksMut { slice, size }
    }
}

impl<'a, T> Windows<'a, T> {
    pub(crate) fn new(slice: &'a [T], size: usize) -> Self {
        assert!(size != 0, "window size must be non-zero");
        Windows { slice, size }
    }
}

pub(super) fn chunk_count(len: usize, size: usize) -> usize {
    len.div_ceil(size)
}

/// Where chunk `index` starts in a slice of `len` elements (`len` for the
/// end). Bounded by `len` before the product overflows: a slice of
/// zero-sized items can be `usize::MAX` long, and `index * size` for the
/// end of its last, short chunk is more than that.
pub(super) fn chunk_start(index: usize, size: usize, len: usize) -> usize {
    index.checked_mul(size).map_or(len, |start| start.min(len))
}

/// The windows of `size` in `len` elements: `len - size + 1`, not
/// `len + 1 - size`, whose `len + 1` overflows for a slice of zero-sized
/// items `usize::MAX` long.
fn window_count(len: usize, size: usize) -> usize {
    len.checked_sub(size).map_or(0, |last| last + 1)
}

impl<'a, T: Sync> ParallelIterator for Chunks<'a, T> {
    type Item = &'a [T];
    type Producer<'b>
        = ChunksProducer<'a, T>
    where
        Self: 'b;
    type Seq = std::slice::Chunks<'a, T>;
    fn producer(&mut self) -> ChunksProducer<'a, T> {
        ChunksProducer {
            slice: self.slice,
            size: self.size,
        }
    }
    fn into_seq(self) -> Self::Seq {
        self.slice.chunks(self.size)
    }
    fn opt_len(&self) -> Option<usize> {
        Some(chunk_count(self.slice.len(), self.size))
    }
}

impl<T: Sync> IndexedParallelIterator for Chunks<'_, T> {
    fn len(&self) -> usize {
        chunk_count(self.slice.len(), self.size)
    }
}

impl<'a, T: Sync> Producer for ChunksProducer<'a, T> {
    type Item = &'a [T];
    type IntoIter = std::slice::Chunks<'a, T>;
    fn len(&self) -> usize {
        chunk_count(self.slice.len(), self.size)
    }
    fn split_at(self, index: usize) -> (Self, Self) {
        let at = chunk_start(index, self.size, self.slice.len());
        let (left, right) = self.slice.split_at(at);
        let size = self.size;
        (
            ChunksProducer { slice: left, size },
            ChunksProducer { slice: right, size },
        )
    }
    fn into_iter(self) -> Self::IntoIter {
        self.slice.chunks(self.size)
    }
}

impl<'a, T: Send> ParallelIterator for ChunksMut<'a, T> {
    type Item = &'a mut [T];
    type Producer<'b>
        = ChunksMutProducer<'a, T>
    where
        Self: 'b;
    type Seq = std::slice::ChunksMut<'a, T>;
    fn producer(&mut self) -> ChunksMutProducer<'a, T> {
        // As `IterMut::producer`: the slice moves into the producer.
        ChunksMutProducer {
            slice: std::mem::take(&mut self.slice),
            size: self.size,
        }
    }
    fn into_seq(self) -> Self::Seq {
        self.slice.chunks_mut(self.size)
    }
    fn opt_len(&self) -> Option<usize> {
        Some(chunk_count(self.slice.len(), self.size))
    }
}

impl<T: Send> IndexedParallelIterator for ChunksMut<'_, T> {
    fn len(&self) -> usize {
        chunk_count(self.slice.len(), self.size)
    }
}

impl<'a, T: Send> Producer for ChunksMutProducer<'a, T> {
    type Item = &'a mut [T];
    type IntoIter = std::slice::ChunksMut<'a, T>;
    fn len(&self) -> usize {
        chunk_count(self.slice.len(), self.size)
    }
    fn split_at(self, index: usize) -> (Self, Self) {
        let at = chunk_start(index, self.size, self.slice.len());
        let (left, right) = self.slice.split_at_mut(at);
        let size = self.size;
        (
            ChunksMutProducer { slice: left, size },
            ChunksMutProducer { slice: right, size },
        )
    }
    fn into_iter(self) -> Self::IntoIter {
        self.slice.chunks_mut(self.size)
    }
}

impl<'a, T: Sync> ParallelIterator for Windows<'a, T> {
    type Item = &'a [T];
    type Producer<'b>
        = WindowsProducer<'a, T>
    where
        Self: 'b;
    type Seq = std::slice::Windows<'a, T>;
    fn producer(&mut self) -> WindowsProducer<'a, T> {
        WindowsProducer {
            slice: self.slice,
            size: self.size,
        }
    }
    fn into_seq(self) -> Self::Seq {
        self.slice.windows(self.size)
    }
    fn opt_len(&self) -> Option<usize> {
        Some(window_count(self.slice.len(), self.size))
    }
}

impl<T: Sync> IndexedParallelIterator for Windows<'_, T> {
    fn len(&self) -> usize {
        window_count(self.slice.len(), self.size)
    }
}

impl<'a, T: Sync> Producer for WindowsProducer<'a, T> {
    type Item = &'a [T];
    type IntoIter = std::slice::Windows<'a, T>;
    fn len(&self) -> usize {
        window_count(self.slice.len(), self.size)
    }
    fn split_at(self, index: usize) -> (Self, Self) {
        // Window `index` starts at element `index`; the left piece keeps
        // the `size - 1` elements its last window reaches into. For every
        // index up to the window count that end is within the slice, so
        // the sum cannot overflow; the `min` is for a slice shorter than
        // one window (index 0).
        let left_end = (index + (self.size - 1)).min(self.slice.len());
        let size = self.size;
        (
            WindowsProducer {
                slice: &self.slice[..left_end],
                size,
            },
            WindowsProducer {
                slice: &self.slice[index.min(self.slice.len())..],
                size,
            },
        )
    }
    fn into_iter(self) -> Self::IntoIter {
        self.slice.windows(self.size)
    }
}

// -------------------------------------------------------- Vec by value

/// A parallel iterator that moves the elements out of a `Vec` (or array).
#[derive(Debug)]
pub struct IntoIter<T> {
    pub(super) vec: Vec<T>,
}

impl<T: Send> IntoParallelIterator for Vec<T> {
    type Item = T;
    type Iter = IntoIter<T>;
    fn into_par_iter(self) -> IntoIter<T> {
        IntoIter { vec: self }
    }
}

impl<T: Send, const N: usize> IntoParallelIterator for [T; N] {
    type Item = T;
    type Iter = IntoIter<T>;
    fn into_par_iter(self) -> IntoIter<T> {
        IntoIter {
            vec: Vec::from(self),
        }
    }
}

impl<T: Send> ParallelIterator for IntoIter<T> {
    type Item = T;
    type Producer<'b>
        = DrainProducer<'b, T>
    where
        Self: 'b;
    type Seq = std::vec::IntoIter<T>;
    fn producer(&mut self) -> DrainProducer<'_, T> {
        let len = self.vec.len();
        // SAFETY: the elements now belong to the producer, which moves
        // each out exactly once or drops it (`DrainProducer`'s drop); with
        // the length at zero the `Vec` only frees its buffer, after the
        // producer is gone (it borrows `self`).
        unsafe {
            self.vec.set_len(0);
            DrainProducer::owning(std::slice::from_raw_parts_mut(self.vec.as_mut_ptr(), len))
        }
    }
    fn into_seq(self) -> Self::Seq {
        self.vec.into_iter()
    }
    fn opt_len(&self) -> Option<usize> {
        Some(self.vec.len())
    }
}

impl<T: Send> IndexedParallelIterator for IntoIter<T> {
    fn len(&self) -> usize {
        self.vec.len()
    }
}

/// Owns the elements of its slice: moves them out as it yields them, drops
/// those it never yields.
#[derive(Debug)]
pub struct DrainProducer<'a, T> {
    slice: &'a mut [T],
}

// SAFETY: the producer owns its elements (moved in from the `Vec`) and
// hands them out by value, so it may cross threads when `T` may.
unsafe impl<T: Send> Send for DrainProducer<'_, T> {}

impl<'a, T> DrainProducer<'a, T> {
    /// The producer of `slice`'s elements, which it moves out or drops.
    ///
    /// # Safety
    ///
    /// The elements are the producer's from now on: nothing else may read
    /// or drop them, while it lives or after.
    pub(super) unsafe fn owning(slice: &'a mut [T]) -> Self {
        DrainProducer { slice }
    }
}

impl<T> Drop for DrainProducer<'_, T> {
    fn drop(&mut self) {
        let slice = std::mem::take(&mut self.slice);
        // SAFETY: the elements left in the slice were never moved out.
        unsafe { ptr::drop_in_place(slice) };
    }
}

impl<'a, T: Send> Producer for DrainProducer<'a, T> {
    type Item = T;
    type IntoIter = DrainIter<'a, T>;
    fn len(&self) -> usize {
        self.slice.len()
    }
    fn split_at(mut self, index: usize) -> (Self, Self) {
        let slice = std::mem::take(&mut self.slice);
        let (left, right) = slice.split_at_mut(index);
        (
            DrainProducer { slice: left },
            DrainProducer { slice: right },
        )
    }
    fn into_iter(mut self) -> DrainIter<'a, T> {
        let slice = std::mem::take(&mut self.slice);
        DrainIter {
            base: slice.as_mut_ptr(),
            len: slice.len(),
            next: 0,
            _owns: PhantomData,
        }
    }
}

/// The sequential iterator of a [`DrainProducer`]'s piece. It counts
/// items rather than compare pointers, which do not move for zero-sized
/// items.
#[derive(Debug)]
pub struct DrainIter<'a, T> {
    base: *mut T,
    len: usize,
    next: usize,
    _owns: PhantomData<&'a mut [T]>,
}

impl<T> Iterator for DrainIter<'_, T> {
    type Item = T;
    fn next(&mut self) -> Option<T> {
        if self.next == self.len {
            return None;
        }
        // SAFETY: `next` is below `len`, inside the piece, and each
        // element is read once: the count moves past it.
        let item = unsafe { ptr::read(self.base.add(self.next)) };
        self.next += 1;
        Some(item)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let left = self.len - self.next;
        (left, Some(left))
    }
}

impl<T> Drop for DrainIter<'_, T> {
    fn drop(&mut self) {
        // What was not yielded (a consumer that stopped early), dropped as
        // one slice: if one item's drop panics, the slice's drop glue goes
        // on with the others, which a loop here would leak.
        // SAFETY: `next..len` is inside the piece and holds the items not
        // yet read out, which nothing reads or drops after this.
        unsafe {
            let unread =
                ptr::slice_from_raw_parts_mut(self.base.add(self.next), self.len - self.next);
            ptr::drop_in_place(unread);
        }
    }
}

#[cfg(all(test, not(loom)))]
pub(crate) mod tests {
    use std::panic::{self, AssertUnwindSafe};
    use std::sync::atomic::{AtomicUsize, Ordering};

    use super::{IntoIter, ParallelIterator, Producer};

    /// Counts its drops in `drops[id]`; the drop of item 3 panics.
    pub(crate) struct Bomb<'a> {
        pub(crate) id: usize,
        pub(crate) drops: &'a [AtomicUsize],
    }

    impl Drop for Bomb<'_> {
        fn drop(&mut self) {
            self.drops[self.id].fetch_add(1, Ordering::SeqCst);
            if self.id == 3 {
                panic::panic_any("bomb");
            }
        }
    }

    pub(crate) fn bombs(drops: &[AtomicUsize]) -> impl Iterator<Item = Bomb<'_>> {
        (0..drops.len()).map(move |id| Bomb { id, drops })
    }

    pub(crate) fn assert_each_dropped_once(drops: &[AtomicUsize]) {
        for (id, count) in drops.iter().enumerate() {
            assert_eq!(count.load(Ordering::SeqCst), 1, "item {id}");
        }
    }

    #[test]
    fn a_piece_left_unread_drops_every_item_when_one_drop_panics() {
        let drops: Vec<AtomicUsize> = (0..8).map(|_| AtomicUsize::new(0)).collect();
        let mut source = IntoIter {
            vec: bombs(&drops).collect(),
        };
        let mut piece = source.producer().into_iter();
        drop(piece.next());
        let ran = panic::catch_unwind(AssertUnwindSafe(|| drop(piece)));
        assert!(ran.is_err(), "item 3's panic");
        assert_each_dropped_once(&drops);
    }
}
