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

/// A thief's take from another seat's queue: the oldest task, to run now,
/// and up to half of the rest moved into the thief's own queue (`dest`).
///
/// Why not crossbeam's `steal_batch_and_pop`: from a LIFO queue (a seat's
/// local queue) it takes the batch one task at a time and hands back the
/// *last* one taken, the newest of the batch, leaving the oldest at the
/// bottom of the thief's queue, under everything the thief pushes next. A
/// divide-and-conquer owner's oldest task is its largest piece (the first
/// second half of a split); taken that way, it passes from thief to thief
/// unrun while younger pieces keep splitting, and a search for the last
/// match (rayon's `find_last`) cannot stop before that piece runs
/// (docs/RAYON.md, "Session 21"). Here the oldest task runs, as a single
/// steal would take it, and the batch moves after it. The two steps cost
/// what crossbeam's one does from a LIFO queue (a compare-and-swap a task
/// either way) plus one fence; a queue emptied in between leaves the
/// thief with its one task.
pub(crate) fn steal_oldest_and_batch<T>(source: &Stealer<T>, dest: &Worker<T>) -> Steal<T> {
    match source.steal() {
        Steal::Success(task) => {
            // What the batch finds (nothing, a race lost) changes nothing:
            // the task taken runs either way.
            let _ = source.steal_batch(dest);
            Steal::Success(task)
        }
        other => other,
    }
}

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

        /// Moves up to half of the queue, oldest first, into `dest`, in
        /// two steps as a batch steal.
        pub(crate) fn steal_batch(&self, dest: &Worker<T>) -> Steal<()> {
            let batch = take_half(&mut self.queue.lock().unwrap());
            if batch.is_empty() {
                return Steal::Empty;
            }
            dest.queue.lock().unwrap().extend(batch);
            Steal::Success(())
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

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    fn drain(worker: &Worker<u32>) -> Vec<u32> {
        std::iter::from_fn(|| worker.pop()).collect()
    }

    #[test]
    fn a_thief_runs_the_oldest_task_of_a_lifo_queue_and_moves_part_of_the_rest() {
        let victim = Worker::new_lifo();
        for task in 0..8 {
            victim.push(task);
        }
        let thief = Worker::new_lifo();
        match steal_oldest_and_batch(&victim.stealer(), &thief) {
            Steal::Success(task) => assert_eq!(task, 0, "not the oldest task"),
            _ => panic!("nothing stolen from a queue of 8"),
        }
        let (moved, left) = (drain(&thief), drain(&victim));
        assert!(!moved.is_empty(), "no batch moved");
        let mut all: Vec<u32> = moved.iter().chain(&left).copied().collect();
        all.sort_unstable();
        assert_eq!(all, (1..8).collect::<Vec<_>>(), "a task lost or doubled");
        // The batch is the oldest of the rest.
        assert!(moved.iter().all(|m| left.iter().all(|l| m < l)));
    }

    #[test]
    fn a_thief_takes_the_last_task_alone_and_finds_an_empty_queue_empty() {
        let victim = Worker::new_lifo();
        let thief = Worker::new_lifo();
        assert!(matches!(
            steal_oldest_and_batch(&victim.stealer(), &thief),
            Steal::Empty
        ));
        victim.push(7u32);
        assert!(matches!(
            steal_oldest_and_batch(&victim.stealer(), &thief),
            Steal::Success(7)
        ));
        assert!(thief.is_empty() && victim.is_empty());
    }
}
