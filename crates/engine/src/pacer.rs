//! [`Pacer`]: one worker's pacing, with the state that belongs to its model, answering the worker loop's questions.
//!
//! The loop is one and the same for both models; it asks its pacer how many connections to open at the start,
//! which requests are due now and on which connection they go, what a connection that has just become free does
//! next, whether an idle connection should start, and whether anything is left to send. The pacer is an enum and
//! these methods are the only place that tells the models apart, so a request costs no dynamic dispatch and no
//! allocation.
//!
//! - [`Closed`]: users send their next request as soon as the last one ends. It owns the users ramp, how many of
//!   this thread's connections are users now (`active`), and the thread's share of a request count.
//! - [`Open`]: requests fall due on a [`Schedule`], whatever the server does. It owns the queue of due requests
//!   waiting for a connection and the idle connections, and says when the loop must wake for the next one.

use std::collections::VecDeque;
use std::time::{Duration, Instant};

use crate::due_times::{Ramp, Schedule};

/// The most due requests one thread keeps waiting for a connection. Past it, the oldest is counted as never sent
/// (with what it waited), so memory stays bounded whatever the rate: at `-R 1e9` the queue would otherwise grow by
/// gigabytes a second.
pub const MOST_WAITING: usize = 1 << 16;
use crate::shared::{share, Part};
use crate::tally::Tally;

/// How one worker paces its requests.
#[derive(Debug)]
pub enum Pacer {
    /// The closed model.
    Closed(Closed),
    /// The open model.
    Open(Open),
}

/// Closed model: a thread's share of the users, each sending its next request when its last one ends.
#[derive(Debug)]
pub struct Closed {
    /// Users over time, for the whole run; its time zero is `origin`.
    users: Ramp,
    /// Which share of the users this thread plays.
    part: Part,
    /// This thread's connection slots: the most users it ever plays.
    slots: usize,
    /// The end of the warm-up: the ramp starts, and requests start to count, here.
    origin: Instant,
    /// Counted requests this thread may still start, when the run has a request count.
    quota: Option<u64>,
    /// Connections `0..active` are the current users.
    active: usize,
}

/// Open model: a thread's due times, and the connections they take.
#[derive(Debug)]
pub struct Open {
    schedule: Schedule,
    /// The most connections this thread may open.
    most: usize,
    /// How long a due request may wait for a connection before it is failed as never sent.
    timeout: Duration,
    /// Due times waiting for a free connection, oldest first.
    pending: VecDeque<Instant>,
    /// Connections with nothing to do, ready for the next due request.
    idle: Vec<usize>,
}

/// What a connection that has just become free does next.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Next {
    /// Start a request that fell due at the given time.
    Send(Instant),
    /// Wait, idle, for a request to fall due (open model) or the ramp to want the user again (closed model).
    Wait,
    /// The ramp no longer wants this user: close the connection, then wait.
    Leave,
}

/// Which connection takes a request that has fallen due.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Slot {
    /// This idle one.
    Idle(usize),
    /// A new one.
    New,
}

impl Pacer {
    /// Closed model: this thread's `part` of the `users` ramp on `slots` connections, and its share of a request
    /// count (`quota`). The ramp and the counting start at `origin`, the end of the warm-up.
    pub fn closed(users: Ramp, quota: Option<u64>, part: Part, slots: usize, origin: Instant) -> Pacer {
        Pacer::Closed(Closed { users, part, slots, origin, quota, active: 0 })
    }

    /// Open model: requests due on `schedule`, on at most `most` connections; one that waited `timeout` for a
    /// connection is failed as never sent.
    pub fn open(schedule: Schedule, most: usize, timeout: Duration) -> Pacer {
        Pacer::Open(Open { schedule, most, timeout, pending: VecDeque::new(), idle: Vec::new() })
    }

    /// When the loop must wake whatever else happens: when the open model's next request falls due. `None` in the
    /// closed model, where answers are what start requests, and in the open model while requests wait for a
    /// connection: then every connection is busy, an answer is the next thing that can start one, and the requests
    /// falling due meanwhile keep their due times however late they are queued.
    pub fn next_wake(&self) -> Option<Instant> {
        match self {
            Pacer::Closed(_) => None,
            Pacer::Open(open) if !open.pending.is_empty() => None,
            Pacer::Open(open) => open.schedule.next_due(),
        }
    }

    /// How many connections to set up at the start: one per user slot (closed model), or none, since the open
    /// model opens them as requests fall due.
    pub fn first_connections(&self) -> usize {
        match self {
            Pacer::Closed(closed) => closed.slots,
            Pacer::Open(_) => 0,
        }
    }

    /// Whether sends are timed against due times (open model): then how late each went out is recorded.
    pub fn records_send_lag(&self) -> bool {
        matches!(self, Pacer::Open(_))
    }

    /// Follows the clock, on every tick: the number of users the ramp wants now (closed model); the queued
    /// requests that have waited too long, failed as never sent (open model).
    pub fn update(&mut self, now: Instant, tally: &mut Tally) {
        match self {
            Pacer::Closed(closed) => {
                let users = closed.users.at(now.saturating_duration_since(closed.origin)).round().max(0.0) as u64;
                closed.active = (share(users, closed.part) as usize).min(closed.slots);
            }
            Pacer::Open(open) => {
                while let Some(&due) = open.pending.front() {
                    if now.saturating_duration_since(due) < open.timeout {
                        break;
                    }
                    open.pending.pop_front();
                    tally.not_sent(due, now);
                }
            }
        }
    }

    /// Whether idle connection `i` should start a request now: a user the ramp wants (closed model). In the open
    /// model, idle connections wait for due requests instead.
    pub fn wants(&self, i: usize) -> bool {
        match self {
            Pacer::Closed(closed) => i < closed.active,
            Pacer::Open(_) => false,
        }
    }

    /// The next request due by `now`, with the connection it takes, while there is one; `opened` connections are
    /// open. Requests that find no connection wait in the queue, keeping their due time. Always `None` in the
    /// closed model.
    pub fn next_due(&mut self, now: Instant, opened: usize, tally: &mut Tally) -> Option<(Instant, Slot)> {
        let Pacer::Open(open) = self else { return None };
        // So far behind that requests fell due a whole timeout ago: they could only wait past it, so they are
        // passed over in one step, counted as never sent, instead of walked one by one (at -R 1e9 the walk alone
        // would outlast the run).
        if let Some(doomed) = now.checked_sub(open.timeout).filter(|&d| open.schedule.next_due().is_some_and(|n| n < d))
        {
            let first = open.schedule.next_due().unwrap_or(doomed);
            let skipped = open.schedule.skip_before(doomed);
            tally.passed_over(skipped, first, doomed, open.timeout, now);
        }
        let mut walked = 0;
        loop {
            let due = open.schedule.next_due()?;
            if due > now {
                return None;
            }
            // A full queue with every connection busy: each request walked from here would only push an older one
            // out as never sent. The rest due by now are passed over at once, each having waited since it fell due.
            if walked >= MOST_WAITING && open.pending.len() >= MOST_WAITING && open.idle.is_empty() {
                let skipped = open.schedule.skip_before(now);
                let waited = now.saturating_duration_since(due) / 2;
                tally.passed_over(skipped, due, now, waited, now);
                return None;
            }
            walked += 1;
            open.schedule.advance();
            tally.due(due);
            if let Some(i) = open.idle.pop() {
                return Some((due, Slot::Idle(i)));
            }
            if opened < open.most {
                return Some((due, Slot::New));
            }
            if open.pending.len() >= MOST_WAITING {
                if let Some(oldest) = open.pending.pop_front() {
                    tally.not_sent(oldest, now);
                }
            }
            open.pending.push_back(due);
        }
    }

    /// What connection `i`, free now, does next. After the end of sending (`ended`), the closed model starts
    /// nothing more; the open model still sends requests that fell due before.
    pub fn on_free(&mut self, i: usize, now: Instant, ended: bool, tally: &mut Tally) -> Next {
        match self {
            Pacer::Closed(_) if ended => Next::Wait,
            Pacer::Closed(closed) if i >= closed.active => Next::Leave,
            Pacer::Closed(closed) => {
                // A request is charged to the quota exactly when it will be counted (see the worker's `start`): by
                // its due time, not by the worker's period, which turns only after this loop turn's events.
                match &mut closed.quota {
                    Some(0) if now >= closed.origin => Next::Wait,
                    Some(left) if now >= closed.origin => {
                        *left -= 1;
                        Next::Send(now)
                    }
                    _ => Next::Send(now),
                }
            }
            Pacer::Open(open) => {
                while let Some(due) = open.pending.pop_front() {
                    if now.saturating_duration_since(due) < open.timeout {
                        return Next::Send(due);
                    }
                    tally.not_sent(due, now);
                }
                open.idle.push(i);
                Next::Wait
            }
        }
    }

    /// Whether a scenario user in the middle of its session may take its next step now: unless the closed
    /// model's request count is used up (the step is charged to it).
    pub fn allows_step(&mut self, now: Instant) -> bool {
        match self {
            Pacer::Closed(Closed { quota: Some(left), origin, .. }) if now >= *origin => {
                let allowed = *left > 0;
                *left = left.saturating_sub(1);
                allowed
            }
            _ => true,
        }
    }

    /// Ctrl-C: requests waiting for a connection are dropped (they were never sent, and are not counted).
    pub fn interrupt(&mut self) {
        if let Pacer::Open(open) = self {
            open.pending.clear();
        }
    }

    /// Gives up on the requests due and still waiting for a connection (open model): each counts as never sent,
    /// its wait so far as its latency.
    pub fn give_up(&mut self, now: Instant, tally: &mut Tally) {
        if let Pacer::Open(open) = self {
            for due in open.pending.drain(..) {
                tally.not_sent(due, now);
            }
        }
    }

    /// Whether nothing is left to send: sending time is over (`ended`) or the request count used up (closed
    /// model); the schedule has ended and no request waits for a connection (open model).
    pub fn done_sending(&self, ended: bool) -> bool {
        match self {
            Pacer::Closed(closed) => ended || closed.quota == Some(0),
            Pacer::Open(open) => open.schedule.next_due().is_none() && open.pending.is_empty(),
        }
    }
}
