//! [`Tally`]: what one worker has measured, and what it tells the coordinator ([`Report`]).
//!
//! A request counts when it fell due after the warm-up. Responses and failures go into the thread's
//! [`Recorder`] and, for scenarios, into the recorder of the named request; the tally also remembers when the
//! last counted request ended ([`Ends`]), which bounds the measured window of a run to a request count or an
//! interrupted one. Apart from what counts, it notes what happened inside the window, whatever the request
//! ([`WindowCounts`](shootout_metrics::WindowCounts)): responses, sends and bytes there, and the time requests were outstanding there. The rates
//! are made of these alone, so the responses a server sends after sending stopped (draining a backlog) are in
//! the latency but never in a rate. Each completed second goes to the
//! coordinator as an [`Interval`], every second in order (empty ones too), so the coordinator knows when a second
//! is complete; at the end, the totals.

use std::io;
use std::sync::mpsc::Sender;
use std::time::{Duration, Instant};

use shootout_metrics::{Check, Interval, Recorder};
use shootout_model::ErrorKind;

use crate::conn::{Conn, Phase};
use crate::cpu::queued_now;

/// When a worker's counted requests ended, and how long it waited for a CPU meanwhile.
#[derive(Debug, Clone, Copy)]
pub struct Ends {
    /// Its last request, answered or failed (or the interruption).
    pub any: Instant,
    /// How long the worker waited for a CPU while measuring.
    pub queued: Duration,
}

/// What worker `thread` sends the coordinator: `(thread, report)`.
pub type Reports = Sender<(usize, Report)>;

/// What a worker sends to the coordinator.
pub enum Report {
    /// One second of measurements.
    Interval(Interval),
    /// The worker is done: its totals, its totals per named request (scenarios), and when its requests ended.
    Done(Box<Recorder>, Vec<Recorder>, Ends),
    /// The worker could not start (no poll instance, or its timer could not be registered).
    Failed(io::Error),
}

/// One worker's measurements so far.
pub struct Tally {
    /// Everything this thread counted.
    pub recorder: Recorder,
    /// Scenarios: the same, per named request.
    per_request: Vec<Recorder>,
    /// The end of the warm-up: requests due from here count.
    measure_start: Instant,
    /// When sending stops, for a timed run: the window's end (a run to a request count has none).
    window_end: Option<Instant>,
    /// Whether the loop's turn in progress is inside the window, for the bytes read in it ([`Tally::clock`]).
    in_window: bool,
    /// When the current second of the timeline ends.
    next_second: Instant,
    /// When the last counted request ended, answered or failed.
    last_end: Instant,
    /// Which worker this is, as the coordinator knows it.
    thread: usize,
    /// This thread's wait for a CPU when measuring started ([`queued_now`]).
    queued_start: Duration,
    /// Its wait for a CPU in the window, once the window has ended (the drain is not the window's).
    queued_in_window: Option<Duration>,
    reports: Reports,
}

impl Tally {
    /// An empty tally, counting from `measure_start` (a window that ends at `window_end`, if given), with a
    /// recorder for each of `named` requests (none for a plain load), reporting to `reports` as worker `thread`.
    pub fn new(
        measure_start: Instant,
        window_end: Option<Instant>,
        named: usize,
        thread: usize,
        reports: Reports,
    ) -> Tally {
        Tally {
            recorder: Recorder::new(),
            per_request: (0..named).map(|_| Recorder::new()).collect(),
            measure_start,
            window_end,
            in_window: false,
            next_second: measure_start + Duration::from_secs(1),
            last_end: measure_start,
            thread,
            queued_start: queued_now(),
            queued_in_window: None,
            reports,
        }
    }

    /// The warm-up is over: forget what it recorded.
    pub fn start_measuring(&mut self) {
        self.recorder.reset_after_warmup();
        self.per_request.iter_mut().for_each(Recorder::reset_after_warmup);
        self.queued_start = queued_now();
    }

    /// Sends every second completed by `now` to the coordinator; notes the wait for a CPU once the window ends.
    pub fn report_seconds(&mut self, now: Instant) {
        if self.queued_in_window.is_none() && self.window_end.is_some_and(|end| now >= end) {
            self.queued_in_window = Some(queued_now().saturating_sub(self.queued_start));
        }
        while now >= self.next_second {
            let next = self.recorder.current_second() + 1;
            let _ = self.reports.send((self.thread, Report::Interval(self.recorder.take_interval(next))));
            self.next_second += Duration::from_secs(1);
        }
    }

    /// Whether `now` is inside the measured window.
    fn inside(&self, now: Instant) -> bool {
        now >= self.measure_start && self.window_end.is_none_or(|end| now < end)
    }

    /// The loop has read the clock after waiting: the bytes it reads next are inside the window or not.
    pub fn clock(&mut self, now: Instant) {
        self.in_window = self.inside(now);
    }

    /// `n` bytes arrived for a request that counts (`counted`) or not.
    pub fn received(&mut self, counted: bool, n: usize) {
        if counted {
            self.recorder.bytes_received += n as u64;
        }
        if self.in_window {
            self.recorder.window.bytes_received += n as u64;
        }
    }

    /// A request due at `due` was written at `now`; in the open model (`lagged`), how late it went is noted.
    pub fn written(&mut self, counted: bool, lagged: bool, due: Instant, now: Instant) {
        if counted && lagged {
            self.recorder.sent(micros(now.saturating_duration_since(due)));
        }
        if self.inside(now) {
            self.recorder.window.sent += 1;
        }
    }

    /// A request due at `due` ended at `now`, answered or not: the part of its life inside the window is time
    /// in flight there, and a counted one that ended past the window is noted as such (also under its name,
    /// `request`, in a scenario).
    fn ended(&mut self, counted: bool, request: Option<usize>, due: Instant, now: Instant) {
        self.in_flight(due, now);
        if counted {
            let after = u64::from(self.window_end.is_some_and(|end| now >= end));
            for recorder in std::iter::once(&mut self.recorder).chain(request.and_then(|r| self.per_request.get_mut(r)))
            {
                recorder.window.ended_after += after;
            }
            self.last_end = now;
        }
    }

    /// A request due at `due` was outstanding until `now`: the part of that inside the window is time in flight
    /// there.
    fn in_flight(&mut self, due: Instant, now: Instant) {
        let from = due.max(self.measure_start);
        let to = self.window_end.map_or(now, |end| now.min(end));
        self.recorder.window.in_flight_us += micros(to.saturating_duration_since(from));
    }

    /// The counted request on `conn`, still in flight at `now`, is left out: a search's probe stopped waiting
    /// for it, its verdict settled whatever it does ([`Stakes::settled`](crate::stakes::Stakes::settled)). Its
    /// time in the window is in flight there, its wait so far is in the latency (at least that long), and it is
    /// counted apart, in no count of outcomes.
    pub fn left_out(&mut self, conn: &Conn, now: Instant) {
        self.in_flight(conn.due, now);
        let waited = micros(now - conn.due);
        for recorder in std::iter::once(&mut self.recorder).chain(self.per_request.get_mut(conn.request)) {
            recorder.left_out(waited);
        }
        self.last_end = now;
    }

    /// Open model: the responses inside the window so far over the requests due in it (`None` before any fell
    /// due, and in the closed model, where nothing falls due).
    pub fn answered_share(&self) -> Option<f64> {
        let due = self.recorder.sends().due;
        (due > 0).then(|| self.recorder.window.responses as f64 / due as f64)
    }

    /// A request due in the warm-up was still unanswered when the window ended: it counts from now on.
    pub fn held_over(&mut self) {
        self.recorder.window.held_over += 1;
    }

    /// Open model: a request fell due at `due`.
    pub fn due(&mut self, due: Instant) {
        if due >= self.measure_start {
            self.recorder.due();
        }
    }

    /// A request due at `due` never went out: it counts as failed, with the time it waited as its latency.
    pub fn not_sent(&mut self, due: Instant, now: Instant) {
        let counted = due >= self.measure_start;
        self.ended(counted, None, due, now);
        if counted {
            self.recorder.failure(ErrorKind::NotSent, Some(micros(now - due)), None);
        }
    }

    /// Open model: `n` requests that fell due between `first` and `last` were passed over, never sent, by a
    /// client so far behind that they could not be (see [`Pacer`](crate::pacer::Pacer)). They count as not sent,
    /// each with `waited` as its latency, when they fell due after the warm-up (the middle one stands for all).
    pub fn passed_over(&mut self, n: u64, first: Instant, last: Instant, waited: Duration, now: Instant) {
        if n == 0 || first < self.measure_start {
            return;
        }
        self.recorder.due_n(n);
        self.recorder.failures(ErrorKind::NotSent, micros(waited), n);
        // Each was outstanding from when it fell due for as long as it waited.
        let middle = first + (last - first) / 2;
        let to = self.window_end.map_or(middle + waited, |end| (middle + waited).min(end));
        self.recorder.window.in_flight_us += n * micros(to.saturating_duration_since(middle.max(self.measure_start)));
        self.recorder.window.ended_after += if self.window_end.is_some_and(|end| now >= end) { n } else { 0 };
        self.last_end = now;
    }

    /// The request on `conn` was answered with `status` at `now`: a response, whatever its checks; `failed` is
    /// the check it failed (scenarios), counted apart.
    pub fn answered(&mut self, conn: &Conn, status: u16, failed: Option<Check>, now: Instant) {
        self.ended(conn.counted, Some(conn.request), conn.due, now);
        if self.inside(now) {
            self.recorder.window.responses += 1;
        }
        if !conn.counted {
            self.recorder.warmup_requests += 1;
            return;
        }
        let (latency, service) = (micros(now - conn.due), micros(now - conn.sent_at));
        for recorder in std::iter::once(&mut self.recorder).chain(self.per_request.get_mut(conn.request)) {
            recorder.response(status, latency, service);
            if let Some(check) = failed {
                recorder.check_failed(conn.request, check, status);
            }
        }
    }

    /// The request on `conn` failed with `kind` at `now`. A timeout, or a request given up unsent, counts the time
    /// waited as its latency (and, when the request was sent, as its service time).
    pub fn failed(&mut self, conn: &Conn, kind: ErrorKind, now: Instant) {
        self.ended(conn.counted, Some(conn.request), conn.due, now);
        if !conn.counted {
            self.recorder.warmup_requests += 1;
            return;
        }
        let was_sent = matches!(conn.phase, Phase::Writing | Phase::Reading);
        let waited = matches!(kind, ErrorKind::ReadTimeout | ErrorKind::Unanswered | ErrorKind::NotSent)
            .then(|| micros(now - conn.due));
        let served = (waited.is_some() && was_sent).then(|| micros(now - conn.sent_at));
        for recorder in std::iter::once(&mut self.recorder).chain(self.per_request.get_mut(conn.request)) {
            recorder.failure(kind, waited, served);
        }
    }

    /// The response on `conn` (recorded with [`Tally::answered`]) was a redirect, followed.
    pub fn redirected(&mut self, conn: &Conn) {
        if conn.counted {
            for recorder in std::iter::once(&mut self.recorder).chain(self.per_request.get_mut(conn.request)) {
                recorder.redirected();
            }
        }
    }

    /// The request on `conn` was refused before it was sent, for `kind` (a place off the run's server, named
    /// `host`, or one redirect too many): it counts as failed, with no latency, as it waited for nothing.
    pub fn refused(&mut self, conn: &Conn, kind: ErrorKind, host: Option<&str>, now: Instant) {
        self.ended(conn.counted, Some(conn.request), now, now);
        if !conn.counted {
            self.recorder.warmup_requests += 1;
            return;
        }
        for recorder in std::iter::once(&mut self.recorder).chain(self.per_request.get_mut(conn.request)) {
            recorder.failure(kind, None, None);
            if let Some(host) = host {
                recorder.went_off_origin(host);
            }
        }
    }

    /// HTTP/2: the request on `conn` is failing because the server reset its stream with `code`: counts the code
    /// (the failure itself is [`Tally::failed`]'s).
    pub fn stream_reset(&mut self, conn: &Conn, code: u32) {
        if conn.counted {
            for recorder in std::iter::once(&mut self.recorder).chain(self.per_request.get_mut(conn.request)) {
                recorder.stream_reset(code);
            }
        }
    }

    /// Time ran out after Ctrl-C: the requests still in flight were recorded unanswered, and the run ends now.
    pub fn cut_off(&mut self, now: Instant) {
        self.last_end = now;
    }

    /// Sends the last, partial second and the totals to the coordinator.
    pub fn finish(self) {
        let mut recorder = self.recorder;
        let final_interval = recorder.take_interval(0);
        if final_interval.requests > 0 {
            let _ = self.reports.send((self.thread, Report::Interval(final_interval)));
        }
        let queued = self.queued_in_window.unwrap_or_else(|| queued_now().saturating_sub(self.queued_start));
        let ends = Ends { any: self.last_end, queued };
        let _ = self.reports.send((self.thread, Report::Done(Box::new(recorder), self.per_request, ends)));
    }
}

/// A duration in whole microseconds, as the histograms take it.
pub fn micros(duration: Duration) -> u64 {
    duration.as_micros().min(u128::from(u64::MAX)) as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reset_codes_count_with_the_request_and_its_named_recorder_and_warmup_ones_do_not() {
        let now = Instant::now();
        let (reports, _received) = std::sync::mpsc::channel();
        let mut tally = Tally::new(now, None, 2, 0, reports);
        let mut conn = Conn::new(now);
        (conn.counted, conn.request, conn.phase) = (true, 1, Phase::Reading);
        for code in [7, 2, 2] {
            tally.stream_reset(&conn, code);
            let kind = if code == 7 { ErrorKind::StreamRefused } else { ErrorKind::StreamReset };
            tally.failed(&conn, kind, now);
        }
        conn.counted = false;
        tally.stream_reset(&conn, 2);
        tally.failed(&conn, ErrorKind::StreamReset, now);
        let by_code = tally.recorder.stream_resets().by_code();
        assert_eq!(by_code.into_iter().collect::<Vec<_>>(), [(2, 2), (7, 1)]);
        let errors = tally.recorder.error_counts();
        assert_eq!(errors[&ErrorKind::StreamReset] + errors[&ErrorKind::StreamRefused], 3, "one failure per code");
        assert_eq!(tally.per_request[1].stream_resets().total(), 3);
        assert!(tally.per_request[0].stream_resets().is_empty());
        assert_eq!(tally.recorder.warmup_requests, 1);
    }
}
