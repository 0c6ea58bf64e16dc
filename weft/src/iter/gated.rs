//! Adapters whose pieces share one state that decides, item by item,
//! what goes on: `take_any`, `skip_any`, `take_any_while`,
//! `skip_any_while` (a count or a flag all the pieces see) and
//! `panic_fuse` (a flag a panicking piece raises).
//!
//! Each is a [`Gated`] iterator: its base and a [`Gate`], which every
//! piece consults before pulling an item and after. What a gate lets
//! through keeps its order in the input (a `collect` keeps it); which
//! items those are depends on which pieces got there first, so it
//! changes from run to run where the order does not decide it. A gate
//! drops what it does not let through (see [Items by
//! value](crate::iter#items-by-value)); a piece it ends drops the rest of
//! its items unused.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use super::plumbing::Producer;
use super::{IndexedParallelIterator, ParallelIterator};

/// What a [`Gate`] does with an item a piece pulled.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Admit {
    /// Passes it on.
    Yield,
    /// Drops it and pulls the next.
    Skip,
    /// Drops it and ends the piece.
    End,
}

/// The state a [`Gated`] iterator's pieces share, and what it makes of
/// each item. The relaxed atomics it holds are hints between pieces; the
/// items themselves travel by the driver's joins.
pub trait Gate<T>: Sync {
    /// Whether the piece ends before pulling another item.
    fn closed(&self) -> bool {
        false
    }
    /// What becomes of `item`, just pulled.
    fn admit(&self, item: &T) -> Admit;
    /// Called as a piece's iterator is dropped.
    fn on_drop(&self) {}
    /// Whether every item of the base goes through, so that the base's
    /// length and indices are this iterator's (`panic_fuse`'s gate, which
    /// cuts a loop short only on its way to a panic).
    fn keeps_count(&self) -> bool {
        false
    }
}

impl<T, G: Gate<T>> Gate<T> for &G {
    fn closed(&self) -> bool {
        (**self).closed()
    }
    fn admit(&self, item: &T) -> Admit {
        (**self).admit(item)
    }
    fn on_drop(&self) {
        (**self).on_drop();
    }
    fn keeps_count(&self) -> bool {
        (**self).keeps_count()
    }
}

/// An iterator whose items go through a [`Gate`]: see the aliases
/// [`TakeAny`], [`SkipAny`], [`TakeAnyWhile`], [`SkipAnyWhile`] and
/// [`PanicFuse`].
#[derive(Debug)]
pub struct Gated<I, G> {
    pub(crate) base: I,
    pub(crate) gate: G,
}

/// The producer of a [`Gated`] iterator: a piece of its base and the
/// shared gate.
#[derive(Debug)]
pub struct GatedProducer<'g, P, G> {
    base: P,
    gate: &'g G,
}

/// The sequential iterator of a [`Gated`] piece.
#[derive(Debug)]
pub struct GatedIter<It, G: Gate<It::Item>>
where
    It: Iterator,
{
    base: It,
    gate: G,
}

impl<It: Iterator, G: Gate<It::Item>> Iterator for GatedIter<It, G> {
    type Item = It::Item;
    fn next(&mut self) -> Option<It::Item> {
        loop {
            if self.gate.closed() {
                return None;
            }
            let item = self.base.next()?;
            match self.gate.admit(&item) {
                Admit::Yield => return Some(item),
                Admit::Skip => {}
                Admit::End => return None,
            }
        }
    }
}

impl<It: Iterator, G: Gate<It::Item>> Drop for GatedIter<It, G> {
    fn drop(&mut self) {
        self.gate.on_drop();
    }
}

impl<I, G> ParallelIterator for Gated<I, G>
where
    I: ParallelIterator,
    G: Gate<I::Item> + Send,
{
    type Item = I::Item;
    type Producer<'a>
        = GatedProducer<'a, I::Producer<'a>, G>
    where
        Self: 'a;
    type Seq = GatedIter<I::Seq, G>;
    fn producer(&mut self) -> Self::Producer<'_> {
        GatedProducer {
            base: self.base.producer(),
            gate: &self.gate,
        }
    }
    fn into_seq(self) -> Self::Seq {
        GatedIter {
            base: self.base.into_seq(),
            gate: self.gate,
        }
    }
    fn opt_len(&self) -> Option<usize> {
        if self.gate.keeps_count() {
            self.base.opt_len()
        } else {
            None
        }
    }
}

impl<I: IndexedParallelIterator> IndexedParallelIterator for PanicFuse<I> {
    fn len(&self) -> usize {
        self.base.len()
    }
}

impl<'g, P, G> Producer for GatedProducer<'g, P, G>
where
    P: Producer,
    G: Gate<P::Item>,
{
    type Item = P::Item;
    type IntoIter = GatedIter<P::IntoIter, &'g G>;
    fn len(&self) -> usize {
        self.base.len()
    }
    fn split_at(self, index: usize) -> (Self, Self) {
        let (left, right) = self.base.split_at(index);
        let gate = self.gate;
        (
            GatedProducer { base: left, gate },
            GatedProducer { base: right, gate },
        )
    }
    fn into_iter(self) -> Self::IntoIter {
        GatedIter {
            base: self.base.into_iter(),
            gate: self.gate,
        }
    }
    forward_hints!();
}

// ------------------------------------------------------ take_any, skip_any

/// Claims one of `limit` slots counted in `claimed`; false once all are
/// gone.
fn claim(claimed: &AtomicUsize, limit: usize) -> bool {
    // Relaxed: the count alone is shared; no other memory depends on it.
    claimed
        .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |count| {
            (count < limit).then(|| count + 1)
        })
        .is_ok()
}

/// The gate of [`TakeAny`]: the first `limit` items to claim a slot.
#[derive(Debug)]
pub struct Taking {
    pub(crate) limit: usize,
    pub(crate) claimed: AtomicUsize,
}

impl<T> Gate<T> for Taking {
    fn closed(&self) -> bool {
        self.claimed.load(Ordering::Relaxed) >= self.limit
    }
    fn admit(&self, _: &T) -> Admit {
        if claim(&self.claimed, self.limit) {
            Admit::Yield
        } else {
            Admit::End
        }
    }
}

/// The gate of [`SkipAny`]: the first `limit` items to claim a slot are
/// dropped, the others go on.
#[derive(Debug)]
pub struct Skipping {
    pub(crate) limit: usize,
    pub(crate) claimed: AtomicUsize,
}

impl<T> Gate<T> for Skipping {
    fn admit(&self, _: &T) -> Admit {
        if claim(&self.claimed, self.limit) {
            Admit::Skip
        } else {
            Admit::Yield
        }
    }
}

/// `iter.take_any(n)`: `n` items from anywhere in `iter`.
pub type TakeAny<I> = Gated<I, Taking>;

/// `iter.skip_any(n)`: all but `n` items from anywhere in `iter`.
pub type SkipAny<I> = Gated<I, Skipping>;

// ------------------------------------------ take_any_while, skip_any_while

/// The gate of [`TakeAnyWhile`]: items go on while the predicate holds;
/// the first item it fails, in any piece, ends every piece.
#[derive(Debug)]
pub struct TakingWhile<P> {
    pub(crate) predicate: P,
    pub(crate) ended: AtomicBool,
}

impl<T, P: Fn(&T) -> bool + Sync> Gate<T> for TakingWhile<P> {
    fn closed(&self) -> bool {
        self.ended.load(Ordering::Relaxed)
    }
    fn admit(&self, item: &T) -> Admit {
        if (self.predicate)(item) {
            Admit::Yield
        } else {
            self.ended.store(true, Ordering::Relaxed);
            Admit::End
        }
    }
}

/// The gate of [`SkipAnyWhile`]: items are dropped while the predicate
/// holds; from the first item it fails, in any piece, every item goes on
/// unasked.
#[derive(Debug)]
pub struct SkippingWhile<P> {
    pub(crate) predicate: P,
    pub(crate) ended: AtomicBool,
}

impl<T, P: Fn(&T) -> bool + Sync> Gate<T> for SkippingWhile<P> {
    fn admit(&self, item: &T) -> Admit {
        if self.ended.load(Ordering::Relaxed) {
            return Admit::Yield;
        }
        if (self.predicate)(item) {
            Admit::Skip
        } else {
            self.ended.store(true, Ordering::Relaxed);
            Admit::Yield
        }
    }
}

/// `iter.take_any_while(predicate)`.
pub type TakeAnyWhile<I, P> = Gated<I, TakingWhile<P>>;

/// `iter.skip_any_while(predicate)`.
pub type SkipAnyWhile<I, P> = Gated<I, SkippingWhile<P>>;

// -------------------------------------------------------------- panic_fuse

/// The gate of [`PanicFuse`]: every item goes on until a piece unwinds,
/// which ends every piece at its next item.
#[derive(Debug, Default)]
pub struct Fuse {
    pub(crate) blown: AtomicBool,
}

impl<T> Gate<T> for Fuse {
    fn closed(&self) -> bool {
        self.blown.load(Ordering::Relaxed)
    }
    fn admit(&self, _: &T) -> Admit {
        Admit::Yield
    }
    fn on_drop(&self) {
        // A piece's iterator dropped while its thread unwinds: a closure
        // of the loop (or an item's destructor) panicked.
        if std::thread::panicking() {
            self.blown.store(true, Ordering::Relaxed);
        }
    }
    fn keeps_count(&self) -> bool {
        true
    }
}

/// `iter.panic_fuse()`.
pub type PanicFuse<I> = Gated<I, Fuse>;
