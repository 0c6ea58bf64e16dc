//! Adapters that weave items together: `interleave` and
//! `interleave_shortest` alternate two indexed iterators' items,
//! `intersperse` puts a separator between any iterator's items.
//!
//! Each knows, for any index of its own, how many items of each base come
//! before it and which kind of item is there, so its producer splits where
//! the driver asks, as any indexed iterator's, and each piece yields its
//! part of the woven sequence. An unindexed iterator's items have no such
//! index (a piece cannot know whether an earlier piece yields anything),
//! so `intersperse` gathers them first, in order, and weaves the gathered
//! `Vec` as an indexed one.

use std::iter::Fuse;

use super::adapters::{summed_len, ChainProducer, Take};
use super::collect::collect_blocks_of;
use super::plumbing::Producer;
use super::sources::{DrainProducer, IntoIter};
use super::{IndexedParallelIterator, ParallelIterator};

// ------------------------------------------------------------ interleave

/// `a.interleave(b)`: `a`'s first item, `b`'s first, `a`'s second...;
/// once one side runs out, the rest of the other.
#[derive(Clone, Debug)]
pub struct Interleave<A, B> {
    pub(crate) a: A,
    pub(crate) b: B,
}

/// `a.interleave_shortest(b)`: [`Interleave`] of each side cut to where
/// the alternation stops, at the first item the shorter side lacks.
pub type InterleaveShortest<A, B> = Interleave<Take<A>, Take<B>>;

/// The producer of [`Interleave`]: a piece of each base, and which of
/// the two the piece's first item comes from.
#[derive(Debug)]
pub struct InterleaveProducer<A, B> {
    a: A,
    b: B,
    a_first: bool,
}

/// The sequential iterator of an [`Interleave`] piece.
#[derive(Debug)]
pub struct InterleaveIter<It, Jt> {
    a: Fuse<It>,
    b: Fuse<Jt>,
    a_next: bool,
}

impl<It, Jt> Iterator for InterleaveIter<It, Jt>
where
    It: Iterator,
    Jt: Iterator<Item = It::Item>,
{
    type Item = It::Item;
    fn next(&mut self) -> Option<It::Item> {
        let next = if self.a_next {
            self.a.next()
        } else {
            self.b.next()
        };
        if next.is_some() {
            self.a_next = !self.a_next;
            return next;
        }
        // That side ran out: the rest is the other's.
        if self.a_next {
            self.b.next()
        } else {
            self.a.next()
        }
    }
    fn size_hint(&self) -> (usize, Option<usize>) {
        let (a_low, a_high) = self.a.size_hint();
        let (b_low, b_high) = self.b.size_hint();
        let high = a_high.zip(b_high).and_then(|(a, b)| a.checked_add(b));
        (a_low.saturating_add(b_low), high)
    }
}

impl<A, B> ParallelIterator for Interleave<A, B>
where
    A: IndexedParallelIterator,
    B: IndexedParallelIterator<Item = A::Item>,
{
    type Item = A::Item;
    type Producer<'a>
        = InterleaveProducer<A::Producer<'a>, B::Producer<'a>>
    where
        Self: 'a;
    type Seq = InterleaveIter<A::Seq, B::Seq>;
    fn producer(&mut self) -> Self::Producer<'_> {
        // Every index must fit in a `usize`: too long a pair panics here,
        // before anything runs.
        IndexedParallelIterator::len(self);
        InterleaveProducer {
            a: self.a.producer(),
            b: self.b.producer(),
            a_first: true,
        }
    }
    fn into_seq(self) -> Self::Seq {
        InterleaveIter {
            a: self.a.into_seq().fuse(),
            b: self.b.into_seq().fuse(),
            a_next: true,
        }
    }
    fn opt_len(&self) -> Option<usize> {
        self.a.opt_len()?.checked_add(self.b.opt_len()?)
    }
}

impl<A, B> IndexedParallelIterator for Interleave<A, B>
where
    A: IndexedParallelIterator,
    B: IndexedParallelIterator<Item = A::Item>,
{
    fn len(&self) -> usize {
        summed_len(self.a.len(), self.b.len(), "the interleaving")
    }
}

/// How many of the first `index` items of an interleaving come from the
/// side that goes first (of `first` items) and from the other (of
/// `second`): alternately while both last, then the longer one alone.
fn interleaved_counts(index: usize, first: usize, second: usize) -> (usize, usize) {
    let both = first.min(second);
    if index / 2 < both {
        (index.div_ceil(2), index / 2)
    } else if first > second {
        (index - second, second)
    } else {
        (first, index - first)
    }
}

impl<A, B> Producer for InterleaveProducer<A, B>
where
    A: Producer,
    B: Producer<Item = A::Item>,
{
    type Item = A::Item;
    type IntoIter = InterleaveIter<A::IntoIter, B::IntoIter>;
    fn len(&self) -> usize {
        self.a.len().saturating_add(self.b.len())
    }
    fn split_at(self, index: usize) -> (Self, Self) {
        let (a_len, b_len) = (self.a.len(), self.b.len());
        let (a_count, b_count) = if self.a_first {
            interleaved_counts(index, a_len, b_len)
        } else {
            let (b_count, a_count) = interleaved_counts(index, b_len, a_len);
            (a_count, b_count)
        };
        let (a_left, a_right) = self.a.split_at(a_count);
        let (b_left, b_right) = self.b.split_at(b_count);
        // While both sides last, the sides alternate, so an odd count
        // before the cut moves the first item over to the other side;
        // after that only one side is left, and the flag is moot.
        let right_a_first = self.a_first != (index % 2 == 1);
        (
            InterleaveProducer {
                a: a_left,
                b: b_left,
                a_first: self.a_first,
            },
            InterleaveProducer {
                a: a_right,
                b: b_right,
                a_first: right_a_first,
            },
        )
    }
    fn into_iter(self) -> Self::IntoIter {
        InterleaveIter {
            a: self.a.into_iter().fuse(),
            b: self.b.into_iter().fuse(),
            a_next: self.a_first,
        }
    }
    forward_pair_hints!();
}

// ----------------------------------------------------------- intersperse

/// `iter.intersperse(separator)`: a clone of `separator` between each two
/// items.
#[derive(Debug)]
pub struct Intersperse<I: ParallelIterator> {
    pub(crate) base: I,
    pub(crate) separator: I::Item,
    /// An unindexed base's items, gathered when the loop runs.
    pub(crate) gathered: IntoIter<I::Item>,
}

impl<I: ParallelIterator> Intersperse<I> {
    pub(crate) fn new(base: I, separator: I::Item) -> Self {
        Intersperse {
            base,
            separator,
            gathered: IntoIter { vec: Vec::new() },
        }
    }
}

// By hand: a derived one would not ask the separator to be `Clone`.
impl<I: ParallelIterator + Clone> Clone for Intersperse<I>
where
    I::Item: Clone,
{
    fn clone(&self) -> Self {
        Intersperse::new(self.base.clone(), self.separator.clone())
    }
}

/// The length of `len` items interspersed.
fn interspersed_len(len: usize) -> usize {
    len.checked_add(len.saturating_sub(1))
        .expect("the interspersed iterator is longer than usize::MAX")
}

/// The producer of [`Intersperse`]: a piece of its base, the separators
/// between its items, and one before its first item and after its last
/// where the piece was cut next to a separator. A piece of no base item
/// that holds one separator has it `after`.
#[derive(Debug)]
pub struct IntersperseProducer<P: Producer> {
    base: P,
    separator: P::Item,
    before: bool,
    after: bool,
}

/// The sequential iterator of an [`Intersperse`] piece.
#[derive(Debug)]
pub struct IntersperseIter<It: Iterator> {
    base: Fuse<It>,
    separator: It::Item,
    /// Whether a separator comes before the next base item.
    separator_due: bool,
    /// A base item whose separator was just yielded.
    held: Option<It::Item>,
    /// Whether a separator follows the last base item.
    after: bool,
}

impl<It: Iterator> Iterator for IntersperseIter<It>
where
    It::Item: Clone,
{
    type Item = It::Item;
    fn next(&mut self) -> Option<It::Item> {
        if let Some(item) = self.held.take() {
            return Some(item);
        }
        match self.base.next() {
            Some(item) if self.separator_due => {
                self.held = Some(item);
                Some(self.separator.clone())
            }
            Some(item) => {
                self.separator_due = true;
                Some(item)
            }
            None => std::mem::take(&mut self.after).then(|| self.separator.clone()),
        }
    }
}

impl<I> ParallelIterator for Intersperse<I>
where
    I: ParallelIterator,
    I::Item: Clone,
{
    type Item = I::Item;
    type Producer<'a>
        = IntersperseProducer<ChainProducer<I::Producer<'a>, DrainProducer<'a, I::Item>>>
    where
        Self: 'a;
    type Seq = IntersperseIter<I::Seq>;
    fn producer(&mut self) -> Self::Producer<'_> {
        // A known length means each item sits at its base index (what
        // `collect` writes into place by): woven as it is produced.
        // Else the items are gathered first, in order.
        let base = match self.base.opt_len() {
            Some(len) => {
                // Every index must fit: too long a result panics here,
                // before anything runs.
                interspersed_len(len);
                ChainProducer::first(self.base.producer())
            }
            None => {
                let producer = self.base.producer();
                assert!(
                    producer.len() < usize::MAX,
                    "intersperse of an unindexed iterator over usize::MAX items or more"
                );
                self.gathered.vec = collect_blocks_of(producer).into_iter().flatten().collect();
                ChainProducer::second(self.gathered.producer())
            }
        };
        IntersperseProducer {
            base,
            separator: self.separator.clone(),
            before: false,
            after: false,
        }
    }
    fn into_seq(self) -> Self::Seq {
        IntersperseIter {
            base: self.base.into_seq().fuse(),
            separator: self.separator,
            separator_due: false,
            held: None,
            after: false,
        }
    }
    fn opt_len(&self) -> Option<usize> {
        self.base.opt_len().map(interspersed_len)
    }
}

impl<I> IndexedParallelIterator for Intersperse<I>
where
    I: IndexedParallelIterator,
    I::Item: Clone,
{
    fn len(&self) -> usize {
        interspersed_len(self.base.len())
    }
}

impl<P: Producer> IntersperseProducer<P>
where
    P::Item: Clone + Send,
{
    /// A piece of `base` with these separators at its ends, the lone
    /// separator of a piece of no item put `after`.
    fn piece(base: P, separator: P::Item, before: bool, after: bool) -> Self {
        let lone = base.is_empty() && (before || after);
        IntersperseProducer {
            base,
            separator,
            before: before && !lone,
            after: after || lone,
        }
    }
}

impl<P: Producer> Producer for IntersperseProducer<P>
where
    P::Item: Clone + Send,
{
    type Item = P::Item;
    type IntoIter = IntersperseIter<P::IntoIter>;
    fn len(&self) -> usize {
        let items = self.base.len();
        let between = items.saturating_sub(1);
        items
            .saturating_add(between)
            .saturating_add(usize::from(self.before) + usize::from(self.after))
    }
    fn split_at(self, index: usize) -> (Self, Self) {
        let len = self.len();
        let before = usize::from(self.before);
        // Past a leading separator, base items sit at the even offsets and
        // separators at the odd ones; a trailing separator sits past the
        // last item.
        let items_left = ((index + 1).saturating_sub(before) / 2).min(self.base.len());
        let is_separator = |at: usize| {
            (self.before && at == 0)
                || (self.after && at + 1 == len)
                || (at >= before && (at - before) % 2 == 1)
        };
        let left_after = index > 0 && is_separator(index - 1);
        let right_before = index < len && is_separator(index);
        let (left, right) = self.base.split_at(items_left);
        let separator = self.separator.clone();
        (
            IntersperseProducer::piece(left, separator, self.before && index > 0, left_after),
            IntersperseProducer::piece(
                right,
                self.separator,
                right_before,
                self.after && index < len,
            ),
        )
    }
    fn into_iter(self) -> Self::IntoIter {
        IntersperseIter {
            base: self.base.into_iter().fuse(),
            separator: self.separator,
            separator_due: self.before,
            held: None,
            after: self.after,
        }
    }
    forward_hints!();
}
