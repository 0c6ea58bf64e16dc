//! `iter.par_bridge()`: a sequential iterator's items handed to a
//! parallel loop.

use std::sync::{Mutex, PoisonError};

use super::plumbing::Producer;
use super::ParallelIterator;

/// Turns any sequential iterator whose items may cross threads into a
/// parallel iterator (rayon's `ParallelBridge`).
///
/// The iterator stays sequential: the loop's pieces, one per worker, take
/// its items one at a time from behind a lock, each as soon as it is done
/// with the last, until it runs out. So items are processed in parallel but
/// not in the iterator's order: `collect` gives them in the order in which
/// they were taken, piece after piece, not the iterator's. Worth it when
/// each item's work outweighs a lock; for a collection, its own
/// `par_iter` splits without one.
///
/// ```
/// use std::sync::mpsc::channel;
/// use weft::prelude::*;
/// let (sender, receiver) = channel();
/// (0..100u32).for_each(|x| sender.send(x).unwrap());
/// drop(sender);
/// let mut squares: Vec<u32> = receiver.into_iter().par_bridge().map(|x| x * x).collect();
/// squares.sort();
/// assert_eq!(squares[..4], [0, 1, 4, 9]);
/// ```
pub trait ParallelBridge: Sized {
    /// The bridge.
    fn par_bridge(self) -> IterBridge<Self>;
}

impl<I> ParallelBridge for I
where
    I: Iterator + Send,
    I::Item: Send,
{
    fn par_bridge(self) -> IterBridge<I> {
        IterBridge {
            iter: Mutex::new(Some(self)),
        }
    }
}

/// The parallel iterator of [`ParallelBridge::par_bridge`].
#[derive(Debug)]
pub struct IterBridge<I> {
    /// `None` once it ran out, so that it is never asked again (an
    /// iterator need not keep returning `None`).
    iter: Mutex<Option<I>>,
}

/// The producer of [`IterBridge`]: `pullers` of the loop's pieces, each of
/// which takes items from the shared iterator until it runs out. Its length
/// counts pullers, not items, which the driver cannot know.
#[derive(Debug)]
pub struct BridgeProducer<'a, I> {
    iter: &'a Mutex<Option<I>>,
    pullers: usize,
}

impl<I> ParallelIterator for IterBridge<I>
where
    I: Iterator + Send,
    I::Item: Send,
{
    type Item = I::Item;
    type Producer<'a>
        = BridgeProducer<'a, I>
    where
        Self: 'a;
    type Seq = std::iter::Flatten<std::option::IntoIter<I>>;
    fn producer(&mut self) -> BridgeProducer<'_, I> {
        BridgeProducer {
            iter: &self.iter,
            pullers: crate::current_num_threads().max(1),
        }
    }
    fn into_seq(self) -> Self::Seq {
        let iter = self
            .iter
            .into_inner()
            .unwrap_or_else(PoisonError::into_inner);
        iter.into_iter().flatten()
    }
}

impl<'a, I> Producer for BridgeProducer<'a, I>
where
    I: Iterator + Send,
{
    type Item = I::Item;
    type IntoIter = Pull<'a, I>;
    fn len(&self) -> usize {
        self.pullers
    }
    fn split_at(self, index: usize) -> (Self, Self) {
        (
            BridgeProducer {
                iter: self.iter,
                pullers: index,
            },
            BridgeProducer {
                iter: self.iter,
                pullers: self.pullers - index,
            },
        )
    }
    fn into_iter(self) -> Pull<'a, I> {
        // A piece without pullers (what the driver splits off as empty)
        // takes nothing.
        Pull {
            iter: (self.pullers > 0).then_some(self.iter),
        }
    }
}

/// The sequential iterator of a [`BridgeProducer`] piece: the shared
/// iterator's next items, one lock each.
#[derive(Debug)]
pub struct Pull<'a, I> {
    iter: Option<&'a Mutex<Option<I>>>,
}

impl<I: Iterator> Iterator for Pull<'_, I> {
    type Item = I::Item;
    fn next(&mut self) -> Option<I::Item> {
        // A lock poisoned by a panic in the iterator's `next` ends every
        // piece: the iterator's state is unknown, and the panic is on its
        // way to the caller.
        let mut shared = self.iter?.lock().ok()?;
        let item = shared.as_mut()?.next();
        if item.is_none() {
            *shared = None;
        }
        item
    }
}
