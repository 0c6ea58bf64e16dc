//! `(a, b, c).into_par_iter()`: a tuple of up to 12 indexed iterators
//! (or of what converts into them) zipped into one that yields tuples
//! (rayon's `MultiZip`), by value, by reference and by mutable reference.

use super::plumbing::{keep, Producer};
use super::{
    IndexedParallelIterator, IntoParallelIterator, IntoParallelRefIterator,
    IntoParallelRefMutIterator, ParallelIterator,
};

/// The items of several indexed iterators, `T`, a tuple of them, zipped:
/// a tuple of their first items, then of their second items, and so on,
/// as many as the shortest has (the others' extra items are dropped
/// unused). An indexed iterator.
///
/// ```
/// use weft::prelude::*;
///
/// let a = vec![1, 2, 3];
/// let b = [10, 20, 30, 40];
/// let mut sums = vec![0; 3];
/// (&a, &b, &mut sums).into_par_iter().for_each(|(x, y, sum)| *sum = x + y);
/// assert_eq!(sums, [11, 22, 33]);
///
/// let triples: Vec<(i32, char, u8)> = (a, vec!['x', 'y'], 5..8u8).into_par_iter().collect();
/// assert_eq!(triples, [(1, 'x', 5), (2, 'y', 6)]);
/// ```
#[derive(Clone, Debug)]
pub struct MultiZip<T> {
    tuple: T,
}

/// The producer of [`MultiZip`]: a tuple of producers, cut alike.
#[derive(Debug)]
pub struct MultiZipProducer<T>(T);

/// The sequential iterator of [`MultiZip`]: a tuple of iterators, stepped
/// together until one runs out.
#[derive(Debug)]
pub struct MultiZipIter<T>(T);

/// Everything for a tuple of one arity: `$idx` the positions, `$T` the
/// iterator types.
macro_rules! multizip {
    ($( ($($idx:tt $T:ident),+) )+) => {$(
        impl<$($T: IntoParallelIterator<Iter: IndexedParallelIterator>),+> IntoParallelIterator
            for ($($T,)+)
        {
            type Item = ($($T::Item,)+);
            type Iter = MultiZip<($($T::Iter,)+)>;
            fn into_par_iter(self) -> Self::Iter {
                MultiZip {
                    tuple: ($(self.$idx.into_par_iter(),)+),
                }
            }
        }

        impl<'a, $($T: IntoParallelRefIterator<'a, Iter: IndexedParallelIterator>),+>
            IntoParallelIterator for &'a ($($T,)+)
        {
            type Item = ($($T::Item,)+);
            type Iter = MultiZip<($($T::Iter,)+)>;
            fn into_par_iter(self) -> Self::Iter {
                MultiZip {
                    tuple: ($(self.$idx.par_iter(),)+),
                }
            }
        }

        impl<'a, $($T: IntoParallelRefMutIterator<'a, Iter: IndexedParallelIterator>),+>
            IntoParallelIterator for &'a mut ($($T,)+)
        {
            type Item = ($($T::Item,)+);
            type Iter = MultiZip<($($T::Iter,)+)>;
            fn into_par_iter(self) -> Self::Iter {
                MultiZip {
                    tuple: ($(self.$idx.par_iter_mut(),)+),
                }
            }
        }

        impl<$($T: IndexedParallelIterator),+> ParallelIterator for MultiZip<($($T,)+)> {
            type Item = ($($T::Item,)+);
            type Producer<'a>
                = MultiZipProducer<($($T::Producer<'a>,)+)>
            where
                Self: 'a;
            type Seq = MultiZipIter<($($T::Seq,)+)>;
            fn producer(&mut self) -> Self::Producer<'_> {
                // All cut to the shortest length, so that they split
                // alike; the longer ones' extra items are dropped unused.
                let len = IndexedParallelIterator::len(self);
                let cut = ($(self.tuple.$idx.producer().split_at(len),)+);
                keep(MultiZipProducer(($(cut.$idx.0,)+)), ($(cut.$idx.1,)+))
            }
            fn into_seq(self) -> Self::Seq {
                MultiZipIter(($(self.tuple.$idx.into_seq(),)+))
            }
            fn opt_len(&self) -> Option<usize> {
                Some(IndexedParallelIterator::len(self))
            }
        }

        impl<$($T: IndexedParallelIterator),+> IndexedParallelIterator for MultiZip<($($T,)+)> {
            fn len(&self) -> usize {
                usize::MAX$(.min(self.tuple.$idx.len()))+
            }
        }

        impl<$($T: Producer),+> Producer for MultiZipProducer<($($T,)+)> {
            type Item = ($($T::Item,)+);
            type IntoIter = MultiZipIter<($($T::IntoIter,)+)>;
            fn len(&self) -> usize {
                usize::MAX$(.min(self.0.$idx.len()))+
            }
            fn split_at(self, index: usize) -> (Self, Self) {
                let halves = ($(self.0.$idx.split_at(index),)+);
                (
                    MultiZipProducer(($(halves.$idx.0,)+)),
                    MultiZipProducer(($(halves.$idx.1,)+)),
                )
            }
            fn into_iter(self) -> Self::IntoIter {
                MultiZipIter(($(self.0.$idx.into_iter(),)+))
            }
            fn min_len(&self) -> usize {
                1$(.max(self.0.$idx.min_len()))+
            }
            fn max_len(&self) -> usize {
                usize::MAX$(.min(self.0.$idx.max_len()))+
            }
            fn deterministic(&self) -> bool {
                false$(|| self.0.$idx.deterministic())+
            }
            fn folds_leaves_whole(&self) -> bool {
                false$(|| self.0.$idx.folds_leaves_whole())+
            }
        }

        impl<$($T: Iterator),+> Iterator for MultiZipIter<($($T,)+)> {
            type Item = ($($T::Item,)+);
            fn next(&mut self) -> Option<Self::Item> {
                Some(($(self.0.$idx.next()?,)+))
            }
            fn size_hint(&self) -> (usize, Option<usize>) {
                let mut hint = (usize::MAX, None::<usize>);
                $(
                    let (low, high) = self.0.$idx.size_hint();
                    hint.0 = hint.0.min(low);
                    hint.1 = match (hint.1, high) {
                        (Some(a), Some(b)) => Some(a.min(b)),
                        (a, b) => a.or(b),
                    };
                )+
                hint
            }
        }
    )+};
}

multizip! {
    (0 A)
    (0 A, 1 B)
    (0 A, 1 B, 2 C)
    (0 A, 1 B, 2 C, 3 D)
    (0 A, 1 B, 2 C, 3 D, 4 E)
    (0 A, 1 B, 2 C, 3 D, 4 E, 5 F)
    (0 A, 1 B, 2 C, 3 D, 4 E, 5 F, 6 G)
    (0 A, 1 B, 2 C, 3 D, 4 E, 5 F, 6 G, 7 H)
    (0 A, 1 B, 2 C, 3 D, 4 E, 5 F, 6 G, 7 H, 8 I)
    (0 A, 1 B, 2 C, 3 D, 4 E, 5 F, 6 G, 7 H, 8 I, 9 J)
    (0 A, 1 B, 2 C, 3 D, 4 E, 5 F, 6 G, 7 H, 8 I, 9 J, 10 K)
    (0 A, 1 B, 2 C, 3 D, 4 E, 5 F, 6 G, 7 H, 8 I, 9 J, 10 K, 11 L)
}
