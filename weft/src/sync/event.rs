//! [`Event`] and [`EventMode`]: a signalled/unsignalled flag that threads wait
//! on, auto-reset or manual-reset, and [`Event::any`] to wait on several.

use std::fmt;
use std::future::Future;
use std::sync::{Arc, Mutex, Weak};
use std::time::Instant;

use super::waiters::{block_on, lock, AsyncWaitable, Released, Slot, WaitFuture, WaiterList};

/// How an [`Event`] resets after a signal.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum EventMode {
    /// A signal releases exactly one wait: a waiting one, or else the next
    /// [`Event::wait`] or [`Event::test`], which clears it.
    Auto,
    /// A signal releases every wait and stays until [`Event::clear`].
    Manual,
}

/// A flag that threads can block on until it is signalled, after marl's
/// `Event`. Clones share one flag.
///
/// With [`EventMode::Auto`] each [`signal`](Event::signal) lets exactly one
/// wait through; with [`EventMode::Manual`] it lets every wait through until
/// [`clear`](Event::clear). Signals are not counted: signalling an event that
/// is already signalled changes nothing. In a pool task, a wait suspends the
/// task and its worker runs other tasks meanwhile (see the crate docs,
/// "Waiting inside a task").
///
/// ```
/// use weft::{Event, EventMode};
///
/// let pool = weft::Pool::builder().workers(2).build().unwrap();
/// let ready = Event::new(EventMode::Manual);
/// let signaller = ready.clone();
/// pool.spawn(move || signaller.signal());
/// ready.wait();
/// assert!(ready.is_signalled());
/// ```
#[derive(Clone)]
pub struct Event {
    shared: Arc<Shared>,
}

struct Shared {
    mode: EventMode,
    state: Mutex<State>,
    /// For an event made by [`Event::any`], its sources. They hold it only
    /// weakly; holding them here keeps a chain of `any` events connected for
    /// as long as its last event is held, even if the ones between are not.
    sources: Vec<Arc<Shared>>,
}

impl Drop for Shared {
    /// Takes a chain of `any` events apart link by link: dropping the last
    /// event of a chain a million long would otherwise recurse a million
    /// frames deep through `sources`.
    fn drop(&mut self) {
        let mut sources = std::mem::take(&mut self.sources);
        while let Some(source) = sources.pop() {
            // The last holder of a source takes its sources over, so that the
            // source itself drops with none left.
            if let Some(mut source) = Arc::into_inner(source) {
                sources.append(&mut source.sources);
            }
        }
    }
}

struct State {
    /// Only ever true while no wait is registered: a signal hands itself to a
    /// registered wait rather than setting the flag (auto), or releases them all
    /// (manual).
    signalled: bool,
    waiters: WaiterList,
    /// Events made by [`Event::any`] over this one. Weak: a dependent that
    /// nobody holds any more needs no signal.
    dependents: Vec<Weak<Shared>>,
}

impl fmt::Debug for Event {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let state = lock(&self.shared.state);
        f.debug_struct("Event")
            .field("mode", &self.shared.mode)
            .field("signalled", &state.signalled)
            .field("waiters", &state.waiters.len())
            .finish()
    }
}

impl Event {
    /// An unsignalled event.
    pub fn new(mode: EventMode) -> Event {
        Event::with_state(mode, false)
    }

    /// An event that starts signalled if `signalled`.
    pub fn with_state(mode: EventMode, signalled: bool) -> Event {
        Event::with_sources(mode, signalled, Vec::new())
    }

    fn with_sources(mode: EventMode, signalled: bool, sources: Vec<Arc<Shared>>) -> Event {
        Event {
            shared: Arc::new(Shared {
                mode,
                state: Mutex::new(State {
                    signalled,
                    waiters: WaiterList::default(),
                    dependents: Vec::new(),
                }),
                sources,
            }),
        }
    }

    /// An event of `mode` that is signalled whenever any of `events` is.
    ///
    /// As in marl, the new event is registered as a dependent of each of
    /// `events`: every later [`signal`](Event::signal) of one of them also
    /// signals it, and it starts signalled if one of them is signalled now
    /// (without consuming that one's signal, even if it is auto-reset). Clearing
    /// a source does not clear it, and it can also be signalled, cleared and
    /// waited on directly. The sources hold it only weakly, so dropping every
    /// clone of it ends the dependency (nothing accumulates in a long-lived
    /// source that `any` is called on repeatedly); it holds its sources, so a
    /// chain of `any` events stays connected while its last event is held.
    ///
    /// ```
    /// use weft::{Event, EventMode};
    ///
    /// let a = Event::new(EventMode::Manual);
    /// let b = Event::new(EventMode::Manual);
    /// let either = Event::any(EventMode::Manual, &[a.clone(), b.clone()]);
    /// assert!(!either.is_signalled());
    /// std::thread::spawn(move || b.signal());
    /// either.wait();
    /// ```
    pub fn any(mode: EventMode, events: &[Event]) -> Event {
        let sources = events
            .iter()
            .map(|event| Arc::clone(&event.shared))
            .collect();
        let any = Event::with_sources(mode, false, sources);
        let mut signalled = false;
        for event in events {
            let mut state = lock(&event.shared.state);
            state
                .dependents
                .retain(|dependent| dependent.strong_count() > 0);
            // Registered and checked under one lock: a signal either comes
            // later and finds us registered, or came before and left the flag.
            state.dependents.push(Arc::downgrade(&any.shared));
            signalled |= state.signalled;
        }
        if signalled {
            any.signal();
        }
        any
    }

    /// The mode this event was made with.
    pub fn mode(&self) -> EventMode {
        self.shared.mode
    }

    /// Signals the event: auto-reset releases the oldest waiting thread, or if
    /// none waits, stays signalled until one `wait` or `test` consumes it;
    /// manual-reset releases every waiting thread and stays signalled until
    /// [`clear`](Event::clear). Then signals every event made by
    /// [`Event::any`] over this one.
    pub fn signal(&self) {
        // A worklist, not recursion: a chain of `any` events may be any
        // length, and each link would otherwise take a stack frame. Each
        // event is signalled outside the others' locks, so no lock order
        // between events has to be kept.
        let mut pending = self.signal_one();
        while let Some(shared) = pending.pop() {
            pending.extend(Event { shared }.signal_one());
        }
    }

    /// Signals this event alone; returns its dependents, for the caller to
    /// signal in turn.
    fn signal_one(&self) -> Vec<Arc<Shared>> {
        let (released, dependents) = {
            let mut state = lock(&self.shared.state);
            let released = match self.shared.mode {
                EventMode::Auto => hand_on_auto_signal(&mut state),
                EventMode::Manual => {
                    state.signalled = true;
                    state.waiters.release_all()
                }
            };
            state
                .dependents
                .retain(|dependent| dependent.strong_count() > 0);
            let dependents: Vec<Arc<Shared>> =
                state.dependents.iter().filter_map(Weak::upgrade).collect();
            (released, dependents)
        };
        released.wake();
        dependents
    }

    /// Clears the signal. Waits already released stay released.
    pub fn clear(&self) {
        lock(&self.shared.state).signalled = false;
    }

    /// Whether the event is signalled, clearing it if it is auto-reset (so an
    /// auto-reset signal is consumed by exactly one `test` or wait).
    pub fn test(&self) -> bool {
        take_signal(self.shared.mode, &mut lock(&self.shared.state))
    }

    /// Whether the event is signalled, without consuming the signal.
    pub fn is_signalled(&self) -> bool {
        lock(&self.shared.state).signalled
    }

    timed_waits!(
        Event,
        until: "the event is signalled (consuming the signal if auto-reset)",
        returns: "the event was signalled for this wait"
    );

    /// A future ready once the event is signalled for it (consuming the
    /// signal if auto-reset): the async form of [`wait`](Event::wait). While
    /// it is pending it holds no thread; it looks at the event on its first
    /// poll. Dropping it withdraws the wait; an auto-reset signal already
    /// handed to it goes on to the next wait (or stays set), never lost.
    ///
    /// ```
    /// use weft::{Event, EventMode};
    ///
    /// let pool = weft::Pool::builder().workers(2).build().unwrap();
    /// let ready = Event::new(EventMode::Auto);
    /// let waiting = pool.spawn_future(ready.wait_async());
    /// ready.signal();
    /// waiting.join().unwrap();
    /// ```
    pub fn wait_async(&self) -> impl Future<Output = ()> + Send + 'static {
        WaitFuture::new(Arc::clone(&self.shared))
    }

    fn wait_until(&self, deadline: Option<Instant>) -> bool {
        let slot = {
            let mut state = lock(&self.shared.state);
            if take_signal(self.shared.mode, &mut state) {
                return true;
            }
            state.waiters.register()
        };
        // A release that races the timeout is kept by `block_on` (it reports
        // it), so an auto-reset signal is never swallowed by a wait that gives up.
        block_on(&self.shared.state, &slot, deadline, |state| {
            &mut state.waiters
        })
    }
}

/// Checks the event for a wait about to register (or a `test`), consuming an
/// auto-reset signal: the one place an auto-reset signal is taken. Call
/// under the event's lock.
fn take_signal(mode: EventMode, state: &mut State) -> bool {
    let signalled = state.signalled;
    if signalled && mode == EventMode::Auto {
        state.signalled = false;
    }
    signalled
}

/// Hands one auto-reset signal on: to the oldest registered wait, or, if
/// none waits, to the flag, for the next wait or `test` to take. The one place
/// an auto-reset signal is given (by `signal`, or passed on by a withdrawn
/// wait that was handed one). Call under the event's lock; wake what it
/// returns after unlocking.
fn hand_on_auto_signal(state: &mut State) -> Released {
    let released = state.waiters.release_one();
    if released.is_empty() {
        state.signalled = true;
    }
    released
}

impl AsyncWaitable for Arc<Shared> {
    type State = State;

    fn state(&self) -> &Mutex<State> {
        &self.state
    }

    fn ready(&self, state: &mut State) -> bool {
        take_signal(self.mode, state)
    }

    fn list<'a>(&self, state: &'a mut State) -> &'a mut WaiterList {
        &mut state.waiters
    }

    fn withdraw(&self, state: &mut State, slot: &Arc<Slot>) -> Released {
        if !state.waiters.withdraw(slot) || self.mode == EventMode::Manual {
            // Not released, or released by a manual signal that released
            // every wait anyway: nothing to pass on.
            return Released::default();
        }
        // An auto-reset signal was handed to this wait, which will never see
        // it: it goes to the next wait, or stays set, as a new signal would
        // (the events made by `any` over this one had theirs already).
        hand_on_auto_signal(state)
    }
}
