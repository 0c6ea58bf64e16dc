//! Collecting into collections, in the input's order: [`FromParallelIterator`]
//! and [`ParallelExtend`].
//!
//! An iterator that knows its length (`opt_len`: ranges, slices, `map`,
//! `zip`...) is collected into a `Vec` by writing each piece straight into
//! its place in the output. One that does not (`filter`) collects each
//! piece into blocks of [`BLOCK_BYTES`] at most, and the blocks are joined,
//! in order, once at the end: one copy of each item, by the pool's workers
//! together when the output is large. Other collections take the blocks'
//! items in turn;
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
                let mut pieces = collect_blocks(&mut iter);
                if self.is_empty() && pieces.len() == 1 {
                    // A `collect`: the one block becomes the output, uncopied.
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

/// Every piece's items in a `Vec` of their own, the pieces in order
/// (`collect_vec_list`, whose `Vec`s are what its caller keeps).
pub(crate) fn collect_pieces<I: ParallelIterator>(iter: &mut I) -> LinkedList<Vec<I::Item>> {
    iter.drive_with(&PIECES)
}

/// Every item of `iter`, in order, in blocks of at most [`BLOCK_BYTES`]
/// (one `Vec` when all fit in one): for a caller that moves the items on
/// (into one `Vec`, or another collection).
pub(crate) fn collect_blocks<I: ParallelIterator>(iter: &mut I) -> LinkedList<Vec<I::Item>> {
    iter.drive_with(&BLOCKS)
}

/// Every item of `producer`'s pieces, in order, in blocks as
/// [`collect_blocks`] makes them.
pub(crate) fn collect_blocks_of<P: Producer>(producer: P) -> LinkedList<Vec<P::Item>>
where
    P::Item: Send,
{
    drive(producer, &BLOCKS)
}

/// The consumer of [`collect_pieces`] (`IN_BLOCKS` false: a `Vec` a
/// piece) and of [`collect_blocks`] (true: a piece's items pushed onto the
/// list's last block, a new block begun each time one is full).
struct Gather<const IN_BLOCKS: bool>;

/// [`collect_pieces`]' consumer.
const PIECES: Gather<false> = Gather;
/// [`collect_blocks`]' consumer.
const BLOCKS: Gather<true> = Gather;

impl<T: Send, const IN_BLOCKS: bool> Consumer<T> for Gather<IN_BLOCKS> {
    type Result = LinkedList<Vec<T>>;
    fn fold<It: Iterator<Item = T>>(&self, offset: usize, items: It) -> Self::Result {
        self.fold_more(LinkedList::new(), offset, items)
    }
    fn reduce(&self, mut left: Self::Result, mut right: Self::Result) -> Self::Result {
        left.append(&mut right);
        left
    }
    fn fold_more<It: Iterator<Item = T>>(
        &self,
        mut left: Self::Result,
        _offset: usize,
        items: It,
    ) -> Self::Result {
        if IN_BLOCKS {
            pushed_in_blocks(&mut left, items);
        } else {
            let piece = pushed_onto(left.pop_back().unwrap_or_default(), items);
            if !piece.is_empty() {
                left.push_back(piece);
            }
        }
        left
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

/// The most a block of [`collect_blocks`] holds: under glibc's smallest threshold
/// for a block of its own from the system (128 KiB), so that blocks come
/// from the allocator's free lists, and all of one size, so that a block
/// freed by one `collect` is what the next one takes. A piece's `Vec`
/// grown by doubling instead ends at a size that follows where the loop
/// happened to split: sizes that change from call to call, which in a
/// 2-worker pool left filter + collect faulting in fresh pages for
/// several calls after its first (docs/PARALLEL.md, "Session 34"), and
/// each doubling copies what the `Vec` held.
const BLOCK_BYTES: usize = 64 << 10;

/// Items of `T` in a block: at least one, however large an item.
fn block_items<T>() -> usize {
    (BLOCK_BYTES / mem::size_of::<T>().max(1)).max(1)
}

/// `items` pushed onto the end of `list`'s last block and the blocks
/// after it. A first block grows by doubling up to a full block (a loop
/// that keeps a few items allocates a few), every later one is made full.
/// The block being filled is a local moved in and out, as in
/// [`pushed_onto`], so that its length stays in a register.
fn pushed_in_blocks<T>(list: &mut LinkedList<Vec<T>>, items: impl Iterator<Item = T>) {
    let mut block = list.pop_back().unwrap_or_default();
    if block.capacity() == 0 {
        block.reserve(items.size_hint().0.min(block_items::<T>()));
    }
    items.for_each(|item| {
        if block.len() == block.capacity() {
            block = next_block(list, mem::take(&mut block));
        }
        block.push(item);
    });
    if !block.is_empty() {
        list.push_back(block);
    }
}

/// Room for one more item after `block` filled up: `block` grown (by
/// doubling, never past a full block), or a new full-size block, with
/// `block` left at the end of `list`. (`Vec::capacity` of a zero-sized
/// item is `usize::MAX`: such a block never fills.)
#[cold]
#[inline(never)]
fn next_block<T>(list: &mut LinkedList<Vec<T>>, mut block: Vec<T>) -> Vec<T> {
    let full = block_items::<T>();
    if block.capacity() < full {
        block.reserve_exact(block.capacity().max(4).min(full - block.capacity()));
        block
    } else {
        list.push_back(block);
        Vec::with_capacity(full)
    }
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

/// Every item of `iter`, in order, gathered in blocks.
fn pieces<I: IntoParallelIterator>(iter: I) -> impl Iterator<Item = I::Item> {
    collect_blocks(&mut iter.into_par_iter())
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

    use std::collections::LinkedList;

    use super::{block_items, pushed_in_blocks, Consumer, Exact, Target, BLOCKS, BLOCK_BYTES};
    use crate::iter::sources::tests::{assert_each_dropped_once, bombs};

    /// An item of a sixteenth of a block: blocks of 16 items.
    type Wide = [u64; BLOCK_BYTES / 128];

    fn wide(value: u64) -> Wide {
        [value; BLOCK_BYTES / 128]
    }

    #[test]
    fn blocks_keep_every_item_in_order_and_fill_before_the_next_begins() {
        assert_eq!(block_items::<Wide>(), 16);
        // A piece folded in three chunks, the second starting mid-block.
        let blocks = BLOCKS.fold(0, (0..5).map(wide));
        let blocks = BLOCKS.fold_more(blocks, 5, (5..40).map(wide));
        let blocks = BLOCKS.fold_more(blocks, 40, (40..41).map(wide));
        let lens: Vec<usize> = blocks.iter().map(Vec::len).collect();
        assert_eq!(lens, [16, 16, 9]);
        assert!(blocks.iter().all(|block| block.capacity() <= 16));
        let values: Vec<u64> = blocks.into_iter().flatten().map(|item| item[0]).collect();
        assert_eq!(values, (0..41).collect::<Vec<_>>());
    }

    #[test]
    fn a_first_block_grows_only_as_far_as_its_items_need() {
        // What a loop that keeps three items allocates: room for a few,
        // not a block (the iterator promises nothing: a filter).
        let blocks = BLOCKS.fold(0, (0..3u64).filter(|_| true));
        assert_eq!(blocks.len(), 1);
        let block = blocks.front().expect("one block");
        assert_eq!(block.as_slice(), [0, 1, 2]);
        assert!(block.capacity() < block_items::<u64>());
    }

    #[test]
    #[cfg_attr(
        miri,
        ignore = "no unsafe code here, and 64 KiB items take Miri most of a minute: covered natively"
    )]
    fn items_of_a_block_or_more_take_a_block_each_and_zero_sized_ones_one_block() {
        let mut list = LinkedList::new();
        pushed_in_blocks(&mut list, (0..3u8).map(|i| [i; BLOCK_BYTES + 1]));
        let firsts: Vec<u8> = list.iter().map(|block| block[0][0]).collect();
        assert_eq!(firsts, [0, 1, 2]);
        let mut units = LinkedList::new();
        pushed_in_blocks(&mut units, std::iter::repeat_n((), BLOCK_BYTES + 1));
        assert_eq!(units.len(), 1);
        assert_eq!(units.front().map(Vec::len), Some(BLOCK_BYTES + 1));
    }

    #[test]
    fn a_panic_midway_drops_every_item_pushed_once() {
        struct Counted<'a>(&'a AtomicUsize, #[allow(dead_code)] Wide);
        impl Drop for Counted<'_> {
            fn drop(&mut self) {
                self.0.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            }
        }
        let drops: Vec<AtomicUsize> = (0..40).map(|_| AtomicUsize::new(0)).collect();
        let blocks = BLOCKS.fold(0, drops[..20].iter().map(|d| Counted(d, wide(0))));
        let ran = panic::catch_unwind(AssertUnwindSafe(|| {
            BLOCKS.fold_more(
                blocks,
                20,
                drops[20..].iter().map(|d| {
                    if std::ptr::eq(d, &drops[35]) {
                        panic!("item 35 fails");
                    }
                    Counted(d, wide(0))
                }),
            )
        }));
        assert!(ran.is_err(), "item 35's panic");
        for (id, count) in drops.iter().enumerate() {
            let expected = usize::from(id < 35);
            assert_eq!(
                count.load(std::sync::atomic::Ordering::SeqCst),
                expected,
                "item {id}"
            );
        }
    }

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
