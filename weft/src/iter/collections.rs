//! `par_iter`, `par_iter_mut` and `into_par_iter` over std's other
//! collections, with rayon's item types.
//!
//! What is stored as slices runs on the slices: `VecDeque` as its two
//! halves chained, `BinaryHeap` by reference as its array (in no
//! particular order, as its sequential `iter`), and by value every one of
//! them moves into a `Vec` without copying the elements one by one
//! (`Vec::from` a `VecDeque` rotates in place at most). `Option` and
//! `Result` are a piece of zero or one item.
//!
//! The maps, sets and `LinkedList` have no stable way to be cut in the
//! middle: their items (or references to them) are first gathered into a
//! `Vec` by one sequential pass, which then splits as any `Vec`. That pass
//! is a move or a pointer copy per item, cheap beside nearly any work a
//! parallel loop does per item.

use std::collections::{BTreeMap, BTreeSet, BinaryHeap, HashMap, HashSet, LinkedList, VecDeque};

use super::plumbing::Producer;
use super::sources::{IntoIter, Iter, IterMut};
use super::{Chain, IndexedParallelIterator, IntoParallelIterator, ParallelIterator};

// ------------------------------------------------------ Option, Result

/// A parallel iterator over the zero or one item of an `Option` or the
/// `Ok` of a `Result`, by value or by reference.
///
/// ```
/// use weft::prelude::*;
/// let mut present = Some(2);
/// present.par_iter_mut().for_each(|x| *x += 1);
/// assert_eq!(present.into_par_iter().collect::<Vec<_>>(), [3]);
/// let failed: Result<u32, String> = Err("no".into());
/// assert_eq!(failed.par_iter().count(), 0);
/// ```
#[derive(Clone, Debug)]
pub struct OptionIter<T> {
    item: Option<T>,
}

/// The producer of [`OptionIter`]: zero or one item.
#[derive(Debug)]
pub struct OptionProducer<T> {
    item: Option<T>,
}

impl<T> OptionIter<T> {
    pub(crate) fn new(item: Option<T>) -> Self {
        OptionIter { item }
    }
}

impl<T: Send> ParallelIterator for OptionIter<T> {
    type Item = T;
    type Producer<'a>
        = OptionProducer<T>
    where
        Self: 'a;
    type Seq = std::option::IntoIter<T>;
    fn producer(&mut self) -> OptionProducer<T> {
        OptionProducer {
            item: self.item.take(),
        }
    }
    fn into_seq(self) -> Self::Seq {
        self.item.into_iter()
    }
    fn opt_len(&self) -> Option<usize> {
        Some(IndexedParallelIterator::len(self))
    }
}

impl<T: Send> IndexedParallelIterator for OptionIter<T> {
    fn len(&self) -> usize {
        usize::from(self.item.is_some())
    }
}

impl<T: Send> Producer for OptionProducer<T> {
    type Item = T;
    type IntoIter = std::option::IntoIter<T>;
    fn len(&self) -> usize {
        usize::from(self.item.is_some())
    }
    fn split_at(self, index: usize) -> (Self, Self) {
        // `index` is 0 or the length: the item goes to the side that has
        // room for it.
        let none = OptionProducer { item: None };
        if index == 0 {
            (none, self)
        } else {
            (self, none)
        }
    }
    fn into_iter(self) -> Self::IntoIter {
        self.item.into_iter()
    }
}

/// `IntoParallelIterator` for a type whose parallel iterator is an
/// [`OptionIter`] over what `$to_option` makes of it.
macro_rules! option_like {
    ($(impl[$($g:tt)*] $ty:ty => $item:ty, $to_option:expr;)*) => {$(
        impl<$($g)*> IntoParallelIterator for $ty {
            type Item = $item;
            type Iter = OptionIter<$item>;
            fn into_par_iter(self) -> OptionIter<$item> {
                let to_option: fn($ty) -> Option<$item> = $to_option;
                OptionIter {
                    item: to_option(self),
                }
            }
        }
    )*};
}

option_like! {
    impl[T: Send] Option<T> => T, |o| o;
    impl['a, T: Sync] &'a Option<T> => &'a T, Option::as_ref;
    impl['a, T: Send] &'a mut Option<T> => &'a mut T, Option::as_mut;
    impl[T: Send, E] Result<T, E> => T, Result::ok;
    impl['a, T: Sync, E] &'a Result<T, E> => &'a T, |r| r.as_ref().ok();
    impl['a, T: Send, E] &'a mut Result<T, E> => &'a mut T, |r| r.as_mut().ok();
}

// ----------------------------------------------------- slices in disguise

impl<'a, T: Sync> IntoParallelIterator for &'a VecDeque<T> {
    type Item = &'a T;
    type Iter = Chain<Iter<'a, T>, Iter<'a, T>>;
    /// The deque's front part, then its back part, as two slices.
    fn into_par_iter(self) -> Self::Iter {
        let (front, back) = self.as_slices();
        Chain {
            a: Iter { slice: front },
            b: Iter { slice: back },
        }
    }
}

impl<'a, T: Send> IntoParallelIterator for &'a mut VecDeque<T> {
    type Item = &'a mut T;
    type Iter = Chain<IterMut<'a, T>, IterMut<'a, T>>;
    fn into_par_iter(self) -> Self::Iter {
        let (front, back) = self.as_mut_slices();
        Chain {
            a: IterMut { slice: front },
            b: IterMut { slice: back },
        }
    }
}

impl<'a, T: Sync> IntoParallelIterator for &'a BinaryHeap<T> {
    type Item = &'a T;
    type Iter = Iter<'a, T>;
    fn into_par_iter(self) -> Iter<'a, T> {
        Iter {
            slice: self.as_slice(),
        }
    }
}

/// `IntoParallelIterator` by value for a collection that becomes a `Vec`
/// without gathering its items one by one.
macro_rules! into_vec {
    ($(impl[$($g:tt)*] $ty:ty => $item:ty;)*) => {$(
        impl<$($g)*> IntoParallelIterator for $ty {
            type Item = $item;
            type Iter = IntoIter<$item>;
            fn into_par_iter(self) -> IntoIter<$item> {
                IntoIter { vec: self.into() }
            }
        }
    )*};
}

into_vec! {
    impl[T: Send] VecDeque<T> => T;
    impl[T: Send] BinaryHeap<T> => T;
    impl[T: Send] Box<[T]> => T;
}

// ------------------------------------------------ gathered into a Vec

/// `IntoParallelIterator` for a collection that cannot be cut in the
/// middle: its sequential iterator's items are gathered into a `Vec`,
/// which then splits.
macro_rules! gathered {
    ($(impl[$($g:tt)*] $ty:ty => $item:ty;)*) => {$(
        impl<$($g)*> IntoParallelIterator for $ty {
            type Item = $item;
            type Iter = IntoIter<$item>;
            fn into_par_iter(self) -> IntoIter<$item> {
                IntoIter {
                    vec: self.into_iter().collect(),
                }
            }
        }
    )*};
}

gathered! {
    impl[K: Send, V: Send, S] HashMap<K, V, S> => (K, V);
    impl['a, K: Sync, V: Sync, S] &'a HashMap<K, V, S> => (&'a K, &'a V);
    impl['a, K: Sync, V: Send, S] &'a mut HashMap<K, V, S> => (&'a K, &'a mut V);
    impl[T: Send, S] HashSet<T, S> => T;
    impl['a, T: Sync, S] &'a HashSet<T, S> => &'a T;
    impl[K: Send, V: Send] BTreeMap<K, V> => (K, V);
    impl['a, K: Sync, V: Sync] &'a BTreeMap<K, V> => (&'a K, &'a V);
    impl['a, K: Sync, V: Send] &'a mut BTreeMap<K, V> => (&'a K, &'a mut V);
    impl[T: Send] BTreeSet<T> => T;
    impl['a, T: Sync] &'a BTreeSet<T> => &'a T;
    impl[T: Send] LinkedList<T> => T;
    impl['a, T: Sync] &'a LinkedList<T> => &'a T;
    impl['a, T: Send] &'a mut LinkedList<T> => &'a mut T;
}
