//! CPU-time readings: from getrusage, the whole process (every pool thread)
//! and the calling thread alone (to leave a producer's own CPU out); from
//! each thread's own CPU clock, every thread but the caller, up to the
//! instant ([`other_threads_cpu`], for windows that open while workers run).

use std::time::Duration;

fn read(who: libc::c_int) -> Duration {
    // SAFETY: getrusage only writes into the zeroed struct we pass it.
    let usage = unsafe {
        let mut usage: libc::rusage = std::mem::zeroed();
        let rc = libc::getrusage(who, &mut usage);
        assert_eq!(rc, 0, "getrusage failed");
        usage
    };
    let tv = |t: libc::timeval| {
        Duration::from_secs(t.tv_sec as u64) + Duration::from_micros(t.tv_usec as u64)
    };
    tv(usage.ru_utime) + tv(usage.ru_stime)
}

/// Minor page faults of every thread of this process so far.
pub fn process_minor_faults() -> u64 {
    // SAFETY: getrusage only writes into the zeroed struct we pass it.
    let usage = unsafe {
        let mut usage: libc::rusage = std::mem::zeroed();
        let rc = libc::getrusage(libc::RUSAGE_SELF, &mut usage);
        assert_eq!(rc, 0, "getrusage failed");
        usage
    };
    usage.ru_minflt as u64
}

/// User + system CPU of every thread of this process so far.
pub fn process_cpu() -> Duration {
    read(libc::RUSAGE_SELF)
}

/// User + system CPU of the calling thread so far.
pub fn thread_cpu() -> Duration {
    read(libc::RUSAGE_THREAD)
}

/// Asks the kernel to wake this thread's sleeps within `slack_ns` of the
/// deadline (the default slack is 50 us, as long as the trickle's intervals).
pub fn set_timer_slack(slack_ns: u64) {
    // SAFETY: PR_SET_TIMERSLACK takes a plain integer and affects this thread only.
    unsafe {
        libc::prctl(libc::PR_SET_TIMERSLACK, slack_ns as libc::c_ulong, 0, 0, 0);
    }
}

/// CPU of every other thread of this process alive now, each read up to
/// this very instant: the pool's CPU, without the measuring thread's own
/// (whose reads of `/proc` here cost more than a getrusage). [`process_cpu`]
/// (getrusage, like `CLOCK_PROCESS_CPUTIME_ID`) adds what a thread still
/// running on another core used since its last scheduler tick only at its
/// next tick or switch, so a window opened while a worker runs gets up to a
/// tick (4 ms at HZ=250) of CPU spent before it (measured: 0.9 ms in one of
/// three 2 s idle windows of a 16-worker pool). Reading each thread's own
/// CPU clock brings a running thread up to date.
///
/// Only for windows in which no thread exits: one that does takes all the
/// CPU it ever used out of the sum, which a `saturating_sub` of two readings
/// would hide (down to zero). Linux only, and only where every listed
/// thread's clock can be read; otherwise it is [`process_cpu`] less
/// [`thread_cpu`].
pub fn other_threads_cpu() -> Duration {
    #[cfg(target_os = "linux")]
    if let Some(total) = linux_other_threads_cpu() {
        return total;
    }
    process_cpu().saturating_sub(thread_cpu())
}

#[cfg(target_os = "linux")]
fn linux_other_threads_cpu() -> Option<Duration> {
    let own = own_tid()?;
    let tasks = std::fs::read_dir("/proc/self/task").ok()?;
    let (mut total, mut listed, mut read) = (Duration::ZERO, 0, 0);
    for task in tasks.flatten() {
        let Some(tid) = task
            .file_name()
            .to_str()
            .and_then(|name| name.parse::<libc::pid_t>().ok())
        else {
            continue;
        };
        if tid == own {
            continue;
        }
        listed += 1;
        // A thread that exited since the listing has no clock; one whose
        // clock cannot be read at all (a sandbox, a /proc of another pid
        // namespace) makes the whole reading fall back, below.
        if let Some(cpu) = thread_cpu_of(tid) {
            total += cpu;
            read += 1;
        }
    }
    (read > 0 || listed == 0).then_some(total)
}

/// The calling thread's id, from the `/proc/thread-self` link
/// (`<pid>/task/<tid>`).
#[cfg(target_os = "linux")]
fn own_tid() -> Option<libc::pid_t> {
    let link = std::fs::read_link("/proc/thread-self").ok()?;
    link.file_name()?.to_str()?.parse().ok()
}

/// The CPU thread `tid` of this process has used, up to this instant.
#[cfg(target_os = "linux")]
fn thread_cpu_of(tid: libc::pid_t) -> Option<Duration> {
    // The kernel's id for one thread's scheduler CPU clock:
    // MAKE_THREAD_CPUCLOCK(tid, CPUCLOCK_SCHED) in its posix-timers.h,
    // readable by any thread of the same process. (`<<` on i32 drops the
    // bits shifted out, as the kernel's unsigned arithmetic does.)
    let clock: libc::clockid_t = ((!tid) << 3) | CPUCLOCK_PERTHREAD | CPUCLOCK_SCHED;
    let mut now = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime only writes into the timespec we pass; for a
    // thread that exited meanwhile it returns an error and writes nothing.
    let rc = unsafe { libc::clock_gettime(clock, &mut now) };
    (rc == 0).then(|| Duration::new(now.tv_sec as u64, now.tv_nsec as u32))
}

#[cfg(target_os = "linux")]
const CPUCLOCK_PERTHREAD: libc::clockid_t = 4;
#[cfg(target_os = "linux")]
const CPUCLOCK_SCHED: libc::clockid_t = 2;

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::mpsc;

    /// Another thread's clock, read while that thread runs, is at least
    /// what the thread itself last read of it: the reading is current, and
    /// it is of that thread. (Tests run side by side on threads that come
    /// and go, so the sum over all threads is not asserted on.)
    #[test]
    fn another_running_threads_clock_reads_up_to_date() {
        let stop = AtomicBool::new(false);
        let (report, reported) = mpsc::channel();
        std::thread::scope(|s| {
            s.spawn(|| {
                let tid = own_tid().expect("/proc/thread-self");
                let start = thread_cpu_of(tid).expect("own clock");
                let mut now = start;
                while now - start < Duration::from_millis(2) {
                    now = thread_cpu_of(tid).expect("own clock");
                }
                report.send((tid, now)).unwrap();
                while !stop.load(Ordering::Relaxed) {
                    std::hint::spin_loop();
                }
            });
            let (tid, its_own_reading) = reported.recv().unwrap();
            let read_from_here = thread_cpu_of(tid);
            stop.store(true, Ordering::Relaxed);
            let read_from_here = read_from_here.expect("a live thread's clock");
            assert!(
                read_from_here >= its_own_reading,
                "read {read_from_here:?} after the thread itself read {its_own_reading:?}"
            );
        });
        assert!(own_tid().is_some_and(|tid| tid > 0));
    }
}
