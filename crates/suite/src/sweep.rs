//! [`Sweep`]: which run of a suite is taken. The short one is the suite's own keys; `--full` lays its `[full]`
//! table over them (the classic, long sweep); `--smoke` cuts it down to a check that every server runs.

use std::time::Duration;

use shootout_model::profile::ProfileSpec;
use shootout_scenario::{FileError, Locator};

use crate::raw::SuiteFile;
use crate::{Levels, ServerSpec, Suite};

/// Which sweep of a suite to run. A suite with `search` searches in its short run; `--full` sweeps its levels,
/// and `--smoke` checks its servers at the first and last level (the search's start when it has no levels).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Sweep {
    /// The suite's own keys: the short run.
    #[default]
    Short,
    /// The suite's `[full]` table over its own keys: the classic, long sweep.
    Full,
    /// A check that every server runs: the first and last level, once, 1 s at a level of users and 2 s at an
    /// arrival rate.
    Smoke,
}

impl Sweep {
    /// Its name, as stored with a results directory.
    pub fn name(self) -> &'static str {
        match self {
            Sweep::Short => "short",
            Sweep::Full => "full",
            Sweep::Smoke => "smoke",
        }
    }

    /// The sweep of a stored name (`short` for anything unknown).
    pub fn from_name(name: &str) -> Sweep {
        match name.trim() {
            "full" => Sweep::Full,
            "smoke" => Sweep::Smoke,
            _ => Sweep::Short,
        }
    }

    /// A profile as this sweep runs it: in the smoke sweep, 2 s at most.
    pub fn profile(self, spec: ProfileSpec) -> ProfileSpec {
        match self {
            Sweep::Smoke => ProfileSpec { duration: spec.duration.min(Duration::from_secs(2)), ..spec },
            _ => spec,
        }
    }

    /// For the full sweep, lays the `[full]` table over the suite's own keys (an error when there is none).
    pub(crate) fn lay_over(self, raw: &mut SuiteFile, at: &Locator<'_>) -> Result<(), FileError> {
        match (self, raw.full.take()) {
            (Sweep::Full, None) => Err(at.at(
                0,
                "--full: this suite has no [full] table; add one with the long sweep's connections (or rates), duration and repeats",
            )),
            (Sweep::Full, Some(full)) => {
                if full.connections.is_some() || full.rates.is_some() {
                    raw.connections = full.connections;
                    raw.rates = full.rates;
                }
                // The long sweep sweeps: a suite's search is its short run.
                raw.search = None;
                raw.repeats = full.repeats.or(raw.repeats.take());
                raw.duration = full.duration.or(raw.duration.take());
                raw.warmup = full.warmup.or(raw.warmup.take());
                raw.requests = full.requests.or(raw.requests.take());
                Ok(())
            }
            _ => Ok(()),
        }
    }

    /// For the smoke sweep, cuts a validated suite down to its first and last level, once, each after at most
    /// a quarter of a second of warm-up: 1 s at a level of users, who send from the window's first instant, and 2 s at an
    /// arrival rate, whose first arrivals may come a second late at the 1/s of a suite like redmine-arrivals. A
    /// profile is cut to 2 s. A server's start warm-up is kept up to 5 s, since a server it was written for (a
    /// JVM, a Rails app's cold workers) may not answer a single request of the window without it.
    pub(crate) fn cut(self, suite: Suite) -> Suite {
        if self != Sweep::Smoke {
            return suite;
        }
        let (levels, duration) = match &suite.levels {
            Levels::Connections(c) => (Levels::Connections(ends(c)), SMOKE_USERS_WINDOW),
            Levels::Rates(r) => (Levels::Rates(ends(r)), SMOKE_ARRIVALS_WINDOW),
        };
        let servers = suite
            .servers
            .into_iter()
            .map(|s| ServerSpec { start_warmup: s.start_warmup.min(Duration::from_secs(5)), ..s })
            .collect();
        Suite {
            levels,
            servers,
            repeats: 1,
            duration,
            warmup: suite.warmup.min(SMOKE_WARMUP),
            requests: None,
            profile: suite.profile.map(|p| self.profile(p)),
            ..suite
        }
    }
}

/// The smoke sweep's window at a level of users: enough for every server of the examples to answer many requests
/// and be sampled dozens of times; the checks of `scripts/check-smoke.py` ask no more of it.
const SMOKE_USERS_WINDOW: Duration = Duration::from_secs(1);
/// The smoke sweep's window at an arrival rate.
const SMOKE_ARRIVALS_WINDOW: Duration = Duration::from_secs(2);
/// The smoke sweep's warm-up before each level, at most: the server had its start warm-up, and a check needs no
/// steady state.
const SMOKE_WARMUP: Duration = Duration::from_millis(250);

/// The first and last of `values` (once when they are the same): the levels of a smoke run.
pub(crate) fn ends<T: Clone + PartialEq>(values: &[T]) -> Vec<T> {
    let mut out = vec![values[0].clone()];
    if values[values.len() - 1] != values[0] {
        out.push(values[values.len() - 1].clone());
    }
    out
}
