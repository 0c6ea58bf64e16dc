//! Sources made from nothing but a value: [`repeat`], [`repeat_n`],
//! [`once`] and [`empty`].

use super::plumbing::Producer;
use super::{IndexedParallelIterator, OptionIter, ParallelIterator, Zip};

/// `repeat(value)`: clones of `value` without end, for
/// [`zip`](Repeat::zip) or [`take`](Repeat::take), or a search that ends.
///
/// ```
/// use weft::prelude::*;
/// let pairs: Vec<(char, i32)> = weft::iter::repeat('x').zip(vec![1, 2]).collect();
/// assert_eq!(pairs, [('x', 1), ('x', 2)]);
/// assert_eq!(weft::iter::repeat(7).take(3).sum::<i32>(), 21);
/// ```
pub fn repeat<T: Clone + Send>(value: T) -> Repeat<T> {
    Repeat(repeat_n(value, usize::MAX))
}

/// `n` clones of `value` (rayon's `repeat_n`), as an indexed iterator.
///
/// ```
/// use weft::prelude::*;
/// let v: Vec<String> = weft::iter::repeat_n(String::from("ab"), 3).collect();
/// assert_eq!(v, ["ab", "ab", "ab"]);
/// ```
pub fn repeat_n<T: Clone + Send>(value: T, n: usize) -> RepeatN<T> {
    RepeatN { value, count: n }
}

/// The former name of [`repeat_n`], as rayon still has it.
#[deprecated(note = "use `repeat_n`")]
pub fn repeatn<T: Clone + Send>(value: T, n: usize) -> RepeatN<T> {
    repeat_n(value, n)
}

/// One item (rayon's `once`).
///
/// ```
/// use weft::prelude::*;
/// let v: Vec<u32> = (0..3u32).into_par_iter().chain(weft::iter::once(9)).collect();
/// assert_eq!(v, [0, 1, 2, 9]);
/// ```
pub fn once<T: Send>(item: T) -> Once<T> {
    OptionIter::new(Some(item))
}

/// No item (rayon's `empty`).
///
/// ```
/// use weft::prelude::*;
/// assert_eq!(weft::iter::empty::<u32>().count(), 0);
/// ```
pub fn empty<T: Send>() -> Empty<T> {
    OptionIter::new(None)
}

/// The iterator of [`once`].
pub type Once<T> = OptionIter<T>;

/// The iterator of [`empty`].
pub type Empty<T> = OptionIter<T>;

/// The iterator of [`repeat`]: as many items as a producer can count
/// (`usize::MAX`), which no loop gets to the end of.
#[derive(Clone, Debug)]
pub struct Repeat<T>(RepeatN<T>);

impl<T: Clone + Send> Repeat<T> {
    /// The first `n` clones.
    pub fn take(self, n: usize) -> RepeatN<T> {
        repeat_n(self.0.value, n)
    }

    /// Pairs clones with `other`'s items, as many as `other` has.
    pub fn zip<Z>(self, other: Z) -> Zip<RepeatN<T>, Z::Iter>
    where
        Z: super::IntoParallelIterator,
        Z::Iter: IndexedParallelIterator,
    {
        let other = other.into_par_iter();
        let n = other.len();
        self.take(n).zip(other)
    }
}

impl<T: Clone + Send> ParallelIterator for Repeat<T> {
    type Item = T;
    type Producer<'a>
        = RepeatNProducer<T>
    where
        Self: 'a;
    type Seq = <RepeatN<T> as ParallelIterator>::Seq;
    fn producer(&mut self) -> RepeatNProducer<T> {
        self.0.producer()
    }
    fn into_seq(self) -> Self::Seq {
        self.0.into_seq()
    }
}

/// The iterator of [`repeat_n`].
#[derive(Clone, Debug)]
pub struct RepeatN<T> {
    value: T,
    count: usize,
}

/// The producer of [`RepeatN`] and [`Repeat`]: a value and how many
/// clones of it.
#[derive(Debug)]
pub struct RepeatNProducer<T> {
    value: T,
    count: usize,
}

impl<T: Clone + Send> ParallelIterator for RepeatN<T> {
    type Item = T;
    type Producer<'a>
        = RepeatNProducer<T>
    where
        Self: 'a;
    type Seq = std::iter::RepeatN<T>;
    fn producer(&mut self) -> RepeatNProducer<T> {
        RepeatNProducer {
            value: self.value.clone(),
            count: self.count,
        }
    }
    fn into_seq(self) -> Self::Seq {
        std::iter::repeat_n(self.value, self.count)
    }
    fn opt_len(&self) -> Option<usize> {
        Some(self.count)
    }
}

impl<T: Clone + Send> IndexedParallelIterator for RepeatN<T> {
    fn len(&self) -> usize {
        self.count
    }
}

impl<T: Clone + Send> Producer for RepeatNProducer<T> {
    type Item = T;
    type IntoIter = std::iter::RepeatN<T>;
    fn len(&self) -> usize {
        self.count
    }
    fn split_at(self, index: usize) -> (Self, Self) {
        let right = RepeatNProducer {
            value: self.value.clone(),
            count: self.count - index,
        };
        let left = RepeatNProducer {
            value: self.value,
            count: index,
        };
        (left, right)
    }
    fn into_iter(self) -> Self::IntoIter {
        std::iter::repeat_n(self.value, self.count)
    }
}
