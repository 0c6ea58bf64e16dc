//! Synchronisation primitives after Google marl's, whose waits help on worker
//! threads: [`WaitGroup`], [`Event`], [`TicketQueue`]/[`Ticket`] and
//! [`Condvar`].
//!
//! Every wait follows one protocol (see `waiters.rs`): under the primitive's
//! lock, check the condition and, if it does not hold, register the calling
//! thread; unlock; then block in `crate::waiter::block_until`, which on a pool
//! worker runs other tasks of the pool until the wait is released. Whoever
//! makes the condition true releases the registered waits under the same lock
//! and wakes them after unlocking. So a worker waiting on work still queued in
//! its own pool runs that work instead of deadlocking.
//!
//! Each primitive is a cheap `Clone` handle to shared state (except
//! [`Ticket`], which is one place in a queue), `Send` and `Sync`.

mod condvar;
mod event;
mod ticket;
mod wait_group;
mod waiters;

pub use condvar::Condvar;
pub use event::{Event, EventMode};
pub use ticket::{Ticket, TicketQueue};
pub use wait_group::WaitGroup;
