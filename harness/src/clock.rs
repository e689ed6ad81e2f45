//! One clock for every process of a run: `CLOCK_MONOTONIC`, in nanoseconds.
//!
//! `std::time::Instant` (and so `tokio::time::Instant`) reads the same clock on Linux, but does
//! not expose its value; [`Anchor`] pins one `Instant` to its `CLOCK_MONOTONIC` value (to within
//! a few hundred nanoseconds, taken as the upper end of the bracket, so a converted deadline is
//! never earlier than the real one) and converts any other `Instant` by difference.

use std::time::Instant;

/// `clock_gettime(CLOCK_MONOTONIC)` in nanoseconds.
pub fn mono_ns() -> i64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: `ts` is a valid timespec to write to.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    assert_eq!(rc, 0, "clock_gettime(CLOCK_MONOTONIC) failed");
    ts.tv_sec as i64 * 1_000_000_000 + ts.tv_nsec as i64
}

/// An `Instant` with its `CLOCK_MONOTONIC` value.
#[derive(Clone, Copy, Debug)]
pub struct Anchor {
    instant: Instant,
    mono: i64,
}

impl Anchor {
    /// Brackets `Instant::now()` between two clock readings, 50 times, and keeps the tightest
    /// bracket; the anchor's value is the bracket's upper end (never early).
    pub fn new() -> Anchor {
        let mut best: Option<(i64, Anchor)> = None;
        for _ in 0..50 {
            let before = mono_ns();
            let instant = Instant::now();
            let after = mono_ns();
            let width = after - before;
            if best.as_ref().is_none_or(|(w, _)| width < *w) {
                best = Some((width, Anchor { instant, mono: after }));
            }
        }
        best.unwrap().1
    }

    /// The `CLOCK_MONOTONIC` value of `t`, in nanoseconds.
    pub fn mono_of(&self, t: Instant) -> i64 {
        if t >= self.instant {
            self.mono + (t - self.instant).as_nanos() as i64
        } else {
            self.mono - (self.instant - t).as_nanos() as i64
        }
    }
}

impl Default for Anchor {
    fn default() -> Self { Anchor::new() }
}
