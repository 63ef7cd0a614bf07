//! The command line: what the user typed ([`Cli`]) is parsed by clap, then each command validates it into a plan
//! and runs. Errors in what the user typed exit with code 2 and one line naming the input and the fix.

/// `println!` through [`stdout`]: a reader that went away ends the output, not the command.
macro_rules! say {
    () => {
        $crate::cli::stdout::print(format_args!("\n"))
    };
    ($($arg:tt)*) => {
        $crate::cli::stdout::print(format_args!("{}\n", format_args!($($arg)*)))
    };
}

/// `print!` through [`stdout`].
macro_rules! say_raw {
    ($($arg:tt)*) => {
        $crate::cli::stdout::print(format_args!($($arg)*))
    };
}

/// `eprintln!` through [`stderr`]: a reader that went away drops the line, not the command.
macro_rules! tell {
    ($($arg:tt)*) => {
        $crate::cli::stderr::write(format_args!("{}\n", format_args!($($arg)*)))
    };
}

/// `eprint!` through [`stderr`].
macro_rules! tell_raw {
    ($($arg:tt)*) => {
        $crate::cli::stderr::write(format_args!($($arg)*))
    };
}

mod agent;
mod agents;
mod compare;
mod find_rate;
mod generate;
mod host;
mod load;
mod oneline;
mod profile;
mod report;
mod run;
mod signals;
mod stderr;
mod stdout;
mod target;

use std::process::ExitCode;

use clap::{CommandFactory, Parser, Subcommand};

/// Benchmark HTTP servers side by side, and tell the truth about them.
#[derive(Debug, Parser)]
#[command(
    name = "shootout",
    version,
    about,
    propagate_version = true,
    after_help = "The guide: docs/guide/first-load.md and docs/guide/first-shootout.md; every command and flag: \
                  docs/reference/cli.md (in shootout's repository, or `shootout generate man`)."
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Load one URL and report throughput, the full latency distribution, errors and the client's own CPU.
    Load(Box<load::LoadArgs>),
    /// Compare two results (directories of `run`, or JSON files of `load`): improved, regressed or no clear difference.
    Compare(compare::CompareArgs),
    /// Write the HTML report (charts), Markdown and .hgrm files of a results directory or a load JSON.
    Report(report::ReportArgs),
    /// Run a shootout: start each server of a suite, load it level by level, repeat, sample, compare.
    Run(run::RunArgs),
    /// Run the built-in reference HTTP server.
    Target(target::TargetArgs),
    /// Run one share of a load for a coordinator (started by `load --agents`, not by hand).
    Agent(agent::AgentArgs),
    /// Tools for loads from agents: `shootout agents manifest` prints what `--agents k8s:N` applies.
    Agents(agents::AgentsArgs),
    /// Start, sample and stop a suite's servers on this machine for its runner (started by `run` through ssh for
    /// `host = "ssh:…"`, not by hand).
    Host(host::HostArgs),
    /// Write the man pages, print shell completions, or print the reference of every command and flag: each made
    /// from these definitions.
    Generate(generate::GenerateArgs),
}

/// Reads a duration argument (`30s`, `2m`, `250ms`, or seconds).
pub fn duration_arg(text: &str) -> Result<std::time::Duration, String> {
    if let Some(magnitude) = text.trim().strip_prefix('-') {
        return Err(format!("'{text}': a duration cannot be negative: give {magnitude}"));
    }
    shootout_model::units::parse_duration(text).map_err(|e| e.to_string())
}

/// Reads a percentage argument below 100 (`5%`, or `5`) as a fraction (0.05).
pub fn percent_arg(text: &str) -> Result<f64, String> {
    shootout_model::units::parse_percent(text)
}

/// How a command failed.
#[derive(Debug)]
pub enum Failure {
    /// Something the user typed is wrong: exit code 2.
    Usage(String),
    /// The command could not do its work: exit code 1.
    Run(anyhow::Error),
    /// The command was stopped by a signal after reporting what it measured: exit code 128 + the signal's number
    /// (130 for Ctrl-C; see [`signals`]).
    Interrupted,
    /// A threshold (`--fail-if`, `--max-regression`) was crossed: exit code 3.
    Threshold(String),
    /// A gate could not judge what it was asked to (too few repeats for an interval): exit code 4, never a pass.
    Unjudged(String),
}

impl Failure {
    /// What it says to the user, on one line where it can.
    pub fn message(&self) -> String {
        match self {
            Failure::Usage(message) | Failure::Threshold(message) | Failure::Unjudged(message) => message.clone(),
            Failure::Run(error) => format!("{error:#}"),
            Failure::Interrupted => "interrupted".into(),
        }
    }
}

impl From<anyhow::Error> for Failure {
    fn from(e: anyhow::Error) -> Self {
        Failure::Run(e)
    }
}

/// Parses the command line, runs the command, and turns its outcome into an exit code.
pub fn main() -> ExitCode {
    let cli = Cli::parse();
    let outcome = match cli.command {
        Command::Load(args) => load::run(*args),
        Command::Run(args) => run::run(args),
        Command::Compare(args) => compare::run(args),
        Command::Report(args) => report::run(args),
        Command::Target(args) => target::run(args),
        Command::Agent(args) => agent::run(args),
        Command::Agents(args) => agents::run(args),
        Command::Host(args) => host::run(args),
        Command::Generate(args) => generate::run(args, Cli::command()),
    };
    let unwritten = stdout::finish();
    let failure = match (outcome, unwritten) {
        (Ok(()), None) => return ExitCode::SUCCESS,
        (Ok(()), Some(error)) => Failure::Run(anyhow::anyhow!(
            "standard output could not be written ({error}): send it where there is room, or leave it on the terminal"
        )),
        (Err(failure), _) => failure,
    };
    if !matches!(failure, Failure::Interrupted) {
        tell!("shootout: {}", failure.message());
    }
    ExitCode::from(match failure {
        Failure::Usage(_) => 2,
        Failure::Run(_) => 1,
        Failure::Interrupted => signals::exit_code(),
        Failure::Threshold(_) => 3,
        Failure::Unjudged(_) => 4,
    })
}
