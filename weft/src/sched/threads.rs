//! How a pool's threads are named, sized and scheduled by the operating
//! system: one setup for the workers that `build` starts and the spare
//! threads that start on first use.
//!
//! # The operating system's policy (the rule, in one place)
//!
//! On Linux the threads of a pool of more workers than the process has
//! cores run under `SCHED_BATCH` (`Builder::batch_scheduling` sets it
//! either way): the kernel then never lets such a thread preempt the one
//! running on a core when it wakes up; it takes the core when that
//! thread's time slice ends or the thread sleeps. Where the kernel puts a
//! woken worker on an idle core (mainline Linux looks for one), it runs
//! there at once as before; the kernels of the VMs this project is
//! measured on put it on its waker's core while that core is lightly
//! loaded, where it then waits for the waker to sleep (docs/TUNING.md,
//! "Where a woken thread runs"). In a pool of more workers than cores the
//! running threads a woken worker would preempt are mostly the pool's
//! own, and a worker woken to take a piece of a loop no longer throws the
//! worker that holds the loop's critical piece off its core: with eight
//! workers on two cores, rayon's `find_any` through rayon-core/ scanned
//! five times the items it needed before (docs/TUNING.md, "Woken workers
//! that preempt the owner"). A pool that fits the cores keeps the normal
//! policy: there the threads a woken worker would wait for are other
//! programs', and with every core busy with them a batch worker's wake-up
//! took 0.85 ms against 17 us (the same section). The policy changes when
//! a thread runs, never whether: no wake is skipped and the protocol
//! (sleep.rs) is the same.
//!
//! Only a thread running the normal policy (`SCHED_OTHER`) is moved, so a
//! real-time policy that a spawn handler set is kept, and the thread gets
//! its policy back when it leaves the pool (a spawn handler's thread may
//! live on). Where the call fails (a sandbox that forbids it) the thread
//! runs under the policy it had. Miri and loom cannot make the call and
//! do not need it: their runs judge what the threads do, not when.

use std::sync::Arc;

/// Whether a pool of `workers` runs under `SCHED_BATCH` when the builder
/// does not say (module docs): where it has more workers than the
/// process's `cores` (registry.rs, `cores`).
pub(crate) fn batch_by_default(workers: usize, cores: usize) -> bool {
    !crate::sched::registry::workers_fit_cores(workers, cores)
}

/// The user's naming closure.
pub(crate) type NameFn = Arc<dyn Fn(usize) -> String + Send + Sync>;

/// Names and stack size for every thread of one pool.
#[derive(Clone)]
pub(crate) struct ThreadSetup {
    pub(crate) name: Option<NameFn>,
    pub(crate) stack_size: Option<usize>,
    /// Seats below this are workers' (for the default names).
    pub(crate) workers: usize,
    /// Whether the threads run under `SCHED_BATCH` (module docs).
    pub(crate) batch_scheduling: bool,
}

impl ThreadSetup {
    /// The name of seat `index`'s thread: the user's (which may panic), or
    /// the default.
    pub(crate) fn name(&self, index: usize) -> String {
        match &self.name {
            Some(name) => name(index),
            None => self.default_name(index),
        }
    }

    /// `weft-worker-{index}` for a worker, `weft-spare-{index}` for a spare
    /// seat (whose indexes follow the workers').
    pub(crate) fn default_name(&self, index: usize) -> String {
        if index < self.workers {
            format!("weft-worker-{index}")
        } else {
            format!("weft-spare-{index}")
        }
    }

    /// Puts the calling thread under the pool's policy (module docs) until
    /// the returned guard drops.
    pub(crate) fn enter_policy(&self) -> OsPolicy {
        OsPolicy::enter(self.batch_scheduling)
    }

    /// A thread builder with `name` and the pool's stack size.
    pub(crate) fn builder(&self, name: String) -> crate::facade::thread::Builder {
        let thread = crate::facade::thread::Builder::new().name(name);
        match self.stack_size {
            Some(bytes) => thread.stack_size(bytes),
            None => thread,
        }
    }
}

/// The calling thread's policy while it runs a pool's tasks; the thread
/// gets its own back on drop (see the module docs).
pub(crate) struct OsPolicy {
    /// Whether this guard moved the thread to `SCHED_BATCH`, and so must
    /// move it back.
    moved: bool,
}

impl OsPolicy {
    fn enter(batch: bool) -> OsPolicy {
        OsPolicy {
            moved: batch && batch::enter(),
        }
    }
}

impl Drop for OsPolicy {
    fn drop(&mut self) {
        if self.moved {
            batch::leave();
        }
    }
}

#[cfg(all(target_os = "linux", not(miri), not(loom)))]
mod batch {
    /// Moves the calling thread from the normal policy to `SCHED_BATCH`;
    /// true if it moved.
    pub(super) fn enter() -> bool {
        // SAFETY: `sched_getscheduler` and `sched_setscheduler` take a
        // thread id (0: the calling thread) and, for the latter, a pointer
        // to a `sched_param` that lives across the call; neither keeps the
        // pointer nor touches other memory.
        unsafe {
            if libc::sched_getscheduler(0) != libc::SCHED_OTHER {
                return false;
            }
            let param = libc::sched_param { sched_priority: 0 };
            libc::sched_setscheduler(0, libc::SCHED_BATCH, &param) == 0
        }
    }

    /// Moves the calling thread back to the normal policy.
    pub(super) fn leave() {
        let param = libc::sched_param { sched_priority: 0 };
        // SAFETY: as in `enter`. A failure leaves the thread under
        // `SCHED_BATCH`, which only changes when it runs.
        unsafe {
            libc::sched_setscheduler(0, libc::SCHED_OTHER, &param);
        }
    }
}

#[cfg(not(all(target_os = "linux", not(miri), not(loom))))]
mod batch {
    /// No such policy here (or no system call under Miri and loom).
    pub(super) fn enter() -> bool {
        false
    }

    pub(super) fn leave() {}
}
