//! [`Search`]: the capacity search, which finds the highest load level (an arrival rate, or a number of users)
//! whose trials meet every objective, the way an engineer bisects by hand but bounded and the same every time:
//! start low and double until a level fails, then halve the bracket between the highest level that passed and
//! the lowest that failed until it is within a stated precision. It only decides which level to try next and
//! when to stop; running a probe and judging it against the objectives is the caller's. Its [`Probe`]s and
//! [`Found`] are kept in results as they are.
//!
//! A shared machine and a server near its limit make probes at one level disagree: one meets the objectives, the
//! next breaks one, and a level may pass above one that failed. Every probe counts: the answer is a band, from the
//! highest level that held below every level that broke to the lowest level that broke above every level that
//! held. Both ends are measured twice before the search answers ([`Step::Confirm`]: the level that held after the
//! last failure), so two runs of one search land in bands that meet where a point would often miss; a band wider
//! than the precision says the probes disagreed ([`Search::moved`]).

use serde::{Deserialize, Serialize};

/// Where a search of rates starts when the user does not say: low, since doubling climbs fast.
pub const START_RATE: f64 = 10.0;
/// The lowest rate a search tries: one request every ten seconds.
pub const FLOOR_RATE: f64 = 0.1;
/// The highest rate a search tries.
pub const CEILING_RATE: f64 = 10_000_000.0;
/// The most users a search of users tries.
pub const CEILING_USERS: f64 = 10_000.0;
/// The most probes one search runs.
pub const MOST_PROBES: usize = 30;
/// The precision a search stops at when the user does not say: a bracket 5% wide.
pub const PRECISION: f64 = 0.05;

/// The busy share of the server's CPUs up to which a search that climbs by the CPU ([`Search::climbing_by_cpu`])
/// quadruples its level rather than doubling it: a quarter, so that four times the level fills them at most, were
/// the CPU the server's only limit (at low levels a server's CPU per request is at its highest: the level it
/// predicts is a floor).
pub const QUADRUPLE_BELOW: f64 = 0.25;

/// The share of the requests due that a probe's run must have answered by the end of its window for its
/// stragglers to be waited for: under it (`1 − 2 × precision`, where the judge calls a probe far behind), the
/// probe fails whatever they do, and they are counted unanswered instead of waited for.
pub fn give_up_below(precision: f64) -> f64 {
    1.0 - 2.0 * precision
}

/// The most measured seconds a probe whose percentile stays undecided spends on it (unless it has fewer than
/// [`LEAST_PROBE_TRIALS`] trials): past it, the probe is undecided.
pub const MOST_PROBE_SECONDS: f64 = 60.0;

/// The most trials (or `load --find-rate` runs) a probe takes while undecided.
pub const MOST_PROBE_TRIALS: u32 = 12;

/// The trials an undecided probe may always take, however long each is.
pub const LEAST_PROBE_TRIALS: u32 = 3;

/// True when a probe judged `verdict` on `trials` trials (`measured_s` seconds in all) measures another: only
/// when it must `decide` ([`Step::Decide`], [`Step::Confirm`]) and a percentile stays undecided, up to
/// [`MOST_PROBE_TRIALS`] and [`MOST_PROBE_SECONDS`] (or [`LEAST_PROBE_TRIALS`], when they take longer), and only
/// while a decision is within that reach ([`out_of_reach`]). Any other probe is one trial: the search counts every
/// probe, and measures each end of its answer twice.
pub fn measures_more(verdict: &Verdict, decide: bool, trials: u32, measured_s: f64) -> bool {
    let room = trials < MOST_PROBE_TRIALS && (measured_s < MOST_PROBE_SECONDS || trials < LEAST_PROBE_TRIALS);
    decide && verdict.undecided && room && !out_of_reach(verdict, trials, measured_s)
}

/// True when, from two trials on, deciding the probe would take more than the cap allows: its requests so far
/// times [`Verdict::to_decide`] (the bounds narrowing as the square root of the requests, the share past the limit
/// staying where it was). A server whose percentile sits on its limit (Express's p99 at 13-37 ms a trial against
/// 20 ms, ten trials undecided) is counted against that level at once, as the cap would count it, not after a
/// minute more of measuring.
fn out_of_reach(verdict: &Verdict, trials: u32, measured_s: f64) -> bool {
    let Some(factor) = verdict.to_decide.filter(|_| trials >= 2) else { return false };
    let (all_trials, all_s) = (f64::from(trials) * factor, measured_s * factor);
    all_trials > f64::from(MOST_PROBE_TRIALS)
        || (all_s > MOST_PROBE_SECONDS && all_trials > f64::from(LEAST_PROBE_TRIALS))
}

/// One level tried, and whether its trials met every objective.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Probe {
    /// The level: requests (or users) per second in the open model, users in the closed one.
    pub level: f64,
    /// True when the probe met every objective.
    pub passed: bool,
    /// Successful responses per second it served (`None` when not known); for a probe at the client's limit, the
    /// level the server is known to take there (when every objective held but the client's limit).
    pub served: Option<f64>,
    /// The load generator was saturated: the probe judged the client, and the server's limit lies above what
    /// the search can reach from this client.
    #[serde(default)]
    pub client: bool,
    /// Undecided (a percentile's bounds straddled its limit), counted as its figures lean (`passed`) to choose the
    /// next level: the answer never rests on it ([`Step::Decide`]).
    #[serde(default)]
    pub provisional: bool,
    /// The share of its CPUs the server kept busy there (0 to 1), when the caller measured it
    /// ([`Search::note_cpu`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub busy: Option<f64>,
}

/// What the probes at one level said: how many met every objective and how many broke one. A level whose probes
/// said both lies inside the capacity's band.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Marks {
    /// Probes that met every objective.
    pub held: u32,
    /// Probes that broke one.
    pub broke: u32,
}

impl Marks {
    /// The mark of one probe.
    pub fn of(passed: bool) -> Marks {
        Marks { held: u32::from(passed), broke: u32::from(!passed) }
    }

    /// Both tallies together.
    fn and(self, other: Marks) -> Marks {
        Marks { held: self.held + other.held, broke: self.broke + other.broke }
    }
}

/// How a search ended, with the bracket it ended in.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Found {
    /// The highest level that passed below every failure: the capacity (`None`: no level passed, down to the
    /// search's floor).
    pub capacity: Option<f64>,
    /// The lowest level that failed above every level that passed (`None`: every level passed, up to the search's
    /// ceiling): with the capacity, the band the capacity lies in.
    pub failed_at: Option<f64>,
    /// Why it stopped.
    pub ended: Ended,
}

/// Why a search stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Ended {
    /// The bracket is within the precision asked (or, for whole levels, one apart).
    Precise,
    /// The ceiling passed: the capacity is at least the ceiling.
    Ceiling,
    /// The floor failed: nothing passed.
    Floor,
    /// It ran out of probes before the bracket was narrow enough.
    Probes,
    /// A signal, or a probe that could not run, cut it short (never the search's own decision: its caller
    /// records it).
    Interrupted,
    /// The load generator ran out of CPU at a level, and the search narrowed the bracket under it: the capacity is
    /// at least the highest level that passed (or what the client completed at its limit, when every objective
    /// held there), the client's limit and not the server's.
    Client,
}

/// A search as a result keeps it (`shootout load --find-rate`'s `search`): what was asked, each probe, and what
/// was found.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SearchRecord {
    /// The highest rate that met every objective below every rate that broke one (`None`: none did).
    pub rate: Option<f64>,
    /// The lowest rate that broke one above every rate that met them (`None`: none did, up to the ceiling).
    pub failed_at: Option<f64>,
    /// Why the search stopped.
    pub ended: Ended,
    /// The objectives every probe was held to, as written.
    pub objectives: Vec<String>,
    /// The precision asked, a fraction of the rate found (0.05 for 5%).
    pub precision: f64,
    /// Every probe, in the order they ran.
    pub probes: Vec<ProbeRecord>,
    /// The search's wall time, probes and the pauses between them.
    pub seconds: f64,
    /// True when a probe that broke an objective had a saturated load generator: the rate found may be the
    /// client's limit rather than the server's, a floor.
    pub client_bound: bool,
    /// True when the probes disagreed (a level's probes fell both ways, or a level held above one that broke): the
    /// answer is the band from the capacity to the level that broke it, wider than the precision alone leaves.
    #[serde(default)]
    pub moved: bool,
    /// The time spent bringing the server back to rest before the probes, seconds (part of `seconds`).
    #[serde(default)]
    pub settling_s: f64,
}

/// One run of a probe as a result keeps it: its rate, its figures, and the verdict of the probe it belongs to.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProbeRecord {
    /// The rate asked, requests per second.
    pub rate: f64,
    /// True when its probe passed (never for a run cut short by a signal, which is kept all the same).
    pub passed: bool,
    /// Successful responses per second measured.
    pub requests_per_s: f64,
    /// Mean latency, µs, from when each request was due.
    pub mean_us: f64,
    /// 99th percentile latency, µs.
    pub p99_us: f64,
    /// Failed requests and HTTP errors, percent of all requests.
    pub errors_pct: f64,
    /// What its probe broke, each with the figure that broke it (`mean < 5ms (it was 6.120 ms)`).
    pub broke: Vec<String>,
    /// True when the load generator was saturated during it.
    pub client_saturated: bool,
    /// The time it took to bring the server back to rest before this run, seconds.
    #[serde(default)]
    pub settle_s: f64,
    /// Which run of its probe this is: a probe near a limit runs more than once, and is judged on all its runs.
    #[serde(default = "first_run")]
    pub run: u32,
    /// Requests still in flight when it stopped waiting for them, its verdict settled whatever they did (the
    /// result's `requests.left_out`).
    #[serde(default)]
    pub left_out: u64,
    /// True when its probe broke nothing but a percentile's bounds straddled the limit (`broke` says which, with
    /// its bounds).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub undecided: bool,
}

/// A probe's first run: what a result saved before runs were counted had.
fn first_run() -> u32 {
    1
}

/// A probe judged: whether it met every objective, and if not, whether the requests measured could tell.
#[derive(Debug, Clone, PartialEq)]
pub struct Verdict {
    /// It met every objective, the server completed what fell due, and the client was not the limit.
    pub passed: bool,
    /// No objective was broken, but a percentile's 95% bounds straddled its limit: the requests measured cannot
    /// tell, and the probe measures more ([`measures_more`]); one still undecided then counts against the
    /// level (the capacity is below it) and is said undecided, never broken.
    pub undecided: bool,
    /// The load generator was saturated: the probe judges the client, not the server, and bounds the search from
    /// above ([`Search::record_client`]).
    pub client: bool,
    /// When undecided: the figures themselves (without their bounds) met every objective, which the search
    /// follows to choose its next level ([`Search::record_provisional`]).
    pub leans: bool,
    /// When the client was saturated and everything else held: the level the server is known to take (the rate it
    /// completed in the open model, the users in the closed one).
    pub floor: Option<f64>,
    /// Successful responses per second served (across its trials, the figure the comparison uses).
    pub served: f64,
    /// What it broke, each with its figure (`mean<5ms (it was 6.120 ms)`); empty when it passed.
    pub broke: Vec<String>,
    /// When undecided: how many times the requests measured would decide it, the share of requests past each
    /// undecided limit staying as measured and its bounds narrowing as the square root of the requests (the most
    /// over the undecided objectives; infinite for a share on the limit; `None` where a bound cannot be projected).
    pub to_decide: Option<f64>,
}

/// One server's search in a suite run (`searches/SERVER.json`), rewritten after each probe, so that a run cut
/// short keeps what it found and `--resume` adds to its time.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ServerSearch {
    /// The server.
    pub server: String,
    /// The highest level that met every objective below every failure (`None`: none did).
    pub capacity: Option<f64>,
    /// The lowest level that broke one above every level that met them (`None`: none did, up to the ceiling).
    pub failed_at: Option<f64>,
    /// Why it stopped ([`Ended::Interrupted`] while it runs, and when a run was cut short).
    pub ended: Ended,
    /// The precision asked, a fraction of the capacity.
    pub precision: f64,
    /// Every probe, in the order they ran.
    pub probes: Vec<SuiteProbe>,
    /// The time the search took, its server's start and warm-up included, summed over the runs that resumed it.
    pub seconds: f64,
    /// True when the probes disagreed (a level's probes fell both ways, or a level held above one that broke): the
    /// answer is the band from the capacity to the level that broke it, wider than the precision alone leaves.
    #[serde(default)]
    pub moved: bool,
    /// The part of `seconds` spent bringing the server back to rest between probes.
    #[serde(default)]
    pub settling_s: f64,
}

/// One probe of a suite's search: a level, its verdict, and the trials it took (1, unless it had to decide an
/// undecided percentile).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SuiteProbe {
    /// The level.
    pub level: f64,
    /// True when it met every objective (on its trials together, as the suite compares a cell's repeats).
    pub passed: bool,
    /// The trials it was judged on (the field keeps its name in `searches/SERVER.json`).
    pub repeats: u32,
    /// Successful responses per second it served.
    #[serde(default)]
    pub served: Option<f64>,
    /// True when the load generator was saturated: the search went on under this level, and ends at the client's
    /// limit.
    #[serde(default)]
    pub client: bool,
    /// What it broke, each with its figure.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub broke: Vec<String>,
    /// True when it broke nothing but a percentile stayed undecided at the cap ([`MOST_PROBE_SECONDS`]): the
    /// search went on under it, as under a failure.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub undecided: bool,
    /// True when it was undecided before the answer rested on it, and its figures met every objective: the search
    /// counted it as held ([`Search::record_provisional`]).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub leans: bool,
}

impl SuiteProbe {
    /// True when the search counted it as held: it passed, or it leaned that way undecided.
    pub fn held(&self) -> bool {
        self.passed || self.leans
    }
}

/// The levels inside a band (strictly between its ends `lo` and `hi`) with what their probes said, from `probes`
/// as (level, passed) in the order they ran.
pub fn inside_band(probes: impl IntoIterator<Item = (f64, bool)>, lo: f64, hi: f64) -> Vec<(f64, Marks)> {
    let mut inside: Vec<(f64, Marks)> = Vec::new();
    for (level, passed) in probes.into_iter().filter(|&(l, _)| lo < l && l < hi) {
        match inside.iter_mut().find(|(l, _)| *l == level) {
            Some((_, sum)) => *sum = sum.and(Marks::of(passed)),
            None => inside.push((level, Marks::of(passed))),
        }
    }
    inside.sort_by(|a, b| a.0.total_cmp(&b.0));
    inside
}

/// What a band wider than the precision adds to an answer: `its probes fell both ways between the two (at 10000
/// req/s 1 of 2 held): the capacity varies from probe to probe by more than the precision, so it lies in that
/// band, not at a point`, each level written by `at`.
pub fn band_words(inside: &[(f64, Marks)], at: impl Fn(f64) -> String) -> String {
    let levels: Vec<String> = inside
        .iter()
        .map(|(level, m)| match m.held + m.broke {
            0 | 1 => format!("{} {}", at(*level), if m.held > 0 { "held" } else { "broke" }),
            n => format!("at {} {} of {n} held", at(*level), m.held),
        })
        .collect();
    let which = if levels.is_empty() { String::new() } else { format!(" ({})", levels.join(", ")) };
    format!(
        "its probes fell both ways between the two{which}: the capacity varies from probe to probe by more than the \
         precision, so it lies in that band, not at a point"
    )
}

/// What to do next.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Step {
    /// Run a probe at this level, then [`Search::record`] it ([`Search::record_provisional`] when undecided).
    Probe(f64),
    /// Run a probe at this level until it is decided, or its cap ([`MOST_PROBE_SECONDS`]), then
    /// [`Search::record`] it (failed when still undecided): the answer would rest on a provisional probe there.
    Decide(f64),
    /// Run the probe at this level again, as [`Step::Decide`] does, to measure an end of the answer a second time.
    /// A caller that starts the server starts it afresh before the first of these, so that each end is measured
    /// on two starts of the server, as a sweep's repeats are.
    Confirm(f64),
    /// The search is over.
    Found(Found),
}

/// The search's state: its bounds and the probes recorded so far.
#[derive(Debug, Clone)]
pub struct Search {
    start: f64,
    precision: f64,
    whole: bool,
    floor: f64,
    ceiling: f64,
    most_probes: usize,
    probes: Vec<Probe>,
    by_cpu: bool,
}

/// The levels the probes so far mark out, probes that judged the client aside: the highest level that held under
/// every level that broke (`lo`, the capacity), the lowest level that broke (`first_break`), the highest that held
/// (`last_hold`), and the lowest that broke above every level that held (`hi`). While the probes agree, `lo` is
/// `last_hold` and `hi` is `first_break`; when they disagree, the capacity lies somewhere in `lo..hi`.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Band {
    lo: Option<f64>,
    first_break: Option<f64>,
    last_hold: Option<f64>,
    hi: Option<f64>,
}

impl Search {
    /// A search that starts at `start`, stops once the bracket's width is at most `precision` (a fraction: 0.05
    /// is 5%) of its lower end, and never tries a level under `floor` or over `ceiling`, nor more than
    /// `most_probes` levels. With `whole`, levels are whole numbers (users) and a bracket one apart is precise.
    /// The bounds must be positive and in order (`floor <= start <= ceiling`), as the caller checked.
    pub fn new(start: f64, precision: f64, floor: f64, ceiling: f64, whole: bool, most_probes: usize) -> Search {
        debug_assert!(0.0 < floor && floor <= start && start <= ceiling && precision > 0.0);
        Search { start, precision, whole, floor, ceiling, most_probes, probes: Vec::new(), by_cpu: false }
    }

    /// The same search, climbing by the server's CPU from where it was told nothing of the answer (a suite that
    /// gives no start): while nothing broke, the level after one that held is four times it with its CPUs at most
    /// [`QUADRUPLE_BELOW`] busy ([`Search::note_cpu`]), what would fill them with more than half busy, else twice
    /// (never less than four times the precision); and a bracket wider than twice its lower end is cut at the
    /// geometric middle, so that a climb past a server whose limit is not its CPU (a pool of sleeping workers)
    /// costs one probe more than doubling would have.
    pub fn climbing_by_cpu(mut self) -> Search {
        self.by_cpu = true;
        self
    }

    /// Notes that the server kept `busy` (0 to 1) of its CPUs busy at the probe recorded last.
    pub fn note_cpu(&mut self, busy: f64) {
        if let Some(last) = self.probes.last_mut() {
            last.busy = Some(busy).filter(|b| b.is_finite() && *b >= 0.0);
        }
    }

    /// What the level after `held` multiplies it by while nothing broke: two, or, when the search climbs by the
    /// CPU, by what the latest probe at `held` kept busy of the server's CPUs: four at most [`QUADRUPLE_BELOW`];
    /// over half, what would fill them were the CPU its only limit (2560 req/s at 90% busy: ×1.11), no less than
    /// four times the precision (×1.2 at 5%). A server whose CPU is nearly full is not sent twice what it takes:
    /// such a probe queues for its whole window and takes seconds to drain.
    fn climb(&self, held: f64) -> f64 {
        let busy = self.probes.iter().rev().find(|p| p.level == held && !p.client).and_then(|p| p.busy);
        match busy.filter(|_| self.by_cpu) {
            Some(busy) if busy <= QUADRUPLE_BELOW => 4.0,
            // A precision of 25% or more floors the step at 2 (a clamp with its bounds crossed would panic).
            Some(busy) if busy > 0.5 => (1.0 / busy).max(1.0 + 4.0 * self.precision).min(2.0),
            _ => 2.0,
        }
    }

    /// The probes recorded, in the order they ran.
    pub fn probes(&self) -> &[Probe] {
        &self.probes
    }

    /// True when the probes disagreed: a level both held and broke, or one held above a level that broke. The
    /// answer is then a band wider than the precision alone would leave ([`Search::bracket`]).
    pub fn moved(&self) -> bool {
        let band = self.band();
        matches!((band.first_break, band.last_hold), (Some(broke), Some(held)) if held >= broke)
    }

    /// Records the outcome of the probe at `level`, judged on its trials as one, with the successful responses per
    /// second it served when known.
    pub fn record(&mut self, level: f64, passed: bool, served: Option<f64>) {
        self.probes.push(Probe { level, passed, served, client: false, provisional: false, busy: None });
    }

    /// Records a probe at `level` that found the load generator saturated. With a `floor` (every objective held
    /// there, and the server completed `floor`), the search ends at once: the server takes at least that. Without
    /// one (something broke, and the client may be why), the search goes on under it, as under a failure, and ends
    /// at the client's limit.
    pub fn record_client(&mut self, level: f64, floor: Option<f64>) {
        self.probes.push(Probe { level, passed: false, served: floor, client: true, provisional: false, busy: None });
    }

    /// Records an undecided probe at `level` as its figures `lean` (true: they met every objective), for choosing
    /// the next level only: doubling and bisecting need no decided probe, and the ends of the answer are decided
    /// ([`Step::Decide`]) before it is given.
    pub fn record_provisional(&mut self, level: f64, leans: bool, served: Option<f64>) {
        self.probes.push(Probe { level, passed: leans, served, client: false, provisional: true, busy: None });
    }

    /// The answer so far: the highest level that held under every level that broke, and the lowest level that
    /// broke above every level that held. When the probes agree, these are the two ends of the bisection's bracket;
    /// when they disagree (a noisy machine, a server near its limit), the band between them holds every level
    /// whose probes said both.
    pub fn bracket(&self) -> (Option<f64>, Option<f64>) {
        let band = self.band();
        (band.lo, band.hi)
    }

    /// How a search cut short (by a signal, or a probe that could not run) ended: the bracket so far.
    pub fn cut_short(&self) -> Found {
        let (capacity, failed_at) = self.bracket();
        Found { capacity, failed_at, ended: Ended::Interrupted }
    }

    /// The next level to try, or how the search ended: before an answer rests on a provisional probe (at the
    /// capacity, or at the level above it that broke), that probe is decided.
    pub fn next(&self) -> Step {
        match self.next_leaning() {
            Step::Found(found) if !matches!(found.ended, Ended::Probes | Ended::Interrupted) => {
                let provisional = |level: Option<f64>| level.filter(|&l| self.only_provisional(l));
                // The failure first: a capacity decided before it would be run again after it.
                match provisional(found.failed_at).or(provisional(found.capacity)) {
                    Some(level) if self.probes.len() < self.most_probes => Step::Decide(level),
                    _ => Step::Found(found),
                }
            }
            step => step,
        }
    }

    /// The next level as the provisional probes lean.
    fn next_leaning(&self) -> Step {
        let band = self.band();
        let client_at = self.client_at();
        // The client's limit bounds the band when it lies under every level the server broke.
        let by_client = client_at.is_some_and(|c| band.first_break.is_none_or(|f| c < f));
        let found = |ended| {
            Step::Found(match ended {
                Ended::Probes | Ended::Interrupted => Found { capacity: band.lo, failed_at: band.hi, ended },
                _ if by_client => Found { capacity: self.client_floor(band.lo), failed_at: None, ended: Ended::Client },
                _ => Found { capacity: band.lo, failed_at: band.hi, ended },
            })
        };
        // At the client's limit with every objective held, the server took what the client completed (a client short
        // of CPU only adds to the latency): nothing under it is worth probing, and nothing above can be reached.
        if self.probes.iter().any(|p| p.client && p.served.is_some()) {
            return Step::Found(Found { capacity: self.client_floor(band.lo), failed_at: None, ended: Ended::Client });
        }
        let upper = if by_client { client_at } else { band.first_break };
        let step = match (band.lo, upper) {
            (None, None) => Step::Probe(self.start),
            (Some(p), None) if p >= self.ceiling => return found(Ended::Ceiling),
            (Some(p), None) => Step::Probe(self.round(p * self.climb(p)).min(self.ceiling)),
            (None, Some(u)) if u <= self.floor => return found(Ended::Floor),
            (None, Some(u)) => Step::Probe(self.round(u / 2.0).max(self.floor)),
            (Some(p), Some(u)) => match self.halfway(p, u) {
                Some(middle) => Step::Probe(middle),
                None if by_client => match self.before_last_break(p) {
                    true => Step::Confirm(p),
                    false => return found(Ended::Precise),
                },
                None => match self.top_of_band(&band).or_else(|| self.unmeasured_end(&band)) {
                    Some(step) => step,
                    None => return found(Ended::Precise),
                },
            },
        };
        if self.probes.len() >= self.most_probes {
            return found(Ended::Probes);
        }
        step
    }

    /// Where the probes disagreed: the next level that narrows the band's top (between the highest level that held
    /// and the lowest that broke above it), none when it is as narrow as the precision. With nothing broken above
    /// the highest level that held, it climbs by four times the precision: the server broke close under it.
    fn top_of_band(&self, band: &Band) -> Option<Step> {
        let held = band.last_hold.filter(|&h| band.lo.is_some_and(|lo| h > lo))?;
        match band.hi {
            None if held >= self.ceiling => None,
            None => Some(Step::Probe(self.round(held * (1.0 + 4.0 * self.precision)).min(self.ceiling))),
            Some(hi) => self.halfway(held, hi).map(Step::Probe),
        }
    }

    /// An end of the band measured only once, run again ([`Step::Confirm`]): the level that broke (it must break in
    /// two probes), then the level that held (in two, one of them after the last failure).
    fn unmeasured_end(&self, band: &Band) -> Option<Step> {
        // A level that, run again, found the client saturated has said all it can of the server.
        let saturated_there = |level: f64| self.probes.iter().any(|p| p.client && p.level == level);
        if let Some(hi) = band.hi.filter(|&hi| self.marks(hi).broke < 2 && !saturated_there(hi)) {
            return Some(Step::Confirm(hi));
        }
        let lo = band.lo.filter(|&lo| self.marks(lo).held < 2 || self.before_last_break(lo))?;
        Some(Step::Confirm(lo))
    }

    /// The level halfway between `low` and `high`, when they are further apart than the precision and a level
    /// (once rounded) fits between them.
    fn halfway(&self, low: f64, high: f64) -> Option<f64> {
        let middle = match self.by_cpu && high > 2.0 * low {
            true => self.round((low * high).sqrt()),
            false => self.round((low + high) / 2.0),
        };
        (high - low > self.precision * low && middle > low && middle < high).then_some(middle)
    }

    /// What the decided probes at `level` said.
    fn marks(&self, level: f64) -> Marks {
        let decided = self.probes.iter().filter(|p| p.level == level && !p.provisional && !p.client);
        decided.fold(Marks::default(), |m, p| m.and(Marks::of(p.passed)))
    }

    /// True when `level` was probed and none of its probes was decided.
    fn only_provisional(&self, level: f64) -> bool {
        let mut at = self.probes.iter().filter(|p| p.level == level).peekable();
        at.peek().is_some() && at.all(|p| p.provisional)
    }

    /// The band the probes mark out ([`Band`]).
    fn band(&self) -> Band {
        let client_at = self.client_at();
        let judged = || self.probes.iter().filter(|p| !p.client);
        let held = || judged().filter(|p| p.passed).map(|p| p.level);
        let broke = || judged().filter(|p| !p.passed).map(|p| p.level);
        let under = |bound: Option<f64>, level: f64| bound.is_none_or(|b| level < b);
        let first_break = broke().reduce(f64::min);
        let upper = [first_break, client_at].into_iter().flatten().reduce(f64::min);
        let last_hold = held().filter(|&l| under(client_at, l)).reduce(f64::max);
        Band {
            lo: held().filter(|&l| under(upper, l)).reduce(f64::max),
            first_break,
            last_hold,
            hi: broke().filter(|&l| last_hold.is_none_or(|h| l > h)).reduce(f64::min),
        }
    }

    /// The lowest level at which the load generator was saturated.
    fn client_at(&self) -> Option<f64> {
        self.probes.iter().filter(|p| p.client).map(|p| p.level).reduce(f64::min)
    }

    /// The capacity a search ended by the client's limit answers: the highest level that held, or what the client
    /// completed at its limit with every objective held, if higher.
    fn client_floor(&self, held: Option<f64>) -> Option<f64> {
        let completed = self.probes.iter().filter(|p| p.client).filter_map(|p| p.served).reduce(f64::max);
        [held, completed].into_iter().flatten().reduce(f64::max)
    }

    /// True when the latest decided probe at `level` ran before the latest probe that broke anything: the answer
    /// would rest on a pass from before the server was last seen to break, so it is run again first.
    fn before_last_break(&self, level: f64) -> bool {
        let at = self.probes.iter().rposition(|p| p.level == level && !p.provisional);
        let broke = self.probes.iter().rposition(|p| !p.client && !p.passed);
        matches!((at, broke), (Some(at), Some(broke)) if at < broke)
    }

    /// A level as the search's levels are: whole numbers (rounded down, at least 1) for users; rates with four
    /// significant digits (1234 or 12.34 requests/s), which keeps the levels readable and file names short while
    /// any precision above 0.1% can still be reached.
    fn round(&self, level: f64) -> f64 {
        if self.whole {
            return level.floor().max(1.0);
        }
        let scale = 10f64.powi(3 - level.log10().floor() as i32);
        (level * scale).round() / scale
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Runs `search` against a server that meets its objectives exactly up to `capacity`.
    fn against(mut search: Search, capacity: f64) -> (Found, Vec<f64>) {
        loop {
            match search.next() {
                Step::Probe(level) | Step::Decide(level) | Step::Confirm(level) => {
                    search.record(level, level <= capacity, None)
                }
                Step::Found(found) => return (found, search.probes().iter().map(|p| p.level).collect()),
            }
        }
    }

    #[test]
    fn doubles_until_a_level_fails_then_bisects_to_the_precision() {
        let (found, levels) = against(Search::new(100.0, 0.05, 1.0, 1e6, false, 30), 846.0);
        assert_eq!(&levels[..5], &[100.0, 200.0, 400.0, 800.0, 1600.0]);
        assert_eq!(found.ended, Ended::Precise);
        let (capacity, failed_at) = (found.capacity.unwrap(), found.failed_at.unwrap());
        assert!(capacity <= 846.0 && 846.0 < failed_at, "{found:?}");
        assert!(failed_at - capacity <= 0.05 * capacity, "{found:?}");
        // Its ends, each measured a second time, the level that held after the last failure.
        assert_eq!(&levels[levels.len() - 2..], &[failed_at, capacity], "{levels:?}");
        assert!(levels.len() <= 12, "{levels:?}");
    }

    /// Runs `search` against a server that meets its objectives up to `capacity`, its CPUs full at `full`.
    fn against_cpu(mut search: Search, capacity: f64, full: f64) -> (Found, Vec<f64>) {
        loop {
            match search.next() {
                Step::Probe(level) | Step::Decide(level) | Step::Confirm(level) => {
                    search.record(level, level <= capacity, None);
                    search.note_cpu((level / full).min(1.0));
                }
                Step::Found(found) => return (found, search.probes().iter().map(|p| p.level).collect()),
            }
        }
    }

    #[test]
    fn a_search_told_no_start_climbs_by_four_while_the_cpu_allows() {
        let search = || Search::new(10.0, 0.05, 0.1, 1e7, false, 30);
        // Node's http: its CPU full at some 2,600 req/s, its p99 held to 2,300.
        let (found, levels) = against_cpu(search().climbing_by_cpu(), 2300.0, 2600.0);
        assert_eq!(&levels[..6], &[10.0, 40.0, 160.0, 640.0, 2560.0, 1280.0], "{levels:?}");
        let (doubled, doubling) = against_cpu(search(), 2300.0, 2600.0);
        assert_eq!(&doubling[..4], &[10.0, 20.0, 40.0, 80.0], "without climbing_by_cpu, the CPU is not read");
        assert_eq!(found.ended, Ended::Precise);
        let (capacity, failed_at) = (found.capacity.unwrap(), found.failed_at.unwrap());
        assert!(capacity <= 2300.0 && 2300.0 < failed_at && failed_at - capacity <= 0.05 * capacity, "{found:?}");
        assert!(levels.len() + 2 <= doubling.len(), "{levels:?} against {doubling:?} ({doubled:?})");
        // Its CPU 80% busy at 2560 req/s: the next level would fill it, not twice it.
        let (_, levels) = against_cpu(search().climbing_by_cpu(), 3000.0, 3200.0);
        assert_eq!(&levels[..6], &[10.0, 40.0, 160.0, 640.0, 2560.0, 3200.0], "{levels:?}");
        let wide = Search::new(10.0, 0.4, 0.1, 1e7, false, 30).climbing_by_cpu();
        let (_, levels) = against_cpu(wide, 3000.0, 3200.0);
        assert_eq!(&levels[..6], &[10.0, 40.0, 160.0, 640.0, 2560.0, 5120.0], "a precision of 40%: twice: {levels:?}");
        // A pool of sleeping workers, its CPU all but idle at its limit of 190/s: past it at 640, then the
        // geometric middle, one probe more than doubling at most.
        let (found, levels) = against_cpu(search().climbing_by_cpu(), 190.0, 1e6);
        assert_eq!(&levels[..5], &[10.0, 40.0, 160.0, 640.0, 320.0], "{levels:?}");
        let (_, doubling) = against_cpu(search(), 190.0, 1e6);
        assert!(levels.len() <= doubling.len() + 1, "{levels:?} against {doubling:?}");
        assert!(found.capacity.unwrap() <= 190.0 && 190.0 < found.failed_at.unwrap(), "{found:?}");
    }

    #[test]
    fn an_undecided_probe_measures_more_only_while_a_decision_is_within_the_cap() {
        let undecided = |to_decide: Option<f64>| Verdict {
            passed: false,
            undecided: true,
            leans: true,
            client: false,
            floor: None,
            served: 100.0,
            broke: Vec::new(),
            to_decide,
        };
        // Two 5 s trials whose share past the limit would be decided on four times their requests: eight trials,
        // 40 s, within the cap of 12 and 60 s.
        assert!(measures_more(&undecided(Some(4.0)), true, 2, 10.0));
        // On the limit, or 25 times away: never within the cap, counted against its level now.
        assert!(!measures_more(&undecided(Some(f64::INFINITY)), true, 2, 10.0));
        assert!(!measures_more(&undecided(Some(25.0)), true, 3, 15.0));
        // Within 12 trials but not within 60 s, past the three that are always allowed.
        assert!(!measures_more(&undecided(Some(5.0)), true, 2, 30.0));
        // One trial is too few to project from, and a bound that cannot be projected keeps the cap alone.
        assert!(measures_more(&undecided(Some(f64::INFINITY)), true, 1, 5.0));
        assert!(measures_more(&undecided(None), true, 5, 25.0));
        assert!(!measures_more(&undecided(None), false, 1, 5.0), "a probe that need not decide is one trial");
    }

    #[test]
    fn users_are_whole_and_a_bracket_one_apart_is_precise() {
        let (found, levels) = against(Search::new(1.0, 0.01, 1.0, 10_000.0, true, 30), 37.0);
        assert!(levels.iter().all(|l| l.fract() == 0.0), "{levels:?}");
        assert_eq!((found.capacity, found.failed_at, found.ended), (Some(37.0), Some(38.0), Ended::Precise));
    }

    #[test]
    fn a_start_that_fails_is_halved_down_to_the_floor() {
        let (found, levels) = against(Search::new(100.0, 0.05, 10.0, 1e6, false, 30), 30.0);
        assert_eq!(&levels[..3], &[100.0, 50.0, 25.0]);
        assert!(found.capacity.unwrap() <= 30.0 && found.failed_at.unwrap() > 30.0, "{found:?}");
        let (found, levels) = against(Search::new(100.0, 0.05, 10.0, 1e6, false, 30), 5.0);
        assert_eq!(levels, [100.0, 50.0, 25.0, 12.5, 10.0]);
        assert_eq!((found.capacity, found.failed_at, found.ended), (None, Some(10.0), Ended::Floor));
    }

    #[test]
    fn the_ceiling_and_the_count_of_probes_bound_it() {
        let (found, levels) = against(Search::new(100.0, 0.05, 1.0, 1000.0, false, 30), 1e9);
        assert_eq!(levels, [100.0, 200.0, 400.0, 800.0, 1000.0]);
        assert_eq!((found.capacity, found.failed_at, found.ended), (Some(1000.0), None, Ended::Ceiling));
        let (found, levels) = against(Search::new(100.0, 0.0001, 1.0, 1e6, false, 6), 846.0);
        assert_eq!(levels.len(), 6);
        assert_eq!(found.ended, Ended::Probes);
        assert_eq!((found.capacity, found.failed_at), (Some(800.0), Some(1200.0)));
    }

    #[test]
    fn rates_keep_four_significant_digits() {
        let (found, levels) = against(Search::new(10.0, 0.001, 0.1, 1e7, false, 30), 7777.7);
        for level in &levels {
            let digits = level * 10f64.powi(3 - level.log10().floor() as i32);
            assert!((digits - digits.round()).abs() < 1e-6, "{level} of {levels:?}");
        }
        assert_eq!(found.ended, Ended::Precise, "{levels:?}");
        assert!(found.capacity.unwrap() <= 7777.7 && found.failed_at.unwrap() > 7777.7, "{found:?}");
        assert_eq!(Search::new(1.0, 0.05, 0.1, 1e7, false, 30).round(0.123456), 0.1235);
    }

    #[test]
    fn a_pass_above_a_failure_widens_the_band_and_does_not_raise_the_capacity() {
        let mut search = Search::new(100.0, 0.05, 1.0, 1e6, false, 30);
        for (level, passed) in [(100.0, true), (200.0, true), (400.0, false), (300.0, false), (350.0, true)] {
            search.record(level, passed, None);
        }
        // 350 held above 300's failure: the capacity lies between 200 (held under every failure) and 400 (broke
        // above every pass), and both ends of that band are narrowed.
        assert!(search.moved());
        assert_eq!(search.bracket(), (Some(200.0), Some(400.0)));
        assert_eq!(search.next(), Step::Probe(250.0));
        search.record(250.0, true, None);
        assert_eq!(search.next(), Step::Probe(275.0));
        search.record(275.0, true, None);
        assert_eq!(search.next(), Step::Probe(287.5));
        search.record(287.5, true, None);
        assert_eq!(search.next(), Step::Probe(375.0), "then the top, between 350 and 400");
    }

    #[test]
    fn probes_that_disagree_at_one_level_put_it_inside_the_band() {
        let mut search = Search::new(100.0, 0.1, 1.0, 1e6, false, 30);
        // 187.5 failed, then held when run again.
        for (level, passed) in
            [(100.0, true), (200.0, false), (150.0, true), (175.0, true), (187.5, false), (187.5, true)]
        {
            search.record(level, passed, None);
        }
        assert!(search.moved());
        assert_eq!(search.bracket(), (Some(175.0), Some(200.0)));
        // 200 broke once: it is run again, decided; then 175, which held once and before the last failure.
        assert_eq!(search.next(), Step::Confirm(200.0));
        search.record(200.0, false, None);
        assert_eq!(search.next(), Step::Confirm(175.0));
        search.record(175.0, true, None);
        assert_eq!(
            search.next(),
            Step::Found(Found { capacity: Some(175.0), failed_at: Some(200.0), ended: Ended::Precise })
        );
        // Probes that agree leave a band as narrow as the precision, its ends each measured twice.
        let (found, levels) = against(Search::new(100.0, 0.05, 1.0, 1e6, false, 30), 187.0);
        assert_eq!((found.capacity, found.failed_at), (Some(181.3), Some(187.5)), "{levels:?}");
        assert_eq!(levels.iter().filter(|&&l| l == 187.5).count(), 2, "{levels:?}");
        assert_eq!(levels.iter().filter(|&&l| l == 181.3).count(), 2, "{levels:?}");
    }

    #[test]
    fn a_server_that_slows_down_is_caught_by_the_last_check_of_the_answer() {
        // Up to the 6th probe the server takes 1000/s, then 500/s.
        let mut search = Search::new(100.0, 0.05, 1.0, 1e6, false, 30);
        let levels = loop {
            match search.next() {
                Step::Probe(level) | Step::Decide(level) | Step::Confirm(level) => {
                    let capacity = if search.probes().len() < 6 { 1000.0 } else { 500.0 };
                    search.record(level, level <= capacity, None)
                }
                Step::Found(found) => break found,
            }
        };
        assert!(search.moved(), "{:?}", search.probes());
        let capacity = levels.capacity.unwrap();
        assert!(capacity <= 500.0 && levels.failed_at.unwrap() > 500.0, "{levels:?} {:?}", search.probes());
    }

    /// Issue 61: a probe too short to decide a percentile leans as its figures do, and only the probes the answer
    /// rests on are decided.
    #[test]
    fn undecided_probes_lean_and_only_the_answers_are_decided() {
        // The server holds 846/s; every probe is undecided until decided, leaning the right way.
        let mut search = Search::new(100.0, 0.05, 1.0, 1e6, false, 30);
        let mut decided = Vec::new();
        let found = loop {
            match search.next() {
                Step::Probe(level) => search.record_provisional(level, level <= 846.0, None),
                Step::Decide(level) | Step::Confirm(level) => {
                    decided.push(level);
                    search.record(level, level <= 846.0, None);
                }
                Step::Found(found) => break found,
            }
        };
        assert_eq!(found.ended, Ended::Precise);
        let (capacity, failed_at) = (found.capacity.unwrap(), found.failed_at.unwrap());
        assert!(capacity <= 846.0 && 846.0 < failed_at, "{found:?}");
        // Each end decided twice, and nothing else.
        assert_eq!(decided, [failed_at, failed_at, capacity, capacity], "the two ends of the bracket only");
        // A capacity that, decided, fails moves the bracket down, and the search goes on.
        let mut search = Search::new(100.0, 0.05, 1.0, 1e6, false, 30);
        search.record(100.0, true, None);
        search.record_provisional(200.0, true, None);
        search.record(400.0, false, None);
        search.record(300.0, false, None);
        search.record(250.0, false, None);
        search.record(225.0, false, None);
        search.record(212.5, false, None);
        search.record(206.3, false, None);
        assert_eq!(search.next(), Step::Confirm(206.3), "the end that broke, measured a second time");
        search.record(206.3, false, None);
        assert_eq!(search.next(), Step::Confirm(200.0));
        search.record(200.0, false, None);
        assert_eq!(search.next(), Step::Probe(150.0));
    }

    #[test]
    fn an_end_run_again_that_finds_the_client_saturated_is_not_run_a_third_time() {
        let mut search = Search::new(100.0, 0.05, 1.0, 1e6, false, 30);
        for (level, passed) in [(100.0, true), (200.0, false), (150.0, true), (175.0, true), (187.5, true)] {
            search.record(level, passed, None);
        }
        search.record(193.8, false, None);
        assert_eq!(search.next(), Step::Confirm(193.8));
        search.record_client(193.8, None);
        assert_eq!(search.next(), Step::Confirm(187.5), "on to the other end");
    }

    #[test]
    fn the_clients_limit_bounds_the_bracket_and_ends_the_search_with_at_least() {
        // The server takes anything; the client saturates above 183/s.
        let mut search = Search::new(100.0, 0.05, 1.0, 1e6, false, 30);
        let found = loop {
            match search.next() {
                Step::Probe(level) | Step::Decide(level) | Step::Confirm(level) if level > 183.0 => {
                    search.record_client(level, None)
                }
                Step::Probe(level) | Step::Decide(level) | Step::Confirm(level) => {
                    search.record(level, true, Some(level))
                }
                Step::Found(found) => break found,
            }
        };
        assert_eq!((found.ended, found.failed_at), (Ended::Client, None), "{:?}", search.probes());
        let capacity = found.capacity.unwrap();
        assert!((0.95 * 183.0..=183.0).contains(&capacity), "{found:?} {:?}", search.probes());
        // What the client completed at its limit, every objective held, counts when higher.
        let mut search = Search::new(100.0, 0.05, 1.0, 1e6, false, 30);
        search.record(100.0, true, Some(100.0));
        search.record_client(200.0, Some(195.0));
        assert_eq!(search.next(), Step::Found(Found { capacity: Some(195.0), failed_at: None, ended: Ended::Client }));
        // A failure of the server's under the client's limit is an answer like any other.
        let mut search = Search::new(100.0, 0.05, 1.0, 1e6, false, 30);
        search.record(100.0, true, None);
        search.record_client(200.0, None);
        search.record(150.0, false, None);
        search.record(125.0, true, None);
        search.record(137.5, true, None);
        search.record(143.8, true, None);
        assert_eq!(search.next(), Step::Confirm(150.0));
        search.record(150.0, false, None);
        assert_eq!(search.next(), Step::Confirm(143.8));
        search.record(143.8, true, None);
        assert_eq!(
            search.next(),
            Step::Found(Found { capacity: Some(143.8), failed_at: Some(150.0), ended: Ended::Precise })
        );
    }
}
