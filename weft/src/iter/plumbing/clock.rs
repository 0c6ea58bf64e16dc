//! The clock a loop times its chunks with (the alone phase, `CHUNK_TARGET`),
//! and why it is not `Instant`.
//!
//! A loop too small to split reads the clock about three times (its start,
//! and after its first two chunks), and issue 26 asks that such a loop cost
//! the sequential loop plus a few percent. On the AMD EPYC VM of
//! docs/PARALLEL.md `Instant::now` costs 25-27 ns (the vDSO's
//! `clock_gettime` over the TSC) and the `rdtsc` instruction under it
//! 10 ns: three reads are 75-80 ns of a 1,000-item loop of about a
//! microsecond. So where the time-stamp counter ticks at a constant rate
//! (x86-64's "invariant TSC", CPUID leaf 0x8000_0007), a loop reads the
//! counter and converts differences with a scale found by comparing it
//! with `Instant` once; elsewhere, under Miri, and until the scale is
//! known, it reads `Instant`.
//!
//! The scale is found without waiting: the first loop of the process
//! records an anchor (an `Instant` and the counter, read together), and
//! the first loop that starts at least [`CALIBRATE_OVER`] later divides
//! the two clocks' progress since, once for the process. Loops before that
//! read `Instant`, at 15-20 ns more a reading, and come through
//! `calibrate`: a process's first 1,000 loops of 1,000 items in a pool
//! took 1.18-1.29x the sequential loops' time with a window of 10 ms,
//! all of them inside it, and 0.94x of that with this one
//! (docs/PARALLEL.md, "Session 23"). The window can be short because
//! each of the two readings is the counter read between two readings of
//! `Instant`, so the span the scale is worked out over is known to within
//! half their spread at each end, and the scale waits only until the span
//! is 200 times that ([`trusted_span`]): 200 us where the readings lie at most
//! [`MAX_SAMPLE_SPREAD`] apart, longer where a thread was descheduled
//! between them (a tighter reading taken within the first 200 us then
//! replaces a loose first one) or where `Instant` is a system call. The
//! crates that read the counter (quanta, minstant) calibrate by
//! busy-waiting instead: quanta at its first use, for up to 200 ms;
//! minstant at every process's start, for 10 ms or more. A first loop, or
//! a program that never runs one, must not pay that, so this small part
//! is written here.
//!
//! A loop takes its [`Clock`] once and keeps it, so its stamps are all of
//! one kind. The counters of two cores may differ by a little; a loop's
//! chunk may end on another core than it started on (a task that suspends
//! resumes on any worker), so a difference that comes out negative counts
//! as zero. The durations size chunks and bound the alone phase; an error
//! of a few percent in the scale only moves those sizes by as much.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, OnceLock, TryLockError};
use std::time::{Duration, Instant};

/// The spread of two `Instant` readings around a counter reading that
/// [`CALIBRATE_OVER`] is sized for: a few readings' time where `Instant`
/// reads the counter itself (25-27 ns here), far less than a thread
/// descheduled between them would leave.
const MAX_SAMPLE_SPREAD: Duration = Duration::from_micros(1);

/// How many times its uncertainty a span must be for the scale to be
/// worked out over it (so within half a percent).
const SPAN_OVER_UNCERTAINTY: u32 = 200;

/// How long after the anchor the counter's scale is worked out at the
/// earliest: with readings whose `Instant`s lie at most
/// [`MAX_SAMPLE_SPREAD`] apart, the uncertainty of the span (half a
/// spread at each end) is then at most half a percent of it, plus what
/// the counters of the two readings' cores differ by (tens of
/// nanoseconds where the kernel keeps time by this counter, whose cores
/// it checks are in step).
pub(super) const CALIBRATE_OVER: Duration = MAX_SAMPLE_SPREAD.saturating_mul(SPAN_OVER_UNCERTAINTY);

/// Nanoseconds per counter tick as a 32.32 fixed-point number; 0 while not
/// yet known, [`NO_COUNTER`] where the counter is not to be used.
static SCALE: AtomicU64 = AtomicU64::new(0);

/// The value of [`SCALE`] where only `Instant` is read.
const NO_COUNTER: u64 = u64::MAX;

/// The two clocks read together ([`Sample::take`]).
#[derive(Clone, Copy)]
struct Sample {
    /// Halfway between the two `Instant` readings.
    instant: Instant,
    ticks: u64,
    /// How far apart the two `Instant` readings lay: the counter was read
    /// within half of it of `instant`.
    spread: Duration,
}

impl Sample {
    /// The counter read between two readings of `Instant`.
    fn take() -> Sample {
        let before = Instant::now();
        let ticks = counter::read();
        let spread = before.elapsed();
        Sample {
            instant: before + spread / 2,
            ticks,
            spread,
        }
    }
}

/// The span from `anchor` to `now` if it is long enough to work the scale
/// out over: at least [`CALIBRATE_OVER`], and [`SPAN_OVER_UNCERTAINTY`]
/// times the uncertainty of its ends.
fn trusted_span(anchor: &Sample, now: &Sample) -> Option<Duration> {
    let span = now.instant.saturating_duration_since(anchor.instant);
    let uncertainty = anchor.spread.saturating_add(now.spread) / 2;
    let needed = uncertainty.saturating_mul(SPAN_OVER_UNCERTAINTY);
    (span >= CALIBRATE_OVER && span >= needed).then_some(span)
}

/// Whether the counter is usable. Asked once: CPUID traps to the
/// hypervisor in a virtual machine (4.3 us a call on the AMD EPYC VM of
/// docs/PARALLEL.md), and every loop of the first [`CALIBRATE_OVER`]
/// comes through `calibrate`.
static USABLE: OnceLock<bool> = OnceLock::new();

/// Where the span the scale is worked out over starts: the first loop's
/// sample or, in place of a loose one (spread over [`MAX_SAMPLE_SPREAD`]),
/// a later one with a smaller spread taken before [`CALIBRATE_OVER`] had
/// passed (a first loop descheduled between its readings would otherwise
/// hold the scale back for 100 times as long as it was off its core).
static ANCHOR: Mutex<Option<Sample>> = Mutex::new(None);

/// The base of `Instant`-based stamps.
static EPOCH: OnceLock<Instant> = OnceLock::new();

/// One loop's clock: the counter with a known scale, or `Instant`.
#[derive(Clone, Copy)]
pub(super) struct Clock {
    /// As [`SCALE`]; 0: `Instant`.
    scale: u64,
}

/// A reading of one [`Clock`].
#[derive(Clone, Copy)]
pub(super) struct Stamp(u64);

/// A span of time in whole nanoseconds: what the clock's differences come
/// out as, and the unit of the loops' chunk targets, so that a loop
/// compares and scales spans with no conversion. A `Duration` is seconds
/// and nanoseconds: building one from a count divides by 10^9, reading it
/// back multiplies, and a loop too small to split did both for each of its
/// three readings (docs/PARALLEL.md, "Session 22").
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Debug)]
pub(super) struct Nanos(pub(super) u64);

impl Nanos {
    /// `duration` in nanoseconds, `u64::MAX` past 584 years.
    pub(super) const fn of(duration: Duration) -> Nanos {
        let nanos = duration.as_nanos();
        if nanos > u64::MAX as u128 {
            Nanos(u64::MAX)
        } else {
            Nanos(nanos as u64)
        }
    }
}

impl Clock {
    /// The clock for a loop that starts now.
    #[inline]
    pub(super) fn get() -> Clock {
        // Relaxed: the scale is a value on its own, and publishes nothing
        // else; two threads that both work it out store valid scales.
        match SCALE.load(Ordering::Relaxed) {
            0 => Clock { scale: calibrate() },
            NO_COUNTER => Clock { scale: 0 },
            scale => Clock { scale },
        }
    }

    /// The time now.
    #[inline]
    pub(super) fn now(self) -> Stamp {
        if self.scale != 0 {
            Stamp(counter::read())
        } else {
            let epoch = *EPOCH.get_or_init(Instant::now);
            Stamp(u64::try_from(epoch.elapsed().as_nanos()).unwrap_or(u64::MAX))
        }
    }

    /// The time from `earlier` to `later`, zero if `later` reads less.
    #[inline]
    pub(super) fn between(self, earlier: Stamp, later: Stamp) -> Nanos {
        let delta = later.0.saturating_sub(earlier.0);
        if self.scale == 0 {
            return Nanos(delta);
        }
        // One 64x64-bit multiply into 128 bits; the shifted result leaves
        // 64 bits only past 2^64 ns (584 years), where it saturates.
        let nanos = (u128::from(delta) * u128::from(self.scale)) >> 32;
        Nanos(u64::try_from(nanos).unwrap_or(u64::MAX))
    }

    /// The time since `earlier`.
    #[inline]
    pub(super) fn elapsed(self, earlier: Stamp) -> Nanos {
        self.between(earlier, self.now())
    }

    /// Whether this clock reads the counter (for the tests).
    #[cfg(test)]
    fn reads_counter(self) -> bool {
        self.scale != 0
    }
}

/// Works out the counter's scale if the anchor is old enough (setting the
/// anchor at the first call); returns it, or 0 while only `Instant` is to
/// be read.
#[cold]
fn calibrate() -> u64 {
    if !*USABLE.get_or_init(counter::usable) {
        SCALE.store(NO_COUNTER, Ordering::Relaxed);
        return 0;
    }
    let now = Sample::take();
    // One thread at a time: the others' loops go on reading `Instant`
    // rather than wait here. A poisoned lock holds a sample like any
    // other: nothing panics while it is held.
    let mut anchor = match ANCHOR.try_lock() {
        Ok(anchor) => anchor,
        Err(TryLockError::Poisoned(poisoned)) => poisoned.into_inner(),
        Err(TryLockError::WouldBlock) => return 0,
    };
    let Some(start) = *anchor else {
        *anchor = Some(now);
        return 0;
    };
    let Some(nanos) = trusted_span(&start, &now) else {
        // A loose first reading (its thread descheduled between its
        // halves) gives way to a tight one taken soon after; a tight one
        // stays, so that the window is not restarted again and again.
        let early = now.instant.saturating_duration_since(start.instant) < CALIBRATE_OVER;
        if early && start.spread > MAX_SAMPLE_SPREAD && now.spread < start.spread {
            *anchor = Some(now);
        }
        return 0;
    };
    drop(anchor);
    let scale = match scale_of(nanos, now.ticks.wrapping_sub(start.ticks)) {
        Some(scale) => scale,
        None => NO_COUNTER,
    };
    SCALE.store(scale, Ordering::Relaxed);
    if scale == NO_COUNTER {
        0
    } else {
        scale
    }
}

/// Nanoseconds per tick as 32.32 fixed point, for `ticks` counted over
/// `nanos`; `None` if the counter did not move as a clock would (at least
/// one tick per 16 ns: every invariant counter runs at 100 MHz or more).
fn scale_of(nanos: Duration, ticks: u64) -> Option<u64> {
    let nanos = nanos.as_nanos();
    if ticks == 0 || nanos / u128::from(ticks) >= 16 {
        return None;
    }
    let scale = (nanos << 32) / u128::from(ticks);
    u64::try_from(scale).ok().filter(|&scale| scale != 0)
}

#[cfg(all(target_arch = "x86_64", not(miri)))]
mod counter {
    /// Whether the time-stamp counter ticks at a constant rate whatever
    /// the core's frequency and sleep state (invariant TSC).
    pub(super) fn usable() -> bool {
        #[cfg(test)]
        super::tests::USABLE_ASKED.fetch_add(1, core::sync::atomic::Ordering::Relaxed);
        // SAFETY: CPUID exists on every x86-64 processor; leaf 0x8000_0000
        // reports the highest extended leaf, read before leaf 0x8000_0007.
        // (`__cpuid` is a safe function in newer compilers, an unsafe one
        // in those the manifest's rust-version allows.)
        #[allow(unused_unsafe)]
        unsafe {
            let highest = core::arch::x86_64::__cpuid(0x8000_0000).eax;
            highest >= 0x8000_0007 && core::arch::x86_64::__cpuid(0x8000_0007).edx & (1 << 8) != 0
        }
    }

    #[inline]
    pub(super) fn read() -> u64 {
        // SAFETY: RDTSC exists on every x86-64 processor and only reads
        // the counter.
        unsafe { core::arch::x86_64::_rdtsc() }
    }
}

#[cfg(not(all(target_arch = "x86_64", not(miri))))]
mod counter {
    /// No counter read here: `Instant` only.
    pub(super) fn usable() -> bool {
        #[cfg(test)]
        super::tests::USABLE_ASKED.fetch_add(1, core::sync::atomic::Ordering::Relaxed);
        false
    }

    pub(super) fn read() -> u64 {
        0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicUsize;

    /// How many times `counter::usable` was asked.
    pub(super) static USABLE_ASKED: AtomicUsize = AtomicUsize::new(0);

    #[test]
    fn the_counter_is_looked_up_once_however_many_loops_start_early() {
        // Loops that start before the scale is known all come through
        // `calibrate`; CPUID costs microseconds in a virtual machine.
        for _ in 0..1_000 {
            let _ = Clock::get().now();
        }
        assert_eq!(USABLE_ASKED.load(Ordering::Relaxed), 1);
    }

    #[test]
    fn a_span_is_trusted_once_long_against_its_readings_spread() {
        let at = |micros: u64, spread_ns: u64| Sample {
            instant: *EPOCH.get_or_init(Instant::now) + Duration::from_micros(micros),
            ticks: 0,
            spread: Duration::from_nanos(spread_ns),
        };
        let span = |from: &Sample, to: &Sample| trusted_span(from, to).map(|d| d.as_micros());
        // Readings of 50 ns: CALIBRATE_OVER decides.
        assert_eq!(span(&at(0, 50), &at(199, 50)), None);
        assert_eq!(span(&at(0, 50), &at(200, 50)), Some(200));
        // A first reading descheduled for 3 ms between its two halves:
        // the span must reach 200 times the 1.5 ms it may be off by.
        assert_eq!(span(&at(0, 3_000_000), &at(299_000, 20)), None);
        assert_eq!(span(&at(0, 3_000_000), &at(301_000, 20)), Some(301_000));
        // A reading dated before the anchor (a loose anchor's midpoint
        // may lie after another thread's reading) is no span at all.
        assert_eq!(span(&at(500, 50), &at(100, 50)), None);
    }

    #[test]
    fn a_scale_comes_from_a_clock_like_counter_only() {
        // 3 GHz over 10 ms: a third of a nanosecond a tick.
        let scale = scale_of(Duration::from_millis(10), 30_000_000).unwrap();
        assert_eq!(scale, (1u64 << 32) / 3);
        assert_eq!(scale_of(Duration::from_millis(10), 0), None);
        // One tick in 20 ns is no clock a constant-rate counter would be.
        assert_eq!(scale_of(Duration::from_millis(10), 500_000), None);
    }

    #[test]
    fn durations_follow_instant_within_a_few_percent() {
        // Until the scale is known the clock is `Instant` itself; once it
        // is (CALIBRATE_OVER after the first call, or later on a loaded
        // machine), the counter's durations must agree with `Instant`'s.
        let first = Clock::get();
        let _ = first.now();
        std::thread::sleep(CALIBRATE_OVER + Duration::from_millis(2));
        // A loaded machine may deschedule a sample's thread between its
        // readings, and the scale then waits for a span 100 times as long
        // as that (`trusted_span`): later loops try again, as these do,
        // until it is known. Bounded only against a hang (a first reading
        // descheduled for over a second).
        let usable = *USABLE.get_or_init(counter::usable);
        let mut clock = Clock::get();
        let give_up = Instant::now() + Duration::from_secs(120);
        while usable && !clock.reads_counter() && Instant::now() < give_up {
            std::thread::sleep(Duration::from_millis(1));
            clock = Clock::get();
        }
        // Each of the clock's readings between two of `Instant`'s, so that
        // a thread descheduled between them widens the bounds rather than
        // failing the test.
        let before_start = Instant::now();
        let start = clock.now();
        let after_start = Instant::now();
        std::thread::sleep(Duration::from_millis(20));
        let before_end = Instant::now();
        let ours = Duration::from_nanos(clock.elapsed(start).0);
        let after_end = Instant::now();
        let (least, most) = (before_end - after_start, after_end - before_start);
        assert!(
            ours.as_secs_f64() >= least.as_secs_f64() * 0.95
                && ours.as_secs_f64() <= most.as_secs_f64() * 1.05,
            "{ours:?} outside Instant's {least:?}..{most:?} (counter: {})",
            clock.reads_counter()
        );
        // Where the counter is usable, the scale is known by now.
        assert_eq!(clock.reads_counter(), usable);
        // A later stamp that reads less (another core's counter) is zero.
        assert_eq!(clock.between(clock.now(), start), Nanos(0));
    }
}
