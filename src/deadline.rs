//! One deadline for a whole operation: every request and every wait takes what is left of it.

use std::time::{Duration, Instant};

/// A point in time by which an operation must have answered.
#[derive(Debug, Clone, Copy)]
pub struct Deadline {
    start: Instant,
    at: Instant,
}

impl Deadline {
    /// A deadline `budget` from now.
    pub fn after(budget: Duration) -> Self {
        let start = Instant::now();
        Self {
            start,
            at: start + budget,
        }
    }

    /// A deadline `budget` after `start` (an instant already past).
    pub fn starting_at(start: Instant, budget: Duration) -> Self {
        Self {
            start,
            at: start + budget,
        }
    }

    /// Time left, zero once passed.
    pub fn remaining(&self) -> Duration {
        self.at.saturating_duration_since(Instant::now())
    }

    pub fn expired(&self) -> bool {
        self.remaining().is_zero()
    }

    /// The whole budget this deadline was made with.
    pub fn budget(&self) -> Duration {
        self.at - self.start
    }

    /// When the deadline was made (the start of its budget).
    pub fn started(&self) -> Instant {
        self.start
    }

    /// Time since the deadline was made.
    pub fn elapsed(&self) -> Duration {
        self.start.elapsed()
    }

    #[must_use]
    /// A deadline `margin` earlier than this one (never before now).
    pub fn shortened_by(&self, margin: Duration) -> Self {
        Self {
            start: self.start,
            at: self
                .at
                .checked_sub(margin)
                .unwrap_or(self.start)
                .max(Instant::now().min(self.at)),
        }
    }

    /// Sleeps for `wanted`, or less if the deadline comes first. Returns false when no time
    /// was left to sleep.
    pub fn sleep(&self, wanted: Duration) -> bool {
        let left = self.remaining();
        if left.is_zero() {
            return false;
        }
        std::thread::sleep(wanted.min(left));
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn remaining_never_exceeds_budget_and_shortening_keeps_order() {
        let d = Deadline::after(Duration::from_secs(10));
        assert!(d.remaining() <= Duration::from_secs(10));
        assert!(!d.expired());
        let short = d.shortened_by(Duration::from_secs(4));
        assert!(short.remaining() <= Duration::from_secs(6));
        let gone = d.shortened_by(Duration::from_secs(60));
        assert!(gone.expired());
        assert!(!gone.sleep(Duration::from_secs(1)));
    }
}
