//! Synchronisation primitives after marl's, whose waits help on worker threads.
pub use placeholder::*;
mod placeholder {
    #[derive(Clone, Debug, Default)]
    pub struct WaitGroup;
    #[derive(Clone, Debug)]
    pub struct Event;
    #[derive(Clone, Copy, Debug)]
    pub enum EventMode { Auto, Manual }
    #[derive(Debug)]
    pub struct Ticket;
    #[derive(Clone, Debug, Default)]
    pub struct TicketQueue;
    #[derive(Debug, Default)]
    pub struct Condvar;
    impl WaitGroup { pub fn new() -> Self { WaitGroup } pub fn add(&self, _n: usize) {} pub fn done(&self) -> bool { true } pub fn wait(&self) {} }
}
