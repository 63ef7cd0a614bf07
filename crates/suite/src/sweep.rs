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
    /// A check that every server runs: the first and last level, 2 s each, one repeat.
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

    /// For the smoke sweep, cuts a validated suite down to its first and last level, 2 s each after at most 1 s
    /// of warm-up, once, and a profile to 2 s; a server's start warm-up is kept up to 5 s, since a server it was written for (a JVM, a
    /// Rails app's cold workers) may not answer a single request of a 2 s window without it.
    pub(crate) fn cut(self, suite: Suite) -> Suite {
        if self != Sweep::Smoke {
            return suite;
        }
        let levels = match &suite.levels {
            Levels::Connections(c) => Levels::Connections(ends(c)),
            Levels::Rates(r) => Levels::Rates(ends(r)),
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
            duration: Duration::from_secs(2),
            warmup: suite.warmup.min(Duration::from_secs(1)),
            requests: None,
            profile: suite.profile.map(|p| self.profile(p)),
            ..suite
        }
    }
}

/// The first and last of `values` (once when they are the same): the levels of a smoke run.
pub(crate) fn ends<T: Clone + PartialEq>(values: &[T]) -> Vec<T> {
    let mut out = vec![values[0].clone()];
    if values[values.len() - 1] != values[0] {
        out.push(values[values.len() - 1].clone());
    }
    out
}
