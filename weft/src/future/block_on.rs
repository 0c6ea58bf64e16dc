//! Waiting for a future on the calling thread ([`block_on`]) and letting other
//! tasks run from async code ([`yield_async`]).

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll, Wake, Waker};

use crate::sched::waiter::{block_until, Waiter};

/// Wakes a thread blocked in [`block_on`].
struct BlockOnWaker {
    woken: AtomicBool,
    waiter: Waiter,
}

impl Wake for BlockOnWaker {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        // Release: the woken thread's Acquire load sees what was written
        // before the wake.
        self.woken.store(true, Ordering::Release);
        self.waiter.wake();
    }
}

/// Runs `future` to completion on the calling thread and returns its output.
///
/// In a pool task, the task suspends while the future is pending and its
/// worker runs other tasks (as every wait in weft does; see the crate docs,
/// "Waiting inside a task"); any other thread parks.
///
/// ```
/// let pool = weft::Pool::builder().workers(2).build().unwrap();
/// let handle = pool.spawn_future(async { "done" });
/// assert_eq!(weft::block_on(async { handle.await.unwrap() }), "done");
/// ```
pub fn block_on<F: Future>(future: F) -> F::Output {
    let mut future = std::pin::pin!(future);
    let wake = Arc::new(BlockOnWaker {
        woken: AtomicBool::new(false),
        waiter: Waiter::current(),
    });
    let waker = Waker::from(Arc::clone(&wake));
    let mut cx = Context::from_waker(&waker);
    loop {
        if let Poll::Ready(output) = future.as_mut().poll(&mut cx) {
            return output;
        }
        // Acquire pairs with the waker's Release store (`wake_by_ref`).
        block_until(&|| wake.woken.load(Ordering::Acquire), None);
        // Cleared before the next poll: a wake from now on is for that poll
        // or a later one, and is seen by the check above next time round.
        // Relaxed: the Acquire load in `block_until` already synchronised.
        wake.woken.store(false, Ordering::Relaxed);
    }
}

/// A future that is pending once, waking itself, so that other tasks get to
/// run before the awaiting task goes on: a spawned future is queued behind the
/// pool's other work. The async yield, for futures; a closure task yields
/// with the synchronous [`weft::yield_now`](crate::yield_now) instead, which
/// runs one pending task in place.
///
/// The two cannot be mixed up silently: `weft::yield_now().await` does not
/// compile, since the synchronous function's `Option<Yield>` is no future.
///
/// ```
/// let pool = weft::Pool::builder().workers(1).build().unwrap();
/// let order = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
/// let log = order.clone();
/// let handle = pool.spawn_future(async move {
///     let other = {
///         let log = log.clone();
///         weft::spawn_future(async move { log.lock().unwrap().push("other") })
///     };
///     weft::yield_async().await;
///     log.lock().unwrap().push("after yield");
///     other.await.unwrap();
/// });
/// handle.join().unwrap();
/// assert_eq!(*order.lock().unwrap(), ["other", "after yield"]);
/// ```
pub fn yield_async() -> YieldNow {
    YieldNow { yielded: false }
}

/// The future of [`yield_async`].
#[derive(Debug)]
#[must_use = "futures do nothing unless awaited"]
pub struct YieldNow {
    yielded: bool,
}

impl Future for YieldNow {
    type Output = ();

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        if self.yielded {
            return Poll::Ready(());
        }
        self.yielded = true;
        cx.waker().wake_by_ref();
        Poll::Pending
    }
}
