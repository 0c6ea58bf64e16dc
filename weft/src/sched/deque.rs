//! The work-stealing queues: crossbeam's deques, or under `--cfg loom` a
//! stand-in with the same interface whose every access is a step loom sees.
//!
//! crossbeam's deques synchronise through std's atomics, which loom cannot
//! see: a model over them would treat a push and a concurrent sweep of the
//! same queue as independent, and never try them in the other order. The
//! stand-in is a mutex around a `VecDeque` per queue: each push, pop and
//! steal is one step, and a batch steal is two (take from the source, then
//! put into the taker's queue), so the moment a batch is in neither queue is
//! explored too, as it happens with crossbeam. What the models check is the
//! protocol around the queues (who looks where, and when), not crossbeam.

#[cfg(not(loom))]
pub(crate) use crossbeam_deque::{Injector, Steal, Stealer, Worker};

#[cfg(loom)]
pub(crate) use self::model::{Injector, Steal, Stealer, Worker};

#[cfg(loom)]
mod model {
    use std::collections::VecDeque;
    use std::sync::Arc;

    use loom::sync::Mutex;

    /// What a steal found, as crossbeam's `Steal` (no `Retry`: a steal here
    /// never loses a race half-way).
    pub(crate) enum Steal<T> {
        Empty,
        Success(T),
        #[allow(dead_code)]
        Retry,
    }

    type Shared<T> = Arc<Mutex<VecDeque<T>>>;

    /// The owner's end of a seat's queue.
    pub(crate) struct Worker<T> {
        queue: Shared<T>,
        /// Whether the owner pops its newest task (LIFO) or its oldest.
        lifo: bool,
    }

    /// A thief's end of a seat's queue: takes the oldest task.
    pub(crate) struct Stealer<T> {
        queue: Shared<T>,
    }

    /// A queue anyone pushes to and takes from, oldest first: a thief's end
    /// that anyone may also push to.
    pub(crate) struct Injector<T> {
        queue: Stealer<T>,
    }

    fn take_half<T>(queue: &mut VecDeque<T>) -> Vec<T> {
        let count = queue.len().div_ceil(2);
        queue.drain(..count).collect()
    }

    /// The second step of a batch steal: the first task taken runs now, the
    /// rest go to the taker's queue.
    fn land<T>(mut batch: Vec<T>, dest: &Worker<T>) -> Steal<T> {
        if batch.is_empty() {
            return Steal::Empty;
        }
        let first = batch.remove(0);
        if !batch.is_empty() {
            dest.queue.lock().unwrap().extend(batch);
        }
        Steal::Success(first)
    }

    impl<T> Worker<T> {
        pub(crate) fn new_lifo() -> Worker<T> {
            Worker {
                queue: Arc::default(),
                lifo: true,
            }
        }

        pub(crate) fn new_fifo() -> Worker<T> {
            Worker {
                queue: Arc::default(),
                lifo: false,
            }
        }

        pub(crate) fn stealer(&self) -> Stealer<T> {
            Stealer {
                queue: Arc::clone(&self.queue),
            }
        }

        pub(crate) fn push(&self, task: T) {
            self.queue.lock().unwrap().push_back(task);
        }

        pub(crate) fn pop(&self) -> Option<T> {
            let mut queue = self.queue.lock().unwrap();
            if self.lifo {
                queue.pop_back()
            } else {
                queue.pop_front()
            }
        }

        pub(crate) fn is_empty(&self) -> bool {
            self.queue.lock().unwrap().is_empty()
        }
    }

    impl<T> Stealer<T> {
        pub(crate) fn steal(&self) -> Steal<T> {
            match self.queue.lock().unwrap().pop_front() {
                Some(task) => Steal::Success(task),
                None => Steal::Empty,
            }
        }

        pub(crate) fn steal_batch_and_pop(&self, dest: &Worker<T>) -> Steal<T> {
            let batch = take_half(&mut self.queue.lock().unwrap());
            land(batch, dest)
        }

        pub(crate) fn is_empty(&self) -> bool {
            self.queue.lock().unwrap().is_empty()
        }
    }

    impl<T> Injector<T> {
        pub(crate) fn new() -> Injector<T> {
            Injector {
                queue: Stealer {
                    queue: Arc::default(),
                },
            }
        }

        pub(crate) fn push(&self, task: T) {
            self.queue.queue.lock().unwrap().push_back(task);
        }

        pub(crate) fn steal(&self) -> Steal<T> {
            self.queue.steal()
        }

        pub(crate) fn steal_batch_and_pop(&self, dest: &Worker<T>) -> Steal<T> {
            self.queue.steal_batch_and_pop(dest)
        }

        pub(crate) fn is_empty(&self) -> bool {
            self.queue.is_empty()
        }
    }
}
