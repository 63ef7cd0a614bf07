//! `shootout agent`: one share of a load, run for the coordinator that started it, over stdin and stdout or a
//! connection it dialled back ([`crate::launch::dial::call`]). It never runs anything but the load it was
//! given, and it ends when its input ends: a coordinator that goes away takes its agents with it.

use std::io::{BufRead, Write};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use base64::Engine as _;
use shootout_engine::Plan;
use shootout_model::{LoadOptions, Segment};
use shootout_scenario::Scenario;

use crate::clock::{monotonic_ns, wall_ns};
use crate::frame;
use crate::protocol::{FromAgent, Hello, ToAgent};
use crate::PROTOCOL_VERSION;

/// Why an agent stopped before its load ended.
#[derive(Debug, thiserror::Error)]
pub enum AgentError {
    /// The coordinator's messages could not be read.
    #[error("{0}")]
    Frame(#[from] frame::FrameError),
    /// The coordinator could not be written to.
    #[error("cannot write to the coordinator: {0}")]
    Write(#[from] std::io::Error),
    /// The coordinator turned this agent away.
    #[error("the coordinator turned it away: {0}")]
    Refused(String),
}

/// Serves one run: hello, clock pings, the load, the start, every second, the totals.
pub fn serve<R, W>(mut input: R, mut output: W, index: u32, of: u32) -> Result<(), AgentError>
where
    R: BufRead + Send + 'static,
    W: Write,
{
    let host = crate::host_name();
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get()) as u32;
    let hello = Hello { protocol: PROTOCOL_VERSION, version: env!("CARGO_PKG_VERSION").into(), index, host, cpus };
    frame::write(&mut output, &FromAgent::Hello(hello))?;
    let coordinator = "the coordinator";
    let (mut plan, at) = loop {
        let Some(message) = frame::read::<_, ToAgent>(&mut input, coordinator)? else {
            return Ok(()); // the coordinator went away before the start: nothing to do
        };
        match message {
            ToAgent::Ping { seq } => {
                frame::write(&mut output, &FromAgent::Pong { seq, monotonic_ns: monotonic_ns(), wall_ns: wall_ns() })?
            }
            ToAgent::Load { protocol, options, body_base64, scenario } => {
                match plan_share(index, of, protocol, *options, &body_base64, scenario.map(|s| *s)) {
                    Ok(plan) => {
                        frame::write(&mut output, &FromAgent::Ready)?;
                        // After ready, anything but the start (or the end of the input) means stop.
                        match frame::read::<_, ToAgent>(&mut input, coordinator)? {
                            Some(ToAgent::Start { at_monotonic_ns }) => break (plan, at_monotonic_ns),
                            _ => return Ok(()),
                        }
                    }
                    Err(message) => {
                        frame::write(&mut output, &FromAgent::Failed { message })?;
                        return Ok(());
                    }
                }
            }
            ToAgent::Start { .. } | ToAgent::Stop => return Ok(()),
            ToAgent::Refused { why } => return Err(AgentError::Refused(why)),
        }
    };
    let stop = Arc::new(AtomicBool::new(false));
    watch_for_stop(input, stop.clone());
    // The shared start, on this process's clock: the run waits for it, and its schedule counts from it.
    let (now, wait) = (Instant::now(), at - monotonic_ns());
    plan.start_at = Some(if wait >= 0 {
        now + Duration::from_nanos(wait as u64)
    } else {
        now.checked_sub(Duration::from_nanos(wait.unsigned_abs())).unwrap_or(now)
    });
    let mut write_failed = None;
    let outcome = shootout_engine::run_observed(&plan, stop.clone(), &mut |_| {}, &mut |second| {
        if write_failed.is_none() {
            if let Err(e) = frame::write(&mut output, &FromAgent::Second(second.clone())) {
                write_failed = Some(e);
                stop.store(true, Ordering::Relaxed);
            }
        }
    });
    if let Some(e) = write_failed {
        return Err(e.into());
    }
    match outcome {
        Ok((_, totals)) => frame::write(&mut output, &FromAgent::Totals(Box::new(totals)))?,
        Err(e) => frame::write(&mut output, &FromAgent::Failed { message: format!("agent {index}: {e}") })?,
    }
    Ok(())
}

/// This agent's share of the load the coordinator sent: its segment of the whole, planned; or why it cannot run.
fn plan_share(
    index: u32,
    of: u32,
    protocol: u32,
    mut options: LoadOptions,
    body_base64: &str,
    scenario: Option<Scenario>,
) -> Result<Plan, String> {
    if protocol != PROTOCOL_VERSION {
        return Err(format!(
            "agent {index} speaks protocol {PROTOCOL_VERSION}, the coordinator {protocol}: run the same shootout on both"
        ));
    }
    options.segment = Some(Segment { index, of });
    let body = base64::engine::general_purpose::STANDARD
        .decode(body_base64)
        .map_err(|e| format!("agent {index}: the request body is not base64 ({e})"))?;
    match scenario {
        Some(scenario) => Plan::with_scenario(options, scenario),
        None => Plan::new(options, &body),
    }
    .map_err(|e| format!("agent {index}: {e}"))
}

/// Reads the coordinator's messages while the load runs: a `Stop`, or the end of its stdin, stops the load.
fn watch_for_stop<R: BufRead + Send + 'static>(mut input: R, stop: Arc<AtomicBool>) {
    std::thread::spawn(move || loop {
        match frame::read::<_, ToAgent>(&mut input, "the coordinator") {
            Ok(Some(ToAgent::Stop)) | Ok(None) | Err(_) => {
                stop.store(true, Ordering::Relaxed);
                return;
            }
            Ok(Some(_)) => {}
        }
    });
}
