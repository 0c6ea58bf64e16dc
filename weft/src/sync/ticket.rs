//! [`TicketQueue`] and [`Ticket`]: critical sections that run in the order
//! their tickets were taken, after marl's `Ticket`.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::future::Future;
use std::mem;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use super::waiters::{block_on, lock, AsyncWaitable, Released, Slot, WaitFuture, WaiterList};
use crate::sched::registry::Registry;
use crate::sched::worker::WorkerThread;

/// A queue that hands out [`Ticket`]s, each *called* (allowed to run its
/// critical section) once every ticket taken before it is done.
///
/// Take tickets in the order the critical sections must run (typically on one
/// thread, while handing out work), then let the work run anywhere: each piece
/// [`wait`](Ticket::wait)s for its turn or registers the section with
/// [`on_call`](Ticket::on_call). Clones share one queue.
///
/// ```
/// use std::sync::{Arc, Mutex};
///
/// let pool = weft::Pool::builder().workers(2).build().unwrap();
/// let queue = weft::TicketQueue::new();
/// let order = Arc::new(Mutex::new(Vec::new()));
/// let wg = weft::WaitGroup::new();
/// for i in 0..8 {
///     let ticket = queue.take();
///     let (order, wg) = (Arc::clone(&order), wg.clone());
///     wg.add(1);
///     pool.spawn(move || {
///         let square = i * i; // runs in parallel, in any order
///         ticket.on_call(move || {
///             order.lock().unwrap().push(square); // runs in ticket order
///             wg.done();
///         });
///     });
/// }
/// wg.wait();
/// assert_eq!(*order.lock().unwrap(), [0, 1, 4, 9, 16, 25, 36, 49]);
/// ```
#[derive(Clone, Default)]
pub struct TicketQueue {
    shared: Arc<Shared>,
}

#[derive(Default)]
struct Shared {
    /// Serial of the oldest ticket not yet done: every ticket with a serial up
    /// to and including it is called. Written only under `state`'s lock;
    /// Release/Acquire publishes the earlier tickets' critical sections to the
    /// ticket that reads it as called.
    head: AtomicU64,
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    /// Serial the next `take` hands out.
    next: u64,
    /// Tickets done before they were called; the queue skips them when it
    /// gets to them.
    done_early: BTreeSet<u64>,
    /// Waits, by the serial of the ticket they wait to be called.
    waiters: BTreeMap<u64, WaiterList>,
    /// [`Ticket::on_call`] sections of tickets not yet called, by serial.
    callbacks: BTreeMap<u64, Callback>,
}

/// A section registered by [`Ticket::on_call`], and the pool it was
/// registered from (the pool it should run in), if any.
struct Callback {
    section: Box<dyn FnOnce() + Send>,
    pool: Option<Arc<Registry>>,
}

impl fmt::Debug for TicketQueue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let state = lock(&self.shared.state);
        f.debug_struct("TicketQueue")
            .field("taken", &state.next)
            // Relaxed: a snapshot for display only.
            .field("called", &self.shared.head.load(Ordering::Relaxed))
            .finish()
    }
}

impl TicketQueue {
    /// An empty queue: the first ticket taken is called at once.
    pub fn new() -> TicketQueue {
        TicketQueue::default()
    }

    /// Takes the next ticket. It is called once every ticket taken before it
    /// (from any clone of this queue) is done.
    pub fn take(&self) -> Ticket {
        let mut state = lock(&self.shared.state);
        let serial = state.next;
        state.next += 1;
        Ticket {
            shared: Arc::clone(&self.shared),
            serial,
            finished: AtomicBool::new(false),
        }
    }
}

impl Shared {
    fn is_called(&self, serial: u64) -> bool {
        // Acquire pairs with `complete`'s Release store of the head: the
        // called ticket sees what the tickets before it did.
        self.head.load(Ordering::Acquire) >= serial
    }

    /// Marks ticket `serial` done; if it was the one called, calls the next
    /// ticket that is not done yet.
    fn complete(self: &Arc<Self>, serial: u64) {
        let mut state = lock(&self.state);
        // Relaxed: the head is only stored under this lock, which we hold.
        let head = self.head.load(Ordering::Relaxed);
        if serial != head {
            // Tickets are done at most once and the head only moves past done
            // tickets, so a ticket that is not the head is still ahead of it.
            debug_assert!(serial > head, "ticket {serial} done twice");
            state.done_early.insert(serial);
            return;
        }
        let mut head = head + 1;
        while state.done_early.remove(&head) {
            head += 1;
        }
        // Release: pairs with `is_called`'s Acquire, which reads without the lock.
        self.head.store(head, Ordering::Release);
        let later = state.waiters.split_off(&(head + 1));
        let mut released = Released::default();
        for (_, mut list) in mem::replace(&mut state.waiters, later) {
            released.append(list.release_all());
        }
        // Only the new head is newly called: the tickets skipped on the way
        // were done already, and a done ticket has no section left to run.
        let callback = state.callbacks.remove(&head);
        drop(state);
        released.wake();
        if let Some(callback) = callback {
            self.run_callback(head, callback);
        }
    }

    /// Schedules the section of ticket `serial`, which is called; the ticket
    /// is done when the section returns (or unwinds).
    fn run_callback(self: &Arc<Self>, serial: u64, callback: Callback) {
        let ticket = Ticket {
            shared: Arc::clone(self),
            serial,
            finished: AtomicBool::new(false),
        };
        let Callback { section, pool } = callback;
        let job = move || {
            section();
            ticket.done();
        };
        schedule(pool, job);
    }
}

/// A place in a [`TicketQueue`]. It is *called* once every earlier ticket of
/// its queue is done; it becomes done by [`done`](Ticket::done),
/// [`on_call`](Ticket::on_call)'s section returning, or being dropped.
///
/// On a pool worker, [`wait`](Ticket::wait) runs other queued tasks of the pool
/// meanwhile. Mind the limit described in the crate docs: a task blocked in
/// `wait` may run, on top of its stack, a task holding a *later* ticket, which
/// then waits for the first one to finish, forever. When tickets are waited on
/// inside a pool in an order the pool does not know, prefer
/// [`on_call`](Ticket::on_call), which never blocks.
///
/// ```
/// let queue = weft::TicketQueue::new();
/// let first = queue.take();
/// let second = queue.take();
/// assert!(first.is_called());
/// assert!(!second.is_called());
/// let waiter = std::thread::spawn(move || {
///     second.wait(); // returns once `first` is done
///     second.done();
/// });
/// first.done();
/// waiter.join().unwrap();
/// ```
pub struct Ticket {
    shared: Arc<Shared>,
    serial: u64,
    /// Whether this handle already completed its ticket (or passed that duty
    /// on), so that `done` and `Drop` complete it at most once.
    finished: AtomicBool,
}

impl fmt::Debug for Ticket {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Ticket")
            .field("serial", &self.serial)
            .field("called", &self.is_called())
            // Relaxed: a snapshot for display only.
            .field("done", &self.finished.load(Ordering::Relaxed))
            .finish()
    }
}

impl Ticket {
    /// Whether every earlier ticket of the queue is done.
    pub fn is_called(&self) -> bool {
        self.shared.is_called(self.serial)
    }

    /// Blocks until this ticket is called, i.e. every earlier ticket is done.
    /// On a worker, runs other tasks meanwhile (see the type's docs for the
    /// limit of that).
    pub fn wait(&self) {
        let serial = self.serial;
        if self.shared.is_called(serial) {
            return;
        }
        let slot = {
            let mut state = lock(&self.shared.state);
            if self.shared.is_called(serial) {
                return;
            }
            state.waiters.entry(serial).or_default().register()
        };
        block_on(&self.shared.state, &slot, None, |state| {
            state.waiters.entry(serial).or_default()
        });
    }

    /// A future ready once this ticket is called: the async form of
    /// [`wait`](Ticket::wait). While it is pending it holds no thread (so,
    /// unlike `wait` on a worker, it cannot stack one ticket's wait on top of
    /// another's). Dropping it withdraws the wait.
    ///
    /// ```
    /// let pool = weft::Pool::builder().workers(1).build().unwrap();
    /// let queue = weft::TicketQueue::new();
    /// let first = queue.take();
    /// let second = queue.take();
    /// // Spawned first, on the only worker, and waiting for `first`, which
    /// // is done by a task queued behind it.
    /// let waiting = pool.spawn_future(async move {
    ///     second.wait_async().await;
    ///     second.done();
    /// });
    /// pool.spawn(move || first.done());
    /// waiting.join().unwrap();
    /// ```
    pub fn wait_async(&self) -> impl Future<Output = ()> + Send + 'static {
        WaitFuture::new(Turn {
            shared: Arc::clone(&self.shared),
            serial: self.serial,
        })
    }

    /// Marks this ticket done, letting the next one be called once this one
    /// is. Calling it again (or dropping the ticket afterwards) does nothing.
    ///
    /// A ticket may be done before it is called: it then gives up its turn,
    /// and the queue passes over it once the earlier tickets are done.
    pub fn done(&self) {
        if !self.finished.swap(true, Ordering::AcqRel) {
            self.shared.complete(self.serial);
        }
    }

    /// Runs `section` once this ticket is called, without blocking the caller;
    /// the ticket is done when `section` returns (or panics).
    ///
    /// `section` always runs as a pool task, never inline on the caller: on
    /// the pool of the worker calling `on_call` if it is a worker (or on the
    /// global pool if that pool has shut down by then), else as
    /// [`weft::spawn`](crate::spawn) would from the thread that completes the
    /// previous ticket (the global pool outside any pool). If the ticket is
    /// already called, it is scheduled at once; if it is already
    /// [`done`](Ticket::done), it no longer holds a turn and `section` is
    /// scheduled at once as well. A panic in `section` goes to the pool's panic
    /// handler.
    pub fn on_call<F>(self, section: F)
    where
        F: FnOnce() + Send + 'static,
    {
        let pool = WorkerThread::current().map(|worker| Arc::clone(worker.registry_arc()));
        let callback = Callback {
            section: Box::new(section),
            pool,
        };
        // Setting `finished` hands the duty to complete this ticket to the
        // callback (dropping `self` below completes nothing). If it was set
        // already, the ticket is done and holds no turn to wait for.
        if self.finished.swap(true, Ordering::AcqRel) {
            schedule(callback.pool, callback.section);
            return;
        }
        let mut state = lock(&self.shared.state);
        if self.shared.head.load(Ordering::Relaxed) >= self.serial {
            drop(state);
            self.shared.run_callback(self.serial, callback);
        } else {
            state.callbacks.insert(self.serial, callback);
        }
    }
}

/// Runs `job` as a task of `pool`, else as [`crate::spawn`] would from here.
fn schedule<F>(pool: Option<Arc<Registry>>, job: F)
where
    F: FnOnce() + Send + 'static,
{
    match pool {
        Some(registry) => {
            if let Err(job) = crate::api::task::spawn_in(&registry, job) {
                // That pool has shut down since; the section must still run,
                // or every later ticket would wait forever.
                crate::api::global::pool().spawn(job);
            }
        }
        None => crate::spawn(job),
    }
}

impl Drop for Ticket {
    /// Completes the ticket if nothing did, so a lost ticket (say, in a task
    /// that panicked) does not stall every later one.
    fn drop(&mut self) {
        self.done();
    }
}

/// A ticket's turn, as [`WaitFuture`] awaits it.
struct Turn {
    shared: Arc<Shared>,
    serial: u64,
}

impl AsyncWaitable for Turn {
    type State = State;

    fn state(&self) -> &Mutex<State> {
        &self.shared.state
    }

    fn ready(&self, _state: &mut State) -> bool {
        // The head only moves under this lock.
        self.shared.is_called(self.serial)
    }

    fn list<'a>(&self, state: &'a mut State) -> &'a mut WaiterList {
        state.waiters.entry(self.serial).or_default()
    }

    fn withdraw(&self, state: &mut State, slot: &Arc<Slot>) -> Released {
        // A released wait's list is gone already; a release released every
        // wait on this serial, so there is nothing to pass on.
        if let Some(list) = state.waiters.get_mut(&self.serial) {
            list.withdraw(slot);
            if list.len() == 0 {
                state.waiters.remove(&self.serial);
            }
        }
        Released::default()
    }
}
