//! The hand-off of a loop called from a thread outside any pool: the
//! calling thread folds the loop's front while a task it queues on the
//! pool takes pieces from the back, until the two meet.
//!
//! A loop called from a thread that is no worker (how most programs call
//! a parallel loop) does not wait for a round trip into the pool: the
//! calling thread folds the loop's first chunks itself, alone for
//! `ALONE_FOR` when the loop is long (or until its rate says the rest
//! takes the split line, split_line.rs: `rest_is_long`), then queues a
//! task on the pool that takes pieces from the back of the rest while the
//! caller goes on from the front (`Drive::outside_pool`). A short loop
//! thus ends on the calling thread without waking any worker, and a long
//! one has the caller working while the pool wakes. A loop of few items
//! (under `HANDOFF_MIN_ITEMS`) is handed over at once, since each of its
//! items may be slow.
//!
//! Who takes part is one rule (`shares`): a loop of few items gets every
//! worker; a long loop gets as many threads as the pool has workers, at
//! most the cores, the caller among them, so the pool's part is cut for
//! `cores - 1` workers when the workers fill the cores, and a pool of one
//! worker leaves a long loop to the caller alone (the sequential loop, no
//! task queued). A thread beyond the cores only takes
//! time slices from the others, and a caller that stopped to wait would
//! have to be woken at the end. That holds for items that keep their
//! thread on its core, not for items that sleep, read or wait on a lock:
//! once the pool has its part, the caller reads its thread's usage around
//! one chunk of a loop whose chunks are long (around its first chunk if
//! the items the thread timed last were slow), and if that chunk gave up
//! its core for most of its time, the pool's part is cut for every worker
//! from then on (`waited`, `Remote::widen`).
//!
//! With one helper (2 cores, or a pool of two workers) the task folds the
//! rest a chunk at a time from the back as the caller does from the front,
//! so the two meet where the work is halved, however it is spread over the
//! items.
//!
//! Once the rest is gone the caller waits for the task's part to end: it
//! watches for `WATCH_BEFORE_PARK` (a last chunk usually ends sooner than a
//! parked thread wakes), then parks. In a loop of few items it parks at
//! once when its own items' pace says the pool's part runs on for longer
//! than `WATCH_ONLY_WITHIN` (`pool_part_left`): eight items that sleep 10 ms
//! on two workers leave the caller 30 ms to wait after its one item, and
//! the watch only burned CPU.

use std::panic::{self, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use super::time_at_rate;
use super::{alone_phase_over, few_items, halves_fit_min_len, split_line, sure_chunk_next};
use super::{at, chunk_len, next_chunk, Budget, Clock, Consumer, Drive, Folded, Nanos, Producer};
use super::{items_were_slow, record_start_rate};
use super::{ALONE_FOR, CHUNK_TARGET, FIRST_CHUNK};
use crate::facade::lock;
use crate::sched::registry::cores_read_once;
use crate::sched::unwind::drop_contained;

/// The chunk target of a loop the caller shares with one helper, both
/// taking chunks of one rest (`Remote::run_rest_in_chunks`): each take
/// moves the rest's lock and cache lines from the other core, and at 4 us
/// chunks that cost the 10M-element sum 10-15% of its time on the 2-core
/// VM, at 40 us nothing measurable (docs/PARALLEL.md). A chunk is also at
/// most a quarter of the rest, though never under `CHUNK_TARGET`'s worth
/// (`guided`), so that the two still meet within a short chunk.
const SHARED_CHUNK_TARGET: Nanos = Nanos::of(Duration::from_micros(40));

/// How long the caller watches for the pool's part of its loop to end
/// before it parks: a parked thread is woken in about 20 us here, longer
/// than most loops' last piece takes.
const WATCH_BEFORE_PARK: Duration = Duration::from_micros(50);

/// How long the pool's part of a loop of few items may still be expected
/// to run for the caller to watch for its end before parking: past this
/// the watch would only burn `WATCH_BEFORE_PARK` of CPU on a part that
/// ends later anyway (eight items that sleep 10 ms on two workers: the
/// caller's own item ends 30 ms before the pool's part). Twenty times the
/// watch, so that an estimate from the caller's own items (`pool_part_left`)
/// must be far off before a caller parks where watching would have seen
/// the end.
const WATCH_ONLY_WITHIN: Nanos = Nanos::of(Duration::from_millis(1));

impl<C> Drive<'_, C> {
    /// From a thread outside any pool. The caller folds the loop from the
    /// front, a chunk at a time (alone at first, for [`ALONE_FOR`]); a
    /// task it then queues on the pool takes pieces from the back of the
    /// rest, each as large as leaves the caller one worker's share, and
    /// runs each as any worker runs a loop, until caller and task meet.
    /// So the calling thread works while the pool wakes, instead of
    /// waiting for a round trip, and a loop that ends before the task runs
    /// costs no wake at all: the task is withdrawn, and the caller waits
    /// only for a task that took a piece. With no helper (`shares`: a pool
    /// of one worker) the caller folds the loop whole and queues nothing.
    pub(super) fn outside_pool<P>(&self, producer: P) -> C::Result
    where
        P: Producer,
        C: Consumer<P::Item>,
    {
        let short = few_items(&producer);
        let total_items = producer.len();
        let workers = crate::current_num_threads();
        let (caller_share, helpers) = shares(short, workers, cores_read_once());
        if helpers == 0 {
            // The loop is the caller's alone (a pool of one worker): the
            // sequential loop, with no chunk to time and no task to queue.
            return self.fold_piece(producer, 0);
        }
        let remote = Remote {
            rest: Mutex::new(None),
            drive: self,
            outcome: Mutex::new(None),
            done: AtomicBool::new(false),
            caller_share,
            helpers: AtomicUsize::new(helpers),
            wide_helpers: helpers_for_waiting_items(workers).max(helpers),
            widened: AtomicBool::new(false),
            exact_len: total_items < usize::MAX,
            caller_chunk: AtomicUsize::new(0),
        };
        let mut handoff = Handoff::new(&remote);
        let mut folded = Folded(None);
        let (mut next, mut floor) = (FIRST_CHUNK, FIRST_CHUNK);
        // Alone: until the task is queued nobody else can take from the
        // rest, which the caller keeps to itself, unlocked.
        let mut alone = Some((producer, 0));
        let clock = Clock::get();
        let started = clock.now();
        let line = split_line::line_for_next_loop();
        // When the caller handed the rest over, and how long its rate put
        // the rest at then (split_line.rs judges the handover by them).
        let mut handed_over = None;
        if short {
            handoff.send(alone.take());
        }
        let mut previous = started;
        // Items the caller folded: in a loop of few items, its own items'
        // pace tells how long the pool's part has left (`finish`'s watch).
        let mut caller_items = 0;
        // Whether the caller still looks, once, at whether its items wait
        // (`Remote::wide_helpers`), and how long its last chunk took.
        let mut look_for_waits = remote.wide_helpers > helpers;
        let mut last_took = Nanos(0);
        let mut first_chunk = true;
        loop {
            // The thread's usage before a chunk that follows one long
            // enough for two reads of it to weigh nothing, once the pool
            // has its part, or before the first chunk where this thread's
            // last such loop began with a chunk that long (`waited`).
            let look = look_for_waits
                && if first_chunk {
                    look_at_first_chunk()
                } else {
                    alone.is_none() && worth_a_look(last_took)
                };
            let usage_before = if look { usage_now() } else { None };
            // Whether this chunk is the whole rest of a loop nobody else
            // has a part of: then nothing is left to time, size or take.
            let mut last = false;
            let taken = match alone.take() {
                Some((rest, offset)) => {
                    let chunk = chunk_len(&rest, next);
                    if chunk == rest.len() {
                        last = true;
                        Some((rest, offset))
                    } else {
                        let (head, tail) = rest.split_at(chunk);
                        alone = Some((tail, at(offset, chunk)));
                        Some((head, offset))
                    }
                }
                None => remote.take_chunk(next, floor),
            };
            let Some((piece, offset)) = taken else {
                break;
            };
            let chunk = piece.len();
            self.fold_onto(&mut folded, piece, offset);
            caller_items += chunk;
            if last || self.stopped_at(at(offset, chunk)) {
                break;
            }
            // Relaxed: a size hint for the task.
            remote.caller_chunk.store(chunk, Ordering::Relaxed);
            let now = clock.now();
            let took = clock.between(previous, now);
            previous = now;
            last_took = took;
            if first_chunk {
                first_chunk = false;
                record_start_rate(chunk, took);
            }
            if let Some(before) = usage_before {
                // A first chunk of cheap items, looked at because the
                // thread's last items were slow, tells nothing: the look
                // is kept for a chunk that is worth it.
                if worth_a_look(took) {
                    look_for_waits = false;
                    if usage_now().is_some_and(|after| waited(before, after, took)) {
                        remote.widen();
                    }
                }
            }
            if let Some((rest, rest_at)) = &alone {
                if alone_phase_over(clock.between(started, now), rest.len(), chunk, took, line) {
                    // Judged unless the rest is too short for its minimum
                    // to split (the pool could take no piece of it).
                    if halves_fit_min_len(rest) {
                        let predicted = time_at_rate(rest.len(), chunk, took);
                        handed_over = Some((now, predicted, at(*rest_at, rest.len())));
                    }
                    handoff.send(alone.take());
                }
            }
            (next, floor) = if let Some((rest, _)) = &alone {
                let next = next_chunk(chunk, took, ALONE_FOR);
                let next = sure_chunk_next(next, rest.len(), chunk, took, line);
                (next, next)
            } else {
                remote.next_wish(chunk, took)
            };
        }
        drop(alone);
        // Whether to watch for the pool's part to end before parking: in a
        // loop of few items, not when its items' pace says that part runs
        // on long past the watch.
        let watch = !short
            || caller_items == 0
            || pool_part_left(total_items, caller_items, helpers, clock.elapsed(started))
                <= WATCH_ONLY_WITHIN;
        #[cfg(test)]
        let watch = tests::FORCED_WATCH.get().unwrap_or(watch);
        let theirs = handoff.finish(watch);
        if let Some((when, predicted, rest_end)) = handed_over {
            // Not a loop that a search ended early: its time says nothing
            // of a split's worth.
            if !self.stopped_at(rest_end) {
                split_line::judge(predicted, clock.elapsed(when));
            }
        }
        let ours = self.finish(folded, 0);
        match theirs {
            Some(Ok(theirs)) => self.consumer.reduce(ours, theirs),
            Some(Err(payload)) => panic::resume_unwind(payload),
            None => ours,
        }
    }
}

/// Who takes part in a loop from outside a pool of `workers` on `cores`
/// cores: whether the caller goes on folding once the pool joins in, and
/// how many workers the pool's part is cut for (the rule, in one place).
///
/// * A loop of few items (`short`: each may be slow, or sleep) gets every
///   worker, and the caller keeps folding only if the workers leave it a
///   core: eight sleeping items run on eight workers at once.
/// * A long loop gets as many threads as the pool has workers, at most one
///   a core, the caller among them: `min(workers, cores) - 1` helpers. A
///   pool of one worker thus runs a long loop from outside on the caller
///   alone, as a pool of one thread does (the caller folding beside its one
///   worker kept two cores busy: 1.25x rayon's CPU on the 10M sum and 1.74x
///   on `find_any` in session 38's run, docs/PARALLEL.md "Session 40"). A
///   thread more than the
///   cores is one the system sets aside for a time slice, holding the whole
///   loop back; a caller that waits instead of folding must be woken at the
///   end, a wake-up as long as a 100k-element sum on the 2-core VM
///   (docs/PARALLEL.md). With one core and several workers the pool still
///   gets one helper, in case the caller is set aside.
fn shares(short: bool, workers: usize, cores: usize) -> (bool, usize) {
    #[cfg(test)]
    if let Some(forced) = tests::FORCED_SHARES.get() {
        return forced;
    }
    let workers = workers.max(1);
    if short {
        (workers < cores, workers)
    } else if workers == 1 {
        (true, 0)
    } else {
        (true, (workers.min(cores) - 1).max(1))
    }
}

/// The helpers a long loop gets from a pool of `workers` once its items
/// prove to wait (`waited`): every worker, as a loop of few items gets, and
/// the caller goes on folding its share. A thread whose item sleeps, reads
/// a file or waits on a lock leaves its core to another, so the cap of
/// `shares` (a thread beyond the cores only takes time slices) does not
/// hold for them: 64 items that sleep 1 ms each took 36 ms on a pool of 8
/// workers on 2 cores with the cap, 10 ms without (docs/PARALLEL.md,
/// "Session 49"). Where the workers fit the cores it adds one, for the
/// core the cap left to the caller.
fn helpers_for_waiting_items(workers: usize) -> usize {
    #[cfg(test)]
    if let Some(forced) = tests::FORCED_WIDE_HELPERS.get() {
        return forced;
    }
    workers
}

/// A chunk that took at least this long is followed by one whose thread
/// usage the caller reads (`waited`): the two reads take about 0.9 us on the
/// 2-core VM, under one percent of such a chunk, and a loop makes them
/// once.
const LOOK_FOR_WAITS_AFTER: Nanos = Nanos::of(Duration::from_micros(100));

/// Whether a loop looks at its first chunk: where the items this thread
/// timed last were slow (`items_were_slow`), so that a loop called again
/// and again whose items wait gets every worker as it hands its rest over,
/// an item sooner. A thread whose loops are cheap reads no usage.
fn look_at_first_chunk() -> bool {
    #[cfg(test)]
    if let Some(first) = tests::FORCED_LOOK.get() {
        return first;
    }
    items_were_slow()
}

/// Whether a chunk that took `took` is long enough for the next to be
/// looked at (`LOOK_FOR_WAITS_AFTER`).
fn worth_a_look(took: Nanos) -> bool {
    #[cfg(test)]
    if tests::FORCED_LOOK.get().is_some() {
        return true;
    }
    took >= LOOK_FOR_WAITS_AFTER
}

/// Whether a chunk that took `took` on the clock, between the thread's
/// usage `before` and `after`, waited: its thread gave up its core of its
/// own accord (a sleep, a read, a lock) and ran for less than half the
/// chunk's time. A thread preempted by others is not counted: it waited for
/// a core, which more threads would not give it.
fn waited(before: thread_usage::Usage, after: thread_usage::Usage, took: Nanos) -> bool {
    #[cfg(test)]
    if let Some(forced) = tests::FORCED_WAITED.get() {
        return forced;
    }
    let ran = after.cpu.0.saturating_sub(before.cpu.0);
    after.voluntary_switches > before.voluntary_switches && ran.saturating_mul(2) < took.0
}

/// How long the pool's part of a loop of `total` items is expected to run
/// on, when the caller has folded `caller_items` of them in `caller_took`
/// (all the time since the loop started: a loop of few items is handed
/// over at once) and the pool's `helpers` workers took the rest at the
/// start: as many rounds of the caller's pace per item as the pool's items
/// need on its workers, less the time already gone.
fn pool_part_left(total: usize, caller_items: usize, helpers: usize, caller_took: Nanos) -> Nanos {
    let pool_items = total.saturating_sub(caller_items);
    let rounds = pool_items.div_ceil(helpers.max(1)) as u128;
    let per_item = u128::from(caller_took.0) / caller_items.max(1) as u128;
    let expected = u64::try_from(rounds * per_item).unwrap_or(u64::MAX);
    Nanos(expected.saturating_sub(caller_took.0))
}

/// A chunk of a rest of `len` items that two threads take from: the wish,
/// but at most a quarter of the rest unless that is under `floor`, so that
/// the two meet within a chunk of `floor` items however large the wish.
fn guided(len: usize, wish: usize, floor: usize) -> usize {
    wish.min((len / 4).max(floor))
}

/// What the calling thread of [`Drive::outside_pool`] shares with the task
/// it queues: the rest of the loop, and where that task's result goes.
struct Remote<'d, 'c, P, C: Consumer<P::Item>>
where
    P: Producer,
{
    /// The part not yet taken, and the base index it starts at.
    rest: Mutex<Option<(P, usize)>>,
    drive: &'d Drive<'c, C>,
    outcome: Mutex<Option<std::thread::Result<C::Result>>>,
    done: AtomicBool,
    /// Whether the caller goes on with the loop once the pool has joined
    /// in ([`shares`]): always for a long loop, whose pool part leaves it a
    /// core; for a short one only if the workers leave it a core.
    caller_share: bool,
    /// How many workers the pool's part is cut for ([`shares`]). With one,
    /// the task folds the rest chunk by chunk from the back as the caller
    /// does from the front, so the two meet where the work, not the item
    /// count, is halved (an unbalanced loop's dear end is the task's).
    /// Raised to `wide_helpers` once, by [`Remote::widen`]; read with
    /// Relaxed, and after an Acquire load of `widened` where the raise
    /// must be seen.
    helpers: AtomicUsize,
    /// The helpers a loop whose items wait gets ([`helpers_for_waiting_items`]);
    /// no more than `helpers` where that adds none.
    wide_helpers: usize,
    /// Set by [`Remote::widen`], after `helpers` was raised.
    widened: AtomicBool,
    /// Whether the loop's length is exact: a `Producer::len` of
    /// `usize::MAX` may stand for more (a 128-bit range, a long chain), and
    /// then the back of the rest cannot be found by index (a "last chunk"
    /// cut at `len - chunk` would hold nearly all of it, folded without a
    /// look at a match left of it). Such a loop's task takes its part in
    /// pieces, cut from the front and run as any worker runs a loop.
    exact_len: bool,
    /// The caller's last chunk, in items: about `CHUNK_TARGET` of work, so
    /// the task can tell a rest too short to be worth splitting.
    caller_chunk: AtomicUsize,
}

impl<P: Producer, C: Consumer<P::Item>> Remote<'_, '_, P, C> {
    /// The caller's next chunk, from the front of the rest.
    fn take_chunk(&self, chunk: usize, floor: usize) -> Option<(P, usize)> {
        let mut rest = lock(&self.rest);
        let (piece, offset) = rest.take()?;
        let chunk = chunk_len(&piece, guided(piece.len(), chunk, floor));
        if chunk == piece.len() {
            return Some((piece, offset));
        }
        let (head, tail) = piece.split_at(chunk);
        *rest = Some((tail, at(offset, chunk)));
        Some((head, offset))
    }

    /// The queued task's next piece, from the back of the rest: all of it,
    /// or, when the caller has a core of its own ([`Remote::caller_share`]),
    /// all but the share the caller would get as one more worker.
    fn take_back(&self) -> Option<(P, usize)> {
        let mut rest = lock(&self.rest);
        let (piece, offset) = rest.take()?;
        if !self.caller_share {
            return Some((piece, offset));
        }
        let keep = piece.len() / (self.helpers.load(Ordering::Relaxed) + 1);
        if keep < piece.min_len().max(1) {
            return Some((piece, offset));
        }
        let (front, back) = piece.split_at(keep);
        *rest = Some((front, offset));
        Some((back, at(offset, keep)))
    }

    /// Run by the queued task, on a worker: takes pieces from the back of
    /// the rest (all of it, unless the caller keeps a share) and runs each
    /// as any worker runs a loop, until the rest is gone (the caller eats
    /// it from the front meanwhile), and leaves the outcome for the caller.
    fn run_rest(&self) {
        // Whatever panics here (a fold, a `reduce` between two pieces, a
        // producer's split) must still end in `done`: the caller waits for
        // it, and the pool would only catch the panic and drop it.
        let ran = panic::catch_unwind(AssertUnwindSafe(|| {
            if self.in_chunks() {
                self.run_rest_in_chunks()
            } else {
                self.run_rest_in_pieces()
            }
            .map(Ok)
        }));
        let outcome = ran.unwrap_or_else(|payload| Some(Err(payload)));
        if matches!(outcome, Some(Err(_))) {
            // The caller stops after its chunk and drops what is left (an
            // item's drop may panic too: not here, before `done`).
            self.drive.stop.store(true, Ordering::Relaxed);
        }
        *lock(&self.outcome) = outcome;
    }

    /// The task's next chunk, of about `chunk` items, from the back of the
    /// rest (all of it if what would be left is shorter than `with_min_len`).
    fn take_back_chunk(&self, chunk: usize, floor: usize) -> Option<(P, usize)> {
        let mut rest = lock(&self.rest);
        let (piece, offset) = rest.take()?;
        let len = piece.len();
        let chunk = chunk_len(&piece, guided(len, chunk, floor));
        if chunk == len {
            return Some((piece, offset));
        }
        let (front, back) = piece.split_at(len - chunk);
        *rest = Some((front, offset));
        Some((back, at(offset, len - chunk)))
    }

    /// The task's part with one helper: the caller's fold mirrored, a chunk
    /// at a time from the back, until the two meet (only for a loop of an
    /// exact length, [`Remote::exact_len`]).
    /// A panic unwinds to `run_rest`.
    fn run_rest_in_chunks(&self) -> Option<C::Result> {
        let drive = self.drive;
        // Results from the back: each new chunk lies left of the others.
        let mut folded: Option<C::Result> = None;
        // Relaxed: a size hint, as the caller stores it.
        let mut next = self.caller_chunk.load(Ordering::Relaxed).max(FIRST_CHUNK);
        let mut floor = next;
        let clock = Clock::get();
        loop {
            // Acquire: pairs with `widen`'s Release, so that the pieces see
            // the raised helper count.
            if self.widened.load(Ordering::Acquire) {
                // The items wait: what is left goes to every worker, in
                // pieces that lie left of the chunks folded so far.
                let left = self.run_rest_in_pieces();
                return match (left, folded) {
                    (Some(left), Some(right)) => Some(drive.consumer.reduce(left, right)),
                    (left, right) => left.or(right),
                };
            }
            let Some((piece, offset)) = self.take_back_chunk(next, floor) else {
                break;
            };
            let chunk = piece.len();
            let timer = clock.now();
            let part = drive.fold_piece(piece, offset);
            folded = Some(match folded.take() {
                Some(right) => drive.consumer.reduce(part, right),
                None => part,
            });
            // A chunk past a match that the caller found (the only one who
            // could have, left of this chunk): what lies between the two
            // is past it too.
            if drive.stopped_at(offset) {
                break;
            }
            (next, floor) = self.next_wish(chunk, clock.elapsed(timer));
        }
        folded
    }

    /// Whether the task takes its part a chunk at a time, mirroring the
    /// caller ([`Remote::helpers`]).
    fn in_chunks(&self) -> bool {
        self.helpers.load(Ordering::Relaxed) == 1 && self.caller_share && self.exact_len
    }

    /// The caller found that its items wait (`waited`): from now on the
    /// pool's part is cut for `wide_helpers` workers, and a task folding it
    /// a chunk at a time turns to pieces (`run_rest_in_chunks`).
    fn widen(&self) {
        #[cfg(test)]
        tests::WIDENINGS.set(tests::WIDENINGS.get() + 1);
        self.helpers.store(self.wide_helpers, Ordering::Relaxed);
        // Release: publishes the store above to the task's Acquire load.
        self.widened.store(true, Ordering::Release);
    }

    /// The next chunk's wish and floor (see `guided`) after a chunk of
    /// `chunk` items that took `took`, once the pool has joined in.
    fn next_wish(&self, chunk: usize, took: Nanos) -> (usize, usize) {
        let floor = next_chunk(chunk, took, CHUNK_TARGET);
        if self.in_chunks() {
            (next_chunk(chunk, took, SHARED_CHUNK_TARGET), floor)
        } else {
            (floor, floor)
        }
    }

    /// The task's part with several helpers: pieces from the back, each
    /// run as any worker runs a loop, split for the helpers. A panic
    /// unwinds to `run_rest`.
    fn run_rest_in_pieces(&self) -> Option<C::Result> {
        let mut outcome: Option<C::Result> = None;
        while let Some((piece, offset)) = self.take_back() {
            // A rest of a couple of the caller's chunks is a few
            // microseconds of work: splitting it would cost a wake-up.
            let short = piece.len() <= 2 * self.caller_chunk.load(Ordering::Relaxed);
            let mut budget = Budget::new(&piece);
            budget.splits = if short {
                0
            } else {
                self.helpers.load(Ordering::Relaxed)
            };
            let left = self.drive.run(piece, offset, budget, false);
            // A piece taken later lies left of the ones before it.
            outcome = Some(match outcome.take() {
                Some(right) => self.drive.consumer.reduce(left, right),
                None => left,
            });
        }
        outcome
    }
}

/// The queued task's side of [`Drive::outside_pool`], shared through an
/// `Arc` because the task may run after the caller has returned. Made only
/// when the task is queued: a loop that ends on its caller alone (a
/// thousand cheap items) allocates nothing and reads no thread handle.
struct Shared {
    /// The caller, woken by the task once it is done.
    caller: std::thread::Thread,
    state: Mutex<HandoffState>,
    /// The caller's `Remote`, valid while `state` is `Queued` or `Taken`
    /// (the caller does not return before it has moved `Queued` to
    /// `Withdrawn`, or seen a `Taken` task done).
    remote: *const (),
    run: unsafe fn(*const ()),
}

// SAFETY: `remote` is only dereferenced by the task, after it moved
// `state` from `Queued` to `Taken`, and the caller then waits for the task
// to be done before its `Remote` goes away; what `Remote` holds is `Send`
// and `Sync` as far as the task uses it (the producer moves to the worker,
// the consumer is `Sync`).
unsafe impl Send for Shared {}
// SAFETY: as for `Send`; `state` is a mutex.
unsafe impl Sync for Shared {}

#[derive(Clone, Copy, PartialEq, Eq)]
enum HandoffState {
    Queued,
    Taken,
    Withdrawn,
}

/// The caller's side: queues the task once, and on the way out (normal or
/// unwinding) withdraws it or waits for it.
struct Handoff<'r, 'd, 'c, P: Producer, C: Consumer<P::Item>> {
    /// The task's side, once it is queued.
    shared: Option<Arc<Shared>>,
    /// Whether the rest went into `Remote::rest` (at `send`, whether or
    /// not the pool then took the task): until then the caller holds it
    /// alone, and `finish` has no lock to take.
    rest_handed: bool,
    finished: bool,
    remote: &'r Remote<'d, 'c, P, C>,
}

/// The queued task's entry into the caller's `Remote`.
///
/// # Safety
/// `remote` must point to a live `Remote<P, C>` that stays live until this
/// call has set its `done` flag.
unsafe fn run_remote<P: Producer, C: Consumer<P::Item>>(remote: *const ()) {
    // SAFETY: forwarded from this function's contract. A local, not an
    // argument: the `Remote` may go away while this function still runs
    // (after the store below), which no reference argument may see.
    let remote = unsafe { &*remote.cast::<Remote<'_, '_, P, C>>() };
    remote.run_rest();
    // Release: publishes the outcome to the caller's Acquire load. The
    // caller may return and drop the `Remote` as soon as it sees this, so
    // nothing of it is touched after the store (the task wakes the caller
    // through `Shared`, which it owns a share of).
    remote.done.store(true, Ordering::Release);
}

impl<'r, 'd, 'c, P: Producer, C: Consumer<P::Item>> Handoff<'r, 'd, 'c, P, C> {
    fn new(remote: &'r Remote<'d, 'c, P, C>) -> Self {
        Handoff {
            shared: None,
            rest_handed: false,
            finished: false,
            remote,
        }
    }

    /// Hands `rest` to the task it queues, which takes from its back
    /// (once).
    fn send(&mut self, rest: Option<(P, usize)>) {
        *lock(&self.remote.rest) = rest;
        self.rest_handed = true;
        let shared = Arc::new(Shared {
            caller: std::thread::current(),
            state: Mutex::new(HandoffState::Queued),
            remote: (self.remote as *const Remote<'d, 'c, P, C>).cast(),
            run: run_remote::<P, C>,
        });
        self.shared = Some(Arc::clone(&shared));
        let task = move || {
            let mut state = lock(&shared.state);
            if *state != HandoffState::Queued {
                return;
            }
            *state = HandoffState::Taken;
            drop(state);
            // SAFETY: `Taken`: the caller waits for this call to be done
            // before its `Remote` goes away (`finish`).
            unsafe { (shared.run)(shared.remote) };
            // After `done`: a caller that saw it before parking takes this
            // as a stray unpark, which only costs it a look at the flag.
            shared.caller.unpark();
        };
        if crate::api::global::spawn_on_free_function_pool(task).is_err() {
            // The pool takes no more tasks (it is shutting down): the
            // caller does the whole loop itself.
            self.shared = None;
        }
    }

    /// After the caller's last chunk, or while it unwinds: leaves nothing
    /// for the task to take, then withdraws it if it has not started, or
    /// waits for it, watching for `WATCH_BEFORE_PARK` first if `watch`.
    /// Returns the task's outcome if it took part of the loop.
    fn finish(&mut self, watch: bool) -> Option<std::thread::Result<C::Result>> {
        self.finished = true;
        // The items never taken (a loop that stopped early): taken now, so
        // that the task finds nothing more, and dropped on the caller once
        // the task can no longer reach the `Remote`, so that a drop that
        // panics unwinds a caller with nothing left to wait for.
        // A loop that ended before it was handed over (most short loops)
        // skips the lock: nobody else ever saw the rest.
        let unused = if self.rest_handed {
            lock(&self.remote.rest).take()
        } else {
            None
        };
        let Some(shared) = &self.shared else {
            drop_unwinding_or_not(unused);
            return None;
        };
        {
            let mut state = lock(&shared.state);
            if *state == HandoffState::Queued {
                *state = HandoffState::Withdrawn;
                drop(state);
                drop_unwinding_or_not(unused);
                return None;
            }
        }
        // The pool took part: its searchers linger for the next loop.
        crate::api::global::linger_after_loop();
        // Acquire: pairs with the task's Release store (`run_remote`).
        let watching = Instant::now();
        while !self.remote.done.load(Ordering::Acquire) {
            if watch && watching.elapsed() < WATCH_BEFORE_PARK {
                // Yield rather than spin: on a machine the workers fill,
                // the pool's last piece may need this core.
                std::thread::yield_now();
            } else {
                // A stray unpark only costs another look at the flag.
                std::thread::park();
            }
        }
        let outcome = lock(&self.remote.outcome).take();
        drop_unwinding_or_not(unused);
        outcome
    }
}

impl<P: Producer, C: Consumer<P::Item>> Drop for Handoff<'_, '_, '_, P, C> {
    fn drop(&mut self) {
        // Unwinding from the caller's chunk: the task must not go on with
        // a `Remote` that is going away.
        if !self.finished {
            // Unwinding already: a panic of the task's payload, or of its
            // result, dropped here would abort the process.
            drop_unwinding_or_not(self.finish(true));
        }
    }
}

/// The calling thread's usage for [`waited`] ([`thread_usage::now`]), or
/// in tests that force what `waited` finds, a usage of nothing on any
/// system, so that the paths behind it run there too.
fn usage_now() -> Option<thread_usage::Usage> {
    #[cfg(test)]
    if tests::FORCED_WAITED.get().is_some() {
        return Some(thread_usage::Usage {
            cpu: Nanos(0),
            voluntary_switches: 0,
        });
    }
    thread_usage::now()
}

/// A thread's CPU time and its voluntary switches, for [`waited`]: on
/// Linux, from the thread's CPU clock and its `getrusage`. Elsewhere, and
/// under Miri, none is read and a loop's items are never found to wait.
mod thread_usage {
    use super::Nanos;

    #[derive(Clone, Copy, Debug)]
    pub(super) struct Usage {
        pub(super) cpu: Nanos,
        pub(super) voluntary_switches: u64,
    }

    /// The calling thread's usage so far, if the system tells it. The CPU
    /// time comes from the thread's CPU clock, which counts the running
    /// thread's time up to the call: `getrusage`'s counts the time up to
    /// the thread's last tick or switch, up to a tick (1-4 ms) behind, so
    /// that a chunk that blocked once early and then computed for less
    /// than a tick would read as one that barely ran (186 ns a
    /// `getrusage`, 242 a clock read, on the 2-core VM).
    #[cfg(all(target_os = "linux", not(miri)))]
    pub(super) fn now() -> Option<Usage> {
        let mut clock = libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        // SAFETY: a valid pointer to a `timespec`, which the call fills.
        if unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut clock) } != 0 {
            return None;
        }
        // SAFETY: `rusage` is plain integers (and `timeval`s of them), for
        // which all zeroes is a valid value.
        let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
        // SAFETY: a valid pointer to a `rusage`, which the call fills; a
        // kernel that does not know `RUSAGE_THREAD` returns an error,
        // handled below.
        if unsafe { libc::getrusage(libc::RUSAGE_THREAD, &mut usage) } != 0 {
            return None;
        }
        let cpu = u64::try_from(clock.tv_sec)
            .unwrap_or(0)
            .saturating_mul(1_000_000_000)
            .saturating_add(u64::try_from(clock.tv_nsec).unwrap_or(0));
        Some(Usage {
            cpu: Nanos(cpu),
            voluntary_switches: u64::try_from(usage.ru_nvcsw).unwrap_or(0),
        })
    }

    #[cfg(not(all(target_os = "linux", not(miri))))]
    pub(super) fn now() -> Option<Usage> {
        None
    }
}

/// Drops what a loop leaves (untaken items, a result): as usual, or, on a
/// caller already unwinding, catching a panic of the drop, which would
/// otherwise abort the process.
fn drop_unwinding_or_not<T>(value: T) {
    if std::thread::panicking() {
        drop_contained(value);
    } else {
        drop(value);
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use std::cell::Cell;
    use std::panic::{self, AssertUnwindSafe};

    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::Mutex;

    use crate::facade::lock;
    use crate::prelude::*;

    thread_local! {
        /// Overrides [`super::shares`] on this thread, so that both ways the
        /// task can take its part run whatever the machine's cores.
        pub(super) static FORCED_SHARES: Cell<Option<(bool, usize)>> = const { Cell::new(None) };
        /// Overrides the caller's choice to watch before it parks, so that
        /// the path where it parks at once runs whatever the timing (the
        /// estimate behind the choice has a test of its own).
        pub(super) static FORCED_WATCH: Cell<Option<bool>> = const { Cell::new(None) };
        /// Makes the caller look for waits after any chunk (`worth_a_look`),
        /// at its first chunk too with `Some(true)`, and overrides what it
        /// finds (`waited`), so that a widening happens at the first chunk
        /// after the hand-over, or before it, whatever the items' time.
        pub(super) static FORCED_LOOK: Cell<Option<bool>> = const { Cell::new(None) };
        pub(super) static FORCED_WAITED: Cell<Option<bool>> = const { Cell::new(None) };
        /// How many loops this thread widened (`Remote::widen`).
        pub(super) static WIDENINGS: Cell<usize> = const { Cell::new(0) };
        /// Overrides [`super::helpers_for_waiting_items`].
        pub(super) static FORCED_WIDE_HELPERS: Cell<Option<usize>> = const { Cell::new(None) };
    }

    /// The ways a loop from outside can be shared: the caller folding on
    /// with one helper (the task mirrors it from the back), with two or
    /// three (the task cuts pieces for them), and the caller stopping once
    /// the pool has joined in.
    const SHARES: [(bool, usize); 4] = [(true, 1), (true, 2), (true, 3), (false, 2)];

    /// Those, and the caller alone (a pool of one worker: no helper), for
    /// the tests that do not wait for the pool to take part.
    const SHARES_AND_ALONE: [(bool, usize); 5] =
        [(true, 0), (true, 1), (true, 2), (true, 3), (false, 2)];

    /// Lengths around the hand-off's thresholds, and long ones.
    const LENGTHS: [usize; 9] = [0, 1, 2, 63, 64, 65, 1_000, 20_011, 300_007];

    fn forced<R>(share: (bool, usize), op: impl FnOnce() -> R) -> R {
        FORCED_SHARES.set(Some(share));
        let result = panic::catch_unwind(AssertUnwindSafe(op));
        FORCED_SHARES.set(None);
        result.unwrap_or_else(|payload| panic::resume_unwind(payload))
    }

    #[test]
    fn the_pool_part_left_follows_the_callers_pace_per_item() {
        use super::{pool_part_left, Nanos};
        let ms = |n: u64| Nanos(n * 1_000_000);
        // Eight items, one folded by the caller in 10 ms: the pool's seven
        // take four rounds on two workers, three after the caller's.
        assert_eq!(pool_part_left(8, 1, 2, ms(10)), ms(30));
        // On eight workers one round, which ends with the caller's.
        assert_eq!(pool_part_left(8, 1, 8, ms(10)), Nanos(0));
        // Two items folded in 10 ms: 5 ms each; six left on three workers.
        assert_eq!(pool_part_left(8, 2, 3, ms(10)), Nanos(0));
        assert_eq!(pool_part_left(9, 1, 2, ms(5)), ms(15));
        // The caller folded every item: nothing is left to the pool.
        assert_eq!(pool_part_left(4, 4, 2, ms(10)), Nanos(0));
        // No helper is counted as one, and no item folded as one.
        assert_eq!(pool_part_left(3, 1, 0, ms(1)), ms(1));
        assert_eq!(pool_part_left(3, 0, 1, ms(1)), ms(2));
        // A pace past 584 years saturates rather than wraps.
        assert_eq!(pool_part_left(60, 1, 1, Nanos(u64::MAX)), Nanos(0));
        assert_eq!(
            pool_part_left(60, 1, 1, Nanos(u64::MAX / 4)),
            Nanos(u64::MAX - u64::MAX / 4)
        );
    }

    #[test]
    #[cfg_attr(miri, ignore = "hundreds of thousands of items: covered natively")]
    fn every_way_to_share_a_loop_from_outside_keeps_its_order() {
        for share in SHARES_AND_ALONE {
            for len in LENGTHS {
                loops_keep_their_order(share, len, &format!("shares {share:?}, {len} items"));
            }
        }
    }

    /// A loop whose items wait is widened at the caller's first chunk
    /// (before the hand-over) or at its first chunk after it (forced here
    /// whatever the items' time): in the second case the task may be
    /// folding chunks from the back (one helper), cutting pieces, or not
    /// yet started, and each turns to pieces for more helpers, with the
    /// chunks it folded right of them.
    #[test]
    #[cfg_attr(miri, ignore = "hundreds of thousands of items: covered natively")]
    fn a_loop_widened_for_waiting_items_keeps_its_order() {
        for (share, first) in SHARES.into_iter().flat_map(|s| [(s, false), (s, true)]) {
            for wide in [share.1 + 1, share.1 + 4] {
                for len in LENGTHS {
                    let ctx = format!(
                        "shares {share:?} widened to {wide} (at the first chunk: {first}), {len} items"
                    );
                    FORCED_LOOK.set(Some(first));
                    FORCED_WAITED.set(Some(true));
                    FORCED_WIDE_HELPERS.set(Some(wide));
                    let widened_before = WIDENINGS.get();
                    let checked = panic::catch_unwind(AssertUnwindSafe(|| {
                        loops_keep_their_order(share, len, &ctx)
                    }));
                    let widened = WIDENINGS.get() - widened_before;
                    FORCED_LOOK.set(None);
                    FORCED_WAITED.set(None);
                    FORCED_WIDE_HELPERS.set(None);
                    checked.unwrap_or_else(|payload| panic::resume_unwind(payload));
                    // A caller that keeps a share of a long loop folds a chunk
                    // after the hand-over, and widens there if not before.
                    if share.0 && len >= 1_000 {
                        assert!(widened > 0, "no loop was widened ({ctx})");
                    }
                }
            }
        }
    }

    #[test]
    fn a_chunk_waited_only_if_its_thread_gave_up_its_core_for_most_of_it() {
        use super::thread_usage::Usage;
        use super::{waited, Nanos};
        let usage = |cpu_us: u64, voluntary_switches: u64| Usage {
            cpu: Nanos(cpu_us * 1_000),
            voluntary_switches,
        };
        let ms = Nanos(1_000_000);
        // A sleep: one switch of its own, 10 us on the core in 1 ms.
        assert!(waited(usage(500, 3), usage(510, 4), ms));
        // Preempted, never gave up its core: no more threads would help.
        assert!(!waited(usage(500, 3), usage(510, 3), ms));
        // Gave it up, but ran for most of the chunk.
        assert!(!waited(usage(500, 3), usage(1_000, 9), ms));
        assert!(waited(usage(500, 3), usage(999, 9), ms));
    }

    /// Loops of `len` items from outside, shared as `share` forces, give
    /// what the sequential loops give.
    fn loops_keep_their_order(share: (bool, usize), len: usize, ctx: &str) {
        let (collected, sum, found, first, long) = forced(share, || {
            let collected: Vec<usize> = (0..len).into_par_iter().map(|i| i * 3).collect();
            let sum: u64 = (0..len as u64).into_par_iter().map(|i| i % 7).sum();
            let found = (0..len).into_par_iter().position_any(|i| i + 1 == len);
            // Matches every 100 items: the leftmost must win.
            let first = (0..len).into_par_iter().find_first(|i| i % 100 == 99);
            let long: Vec<usize> = (0..len)
                .into_par_iter()
                .with_min_len(1_000)
                .fold(Vec::new, |mut piece, i| {
                    piece.push(i);
                    piece
                })
                .map(|piece| piece.len())
                .collect();
            (collected, sum, found, first, long)
        });
        let expected: Vec<usize> = (0..len).map(|i| i * 3).collect();
        assert!(collected == expected, "collect out of order ({ctx})");
        assert_eq!(sum, (0..len as u64).map(|i| i % 7).sum::<u64>(), "{ctx}");
        assert_eq!(found, len.checked_sub(1), "{ctx}");
        assert_eq!(first, (len >= 100).then_some(99), "{ctx}");
        assert_eq!(long.iter().sum::<usize>(), len, "{ctx}");
        // No folded piece is shorter than the minimum, unless the
        // whole loop is.
        assert!(
            long.iter().all(|&piece| piece >= len.min(1_000)),
            "a piece under with_min_len ({ctx}): {long:?}"
        );
    }

    #[test]
    #[cfg_attr(miri, ignore = "hundreds of thousands of items: covered natively")]
    fn a_panic_anywhere_in_a_shared_loop_reaches_the_caller() {
        let len = 200_003;
        for share in SHARES_AND_ALONE {
            for bad in [0, 1, len / 2, len - 2, len - 1] {
                let ctx = format!("shares {share:?}, panic at {bad}");
                let ran = forced(share, || {
                    panic::catch_unwind(|| {
                        (0..len).into_par_iter().for_each(|i| {
                            if i == bad {
                                panic::panic_any(i);
                            }
                        });
                    })
                });
                let payload = ran.expect_err(&ctx);
                assert_eq!(payload.downcast_ref::<usize>(), Some(&bad), "{ctx}");
                // The pool is whole: the next loop runs every item.
                let count = forced(share, || {
                    (0..len).into_par_iter().filter(|i| i % 2 == 0).count()
                });
                assert_eq!(count, len.div_ceil(2), "{ctx}");
            }
        }
    }

    #[test]
    fn the_pool_takes_its_part_from_the_back() {
        // The caller's first item waits until the last item has run, which
        // only the task can reach first (it takes from the back); a worker
        // that took the first item itself (the task came before the
        // caller's first take) does not wait. So the call ends, and the
        // last item ran on a worker, in every way of sharing.
        for share in SHARES {
            let len = 32;
            let last_on = Mutex::new(None);
            let last_ran = AtomicBool::new(false);
            forced(share, || {
                (0..len).into_par_iter().for_each(|i| {
                    if i == 0 && crate::current_thread_index().is_none() {
                        // Acquire: pairs with the Release below, for the
                        // record of where the last item ran.
                        while !last_ran.load(Ordering::Acquire) {
                            std::thread::yield_now();
                        }
                    }
                    if i == len - 1 {
                        *lock(&last_on) = Some(crate::current_thread_index());
                        last_ran.store(true, Ordering::Release);
                    }
                });
            });
            let last_on = lock(&last_on).take();
            assert!(
                matches!(last_on, Some(Some(_))),
                "shares {share:?}: the last item ran on {last_on:?}, not on a worker"
            );
        }
    }

    #[test]
    #[cfg_attr(miri, ignore = "hundreds of thousands of items: covered natively")]
    fn a_panic_in_reduce_reaches_the_caller() {
        // A `reduce` runs on the caller, inside the task's pieces and
        // between them: wherever it panics, the caller gets the panic.
        let len = 300_007;
        for share in SHARES_AND_ALONE {
            for _ in 0..4 {
                let ran = forced(share, || {
                    panic::catch_unwind(|| {
                        (0..len)
                            .into_par_iter()
                            .map(|i| i % 5)
                            .reduce(|| 0, |_, _| panic::panic_any("reduce"))
                    })
                });
                let payload = ran.expect_err("a reduce that always panics");
                assert_eq!(payload.downcast_ref::<&str>(), Some(&"reduce"), "{share:?}");
            }
            // One combination in the whole loop panics: the one that meets
            // two halves of `u64::MAX`, wherever they were folded. The
            // caller's items are slow, so that the task takes piece after
            // piece from the back, and the meeting is then the task's
            // `reduce` between two of its pieces.
            let big = u64::MAX / 2 + 1;
            for (a, b) in [
                (len / 3 - 1, len - 1),
                (len / 2, len - 1),
                (len / 4, len * 3 / 4),
            ] {
                let ran = forced(share, || {
                    panic::catch_unwind(|| {
                        (0..len)
                            .into_par_iter()
                            .map(|i| {
                                if crate::current_thread_index().is_none() {
                                    let mut x: usize = i;
                                    for _ in 0..100 {
                                        x = std::hint::black_box(x.wrapping_mul(31) + 7);
                                    }
                                }
                                if i == a || i == b {
                                    big
                                } else {
                                    1
                                }
                            })
                            .reduce(|| 0u64, |x, y| x.checked_add(y).expect("overflow"))
                    })
                });
                assert!(ran.is_err(), "{share:?}, halves at {a} and {b}: {ran:?}");
            }
        }
    }

    /// An item whose drop counts itself, and panics for one id.
    struct Bomb {
        id: usize,
        bursts: usize,
        drops: std::sync::Arc<[std::sync::atomic::AtomicUsize]>,
    }

    impl Drop for Bomb {
        fn drop(&mut self) {
            self.drops[self.id].fetch_add(1, Ordering::SeqCst);
            if self.id == self.bursts {
                panic::panic_any("bomb");
            }
        }
    }

    #[test]
    fn unused_items_whose_drop_panics_are_dropped_once_after_the_pool_is_done() {
        // A search by value that stops early leaves items nobody took;
        // the caller drops them once the task is done with the loop, so a
        // drop that panics reaches the caller with nothing left running.
        let len = if cfg!(miri) { 101 } else { 200_003 };
        // Under Miri (slow), the two ways the task can take its part.
        let shares: &[(bool, usize)] = if cfg!(miri) {
            &[(true, 1), (false, 2)]
        } else {
            &SHARES_AND_ALONE
        };
        for &share in shares {
            for bursts in [len / 2, len - 1] {
                let drops: std::sync::Arc<[_]> = (0..len)
                    .map(|_| std::sync::atomic::AtomicUsize::new(0))
                    .collect();
                let items: Vec<Bomb> = (0..len)
                    .map(|id| Bomb {
                        id,
                        bursts,
                        drops: drops.clone(),
                    })
                    .collect();
                let ran = forced(share, || {
                    panic::catch_unwind(AssertUnwindSafe(|| {
                        items
                            .into_par_iter()
                            .map(|bomb| bomb.id)
                            .find_any(|&id| id == 10)
                    }))
                });
                let ctx = format!("shares {share:?}, the drop of {bursts} panics");
                // Used or not, the bomb went off once, and its panic is the
                // call's.
                let payload = ran.expect_err(&ctx);
                assert_eq!(payload.downcast_ref::<&str>(), Some(&"bomb"), "{ctx}");
                for (id, count) in drops.iter().enumerate() {
                    assert_eq!(count.load(Ordering::SeqCst), 1, "item {id} ({ctx})");
                }
            }
        }
    }

    /// A panic payload whose drop panics.
    struct PanickyPayload;

    impl Drop for PanickyPayload {
        fn drop(&mut self) {
            panic::panic_any("the payload's drop");
        }
    }

    #[test]
    #[cfg_attr(
        miri,
        ignore = "minutes of yielding under Miri; the Remote's lifetime runs there in the_pool_takes_its_part_from_the_back"
    )]
    fn a_task_panic_whose_payload_panics_on_drop_meets_a_caller_panic() {
        // The task panics first with a payload that panics when dropped;
        // the caller then panics in its own item and, unwinding, waits for
        // the task and drops that payload: the process must not abort, and
        // the caller's panic is the call's.
        for share in SHARES {
            let len = 32;
            let task_panicked = AtomicBool::new(false);
            let ran = forced(share, || {
                panic::catch_unwind(AssertUnwindSafe(|| {
                    (0..len).into_par_iter().for_each(|i| {
                        let on_caller = crate::current_thread_index().is_none();
                        if i == 0 && on_caller {
                            // Acquire: pairs with the Release below.
                            while !task_panicked.load(Ordering::Acquire) {
                                std::thread::yield_now();
                            }
                            panic::panic_any("the caller's panic");
                        }
                        if i == len - 1 {
                            task_panicked.store(true, Ordering::Release);
                            panic::panic_any(PanickyPayload);
                        }
                    });
                }))
            });
            let payload = ran.expect_err("both panicked");
            // Whichever panic reached the caller, it came out whole; the
            // bomb's own is dropped with care.
            if let Some(message) = payload.downcast_ref::<&str>() {
                assert_eq!(*message, "the caller's panic", "{share:?}");
            } else {
                assert!(payload.is::<PanickyPayload>(), "{share:?}");
                crate::sched::unwind::drop_payload(payload);
            }
        }
    }

    #[test]
    #[cfg_attr(miri, ignore = "items that sleep in real time: covered natively")]
    fn a_caller_that_parks_at_once_gets_the_pools_panic_whole() {
        // Eight items of 2 ms, the caller made to park at once as its part
        // ends (`FORCED_WATCH`: the choice depends on how many items the
        // caller got before the pool's task took the rest, which timing
        // decides), in both ways of sharing. A pool item panics with a
        // payload that panics when dropped: the caller, woken by the
        // task's end, resumes that panic whole, and no item runs twice.
        for share in [(true, 1), (false, 2)] {
            let len: usize = 8;
            let runs: Vec<std::sync::atomic::AtomicUsize> = (0..len)
                .map(|_| std::sync::atomic::AtomicUsize::new(0))
                .collect();
            FORCED_WATCH.set(Some(false));
            let ran = forced(share, || {
                panic::catch_unwind(AssertUnwindSafe(|| {
                    (0..len).into_par_iter().for_each(|i| {
                        runs[i].fetch_add(1, Ordering::SeqCst);
                        std::thread::sleep(std::time::Duration::from_millis(2));
                        if i == len - 2 {
                            panic::panic_any(PanickyPayload);
                        }
                    });
                }))
            });
            FORCED_WATCH.set(None);
            let payload = ran.expect_err("an item panicked");
            assert!(payload.is::<PanickyPayload>(), "{share:?}");
            crate::sched::unwind::drop_payload(payload);
            for (i, count) in runs.iter().enumerate() {
                // Any other item may be skipped (the loop stops once one
                // panics), but none runs twice.
                assert!(count.load(Ordering::SeqCst) <= 1, "item {i} ({share:?})");
            }
            assert_eq!(runs[len - 2].load(Ordering::SeqCst), 1, "{share:?}");
        }
    }

    #[test]
    fn the_shares_rule() {
        // Few items: every worker, the caller folding on only beside them.
        assert_eq!(super::shares(true, 8, 2), (false, 8));
        assert_eq!(super::shares(true, 2, 16), (true, 2));
        // Long loops: as many threads as workers, at most the cores, the
        // caller among them; one worker leaves the caller alone.
        assert_eq!(super::shares(false, 2, 2), (true, 1));
        assert_eq!(super::shares(false, 8, 2), (true, 1));
        assert_eq!(super::shares(false, 16, 16), (true, 15));
        assert_eq!(super::shares(false, 4, 16), (true, 3));
        assert_eq!(super::shares(false, 1, 2), (true, 0));
        assert_eq!(super::shares(false, 1, 16), (true, 0));
        // One core: still one helper, in case the caller is set aside.
        assert_eq!(super::shares(false, 4, 1), (true, 1));
    }
}
