//! The synchronisation primitives the wake protocol is built from, taken from
//! `loom` when the crate is model-checked (`--cfg loom`) and from `std` otherwise.
//!
//! Only the protocol (`sleep.rs`) and what it touches use the facade's types:
//! everything loom explores must use loom's types, and nothing else need pay
//! for it. Its [`lock`] and [`wait`] are the crate's one way to take a lock:
//! outside loom the facade's types are std's, so every mutex in weft goes
//! through them.

#[cfg(loom)]
pub(crate) use loom::sync::atomic::{
    fence, AtomicBool, AtomicPtr, AtomicU64, AtomicU8, AtomicUsize, Ordering,
};
#[cfg(loom)]
pub(crate) use loom::sync::{Condvar, Mutex, MutexGuard};
#[cfg(loom)]
pub(crate) use loom::thread;

#[cfg(not(loom))]
pub(crate) use std::sync::atomic::{
    fence, AtomicBool, AtomicPtr, AtomicU64, AtomicU8, AtomicUsize, Ordering,
};
#[cfg(not(loom))]
pub(crate) use std::sync::{Condvar, Mutex, MutexGuard};
#[cfg(not(loom))]
pub(crate) use std::thread;

/// Locks a mutex, ignoring poisoning: weft's critical sections never panic
/// half-way through a change (user code runs outside its locks), so a
/// poisoned lock still guards consistent data; a user's mutex handed to
/// `Condvar` comes back as the user gave it, and is the user's to judge.
pub(crate) fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    match mutex.lock() {
        Ok(guard) => guard,
        Err(poisoned) => poisoned.into_inner(),
    }
}

/// Waits on a condition variable, ignoring poisoning for the reason given on [`lock`].
pub(crate) fn wait<'a, T>(condvar: &Condvar, guard: MutexGuard<'a, T>) -> MutexGuard<'a, T> {
    match condvar.wait(guard) {
        Ok(guard) => guard,
        Err(poisoned) => poisoned.into_inner(),
    }
}
