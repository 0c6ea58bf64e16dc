//! The join stack: where `join` leaves its second half while the first runs.
//!
//! One per seat, beside the seat's queues. It is a Chase-Lev deque of fixed
//! capacity whose owner pushes and pops with plain stores and loads and a
//! compiler fence ([`barrier::light`]): the common `join`, whose second half
//! comes back unstolen, makes no atomic read-modify-write and no fence. The
//! price is paid by whoever takes a half from the far end: a thief pays a
//! process-wide barrier ([`barrier::heavy`]) per steal.
//!
//! Thieves rarely need to pay it. A searcher that finds a seat's join stack
//! non-empty first *asks* ([`JoinStack::request`]) by lowering the bound
//! that the owner's room check reads at every `join` (`room_end`), so that
//! the owner's next `join` finds no room and takes its cold path, which sees
//! the request (the bound is not the one the owner set), answers it and
//! restores the bound: asking costs the common `join` no instruction. The
//! owner takes its oldest half itself and pushes it onto its local queue, where
//! thieves steal it as any task ([`JoinStack::take_oldest`], worker/join_owner.rs
//! `share_oldest_half`). In fork-join code the next `join` comes within
//! nanoseconds. When it does not come (a first half that runs long without
//! joining again), the searcher stops asking after a bounded time and steals
//! the half itself with [`JoinStack::steal`]; so a long first half never
//! holds its second half back for longer than that (no serialization, the
//! heartbeat schedulers' failure). A parallel loop's piece, which folds for
//! microseconds between two `join`s, also looks between its chunks, and
//! there shares its oldest half unasked while workers are searching
//! (worker/join_owner.rs, `offer_work`): a share is the owner's own take,
//! asked for or not.
//!
//! # Invariants, and why they hold
//!
//! `bottom` is one past the newest half and is written by the owner only;
//! `top` is the oldest half not taken and only ever grows, by a
//! compare-and-swap of whoever takes from that end: a thief ([`steal`]), the
//! owner sharing ([`take_oldest`]) or the owner popping the very last half.
//! Halves live in `slots[index % CAPACITY]` for `top <= index < bottom`.
//!
//! 1. **A half is taken at most once.** From the top end, by the CAS on
//!    `top`: of all who read the same `top`, one CAS succeeds. Between the
//!    two ends: the owner's pop lowers `bottom` to `b`, then reads `top` as
//!    `t`. With `t < b` it keeps the half at `b` without a CAS, which is
//!    sound because no thief can take index `b` now: a thief takes the index
//!    it read from `top` before its heavy barrier, and reads `bottom` after
//!    it. If the owner's store of `bottom` came before that barrier, the
//!    thief sees `b` and takes only indexes below it; if after, so did the
//!    owner's read of `top`, which then saw every CAS before the barrier,
//!    so `t >= ` the index the thief read, and `t < b` shows that index is
//!    below `b` too. With `t == b` the half is the last one and the owner
//!    takes it by the same CAS as any thief; with `t > b` it was taken.
//!    (In the symmetric mode the barrier pair is two SeqCst fences and this
//!    is Chase and Lev's argument.)
//! 2. **A half pushed is seen by the thieves, and intact.** The slot is
//!    written before `bottom` is raised with Release; a thief reads `bottom`
//!    with Acquire and the slot after it. A slot is only rewritten once its
//!    index is below `top` (`bottom - top < CAPACITY` at every push: the
//!    room check keeps `bottom` below `top + limit` for a `top` the owner
//!    read earlier, and `top` only grows), so a thief that read a slot
//!    about to be rewritten fails its CAS.
//! 3. **Nothing is lost.** A half leaves the stack only to run: popped back
//!    by its owner (who runs it inline), run by a wait of its owner's
//!    (`pop_newest`: a `join` whose first half waits for its second, on one
//!    worker, must not deadlock), stolen (the thief runs it), or shared
//!    (pushed onto the owner's local queue, where it is a task like any
//!    other, reclaimed or stolen by the rules of worker/). A `join` that
//!    finds the stack full ([`JoinStack::room`] says none) takes the queue
//!    path instead, as one of a loop of few items (fork.rs, `Place`) does
//!    from the start; that half never enters the join stack, so nothing
//!    here concerns it.
//!
//!    The owner's `join` frames are nested, so the halves above a frame's
//!    own were pushed by its first half and were taken back before it
//!    returns: when the frame pops, `bottom` is one past its half, or at
//!    its half if a wait ran it (`pop` tells the two apart), and `top`
//!    past it if it was taken from the top.
//! 4. **Every push is made known to idle workers.** The push that makes the
//!    stack non-empty is followed by the protocol's notify (or by a share
//!    of that half, which notifies: `join`'s outermost half); later pushes
//!    onto the non-empty stack are covered by that one, renewed after every
//!    take from the top (sleep.rs, "Join stacks": rule *covered-stack*,
//!    with the second barrier of a forced steal).
//!
//! Where the process has no asymmetric barrier (barrier.rs), the owner's
//! light fence pairs with nothing, so the stack holds no half at all: it never
//! has room, and `join` takes the local queue, whose own fences
//! carry the argument.
//!
//! Sizes: [`CAPACITY`] halves of two words, 4 KiB per seat (a spare
//! seat's is made with its thread: registry.rs, `SpareSeat`). Join nesting is
//! the depth of the recursion, and divide-and-conquer rarely nests past 64;
//! deeper nesting spills to the local queue, still correct, only slower.
//!
//! [`steal`]: JoinStack::steal
//! [`take_oldest`]: JoinStack::take_oldest

use crossbeam_utils::CachePadded;

use crate::facade::{AtomicPtr, AtomicUsize, Ordering};
use crate::sched::barrier;
use crate::sched::deque::Steal;
use crate::sched::job::JobRef;

/// Halves a join stack holds before `join` spills to the local queue. Small
/// under loom, so the models wrap around the ring.
#[cfg(not(loom))]
pub(crate) const CAPACITY: usize = 256;
#[cfg(loom)]
pub(crate) const CAPACITY: usize = 2;

/// One half: a stack job's reference, as two words that may be read while
/// the owner rewrites them (a thief whose CAS will then fail), hence atomics.
struct Slot {
    data: AtomicPtr<()>,
    run: AtomicPtr<()>,
}

pub(crate) struct JoinStack {
    bottom: CachePadded<AtomicUsize>,
    /// The oldest half not taken; written by whoever takes from this end.
    top: CachePadded<AtomicUsize>,
    /// An array of known length, so that indexing it needs no bounds check
    /// (two fewer instructions per push and per pop than a slice), behind a
    /// box. In the struct, a push would find its slot without loading a
    /// pointer first (one instruction fewer a `join`), but on AMD Zen 4 that
    /// build's fib was 4% slower, and Miri took 2.5x as long over the
    /// tests that make join stacks (docs/TUNING.md, session 32).
    slots: Box<[Slot; CAPACITY]>,
    /// Halves the stack takes before it has no room: [`CAPACITY`], or
    /// none where the owner's light fence pairs with nothing
    /// ([`barrier::join_stacks_hold_halves`]), so that every `join` there
    /// takes the local queue.
    limit: usize,
    /// The bound the room check reads: a push whose index is below it has
    /// room. The owner sets it to `top + limit` for the `top` it last read
    /// (`own_room_end`), so that the room check reads neither `top` (a line
    /// thieves write) nor more than one word: as `top` only grows, that
    /// bound stays valid. A searcher that asks for a half lowers it to a
    /// `top` it read ([`request`](JoinStack::request)), a bound as valid
    /// (lower than any the owner would set now) under which no push has
    /// room, and the owner's next `join` takes the cold path that answers.
    /// A request is a hint, never a condition (a searcher that gets no
    /// answer steals by force), so the races between the owner's stores
    /// and a searcher's, which may lose a request, lose nothing else; and
    /// nothing is published through the word, hence Relaxed everywhere.
    room_end: AtomicUsize,
    /// Owner only: the bound the owner set last, which tells a request
    /// apart from a stack that is full. An atomic only because thieves
    /// share the struct; Relaxed, as no other thread touches it.
    own_room_end: AtomicUsize,
}

/// Where the next half goes, from [`JoinStack::room`] for
/// [`JoinStack::push`]: not `Copy`, so that it serves one push.
pub(crate) struct Room {
    bottom: usize,
}

/// Where [`JoinStack::push`] put a half.
pub(crate) struct Pushed {
    /// Its index, for [`JoinStack::pop`].
    pub(crate) index: usize,
    /// Whether no older half was on the stack as the owner saw it: the push
    /// that makes the stack non-empty, which is the one that needs the
    /// protocol's notify (sleep.rs, rule *covered-stack*).
    pub(crate) alone: bool,
}

/// Signed distance from `from` to `to`: the indexes only grow, and wrap
/// around only after 2^64 (2^32 on 32-bit targets) halves.
#[inline(always)]
fn distance(from: usize, to: usize) -> isize {
    to.wrapping_sub(from) as isize
}

impl JoinStack {
    /// An empty stack. Made after `barrier::init` (the registry's build
    /// runs it first), which decides whether the stack may hold halves.
    pub(crate) fn new() -> JoinStack {
        JoinStack::with_limit(if barrier::join_stacks_hold_halves() {
            CAPACITY
        } else {
            0
        })
    }

    /// An empty stack that holds at most `limit` halves (at most
    /// [`CAPACITY`]).
    fn with_limit(limit: usize) -> JoinStack {
        debug_assert!(limit <= CAPACITY);
        let slot = || Slot {
            data: AtomicPtr::new(std::ptr::null_mut()),
            run: AtomicPtr::new(std::ptr::null_mut()),
        };
        JoinStack {
            bottom: CachePadded::new(AtomicUsize::new(0)),
            top: CachePadded::new(AtomicUsize::new(0)),
            slots: (0..CAPACITY)
                .map(|_| slot())
                .collect::<Box<[Slot]>>()
                .try_into()
                .unwrap_or_else(|_| unreachable!("CAPACITY slots were made")),
            limit,
            room_end: AtomicUsize::new(limit),
            own_room_end: AtomicUsize::new(limit),
        }
    }

    #[inline(always)]
    fn slot(&self, index: usize) -> &Slot {
        &self.slots[index % CAPACITY]
    }

    /// Owner only: whether the stack takes another half, and if so where it
    /// goes, for [`push`], by the bound the owner keeps (`room_end`); `None`
    /// when `bottom` reached it, and then [`room_after_looking`] settles it.
    /// A separate step, so that a `join` that finds no room takes another
    /// path from the start (fork.rs), and the common one carries no "where
    /// did it go" past its first half.
    ///
    /// [`push`]: JoinStack::push
    /// [`room_after_looking`]: JoinStack::room_after_looking
    #[inline(always)]
    pub(crate) fn room(&self) -> Option<Room> {
        // Relaxed: both are the owner's own.
        let bottom = self.bottom.load(Ordering::Relaxed);
        let room_end = self.room_end.load(Ordering::Relaxed);
        (distance(bottom, room_end) > 0).then_some(Room { bottom })
    }

    /// Owner only: [`room`](JoinStack::room) once `bottom` reached the
    /// bound: reads `top` again and moves the bound. The stack is full, or
    /// thieves took halves since the last look (each look then serves as
    /// many pushes as they took), or the stack holds no halves at all, or
    /// a searcher lowered the bound to ask, which the caller answers first
    /// ([`take_request`](JoinStack::take_request)): the new bound replaces
    /// a request not yet taken.
    #[cold]
    pub(crate) fn room_after_looking(&self) -> Option<Room> {
        // Relaxed: `bottom` is the owner's own; a stale `top` is smaller
        // than the real one, so the bound errs on the side of "full".
        let bottom = self.bottom.load(Ordering::Relaxed);
        let top = self.top.load(Ordering::Relaxed);
        let room_end = top.wrapping_add(self.limit);
        self.own_room_end.store(room_end, Ordering::Relaxed);
        self.room_end.store(room_end, Ordering::Relaxed);
        (distance(bottom, room_end) > 0).then_some(Room { bottom })
    }

    /// Owner only: pushes a half where `room` said it goes, and returns
    /// its index (for [`pop`]) and whether it is alone.
    ///
    /// [`pop`]: JoinStack::pop
    ///
    /// # Safety
    /// `job` must come from `StackJob::as_job_ref` (its data word is a
    /// pointer), only the seat's owner may call `room`, `push`, `pop` and
    /// `take_oldest`, and `room` came from [`room`](JoinStack::room) or
    /// [`room_after_looking`](JoinStack::room_after_looking) with none of
    /// them called since.
    #[inline(always)]
    pub(crate) unsafe fn push(&self, room: Room, job: JobRef) -> Pushed {
        let bottom = room.bottom;
        // SAFETY: forwarded from this function's contract.
        let (data, run) = unsafe { job.into_stack_words() };
        let slot = self.slot(bottom);
        // Relaxed: published by the Release store of `bottom` below.
        slot.data.store(data, Ordering::Relaxed);
        slot.run.store(run, Ordering::Relaxed);
        self.bottom.store(bottom.wrapping_add(1), Ordering::Release);
        // Read again after the push, behind the light fence: the pairing
        // with a forced steal's second barrier (worker/join_owner.rs, `forced_out`)
        // needs this look at `top` to follow the store of `bottom`.
        barrier::light();
        let top = self.top.load(Ordering::Relaxed);
        Pushed {
            index: bottom,
            alone: top == bottom,
        }
    }

    /// [`room`](JoinStack::room) then [`push`](JoinStack::push), handing
    /// the half back if the stack is full (the tests' and models' push).
    ///
    /// # Safety
    /// As for [`push`](JoinStack::push).
    #[cfg(test)]
    pub(crate) unsafe fn try_push(&self, job: JobRef) -> Result<Pushed, JobRef> {
        match self.room().or_else(|| self.room_after_looking()) {
            // SAFETY: forwarded from this function's contract.
            Some(room) => Ok(unsafe { self.push(room, job) }),
            None => Err(job),
        }
    }

    /// Owner only: takes back the half at `index`, which the caller pushed
    /// (and every half pushed since has been taken back). Returns whether
    /// it came back; false means someone took it: a thief or a share, from
    /// the top with every older half (the stack is then empty), or a wait
    /// of the owner's own ([`pop_newest`]; older halves may remain below).
    ///
    /// [`pop_newest`]: JoinStack::pop_newest
    #[inline(always)]
    pub(crate) fn pop(&self, index: usize) -> bool {
        // Relaxed: the owner's own variable. A wait that ran our half left
        // `bottom` at `index` (halves pushed since were popped again).
        let bottom = self.bottom.load(Ordering::Relaxed);
        if bottom != index.wrapping_add(1) {
            return false;
        }
        self.settle_newest(index)
    }

    /// Owner only: takes the newest half, for a wait of the owner's that
    /// runs queued work (worker/own_queues.rs, `find_own_work`).
    #[inline]
    pub(crate) fn pop_newest(&self) -> Option<JobRef> {
        let bottom = self.bottom.load(Ordering::Relaxed);
        let top = self.top.load(Ordering::Relaxed);
        if distance(top, bottom) <= 0 {
            return None;
        }
        let index = bottom.wrapping_sub(1);
        // SAFETY: `settle_newest` says the half at `index` is the owner's,
        // taken now, once (the owner alone writes slots, so the read may
        // follow the settling).
        self.settle_newest(index)
            .then(|| unsafe { self.read_slot(index) })
    }

    /// The owner's end: lowers `bottom` to `index` (one below it), then
    /// settles with the thieves who may be at the other end (invariant 1).
    /// Returns whether the half at `index` is the owner's.
    #[inline(always)]
    fn settle_newest(&self, index: usize) -> bool {
        // Release, as every store of `bottom`: a thief that reads this value
        // must see the slots below it (invariant 2).
        self.bottom.store(index, Ordering::Release);
        // The owner's half of the asymmetric pairing of invariant 1.
        barrier::light();
        // Relaxed: compared only; no data written by a thief is read.
        let top = self.top.load(Ordering::Relaxed);
        let left = distance(top, index);
        if left > 0 {
            return true;
        }
        // The last half: the owner takes it by the thieves' own CAS.
        let won = left == 0 && self.claim(top);
        // Empty either way: `top` is one past the half now.
        self.bottom.store(index.wrapping_add(1), Ordering::Release);
        won
    }

    /// Owner only: takes the oldest half, to share it (worker/join_owner.rs).
    pub(crate) fn take_oldest(&self) -> Option<JobRef> {
        let top = self.top.load(Ordering::Relaxed);
        // Relaxed: the owner's own variable.
        let bottom = self.bottom.load(Ordering::Relaxed);
        if distance(top, bottom) <= 0 {
            return None;
        }
        self.take_at(top)
    }

    /// Anyone: takes the oldest half, paying the heavy barrier that lets the
    /// owner's pop go without a fence (invariant 1).
    pub(crate) fn steal(&self) -> Steal<JobRef> {
        let top = self.top.load(Ordering::Acquire);
        barrier::heavy();
        // Acquire: pairs with the owner's Release stores (invariant 2).
        let bottom = self.bottom.load(Ordering::Acquire);
        if distance(top, bottom) <= 0 {
            return Steal::Empty;
        }
        match self.take_at(top) {
            Some(job) => Steal::Success(job),
            None => Steal::Retry,
        }
    }

    /// Reads the half at `index` as a job.
    ///
    /// # Safety
    /// The caller must take the half at `index` exactly once (invariant 1),
    /// or drop what this returns unrun and unread (`JobRef` has no drop).
    #[inline(always)]
    unsafe fn read_slot(&self, index: usize) -> JobRef {
        let slot = self.slot(index);
        // Relaxed: the caller read `bottom` with Acquire after the slot was
        // written (or is the owner); a slot rewritten since fails the CAS.
        let data = slot.data.load(Ordering::Relaxed);
        let run = slot.run.load(Ordering::Relaxed);
        // SAFETY: the slot's words were stored together by `push`, from one
        // stack job's reference; taking it once is the caller's contract.
        unsafe { JobRef::from_stack_words(data, run) }
    }

    /// Reads the half at `top` and claims it by the CAS on `top`.
    fn take_at(&self, top: usize) -> Option<JobRef> {
        // SAFETY: returned only if the CAS below claims the half; otherwise
        // dropped unrun (a `JobRef` owns nothing to drop).
        let job = unsafe { self.read_slot(top) };
        // Claimed: the slot held the half at `top` when read (invariant 2),
        // and this caller is the only one to take it.
        self.claim(top).then_some(job)
    }

    /// Takes the half at `top` from whoever else may be taking it: of all
    /// who read this `top`, one CAS succeeds (invariant 1). SeqCst, though
    /// only atomicity is needed: it runs once per steal or share.
    fn claim(&self, top: usize) -> bool {
        self.top
            .compare_exchange(
                top,
                top.wrapping_add(1),
                Ordering::SeqCst,
                Ordering::Relaxed,
            )
            .is_ok()
    }

    /// Whether the stack looks empty. Plain loads: exact only after a
    /// barrier that pairs with the pushes (the sweep before blocking pays a
    /// heavy one, sleep.rs).
    #[inline]
    pub(crate) fn is_empty(&self) -> bool {
        let bottom = self.bottom.load(Ordering::Acquire);
        let top = self.top.load(Ordering::Acquire);
        distance(top, bottom) <= 0
    }

    /// A searcher asks the owner to share its oldest half, by lowering the
    /// room bound to the `top` it reads (`room_end`). Still a valid bound:
    /// `top` only grows, so what this reads is at most the current `top`,
    /// below `top + limit`. The searcher saw the stack non-empty, so the
    /// owner's `bottom` is above that `top` (or gets there with its next
    /// push) and its next room check finds none. Should the owner have
    /// popped below it meanwhile, the request waits for the push that
    /// reaches it; a store of the owner's may replace it: a hint.
    #[inline]
    pub(crate) fn request(&self) {
        let top = self.top.load(Ordering::Relaxed);
        // Read first: many searchers asking keep the line shared.
        if self.room_end.load(Ordering::Relaxed) != top {
            self.room_end.store(top, Ordering::Relaxed);
        }
    }

    /// Owner: whether a searcher asked, clearing the request (the bound
    /// goes back to the owner's own).
    #[inline]
    pub(crate) fn take_request(&self) -> bool {
        let own = self.own_room_end.load(Ordering::Relaxed);
        if self.room_end.load(Ordering::Relaxed) != own {
            self.room_end.store(own, Ordering::Relaxed);
            return true;
        }
        false
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    /// Never called: a real function's address for a half's run word.
    fn never_run() {}

    /// Halves whose data words are the addresses of `marks`' bytes, never
    /// run (real addresses and a real function, so that Miri sees no
    /// pointer made from an integer).
    struct Halves {
        marks: Vec<u8>,
    }

    impl Halves {
        fn new() -> Halves {
            Halves {
                marks: vec![0; CAPACITY + 2],
            }
        }

        fn half(&self, id: usize) -> JobRef {
            let data = std::ptr::from_ref(&self.marks[id]).cast_mut().cast::<()>();
            // SAFETY: never run; the tests compare the data word only, and
            // the run word is a function's address.
            unsafe { JobRef::from_stack_words(data, never_run as *mut ()) }
        }

        fn id_of(&self, job: JobRef) -> usize {
            // SAFETY: made by `half`, whose data word is a pointer.
            let data = unsafe { job.into_stack_words() }.0;
            data as usize - self.marks.as_ptr() as usize
        }
    }

    #[test]
    fn a_stack_without_room_refuses_every_push_and_gives_the_half_back() {
        let halves = Halves::new();
        let stack = JoinStack::with_limit(0);
        for id in 1..4 {
            // SAFETY: this thread is the owner; the data word is a pointer.
            match unsafe { stack.try_push(halves.half(id)) } {
                Ok(_) => panic!("a stack of no room took a half"),
                Err(job) => assert_eq!(halves.id_of(job), id),
            }
        }
        assert!(stack.is_empty());
        assert!(stack.pop_newest().is_none());
    }

    #[test]
    fn a_full_stack_refuses_the_next_push_and_pops_back_in_order() {
        let halves = Halves::new();
        let stack = JoinStack::with_limit(CAPACITY);
        let mut indexes = Vec::new();
        for id in 1..=CAPACITY {
            // SAFETY: as above.
            match unsafe { stack.try_push(halves.half(id)) } {
                Ok(pushed) => {
                    assert_eq!(pushed.alone, id == 1);
                    indexes.push(pushed.index);
                }
                Err(_) => panic!("refused with room left"),
            }
        }
        // SAFETY: as above.
        match unsafe { stack.try_push(halves.half(CAPACITY + 1)) } {
            Ok(_) => panic!("a full stack took a half"),
            Err(job) => assert_eq!(halves.id_of(job), CAPACITY + 1),
        }
        for index in indexes.into_iter().rev() {
            assert!(stack.pop(index), "every half comes back unstolen");
        }
        assert!(stack.is_empty());
    }

    /// A searcher asks by lowering the bound the room check reads: the
    /// owner's next push finds no room (so its `join` takes the cold path
    /// that answers), taking the request puts the owner's bound back, and
    /// a stack that is merely full does not read as a request.
    #[test]
    fn a_request_takes_the_room_away_until_the_owner_takes_it() {
        let halves = Halves::new();
        let stack = JoinStack::with_limit(CAPACITY);
        assert!(!stack.take_request(), "nobody asked yet");
        for id in 1..=2 {
            // SAFETY: as above.
            assert!(unsafe { stack.try_push(halves.half(id)) }.is_ok());
        }
        assert!(stack.room().is_some());
        stack.request();
        stack.request();
        assert!(
            stack.room().is_none(),
            "a request leaves the quick check no room"
        );
        assert!(stack.take_request(), "the owner sees the request");
        assert!(
            !stack.take_request(),
            "a request is taken once, however many asked"
        );
        assert!(
            stack.room().is_some(),
            "taking it restores the owner's bound"
        );
        // The request did not move the stack: both halves come back.
        assert!(stack.pop(1) && stack.pop(0));
        for id in 1..=CAPACITY {
            // SAFETY: as above.
            assert!(unsafe { stack.try_push(halves.half(id)) }.is_ok());
        }
        assert!(stack.room().is_none() && stack.room_after_looking().is_none());
        assert!(!stack.take_request(), "a full stack is not a request");
    }

    #[test]
    fn room_taken_from_the_top_comes_back_after_a_look() {
        let halves = Halves::new();
        let stack = JoinStack::with_limit(CAPACITY);
        for id in 1..=CAPACITY {
            // SAFETY: as above.
            assert!(unsafe { stack.try_push(halves.half(id)) }.is_ok());
        }
        // Two halves leave from the top (as a share does): the quick check
        // still says no, by the bound it keeps, and a look at `top` finds
        // room for exactly two more, which go on the ring's freed slots.
        for id in 1..=2 {
            let taken = stack.take_oldest().expect("the oldest half");
            assert_eq!(halves.id_of(taken), id);
        }
        assert!(stack.room().is_none());
        for id in [0, CAPACITY + 1] {
            // SAFETY: as above.
            match unsafe { stack.try_push(halves.half(id)) } {
                Ok(pushed) => assert!(!pushed.alone),
                Err(_) => panic!("refused with room left"),
            }
        }
        assert!(stack.room().is_none() && stack.room_after_looking().is_none());
        // The newest half is the last pushed, and it comes back.
        assert_eq!(
            stack.pop_newest().map(|job| halves.id_of(job)),
            Some(CAPACITY + 1)
        );
    }
}
