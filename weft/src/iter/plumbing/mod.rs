//! How a parallel iterator runs: [`Producer`]s that split, and the one
//! driver that decides where to split and in which order the pieces'
//! results are combined.
//!
//! A producer is a piece of the input that can be cut in two at an index
//! and turned into a plain iterator. Every source (a range, a slice, a
//! `Vec`) is one, and every adapter wraps its base's producer (a `map`
//! producer splits where its base splits and maps what its base yields).
//! A consumer (`sum`, `collect`, `find_any`...) says how to fold one
//! piece sequentially and how to combine two adjacent pieces' results,
//! left then right, so any split tree gives the sequential answer for
//! associative operations.
//!
//! # Where it splits (the splitting rule, here and nowhere else)
//!
//! No grain size is asked of the user. A piece splits while it has a *split
//! budget* left; the budget starts at the pool's worker count and halves at
//! every split, so a loop starts as about one piece per worker, at the cost
//! of one `join` per split (a few nanoseconds when nobody takes the other
//! half, weft's join stack). A piece that *migrated* (its half of a `join`
//! was taken by another worker: `FnContext::migrated`) found an idle worker,
//! which is evidence that more splitting pays: its budget is reset to the
//! worker count. So a balanced loop splits about `workers * log2(workers)`
//! times, whatever its length; an unbalanced one keeps splitting where
//! thieves keep finding work; a loop over a few slow elements splits down to
//! single elements, one per worker. Pieces never split below `with_min_len`
//! nor stay above `with_max_len`. The halves of a loop of few items (under
//! `HANDOFF_MIN_ITEMS`) go on the worker's local queue rather than its join
//! stack (`join_context_with`, `Place::LocalQueue`): each item may block its
//! thread, and a thief then takes a half without asking an owner who could
//! not answer. Other pieces leave their halves on the join stack as `join`
//! does (`Place::JoinStack`): a loop's first split, when its task has nothing
//! else pending, is the task's outermost half and goes to the local queue at
//! once if a thief may come for it (sched/fork.rs), so that a helper need not
//! wait for the owner's next chunk to end to be handed it; the others are
//! handed to searchers between chunks (below).
//!
//! A piece that stops splitting (a *leaf*) is folded a chunk at a time,
//! each chunk sized to take a few microseconds (`CHUNK_TARGET`), and
//! between two chunks it offers work: it shares the oldest of the halves
//! on its worker's join stack when a searcher asked for one or workers are
//! searching (so that a searcher neither waits a chunk for its answer nor
//! takes the half by force), and when workers search with nothing to take,
//! it splits its rest as above, if the rate of its last chunk says each
//! half of the rest is worth a steal (`rest_worth_splitting`). So an unbalanced loop rebalances on demand,
//! and a balanced one pays a clock read per chunk.
//!
//! A leaf whose producer keeps a state per piece (`fold`'s accumulator,
//! `map_init`'s scratch value), or whose cuts run the user's code
//! (`split`, `walk_tree`), is folded in one go instead, as rayon folds
//! every leaf (`Producer::folds_leaves_whole`): each chunk would make a
//! state of its own for the consumer to merge, or call the user's
//! splitter again. Where a leaf is folded a chunk at a time,
//! a consumer that builds a value (a `collect`'s `Vec`) goes on with the
//! value of the chunk before (`Consumer::fold_more`) rather than building
//! one a chunk.
//!
//! # On a worker
//!
//! A long loop called on a worker (of at least `HANDOFF_MIN_ITEMS` items)
//! first runs alone on it, a chunk at a time, for `ALONE_FOR`: a loop that
//! ends by then (a thousand cheap items) never splits and never wakes or
//! pays a thief, so it costs the sequential loop plus a clock read a
//! chunk. The alone phase ends early once a chunk of at least
//! `RATE_CHUNK` items shows that the rest would take the *split line*
//! (`rest_is_long`: twice `ALONE_FOR` at first, then what the thread
//! learns from its own splits near it, split_line.rs; a chunk of fewer
//! than `SURE_CHUNK` items must show
//! twice that again, or the loop times one more chunk of `SURE_CHUNK`
//! items first: one short chunk's time jitters): waiting then only keeps
//! the other workers out of a loop that is sure to need them. A loop
//! whose rate says, as its alone time runs out, that its rest is too
//! short for a split's halves to be worth a steal finishes alone
//! (`rest_is_short`). The rest of a longer one splits by the rule above,
//! and the pool's searchers linger (`Registry::linger`) so that a helper that
//! finishes its piece is still searching when the next loop splits, not
//! parked. Where the workers fit the cores, the window opens when a long
//! loop's alone phase ends, when such a loop ends with pieces taken, and
//! when a piece that migrated ends, as its helper hands the `join` half
//! back (sched/registry.rs, `linger_after_call`); in a pool of more
//! workers than cores it does not, as after a `join` (searchers kept
//! awake there take the loop's own cores; api/global.rs,
//! `linger_after_worker_loop`). The last
//! matters to a loop that outlasts the window: its helpers finish before
//! its owner, and a window opened only by the owner found them parked (a
//! loop of 4 long items at 2 workers, called again and again, waited 15
//! us a call for a wake-up; docs/PARALLEL.md, "Session 30"). A pool of
//! one worker folds the loop whole: nobody could take a piece of it.
//!
//! The alone phase costs a loop of slow items its first chunk's time (one
//! item) before anyone else starts: 64 items of 1 ms on 8 workers run in
//! 9 rounds rather than 8. So each thread remembers whether the items it
//! timed last, at the start of a loop or of a leaf, were slow (`SLOW_ITEM`
//! each or more: `items_were_slow`), and its next loop then splits at
//! once, as a loop of few items does, where a loop called again and again
//! lands on a thread that has seen its items.
//!
//! With [`deterministic`](super::ParallelIterator::deterministic) the
//! budget ignores migration, leaves fold in one go and never split on
//! demand, and a loop called from outside a pool goes into it whole: the
//! split tree then depends only on the input's length and the worker
//! count, so a floating-point reduction gives the same bits on every run.
//! A loop whose leaves fold whole goes into the pool whole too.
//!
//! # From outside a pool
//!
//! A loop called from a thread that is no worker starts on that thread and
//! hands its rest to the pool, unless the pool has one worker (`outside.rs`,
//! which says how and who takes part).
//!
//! # Blocks
//!
//! A loop behind `by_uniform_blocks` or `by_exponential_blocks` runs as a
//! sequence of blocks (`drive_blocks`): each splits by the rule above as a
//! whole loop would, and the next starts once it has ended, so a search
//! that finds its answer in a block never starts the blocks after it.
//!
//! # Inner loops
//!
//! A `flat_map` whose outer items each give a parallel iterator runs each
//! inner loop through the outer loop's consumer (`InnerLoops`), on the
//! worker that folds its outer item, onto the result of the outer items
//! before it in the same piece: so a few outer items with long inner loops
//! use the whole pool, as a loop called on a worker does. An inner loop
//! starts alone as a long loop does, whatever its length, and at the rate
//! of the inner loops before it in the piece (`Pace`): the outer loop
//! already spreads the outer items over the workers, and a loop of few
//! items splitting at once would pay a join for each outer item, timing a
//! first chunk of one item a clock read. A slow inner loop still ends its
//! alone phase within a chunk sized at that rate. Inner loops fold in one
//! go on a thread outside any pool (the caller's own chunks of the outer
//! loop), in a pool of one worker, and when the outer loop is
//! deterministic. The adapters that take items one at a time (`map`,
//! `filter`, `filter_map`, `inspect`, `update`, `cloned`, `copied`,
//! `flat_map_iter`) pass their consumer down to a `flat_map` below them
//! (`ParallelIterator::NESTS`), and so do `fold` and `fold_with`, whose
//! accumulator runs on across the pieces and inner loops one thread folds
//! one after another (`nested::FoldOnto`); behind any other adapter inner
//! loops fold sequentially, as the items of a piece, and so do a
//! `flat_map`'s inner loops where its base is a `flat_map` too (the
//! base's run in parallel).
//!
//! # Stopping early
//!
//! A consumer may be *full* (`any` found its match, a split panicked):
//! pieces not yet started then fold nothing, and started ones stop at their
//! next item where the consumer checks.

use std::panic::{self, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use clock::{Clock, Nanos};

mod clock;
mod consumer;
mod outside;
mod split_line;

pub(crate) use consumer::Consumer;

/// A piece of a parallel iterator's input: it splits at an index, and
/// becomes a sequential iterator where the driver stops splitting.
///
/// `len` counts the base input's elements, which is the item count for
/// indexed iterators (`map`, `enumerate`, `zip`...) and an upper bound for
/// the others (`filter`).
pub trait Producer: Send + Sized {
    /// What the iterator yields.
    type Item;
    /// The sequential iterator over one piece.
    type IntoIter: Iterator<Item = Self::Item>;

    /// Elements of the base input in this piece; `usize::MAX` for a chain
    /// of more (whose `len` as an indexed iterator panics), which the
    /// driver cuts and folds as any piece, without exact indices past
    /// `usize::MAX`.
    fn len(&self) -> usize;

    /// Whether the piece is empty.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Splits into the elements before `index` and those from it on.
    fn split_at(self, index: usize) -> (Self, Self);

    /// The piece as a sequential iterator.
    fn into_iter(self) -> Self::IntoIter;

    /// The shortest piece worth splitting off (`with_min_len`).
    fn min_len(&self) -> usize {
        1
    }

    /// The longest piece to leave unsplit (`with_max_len`).
    fn max_len(&self) -> usize {
        usize::MAX
    }

    /// Whether the split tree must not depend on timing (`deterministic`).
    fn deterministic(&self) -> bool {
        false
    }

    /// Whether the driver must fold each leaf in one go rather than a
    /// chunk at a time, for one of two reasons. Each piece folded makes a
    /// state of its own (`fold`'s accumulator, `map_init`'s scratch
    /// value): every chunk would make a state for the consumer to merge,
    /// and per chunk of a few microseconds a word count's maps would cost
    /// more than its words. Or cutting a piece runs the user's code
    /// (`split`'s and `walk_tree`'s functions), which a chunk at a time
    /// would call again at every chunk. Such a loop called from outside a
    /// pool goes into the pool whole, as the caller's chunks would be
    /// leaves too.
    fn folds_leaves_whole(&self) -> bool {
        false
    }

    /// Whether the loop runs as a sequence of blocks, one after the other
    /// (`by_uniform_blocks`, `by_exponential_blocks`), and their sizes.
    fn blocks(&self) -> Option<Blocks> {
        None
    }

    /// Folds the piece's items last to first: what `rev` runs. By default
    /// each item is split off the end (a split of the base, under every
    /// adapter above it, per item); a producer that reads backwards folds
    /// its own reversed iterator instead (ranges, slices, and the adapters
    /// that map items one to one above them): a reversed range's sum took
    /// 18x rayon's time the default way (docs/PARALLEL.md, "Session 28").
    fn fold_back<B, F>(self, init: B, mut fold: F) -> B
    where
        F: FnMut(B, Self::Item) -> B,
    {
        let (mut rest, mut folded) = (self, init);
        loop {
            let len = rest.len();
            if len == 0 {
                return folded;
            }
            let (front, last) = rest.split_at(len - 1);
            rest = front;
            if let Some(item) = last.into_iter().next() {
                folded = fold(folded, item);
            }
        }
    }
}

/// The sizes of the blocks a loop runs as, one after the other (see
/// [Blocks](self#blocks)): each block splits as a whole loop does, and the
/// next starts once it has ended, unless the consumer has its answer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Blocks {
    /// Blocks of this many base items, the last possibly shorter.
    Uniform(usize),
    /// A first block of one item per worker, each next one twice as long.
    Exponential,
}

impl Blocks {
    /// The length of the block that starts after `done` items, for a pool
    /// of `workers`.
    fn next_len(self, done: usize, workers: usize) -> usize {
        match self {
            Blocks::Uniform(size) => size.max(1),
            // p, 2p, 4p...: each block as long as all before it, plus p.
            Blocks::Exponential => done.saturating_add(workers.max(1)),
        }
    }
}

/// Returns `kept` once `discarded` is dropped: the part of a loop's input
/// or results that a call drops unused (a skipped prefix, the rest after a
/// match, the match that lost to another). Anything holding items goes
/// through here rather than out of scope after the value returned is
/// built: if a destructor panics then, that value is leaked (rustc drops
/// the locals on the way out, not the value already returned). Here
/// `kept` is still an argument when `discarded`'s drop panics, and the
/// unwinding drops it: every item is dropped once, whatever panics.
pub(crate) fn keep<T, U>(kept: T, discarded: U) -> T {
    drop(discarded);
    kept
}

/// The base index `index` items into a piece that starts at `offset`.
/// Only a chain longer than `usize::MAX` has items past `usize::MAX`, and
/// the pieces that start there all get `usize::MAX`: the offsets keep the
/// pieces' order, which is all `find_first` needs of them, and what needs
/// exact indices (`enumerate`, `collect` into place, `zip`) asks the
/// chain's length first, which panics.
pub(crate) fn at(offset: usize, index: usize) -> usize {
    offset.saturating_add(index)
}

/// Runs `producer` through `consumer`: on the calling worker's pool, or,
/// from a thread outside any pool, with the calling thread working through
/// the loop's first chunks while the global pool is woken for the rest
/// (`Drive::outside_pool`).
pub(crate) fn drive<P, C>(producer: P, consumer: &C) -> C::Result
where
    P: Producer,
    C: Consumer<P::Item>,
{
    if let Some(blocks) = producer.blocks() {
        return drive_blocks(producer, consumer, blocks);
    }
    let drive = Drive::new(consumer);
    // A deterministic loop's pieces must not depend on timing, which the
    // caller's chunks from outside a pool do: it goes into the pool whole.
    // So does a loop whose leaves fold whole (`folds_leaves_whole`): the
    // caller's chunks would each be a leaf, a state or a splitter's call
    // each.
    if producer.deterministic() || producer.folds_leaves_whole() {
        return crate::api::global::in_worker(|| {
            let budget = Budget::new(&producer);
            drive.run(producer, 0, budget, false)
        });
    }
    if crate::api::global::on_worker() {
        return drive.on_worker(producer);
    }
    drive.outside_pool(producer)
}

/// The inner loops of one piece of a `flat_map`'s outer loop, each run
/// through the loop's consumer onto the result of those before it (see
/// [Inner loops](self#inner-loops)).
pub(crate) struct InnerLoops {
    /// Where the alone phase stands across the piece's inner loops.
    pace: Pace,
    workers: usize,
}

impl InnerLoops {
    /// The inner loops of a piece that starts now; `None` where they fold
    /// in one go: on a thread outside any pool, in a pool of one worker,
    /// or when the outer loop is deterministic (`sequential`), so that
    /// timing splits nothing.
    pub(crate) fn new(sequential: bool) -> Option<InnerLoops> {
        if sequential || !crate::api::global::on_worker() {
            return None;
        }
        let workers = crate::current_num_threads();
        (workers > 1).then(|| InnerLoops {
            pace: Pace::start(),
            workers,
        })
    }

    /// Whether an inner loop of `len` items (`None`: unknown) fits the
    /// chunk under way, so that it folds whole with no driver and no clock
    /// read, and as how many items it then counts (an empty one counts
    /// one: its outer item's cost is the chunk's too).
    #[inline]
    pub(crate) fn fits(&self, len: Option<usize>) -> Option<usize> {
        let counted = len?.max(1);
        (counted <= self.pace.wish()).then_some(counted)
    }

    /// After an inner loop that fitted as `counted` items folded whole.
    #[inline]
    pub(crate) fn folded_whole(&mut self, counted: usize) {
        self.pace.loop_ended(counted);
    }

    /// Runs one inner loop (`producer`) through `consumer`, onto `left`.
    pub(crate) fn run<P, C>(
        &mut self,
        producer: P,
        consumer: &C,
        left: Option<C::Result>,
    ) -> C::Result
    where
        P: Producer,
        C: Consumer<P::Item>,
    {
        let pace = &mut self.pace;
        if producer.blocks().is_some() || producer.deterministic() || producer.folds_leaves_whole()
        {
            // The inner loop's own rules apply whole: blocks one after the
            // other, a split tree of its length only, a state per leaf.
            let result = drive(producer, consumer);
            pace.restart();
            return match left {
                None => result,
                Some(left) => consumer.reduce(left, result),
            };
        }
        let len = producer.len();
        if chunk_len(&producer, pace.wish()) == len {
            // Its length was not known before its producer was made, and it
            // fits the chunk under way: no driver, no clock.
            let result = match left {
                None => consumer.fold(0, producer.into_iter()),
                Some(left) => consumer.fold_more(left, 0, producer.into_iter()),
            };
            pace.loop_ended(len.max(1));
            return result;
        }
        let budget = Budget::with_workers(&producer, self.workers);
        Drive::new(consumer).alone_first(producer, Folded(left), budget, pace, true)
    }
}

/// Where a loop's alone phase stands on a worker: its clock, when its
/// last chunk ended, how many items the chunk under way is wished to take
/// and how many it has. The inner loops of a `flat_map`'s piece share
/// one, so that a chunk runs on across them: three cheap items of one
/// outer item, three of the next... make one chunk, with one clock read
/// at its end (a read is tens of nanoseconds where the counter is
/// virtualised), and a long inner loop starts at the rate of those
/// before it.
struct Pace {
    clock: Clock,
    previous: clock::Stamp,
    next: usize,
    /// Items folded in the chunk under way, by inner loops that ended in
    /// it.
    done: usize,
}

impl Pace {
    /// The pace of a loop that starts now, at an unknown rate.
    fn start() -> Pace {
        let clock = Clock::get();
        Pace {
            clock,
            previous: clock.now(),
            next: FIRST_CHUNK,
            done: 0,
        }
    }

    /// How many items the chunk under way may still take.
    #[inline]
    fn wish(&self) -> usize {
        self.next.saturating_sub(self.done).max(1)
    }

    /// After `items` more, where a loop ended within the chunk under way:
    /// the chunk ends if it has its items. Inlined, the chunk's end out of
    /// line: a `flat_map` of short inner loops calls this once an outer
    /// item, and a call there made the compiler reload the inner loop's
    /// vector constants after each one (docs/PARALLEL.md, "Session 34").
    #[inline]
    fn loop_ended(&mut self, items: usize) {
        self.done = self.done.saturating_add(items);
        if self.done >= self.next {
            self.loop_ended_chunk();
        }
    }

    /// [`Pace::loop_ended`]'s end of a chunk.
    #[cold]
    #[inline(never)]
    fn loop_ended_chunk(&mut self) {
        self.chunk_ended(0, self.clock.now());
    }

    /// After a loop whose rate says nothing of the next: its items time
    /// themselves again, from one.
    fn restart(&mut self) {
        *self = Pace::start();
    }

    /// After a chunk that ended at `now` with `items` more than those
    /// already `done`: the next chunk is sized to take about `ALONE_FOR`.
    /// Returns the chunk's items and time.
    fn chunk_ended(&mut self, items: usize, now: clock::Stamp) -> (usize, Nanos) {
        let chunk = self.done.saturating_add(items);
        let took = self.clock.between(self.previous, now);
        self.next = next_chunk(chunk, took, ALONE_FOR);
        self.previous = now;
        self.done = 0;
        (chunk, took)
    }
}

/// Runs `producer` as a sequence of blocks of the sizes `blocks` gives,
/// each in the pool as a whole loop of its own (its own splits, from one
/// piece per worker), the next once the one before has ended; the blocks'
/// results combine left to right. Once the consumer has its answer for
/// what follows (`Consumer::full_from`), the blocks left are dropped
/// unused.
fn drive_blocks<P, C>(mut rest: P, consumer: &C, blocks: Blocks) -> C::Result
where
    P: Producer,
    C: Consumer<P::Item>,
{
    let workers = crate::current_num_threads();
    let mut folded: Option<C::Result> = None;
    let mut done = 0;
    while !rest.is_empty() && !consumer.full_from(done) {
        let len = blocks.next_len(done, workers).min(rest.len());
        let (block, tail) = rest.split_at(len);
        rest = tail;
        let result = crate::api::global::in_worker(|| {
            let drive = Drive::new(consumer);
            let budget = Budget::new(&block);
            drive.run(block, done, budget, false)
        });
        folded = Some(match folded {
            Some(left) => consumer.reduce(left, result),
            None => result,
        });
        done = at(done, len);
    }
    let result = match folded {
        Some(result) => result,
        None => consumer.fold(done, std::iter::empty()),
    };
    keep(result, rest)
}

/// A leaf folds its items a chunk at a time, and between two chunks looks
/// whether idle workers want some of its work (`offer_work`): it shares a
/// join half with searchers, and splits its rest when searchers have
/// nothing to take. Chunks are sized to take about this long: well
/// inside the 20 us a searcher asks before it takes a half by force
/// (sched/worker/search.rs, `ASK_BEFORE_STEALING`), and long enough that the clock
/// reads and the look (tens of nanoseconds) are noise.
const CHUNK_TARGET: Nanos = Nanos::of(Duration::from_micros(4));

/// The first chunk of a leaf whose items' rate is unknown, in items: one,
/// so that a slow item is timed before another is committed to (the next
/// chunk grows up to 64-fold). The leaves of a loop on a worker that
/// timed its items before it split start at that rate instead
/// (`Budget::first_chunk`); the pieces a loop from outside hands to a pool
/// of more than one helper start from one (outside.rs,
/// `run_rest_in_pieces`).
const FIRST_CHUNK: usize = 1;

/// From outside a pool, a loop of at least this many items first runs on
/// the calling thread alone for [`ALONE_FOR`]: one that ends by then
/// never wakes a worker (a wake costs the caller a system call and the
/// woken worker a few microseconds of CPU for nothing). A shorter loop is
/// handed to the pool at once: few items are worth a loop when each is
/// slow, and a slow first item must not delay the others.
const HANDOFF_MIN_ITEMS: usize = 64;

/// Whether `producer` can split in two with neither half under its
/// `with_min_len` (the rule, in one place: a split's, a split on demand's,
/// and which splits split_line.rs judges).
#[inline]
fn halves_fit_min_len<P: Producer>(producer: &P) -> bool {
    producer.len() / 2 >= producer.min_len().max(1)
}

/// An item at least this slow, timed at the start of a loop or a leaf,
/// leaves its thread expecting slow items in its next loop
/// ([`items_were_slow`]): about what a worker woken from its park takes to
/// arrive on these VMs (10-50 us), twice over, so that an item as slow as
/// this weighs more than the wake-up a split at once risks.
const SLOW_ITEM: Nanos = Nanos::of(Duration::from_micros(100));

thread_local! {
    /// Whether the items this thread last timed at the start of a loop, or
    /// of a leaf, took [`SLOW_ITEM`] or more each ([`record_start_rate`]).
    static SLOW_ITEMS_LAST: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Records the rate of the first chunk this thread timed in a loop or a
/// leaf: `chunk` items in `took`.
fn record_start_rate(chunk: usize, took: Nanos) {
    // A product, not a division: every leaf records its first chunk, and a
    // division is tens of cycles (see `next_chunk`).
    let slow = took.0 >= SLOW_ITEM.0.saturating_mul(chunk.max(1) as u64);
    SLOW_ITEMS_LAST.set(slow);
}

/// Whether the items this thread timed last were slow ([`SLOW_ITEM`]).
/// A program calls the same loop again and again, and a loop of slow items
/// loses the time of its first chunk alone before it splits (on a worker)
/// or before it looks at whether its items wait (from outside,
/// outside.rs): so the next loop on this thread splits at once, or looks
/// at its first chunk. A loop of cheap items after slow ones pays a split
/// it did not need once, and its leaves' first chunks set the record
/// back; a thread whose loops are cheap never changes its ways.
fn items_were_slow() -> bool {
    SLOW_ITEMS_LAST.get()
}

/// Whether `producer` is a loop of few items (under [`HANDOFF_MIN_ITEMS`]),
/// each of which may be slow or block its thread: handed over at once from
/// outside a pool, split at once on a worker, its halves on the local
/// queue (the rule, in one place).
fn few_items<P: Producer>(producer: &P) -> bool {
    producer.len() < HANDOFF_MIN_ITEMS
}

/// How long the calling thread works alone on a long loop (of at least
/// [`HANDOFF_MIN_ITEMS`]) before other threads are asked in: from outside a
/// pool, about the cost of the wake it may save; on a worker, about what a
/// steal costs (the thief's cache misses on the piece, the owner's wait for
/// its result). A loop that ends by then runs as the sequential loop plus a
/// clock read a chunk, wherever it is called from. A loop whose rate says
/// it will not end by then stops working alone at once ([`rest_is_long`]).
const ALONE_FOR: Nanos = Nanos::of(Duration::from_micros(2));

/// Whether a loop's alone phase is over (the rule, in one place, for a
/// loop on a worker and one from outside): its last chunk's rate says the
/// rest is long ([`rest_is_long`]), or it has run for [`ALONE_FOR`]
/// (`alone`, since its start) without a rate that says the rest is too
/// short to split ([`rest_is_short`]). A loop that nears its end as its
/// alone time runs out finishes alone: a split of a rest whose halves are
/// not worth a steal hands a half to a worker who makes the owner wait
/// for it, or who comes for it as the owner ends. Loops of 3,000 cheap
/// items in a pool of 2 (3.3 us each) took twice the sequential loop's
/// CPU that way (docs/PARALLEL.md, "Session 43").
#[inline]
fn alone_phase_over(alone: Nanos, rest_len: usize, chunk: usize, took: Nanos, line: Nanos) -> bool {
    rest_is_long(rest_len, chunk, took, line)
        || (alone >= ALONE_FOR && !rest_is_short(rest_len, chunk, took, line))
}

/// Whether a rate to trust ([`rest_worth_splitting`]'s: a chunk of
/// [`RATE_CHUNK`] items, or a slow one) says that the rest of a loop,
/// `rest_len` items, takes less than the split `line` (split_line.rs), so
/// that neither half of a split is worth a steal. The loop then folds its rest alone,
/// in chunks sized to take [`ALONE_FOR`] at that rate and timed as in the
/// alone phase: a loop whose items turn slow past the rate is held back by
/// one chunk, as by any chunk of the alone phase, and the next look finds
/// its rest long.
#[inline]
fn rest_is_short(rest_len: usize, chunk: usize, took: Nanos, line: Nanos) -> bool {
    // A chunk timed at zero (under the clock's resolution) gives no rate.
    (chunk >= RATE_CHUNK || took >= SLOW_CHUNK)
        && took.0 > 0
        && !long_at_rate(rest_len, chunk, took, line)
}

/// Whether the rest of a loop, `rest_len` items, would take at least the
/// split `line` (split_line.rs) at the rate of its last chunk (`chunk`
/// items in `took`): then each half of a split is worth a steal, and working alone
/// longer only keeps the other threads waiting. Judged only after a chunk
/// of at least [`RATE_CHUNK`] items, whose time the clock's floor (tens of
/// nanoseconds) cannot inflate into a long loop's; a chunk of fewer than
/// [`SURE_CHUNK`] items must put the rest at twice that again, as its
/// time jitters by as much as a loop near the line is away from it.
#[inline]
fn rest_is_long(rest_len: usize, chunk: usize, took: Nanos, line: Nanos) -> bool {
    chunk >= RATE_CHUNK
        && long_at_rate(rest_len, chunk, took, line)
        && (chunk >= SURE_CHUNK || long_at_rate(rest_len, chunk, Nanos(took.0 / 2), line))
}

/// The shortest chunk whose rate [`rest_is_long`] takes at its word near
/// the line: a shorter one (of at least [`RATE_CHUNK`] items) must say the
/// rest takes twice the line or more. One short chunk's time jitters (a
/// cache miss, a page fault, an interrupt) by as much as the line is
/// away from a loop of about 3 us: the 64-item chunk of such a loop took
/// 70-90 ns in nine loops of ten, the line 87, and the loops that split
/// were those whose chunk took 100-160 (docs/PARALLEL.md, "Session 44").
/// A loop whose first rate is near the line works on alone for one more
/// chunk of this many items ([`sure_chunk_next`]), whose rate then
/// decides.
const SURE_CHUNK: usize = 4 * RATE_CHUNK;

/// The next chunk of a loop's alone phase, `next` as the pace sized it,
/// after a chunk of `chunk` items that took `took`, `rest_len` items left:
/// no more than [`SURE_CHUNK`] where that chunk's rate put the rest past
/// the line but too short a chunk to be sure ([`rest_is_long`]), so that
/// a loop that is long after all splits a few hundred nanoseconds later,
/// not a whole chunk of `ALONE_FOR` later (loops of 5,000-6,000 cheap
/// items in a pool of 2 took 8-16% longer that way).
#[inline]
fn sure_chunk_next(next: usize, rest_len: usize, chunk: usize, took: Nanos, line: Nanos) -> usize {
    if (RATE_CHUNK..SURE_CHUNK).contains(&chunk) && long_at_rate(rest_len, chunk, took, line) {
        next.min(SURE_CHUNK)
    } else {
        next
    }
}

/// Whether `rest_len` items take at least `line` at the rate of `chunk`
/// items in `took`: each half of a split is then worth a steal. The line
/// is the thread's, learned from its splits (split_line.rs); it starts at
/// twice [`ALONE_FOR`].
#[inline]
fn long_at_rate(rest_len: usize, chunk: usize, took: Nanos, line: Nanos) -> bool {
    (rest_len as u64).saturating_mul(took.0) >= (chunk as u64).saturating_mul(line.0)
}

/// How long `rest_len` items take at the rate of `chunk` items in `took`:
/// what a split of that rest is judged against (split_line.rs).
fn time_at_rate(rest_len: usize, chunk: usize, took: Nanos) -> Nanos {
    let time = (rest_len as u128 * u128::from(took.0)) / (chunk.max(1) as u128);
    Nanos(u64::try_from(time).unwrap_or(u64::MAX))
}

/// Whether a leaf's rest of `rest_len` items is worth splitting for
/// workers that search with nothing to take, after a chunk of `chunk`
/// items that took `took`: when that rate says each half is worth a steal
/// ([`long_at_rate`]), and the rate is one to trust: a chunk of
/// [`RATE_CHUNK`] items, or one slow enough ([`SLOW_CHUNK`]) that the
/// clock's floor cannot have made it. A split that is not worth it still
/// costs its joins, and each half the owner then shares and takes back
/// wakes searchers for nothing: with eight workers on two cores, 20,000
/// cheap items (24 us) a loop split on demand about four times a loop,
/// sharing 19 halves, where thieves took less than one
/// (docs/PARALLEL.md, "Session 38").
#[inline]
fn rest_worth_splitting(rest_len: usize, chunk: usize, took: Nanos) -> bool {
    (chunk >= RATE_CHUNK || took >= SLOW_CHUNK)
        && long_at_rate(rest_len, chunk, took, split_line::FLOOR)
}

/// A chunk that took this long gives a rate to trust however few its
/// items ([`rest_worth_splitting`]): fifty times the clock's floor.
const SLOW_CHUNK: Nanos = Nanos::of(Duration::from_micros(1));

/// The shortest chunk whose rate [`rest_is_long`] trusts: the second chunk
/// of a loop of cheap items (the first grows at most 64-fold).
const RATE_CHUNK: usize = 64;

/// How many more times a piece may split without evidence of idle
/// workers (the splitting rule in the module docs).
#[derive(Clone, Copy)]
struct Budget {
    splits: usize,
    /// The worker count the budget is reset to on migration.
    workers: usize,
    deterministic: bool,
    /// A loop of few items (under `HANDOFF_MIN_ITEMS`), each of which may
    /// be slow or block its thread, or a loop on a worker that timed slow
    /// items last (`items_were_slow`): its halves go where a thief takes them
    /// without asking (`Place::LocalQueue`), since an owner whose
    /// item sleeps answers nobody, and a forced steal costs two `membarrier`
    /// calls (docs/PARALLEL.md).
    few_items: bool,
    /// The first chunk of a leaf split from this piece, in items:
    /// [`FIRST_CHUNK`] where the items' rate is unknown, or a chunk of
    /// [`CHUNK_TARGET`] at the rate the loop timed before it split (its
    /// alone phase, or the chunk before a split on demand), so that a
    /// leaf does not time its items again from one (four chunks, 1, 64,
    /// 4,096 and the rest, where two fold a 5,000-item leaf). The leaf
    /// looks for searchers, and a search whether to stop, only after that
    /// first chunk (docs/PARALLEL.md, "Session 48").
    first_chunk: usize,
}

impl Budget {
    fn new<P: Producer>(producer: &P) -> Budget {
        Budget::with_workers(producer, crate::current_num_threads())
    }

    /// [`Budget::new`] for a pool of `workers`, already read.
    fn with_workers<P: Producer>(producer: &P, workers: usize) -> Budget {
        let workers = workers.max(1);
        Budget {
            splits: workers,
            workers,
            deterministic: producer.deterministic(),
            few_items: few_items(producer),
            first_chunk: FIRST_CHUNK,
        }
    }

    /// This budget, for pieces whose leaves start with a chunk of
    /// `first_chunk` items: one sized by [`next_chunk`] to take
    /// [`CHUNK_TARGET`] at the rate the loop timed where it split.
    fn starting_with(self, first_chunk: usize) -> Budget {
        Budget {
            first_chunk,
            ..self
        }
    }

    /// Whether a piece splits now, and the budget each half then gets.
    fn split<P: Producer>(self, producer: &P, migrated: bool) -> Option<Budget> {
        if !halves_fit_min_len(producer) {
            return None;
        }
        let mut splits = self.splits;
        if migrated && !self.deterministic {
            splits = splits.max(self.workers);
        }
        if splits == 0 && producer.len() <= producer.max_len() {
            return None;
        }
        Some(Budget {
            splits: splits / 2,
            ..self
        })
    }

    /// The budget of a leaf's rest that idle workers asked for.
    fn renewed(self) -> Budget {
        Budget {
            splits: self.workers,
            ..self
        }
    }
}

/// Results folded so far, left to right.
struct Folded<R>(Option<R>);

struct Drive<'c, C> {
    consumer: &'c C,
    /// Set when a piece panicked: the others stop, and the panic goes on
    /// to the caller once they have.
    stop: AtomicBool,
    /// Set when a piece ran on a worker other than the one that split it
    /// off: the pool took part in the loop.
    shared: AtomicBool,
}

impl<'c, C> Drive<'c, C> {
    /// The driver of one loop (or of one block of one) through
    /// `consumer`.
    fn new(consumer: &'c C) -> Self {
        Drive {
            consumer,
            stop: AtomicBool::new(false),
            shared: AtomicBool::new(false),
        }
    }

    /// Whether the items from base index `offset` on need not run: a piece
    /// panicked, the answer is known, or the consumer needs nothing from
    /// there on (`find_first` once it has a match before `offset`). Pieces go left
    /// to right, so a piece whose rest starts past a match skips it: a
    /// search of a range too long to run ends at its first chunks past
    /// the match.
    fn stopped_at<T>(&self, offset: usize) -> bool
    where
        C: Consumer<T>,
    {
        // Relaxed: a hint to skip work; the panic itself travels by join.
        self.stop.load(Ordering::Relaxed) || self.consumer.full_from(offset)
    }

    fn push<T>(&self, folded: &mut Folded<C::Result>, next: C::Result)
    where
        C: Consumer<T>,
    {
        folded.0 = Some(match folded.0.take() {
            Some(left) => self.consumer.reduce(left, next),
            None => next,
        });
    }

    fn finish<T>(&self, folded: Folded<C::Result>, offset: usize) -> C::Result
    where
        C: Consumer<T>,
    {
        match folded.0 {
            Some(result) => result,
            None => self.consumer.fold(offset, std::iter::empty()),
        }
    }

    /// Folds one piece sequentially; a panic stops the other pieces.
    fn fold_piece<P>(&self, piece: P, offset: usize) -> C::Result
    where
        P: Producer,
        C: Consumer<P::Item>,
    {
        self.stopping_on_panic(|| self.consumer.fold(offset, piece.into_iter()))
    }

    /// Folds `piece`, which starts where the pieces folded so far end, onto
    /// their result (`Consumer::fold_more`).
    fn fold_onto<P>(&self, folded: &mut Folded<C::Result>, piece: P, offset: usize)
    where
        P: Producer,
        C: Consumer<P::Item>,
    {
        folded.0 = Some(match folded.0.take() {
            None => self.fold_piece(piece, offset),
            Some(left) => {
                self.stopping_on_panic(|| self.consumer.fold_more(left, offset, piece.into_iter()))
            }
        });
    }

    /// Runs a fold; a panic in it stops the other pieces and goes on.
    fn stopping_on_panic<R>(&self, fold: impl FnOnce() -> R) -> R {
        match panic::catch_unwind(AssertUnwindSafe(fold)) {
            Ok(result) => result,
            Err(payload) => {
                self.stop.store(true, Ordering::Relaxed);
                panic::resume_unwind(payload)
            }
        }
    }

    /// Runs a piece on a worker: splits it while the budget says so, then
    /// folds it as a leaf.
    fn run<P>(&self, producer: P, offset: usize, budget: Budget, migrated: bool) -> C::Result
    where
        P: Producer,
        C: Consumer<P::Item>,
    {
        if self.stopped_at(offset) {
            return keep(self.consumer.fold(offset, std::iter::empty()), producer);
        }
        if let Some(halves) = budget.split(&producer, migrated) {
            let mid = producer.len() / 2;
            let (left, right) = producer.split_at(mid);
            let (left, right) = crate::api::join::join_context_with(
                |ctx| self.run(left, offset, halves, ctx.migrated()),
                |ctx| {
                    if ctx.migrated() {
                        // Relaxed: a hint read after the loop's joins.
                        self.shared.store(true, Ordering::Relaxed);
                    }
                    self.run(right, at(offset, mid), halves, ctx.migrated())
                },
                if budget.few_items {
                    crate::api::join::Place::LocalQueue
                } else {
                    crate::api::join::Place::JoinStack
                },
            );
            return self.consumer.reduce(left, right);
        }
        self.leaf(producer, offset, budget)
    }

    /// A loop called on a worker. In a pool of one worker it runs whole. A
    /// long one (of at least
    /// [`HANDOFF_MIN_ITEMS`]) first runs alone, a chunk at a time, for
    /// [`ALONE_FOR`]: one that ends by then neither splits nor offers work,
    /// since handing a piece of it to another worker would cost more than
    /// the piece; the rest of a longer one splits as any loop's
    /// ([`Drive::run`]). A loop of few items splits at once: each may be
    /// slow.
    fn on_worker<P>(&self, producer: P) -> C::Result
    where
        P: Producer,
        C: Consumer<P::Item>,
    {
        let budget = Budget::new(&producer);
        if budget.workers == 1 {
            // Nobody to share it with: a pool's one worker runs every piece.
            return self.fold_piece(producer, 0);
        }
        if few_items(&producer) || producer.folds_leaves_whole() {
            return self.run(producer, 0, budget, false);
        }
        if items_were_slow() {
            // Its halves go where a thief takes them without asking, as a
            // loop of few items' do: an owner whose item is slow answers
            // nobody for its time.
            let budget = Budget {
                few_items: true,
                ..budget
            };
            return self.run(producer, 0, budget, false);
        }
        self.alone_first(producer, Folded(None), budget, &mut Pace::start(), false)
    }

    /// A long loop on a worker, from its start: alone, a chunk at a time,
    /// onto `folded` (the result of what came before it, for a
    /// `flat_map`'s inner loop), at `pace`, until the alone phase is
    /// over; then its rest splits as any loop's ([`Drive::run`]). With
    /// `keep_pace` (inner loops), `pace` is left where the loop ended, for
    /// the next inner loop to start from.
    fn alone_first<P>(
        &self,
        producer: P,
        mut folded: Folded<C::Result>,
        budget: Budget,
        pace: &mut Pace,
        keep_pace: bool,
    ) -> C::Result
    where
        P: Producer,
        C: Consumer<P::Item>,
    {
        let (mut rest, mut offset) = (producer, 0);
        let clock = pace.clock;
        let started = pace.previous;
        let line = split_line::line_for_next_loop();
        loop {
            let chunk = chunk_len(&rest, pace.wish());
            if chunk == rest.len() {
                self.fold_onto(&mut folded, rest, offset);
                if keep_pace {
                    pace.loop_ended(chunk);
                }
                return self.finish(folded, 0);
            }
            let (head, tail) = rest.split_at(chunk);
            self.fold_onto(&mut folded, head, offset);
            offset = at(offset, chunk);
            rest = tail;
            if self.stopped_at(offset) {
                return keep(self.finish(folded, 0), rest);
            }
            let now = clock.now();
            let (chunk, took) = pace.chunk_ended(chunk, now);
            if !keep_pace && offset == chunk {
                // The loop's first chunk (an inner loop starts at the pace
                // of those before it).
                record_start_rate(chunk, took);
            }
            if alone_phase_over(clock.between(started, now), rest.len(), chunk, took, line) {
                // The pool's searchers keep searching through this loop and
                // a while after (where the workers fit the cores): a helper
                // that finishes its piece before the loop ends is then
                // still searching when the next starts.
                crate::api::global::linger_after_worker_loop();
                // Judged (split_line.rs) where the split is the loop's own
                // and its time is: not an inner loop, whose owner's wait
                // for a stolen piece runs other outer items; not a rest
                // too short for its minimum to split; not one that a
                // search ended early.
                let rest_end = at(offset, rest.len());
                let judge = !keep_pace && halves_fit_min_len(&rest);
                let predicted = time_at_rate(rest.len(), chunk, took);
                let pieces = budget.starting_with(next_chunk(chunk, took, CHUNK_TARGET));
                let split = self.run(rest, offset, pieces, false);
                if judge && !self.stopped_at(rest_end) {
                    split_line::judge(predicted, clock.elapsed(now));
                }
                self.push(&mut folded, split);
                if self.shared.load(Ordering::Relaxed) {
                    // Other workers took part: they linger for the next
                    // loop, which then finds them searching, not parked.
                    crate::api::global::linger_after_worker_loop();
                }
                if keep_pace {
                    // The next inner loop starts at this one's rate, from now.
                    pace.previous = clock.now();
                }
                return self.finish(folded, 0);
            }
            pace.next = sure_chunk_next(pace.next, rest.len(), chunk, took, line);
        }
    }

    /// Folds a leaf a chunk at a time, giving work away between chunks
    /// (see [`CHUNK_TARGET`]).
    fn leaf<P>(&self, mut rest: P, mut offset: usize, budget: Budget) -> C::Result
    where
        P: Producer,
        C: Consumer<P::Item>,
    {
        if budget.deterministic || rest.folds_leaves_whole() {
            // Chunk borders follow the clock, and a floating-point fold of
            // two chunks differs from the fold of both in one go; a state
            // per chunk costs more than the chunks' balance saves.
            return self.fold_piece(rest, offset);
        }
        let start = offset;
        let mut folded = Folded(None);
        let mut next = budget.first_chunk;
        let clock = Clock::get();
        // Known once a chunk is timed (`rest_worth_splitting`): a piece
        // just split off does not split again before its first chunk.
        let mut worth_splitting = false;
        // Whether the next chunk is the leaf's first (`record_start_rate`).
        let mut first = true;
        loop {
            let len = rest.len();
            let chunk = chunk_len(&rest, next);
            if chunk == len {
                self.fold_onto(&mut folded, rest, offset);
                return self.finish(folded, start);
            }
            // `offer_work` on every look, worth a split or not: it answers
            // a searcher's request for a join half.
            if halves_fit_min_len(&rest) && crate::api::join::offer_work() && worth_splitting {
                // `next` is sized by this leaf's last chunk.
                let pieces = budget.renewed().starting_with(next);
                let split = self.run(rest, offset, pieces, true);
                self.push(&mut folded, split);
                return self.finish(folded, start);
            }
            let (head, tail) = rest.split_at(chunk);
            let timer = clock.now();
            self.fold_onto(&mut folded, head, offset);
            offset = at(offset, chunk);
            rest = tail;
            if self.stopped_at(offset) {
                return keep(self.finish(folded, start), rest);
            }
            let took = clock.elapsed(timer);
            if first {
                first = false;
                record_start_rate(chunk, took);
            }
            worth_splitting = rest_worth_splitting(rest.len(), chunk, took);
            next = next_chunk(chunk, took, CHUNK_TARGET);
        }
    }
}

/// How many items of `rest` the next chunk takes, for a wish of `chunk`:
/// within `with_min_len` and `with_max_len`, and all of `rest` if what
/// would be left is shorter than the minimum (and the whole fits the
/// maximum), so that no folded piece is shorter than the minimum.
fn chunk_len<P: Producer>(rest: &P, chunk: usize) -> usize {
    let len = rest.len();
    let min = rest.min_len().max(1);
    let max = rest.max_len().max(min);
    let chunk = chunk.clamp(min, max);
    if len <= chunk || (len - chunk < min && len <= max) {
        len
    } else {
        chunk
    }
}

/// The next chunk's size: this one's, scaled so that it would have taken
/// `target` (at most 64 times larger, at least half), so that cheap items
/// reach a long chunk in a step or two while slow ones stay few.
fn next_chunk(chunk: usize, took: Nanos, target: Nanos) -> usize {
    let chunk = chunk.max(1) as u64;
    // Below the clock's resolution a chunk looks free: count it as 20 ns.
    let took = took.0.max(20);
    let target = target.0;
    // Cheap items reach the 64-fold cap: no division then (a loop of a
    // thousand cheap items sizes two chunks, and a division is tens of
    // cycles of its few hundred nanoseconds).
    if took.saturating_mul(64) <= target {
        return usize::try_from(chunk.saturating_mul(64)).unwrap_or(usize::MAX);
    }
    // In 64 bits, not 128: a 128-bit division is a call (`__udivti3`).
    // The product saturates only past 4 * 10^15 items a chunk, and the
    // clamp then keeps half the chunk.
    let scaled =
        (chunk.saturating_mul(target) / took).clamp((chunk / 2).max(1), chunk.saturating_mul(64));
    usize::try_from(scaled).unwrap_or(usize::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The split line a thread starts with (split_line.rs).
    const LINE: Nanos = split_line::FLOOR;

    /// The helper that ran a migrated piece opens a linger window as its
    /// piece ends, while the loop's owner is still in its own piece: a
    /// helper that finishes first must not park before the owner's window
    /// opens. A loop of two items splits at once; the owner's item waits
    /// for the other to end on the other worker, then for a window that
    /// ends at least a window (less its slack) after that, which nothing
    /// else in the pool could open meanwhile. The rule is the `join`
    /// half's, so it holds where the pool's workers fit the cores.
    #[test]
    #[cfg(not(loom))]
    fn a_helper_whose_piece_ends_leaves_the_pool_lingering() {
        use crate::prelude::*;
        use crate::sched::registry::{LINGER_SLACK_NS, LINGER_WINDOW};
        use std::sync::atomic::AtomicU64;
        use std::time::Instant;
        if std::thread::available_parallelism().map_or(1, usize::from) < 2 {
            return;
        }
        let window_ns = u64::try_from(LINGER_WINDOW.as_nanos()).unwrap();
        let pool = crate::Pool::builder().workers(2).build().unwrap();
        let registry = pool.registry();
        let (finished, finished_at) = (AtomicBool::new(false), AtomicU64::new(0));
        let (latest_end, floor) = (AtomicU64::new(0), AtomicU64::new(0));
        let workers = pool.install(|| {
            (0..2usize)
                .into_par_iter()
                .map(|item| {
                    if item == 1 {
                        finished_at.store(registry.linger_end_and_now().1, Ordering::Relaxed);
                        finished.store(true, Ordering::Release);
                        return crate::current_worker_index();
                    }
                    while !finished.load(Ordering::Acquire) {
                        std::thread::yield_now();
                    }
                    let at_least =
                        finished_at.load(Ordering::Relaxed) + window_ns - LINGER_SLACK_NS;
                    floor.store(at_least, Ordering::Relaxed);
                    let deadline = Instant::now() + Duration::from_secs(30);
                    loop {
                        let (end, _) = registry.linger_end_and_now();
                        latest_end.store(end, Ordering::Relaxed);
                        if end >= at_least || Instant::now() > deadline {
                            return crate::current_worker_index();
                        }
                        std::thread::yield_now();
                    }
                })
                .collect::<Vec<_>>()
        });
        assert_ne!(
            workers[0], workers[1],
            "the second item ran on the other worker"
        );
        let (end, floor) = (latest_end.into_inner(), floor.into_inner());
        assert!(
            end >= floor,
            "while the owner was still in its piece, no window ending at {floor} ns or later opened (latest end {end} ns)"
        );
    }

    /// A long loop on a worker opens the linger window by the `join`
    /// half's rule: in a pool whose workers fit the cores, not in one with
    /// more workers than cores (where nothing else in these calls opens
    /// one: `install` from outside and stolen halves follow the same rule).
    /// A rule of timing with no unsafe code of its own: not run under Miri,
    /// which would interpret two long loops item by item.
    #[test]
    #[cfg(not(loom))]
    #[cfg_attr(
        miri,
        ignore = "two 200k-item loops, a rule of timing: covered natively"
    )]
    fn a_loop_on_a_worker_lingers_only_where_the_workers_fit_the_cores() {
        use crate::prelude::*;
        let cores = std::thread::available_parallelism().map_or(1, usize::from);
        let long_loop = || {
            (0..200_000u64)
                .into_par_iter()
                .map(|i| i ^ (i >> 3))
                .sum::<u64>()
        };
        let expected: u64 = (0..200_000u64).map(|i| i ^ (i >> 3)).sum();
        let crowded = crate::Pool::builder().workers(cores + 2).build().unwrap();
        assert_eq!(crowded.install(long_loop), expected);
        assert_eq!(
            crowded.registry().linger_end_and_now().0,
            0,
            "a loop in a pool of {} workers on {cores} cores opened a window",
            cores + 2
        );
        if cores >= 2 {
            let fits = crate::Pool::builder().workers(2).build().unwrap();
            assert_eq!(fits.install(long_loop), expected);
            assert_ne!(
                fits.registry().linger_end_and_now().0,
                0,
                "a long loop in a pool of 2 workers on {cores} cores opened no window"
            );
        }
    }

    /// A thread expects slow items where the first chunk it timed last
    /// took `SLOW_ITEM` or more an item, and forgets it at the next chunk
    /// of cheaper items.
    #[test]
    fn a_thread_expects_slow_items_after_timing_slow_ones() {
        let us = |n: u64| Nanos(n * 1_000);
        std::thread::spawn(move || {
            assert!(!items_were_slow(), "a new thread expects nothing");
            record_start_rate(1, us(100));
            assert!(items_were_slow());
            record_start_rate(2, us(199));
            assert!(!items_were_slow(), "under 100 us an item");
            record_start_rate(4, us(1_000));
            assert!(items_were_slow());
            // A chunk of nothing (a leaf of no items never times one) is
            // counted as one item.
            record_start_rate(0, us(50));
            assert!(!items_were_slow());
        })
        .join()
        .unwrap();
    }

    #[test]
    fn a_rest_s_predicted_time_is_its_items_at_the_chunk_s_rate() {
        assert_eq!(time_at_rate(4_000, 256, Nanos(256)), Nanos(4_000));
        assert_eq!(time_at_rate(1_000, 3, Nanos(10)), Nanos(3_333));
        // An empty chunk counts as one item; huge products saturate.
        assert_eq!(time_at_rate(7, 0, Nanos(2)), Nanos(14));
        assert_eq!(
            time_at_rate(usize::MAX, 1, Nanos(u64::MAX)),
            Nanos(u64::MAX)
        );
    }

    #[test]
    fn a_rest_is_long_from_a_trusted_rate_only() {
        let ns = Nanos;
        // 256 items in 256 ns: 1 ns an item, so 4,000 more take 4 us, twice
        // the alone phase; 3,999 do not.
        assert!(rest_is_long(4_000, SURE_CHUNK, ns(256), LINE));
        assert!(!rest_is_long(3_999, SURE_CHUNK, ns(256), LINE));
        // A chunk shorter than RATE_CHUNK says nothing, however slow: its
        // time may be the clock's floor.
        assert!(!rest_is_long(1_000_000, 1, ns(1_000), LINE));
        assert!(!rest_is_long(
            1_000_000,
            RATE_CHUNK - 1,
            ns(1_000_000),
            LINE
        ));
        // Huge rests and times saturate rather than wrap.
        assert!(rest_is_long(usize::MAX, 64, ns(u64::MAX), LINE));
        assert!(!rest_is_long(usize::MAX, usize::MAX, ns(0), LINE));
        // The alone phase ends on either ground, and not before.
        assert!(alone_phase_over(ALONE_FOR, 10, 8, ns(1), LINE));
        assert!(alone_phase_over(ns(100), 4_000, SURE_CHUNK, ns(256), LINE));
        assert!(!alone_phase_over(ns(100), 3_999, SURE_CHUNK, ns(256), LINE));
    }

    #[test]
    fn a_short_chunk_says_long_only_far_past_the_line() {
        let ns = Nanos;
        // 64 items in 64 ns: a rest of 4,000 is at the line (4 us), but one
        // chunk of 64 may have jittered there; twice the line it must be.
        assert!(!rest_is_long(4_000, 64, ns(64), LINE));
        assert!(!rest_is_long(7_999, 64, ns(64), LINE));
        assert!(rest_is_long(8_000, 64, ns(64), LINE));
        assert!(!alone_phase_over(ns(100), 4_000, 64, ns(64), LINE));
        assert!(alone_phase_over(ns(100), 8_000, 64, ns(64), LINE));
        // Near the line it is neither long nor short: the loop works on
        // alone, and its alone time still ends the phase.
        assert!(!rest_is_short(4_000, 64, ns(64), LINE));
        assert!(alone_phase_over(ALONE_FOR, 4_000, 64, ns(64), LINE));
        // The next chunk is then SURE_CHUNK items at most, and its rate is
        // taken at its word.
        assert_eq!(sure_chunk_next(1_000, 4_000, 64, ns(64), LINE), SURE_CHUNK);
        assert_eq!(sure_chunk_next(100, 4_000, 64, ns(64), LINE), 100);
        // Nothing changes after a chunk far from the line, a chunk too short
        // to be a rate, or one long enough to be sure.
        assert_eq!(sure_chunk_next(1_000, 3_999, 64, ns(64), LINE), 1_000);
        assert_eq!(
            sure_chunk_next(1_000, 1_000_000, RATE_CHUNK - 1, ns(64), LINE),
            1_000
        );
        assert_eq!(
            sure_chunk_next(1_000, 4_000, SURE_CHUNK, ns(256), LINE),
            1_000
        );
        assert!(rest_is_long(4_000, SURE_CHUNK, ns(256), LINE));
    }

    #[test]
    fn a_loop_near_its_end_when_its_alone_time_runs_out_finishes_alone() {
        let ns = Nanos;
        // 64 items in 64 ns: 3,999 more take just under twice ALONE_FOR,
        // too short for a split's halves to be worth a steal, so the loop
        // goes on alone past its alone time; 4,000 do not.
        assert!(rest_is_short(3_999, 64, ns(64), LINE));
        assert!(!rest_is_short(4_000, 64, ns(64), LINE));
        assert!(!alone_phase_over(ALONE_FOR, 3_999, 64, ns(64), LINE));
        assert!(alone_phase_over(ALONE_FOR, 4_000, 64, ns(64), LINE));
        // A slow chunk of few items is a rate to trust too: 4 items of
        // 1 us, three more are short, four are not.
        assert!(rest_is_short(3, 4, ns(4_000), LINE));
        assert!(!rest_is_short(4, 4, ns(4_000), LINE));
        // A rate not to trust never says short: a few fast items may be
        // the clock's floor, and the alone time alone ends the phase.
        assert!(!rest_is_short(1, RATE_CHUNK - 1, ns(1), LINE));
        assert!(alone_phase_over(ALONE_FOR, 1, RATE_CHUNK - 1, ns(1), LINE));
        // A chunk timed at zero gives no rate at all.
        assert!(!rest_is_short(1, 64, ns(0), LINE));
        // Before its alone time runs out, a short rest changes nothing.
        assert!(!alone_phase_over(ns(100), 10, 64, ns(64), LINE));
        // Saturating, not wrapping.
        assert!(!rest_is_short(usize::MAX, 64, ns(u64::MAX), LINE));
    }

    #[test]
    fn a_leaf_rest_splits_only_when_a_trusted_rate_says_its_halves_are_worth_a_steal() {
        let ns = Nanos;
        // 64 cheap items in 80 ns: 1,000 more take 1.25 us, under twice the
        // alone phase; 4,000 take 5 us.
        assert!(!rest_worth_splitting(1_000, 64, ns(80)));
        assert!(rest_worth_splitting(4_000, 64, ns(80)));
        // One slow item (10 us) is a rate to trust: one more is worth it.
        assert!(rest_worth_splitting(1, 1, ns(10_000)));
        // A chunk of few items in under a microsecond may be the clock's
        // floor: no split, however long the rest.
        assert!(!rest_worth_splitting(1_000_000, 1, ns(999)));
        assert!(!rest_worth_splitting(usize::MAX, RATE_CHUNK - 1, ns(500)));
        // Either ground, at the edge.
        assert!(rest_worth_splitting(4, 1, SLOW_CHUNK));
        assert!(!rest_worth_splitting(3, 1, SLOW_CHUNK));
        // Huge rests and times saturate rather than wrap.
        assert!(rest_worth_splitting(usize::MAX, 64, ns(u64::MAX)));
        assert!(!rest_worth_splitting(0, 64, ns(u64::MAX)));
    }

    #[test]
    fn a_timed_loop_s_pieces_start_their_leaves_at_its_rate() {
        use crate::iter::{IntoParallelIterator, ParallelIterator};
        let producer = (0..1_000usize).into_par_iter().producer();
        let fresh = Budget::with_workers(&producer, 2);
        assert_eq!(fresh.first_chunk, FIRST_CHUNK, "no rate yet: from one item");
        // The alone phase timed 64 items in 64 ns: a chunk of the target.
        let sized = next_chunk(64, Nanos(64), CHUNK_TARGET);
        assert!(sized > RATE_CHUNK);
        let timed = fresh.starting_with(sized);
        // Every split down to the leaves, and a leaf's renewed budget,
        // carry it; a migrated piece's reset budget too.
        let half = timed.split(&producer, false).expect("a budget of 2 splits");
        let quarter = half
            .split(&producer, false)
            .expect("halves split once more");
        assert!(quarter.split(&producer, false).is_none(), "a leaf");
        let migrated = quarter.split(&producer, true).expect("migration resets");
        for budget in [half, quarter, migrated, quarter.renewed()] {
            assert_eq!(budget.first_chunk, sized);
        }
    }

    #[test]
    fn the_next_chunk_aims_at_the_target_within_its_bounds() {
        let us = |micros: u64| Nanos(micros * 1_000);
        let ns = Nanos;
        // A chunk that took a tenth of the target grows tenfold.
        assert_eq!(next_chunk(100, ns(200), us(2)), 1_000);
        // Growth stops at 64-fold; a chunk below the clock counts as 20 ns.
        assert_eq!(next_chunk(1, ns(0), us(2)), 64);
        assert_eq!(next_chunk(64, ns(64), us(2)), 2_000);
        // A slow chunk shrinks, by half at most, and never to nothing.
        assert_eq!(next_chunk(1_000, us(8), us(4)), 500);
        assert_eq!(next_chunk(1_000, us(1_000), us(4)), 500);
        assert_eq!(next_chunk(1, us(1_000), us(4)), 1);
        // Huge chunks and durations neither overflow nor shrink past half.
        let huge = usize::MAX / 2;
        assert!(next_chunk(huge, ns(1), us(4)) >= huge / 2);
        assert_eq!(next_chunk(10, Nanos(u64::MAX), us(4)), 5);
    }
}
