//! [`unmeasured`]: a repeat that measured nothing is a failed trial with its cause, not a zero in a median. Two
//! causes: no response arrived in the window at all (its connects were not accepted, or nothing came back on
//! them: the server's silence), or, in the closed model, most of the users got no answer through the whole
//! window (their requests were held over from the warm-up: the figures would be those of the few users the
//! server did answer). The analysis leaves such a repeat out of a cell's figures and its cell meets no SLO;
//! `compare` takes it for no sample.

use shootout_model::{LoadResult, Pacing};

/// Why `result` measured nothing, in words (`no answer in the window: its connects were not accepted`); none for
/// a measurement.
pub fn unmeasured(result: &LoadResult) -> Option<String> {
    if result.throughput.requests_per_s <= 0.0 && result.duration_s > 0.0 {
        let connects: u64 = result.errors.iter().filter(|(kind, _)| kind.is_connect()).map(|(_, n)| n).sum();
        // A connect that failed, or that took a second or more (the kernel's first SYN retransmit), was not
        // accepted in time; connections opened in the warm-up and never answered on are the server's silence.
        let why = if connects > 0 || result.connect.max_us >= 1_000_000 {
            "no answer in the window: its connects were not accepted"
        } else {
            "no answer in the window"
        };
        return Some(why.to_string());
    }
    let users = result.options.most_in_flight();
    let held = result.requests.held_over;
    (result.options.pacing == Pacing::Closed && held * 2 > users)
        .then(|| format!("{held} of {users} users got no answer through the whole window"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use shootout_model::ErrorKind;

    fn result() -> LoadResult {
        let trial: shootout_model::run::TrialRecord =
            serde_json::from_str(include_str!("../../tests/trial.json")).unwrap();
        trial.result
    }

    #[test]
    fn a_repeat_that_answered_nothing_or_held_most_users_measured_nothing() {
        let r = result();
        assert_eq!(unmeasured(&r), None, "a measurement");
        let mut none = result();
        none.throughput.requests_per_s = 0.0;
        assert_eq!(unmeasured(&none).as_deref(), Some("no answer in the window"));
        none.errors.insert(ErrorKind::ConnectTimeout, 3);
        assert_eq!(unmeasured(&none).as_deref(), Some("no answer in the window: its connects were not accepted"));
        none.errors.clear();
        none.connect.max_us = 3_000_000;
        assert_eq!(unmeasured(&none).as_deref(), Some("no answer in the window: its connects were not accepted"));
        let mut held = result();
        held.options.connections = 8;
        held.requests.held_over = 5;
        assert_eq!(unmeasured(&held).as_deref(), Some("5 of 8 users got no answer through the whole window"));
        held.requests.held_over = 4;
        assert_eq!(unmeasured(&held), None, "half the users answered: a measurement, its held-over requests in it");
    }
}
