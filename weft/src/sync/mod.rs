//! Synchronisation primitives after Google marl's: [`WaitGroup`], [`Event`],
//! [`TicketQueue`]/[`Ticket`] and [`Condvar`]. A wait in a pool task suspends
//! the task's fiber, and its worker runs other tasks until the wait is
//! released, as marl's waits do on its fibers.
//!
//! Every wait follows one protocol (see `waiters.rs`): under the primitive's
//! lock, check the condition and, if it does not hold, register the waiter;
//! unlock; then block in `crate::sched::waiter::block_until`. On a pool
//! worker that suspends the waiting task's fiber and the worker goes on with
//! other tasks, the task resuming on the same worker once released; where a
//! wait cannot suspend (see the crate docs, "Waiting inside a task") the
//! worker runs its pool's queued tasks on top of the wait instead; any other
//! thread parks. A `wait_async` registers the future's waker in the same
//! list. Whoever makes the condition true releases the registered waits
//! under the same lock and wakes them after unlocking. So a task waiting on
//! work still queued in its own pool never deadlocks its worker: the worker
//! runs that work meanwhile.
//!
//! Each primitive is a cheap `Clone` handle to shared state (except
//! [`Ticket`], which is one place in a queue), `Send` and `Sync`.
//!
//! Every wait with a time limit follows the crate's one convention (the
//! crate docs, "Waits with a time limit").

/// The three blocking waits of a primitive with a `wait_until(deadline)`
/// that waits until `$until` or the deadline and says which came first:
/// `wait`, `wait_timeout` and `wait_deadline`, written once for all of
/// them (the crate docs' "Waits with a time limit" is their contract).
macro_rules! timed_waits {
    ($primitive:ident, until: $until:literal, returns: $returns:literal) => {
        #[doc = concat!("Blocks until ", $until, ". A task on a worker suspends")]
        /// meanwhile and its worker runs other tasks.
        pub fn wait(&self) {
            self.wait_until(None);
        }

        #[doc = concat!("As [`wait`](", stringify!($primitive), "::wait), giving up after")]
        #[doc = concat!("`timeout`; returns whether ", $returns, ".")]
        pub fn wait_timeout(&self, timeout: std::time::Duration) -> bool {
            self.wait_until(crate::sched::waiter::deadline_after(timeout))
        }

        #[doc = concat!("As [`wait`](", stringify!($primitive), "::wait), giving up at")]
        #[doc = concat!("`deadline`; returns whether ", $returns, ".")]
        pub fn wait_deadline(&self, deadline: std::time::Instant) -> bool {
            self.wait_until(Some(deadline))
        }
    };
}

mod condvar;
mod event;
mod ticket;
mod wait_group;
mod waiters;

pub use condvar::{Condvar, WaitTimeoutResult};
pub use event::{Event, EventMode};
pub use ticket::{Ticket, TicketQueue};
pub use wait_group::WaitGroup;
