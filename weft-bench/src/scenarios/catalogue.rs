//! The scenario catalogue: every case's name, one-line description, unit,
//! sizes per mode, and which schedulers can express it (with the primitive
//! that stands in for weft's, or the reason it is n/a).

use crate::scheds::SchedKind;

/// How big a run is: the smoke test, the default quick suite, or --full.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    Smoke,
    Quick,
    Full,
}

impl Mode {
    pub fn name(self) -> &'static str {
        match self {
            Mode::Smoke => "smoke",
            Mode::Quick => "quick",
            Mode::Full => "full",
        }
    }
}

/// Whether a scheduler can run a scenario, and with what.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Fit {
    /// Runs it; the note names the primitive used where it is an equivalent.
    Yes(&'static str),
    /// Cannot express it; the note says why.
    No(&'static str),
}

pub struct Case {
    pub scenario: &'static str,
    pub variant: &'static str,
    pub about: &'static str,
    pub unit: &'static str,
    pub higher_is_better: bool,
    /// Size in smoke, quick and full mode (meaning per scenario, see `about`).
    pub sizes: [u64; 3],
    pub fit: fn(SchedKind, usize) -> Fit,
}

impl Case {
    pub fn size(&self, mode: Mode) -> u64 {
        match mode {
            Mode::Smoke => self.sizes[0],
            Mode::Quick => self.sizes[1],
            Mode::Full => self.sizes[2],
        }
    }

    pub fn name(&self) -> String {
        crate::record::case_name(self.scenario, self.variant)
    }

    /// `--only` accepts a family ("marl"), a scenario ("marl/fork-join") or
    /// a case ("marl/fork-join sleep").
    pub fn matches(&self, filter: &str) -> bool {
        let family = self.scenario.split('/').next().unwrap_or("");
        filter == family || filter == self.scenario || filter == self.name()
    }
}

fn spawn_pools(kind: SchedKind, _workers: usize) -> Fit {
    match kind {
        SchedKind::Weft => Fit::Yes(""),
        SchedKind::Rayon => Fit::Yes("ThreadPool::spawn"),
        SchedKind::Tokio => Fit::Yes("Runtime::spawn"),
        SchedKind::Threadpool => Fit::Yes("ThreadPool::execute"),
        SchedKind::Chili => Fit::No("join only: no way to submit independent tasks"),
        SchedKind::Std => Fit::No("no pool: one OS thread per task does not fit this many tasks"),
        SchedKind::AsyncExecutor => ASYNC_ONLY,
    }
}

/// The wake scenarios also run on bare threads (`std`), as the machine's
/// floor rather than as a peer.
fn wake_fit(kind: SchedKind, workers: usize) -> Fit {
    match kind {
        SchedKind::Std => BARE_THREADS,
        _ => spawn_pools(kind, workers),
    }
}

/// async-executor runs futures only; it is compared on the async/* cases.
const ASYNC_ONLY: Fit = Fit::No("async only: runs futures, compared on the async/* scenarios");

/// The `std` row of the fork-join and wake scenarios: the machine's floor.
const BARE_THREADS: Fit = Fit::Yes(
    "floor, no scheduler: threads started up front, each blocked on its own channel, \
     handed its tasks by the submitter directly",
);

fn fork_join_fit(kind: SchedKind, workers: usize) -> Fit {
    match kind {
        SchedKind::Std => BARE_THREADS,
        _ => wait_group_fit(kind, workers),
    }
}

fn wait_group_fit(kind: SchedKind, workers: usize) -> Fit {
    match kind {
        SchedKind::Weft => Fit::Yes("weft::WaitGroup"),
        SchedKind::Rayon | SchedKind::Threadpool | SchedKind::Tokio => {
            Fit::Yes("std Mutex+Condvar counter (no wait group of its own)")
        }
        _ => spawn_pools(kind, workers),
    }
}

// weft runs event-chain, event-baton and ticket as futures, the way tokio
// does: a blocking wait on a worker helps by running queued tasks on its own
// stack, and in these shapes the helped task waits for the task beneath it,
// so the worker deadlocks (the documented limit, crate docs "Waiting on a
// worker helps"). Outside the pool weft::block_on parks without helping.

fn event_fit(kind: SchedKind, workers: usize) -> Fit {
    match kind {
        SchedKind::Weft => Fit::Yes(
            "weft::Event (auto) wait_async in Pool::spawn_future tasks, waited for with \
             weft::block_on outside the pool (a blocking wait on a worker helps, and \
             deadlocks on this shape: crate docs)",
        ),
        SchedKind::Rayon | SchedKind::Threadpool => {
            Fit::Yes("std Mutex+Condvar auto-reset event, blocking the worker")
        }
        SchedKind::Tokio => Fit::Yes("tokio::sync::Notify, awaited in async tasks"),
        _ => spawn_pools(kind, workers),
    }
}

fn baton_fit(kind: SchedKind, workers: usize) -> Fit {
    let blocking = matches!(kind, SchedKind::Rayon | SchedKind::Threadpool);
    if blocking && workers < 2 {
        // marl runs both tasks as fibers on one thread; a blocking wait
        // cannot, so one worker would hold one task forever.
        return Fit::No("two tasks that block each other need 2 workers without fibers");
    }
    event_fit(kind, workers)
}

fn ticket_fit(kind: SchedKind, workers: usize) -> Fit {
    match kind {
        SchedKind::Weft => Fit::Yes(
            "weft::Ticket wait_async in Pool::spawn_future tasks, waited for with \
             weft::block_on outside the pool (a blocking wait on a worker helps, and \
             deadlocks on this shape: crate docs)",
        ),
        SchedKind::Rayon | SchedKind::Threadpool => {
            Fit::Yes("chain of std Mutex+Condvar gates, blocking the worker")
        }
        SchedKind::Tokio => Fit::Yes("chain of tokio::sync::oneshot, awaited in async tasks"),
        _ => spawn_pools(kind, workers),
    }
}

fn idle_fit(kind: SchedKind, workers: usize) -> Fit {
    match kind {
        SchedKind::Chili => Fit::Yes("burst of joins (its only API), then idle"),
        _ => spawn_pools(kind, workers),
    }
}

fn join_fit(kind: SchedKind, _workers: usize) -> Fit {
    match kind {
        SchedKind::Weft => Fit::Yes("weft::join inside Pool::install"),
        SchedKind::Rayon => Fit::Yes("rayon::join inside ThreadPool::install"),
        SchedKind::Chili => Fit::Yes("Scope::join"),
        SchedKind::Tokio => Fit::No("no fork-join: tokio::join! is not parallel"),
        SchedKind::Threadpool => Fit::No("no fork-join: a blocking join would deadlock"),
        SchedKind::Std => Fit::No("one OS thread per join does not fit millions of joins"),
        SchedKind::AsyncExecutor => Fit::No("no fork-join: runs futures only"),
    }
}

/// The async/* cases run on runtimes of futures only; the notes name what
/// weft, tokio and async-executor (`smol`) use. The submitter always waits
/// with the runtime's own block_on.
fn async_fit(kind: SchedKind, weft: &'static str, tokio: &'static str, smol: &'static str) -> Fit {
    match kind {
        SchedKind::Weft => Fit::Yes(weft),
        SchedKind::Tokio => Fit::Yes(tokio),
        SchedKind::AsyncExecutor => Fit::Yes(smol),
        SchedKind::Rayon | SchedKind::Threadpool => {
            Fit::No("no futures: runs closures only (a blocking executor per task is not a peer)")
        }
        SchedKind::Chili => Fit::No("no futures: join only"),
        SchedKind::Std => Fit::No("no futures: no executor"),
    }
}

fn spawn_future_fit(kind: SchedKind, _workers: usize) -> Fit {
    async_fit(
        kind,
        "Pool::spawn_future, weft::block_on",
        "Runtime::spawn, Runtime::block_on",
        "Executor::spawn + detach, futures_lite::future::block_on",
    )
}

fn ping_pong_fit(kind: SchedKind, _workers: usize) -> Fit {
    async_fit(
        kind,
        "Pool::spawn_future, futures-channel oneshot",
        "Runtime::spawn, futures-channel oneshot",
        "Executor::spawn + detach, futures-channel oneshot",
    )
}

fn yield_fit(kind: SchedKind, _workers: usize) -> Fit {
    async_fit(
        kind,
        "weft::yield_now",
        "tokio::task::yield_now",
        "futures_lite::future::yield_now",
    )
}

fn gate_fit(kind: SchedKind, _workers: usize) -> Fit {
    async_fit(
        kind,
        "weft::Event (manual) wait_async, signal",
        "tokio::sync::Notify notified, notify_waiters",
        "event_listener::Event listen, notify(all)",
    )
}

/// blocking/* compares the pools' stand-in APIs; `direct` is the note for
/// rayon and threadpool, which have none and make the call in the task, or
/// `None` where only the stand-in's own cost is measured (n/a for them).
fn blocking_fit(
    kind: SchedKind,
    weft: &'static str,
    tokio: &'static str,
    direct: Option<[&'static str; 2]>,
) -> Fit {
    match (kind, direct) {
        (SchedKind::Weft, _) => Fit::Yes(weft),
        (SchedKind::Tokio, _) => Fit::Yes(tokio),
        (SchedKind::Rayon, Some([rayon, _])) => Fit::Yes(rayon),
        (SchedKind::Threadpool, Some([_, threadpool])) => Fit::Yes(threadpool),
        (SchedKind::Rayon | SchedKind::Threadpool, None) => Fit::No(
            "no stand-in to lend: a direct empty call is an empty task (marl/empty); \
             plain_ns on the weft and tokio rows is that floor",
        ),
        (SchedKind::Chili, _) => Fit::No("join only: no way to submit independent tasks"),
        (SchedKind::Std, _) => Fit::No("no pool: a thread per task has no worker to stand in for"),
        (SchedKind::AsyncExecutor, _) => Fit::No(
            "no stand-in API: runs futures only; blocking calls go to another \
             thread pool (blocking::unblock), not a stand-in for the worker",
        ),
    }
}

fn empty_call_fit(kind: SchedKind, _workers: usize) -> Fit {
    blocking_fit(
        kind,
        "weft::blocking(|| ()) in Pool::spawn tasks",
        "tokio::task::block_in_place(|| ()) in Runtime::spawn tasks",
        None,
    )
}

fn capacity_fit(kind: SchedKind, _workers: usize) -> Fit {
    blocking_fit(
        kind,
        "weft::blocking(|| thread::sleep(20 ms)) in Pool::spawn tasks",
        "tokio::task::block_in_place(|| thread::sleep(20 ms)) in Runtime::spawn tasks",
        Some([
            "no stand-in: thread::sleep(20 ms) called directly in ThreadPool::spawn tasks",
            "no stand-in: thread::sleep(20 ms) called directly in ThreadPool::execute tasks",
        ]),
    )
}

/// Every case, in report order. Sizes: [smoke, quick, full].
pub fn catalogue() -> Vec<Case> {
    let mut cases = vec![
        Case {
            scenario: "marl/empty",
            variant: "",
            about: "N empty tasks (each holds only a reference to the completion counter, like marl's `wg.done()` task) submitted from an outside thread, wait for all (size = N)",
            unit: "ns/task",
            higher_is_better: false,
            sizes: [1_000, 65_536, 262_144],
            fit: spawn_pools,
        },
        Case {
            scenario: "marl/empty",
            variant: "boxed",
            about: "as marl/empty, but each closure also carries three words it does not use (32 bytes in all), which every scheduler, weft too, allocates per task",
            unit: "ns/task",
            higher_is_better: false,
            sizes: [1_000, 65_536, 262_144],
            fit: spawn_pools,
        },
        Case {
            scenario: "marl/some-work",
            variant: "",
            about: "N tasks of a fixed 10k-iteration integer loop (marl's doSomeWork shape; marl uses 100k), wait for all",
            unit: "ns/task",
            higher_is_better: false,
            sizes: [100, 8_192, 262_144],
            fit: spawn_pools,
        },
        Case {
            scenario: "marl/fork-join",
            variant: "cpu",
            about: "rounds of one task per worker (256 x some-work each), wait after each; ideal/actual time (ideal: task CPU spread over min(workers, cores)); full_rounds = rounds that used every worker",
            unit: "ideal/actual",
            higher_is_better: true,
            sizes: [2, 12, 50],
            fit: fork_join_fit,
        },
        Case {
            scenario: "marl/fork-join",
            variant: "sleep",
            about: "rounds of one 10 ms sleeping task per worker (marl #232), wait after each; ideal/actual time (ideal: 10 ms a round); full_rounds as above",
            unit: "ideal/actual",
            higher_is_better: true,
            sizes: [2, 10, 50],
            fit: fork_join_fit,
        },
        Case {
            scenario: "marl/fork-join",
            variant: "sleep x3",
            about: "rounds of three 10 ms sleeping tasks per worker (marl #232's second shape), wait after each; ideal/actual time (ideal: 30 ms a round, each worker running three in turn); full_rounds as above",
            unit: "ideal/actual",
            higher_is_better: true,
            sizes: [2, 6, 30],
            fit: fork_join_fit,
        },
        Case {
            scenario: "marl/wait-group",
            variant: "",
            about: "rounds of 64 empty tasks that each call done(); the submitter waits on the group",
            unit: "us/round",
            higher_is_better: false,
            sizes: [5, 1_000, 10_000],
            fit: wait_group_fit,
        },
        Case {
            scenario: "marl/event-chain",
            variant: "",
            about: "chains of 512 tasks: task i waits on event i then signals i+1 (size = chains)",
            unit: "ns/hop",
            higher_is_better: false,
            sizes: [1, 20, 200],
            fit: event_fit,
        },
        Case {
            scenario: "marl/event-baton",
            variant: "",
            about: "two tasks pass control back and forth through two auto events (size = passes)",
            unit: "ns/pass",
            higher_is_better: false,
            sizes: [100, 20_000, 200_000],
            fit: baton_fit,
        },
        Case {
            scenario: "marl/ticket",
            variant: "",
            about: "queues of 512 tasks, each takes a ticket in order, waits its turn, done (size = queues)",
            unit: "ns/ticket",
            higher_is_better: false,
            sizes: [1, 20, 200],
            fit: ticket_fit,
        },
    ];
    for variant in ["k=1", "k=16", "k=64", "k=1000"] {
        cases.push(Case {
            scenario: "tpcpp/throughput",
            variant,
            about: "K tasks in flight, each posts its successor, N tasks in all (size = N)",
            unit: "ns/task",
            higher_is_better: false,
            sizes: [2_000, 100_000, 1_000_000],
            fit: spawn_pools,
        });
    }
    cases.extend([
        Case {
            scenario: "tpcpp/mandelbrot",
            variant: "pixels",
            about: "one task per pixel of a side x side image (2500 in --full); checksum checked",
            unit: "ms",
            higher_is_better: false,
            sizes: [32, 300, 2_500],
            fit: spawn_pools,
        },
        Case {
            scenario: "tpcpp/mandelbrot",
            variant: "chains",
            about: "same image as 64 task chains, each pixel task posts the next; checksum checked",
            unit: "ms",
            higher_is_better: false,
            sizes: [32, 300, 2_500],
            fit: spawn_pools,
        },
        Case {
            scenario: "tpcpp/idle",
            variant: "",
            about: "CPU used by a pool left idle after a burst of 10,000 tasks, from the moment the burst is done (size = idle ms; first 50 ms and the rest in extras)",
            unit: "cpu ms",
            higher_is_better: false,
            sizes: [50, 500, 2_000],
            fit: idle_fit,
        },
        Case {
            scenario: "go/trickle",
            variant: "",
            about: "one producer submits a 2-5 us task every 20-100 us; pool CPU / useful CPU (size = ms)",
            unit: "cpu/useful",
            higher_is_better: false,
            sizes: [50, 400, 3_000],
            fit: spawn_pools,
        },
        Case {
            scenario: "wake/latency",
            variant: "",
            about: "one task submitted to a parked pool (each round waits until no worker is runnable and the process used under 10% of a core for 2 ms, then 1 ms; that wait's own CPU is left out): submit-to-start p50 (p99 in extras; samples_parked = rounds that went quiet)",
            unit: "us p50",
            higher_is_better: false,
            sizes: [5, 80, 400],
            fit: wake_fit,
        },
        Case {
            scenario: "wake/fan-out",
            variant: "",
            about: "T = workers tasks (each holds its worker 1 ms) to T parked workers (waited for as in wake/latency); time until the last starts; tasks record their starts in place, only the last wakes the submitter",
            unit: "us p50",
            higher_is_better: false,
            sizes: [3, 40, 200],
            fit: wake_fit,
        },
        Case {
            scenario: "join/fib",
            variant: "",
            about: "fib(n) by recursive join, no cutoff (size = n)",
            unit: "ns/join",
            higher_is_better: false,
            sizes: [15, 27, 32],
            fit: join_fit,
        },
        Case {
            scenario: "join/tree-sum",
            variant: "",
            about: "sum of a balanced binary tree by join at every inner node (chili's benchmark; size = layers)",
            unit: "ns/join",
            higher_is_better: false,
            sizes: [10, 20, 24],
            fit: join_fit,
        },
        Case {
            scenario: "async/chained-spawn",
            variant: "",
            about: "tokio's chained_spawn: a future spawns a future that spawns ... 1,000 deep, the last reports on a oneshot; the submitter's block_on waits (size = chains)",
            unit: "ns/spawn",
            higher_is_better: false,
            sizes: [2, 100, 1_000],
            fit: spawn_future_fit,
        },
        Case {
            scenario: "async/ping-pong",
            variant: "",
            about: "tokio's ping_pong: one future spawns 1,000 pings; each spawns its pong and does one round trip over two futures-channel oneshots (size = batches; figure per round trip)",
            unit: "ns/round trip",
            higher_is_better: false,
            sizes: [2, 50, 500],
            fit: ping_pong_fit,
        },
        Case {
            scenario: "async/spawn-many",
            variant: "",
            about: "tokio's spawn_many: one future spawns 10,000 empty futures that count down; the submitter's block_on waits for the last (size = batches)",
            unit: "ns/task",
            higher_is_better: false,
            sizes: [1, 20, 200],
            fit: spawn_future_fit,
        },
        Case {
            scenario: "async/yield-many",
            variant: "",
            about: "tokio's yield_many: 200 futures submitted from outside each call the runtime's yield_now K times (size = K)",
            unit: "ns/yield",
            higher_is_better: false,
            sizes: [10, 2_000, 10_000],
            fit: yield_fit,
        },
        Case {
            scenario: "async/fan-out",
            variant: "",
            about: "rounds of T = 4 x workers futures, all pending on one timer-free wake-all gate, released at once once the runtime parked (as in wake/latency); release until the last finishes, median round (p99 in extras; size = rounds)",
            unit: "us p50",
            higher_is_better: false,
            sizes: [3, 100, 400],
            fit: gate_fit,
        },
        Case {
            scenario: "blocking/empty-call",
            variant: "",
            about: "N tasks submitted from outside each make one blocking call of an empty closure through the pool's stand-in API; wall time until the latch saw all N, divided by N (size = N). plain_ns: the same flood on the same pool calling the closure directly, so figure - plain_ns is what lending and retiring a stand-in adds per call; at_call_ns: mean wall time a task spends in the call (lend, call, retire)",
            unit: "ns/call",
            higher_is_better: false,
            sizes: [200, 20_000, 200_000],
            fit: empty_call_fit,
        },
        Case {
            scenario: "blocking/capacity",
            variant: "",
            about: "rounds of W = workers tasks that each sleep 20 ms inside a blocking call; once all W are inside, 4 x W short tasks (1,000-iteration some-work) are submitted; time from submitting the first short task until the last finished, median round (first_ms: first round, which starts the stand-in threads; size = rounds). Under 20 ms only if the pool runs tasks while its workers block",
            unit: "ms p50",
            higher_is_better: false,
            sizes: [1, 5, 25],
            fit: capacity_fit,
        },
    ]);
    cases
}

pub fn find(scenario: &str, variant: &str) -> Option<Case> {
    catalogue()
        .into_iter()
        .find(|c| c.scenario == scenario && c.variant == variant)
}
