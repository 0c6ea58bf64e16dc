//! Asymmetric fences: a free one for the hot side of a Dekker pairing, and a
//! costly one for the rare side that makes up for it.
//!
//! Two places in the core pair a store with a later load on each of two
//! threads, and need at least one of the two loads to see the other thread's
//! store (store buffering is the failure: both stores sit in their cores'
//! buffers while both loads read old values):
//!
//! * the owner's pop of its join stack (move `newest` below its half, then
//!   read `taken`), against a thief that takes the lock in `taken`, then
//!   reads `newest` (join_stack.rs);
//! * the owner's push (point `newest` at its half, then read `taken` to see
//!   whether the stack was empty), against a thief whose steal moved
//!   `taken`, then looks at what it left behind (sleep.rs, "Join stacks").
//!
//! The join side runs millions of times a second; the other side runs when a
//! searcher must take a half by force, because its owner did not share it
//! in time: a few times per long first half. So the join side issues [`light`], which compiles to nothing but
//! a compiler fence, and the other side issues [`heavy`]: Linux's
//! `membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED)`, which makes every thread
//! of this process that is running at that moment execute a full memory
//! barrier before the call returns (a thread not running has passed through
//! a context switch, which is one). So for a `light` on thread A and a
//! `heavy` on thread B, A's accesses before its compiler fence and after it
//! fall on the two sides of one full barrier that B's call waited for, which
//! is all a SeqCst fence pair gives a Dekker pairing: either A's store was
//! visible before B's call returned, or A's load ran after that barrier and
//! sees everything B did before its call.
//!
//! Where the call is missing (another OS, an old kernel, a sandbox that
//! forbids it) `heavy` is a SeqCst fence, which pairs with no compiler
//! fence: there the join stacks hold nothing ([`join_stacks_hold_halves`]
//! is false, so every `join` puts its second half on the local queue, whose
//! own fences need no pairing), and `light` is never part of a pairing. The
//! choice is made once, before the first pool starts a thread ([`init`]),
//! and never changes. Under loom and Miri, which cannot run system calls,
//! `light` is a SeqCst fence as `heavy` is: the symmetric pairing the
//! argument falls back to, so the models run the join stacks with it.
//!
//! `light` itself tests no mode: it runs twice on every `join`, and the
//! test (a load, a compare and a branch) was a tenth of an unstolen join's
//! instructions (docs/TUNING.md, "join: the mode test and other trims").
//!
//! Cost, measured on the 2-core VM of docs/TUNING.md: a `heavy` is about
//! 0.1 us while no other thread of the process runs, and 14 us while one
//! other runs (the inter-processor interrupt of a virtual machine); so it
//! is kept off every path a busy pool takes per task.

use crate::facade::{fence, Ordering};
// std's, also under loom: the mode is process-wide state no model explores
// (loom runs the symmetric mode, whose fences are loom's).
use std::sync::atomic::AtomicU8;

/// Not decided yet: [`init`] has not run.
const UNKNOWN: u8 = 0;
/// `heavy` is the membarrier call; `light` a compiler fence.
const ASYMMETRIC: u8 = 1;
/// Both are SeqCst fences.
const SYMMETRIC: u8 = 2;

static MODE: AtomicU8 = AtomicU8::new(UNKNOWN);

/// Decides the mode, once per process. Called by every pool's build before
/// it starts a thread, so every worker sees the decision (thread start
/// synchronises with its spawner) and `light` and `heavy` always pair.
/// Before is also cheaper: registering with the pool's threads already
/// running made a build take 5-15 ms on the 2-core VM, against under
/// 10 us before them (docs/TUNING.md, "The first call's build, threads
/// started first").
pub(crate) fn init() {
    // Relaxed: the threads that use the mode are started after this returns,
    // and a thread start orders everything before it.
    if MODE.load(Ordering::Relaxed) != UNKNOWN {
        return;
    }
    let mode = if membarrier::register() {
        ASYMMETRIC
    } else {
        SYMMETRIC
    };
    // Two builds racing both register (harmless, idempotent) and decide the
    // same way; the first decision stays.
    let _ = MODE.compare_exchange(UNKNOWN, mode, Ordering::Relaxed, Ordering::Relaxed);
}

/// Whether `light` is free (the asymmetric mode).
#[cfg(all(test, not(loom)))]
pub(crate) fn is_asymmetric() -> bool {
    MODE.load(Ordering::Relaxed) == ASYMMETRIC
}

/// The hot side's fence: a compiler fence, which keeps the compiler from
/// moving the accesses around it; the processor may still reorder a store
/// with a later load, which the other side's [`heavy`] accounts for in the
/// asymmetric mode (in the symmetric one nothing relies on this fence:
/// [`join_stacks_hold_halves`]). Under loom and Miri a SeqCst fence.
#[inline(always)]
pub(crate) fn light() {
    #[cfg(not(any(loom, miri)))]
    std::sync::atomic::compiler_fence(Ordering::SeqCst);
    #[cfg(any(loom, miri))]
    fence(Ordering::SeqCst);
}

/// Whether a `light` on one thread pairs with a `heavy` on another, so that
/// the join stacks may hold halves (join_stack.rs). False only in the
/// symmetric mode outside loom and Miri, where `light` is a compiler fence
/// and `heavy` a hardware one. Decided by [`init`], which every pool's
/// build runs before it makes its join stacks.
pub(crate) fn join_stacks_hold_halves() -> bool {
    // Relaxed: written once by `init`, earlier on this thread or before this
    // thread started.
    cfg!(any(loom, miri)) || MODE.load(Ordering::Relaxed) == ASYMMETRIC
}

/// The rare side's fence: returns once every running thread of the process
/// has executed a full barrier since the call began.
#[cold]
pub(crate) fn heavy() {
    if MODE.load(Ordering::Relaxed) == ASYMMETRIC {
        membarrier::expedited();
    } else {
        fence(Ordering::SeqCst);
    }
}

#[cfg(all(target_os = "linux", not(loom), not(miri)))]
mod membarrier {
    // From linux/membarrier.h.
    const CMD_QUERY: libc::c_long = 0;
    const CMD_PRIVATE_EXPEDITED: libc::c_long = 1 << 3;
    const CMD_REGISTER_PRIVATE_EXPEDITED: libc::c_long = 1 << 4;

    fn call(cmd: libc::c_long) -> libc::c_long {
        // SAFETY: membarrier takes two integers and touches no memory of ours.
        unsafe {
            libc::syscall(
                libc::SYS_membarrier,
                cmd,
                0 as libc::c_long,
                0 as libc::c_long,
            )
        }
    }

    /// Registers the process for expedited barriers; false where the kernel
    /// lacks them or refuses.
    pub(super) fn register() -> bool {
        let supported = call(CMD_QUERY);
        supported >= 0
            && supported & CMD_PRIVATE_EXPEDITED != 0
            && call(CMD_REGISTER_PRIVATE_EXPEDITED) == 0
    }

    pub(super) fn expedited() {
        if call(CMD_PRIVATE_EXPEDITED) != 0 {
            // Registered processes cannot get EPERM, and the command takes no
            // memory that could fault: a failure here means the guarantee the
            // light side counts on is gone, so stop rather than race.
            eprintln!("weft: internal error: membarrier failed after registration");
            std::process::abort();
        }
    }
}

#[cfg(not(all(target_os = "linux", not(loom), not(miri))))]
mod membarrier {
    pub(super) fn register() -> bool {
        false
    }

    pub(super) fn expedited() {
        unreachable!("the asymmetric mode is never chosen without membarrier")
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn the_mode_is_decided_once_and_both_fences_run() {
        init();
        let first = is_asymmetric();
        assert_ne!(MODE.load(Ordering::Relaxed), UNKNOWN);
        init();
        assert_eq!(is_asymmetric(), first, "the mode never changes");
        // The asymmetric mode is chosen exactly where registration works.
        assert_eq!(first, membarrier::register());
        light();
        heavy();
    }
}
