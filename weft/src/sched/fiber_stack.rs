//! The stacks fibers run on, and the one budget every pool of the process
//! shares for them.
//!
//! # Why not `corosensei`'s `DefaultStack`
//!
//! A stack is two memory mappings: the usable part and, below it, a guard
//! page that turns an overflow into a fault. Making them means reserving
//! the whole range and then opening all of it but the guard, which splits
//! one mapping in two. Linux caps the mappings of a process
//! (`vm.max_map_count`, 65,530 by default), and near that cap the split
//! fails; so can the unmapping that cleans up after it, since unmapping
//! part of a mapping the kernel had merged with a neighbour is a split
//! too. `DefaultStack` checks that unmap with a debug assertion, so in
//! debug builds a wait near the cap panicked inside the task and lost it.
//! Here a stack that cannot be made is a `None` (the wait helps instead of
//! suspending, crate docs "Waiting inside a task"), and a stack that
//! cannot be unmapped stays mapped and counted: neither panics.
//!
//! # The budget
//!
//! The cap on mappings is the process's, not a pool's, so the fibers of
//! all pools draw on one count, [`STACKS_LIVE`], against one limit: on
//! Linux seven eighths of `vm.max_map_count`, two mappings a stack, which
//! leaves an eighth of the cap (8,191 mappings by default) for everything
//! else the process maps; 28,669 stacks at the default cap. Elsewhere
//! there is no such cap to read, and a map that fails is the only bound.
//! A stack counts from before it is mapped until it is unmapped, idle
//! fibers' stacks included.
//!
//! The cap is read (a file, on Linux) only once the process holds
//! [`STACKS_BEFORE_READING_THE_CAP`] stacks: every worker makes a fiber
//! as it starts, so the process's first worker read the file before its
//! first task, a new pool's first call waiting on it (docs/TUNING.md,
//! "What a pool's build costs"). Below that count the budget matters
//! only under a cap of fewer than 147 mappings (a small program holds 46
//! once its pool of two workers has started), and a stack the kernel
//! refuses is a `None` like one over budget.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::OnceLock;

/// Fiber stacks mapped (or being mapped) by every pool of the process.
static STACKS_LIVE: AtomicUsize = AtomicUsize::new(0);

/// Stacks the process may hold before the cap is read (module docs): 128
/// mappings, the budget at a cap of 146, where the kernel's default cap
/// is 65,530 and a small program holds 46 mappings once its pool of two
/// workers has started (`/proc/self/maps`).
const STACKS_BEFORE_READING_THE_CAP: usize = 64;

/// The most fiber stacks the process holds at once (module docs).
pub(crate) fn stack_budget() -> usize {
    static BUDGET: OnceLock<usize> = OnceLock::new();
    *BUDGET.get_or_init(|| budget_for(max_map_count()))
}

/// Stacks allowed under a cap of `max_maps` mappings per process.
fn budget_for(max_maps: Option<usize>) -> usize {
    match max_maps {
        Some(max_maps) => (max_maps - max_maps / 8) / 2,
        None => usize::MAX,
    }
}

#[cfg(target_os = "linux")]
fn max_map_count() -> Option<usize> {
    std::fs::read_to_string("/proc/sys/vm/max_map_count")
        .ok()?
        .trim()
        .parse()
        .ok()
}

#[cfg(not(target_os = "linux"))]
fn max_map_count() -> Option<usize> {
    None
}

/// Takes one stack of the budget, if any is left. Relaxed: a count that
/// publishes nothing; racing reservations overshoot by at most their
/// number, and each that does undoes itself before it maps anything.
fn reserve() -> bool {
    let live = STACKS_LIVE.fetch_add(1, Ordering::Relaxed);
    if live < STACKS_BEFORE_READING_THE_CAP || live < stack_budget() {
        return true;
    }
    release();
    false
}

fn release() {
    STACKS_LIVE.fetch_sub(1, Ordering::Relaxed);
}

/// Whether more than half the budget is in use: workers then free the
/// fibers they would keep idle, leaving the rest to waits of other
/// workers and pools.
pub(crate) fn stacks_scarce() -> bool {
    // The floor first, so that the cap is not read below it (module docs).
    let live = STACKS_LIVE.load(Ordering::Relaxed);
    live >= STACKS_BEFORE_READING_THE_CAP && live > stack_budget() / 2
}

#[cfg(unix)]
pub(crate) use mapped::FiberStack;

/// A stack of at least `size` usable bytes, or `None` if the budget is
/// spent or the operating system refuses the mapping.
#[cfg(unix)]
pub(crate) fn new_stack(size: usize) -> Option<FiberStack> {
    // Before any fiber can run on a stack: its overflow is reported
    // (fiber_overflow.rs).
    #[cfg(target_os = "linux")]
    crate::sched::fiber_overflow::install();
    if !reserve() {
        return None;
    }
    let stack = mapped::map(size);
    if stack.is_none() {
        release();
    }
    stack.flatten()
}

#[cfg(unix)]
mod mapped {
    use std::ptr;

    use corosensei::stack::{Stack, StackPointer, MIN_STACK_SIZE};

    use super::release;

    /// A fiber's stack: `len` bytes mapped at `start`, the lowest page a
    /// guard.
    pub(crate) struct FiberStack {
        start: usize,
        len: usize,
    }

    /// Maps a stack. `None`: nothing of it is left mapped (its budget may
    /// be released); `Some(None)`: it failed, and a reservation the kernel
    /// would not unmap stays mapped (its budget stays taken).
    pub(super) fn map(size: usize) -> Option<Option<FiberStack>> {
        let page = page_size();
        let usable = size.max(MIN_STACK_SIZE).checked_add(page - 1)? & !(page - 1);
        let len = usable.checked_add(page)?;
        // Without MAP_NORESERVE the kernel charges the whole writable part
        // against its commit limit when it is opened below, though only
        // the pages a task touches are ever committed.
        #[cfg(target_os = "linux")]
        let flags = libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE;
        #[cfg(not(target_os = "linux"))]
        let flags = libc::MAP_PRIVATE | libc::MAP_ANONYMOUS;
        // SAFETY: a new anonymous mapping at an address of the kernel's
        // choosing: it cannot overlap anything the process uses.
        let start = unsafe { libc::mmap(ptr::null_mut(), len, libc::PROT_NONE, flags, -1, 0) };
        if start == libc::MAP_FAILED {
            return None;
        }
        // SAFETY: `page..len` lies inside the mapping just made, which
        // nothing else knows of yet.
        let opened = unsafe {
            libc::mprotect(
                start.cast::<u8>().add(page).cast(),
                usable,
                libc::PROT_READ | libc::PROT_WRITE,
            )
        };
        if opened != 0 {
            return unmap(start as usize, len).then_some(None);
        }
        Some(Some(FiberStack {
            start: start as usize,
            len,
        }))
    }

    /// Unmaps `len` bytes at `start`; false if the kernel refused (at the
    /// mapping cap, when the range had merged with a neighbour).
    fn unmap(start: usize, len: usize) -> bool {
        // SAFETY: the range is one this module mapped and owns alone, and
        // no fiber runs on it any more (its owner is being dropped or was
        // never handed out).
        unsafe { libc::munmap(start as *mut libc::c_void, len) == 0 }
    }

    fn page_size() -> usize {
        // SAFETY: sysconf reads a constant of the system.
        let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
        usize::try_from(page).unwrap_or(4096)
    }

    impl Drop for FiberStack {
        fn drop(&mut self) {
            if unmap(self.start, self.len) {
                release();
            }
        }
    }

    // SAFETY: the range `limit..base` is mapped for as long as the value
    // lives, its lowest page is a guard with no access (an overflow faults
    // there), the usable part is at least MIN_STACK_SIZE bytes, and both
    // ends are page-aligned, so aligned to STACK_ALIGNMENT.
    unsafe impl Stack for FiberStack {
        fn base(&self) -> StackPointer {
            StackPointer::new(self.start + self.len).expect("a mapping does not end at 0")
        }

        fn limit(&self) -> StackPointer {
            StackPointer::new(self.start).expect("a mapping does not start at 0")
        }
    }
}

/// Outside Unix (Windows): `corosensei`'s own stacks, which the operating
/// system maps with no per-process cap like Linux's.
#[cfg(not(unix))]
pub(crate) use corosensei::stack::DefaultStack as FiberStack;

#[cfg(not(unix))]
pub(crate) fn new_stack(size: usize) -> Option<FiberStack> {
    if !reserve() {
        return None;
    }
    let stack = FiberStack::new(size).ok();
    if stack.is_none() {
        release();
    }
    stack
}

#[cfg(test)]
mod tests {
    use super::budget_for;

    #[test]
    fn the_budget_leaves_an_eighth_of_the_map_cap() {
        assert_eq!(budget_for(Some(65_530)), 28_669);
        assert_eq!(budget_for(None), usize::MAX);
    }
}
