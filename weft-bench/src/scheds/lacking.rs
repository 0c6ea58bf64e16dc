//! [`Lacking`]: the type of a role an adapter does not fill. It has no
//! values, so nothing of it can be built or called; a case whose fit says n/a
//! is never run, and a call that reached it anyway would be a bench bug,
//! which the `unreachable!` in its constructors names.

use super::{
    AsyncSched, BlockingCall, BlockingPrims, EventLike, ForkJoin, GateLike, Sched, TicketLike,
    TicketQueueLike, WaitGroupLike,
};
use std::future::{Future, Ready};

#[derive(Clone, Copy)]
pub enum Lacking {}

fn never<T>() -> T {
    unreachable!("a scheduler was run in a role its adapter does not fill (its fit says n/a)")
}

/// A future of the right type for the signatures below; never made.
fn never_ready() -> Ready<()> {
    never()
}

impl Sched for Lacking {
    type WaitGroup = Lacking;

    fn build(_workers: usize) -> Self {
        never()
    }

    fn spawn<F: FnOnce() + Send + 'static>(&self, _task: F) {
        match *self {}
    }

    fn worker_index() -> Option<usize> {
        never()
    }
}

impl WaitGroupLike for Lacking {
    fn new() -> Self {
        never()
    }

    fn add(&self, _n: usize) {
        match *self {}
    }

    fn done(&self) {
        match *self {}
    }

    fn wait(&self) {
        match *self {}
    }
}

impl BlockingPrims for Lacking {
    type Event = Lacking;
    type Tickets = Lacking;
}

impl EventLike for Lacking {
    fn new_auto() -> Self {
        never()
    }

    fn signal(&self) {
        match *self {}
    }

    fn wait(&self) {
        match *self {}
    }
}

impl TicketQueueLike for Lacking {
    type Ticket = Lacking;

    fn new() -> Self {
        never()
    }

    fn take(&self) -> Lacking {
        match *self {}
    }
}

impl TicketLike for Lacking {
    fn wait(&self) {
        match *self {}
    }

    fn done(self) {
        match self {}
    }
}

impl BlockingCall for Lacking {
    fn call_blocking<R>(_call: impl FnOnce() -> R) -> R {
        never()
    }
}

impl AsyncSched for Lacking {
    type Gate = Lacking;

    fn spawn_detached<F: Future<Output = ()> + Send + 'static>(&self, _future: F) {
        match *self {}
    }

    fn block_on<F: Future>(&self, _future: F) -> F::Output {
        match *self {}
    }

    fn yield_now() -> impl Future<Output = ()> + Send + 'static {
        never_ready()
    }
}

impl GateLike for Lacking {
    fn new() -> Self {
        never()
    }

    fn wait(&self) -> impl Future<Output = ()> + Send + 'static {
        never_ready()
    }

    fn release(&self) {
        match *self {}
    }
}

impl ForkJoin for Lacking {
    type Ctx<'c> = Lacking;
    type Seat<'s> = Lacking;

    fn start(_workers: usize) -> Self {
        never()
    }

    fn seat<R>(&self, _body: impl for<'s> FnOnce(&mut Self::Seat<'s>) -> R) -> R {
        match *self {}
    }

    fn enter<R: Send>(
        seat: &mut Lacking,
        _run: impl for<'c> FnOnce(&mut Self::Ctx<'c>) -> R + Send,
    ) -> R {
        match *seat {}
    }

    fn join<RA: Send, RB: Send>(
        ctx: &mut Lacking,
        _a: impl for<'c> FnOnce(&mut Self::Ctx<'c>) -> RA + Send,
        _b: impl for<'c> FnOnce(&mut Self::Ctx<'c>) -> RB + Send,
    ) -> (RA, RB) {
        match *ctx {}
    }
}
