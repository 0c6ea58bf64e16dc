//! Collecting into collections, in the input's order: [`FromParallelIterator`]
//! and [`ParallelExtend`].
//!
//! An iterator that knows its length (`opt_len`: ranges, slices, `map`,
//! `zip`...) is collected into a `Vec` by writing each piece straight into
//! its place in the output. One that does not (`filter`) collects each
//! piece into a `Vec` of its own, and the pieces are joined, in order, once
//! at the end: one copy of each item, by the pool's workers together when
//! the output is large. Other collections take each piece's `Vec` in turn;
//! `Option` and `Result` stop at the first `None` or `Err`, and pairs of
//! collections (from pairs or [`Either`](super::Either)s) live in
//! `partition.rs`.

use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet, BinaryHeap, HashMap, HashSet, LinkedList, VecDeque};
use std::ffi::{OsStr, OsString};
use std::hash::{BuildHasher, Hash};
use std::mem::{self, MaybeUninit};
use std::rc::Rc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use super::plumbing::{drive, keep, Consumer, Producer};
use super::{IndexedParallelIterator, IntoParallelIterator, ParallelIterator, ParallelSliceMut};

/// Building a collection from a parallel iterator (rayon's name): what
/// [`ParallelIterator::collect`] calls.
pub trait FromParallelIterator<T: Send>: Sized {
    /// Builds `Self` from `iter`'s items, in order.
    fn from_par_iter<I>(iter: I) -> Self
    where
        I: IntoParallelIterator<Item = T>;
}

/// Extending a collection with a parallel iterator's items, in order.
pub trait ParallelExtend<T: Send> {
    /// Appends `iter`'s items.
    fn par_extend<I>(&mut self, iter: I)
    where
        I: IntoParallelIterator<Item = T>;
}

impl<T: Send> FromParallelIterator<T> for Vec<T> {
    fn from_par_iter<I>(iter: I) -> Self
    where
        I: IntoParallelIterator<Item = T>,
    {
        let mut vec = Vec::new();
        vec.par_extend(iter);
        vec
    }
}

impl<T: Send> ParallelExtend<T> for Vec<T> {
    fn par_extend<I>(&mut self, iter: I)
    where
        I: IntoParallelIterator<Item = T>,
    {
        let mut iter = iter.into_par_iter();
        match iter.opt_len() {
            Some(len) => collect_exact(&mut iter, len, self),
            None => {
                let mut pieces = collect_pieces(&mut iter);
                if self.is_empty() && pieces.len() == 1 {
                    // A `collect`: the one piece becomes the output, uncopied.
                    *self = pieces.pop_front().unwrap_or_default();
                    return;
                }
                append_pieces(self, pieces);
            }
        }
    }
}

/// Bytes of output under which the pieces are joined on the calling
/// thread: one block of the parallel copy, about 5 us of `memcpy` with
/// the page faults of fresh room. Under it a loop would run alone anyway.
const PARALLEL_JOIN_MIN_BYTES: usize = 64 << 10;

/// Moves every item of `pieces`, in order, to the end of `vec`: one copy
/// of each, into room reserved once. A large output is copied in blocks
/// by a parallel loop, so the pool's workers share the copy and the first
/// touch of the new room, which the caller would otherwise do alone after
/// the loop that made the pieces.
pub(crate) fn append_pieces<T: Send>(vec: &mut Vec<T>, pieces: LinkedList<Vec<T>>) {
    let total: usize = pieces.iter().map(Vec::len).sum();
    vec.reserve(total);
    let size = mem::size_of::<T>();
    if size == 0 || total * size < PARALLEL_JOIN_MIN_BYTES {
        for mut piece in pieces {
            vec.append(&mut piece);
        }
        return;
    }
    // Where each piece's items start in the output, and where they are.
    let mut sources = Vec::with_capacity(pieces.len());
    let mut at = 0;
    for piece in &pieces {
        sources.push((at, Source(piece.as_ptr())));
        at += piece.len();
    }
    // Items of a block; one where an item alone is over the block's bytes.
    // The chunks and `first` below must use this same count: with a block
    // of 0 items every chunk would copy the first item.
    let block = (PARALLEL_JOIN_MIN_BYTES / size).max(1);
    let start = vec.len();
    let room = &mut vec.spare_capacity_mut()[..total];
    room.par_chunks_mut(block)
        .enumerate()
        .for_each(|(index, out)| {
            let first = index * block;
            // The last piece that starts at or before `first`.
            let mut piece = sources.partition_point(|&(at, _)| at <= first) - 1;
            let mut done = 0;
            while done < out.len() {
                let (piece_at, Source(items)) = sources[piece];
                let piece_end = sources.get(piece + 1).map_or(total, |&(at, _)| at);
                let from = first + done - piece_at;
                let n = (piece_end - piece_at - from).min(out.len() - done);
                // SAFETY: `from..from + n` lies inside the piece (its items
                // are `piece_end - piece_at`), and `out[done..done + n]` inside
                // this block; blocks are disjoint and each output index maps
                // to one item, so each item is copied exactly once, into
                // room nothing else reads or writes until the loop is over.
                unsafe {
                    std::ptr::copy_nonoverlapping(
                        items.add(from),
                        out.as_mut_ptr().add(done).cast::<T>(),
                        n,
                    );
                }
                done += n;
                piece += 1;
            }
        });
    // SAFETY: the loop above wrote all `total` slots after `start` (the
    // blocks cover them), and the items now live there alone: their pieces
    // are emptied below without dropping them. Had the loop panicked, the
    // length would stay as it was and the pieces would still own, and drop,
    // every item.
    unsafe { vec.set_len(start + total) };
    for mut piece in pieces {
        // SAFETY: every item of the piece was moved out above; what is left
        // is its room, freed when the piece drops.
        unsafe { piece.set_len(0) };
    }
}

/// A piece's first item, read by the block that copies it.
struct Source<T>(*const T);

// SAFETY: blocks read disjoint items of the pieces, each once, and move
// them (the items are `Send`); nothing writes the pieces meanwhile.
unsafe impl<T: Send> Send for Source<T> {}
// SAFETY: as for `Send`.
unsafe impl<T: Send> Sync for Source<T> {}

/// Every piece's items in a `Vec` of their own, the pieces in order.
pub(crate) fn collect_pieces<I: ParallelIterator>(iter: &mut I) -> LinkedList<Vec<I::Item>> {
    iter.drive_with(&Pieces)
}

/// Every item of `producer`'s pieces in a `Vec` per piece, in order.
pub(crate) fn collect_pieces_of<P: Producer>(producer: P) -> LinkedList<Vec<P::Item>>
where
    P::Item: Send,
{
    drive(producer, &Pieces)
}

/// The consumer of [`collect_pieces`]: a `Vec` a piece, in a list.
struct Pieces;

impl<T: Send> Consumer<T> for Pieces {
    type Result = LinkedList<Vec<T>>;
    fn fold<It: Iterator<Item = T>>(&self, _offset: usize, items: It) -> Self::Result {
        let piece = pushed_onto(Vec::new(), items);
        let mut list = LinkedList::new();
        if !piece.is_empty() {
            list.push_back(piece);
        }
        list
    }
    fn reduce(&self, mut left: Self::Result, mut right: Self::Result) -> Self::Result {
        left.append(&mut right);
        left
    }
    fn fold_more<It: Iterator<Item = T>>(
        &self,
        mut left: Self::Result,
        offset: usize,
        items: It,
    ) -> Self::Result {
        match left.back_mut() {
            Some(last) => {
                *last = pushed_onto(mem::take(last), items);
                left
            }
            None => self.fold(offset, items),
        }
    }
}

/// `piece` with `items` pushed onto its end. The `Vec` is a local moved in
/// and out, and the items are pushed from the iterator's own `for_each`:
/// with `extend` on the list's `Vec` instead, filter + collect's leaf loop
/// kept the `Vec`'s length in memory and took 1.07x the samples of this
/// one (docs/PARALLEL.md, "Session 28").
fn pushed_onto<T>(mut piece: Vec<T>, items: impl Iterator<Item = T>) -> Vec<T> {
    // The least the iterator promises, reserved once: an exact one (a
    // `collect_vec_list` of a range) grows no more.
    piece.reserve(items.size_hint().0);
    items.for_each(|item| piece.push(item));
    piece
}

/// Writes exactly `len` items into `vec`'s spare room, each piece into its
/// own place, then makes them part of `vec`.
fn collect_exact<I: ParallelIterator>(iter: &mut I, len: usize, vec: &mut Vec<I::Item>) {
    vec.reserve(len);
    let start = vec.len();
    let spare = &mut vec.spare_capacity_mut()[..len];
    let target = Target(spare.as_mut_ptr());
    let written = drive(iter.producer(), &Exact { target, len });
    assert_eq!(
        (written.start, written.len),
        (0, len),
        "an indexed parallel iterator yielded other than its length"
    );
    mem::forget(written);
    // SAFETY: the `len` slots after `start` were all written (the pieces
    // merged into one covering them), and nothing else owns them now.
    unsafe { vec.set_len(start + len) };
}

/// The output's first slot, shared by the pieces, each writing its own.
struct Target<T>(*mut MaybeUninit<T>);

// By hand: derived ones would ask `T: Copy`.
impl<T> Clone for Target<T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T> Copy for Target<T> {}

// SAFETY: pieces write disjoint slots (their own base indexes), so sharing
// the pointer shares no slot; the items themselves are `Send`.
unsafe impl<T: Send> Send for Target<T> {}
// SAFETY: as for `Send`.
unsafe impl<T: Send> Sync for Target<T> {}

struct Exact<T> {
    target: Target<T>,
    len: usize,
}

/// Slots `start..start + len` of the output, written: dropped (with their
/// items) unless merged or handed over, so a panic leaks nothing.
struct Written<T> {
    target: Target<T>,
    start: usize,
    len: usize,
}

impl<T> Drop for Written<T> {
    fn drop(&mut self) {
        // As one slice, whose drop glue goes on with the other items if one
        // item's drop panics (a loop here would leak them).
        // SAFETY: these slots were written by this piece and are owned by
        // it alone until merged (which forgets the parts); `MaybeUninit<T>`
        // has `T`'s layout.
        unsafe {
            let first = self.target.0.add(self.start).cast::<T>();
            std::ptr::drop_in_place(std::ptr::slice_from_raw_parts_mut(first, self.len));
        }
    }
}

impl<T: Send> Consumer<T> for Exact<T> {
    type Result = Written<T>;
    fn fold<It: Iterator<Item = T>>(&self, offset: usize, items: It) -> Written<T> {
        let mut written = Written {
            target: self.target,
            start: offset,
            len: 0,
        };
        // The iterator's own `for_each`: a `rev` of a range or a slice reads
        // backwards in it, where `next` splits an item off at a time.
        items.for_each(|item| {
            let index = offset + written.len;
            assert!(
                index < self.len,
                "an indexed parallel iterator yielded more than its length"
            );
            // SAFETY: `index` is inside the output and in this piece's own
            // range (pieces' base indexes are disjoint), written once.
            unsafe { (*self.target.0.add(index)).write(item) };
            written.len += 1;
        });
        written
    }
    fn reduce(&self, left: Written<T>, right: Written<T>) -> Written<T> {
        if left.start + left.len == right.start {
            let merged = Written {
                target: left.target,
                start: left.start,
                len: left.len + right.len,
            };
            mem::forget(left);
            mem::forget(right);
            merged
        } else {
            // A gap: a piece yielded fewer items than its length. Both are
            // dropped with their items; the length check then fails.
            drop(right);
            left
        }
    }
}

/// Every item of `iter`, in order: a `Vec` per piece the driver folded.
fn pieces<I: IntoParallelIterator>(iter: I) -> impl Iterator<Item = I::Item> {
    collect_pieces(&mut iter.into_par_iter())
        .into_iter()
        .flatten()
}

/// Collections built from the items in order, each piece's items
/// gathered in a `Vec` of its own, then moved into the collection in
/// order (no `Vec` of them all is made).
macro_rules! through_pieces {
    ($($(#[$meta:meta])* [$($generics:tt)*] $collection:ty, $item:ty;)*) => {$(
        $(#[$meta])*
        impl<$($generics)*> FromParallelIterator<$item> for $collection {
            fn from_par_iter<I>(iter: I) -> Self
            where
                I: IntoParallelIterator<Item = $item>,
            {
                pieces(iter).collect()
            }
        }

        $(#[$meta])*
        impl<$($generics)*> ParallelExtend<$item> for $collection {
            fn par_extend<I>(&mut self, iter: I)
            where
                I: IntoParallelIterator<Item = $item>,
            {
                self.extend(pieces(iter));
            }
        }
    )*};
}

through_pieces! {
    [K: Eq + Hash + Send, V: Send, S: BuildHasher + Default + Send] HashMap<K, V, S>, (K, V);
    [K: Ord + Send, V: Send] BTreeMap<K, V>, (K, V);
    [T: Eq + Hash + Send, S: BuildHasher + Default + Send] HashSet<T, S>, T;
    [T: Ord + Send] BTreeSet<T>, T;
    [T: Ord + Send] BinaryHeap<T>, T;
    [T: Send] VecDeque<T>, T;
    [T: Send] LinkedList<T>, T;
    [] String, char;
    ['a] String, &'a char;
    [] String, String;
    ['a] String, &'a str;
    [] String, Box<str>;
    ['a] String, Cow<'a, str>;
    ['a] OsString, &'a OsStr;
    [] OsString, OsString;
    ['a] OsString, Cow<'a, OsStr>;
}

/// Boxed strings from what a `String` collects.
macro_rules! boxed_str {
    ($([$($generics:tt)*] $item:ty;)*) => {$(
        impl<$($generics)*> FromParallelIterator<$item> for Box<str> {
            fn from_par_iter<I>(iter: I) -> Self
            where
                I: IntoParallelIterator<Item = $item>,
            {
                String::from_par_iter(iter).into_boxed_str()
            }
        }
    )*};
}

boxed_str! {
    [] char;
    ['a] &'a char;
    [] String;
    ['a] &'a str;
    [] Box<str>;
    ['a] Cow<'a, str>;
}

/// Shared slices, from a `Vec` collected in order.
macro_rules! from_vec {
    ($($slice:ty;)*) => {$(
        impl<T: Send> FromParallelIterator<T> for $slice {
            fn from_par_iter<I>(iter: I) -> Self
            where
                I: IntoParallelIterator<Item = T>,
            {
                Vec::from_par_iter(iter).into()
            }
        }
    )*};
}

from_vec! {
    Box<[T]>;
    Rc<[T]>;
    Arc<[T]>;
}

/// Collections extended with copies of referenced items (rayon's
/// `ParallelExtend<&T>`), as std's `Extend<&T>`.
macro_rules! extend_copied {
    ($([$($generics:tt)*] $collection:ty;)*) => {$(
        impl<'a, T, $($generics)*> ParallelExtend<&'a T> for $collection
        where
            T: Copy + Send + Sync + 'a,
            $collection: ParallelExtend<T>,
        {
            fn par_extend<I>(&mut self, iter: I)
            where
                I: IntoParallelIterator<Item = &'a T>,
            {
                self.par_extend(iter.into_par_iter().copied());
            }
        }
    )*};
}

extend_copied! {
    [] Vec<T>;
    [] VecDeque<T>;
    [] LinkedList<T>;
    [] BinaryHeap<T>;
    [] BTreeSet<T>;
    [S] HashSet<T, S>;
}

/// Maps extended with copies of referenced pairs, as std's
/// `Extend<(&K, &V)>`.
macro_rules! extend_copied_pairs {
    ($([$($generics:tt)*] $map:ty;)*) => {$(
        impl<'a, K, V, $($generics)*> ParallelExtend<(&'a K, &'a V)> for $map
        where
            K: Copy + Send + Sync + 'a,
            V: Copy + Send + Sync + 'a,
            $map: ParallelExtend<(K, V)>,
        {
            fn par_extend<I>(&mut self, iter: I)
            where
                I: IntoParallelIterator<Item = (&'a K, &'a V)>,
            {
                self.par_extend(iter.into_par_iter().map(|(&key, &value)| (key, value)));
            }
        }
    )*};
}

extend_copied_pairs! {
    [] BTreeMap<K, V>;
    [S] HashMap<K, V, S>;
}

/// `Cow::Owned` of what the owned form collects (rayon's and std's
/// `Cow` collect).
impl<'a, C, T> FromParallelIterator<T> for Cow<'a, C>
where
    C: ToOwned + ?Sized,
    C::Owned: FromParallelIterator<T>,
    T: Send,
{
    fn from_par_iter<I>(iter: I) -> Self
    where
        I: IntoParallelIterator<Item = T>,
    {
        Cow::Owned(C::Owned::from_par_iter(iter))
    }
}

/// `Some` of the collection of the `Some`s' values, or `None` if an item
/// is `None` (as std's): once one piece meets a `None`, every piece stops
/// at its next item, and the items not looked at are dropped unused.
impl<C, T> FromParallelIterator<Option<T>> for Option<C>
where
    C: FromParallelIterator<T>,
    T: Send,
{
    fn from_par_iter<I>(iter: I) -> Self
    where
        I: IntoParallelIterator<Item = Option<T>>,
    {
        let missing = AtomicBool::new(false);
        let collection = iter
            .into_par_iter()
            .inspect(|item| {
                if item.is_none() {
                    missing.store(true, Ordering::Relaxed);
                }
            })
            .while_some()
            .collect();
        // The loop's joins ordered the flag's store before this load.
        (!missing.into_inner()).then_some(collection)
    }
}

/// `Ok` of the collection of the `Ok`s' values, or an `Err` of an item (as
/// std's): once one piece meets an `Err`, every piece stops at its next
/// item, and the items not looked at are dropped unused. Which `Err` is
/// returned, of several, depends on timing.
impl<C, T, E> FromParallelIterator<Result<T, E>> for Result<C, E>
where
    C: FromParallelIterator<T>,
    T: Send,
    E: Send,
{
    fn from_par_iter<I>(iter: I) -> Self
    where
        I: IntoParallelIterator<Item = Result<T, E>>,
    {
        let error = Mutex::new(None);
        let collection = iter
            .into_par_iter()
            .map(|item| match item {
                Ok(value) => Some(value),
                Err(err) => {
                    let mut first = error.lock().unwrap_or_else(PoisonError::into_inner);
                    // Later errors are dropped once the first is kept.
                    first.get_or_insert(err);
                    None
                }
            })
            .while_some()
            .collect();
        match error.into_inner().unwrap_or_else(PoisonError::into_inner) {
            Some(err) => keep(Err(err), collection),
            None => Ok(collection),
        }
    }
}

/// `()` collects nothing: for `collect::<()>()` after side effects, as std.
impl FromParallelIterator<()> for () {
    fn from_par_iter<I>(iter: I) -> Self
    where
        I: IntoParallelIterator<Item = ()>,
    {
        let mut iter = iter.into_par_iter();
        iter.drive_with(&super::consumers::ForEach(&|()| ()));
    }
}

/// `()` extended by nothing: runs the loop for its side effects.
impl ParallelExtend<()> for () {
    fn par_extend<I>(&mut self, iter: I)
    where
        I: IntoParallelIterator<Item = ()>,
    {
        <()>::from_par_iter(iter);
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use std::panic::{self, AssertUnwindSafe};
    use std::sync::atomic::AtomicUsize;

    use super::{Consumer, Exact, Target};
    use crate::iter::sources::tests::{assert_each_dropped_once, bombs};

    #[test]
    fn written_items_are_all_dropped_when_one_drop_panics() {
        // A piece's output dropped unmerged (another piece panicked).
        let drops: Vec<AtomicUsize> = (0..8).map(|_| AtomicUsize::new(0)).collect();
        let mut out = Vec::with_capacity(8);
        let exact = Exact {
            target: Target(out.spare_capacity_mut().as_mut_ptr()),
            len: 8,
        };
        let written = exact.fold(0, bombs(&drops));
        let ran = panic::catch_unwind(AssertUnwindSafe(|| drop(written)));
        assert!(ran.is_err(), "item 3's panic");
        assert_each_dropped_once(&drops);
    }
}
