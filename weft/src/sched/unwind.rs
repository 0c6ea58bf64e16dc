//! Panic payloads that weft drops on a user's behalf.
//!
//! A payload is user data: `std::panic::panic_any(value)` sends any `value`,
//! and its destructor may panic in turn. Wherever weft discards a payload (a
//! fire-and-forget task's panic with no handler, the second panic of a scope,
//! the half of a `join` that lost to the other's panic), a panicking
//! destructor would otherwise unwind out of weft's own bookkeeping: a worker
//! would die with its pinned tasks, or a latch would never be set.

use std::any::Any;
use std::mem;
use std::panic::{self, AssertUnwindSafe};

/// A panic's payload, as `catch_unwind` returns it.
pub(crate) type Payload = Box<dyn Any + Send>;

/// Drops `payload`, containing a panic of its destructor. The payload of that
/// second panic may be just as hostile, so it is leaked rather than dropped:
/// a few bytes lost on a path that only a panicking destructor takes.
pub(crate) fn drop_payload(payload: Payload) {
    if let Err(nested) = panic::catch_unwind(AssertUnwindSafe(move || drop(payload))) {
        mem::forget(nested);
    }
}

/// Drops `value`, which may hold user data whose destructor panics; returns
/// that panic's payload instead of unwinding.
pub(crate) fn drop_caught<T>(value: T) -> std::thread::Result<()> {
    panic::catch_unwind(AssertUnwindSafe(move || drop(value)))
}

/// Drops `value` where nobody is left to report its destructor's panic to
/// (a second panic, or a caller already unwinding): that panic's payload is
/// dropped as [`drop_payload`] drops one.
pub(crate) fn drop_contained<T>(value: T) {
    if let Err(payload) = drop_caught(value) {
        drop_payload(payload);
    }
}
