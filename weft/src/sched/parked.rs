//! Tasks that may wait for a wake nobody will send: the list a pool keeps of
//! them, and the sweep that abandons them once the pool has terminated.
//!
//! The core knows nothing of what such a task is (futures are the only kind
//! today, future.rs); it holds them through [`Parked`], weakly, so the list
//! never keeps a task alive, and sweeps them when its last worker leaves
//! (registry.rs, "Shutdown"): nothing can run them any more.

use std::sync::{Arc, Weak};

use crate::facade::Mutex;

use crate::facade::lock;

/// What the sweep needs of a parked task, whatever it is.
pub(crate) trait Parked: Send + Sync {
    /// Abandons the task if it is still waiting for a wake: it will never
    /// run again, and whoever waits for its result learns so.
    fn abandon_if_waiting(&self);
    /// Whether the task has finished (it may be pruned from the list).
    fn is_done(&self) -> bool;
}

/// One pool's parked tasks, weakly; pruned of finished and freed tasks as
/// it grows.
pub(crate) struct ParkedTasks(Mutex<ParkedList>);

struct ParkedList {
    tasks: Vec<Weak<dyn Parked>>,
    /// Length at which the next push prunes the list first.
    prune_at: usize,
}

impl Default for ParkedTasks {
    fn default() -> Self {
        ParkedTasks(Mutex::new(ParkedList {
            tasks: Vec::new(),
            prune_at: 64,
        }))
    }
}

impl ParkedTasks {
    /// Lists `task`; the caller lists each task at most once.
    pub(crate) fn list(&self, task: Weak<dyn Parked>) {
        // Tasks upgraded while pruning are dropped after unlocking: the last
        // reference to one may be ours, and its destructor may do anything,
        // including dropping a pool (which takes its own list's lock).
        let mut upgraded = Vec::new();
        let mut parked = lock(&self.0);
        if parked.tasks.len() >= parked.prune_at {
            parked.tasks.retain(|task| match task.upgrade() {
                Some(task) => {
                    let keep = !task.is_done();
                    upgraded.push(task);
                    keep
                }
                None => false,
            });
            parked.prune_at = (parked.tasks.len() * 2).max(64);
        }
        parked.tasks.push(task);
        drop(parked);
        drop(upgraded);
    }

    /// Abandons every listed task still waiting for a wake. Called once the
    /// pool has terminated: nothing can run those tasks any more.
    pub(crate) fn abandon_waiting(&self) {
        let listed = std::mem::take(&mut lock(&self.0).tasks);
        // Outside the list's lock: abandoning a task may wake or drop others,
        // or a pool, which may take it.
        let tasks: Vec<Arc<dyn Parked>> = listed.iter().filter_map(Weak::upgrade).collect();
        drop(listed);
        for task in &tasks {
            task.abandon_if_waiting();
        }
    }
}
