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
