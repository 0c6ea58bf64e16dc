//! Consuming into two collections at once: `partition`, `partition_map`,
//! `unzip` and `unzip_into_vecs`, and the [`Either`] that
//! `partition_map`'s closure returns.
//!
//! Each piece sorts its items into two `Vec`s of its own (a leaf folded a
//! chunk at a time goes on with the `Vec`s of the chunk before); the
//! pieces' `Vec`s are linked in the input's order, uncopied, and each side
//! is then handed to its collection's [`ParallelExtend`] once, so both
//! sides keep the input's order.

use std::collections::LinkedList;
use std::marker::PhantomData;

use super::adapters::ChainProducer;
use super::collect::{append_pieces, FromParallelIterator, ParallelExtend};
use super::plumbing::Consumer;
use super::{IndexedParallelIterator, IntoParallelIterator, ParallelIterator};

/// One of two values (rayon's `iter::Either`): what the closure of
/// [`partition_map`](super::ParallelIterator::partition_map) returns to
/// send an item to the left collection or the right one.
///
/// ```
/// use weft::iter::Either;
/// let sorted: Vec<Either<u32, &str>> = vec![Either::Left(1), Either::Right("one")];
/// assert!(matches!(sorted[1], Either::Right("one")));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Either<L, R> {
    /// Goes to the first (left) collection.
    Left(L),
    /// Goes to the second (right) collection.
    Right(R),
}

/// A piece's items, sorted into two sides: each side's `Vec`s in order.
type Sides<L, R> = (LinkedList<Vec<L>>, LinkedList<Vec<R>>);

/// Sorts each item into one side, the other or both (`sort` pushes it,
/// or what it makes of it, onto the left `Vec`, the right one, or both).
/// `L` and `R` are parameters only so that the impl can name them.
struct TwoWays<'f, F, L, R>(&'f F, PhantomData<fn() -> (L, R)>);

impl<T, L, R, F> Consumer<T> for TwoWays<'_, F, L, R>
where
    L: Send,
    R: Send,
    F: Fn(T, &mut Vec<L>, &mut Vec<R>) + Sync,
{
    type Result = Sides<L, R>;
    fn fold<I: Iterator<Item = T>>(&self, offset: usize, items: I) -> Sides<L, R> {
        self.fold_more((LinkedList::new(), LinkedList::new()), offset, items)
    }
    fn reduce(&self, mut left: Sides<L, R>, mut right: Sides<L, R>) -> Sides<L, R> {
        left.0.append(&mut right.0);
        left.1.append(&mut right.1);
        left
    }
    fn fold_more<I: Iterator<Item = T>>(
        &self,
        (mut lefts, mut rights): Sides<L, R>,
        _offset: usize,
        items: I,
    ) -> Sides<L, R> {
        // The last `Vec` of each side is the one this piece goes on with:
        // the items folded onto `left` come right after its last ones.
        let mut left = lefts.pop_back().unwrap_or_default();
        let mut right = rights.pop_back().unwrap_or_default();
        for item in items {
            (self.0)(item, &mut left, &mut right);
        }
        if !left.is_empty() {
            lefts.push_back(left);
        }
        if !right.is_empty() {
            rights.push_back(right);
        }
        (lefts, rights)
    }
}

/// Runs `iter`, sorting each item with `sort`; each side's `Vec`s, in
/// the input's order.
pub(crate) fn sort_in_two<I, L, R, F>(mut iter: I, sort: F) -> Sides<L, R>
where
    I: ParallelIterator,
    L: Send,
    R: Send,
    F: Fn(I::Item, &mut Vec<L>, &mut Vec<R>) + Sync,
{
    iter.drive_with(&TwoWays(&sort, PhantomData))
}

/// Runs `iter`, sorting the first of each pair to the left and the
/// second to the right.
pub(crate) fn unzip_pieces<I, A, B>(iter: I) -> Sides<A, B>
where
    I: ParallelIterator<Item = (A, B)>,
    A: Send,
    B: Send,
{
    sort_in_two(iter, |(a, b), left: &mut Vec<A>, right: &mut Vec<B>| {
        left.push(a);
        right.push(b);
    })
}

/// Runs `iter`, sorting the `Left` values to the left and the `Right`
/// ones to the right.
pub(crate) fn either_sides<I, L, R>(iter: I) -> Sides<L, R>
where
    I: ParallelIterator<Item = Either<L, R>>,
    L: Send,
    R: Send,
{
    sort_in_two(
        iter,
        |item, left: &mut Vec<L>, right: &mut Vec<R>| match item {
            Either::Left(l) => left.push(l),
            Either::Right(r) => right.push(r),
        },
    )
}

/// A new collection extended with one side's items, in order: a side of
/// one `Vec` (a loop that did not split) goes in as it is, others are
/// joined first.
pub(crate) fn gather<C, T>(side: LinkedList<Vec<T>>) -> C
where
    C: Default + ParallelExtend<T>,
    T: Send,
{
    let mut collection = C::default();
    collection.par_extend(joined(side));
    collection
}

/// Pairs split into two collections, each in the input's order (rayon's
/// collect of pairs): what [`unzip`](super::ParallelIterator::unzip)
/// returns.
///
/// ```
/// use weft::prelude::*;
/// let (numbers, names): (Vec<u32>, Vec<String>) =
///     (1..4u32).into_par_iter().map(|x| (x, x.to_string())).collect();
/// assert_eq!((numbers, names), (vec![1, 2, 3], vec!["1".into(), "2".into(), "3".into()]));
/// ```
impl<A, B, FromA, FromB> FromParallelIterator<(A, B)> for (FromA, FromB)
where
    A: Send,
    B: Send,
    FromA: Default + Send + ParallelExtend<A>,
    FromB: Default + Send + ParallelExtend<B>,
{
    fn from_par_iter<I>(iter: I) -> Self
    where
        I: IntoParallelIterator<Item = (A, B)>,
    {
        iter.into_par_iter().unzip()
    }
}

/// Each of a pair of collections extended with its side of the pairs, in
/// order.
impl<A, B, FromA, FromB> ParallelExtend<(A, B)> for (FromA, FromB)
where
    A: Send,
    B: Send,
    FromA: Send + ParallelExtend<A>,
    FromB: Send + ParallelExtend<B>,
{
    fn par_extend<I>(&mut self, iter: I)
    where
        I: IntoParallelIterator<Item = (A, B)>,
    {
        let (a, b) = unzip_pieces(iter.into_par_iter());
        self.0.par_extend(joined(a));
        self.1.par_extend(joined(b));
    }
}

/// The `Left` values into the first collection and the `Right` ones into
/// the second, each in order (rayon's collect of `Either`s): what
/// [`partition_map`](super::ParallelIterator::partition_map) returns.
///
/// ```
/// use weft::iter::Either;
/// use weft::prelude::*;
/// let (even, odd): (Vec<u32>, Vec<u32>) = (0..5u32)
///     .into_par_iter()
///     .map(|x| if x % 2 == 0 { Either::Left(x) } else { Either::Right(x) })
///     .collect();
/// assert_eq!((even, odd), (vec![0, 2, 4], vec![1, 3]));
/// ```
impl<L, R, A, B> FromParallelIterator<Either<L, R>> for (A, B)
where
    L: Send,
    R: Send,
    A: Default + Send + ParallelExtend<L>,
    B: Default + Send + ParallelExtend<R>,
{
    fn from_par_iter<I>(iter: I) -> Self
    where
        I: IntoParallelIterator<Item = Either<L, R>>,
    {
        iter.into_par_iter().partition_map(std::convert::identity)
    }
}

/// Each of a pair of collections extended with its side of the `Either`s,
/// in order.
impl<L, R, A, B> ParallelExtend<Either<L, R>> for (A, B)
where
    L: Send,
    R: Send,
    A: Send + ParallelExtend<L>,
    B: Send + ParallelExtend<R>,
{
    fn par_extend<I>(&mut self, iter: I)
    where
        I: IntoParallelIterator<Item = Either<L, R>>,
    {
        let (lefts, rights) = either_sides(iter.into_par_iter());
        self.0.par_extend(joined(lefts));
        self.1.par_extend(joined(rights));
    }
}

/// Whichever collection it holds, extended (rayon's `Either` extend).
impl<L, R, T> ParallelExtend<T> for Either<L, R>
where
    L: ParallelExtend<T>,
    R: ParallelExtend<T>,
    T: Send,
{
    fn par_extend<I>(&mut self, iter: I)
    where
        I: IntoParallelIterator<Item = T>,
    {
        match self {
            Either::Left(left) => left.par_extend(iter),
            Either::Right(right) => right.par_extend(iter),
        }
    }
}

/// One side's `Vec`s as one `Vec`.
fn joined<T: Send>(mut side: LinkedList<Vec<T>>) -> Vec<T> {
    if side.len() == 1 {
        return side.pop_front().unwrap_or_default();
    }
    let mut all = Vec::new();
    append_pieces(&mut all, side);
    all
}

/// Either of two parallel iterators with the same items runs as the one it
/// holds (rayon's `Either` iterator): for a loop whose source is chosen at
/// run time. Indexed when both are.
///
/// ```
/// use weft::iter::Either;
/// use weft::prelude::*;
/// let pick = |evens: bool| {
///     if evens {
///         Either::Left((0..10u32).into_par_iter().filter(|x| x % 2 == 0))
///     } else {
///         Either::Right((0..10u32).into_par_iter().filter(|x| x % 2 == 1))
///     }
/// };
/// assert_eq!(pick(true).sum::<u32>(), 20);
/// assert_eq!(pick(false).collect::<Vec<_>>(), [1, 3, 5, 7, 9]);
/// ```
impl<L, R> ParallelIterator for Either<L, R>
where
    L: ParallelIterator,
    R: ParallelIterator<Item = L::Item>,
{
    type Item = L::Item;
    type Producer<'a>
        = ChainProducer<L::Producer<'a>, R::Producer<'a>>
    where
        Self: 'a;
    type Seq = Either<L::Seq, R::Seq>;
    fn producer(&mut self) -> Self::Producer<'_> {
        match self {
            Either::Left(left) => ChainProducer::first(left.producer()),
            Either::Right(right) => ChainProducer::second(right.producer()),
        }
    }
    fn into_seq(self) -> Self::Seq {
        match self {
            Either::Left(left) => Either::Left(left.into_seq()),
            Either::Right(right) => Either::Right(right.into_seq()),
        }
    }
    fn opt_len(&self) -> Option<usize> {
        match self {
            Either::Left(left) => left.opt_len(),
            Either::Right(right) => right.opt_len(),
        }
    }
}

impl<L, R> IndexedParallelIterator for Either<L, R>
where
    L: IndexedParallelIterator,
    R: IndexedParallelIterator<Item = L::Item>,
{
    fn len(&self) -> usize {
        match self {
            Either::Left(left) => left.len(),
            Either::Right(right) => right.len(),
        }
    }
}

/// Either of two sequential iterators with the same items (what a
/// parallel `Either` runs as where a `flat_map`'s inner iterator folds
/// whole).
impl<L, R> Iterator for Either<L, R>
where
    L: Iterator,
    R: Iterator<Item = L::Item>,
{
    type Item = L::Item;
    fn next(&mut self) -> Option<L::Item> {
        match self {
            Either::Left(left) => left.next(),
            Either::Right(right) => right.next(),
        }
    }
    fn size_hint(&self) -> (usize, Option<usize>) {
        match self {
            Either::Left(left) => left.size_hint(),
            Either::Right(right) => right.size_hint(),
        }
    }
    /// Through the side's own `fold`: its tightest loop, not one `match`
    /// an item.
    fn fold<B, G>(self, init: B, fold: G) -> B
    where
        G: FnMut(B, L::Item) -> B,
    {
        match self {
            Either::Left(left) => left.fold(init, fold),
            Either::Right(right) => right.fold(init, fold),
        }
    }
}
