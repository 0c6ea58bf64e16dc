//! Synchronisation primitives after Google marl's, whose waits help on worker
//! threads: [`WaitGroup`], [`Event`], [`TicketQueue`]/[`Ticket`] and
//! [`Condvar`].
//!
//! Every wait follows one protocol (see `waiters.rs`): under the primitive's
//! lock, check the condition and, if it does not hold, register the calling
//! thread; unlock; then block in `crate::sched::waiter::block_until`, which on a pool
//! worker runs other tasks of the pool until the wait is released. Whoever
//! makes the condition true releases the registered waits under the same lock
//! and wakes them after unlocking. So a worker waiting on work still queued in
//! its own pool runs that work instead of deadlocking.
//!
//! Each primitive is a cheap `Clone` handle to shared state (except
//! [`Ticket`], which is one place in a queue), `Send` and `Sync`.
//!
//! # Waits with a time limit
//!
//! Every blocking wait of weft has two limited forms, named alike:
//! `*_timeout(Duration)` and `*_deadline(Instant)` ([`Event::wait_timeout`],
//! [`WaitGroup::wait_deadline`], [`Condvar::wait_timeout`],
//! [`JoinHandle::join_deadline`](crate::JoinHandle::join_deadline), ...).
//! Each says whether what it waited for happened: `true` (or `Ok` with the
//! task's result) if it did, `false` (or the handle back in `Err`, to wait
//! again) if time ran out first. The one exception keeps std's shape, so
//! that code moves over from `std::sync::Condvar` unchanged: `Condvar`'s
//! limited waits return the guard with a [`WaitTimeoutResult`], whose
//! [`timed_out`](WaitTimeoutResult::timed_out) says the opposite. Any
//! duration is accepted: a timeout past what `Instant` can hold
//! (`Duration::MAX`) waits without a limit, and a deadline already passed
//! checks once and returns.

mod condvar;
mod event;
mod ticket;
mod wait_group;
mod waiters;

pub use condvar::{Condvar, WaitTimeoutResult};
pub use event::{Event, EventMode};
pub use ticket::{Ticket, TicketQueue};
pub use wait_group::WaitGroup;
