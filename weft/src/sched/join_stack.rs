//! The join stack: where `join` leaves its second half while the first runs.
//!
//! One per seat, beside the seat's queues. Its halves are not copied into
//! it: each is a [`Half`] in the frame of the `join` that made it, linked to
//! the half pushed before it, and the stack keeps the newest half's address
//! (`newest`). The owner pushes and pops with plain stores and loads and a
//! compiler fence ([`barrier::light`]): the common `join`, whose second half
//! comes back unstolen, makes no atomic read-modify-write and no fence, and
//! what its push stores depends on no load. A ring of slots indexed by a
//! count (this stack's form through session 49) stores `bottom + 1` where
//! the next push loads it, and in fib each `join`'s first half joins again
//! at once: on the AMD and Intel VMs measured, that chain of loads through
//! memory cost a fifth of an unstolen `join` (docs/TUNING.md, "The join
//! stack as a list of frames"). A frame's address comes from the stack
//! pointer, so nothing chains.
//!
//! The price is paid by whoever takes a half from the far end: a thief
//! locks the stack's other word (`taken`) and pays a process-wide barrier
//! ([`barrier::heavy`]) per steal. Thieves rarely need to pay it. A
//! searcher that finds a seat's join stack non-empty first *asks*
//! ([`JoinStack::request`]) by raising the flag that the owner's room check
//! reads at every `join` (`asked`), so that the owner's next `join` takes
//! its cold path, which answers the request and lowers the flag: asking
//! costs the common `join` no instruction. The owner takes its oldest half
//! itself and pushes it onto its local queue, where thieves steal it as any
//! task ([`JoinStack::take_oldest`], worker/join_owner.rs
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
//! `newest` is the newest half pushed and not popped, or null, and is
//! written by the owner only. Each half's `older` is the half that was
//! `newest` when it was pushed. Halves are taken from the old end only, so
//! the taken halves on the list are its oldest ones, each marked (its
//! `taken` flag); `taken` holds the newest of them, or null, and a lock bit.
//! Every change to `taken` and to the marks is made under that lock, by a
//! thief ([`steal`]) or by the owner ([`take_oldest`], [`pop_newest`],
//! [`take_all`], and a pop that finds its half taken), and so is every
//! store of `newest` but the owner's push and pop, which never take it.
//!
//! 1. **A half is taken at most once, and a thief touches only live
//!    frames.** A taker walks from `newest` along `older` to the oldest
//!    unmarked half, under the lock. The owner's pop stores `newest` (one
//!    below its half), then reads `taken` behind its light fence, and keeps
//!    its half without a lock only if `taken` is unlocked and not its half.
//!    A thief takes the lock before its heavy barrier and reads `newest`
//!    after it. If the owner's store came before that barrier, the thief
//!    never sees the popped half, nor walks through it; if after, the
//!    owner's read of `taken` sees the lock (or, once the thief is done,
//!    what the thief marked), and the owner waits for the lock to go before
//!    it decides, so a frame the thief can reach does not return while the
//!    thief holds the lock. A pop that finds `newest` is not its half
//!    returns without a look: its half left the list under the lock (a
//!    wait took it, or a pop emptied the list), after which no walk starts
//!    in it or passes through it. Every half the walk reaches is `newest`
//!    or older than a half the walk reached, hence a frame the owner is
//!    still inside (the owner's frames are nested), or the first marked
//!    one, which encloses the one before it. Of the halves a taker leaves unmarked,
//!    the owner's pop keeps its own; a marked one its frame finds taken.
//!    (In the symmetric mode the barrier pair is two SeqCst fences.)
//! 2. **A half pushed is seen by the thieves, and intact.** A half's words
//!    are written before `newest` points to it with Release; a thief reads
//!    `newest` with Acquire, and the halves older than it were published
//!    by earlier Release stores of the same thread. A half's words do not
//!    change while it is reachable (its frame is reused only after its pop,
//!    and point 1 keeps thieves out of a frame being popped).
//! 3. **Nothing is lost.** A half leaves the stack only to run: popped back
//!    by its owner (who runs it inline), run by a wait of its owner's
//!    ([`pop_newest`]: a `join` whose first half waits for its second, on
//!    one worker, must not deadlock), stolen (the thief runs it), or shared
//!    (pushed onto the owner's local queue, where it is a task like any
//!    other, reclaimed or stolen by the rules of worker/). A `join` whose
//!    room check says no takes its cold path, and a stack that holds no
//!    halves (below) sends it to the queue path, as one of a loop of few
//!    items (fork.rs, `Place`) does from the start; that half never enters
//!    the join stack, so nothing here concerns it.
//!
//!    The owner's `join` frames are nested, so the halves above a frame's
//!    own were pushed by its first half and were popped before it returns:
//!    when the frame pops, `newest` is its half, unless its half was taken
//!    (a wait of its own took it and left `newest` below it, or a thief or
//!    a share did, and the pop of a newer taken half emptied the list).
//!    A pop that finds its half marked finds every older half marked too,
//!    so it empties the list (`newest` and `taken` null, under the lock)
//!    for the next one (until then `newest` is the marked half below its
//!    own, which takers note with each take, `taken_below`, so that the
//!    stack does not look non-empty to searchers meanwhile), and so does
//!    a task before it suspends, once it has shared every half
//!    ([`take_all`]): the next fiber's halves link to none of its frames.
//! 4. **Every push is made known to idle workers.** The push that makes the
//!    stack non-empty is followed by the protocol's notify (or by a share
//!    of that half, which notifies: `join`'s outermost half); later pushes
//!    onto the non-empty stack are covered by that one, renewed after every
//!    take from the old end (sleep.rs, "Join stacks": rule *covered-stack*,
//!    with the second barrier of a forced steal). The push reads `taken`
//!    behind its light fence, and counts the stack empty when the half
//!    below its own is null or the newest marked one, or a taker holds the
//!    lock.
//!
//! The lock is a spin lock held for a walk and a few stores, and for a
//! thief's heavy barrier; the owner waits for it only on a pop that meets
//! a taker at work on its stack, and before its task suspends. A share
//! or a wait's take that finds it held takes nothing (the taker is taking
//! the oldest half already; the wait looks again), and a thief retries. A walk reads
//! one word per unmarked half: the depth of the recursion, which rarely
//! passes 64 in divide and conquer, and a share or steal takes a half
//! that is worth far more than that.
//!
//! Where the process has no asymmetric barrier (barrier.rs), the owner's
//! light fence pairs with nothing, so the stack holds no half at all: its
//! room check always says no, and `join` takes the local queue, whose own
//! fences carry the argument.
//!
//! [`steal`]: JoinStack::steal
//! [`take_oldest`]: JoinStack::take_oldest
//! [`pop_newest`]: JoinStack::pop_newest
//! [`take_all`]: JoinStack::take_all

use std::cell::Cell;
use std::ptr;

use crossbeam_utils::CachePadded;

use crate::facade::{AtomicPtr, AtomicUsize, Ordering};
use crate::sched::barrier;
use crate::sched::deque::Steal;
use crate::sched::job::JobRef;

/// The lock bit of `taken` (a half's address is at least word-aligned).
const LOCKED: usize = 1;

/// `asked`: no request.
const NOT_ASKED: usize = 0;
/// `asked`: a searcher asked for a half.
const ASKED: usize = 1;
/// `asked`: the stack holds no halves; never changed.
const NO_HALVES: usize = 2;

/// One half on a join stack, in the frame of the `join` that pushed it: a
/// stack job's reference as its two words, and the links the stack reads.
pub(crate) struct Half {
    /// The job's words, written once by [`Half::new`].
    data: *mut (),
    run: *mut (),
    /// The half that was newest when this one was pushed, or null. Set
    /// when the half is made, before it is published; read by the owner
    /// and, after the Acquire of `newest` and under the lock, by takers.
    /// Plain memory, not atomics: no two threads touch it unordered
    /// (invariants 1 and 2), which Miri's race detector checks, and loom
    /// explores no needless interleavings of it.
    older: Cell<*mut Half>,
    /// Marked by whoever takes the half from the old end, and read, only
    /// under the lock.
    taken: Cell<bool>,
}

impl Half {
    /// A half for `job`, to be pushed where `room` says (or never pushed,
    /// without a room). Built with its link, so that the frame's words are
    /// each stored once.
    ///
    /// # Safety
    /// `job` must come from `StackJob::as_job_ref` (its data word is a
    /// pointer), and the half is taken at most once (join_stack.rs,
    /// invariant 1), its job rebuilt only by the one who takes it.
    #[inline(always)]
    pub(crate) unsafe fn new(job: JobRef, room: Option<&Room>) -> Half {
        // SAFETY: forwarded from this function's contract.
        let (data, run) = unsafe { job.into_stack_words() };
        Half {
            data,
            run,
            older: Cell::new(room.map_or(ptr::null_mut(), |room| room.older)),
            taken: Cell::new(false),
        }
    }

    fn address(&self) -> *mut Half {
        ptr::from_ref(self).cast_mut()
    }

    /// The half's job, for the one who takes it.
    ///
    /// # Safety
    /// The caller took the half (invariant 1), and rebuilds its job once.
    unsafe fn job(&self) -> JobRef {
        // SAFETY: the words came from one `into_stack_words` (`new`), and
        // taking the half once is the caller's contract.
        unsafe { JobRef::from_stack_words(self.data, self.run) }
    }
}

pub(crate) struct JoinStack {
    /// The newest half not popped, or null. Written by the owner only.
    newest: CachePadded<AtomicPtr<Half>>,
    /// The newest half taken from the old end (null when none is on the
    /// list), with [`LOCKED`] while a taker holds the lock.
    taken: CachePadded<AtomicUsize>,
    /// The link of the newest taken half (the half below it, marked or
    /// null), set with it under the lock, for [`is_empty`]: a pop that finds
    /// its half taken has put it in `newest` for a moment before it empties
    /// the list, and the list then holds nothing to take.
    ///
    /// [`is_empty`]: JoinStack::is_empty
    taken_below: AtomicPtr<Half>,
    /// What the room check reads: [`NOT_ASKED`], [`ASKED`] by a searcher
    /// ([`request`](JoinStack::request)), or [`NO_HALVES`] where the
    /// owner's light fence pairs with nothing
    /// ([`barrier::join_stacks_hold_halves`]), so that every `join` there
    /// takes the local queue. A request is a hint, never a condition (a
    /// searcher that gets no answer steals by force), so the race between
    /// the owner's store and a searcher's, which may lose a request, loses
    /// nothing else; and nothing is published through the word, hence
    /// Relaxed everywhere.
    asked: AtomicUsize,
}

/// The room check's answer, for [`JoinStack::push`]: not `Copy`, so that
/// it serves one push.
pub(crate) struct Room {
    /// `newest` as the room check read it: the new half's `older`.
    older: *mut Half,
}

// SAFETY: a `JoinStack` is shared by its owner and the thieves by the
// protocol above; the raw pointers it holds are to halves whose frames that
// protocol keeps alive while they are reachable.
unsafe impl Sync for JoinStack {}
// SAFETY: as above; a stack is made on one thread and used on its seat's.
unsafe impl Send for JoinStack {}

impl JoinStack {
    /// An empty stack. Made after `barrier::init` (the registry's build
    /// runs it first), which decides whether the stack may hold halves.
    pub(crate) fn new() -> JoinStack {
        JoinStack::holding_halves(barrier::join_stacks_hold_halves())
    }

    /// An empty stack, that holds halves or none.
    fn holding_halves(holds: bool) -> JoinStack {
        JoinStack {
            newest: CachePadded::new(AtomicPtr::new(ptr::null_mut())),
            taken: CachePadded::new(AtomicUsize::new(0)),
            taken_below: AtomicPtr::new(ptr::null_mut()),
            asked: AtomicUsize::new(if holds { NOT_ASKED } else { NO_HALVES }),
        }
    }

    /// Owner only: whether the next half goes onto the stack, for
    /// [`push`]: `None` when a searcher asked, or the stack holds no
    /// halves, and then [`room_after_looking`] settles it. A separate step,
    /// so that a `join` that finds no room takes another path from the
    /// start (fork.rs), and the common one carries no "where did it go"
    /// past its first half.
    ///
    /// [`push`]: JoinStack::push
    /// [`room_after_looking`]: JoinStack::room_after_looking
    #[inline(always)]
    pub(crate) fn room(&self) -> Option<Room> {
        // Relaxed: the owner's own variable; `asked` is a hint.
        let older = self.newest.load(Ordering::Relaxed);
        (self.asked.load(Ordering::Relaxed) == NOT_ASKED).then_some(Room { older })
    }

    /// Owner only: [`room`](JoinStack::room) once it said no, after the
    /// caller answered any request
    /// ([`take_request`](JoinStack::take_request)): room unless the stack
    /// holds no halves.
    #[cold]
    pub(crate) fn room_after_looking(&self) -> Option<Room> {
        let older = self.newest.load(Ordering::Relaxed);
        (self.asked.load(Ordering::Relaxed) != NO_HALVES).then_some(Room { older })
    }

    /// Owner only: pushes `half`, and returns whether the stack held no
    /// half a thief could take before it (the push that needs the
    /// protocol's notify: sleep.rs, rule *covered-stack*).
    ///
    /// # Safety
    /// Only the seat's owner may call `push`, `pop`, `pop_newest`,
    /// `take_oldest` and `take_all`; `room` came from
    /// [`room`](JoinStack::room) or
    /// [`room_after_looking`](JoinStack::room_after_looking) with nothing
    /// pushed or taken since, and `half` was made with it
    /// ([`Half::new`]`(job, Some(&room))`), so that its link is `newest`;
    /// and `half`
    /// stays where it is, unmoved and not dropped, until [`pop`] returns for
    /// it (or, if `pop` says it was taken, until its job is done with).
    ///
    /// [`pop`]: JoinStack::pop
    #[inline(always)]
    pub(crate) unsafe fn push(&self, room: Room, half: &Half) -> bool {
        // `half.older` is `room.older`: published by this Release store.
        let older = room.older;
        self.newest.store(half.address(), Ordering::Release);
        // Read after the push, behind the light fence: the pairing with a
        // forced steal's second barrier (worker/join_owner.rs,
        // `forced_out`) needs this look at `taken` to follow the store of
        // `newest` (invariant 4).
        barrier::light();
        let taken = self.taken.load(Ordering::Relaxed);
        older.is_null() || taken & LOCKED != 0 || taken == older as usize
    }

    /// [`push`](JoinStack::push) for a half made without a room (the tests'
    /// and models' push): links it to the newest half, settling the room as
    /// `join`'s cold path would.
    ///
    /// # Safety
    /// As for [`push`](JoinStack::push).
    #[cfg(test)]
    pub(crate) unsafe fn push_linked(&self, half: &Half) -> bool {
        let room = self
            .room()
            .or_else(|| self.room_after_looking())
            .expect("a stack that holds halves");
        half.older.set(room.older);
        // SAFETY: forwarded; `half.older` is `room.older` now.
        unsafe { self.push(room, half) }
    }

    /// Owner only: takes back `half`, which the caller pushed (and every
    /// half pushed since has been popped). Returns whether it came back;
    /// false means someone took it: a thief or a share, from the old end
    /// with every older half, or a wait of the owner's own
    /// ([`pop_newest`]; older halves may remain below).
    ///
    /// [`pop_newest`]: JoinStack::pop_newest
    #[inline(always)]
    pub(crate) fn pop(&self, half: &Half) -> bool {
        let own = half.address();
        // Relaxed: the owner's own variable.
        if self.newest.load(Ordering::Relaxed) != own {
            return false;
        }
        // Release, as every store of `newest` (invariant 2).
        self.newest.store(half.older.get(), Ordering::Release);
        // The owner's half of the asymmetric pairing of invariant 1.
        barrier::light();
        // Acquire: a thief that walked through this half and released the
        // lock before this read did its reads of the half before the frame
        // returns and is reused (its marks are read in `settle_pop`). The
        // same instruction as a Relaxed load on x86.
        let taken = self.taken.load(Ordering::Acquire);
        if taken & LOCKED == 0 && taken != own as usize {
            return true;
        }
        self.settle_pop(own)
    }

    /// [`pop`](JoinStack::pop) when `taken` was locked or held this half:
    /// waits for the lock to go, then the half is the owner's unless it is
    /// the newest taken. If it is, every older half was taken too and the
    /// list is emptied (invariant 3). It waits even when the half below is
    /// unmarked, so that the half is surely the owner's: the taker may be
    /// walking through this frame (invariant 1).
    #[cold]
    #[inline(never)]
    fn settle_pop(&self, own: *mut Half) -> bool {
        loop {
            // Acquire: pairs with the Release that released the lock.
            let taken = self.taken.load(Ordering::Acquire);
            if taken & LOCKED != 0 {
                wait_for_taker();
                continue;
            }
            if taken != own as usize {
                return true;
            }
            // Emptied under the lock: `newest` is the marked half below this
            // one now, and a thief that saw it there may walk into it only
            // while holding the lock, which this frame's pop and its
            // callers' (whose halves are marked too, and which return
            // without a look once `newest` is not theirs) wait for.
            if self
                .taken
                .compare_exchange(taken, taken | LOCKED, Ordering::Acquire, Ordering::Relaxed)
                .is_ok()
            {
                self.newest.store(ptr::null_mut(), Ordering::Release);
                self.taken_below.store(ptr::null_mut(), Ordering::Relaxed);
                self.taken.store(0, Ordering::Release);
                return false;
            }
        }
    }

    /// Owner only: takes the newest half, for a wait of the owner's that
    /// runs queued work (worker/own_queues.rs, `find_own_work`). The frame
    /// that pushed it then finds it gone (`pop`).
    pub(crate) fn pop_newest(&self) -> Option<JobRef> {
        if self.is_empty() {
            return None;
        }
        // A taker at work: the wait looks again later.
        let unlocked = self.try_lock()?;
        let newest = self.newest.load(Ordering::Relaxed);
        // SAFETY: the owner's own newest half, in a frame it is inside.
        let job = unsafe { newest.as_ref() }
            .filter(|half| !half.taken.get())
            .map(|half| {
                self.newest.store(half.older.get(), Ordering::Release);
                // SAFETY: unmarked and unlinked under the lock: taken here,
                // once.
                unsafe { half.job() }
            });
        self.taken.store(unlocked, Ordering::Release);
        job
    }

    /// Owner only: takes the oldest half, to share it (worker/join_owner.rs).
    /// `None` also while a taker holds the lock: it is taking the oldest
    /// half itself.
    pub(crate) fn take_oldest(&self) -> Option<JobRef> {
        if self.is_empty() {
            return None;
        }
        let unlocked = self.try_lock()?;
        self.take_oldest_locked(unlocked)
    }

    /// Owner only, before its task suspends (worker/mod.rs,
    /// `before_suspend`): takes every half, oldest first, for `each`, and
    /// empties the list, so that the next fiber's halves do not link to
    /// this one's frames. The frames of the suspended task then find their
    /// halves taken.
    pub(crate) fn take_all(&self, mut each: impl FnMut(JobRef)) {
        let _unlocked = self.lock();
        // One walk, not one a half: a task may suspend a thousand joins deep.
        let mut unmarked = Vec::new();
        let mut walk = self.newest.load(Ordering::Relaxed);
        // SAFETY: the owner's own frames, which it is inside.
        while let Some(half) = unsafe { walk.as_ref() } {
            if half.taken.get() {
                break;
            }
            unmarked.push(half);
            walk = half.older.get();
        }
        for half in unmarked.into_iter().rev() {
            half.taken.set(true);
            // SAFETY: marked under the lock: taken here, once.
            each(unsafe { half.job() });
        }
        self.newest.store(ptr::null_mut(), Ordering::Release);
        self.taken_below.store(ptr::null_mut(), Ordering::Relaxed);
        self.taken.store(0, Ordering::Release);
    }

    /// Anyone: takes the oldest half, paying the heavy barrier that lets the
    /// owner's pop go without a fence (invariant 1).
    pub(crate) fn steal(&self) -> Steal<JobRef> {
        let Some(unlocked) = self.try_lock() else {
            return Steal::Retry;
        };
        barrier::heavy();
        match self.take_oldest_locked(unlocked) {
            Some(job) => Steal::Success(job),
            None => Steal::Empty,
        }
    }

    /// Takes the lock if nobody holds it; returns `taken` as it was,
    /// unlocked. Acquire: the marks and links the last holder left.
    /// On failure it gives the holder a moment (a spin hint; under loom a
    /// yield, since every caller comes back for the lock: a thief's search
    /// retries a sweep that met a held lock, and a wait looks again).
    fn try_lock(&self) -> Option<usize> {
        let unlocked = self.taken.load(Ordering::Relaxed);
        let locked = unlocked & LOCKED == 0
            && self
                .taken
                .compare_exchange(
                    unlocked,
                    unlocked | LOCKED,
                    Ordering::Acquire,
                    Ordering::Relaxed,
                )
                .is_ok();
        if !locked {
            spin_hint();
        }
        locked.then_some(unlocked)
    }

    /// Spins until the caller holds the lock; returns `taken` as it was,
    /// unlocked.
    fn lock(&self) -> usize {
        loop {
            if let Some(unlocked) = self.try_lock() {
                return unlocked;
            }
            wait_for_taker();
        }
    }

    /// Under the lock (`taken` was `unlocked` before it): walks from the
    /// newest half to the oldest unmarked one, marks it and releases the
    /// lock with it as the newest taken; or releases the lock unchanged.
    fn take_oldest_locked(&self, unlocked: usize) -> Option<JobRef> {
        // Acquire: pairs with the owner's Release stores (invariant 2).
        let mut walk = self.newest.load(Ordering::Acquire);
        let mut oldest: Option<&Half> = None;
        // SAFETY: every half the walk reaches is in a live frame
        // (invariant 1) and was published before `newest` was read.
        while let Some(half) = unsafe { walk.as_ref() } {
            if half.taken.get() {
                break;
            }
            oldest = Some(half);
            walk = half.older.get();
        }
        match oldest {
            Some(half) => {
                half.taken.set(true);
                // SAFETY: marked under the lock: taken here, once.
                let job = unsafe { half.job() };
                self.taken_below.store(half.older.get(), Ordering::Relaxed);
                // Release: the mark, for the next holder and the owner's pop.
                self.taken.store(half.address() as usize, Ordering::Release);
                Some(job)
            }
            None => {
                self.taken.store(unlocked, Ordering::Release);
                None
            }
        }
    }

    /// Whether the stack looks empty: no half, the newest taken, or the
    /// half below it (a pop of a taken half, before it empties the list). Plain
    /// loads: exact only after a barrier that pairs with the pushes (the
    /// sweep before blocking pays a heavy one, sleep.rs). It reads no half,
    /// which a frame may have left.
    #[inline]
    pub(crate) fn is_empty(&self) -> bool {
        let newest = self.newest.load(Ordering::Acquire);
        let taken = self.taken.load(Ordering::Acquire) & !LOCKED;
        let below = self.taken_below.load(Ordering::Acquire);
        newest.is_null() || newest as usize == taken || (taken != 0 && newest == below)
    }

    /// A searcher asks the owner to share its oldest half, by raising the
    /// flag the room check reads (`asked`): the owner's next `join` finds
    /// no room and takes the cold path that answers. A hint: a store of the
    /// owner's may replace it.
    #[inline]
    pub(crate) fn request(&self) {
        // Read first: many searchers asking keep the line shared.
        if self.asked.load(Ordering::Relaxed) == NOT_ASKED {
            self.asked.store(ASKED, Ordering::Relaxed);
        }
    }

    /// Owner: whether a searcher asked, clearing the request.
    #[inline]
    pub(crate) fn take_request(&self) -> bool {
        if self.asked.load(Ordering::Relaxed) == ASKED {
            self.asked.store(NOT_ASKED, Ordering::Relaxed);
            return true;
        }
        false
    }
}

/// A taker holds the lock: its walk and stores take nanoseconds, a thief's
/// heavy barrier microseconds, and it may have been preempted, so the
/// waiter gives its core up between looks.
fn wait_for_taker() {
    #[cfg(loom)]
    loom::thread::yield_now();
    #[cfg(not(loom))]
    std::thread::yield_now();
}

/// A failed attempt at the lock: a pause, under loom a yield (loom needs
/// every spin to yield, or it explores the spinner alone forever).
fn spin_hint() {
    #[cfg(loom)]
    loom::thread::yield_now();
    #[cfg(not(loom))]
    std::hint::spin_loop();
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    /// Never called: a real function's address for a half's run word.
    fn never_run() {}

    /// Halves whose data words are the addresses of `marks`' bytes, never
    /// run (real addresses and a real function, so that Miri sees no
    /// pointer made from an integer).
    struct Marks {
        marks: Vec<u8>,
    }

    impl Marks {
        fn new() -> Marks {
            Marks { marks: vec![0; 8] }
        }

        fn half(&self, id: usize) -> Half {
            let data = ptr::from_ref(&self.marks[id]).cast_mut().cast::<()>();
            // SAFETY: never run; the tests compare the data word only, and
            // the run word is a function's address.
            unsafe { Half::new(JobRef::from_stack_words(data, never_run as *mut ()), None) }
        }

        fn id_of(&self, job: JobRef) -> usize {
            // SAFETY: made by `half`, whose data word is a pointer.
            let data = unsafe { job.into_stack_words() }.0;
            data as usize - self.marks.as_ptr() as usize
        }
    }

    fn push(stack: &JoinStack, half: &Half) -> bool {
        // SAFETY: this thread is the owner, and every half outlives its pop
        // in these tests.
        unsafe { stack.push_linked(half) }
    }

    #[test]
    fn a_stack_without_halves_never_has_room() {
        let stack = JoinStack::holding_halves(false);
        assert!(stack.room().is_none() && stack.room_after_looking().is_none());
        stack.request();
        assert!(
            !stack.take_request(),
            "nobody may ask a stack without halves"
        );
        assert!(stack.is_empty());
        assert!(stack.pop_newest().is_none() && stack.take_oldest().is_none());
    }

    #[test]
    fn halves_pop_back_newest_first_and_only_the_first_push_is_alone() {
        let marks = Marks::new();
        let stack = JoinStack::holding_halves(true);
        let halves: Vec<Half> = (1..=4).map(|id| marks.half(id)).collect();
        for (n, half) in halves.iter().enumerate() {
            assert_eq!(push(&stack, half), n == 0);
            assert!(!stack.is_empty());
        }
        for half in halves.iter().rev() {
            assert!(stack.pop(half), "every half comes back unstolen");
        }
        assert!(stack.is_empty());
        assert!(
            push(&stack, &halves[0]),
            "an emptied stack's next push is alone"
        );
        assert!(stack.pop(&halves[0]));
    }

    /// A searcher asks by raising the flag the room check reads: the
    /// owner's next push finds no room (so its `join` takes the cold path
    /// that answers), and taking the request gives the room back.
    #[test]
    fn a_request_takes_the_room_away_until_the_owner_takes_it() {
        let marks = Marks::new();
        let stack = JoinStack::holding_halves(true);
        assert!(!stack.take_request(), "nobody asked yet");
        let (outer, inner) = (marks.half(1), marks.half(2));
        push(&stack, &outer);
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
        assert!(stack.room().is_some(), "taking it restores the room");
        push(&stack, &inner);
        assert!(stack.pop(&inner) && stack.pop(&outer));
    }

    /// Shares take from the old end; the frames whose halves were taken
    /// find them gone, newest first, and the list is empty after the
    /// oldest one's pop.
    #[test]
    fn halves_taken_from_the_old_end_are_gone_for_their_frames() {
        let marks = Marks::new();
        let stack = JoinStack::holding_halves(true);
        let halves: Vec<Half> = (1..=4).map(|id| marks.half(id)).collect();
        for half in &halves {
            push(&stack, half);
        }
        for id in 1..=2 {
            let job = stack.take_oldest().expect("the oldest half");
            assert_eq!(marks.id_of(job), id);
        }
        assert!(!stack.is_empty(), "two halves are left");
        assert!(stack.pop(&halves[3]) && stack.pop(&halves[2]));
        assert!(stack.is_empty(), "only taken halves are left");
        assert!(stack.take_oldest().is_none());
        assert!(!stack.pop(&halves[1]) && !stack.pop(&halves[0]));
        assert!(stack.is_empty());
        // A thief's steal of a new half: the same end, the same marks.
        let again = marks.half(5);
        assert!(push(&stack, &again), "the list was emptied");
        match stack.steal() {
            Steal::Success(job) => assert_eq!(marks.id_of(job), 5),
            _ => panic!("the only half was not stolen"),
        }
        assert!(matches!(stack.steal(), Steal::Empty));
        assert!(!stack.pop(&again));
        assert!(stack.is_empty());
    }

    /// A wait of the owner's takes the newest half; its frame finds it
    /// gone, and the older half still comes back.
    #[test]
    fn a_wait_takes_the_newest_half_and_leaves_the_older_ones() {
        let marks = Marks::new();
        let stack = JoinStack::holding_halves(true);
        let (outer, inner) = (marks.half(1), marks.half(2));
        push(&stack, &outer);
        push(&stack, &inner);
        assert_eq!(stack.pop_newest().map(|job| marks.id_of(job)), Some(2));
        assert!(!stack.pop(&inner));
        assert!(stack.pop(&outer));
        assert!(stack.pop_newest().is_none());
    }

    /// Before a task suspends it shares every half and forgets the list:
    /// its frames find their halves gone, and the next task's first push
    /// is alone on an empty stack.
    #[test]
    fn a_suspending_task_leaves_an_empty_list() {
        let marks = Marks::new();
        let stack = JoinStack::holding_halves(true);
        let (outer, inner, next) = (marks.half(1), marks.half(2), marks.half(3));
        push(&stack, &outer);
        push(&stack, &inner);
        let mut shared = Vec::new();
        stack.take_all(|job| shared.push(marks.id_of(job)));
        assert_eq!(shared, [1, 2], "oldest first");
        assert!(stack.is_empty());
        assert!(push(&stack, &next));
        assert!(stack.pop(&next));
        assert!(!stack.pop(&inner) && !stack.pop(&outer));
    }
}
