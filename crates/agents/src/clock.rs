//! Clocks are checked, not trusted. Before a run the coordinator sends an agent a few pings; each reply carries
//! the agent's clock reading, and the coordinator notes when it sent the ping and when the reply came back. If
//! the way there and the way back took as long as each other, the agent read its clock halfway through the round
//! trip, so its offset from the coordinator's clock is its reading minus that midpoint; whatever the two ways
//! really took, the truth lies within half the round trip of that figure. The round trip with the least delay is
//! the least disturbed by queues and scheduling, so its offset is kept, with half its delay as the error.
//!
//! The same arithmetic serves both clocks an agent reports: the monotonic one, to translate the start instant
//! into the agent's own clock (monotonic clocks of two machines share no origin), and the wall clock, to find an
//! agent whose time of day is off (no NTP), whose timestamps would not line up with the others'.

/// This machine's monotonic clock, in nanoseconds (its origin is its own: only differences and offsets mean
/// anything).
pub fn monotonic_ns() -> i64 {
    use nix::time::{clock_gettime, ClockId};
    clock_gettime(ClockId::CLOCK_MONOTONIC).map_or(0, |t| t.tv_sec() * 1_000_000_000 + t.tv_nsec())
}

/// This machine's wall clock, in nanoseconds since the Unix epoch.
pub fn wall_ns() -> i64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos() as i64)
}

/// One ping and its reply, each time in nanoseconds on its own clock.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RoundTrip {
    /// When the coordinator sent the ping, on the coordinator's clock.
    pub sent_ns: i64,
    /// The agent's clock when it answered.
    pub agent_ns: i64,
    /// When the answer came back, on the coordinator's clock.
    pub received_ns: i64,
}

impl RoundTrip {
    /// How long the ping and its answer took together.
    pub fn delay_ns(&self) -> i64 {
        self.received_ns - self.sent_ns
    }

    /// The agent's clock minus the coordinator's, assuming both ways took as long.
    pub fn offset_ns(&self) -> i64 {
        // The midpoint, computed without overflow for clocks that read near i64's ends.
        let midpoint = self.sent_ns + (self.received_ns - self.sent_ns) / 2;
        self.agent_ns - midpoint
    }
}

/// What the round trips say of an agent's clock.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ClockEstimate {
    /// The agent's clock minus the coordinator's, in nanoseconds.
    pub offset_ns: i64,
    /// The truth is within this of `offset_ns`: half the delay of the round trip it came from.
    pub error_ns: i64,
    /// How many round trips it was chosen from.
    pub samples: usize,
}

impl ClockEstimate {
    /// The estimate from the round trip with the least delay; `None` without a usable round trip (one that came
    /// back before it was sent says the coordinator's clock is not monotonic, and is left out).
    pub fn from_round_trips(trips: &[RoundTrip]) -> Option<ClockEstimate> {
        let usable = trips.iter().filter(|t| t.delay_ns() >= 0);
        let best = usable.clone().min_by_key(|t| t.delay_ns())?;
        Some(ClockEstimate {
            offset_ns: best.offset_ns(),
            error_ns: (best.delay_ns() + 1) / 2,
            samples: usable.count(),
        })
    }

    /// A coordinator instant on the agent's clock.
    pub fn to_agent(&self, coordinator_ns: i64) -> i64 {
        coordinator_ns + self.offset_ns
    }

    /// True when the agent's clock may be more than `limit_ns` away from the coordinator's: the offset, widened by
    /// its error, crosses the limit.
    pub fn may_exceed(&self, limit_ns: i64) -> bool {
        self.offset_ns.abs() + self.error_ns > limit_ns
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A round trip to an agent whose clock is `offset` ahead, the ping taking `there` and the answer `back`.
    fn trip(at: i64, offset: i64, there: i64, back: i64) -> RoundTrip {
        RoundTrip { sent_ns: at, agent_ns: at + there + offset, received_ns: at + there + back }
    }

    #[test]
    fn the_least_delayed_round_trip_decides() {
        let trips = [
            trip(0, 5_000_000, 900_000, 100_000),
            trip(10_000_000, 5_000_000, 40_000, 40_000),
            trip(20_000_000, 5_000_000, 3_000_000, 50_000),
        ];
        let estimate = ClockEstimate::from_round_trips(&trips).unwrap();
        assert_eq!(estimate, ClockEstimate { offset_ns: 5_000_000, error_ns: 40_000, samples: 3 });
        assert_eq!(estimate.to_agent(1_000), 5_001_000);
    }

    #[test]
    fn the_error_covers_any_split_of_the_round_trip() {
        // However the 200 µs split between the two ways, the true offset is within the error of the estimate.
        for there in [0, 50_000, 100_000, 150_000, 200_000] {
            let estimate = ClockEstimate::from_round_trips(&[trip(7, -3_000_000, there, 200_000 - there)]).unwrap();
            assert!((estimate.offset_ns - -3_000_000).abs() <= estimate.error_ns, "{estimate:?} with {there} there");
        }
    }

    #[test]
    fn a_skew_is_judged_with_its_error() {
        let near = ClockEstimate { offset_ns: 45_000_000, error_ns: 2_000_000, samples: 8 };
        assert!(!near.may_exceed(50_000_000));
        let unsure = ClockEstimate { offset_ns: 45_000_000, error_ns: 6_000_000, samples: 8 };
        assert!(unsure.may_exceed(50_000_000), "it could be 51 ms off");
        assert!(ClockEstimate { offset_ns: -60_000_000, ..near }.may_exceed(50_000_000), "behind counts too");
    }

    #[test]
    fn nothing_usable_gives_no_estimate() {
        assert_eq!(ClockEstimate::from_round_trips(&[]), None);
        let backwards = RoundTrip { sent_ns: 10, agent_ns: 5, received_ns: 9 };
        assert_eq!(ClockEstimate::from_round_trips(&[backwards]), None);
    }
}
