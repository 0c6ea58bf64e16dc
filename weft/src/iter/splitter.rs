//! Sources whose pieces only the user knows how to cut: [`split`] (a value
//! and a function that halves it) and the tree walks of `walk_tree.rs`.
//!
//! The driver cuts producers at an index, but these have no length to
//! index: how many items a value or a subtree holds is unknown until it is
//! walked. So their producers count a *width* instead, a stand-in length
//! that only orders the pieces: the whole starts `usize::MAX` wide, and a
//! cut anywhere inside asks the user's function for two pieces, the left
//! one as wide as the cut's index and the right one the rest. The driver
//! then cuts by its one rule (halves while the split budget lasts, again
//! where idle workers take pieces, see `plumbing`), and the widths keep
//! the pieces' offsets in the items' order, which `find_first` and
//! `collect` need. A piece the user's function will not cut becomes 1
//! wide, which the driver does not cut again, and what it left on the
//! right, empty (0 wide).
//!
//! A piece is folded in one go: cutting off a chunk would ask the user's
//! function again at every chunk, so these producers ask the driver to
//! fold each leaf whole (`Producer::folds_leaves_whole`), as rayon folds
//! its leaves.

use super::plumbing::Producer;
use super::ParallelIterator;

/// The widths of the two sides of a cut at `index` in a piece `width`
/// wide, or `None` if the cut is at an end, and so no cut.
pub(super) fn cut_widths(width: usize, index: usize) -> Option<(usize, usize)> {
    (index > 0 && index < width).then(|| (index, width - index))
}

/// The width of a whole source: as wide as a producer can be, so that
/// about 64 halvings are possible before a piece is 1 wide.
pub(super) const WHOLE: usize = usize::MAX;

/// A parallel iterator over the pieces that `splitter` cuts `data` into
/// (rayon's `iter::split`). `splitter` returns the two halves of a piece,
/// or the piece and `None` when it will not cut it; the loop cuts as long
/// as the driver's splitting rule asks for more pieces (about a few per
/// worker, more where workers idle) and the splitter agrees, and the items
/// are the pieces left uncut, in order: the left half's pieces before the
/// right half's. How many pieces there are depends on the worker count
/// and on timing, not only on `data`.
///
/// ```
/// use std::ops::Range;
/// use weft::prelude::*;
///
/// fn halve(range: Range<u64>) -> (Range<u64>, Option<Range<u64>>) {
///     if range.end - range.start < 1_000 {
///         return (range, None);
///     }
///     let mid = range.start + (range.end - range.start) / 2;
///     (range.start..mid, Some(mid..range.end))
/// }
///
/// let sum: u64 = weft::iter::split(0..100_000, halve)
///     .map(|piece| piece.sum::<u64>())
///     .sum();
/// assert_eq!(sum, (0..100_000).sum());
///
/// // The pieces come in order, and cover the whole.
/// let pieces: Vec<Range<u64>> = weft::iter::split(0..100_000, halve).collect();
/// assert_eq!(pieces.first().unwrap().start, 0);
/// assert!(pieces.windows(2).all(|pair| pair[0].end == pair[1].start));
/// assert_eq!(pieces.last().unwrap().end, 100_000);
/// ```
pub fn split<D, S>(data: D, splitter: S) -> SplitData<D, S>
where
    D: Send,
    S: Fn(D) -> (D, Option<D>) + Sync,
{
    SplitData {
        data: Some(data),
        splitter,
    }
}

/// The iterator of [`split`] (rayon's `iter::Split`).
#[derive(Clone, Debug)]
pub struct SplitData<D, S> {
    /// `None` once a consuming call took it.
    data: Option<D>,
    splitter: S,
}

/// The producer of [`SplitData`]: a piece of the data, or nothing, and its
/// width (see `splitter.rs`).
#[derive(Debug)]
pub struct SplitDataProducer<'s, D, S> {
    data: Option<D>,
    width: usize,
    splitter: &'s S,
}

impl<D, S> ParallelIterator for SplitData<D, S>
where
    D: Send,
    S: Fn(D) -> (D, Option<D>) + Sync + Send,
{
    type Item = D;
    type Producer<'a>
        = SplitDataProducer<'a, D, S>
    where
        Self: 'a;
    type Seq = std::option::IntoIter<D>;
    fn producer(&mut self) -> Self::Producer<'_> {
        // The data moves into the producer: the consuming call that asked
        // drops the iterator after.
        SplitDataProducer {
            data: self.data.take(),
            width: WHOLE,
            splitter: &self.splitter,
        }
    }
    fn into_seq(self) -> Self::Seq {
        // Run sequentially (a `flat_map`'s inner iterator folded whole),
        // the data is one piece: nobody asked for more.
        self.data.into_iter()
    }
}

impl<D, S> Producer for SplitDataProducer<'_, D, S>
where
    D: Send,
    S: Fn(D) -> (D, Option<D>) + Sync,
{
    type Item = D;
    type IntoIter = std::option::IntoIter<D>;
    fn len(&self) -> usize {
        if self.data.is_some() {
            self.width
        } else {
            0
        }
    }
    fn split_at(self, index: usize) -> (Self, Self) {
        let splitter = self.splitter;
        let piece = |data, width| SplitDataProducer {
            data,
            width,
            splitter,
        };
        let width = self.width;
        match (self.data, cut_widths(width, index)) {
            (Some(data), Some((left, right))) => match splitter(data) {
                (data, Some(other)) => (piece(Some(data), left), piece(Some(other), right)),
                (data, None) => (piece(Some(data), 1), piece(None, 0)),
            },
            // Nothing to cut, or a cut at an end: all on one side.
            (data, _) if index == 0 => (piece(None, 0), piece(data, width)),
            (data, _) => (piece(data, width), piece(None, 0)),
        }
    }
    fn into_iter(self) -> Self::IntoIter {
        self.data.into_iter()
    }
    fn folds_leaves_whole(&self) -> bool {
        // A chunk at a time would be a cut, a call of the user's
        // function, at a time (see the module docs).
        true
    }
}
