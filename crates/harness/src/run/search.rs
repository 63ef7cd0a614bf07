//! [`run_search`]: a suite's capacity search. Each server in turn is started, then probed at the levels a
//! [`Search`] asks for (doubling from the suite's start until a level breaks an objective, then bisecting), each
//! probe a trial like any other: the services reset, a warm-up, the samples, saved as it ends. A probe is one
//! trial; one whose percentile's bounds straddle a limit counts as its figures lean until the answer would rest on
//! it, and is then decided: it measures more trials ([`measures_more`]), judged together, and counts against its
//! level when still undecided at the cap. Before the ends of the answer are measured a second time
//! ([`Step::Confirm`]), the server is stopped and started afresh (its second log, `SERVER-r2.log`), so that each
//! end is measured on two starts, as a sweep's repeats are. A probe run again numbers its trials after the earlier
//! runs' at that level. A probe that found the load generator saturated bounds the search from above: it goes on
//! under it and ends at the client's limit. Each server's search is saved as `searches/SERVER.json` after every
//! probe. The search's choices follow from the probes' verdicts alone, so `--resume` replays the probes already
//! saved and runs only what is missing.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use shootout_model::run::TrialRecord;
use shootout_model::search::{measures_more, Found, Search, ServerSearch, Step, SuiteProbe, Verdict};
use shootout_suite::{SearchSpec, ServerSpec, Suite};

use crate::lifecycle::server::RunningServer;
use crate::lifecycle::services::Services;
use crate::place::Places;
use crate::run::runner::{launch, measure, prepare, shut_down, Event, Launched, Measured, Outcome};
use crate::run::settle::Settler;
use crate::store::Store;

/// How one server's search (or one probe of it) ended, when not by the search's own decision.
enum Cut {
    /// The server failed (to start, or during a trial): the search of the next server goes on.
    Failed(String),
    /// A service failed: the suite stops.
    Stopped(String),
    /// Ctrl-C.
    Interrupted,
}

/// A probe judged on its trials: the verdict, how many trials it took, and the largest share of its CPUs the
/// server kept busy in them (none where its CPUs were not read).
struct Judged {
    verdict: Verdict,
    trials: u32,
    busy: Option<f64>,
}

/// Runs (or resumes) the search of every server of `suite`, each probe judged by `judge` from its trials.
pub fn run_search(
    suite: &Suite,
    places: &Places,
    store: Store,
    stop: Arc<AtomicBool>,
    judge: &dyn Fn(&[TrialRecord]) -> Verdict,
    on_event: &mut dyn FnMut(Event),
) -> Result<Outcome, String> {
    let spec = suite.search.ok_or("this suite has no search: run its sweep")?;
    prepare(suite, places, &store, on_event)?;
    let mut services = Services::new(suite, places, &store);
    let (mut failures, mut stopped) = (Vec::new(), None);
    for (done, server) in suite.servers.iter().enumerate() {
        if stop.load(Ordering::Relaxed) {
            break;
        }
        let mut one = OneSearch {
            suite,
            spec,
            server,
            places,
            store: &store,
            stop: &stop,
            judge,
            running: None,
            settler: None,
            measured: false,
            settling: Duration::ZERO,
            before_settling: 0.0,
            start: 1,
        };
        let cut = one.run(&mut services, done, on_event);
        if let Some(running) = one.running.take() {
            shut_down(server, running, &mut services, &store, one.start, on_event);
        }
        match cut? {
            None | Some(Cut::Interrupted) => {}
            Some(Cut::Failed(why)) => failures.push(format!("{}: {why}", server.name)),
            Some(Cut::Stopped(why)) => {
                stopped = Some(why);
                break;
            }
        }
    }
    services.stop_all().into_iter().for_each(|notice| on_event(Event::Notice(notice)));
    drop(services);
    Ok(Outcome { store, interrupted: stop.load(Ordering::Relaxed), failed: failures.len(), failures, stopped })
}

/// One server's search: the server started when the first probe that is not saved yet needs it.
struct OneSearch<'a> {
    suite: &'a Suite,
    spec: SearchSpec,
    server: &'a ServerSpec,
    places: &'a Places,
    store: &'a Store,
    stop: &'a Arc<AtomicBool>,
    judge: &'a dyn Fn(&[TrialRecord]) -> Verdict,
    running: Option<RunningServer>,
    /// Brings the running server back to rest before each trial but the first after its start.
    settler: Option<Settler>,
    /// True once a trial ran since the server started: the next one waits for the server to settle.
    measured: bool,
    /// The time spent settling, this run.
    settling: Duration,
    /// The time spent settling by the runs this one resumes, seconds.
    before_settling: f64,
    /// Which start of the server this is: 1, then 2 once the ends of the answer are measured again.
    start: u32,
}

impl OneSearch<'_> {
    /// Probes until the search ends (`None`) or is cut short, saving the search after every probe. An error is a
    /// file that could not be saved.
    fn run(
        &mut self,
        services: &mut Services,
        servers_done: usize,
        on_event: &mut dyn FnMut(Event),
    ) -> Result<Option<Cut>, String> {
        let began = Instant::now();
        let saved = self.store.search(&self.server.name);
        let before_s = saved.as_ref().map_or(0.0, |s| s.seconds);
        self.before_settling = saved.map_or(0.0, |s| s.settling_s);
        let mut search = Search::new(
            self.spec.start,
            self.spec.precision,
            self.spec.floor(),
            self.spec.ceiling,
            self.spec.closed,
            shootout_model::search::MOST_PROBES,
        );
        if self.spec.by_cpu {
            search = search.climbing_by_cpu();
        }
        let mut probes: Vec<SuiteProbe> = Vec::new();
        let (found, cut) = loop {
            let (level, decide) = match search.next() {
                Step::Probe(level) => (level, false),
                Step::Decide(level) => (level, true),
                Step::Confirm(level) => {
                    self.second_start(services, on_event);
                    (level, true)
                }
                Step::Found(found) => break (found, None),
            };
            let context = (servers_done, probes.len());
            let trials_before = probes.iter().filter(|p| p.level == level).map(|p| p.repeats).sum();
            let Judged { verdict, trials: repeats, busy } =
                match self.probe(level, trials_before, decide, services, context, on_event)? {
                    Ok(judged) => judged,
                    Err(cut) => break (search.cut_short(), Some(cut)),
                };
            let served = Some(verdict.served);
            probes.push(SuiteProbe {
                level,
                passed: verdict.passed,
                repeats,
                served,
                client: verdict.client,
                broke: verdict.broke.clone(),
                undecided: verdict.undecided,
                leans: verdict.undecided && !decide && verdict.leans,
            });
            if verdict.client {
                search.record_client(level, verdict.floor);
            } else if verdict.undecided && !decide {
                search.record_provisional(level, verdict.leans, served);
            } else {
                search.record(level, verdict.passed, served);
            }
            if let Some(busy) = busy {
                search.note_cpu(busy);
            }
            self.save(&search.cut_short(), &probes, search.moved(), before_s + began.elapsed().as_secs_f64())?;
        };
        self.save(&found, &probes, search.moved(), before_s + began.elapsed().as_secs_f64())?;
        Ok(cut)
    }

    /// The probe at `level`: its trial (saved, or measured now), then, when it must `decide`, more while a
    /// percentile stays undecided, up to the cap ([`measures_more`]); its verdict, on how many trials, and the
    /// CPU the server used ([`Judged`]). The earlier probes at
    /// this level took the first `trials_before` trial numbers.
    fn probe(
        &mut self,
        level: f64,
        trials_before: u32,
        decide: bool,
        services: &mut Services,
        (servers_done, probe): (usize, usize),
        on_event: &mut dyn FnMut(Event),
    ) -> Result<Result<Judged, Cut>, String> {
        let mut trials: Vec<TrialRecord> = Vec::new();
        for nth in 1.. {
            let repeat = trials_before + nth;
            let trial = match self.store.trial(&self.server.name, level, repeat) {
                Some(saved) => saved,
                None => {
                    if self.stop.load(Ordering::Relaxed) {
                        return Ok(Err(Cut::Interrupted));
                    }
                    if self.running.is_none() {
                        match self.start(services, level, on_event) {
                            Ok(running) => {
                                let url = format!("{}{}", running.url, self.server.ready_path);
                                self.settler = Some(Settler::new(&url, self.server.protocol));
                                self.running = Some(running);
                                self.measured = false;
                            }
                            Err(cut) => return Ok(Err(cut)),
                        }
                    } else if self.measured {
                        self.settle(on_event);
                        if self.stop.load(Ordering::Relaxed) {
                            return Ok(Err(Cut::Interrupted));
                        }
                    }
                    self.measured = true;
                    let OneSearch { suite, server, store, stop, running, .. } = self;
                    let Some(running) = running.as_mut() else { unreachable!("started above") };
                    on_event(Event::Probe { server: server.name.clone(), level, repeat, probe, servers_done });
                    let measured = measure(suite, server, running, services, store, level, repeat, stop, on_event)?;
                    match measured {
                        Measured::Saved(trial) => *trial,
                        Measured::Failed(why) => {
                            let _ = self.store.write_failure(&self.server.name, level, repeat, &why);
                            return Ok(Err(Cut::Failed(why)));
                        }
                        Measured::Stopped(why) => return Ok(Err(Cut::Stopped(why))),
                        Measured::Interrupted => return Ok(Err(Cut::Interrupted)),
                    }
                }
            };
            trials.push(trial);
            let verdict = (self.judge)(&trials);
            let measured: f64 = trials.iter().map(|t| t.result.duration_s).sum();
            if !measures_more(&verdict, decide, nth, measured) {
                let read = trials.iter().all(|t| t.usage.cpus > 0);
                let busy = read.then(|| trials.iter().map(|t| t.usage.busy).fold(0.0, f64::max));
                return Ok(Ok(Judged { verdict, trials: nth, busy }));
            }
        }
        unreachable!("the loop returns once it has judged the probe")
    }

    /// Before the ends of the answer are measured again ([`Step::Confirm`]), the server is stopped once, to be
    /// started afresh by the next probe that measures: each end is then measured on two starts of the server, as
    /// a sweep's repeats are, and a capacity that moves from one start to the next widens the band.
    fn second_start(&mut self, services: &mut Services, on_event: &mut dyn FnMut(Event)) {
        if self.start > 1 {
            return;
        }
        self.start = 2;
        if let Some(running) = self.running.take() {
            shut_down(self.server, running, services, self.store, 1, on_event);
            self.settler = None;
        }
    }

    /// Waits for the server to come back to rest after the last trial, saying so when it took long or did not.
    fn settle(&mut self, on_event: &mut dyn FnMut(Event)) {
        let Some(settler) = self.settler.as_mut() else { return };
        let rest = settler.settle(self.stop);
        self.settling += rest.took;
        if let Some(notice) = rest.notice() {
            on_event(Event::Notice(format!("{}, after its last probe: {notice}", self.server.name)));
        }
    }

    /// Starts the server (and the services it needs), warmed up at `level`.
    fn start(
        &self,
        services: &mut Services,
        level: f64,
        on_event: &mut dyn FnMut(Event),
    ) -> Result<RunningServer, Cut> {
        let launched = launch(
            self.suite,
            self.server,
            self.places,
            services,
            self.store,
            self.start,
            level,
            0,
            self.stop,
            on_event,
        );
        match launched {
            Launched::Running(running) => Ok(running),
            Launched::Failed(why) => Err(Cut::Failed(why)),
            Launched::Stopped(why) => Err(Cut::Stopped(why)),
            Launched::Interrupted => Err(Cut::Interrupted),
        }
    }

    /// Saves the search as it stands.
    fn save(&self, found: &Found, probes: &[SuiteProbe], moved: bool, seconds: f64) -> Result<(), String> {
        let record = ServerSearch {
            server: self.server.name.clone(),
            capacity: found.capacity,
            failed_at: found.failed_at,
            ended: found.ended,
            precision: self.spec.precision,
            probes: probes.to_vec(),
            seconds,
            moved,
            settling_s: self.before_settling + self.settling.as_secs_f64(),
        };
        self.store
            .write_search(&record)
            .map_err(|e| format!("cannot save a search in {}: {e}", self.store.dir.display()))
    }
}
