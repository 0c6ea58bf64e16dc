//! The bench's own completion counter. Scenarios that measure scheduling alone
//! (not a scheduler's wait primitive) wait with this, identical for every
//! scheduler: one atomic decrement per task, a condvar only for the last one.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Condvar, Mutex};

pub struct Latch {
    left: AtomicUsize,
    open: Mutex<bool>,
    cv: Condvar,
}

impl Latch {
    pub fn new(count: usize) -> Self {
        Latch {
            left: AtomicUsize::new(count),
            open: Mutex::new(count == 0),
            cv: Condvar::new(),
        }
    }

    pub fn count_down(&self) {
        if self.left.fetch_sub(1, Ordering::AcqRel) == 1 {
            *self.open.lock().unwrap() = true;
            self.cv.notify_all();
        }
    }

    pub fn wait(&self) {
        let mut open = self.open.lock().unwrap();
        while !*open {
            open = self.cv.wait(open).unwrap();
        }
    }
}
