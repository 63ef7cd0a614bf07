//! [`Profiler`]: the sampling profilers shootout drives, by name, and which one suits a process tree; and
//! [`ProfileSpec`], a suite's `[profile]` table: where each server is profiled, for how long, with what. How
//! each profiler is run and read is the `shootout_profile` crate's.

use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::run::TrialRecord;

/// A sampling profiler.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Profiler {
    /// Linux `perf` on the `cpu-clock` software event with DWARF call graphs: native code and the kernel.
    Perf,
    /// `rbspy`: Ruby methods with file and line, forked workers followed.
    Rbspy,
    /// `py-spy`: Python functions with file and line, child processes followed.
    PySpy,
    /// async-profiler, loaded into each JVM through `jcmd`: Java, native and kernel frames, on `itimer`.
    AsyncProfiler,
}

impl Profiler {
    /// Its name, and perf's beside it when perf recorded the native processes too (`rbspy + perf`).
    pub fn names(self, native_perf: bool) -> String {
        match native_perf {
            true => format!("{} + perf", self.name()),
            false => self.name().to_string(),
        }
    }

    /// Every profiler, in the order `--profiler` lists them.
    pub const ALL: [Profiler; 4] = [Profiler::Perf, Profiler::Rbspy, Profiler::PySpy, Profiler::AsyncProfiler];

    /// Its name, as `--profiler` and the saved profiles write it; also the program it runs as.
    pub fn name(self) -> &'static str {
        match self {
            Profiler::Perf => "perf",
            Profiler::Rbspy => "rbspy",
            Profiler::PySpy => "py-spy",
            Profiler::AsyncProfiler => "async-profiler",
        }
    }

    /// The profiler named `name`, or `None` for `auto`.
    pub fn parse(name: &str) -> Result<Option<Profiler>, String> {
        if name == "auto" {
            return Ok(None);
        }
        let names: Vec<&str> = Profiler::ALL.iter().map(|p| p.name()).collect();
        Profiler::ALL.into_iter().find(|p| p.name() == name).map(Some).ok_or_else(|| {
            format!("profiler '{name}' is not one shootout drives: write auto or one of {}", names.join(", "))
        })
    }

    /// The profiler for a process tree whose programs (the file names of their executables, such as `ruby3.1`)
    /// are `programs`: rbspy where Ruby runs, py-spy where Python does, async-profiler where a JVM does (JRuby
    /// included), perf for anything else.
    pub fn for_programs<'a>(programs: impl IntoIterator<Item = &'a str> + Clone) -> Profiler {
        let runs = |profiler: Profiler| programs.clone().into_iter().any(|p| profiler.reads(p));
        let runtimes = [Profiler::Rbspy, Profiler::PySpy, Profiler::AsyncProfiler];
        runtimes.into_iter().find(|p| runs(*p)).unwrap_or(Profiler::Perf)
    }

    /// True when it reads the stacks of a process running `program` (perf reads any; rbspy Ruby's, py-spy
    /// Python's, async-profiler a JVM's).
    pub fn reads(self, program: &str) -> bool {
        match self {
            Profiler::Perf => true,
            Profiler::Rbspy => program.starts_with("ruby"),
            Profiler::PySpy => program.starts_with("python"),
            Profiler::AsyncProfiler => program == "java",
        }
    }

    /// True when one recorder follows every PID it is given; false when it takes one process, so that each
    /// process (or tree, see [`Profiler::follows_children`]) of the runtime needs its own.
    pub fn takes_many(self) -> bool {
        self == Profiler::Perf
    }

    /// True when a recorder given one process reads the processes it starts too (rbspy, py-spy); async-profiler
    /// lives inside the one JVM it is loaded into.
    pub fn follows_children(self) -> bool {
        matches!(self, Profiler::Rbspy | Profiler::PySpy)
    }

    /// How a user gets it (the project's setup script does the same).
    pub fn install(self) -> &'static str {
        match self {
            Profiler::Perf => "apt-get install linux-perf",
            Profiler::Rbspy => "cargo install rbspy, or scripts/setup-examples.sh",
            Profiler::PySpy => "pip install py-spy, or scripts/setup-examples.sh",
            Profiler::AsyncProfiler => {
                "scripts/setup-examples.sh, from Maven Central's tools.profiler:async-profiler, with a JDK's jcmd"
            }
        }
    }
}

/// Where in its loads a server is profiled.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ProfileAt {
    /// At its capacity: the search's, else the highest level that met the SLO, else its knee, else its highest
    /// level.
    Capacity,
    /// At the knee of its sweep (where throughput stopped growing with load), else its highest level.
    Knee,
    /// At this level (users, or requests per second).
    Level(f64),
}

/// A suite's `[profile]` table: each server, after its measured trials, loaded once more at `at` while
/// `profiler` records its whole process tree for `duration`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ProfileSpec {
    /// The level.
    pub at: ProfileAt,
    /// How long the profiler records (after the suite's warm-up).
    pub duration: Duration,
    /// The profiler, or `None` for the one that suits each server.
    pub profiler: Option<Profiler>,
}

impl Default for ProfileSpec {
    /// `shootout run --profile`'s: at the capacity, for 10 s, the profiler that suits each server.
    fn default() -> ProfileSpec {
        ProfileSpec { at: ProfileAt::Capacity, duration: Duration::from_secs(10), profiler: None }
    }
}

/// One frame's share of all the samples of a profile.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Frame {
    /// The frame as the profiler named it (a function, or a Ruby method with its file and line).
    pub name: String,
    /// Share of the samples (0 to 1) taken while it was the running frame.
    pub self_share: f64,
    /// Share of the samples (0 to 1) taken while it was anywhere on the stack.
    pub total_share: f64,
}

/// `shootout load --profile-pid`: what the profiler recorded around the load, as its JSON result keeps it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LoadProfile {
    /// The profiler.
    pub profiler: Profiler,
    /// perf recorded the native processes of the tree beside it (Passenger's C++ core beside rbspy).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub native_perf: bool,
    /// Its command lines, as run.
    pub command: String,
    /// The processes profiled: those given and every process they started.
    pub pids: Vec<i32>,
    /// Samples recorded.
    pub samples: u64,
    /// Seconds it recorded.
    pub seconds: f64,
    /// The folded stacks' file.
    pub file: String,
    /// The flame graph's file.
    pub flame_graph: String,
    /// The frames that ran the most, by self share, most first.
    pub hottest: Vec<Frame>,
}

/// A server's profiled pass, as `profiles/SERVER-LEVEL.json` keeps it beside its folded stacks
/// (`profiles/SERVER-LEVEL.folded`).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ServerProfile {
    /// The server.
    pub server: String,
    /// The level it was loaded at.
    pub level: f64,
    /// The profiler that recorded it.
    pub profiler: Profiler,
    /// perf recorded the native processes of the tree beside it (Passenger's C++ core beside rbspy).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub native_perf: bool,
    /// The profiler's command line, as run.
    pub command: String,
    /// Samples recorded.
    pub samples: u64,
    /// Seconds the profiler recorded.
    pub seconds: f64,
    /// The load while it recorded: a trial like the measured ones, whose figures carry the profiler's cost.
    pub trial: TrialRecord,
    /// Where its threads waited off a CPU in the same pass, or why that was not recorded (none in profiles saved
    /// before shootout recorded it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub off_cpu: Option<OffCpu>,
}

/// A profiled pass's off-CPU profile: where its threads blocked, recorded by perf beside its profiler.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum OffCpu {
    /// Recorded: its stacks are saved beside the on-CPU ones, weighed in microseconds blocked.
    Recorded {
        /// perf's command line, as run.
        command: String,
        /// Seconds the threads spent blocked, added up over the threads.
        blocked_s: f64,
    },
    /// Not recorded, and why (no perf, no right to read kernel stacks, a server on another host).
    LeftOut {
        /// Why, in one line.
        why: String,
    },
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn auto_picks_by_the_programs_of_the_tree() {
        assert_eq!(Profiler::for_programs(["ruby3.1", "ruby3.1"]), Profiler::Rbspy);
        assert_eq!(Profiler::for_programs(["PassengerAgent", "ruby3.1"]), Profiler::Rbspy);
        assert_eq!(Profiler::for_programs(["python3.11"]), Profiler::PySpy);
        assert_eq!(Profiler::for_programs(["nginx", "nginx"]), Profiler::Perf);
        assert_eq!(Profiler::for_programs(["bash", "java"]), Profiler::AsyncProfiler);
        assert_eq!(Profiler::parse("auto"), Ok(None));
        assert_eq!(Profiler::parse("py-spy"), Ok(Some(Profiler::PySpy)));
        let err = Profiler::parse("gprof").unwrap_err();
        assert!(err.contains("'gprof'") && err.contains("perf, rbspy, py-spy, async-profiler"), "{err}");
    }
}
