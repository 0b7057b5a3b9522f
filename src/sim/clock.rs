//! Simulated time: the scenario's start plus real elapsed time multiplied by the time scale.
//!
//! Everything the simulator schedules (journal cadence, task durations, tag latency, FLR mounts)
//! is measured in *sim seconds since the start* (`f64`), so tests can drive the logic with an
//! injected [`Instant`] and never sleep. A frozen clock keeps every reported timestamp at the
//! start while the schedule still advances, which makes snapshots deterministic. A wall clock
//! reports real time (the start plus real elapsed time) while the schedule runs at the scale, so
//! that a client stamping its tags with the real clock sees checkpoints at the times it expects.

use std::time::{Duration, Instant, SystemTime};

/// Converts between real instants, sim seconds and reported UTC times.
#[derive(Debug, Clone)]
pub(crate) struct Clock {
    origin: Instant,
    start: SystemTime,
    scale: f64,
    reported: Reported,
}

/// How a [`Clock`] turns sim seconds into the times the simulator reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Reported {
    /// The start plus sim seconds: time runs `scale` times faster than the real clock.
    Scaled,
    /// Always the start (tagged checkpoints: the start plus their stamp offset).
    Frozen,
    /// The start plus real seconds: the real clock's pace, whatever the scale.
    Wall,
}

impl Clock {
    /// A clock whose sim time is `start` at the real instant `origin`.
    pub(crate) fn new(origin: Instant, start: SystemTime, scale: f64, frozen: bool) -> Clock {
        let reported = if frozen {
            Reported::Frozen
        } else {
            Reported::Scaled
        };
        Clock {
            origin,
            start,
            scale,
            reported,
        }
    }

    /// The same clock, reporting times as `reported` says.
    pub(crate) fn reporting(self, reported: Reported) -> Clock {
        Clock { reported, ..self }
    }

    /// The reported span of `elapsed` sim seconds.
    fn span(&self, elapsed: f64) -> Duration {
        match self.reported {
            Reported::Wall => secs(elapsed / self.scale),
            Reported::Scaled | Reported::Frozen => secs(elapsed),
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
        match self.reported {
            Reported::Frozen => self.start,
            Reported::Scaled | Reported::Wall => self.start + self.span(elapsed),
        }
    }

    /// The reported time of a tagged checkpoint requested at `requested` and stamped `offset`
    /// sim seconds later; a frozen clock stamps it `offset` after the start.
    pub(crate) fn stamp_time(&self, requested: f64, offset: f64) -> SystemTime {
        match self.reported {
            Reported::Frozen => self.start + secs(offset),
            Reported::Scaled | Reported::Wall => self.start + self.span(requested + offset),
        }
    }

    /// The start time, offset by `delta` sim seconds (negative for history before the start).
    pub(crate) fn start_offset(&self, delta: f64) -> SystemTime {
        if delta >= 0.0 {
            self.start + self.span(delta)
        } else {
            self.start - self.span(-delta)
        }
    }

    /// Whether reported time stands still.
    pub(crate) fn frozen(&self) -> bool {
        self.reported == Reported::Frozen
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

    /// At a scale of 100, a checkpoint stamped 30 sim seconds after a request made 3 real
    /// seconds in is reported 3.3 real seconds after the start: where a client's real clock
    /// puts it, not 5 minutes ahead.
    #[test]
    fn wall_clock_reports_real_time_while_the_schedule_runs_at_the_scale() {
        let (clock, origin) = clock(false);
        let clock = clock.reporting(Reported::Wall);
        let now = origin + Duration::from_secs(3);
        assert!((clock.elapsed(now) - 300.0).abs() < 1e-9);
        assert_eq!(clock.instant_at(300.0), now);
        assert_eq!(
            crate::time::format_utc(clock.time_at(clock.elapsed(now))),
            "2026-01-05T10:00:03Z"
        );
        assert_eq!(
            crate::time::format_utc_millis(clock.stamp_time(300.0, 30.0)),
            "2026-01-05T10:00:03.300Z"
        );
        assert_eq!(
            crate::time::format_utc(clock.start_offset(-500.0)),
            "2026-01-05T09:59:55Z"
        );
        assert!(!clock.frozen());
    }
}
