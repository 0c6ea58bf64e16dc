//! Death tests: a process that ends in awkward states still ends cleanly.
//! Each case runs in a child process (this test binary, re-run with the case
//! named in an environment variable) so that exiting is what is tested.

use std::time::Duration;

mod common;

const CASE_ENV: &str = "WEFT_DEATH_CASE";

/// The child side: does nothing unless a case is named.
#[test]
fn child_entry() {
    let Ok(case) = std::env::var(CASE_ENV) else {
        return;
    };
    match case.as_str() {
        "exit-with-busy-pool" => {
            let pool = weft::Pool::builder().workers(4).build().unwrap();
            for _ in 0..64 {
                pool.spawn(|| std::thread::sleep(Duration::from_millis(5)));
            }
            std::process::exit(0);
        }
        "forget-a-parked-pool" => {
            let pool = weft::Pool::builder().workers(8).build().unwrap();
            pool.install(|| ());
            std::mem::forget(pool);
        }
        "global-pool-left-running" => {
            weft::spawn(|| ());
            let (a, b) = weft::join(|| 1, || 2);
            assert_eq!(a + b, 3);
        }
        "panicking-tasks-then-drop" => {
            let pool = weft::Pool::builder().workers(2).build().unwrap();
            for _ in 0..10 {
                pool.spawn(|| panic!("expected panic in a death test"));
            }
            drop(pool);
        }
        "drop-while-workers-park" => {
            for _ in 0..50 {
                let pool = weft::Pool::builder().workers(16).build().unwrap();
                pool.spawn(|| ());
                drop(pool);
            }
        }
        #[cfg(all(
            target_os = "linux",
            any(target_arch = "x86_64", target_arch = "aarch64"),
            not(miri)
        ))]
        "fiber-overflow" => {
            no_core_files();
            let pool = weft::Pool::builder()
                .workers(1)
                .stack_size(OVERFLOWED_STACK)
                .build()
                .unwrap();
            pool.install(|| recurse_without_end(0));
            unreachable!("the recursion ended");
        }
        #[cfg(all(
            target_os = "linux",
            any(target_arch = "x86_64", target_arch = "aarch64"),
            not(miri)
        ))]
        "thread-overflow-beside-fibers" => {
            no_core_files();
            // A fiber stack made first puts weft's handler in front.
            let pool = weft::Pool::builder().workers(1).build().unwrap();
            pool.install(|| ());
            std::thread::Builder::new()
                .name("deep-thread".into())
                .stack_size(OVERFLOWED_STACK)
                .spawn(|| recurse_without_end(0))
                .unwrap()
                .join()
                .unwrap();
            unreachable!("the recursion ended");
        }
        #[cfg(all(
            target_os = "linux",
            any(target_arch = "x86_64", target_arch = "aarch64"),
            not(miri)
        ))]
        "fault-on-a-fiber-off-its-guard" => {
            no_core_files();
            let pool = weft::Pool::builder().workers(1).build().unwrap();
            pool.install(read_a_page_with_no_access);
            unreachable!("the read of a page with no access returned");
        }
        #[cfg(all(
            target_os = "linux",
            any(target_arch = "x86_64", target_arch = "aarch64"),
            not(miri)
        ))]
        "fiber-overflow-inside-blocking" => {
            no_core_files();
            let pool = weft::Pool::builder()
                .workers(1)
                .stack_size(OVERFLOWED_STACK)
                .build()
                .unwrap();
            pool.install(|| weft::blocking(|| recurse_without_end(0)));
            unreachable!("the recursion ended");
        }
        #[cfg(all(
            target_os = "linux",
            any(target_arch = "x86_64", target_arch = "aarch64"),
            not(miri)
        ))]
        "fault-passed-to-a-resethand-handler" => {
            no_core_files();
            // The program's handler, installed before weft's: it says it
            // ran and returns; SA_RESETHAND puts the default action back
            // as the kernel runs it, so the repeated fault kills.
            extern "C" fn program_handler(_signal: libc::c_int) {
                let said = b"program handler ran\n";
                // SAFETY: writes bytes that live for the call.
                unsafe { libc::write(libc::STDERR_FILENO, said.as_ptr().cast(), said.len()) };
            }
            // SAFETY: zeroed, then the handler, an empty mask and the flags.
            let mut action: libc::sigaction = unsafe { std::mem::zeroed() };
            let handler: extern "C" fn(libc::c_int) = program_handler;
            action.sa_sigaction = handler as usize;
            action.sa_flags = libc::SA_RESETHAND;
            // SAFETY: installs a handler that is safe in a signal handler.
            unsafe {
                libc::sigemptyset(&mut action.sa_mask);
                libc::sigaction(libc::SIGSEGV, &action, std::ptr::null_mut());
            }
            let pool = weft::Pool::builder().workers(1).build().unwrap();
            pool.install(read_a_page_with_no_access);
            unreachable!("the read of a page with no access returned");
        }
        #[cfg(all(
            target_os = "linux",
            any(target_arch = "x86_64", target_arch = "aarch64"),
            not(miri)
        ))]
        "raise-under-the-default-action" => {
            no_core_files();
            // The default action in place of the standard library's
            // handler, before weft's first fiber.
            // SAFETY: puts back the default action.
            unsafe { libc::signal(libc::SIGSEGV, libc::SIG_DFL) };
            let pool = weft::Pool::builder().workers(1).build().unwrap();
            // SAFETY: raise is safe to call; it is meant to kill.
            pool.install(|| unsafe { libc::raise(libc::SIGSEGV) });
            unreachable!("a raised SIGSEGV under the default action returned");
        }
        other => panic!("unknown death case {other}"),
    }
}

fn run_case(case: &str) {
    // A hang is the failure this guards against; the limit is far beyond need.
    common::run_child_case(CASE_ENV, case, Duration::from_secs(120));
}

#[test]
fn process_exit_with_a_busy_pool_is_clean() {
    run_case("exit-with-busy-pool");
}

#[test]
fn returning_from_main_with_a_forgotten_parked_pool_is_clean() {
    run_case("forget-a-parked-pool");
}

#[test]
fn returning_from_main_with_the_global_pool_running_is_clean() {
    run_case("global-pool-left-running");
}

#[test]
fn panicking_tasks_then_drop_is_clean() {
    run_case("panicking-tasks-then-drop");
}

#[test]
fn dropping_pools_while_their_workers_park_is_clean() {
    run_case("drop-while-workers-park");
}

/// Where weft reports a fiber's stack overflow (sched/fiber_overflow.rs):
/// Linux, on the targets with fibers, outside Miri.
#[cfg(all(
    target_os = "linux",
    any(target_arch = "x86_64", target_arch = "aarch64"),
    not(miri)
))]
mod overflow {
    use std::os::unix::process::ExitStatusExt;
    use std::time::Duration;

    use super::{common, CASE_ENV};

    fn end_of(case: &str) -> common::ChildEnd {
        common::child_case(CASE_ENV, case, Duration::from_secs(120))
    }

    fn assert_died_of(ended: &common::ChildEnd, signal: i32) {
        assert_eq!(
            ended.status.signal(),
            Some(signal),
            "ended with {}\n{}",
            ended.status,
            ended.report()
        );
    }

    fn assert_reported(ended: &common::ChildEnd, reported: bool) {
        assert!(reported, "no report of the overflow\n{}", ended.report());
    }

    /// Whether the child's stderr has weft's report of a fiber's overflow.
    fn weft_reported(ended: &common::ChildEnd) -> bool {
        ended
            .stderr
            .contains(") has overflowed its stack: a task's fiber stack")
    }

    /// A task that overflows its fiber's stack ends the process with an
    /// abort and a report that names the thread and the stack, not with a
    /// bare segmentation fault.
    #[test]
    fn a_fibers_stack_overflow_is_reported_and_aborts() {
        let ended = end_of("fiber-overflow");
        assert_died_of(&ended, libc::SIGABRT);
        assert_reported(&ended, weft_reported(&ended));
        assert!(
            ended
                .stderr
                .lines()
                .any(|line| line.starts_with("thread 'weft-worker-0' (")
                    && line.contains(") has overflowed its stack: a task's fiber stack")),
            "the report does not name the worker's thread\n{}",
            ended.report()
        );
    }

    /// With weft's handler in front, a thread's own stack overflow is still
    /// the standard library's to report.
    #[test]
    fn a_threads_stack_overflow_is_still_the_standard_librarys() {
        let ended = end_of("thread-overflow-beside-fibers");
        assert_died_of(&ended, libc::SIGABRT);
        // The standard library's wording; recent versions put the thread's
        // id between its name and the rest.
        let reported = ended.stderr.lines().any(|line| {
            line.starts_with("thread 'deep-thread'") && line.ends_with("has overflowed its stack")
        });
        assert_reported(&ended, reported);
        assert!(
            !weft_reported(&ended),
            "reported as a fiber's\n{}",
            ended.report()
        );
    }

    /// An overflow inside `weft::blocking`, which hides the thread's
    /// worker but runs the call on the task's fiber, is reported too.
    #[test]
    fn an_overflow_inside_blocking_is_reported() {
        let ended = end_of("fiber-overflow-inside-blocking");
        assert_died_of(&ended, libc::SIGABRT);
        assert_reported(&ended, weft_reported(&ended));
    }

    /// A handler the program installed before weft's, with flags of its
    /// own (`SA_RESETHAND`), meets a fault off the guard page as the
    /// kernel would have handed it over: once, and the repeated fault
    /// then kills.
    #[test]
    fn a_fault_goes_to_the_programs_resethand_handler_once() {
        let ended = end_of("fault-passed-to-a-resethand-handler");
        assert_died_of(&ended, libc::SIGSEGV);
        assert_eq!(
            ended.stderr.matches("program handler ran").count(),
            1,
            "the program's handler did not run exactly once\n{}",
            ended.report()
        );
    }

    /// A `SIGSEGV` raised by the program, where the default action was in
    /// place before weft's handler, still kills: a sent signal does not
    /// repeat by itself as a fault does.
    #[test]
    fn a_raised_signal_meets_the_default_action() {
        let ended = end_of("raise-under-the-default-action");
        assert_died_of(&ended, libc::SIGSEGV);
    }

    /// A fault on a fiber away from its guard page is passed on: the
    /// process dies of the segmentation fault it would have died of
    /// without weft, and nothing claims an overflow.
    #[test]
    fn a_fault_off_the_guard_page_is_passed_on() {
        let ended = end_of("fault-on-a-fiber-off-its-guard");
        assert_died_of(&ended, libc::SIGSEGV);
        assert!(
            !ended.stderr.contains("overflowed"),
            "reported as an overflow\n{}",
            ended.report()
        );
    }
}

#[cfg(all(
    target_os = "linux",
    any(target_arch = "x86_64", target_arch = "aarch64"),
    not(miri)
))]
fn no_core_files() {
    // A case that dies on purpose leaves no core file behind.
    let none = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: sets this process's own limit from a valid struct.
    unsafe { libc::setrlimit(libc::RLIMIT_CORE, &none) };
}

/// Reads a page mapped with no access: a fault away from any guard page.
#[cfg(all(
    target_os = "linux",
    any(target_arch = "x86_64", target_arch = "aarch64"),
    not(miri)
))]
fn read_a_page_with_no_access() -> u8 {
    // SAFETY: a new anonymous mapping with no access, which the read below
    // faults on: what the cases that call this are for.
    let page = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            4096,
            libc::PROT_NONE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
            -1,
            0,
        )
    };
    assert_ne!(page, libc::MAP_FAILED);
    // SAFETY: see above: the read faults.
    unsafe { std::ptr::read_volatile(page.cast::<u8>()) }
}

/// A stack small enough to overflow in a moment.
#[cfg(all(
    target_os = "linux",
    any(target_arch = "x86_64", target_arch = "aarch64"),
    not(miri)
))]
const OVERFLOWED_STACK: usize = 256 * 1024;

/// Recurses until its stack overflows, half a kilobyte a call.
#[cfg(all(
    target_os = "linux",
    any(target_arch = "x86_64", target_arch = "aarch64"),
    not(miri)
))]
fn recurse_without_end(depth: u64) -> u64 {
    let frame = std::hint::black_box([depth; 64]);
    if std::hint::black_box(depth) == u64::MAX {
        return 0;
    }
    frame[0] + recurse_without_end(depth + 1) + frame[63]
}
