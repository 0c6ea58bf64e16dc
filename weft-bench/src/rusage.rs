//! CPU-time readings from getrusage: the whole process (every pool thread) and
//! the calling thread alone (to leave a producer's own CPU out).

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
/// CPU clock brings a running thread up to date. Only for windows in which
/// no thread exits, whose CPU would drop out of the sum. Linux only;
/// elsewhere it is [`process_cpu`] less [`thread_cpu`].
pub fn other_threads_cpu() -> Duration {
    #[cfg(target_os = "linux")]
    if let Some(total) = linux_other_threads_cpu() {
        return total;
    }
    process_cpu().saturating_sub(thread_cpu())
}

#[cfg(target_os = "linux")]
fn linux_other_threads_cpu() -> Option<Duration> {
    // "/proc/thread-self" links to "<pid>/task/<tid>" of the calling thread.
    let own = std::fs::read_link("/proc/thread-self").ok()?;
    let own = own.file_name()?.to_owned();
    let tasks = std::fs::read_dir("/proc/self/task").ok()?;
    let mut total = Duration::ZERO;
    for task in tasks.flatten() {
        if task.file_name() == own {
            continue;
        }
        let Some(tid) = task
            .file_name()
            .to_str()
            .and_then(|name| name.parse::<libc::pid_t>().ok())
        else {
            continue;
        };
        // The kernel's id for one thread's scheduler CPU clock:
        // MAKE_THREAD_CPUCLOCK(tid, CPUCLOCK_SCHED) in its posix-timers.h,
        // readable by any thread of the same process.
        let clock: libc::clockid_t = ((!tid) << 3) | CPUCLOCK_PERTHREAD | CPUCLOCK_SCHED;
        let mut now = libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        // SAFETY: clock_gettime only writes into the timespec we pass; for a
        // thread that exited meanwhile it returns an error and writes nothing.
        if unsafe { libc::clock_gettime(clock, &mut now) } == 0 {
            total += Duration::new(now.tv_sec as u64, now.tv_nsec as u32);
        }
    }
    Some(total)
}

#[cfg(target_os = "linux")]
const CPUCLOCK_PERTHREAD: libc::clockid_t = 4;
#[cfg(target_os = "linux")]
const CPUCLOCK_SCHED: libc::clockid_t = 2;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn other_threads_cpu_counts_a_running_thread() {
        let before = other_threads_cpu();
        let spin_until = std::time::Instant::now() + Duration::from_millis(30);
        std::thread::scope(|s| {
            s.spawn(|| while std::time::Instant::now() < spin_until {});
            // Read while the spinner is still running: it is counted up to now.
            std::thread::sleep(Duration::from_millis(20));
            let during = other_threads_cpu().saturating_sub(before);
            assert!(
                during >= Duration::from_millis(5),
                "a thread spinning for 20 ms showed {during:?}"
            );
        });
    }
}
