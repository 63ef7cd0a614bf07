//! The checks of a load's settings (what `shootout load`'s flags and a suite's trials give), on any values: each
//! line of the input is one choice (a rate, users, streams, threads, a duration, a count, a timeout, stages as
//! `SECONDS:TARGET,…`, the protocol and the arrivals). Every set of choices is refused in words or built; a built
//! one's due times are then drawn, for a bounded stretch, as a run's workers draw them.
#![no_main]

use std::time::{Duration, Instant};

use libfuzzer_sys::fuzz_target;
use shootout_engine::due_times::{Ramp, Schedule, Share};
use shootout_model::settings::LoadSettings;
use shootout_model::units::parse_duration;
use shootout_model::{Arrival, Pacing, Protocol, Stage, StopCondition};

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let mut lines = text.lines().map(str::trim);
    let mut next = || lines.next().unwrap_or("");
    let rate = next().parse::<f64>().ok();
    let connections = next().parse().ok();
    let streams = next().parse().ok();
    let threads = next().parse().ok();
    let duration = parse_duration(next()).ok();
    let requests = next().parse().ok();
    let timeout = parse_duration(next()).ok();
    let stages: Vec<Stage> = next()
        .split(',')
        .filter_map(|stage| {
            let (seconds, target) = stage.split_once(':')?;
            let seconds = seconds.parse::<f64>().ok().filter(|s| s.is_finite() && (0.0..1e6).contains(s))?;
            Some(Stage { duration: Duration::from_secs_f64(seconds), target: target.parse().ok()? })
        })
        .collect();
    let protocol = match next() {
        "2" => Some(Protocol::Http2),
        "3" => Some(Protocol::Http3),
        _ => None,
    };
    let arrival = Some(if next() == "poisson" { Arrival::Poisson } else { Arrival::Constant });
    let url = if protocol == Some(Protocol::Http3) { "https://localhost:9/" } else { "http://127.0.0.1:9/" };
    let settings = LoadSettings {
        url: url.into(),
        rate,
        arrival,
        connections,
        streams,
        threads,
        duration,
        requests,
        timeout,
        stages,
        protocol,
        ..LoadSettings::default()
    };
    let Ok(options) = settings.build(2) else { return };
    let Pacing::Open { arrival, .. } = options.pacing else { return };
    // The first thousand due times of the first worker of two, and a skip past the rest of the first second.
    let origin = Instant::now();
    let end = match options.stop {
        StopCondition::Duration(length) => origin.checked_add(length),
        StopCondition::Requests(_) => None,
    };
    let count = match options.stop {
        StopCondition::Requests(n) => Some(n),
        StopCondition::Duration(_) => None,
    };
    let share = Share { first: 0, stride: 2, seed: 7 };
    let mut schedule = Schedule::new(&Ramp::level(&options), arrival, origin, origin, share, end, count);
    let mut last = origin;
    for _ in 0..1000 {
        let Some(due) = schedule.next_due() else { break };
        assert!(due >= last, "due times go forward: {due:?} after {last:?}");
        last = due;
        schedule.advance();
    }
    schedule.skip_before(origin + Duration::from_secs(1));
});
