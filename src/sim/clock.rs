//! Simulated time: the scenario's start plus real elapsed time multiplied by the time scale.
//!
//! Everything the simulator schedules (journal cadence, task durations, tag latency, FLR mounts)
//! is measured in *sim seconds since the start* (`f64`), so tests can drive the logic with an
//! injected [`Instant`] and never sleep. A frozen clock keeps every reported timestamp at the
//! start while the schedule still advances, which makes snapshots deterministic.

use std::time::{Duration, Instant, SystemTime};

/// Converts between real instants, sim seconds and reported UTC times.
#[derive(Debug, Clone)]
pub(crate) struct Clock {
    origin: Instant,
    start: SystemTime,
    scale: f64,
    frozen: bool,
}

impl Clock {
    /// A clock whose sim time is `start` at the real instant `origin`.
    pub(crate) fn new(origin: Instant, start: SystemTime, scale: f64, frozen: bool) -> Clock {
        Clock {
            origin,
            start,
            scale,
            frozen,
        }
    }

    /// Sim seconds elapsed at the real instant `now` (advances even when frozen).
    pub(crate) fn elapsed(&self, now: Instant) -> f64 {
        now.saturating_duration_since(self.origin).as_secs_f64() * self.scale
    }

    /// The real instant at which `elapsed` sim seconds will have passed.
    pub(crate) fn instant_at(&self, elapsed: f64) -> Instant {
        self.origin + secs(elapsed / self.scale)
    }

    /// The reported time of something that happens `elapsed` sim seconds after the start.
    pub(crate) fn time_at(&self, elapsed: f64) -> SystemTime {
        if self.frozen {
            self.start
        } else {
            self.start + secs(elapsed)
        }
    }

    /// The reported time of a tagged checkpoint requested at `requested` and stamped `offset`
    /// sim seconds later; a frozen clock stamps it `offset` after the start.
    pub(crate) fn stamp_time(&self, requested: f64, offset: f64) -> SystemTime {
        if self.frozen {
            self.start + secs(offset)
        } else {
            self.start + secs(requested + offset)
        }
    }

    /// The start time, offset by `delta` sim seconds (negative for history before the start).
    pub(crate) fn start_offset(&self, delta: f64) -> SystemTime {
        if delta >= 0.0 {
            self.start + secs(delta)
        } else {
            self.start - secs(-delta)
        }
    }

    /// Whether reported time stands still.
    pub(crate) fn frozen(&self) -> bool {
        self.frozen
    }
}

/// A non-negative, finite number of seconds as a [`Duration`] (anything else is zero).
pub(crate) fn secs(value: f64) -> Duration {
    Duration::try_from_secs_f64(value).unwrap_or(Duration::ZERO)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn clock(frozen: bool) -> (Clock, Instant) {
        let origin = Instant::now();
        let start = crate::time::parse_utc("2026-01-05T10:00:00Z").expect("valid time");
        (Clock::new(origin, start, 100.0, frozen), origin)
    }

    #[test]
    fn sim_time_is_start_plus_scaled_elapsed() {
        let (clock, origin) = clock(false);
        let now = origin + Duration::from_millis(500);
        assert!((clock.elapsed(now) - 50.0).abs() < 1e-9);
        assert_eq!(
            crate::time::format_utc(clock.time_at(clock.elapsed(now))),
            "2026-01-05T10:00:50Z"
        );
        assert_eq!(clock.instant_at(50.0), now);
        assert_eq!(
            crate::time::format_utc(clock.start_offset(-5.0)),
            "2026-01-05T09:59:55Z"
        );
    }

    #[test]
    fn frozen_clock_reports_the_start_but_still_schedules() {
        let (clock, origin) = clock(true);
        let now = origin + Duration::from_secs(3);
        assert!((clock.elapsed(now) - 300.0).abs() < 1e-9);
        assert_eq!(
            crate::time::format_utc(clock.time_at(300.0)),
            "2026-01-05T10:00:00Z"
        );
        assert_eq!(
            crate::time::format_utc(clock.stamp_time(300.0, 30.0)),
            "2026-01-05T10:00:30Z"
        );
    }
}
