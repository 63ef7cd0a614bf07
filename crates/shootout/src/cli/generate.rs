//! `shootout generate`: what is made from the command line's own definitions, so that none of it can drift from
//! the flags: man pages (clap_mangen), shell completions (clap_complete), and the Markdown reference of every
//! command and flag that docs/reference/cli.md holds (a test compares the two).

use std::fmt::Write as _;
use std::path::PathBuf;

use clap::{Arg, ArgAction, Args, Command, Subcommand};
use clap_complete::Shell;

use super::Failure;

#[derive(Debug, Args)]
pub struct GenerateArgs {
    #[command(subcommand)]
    what: What,
}

#[derive(Debug, Subcommand)]
enum What {
    /// Write the man pages, shootout.1 and one per command (shootout-load.1, …), into a folder; read one with
    /// `man -l shootout.1`, or install them in a man1 folder of your MANPATH.
    Man {
        /// The folder to write them into (made when missing).
        #[arg(default_value = ".")]
        dir: PathBuf,
    },
    /// Print a shell's completion script: `shootout generate completions bash > /etc/bash_completion.d/shootout`,
    /// zsh's into a folder of your fpath as `_shootout`, fish's into ~/.config/fish/completions/shootout.fish.
    Completions {
        /// The shell.
        #[arg(value_enum)]
        shell: Shell,
    },
    /// Print the reference of every command and flag in Markdown, as docs/reference/cli.md holds it.
    Reference,
}

/// Runs `shootout generate`; `cli` is the whole command line's definition.
pub fn run(args: GenerateArgs, mut cli: Command) -> Result<(), Failure> {
    cli.build();
    match args.what {
        What::Man { dir } => man(&cli, &dir),
        What::Completions { shell } => {
            let mut script = Vec::new();
            clap_complete::generate(shell, &mut cli, "shootout", &mut script);
            super::stdout::print_bytes(&script);
            Ok(())
        }
        What::Reference => {
            say_raw!("{}", reference(&cli));
            Ok(())
        }
    }
}

/// Writes `shootout.1` and a page for each command, and says which.
fn man(cli: &Command, dir: &std::path::Path) -> Result<(), Failure> {
    std::fs::create_dir_all(dir).map_err(|e| {
        Failure::Usage(format!("generate man: cannot make {} ({e}): give a folder you may write", dir.display()))
    })?;
    let mut pages = vec![(String::from("shootout"), cli.clone())];
    for command in cli.get_subcommands().filter(|c| !c.is_hide_set() && c.get_name() != "help") {
        let name = format!("shootout-{}", command.get_name());
        pages.push((
            name.clone(),
            command.clone().name(name).version(cli.get_version().unwrap_or_default().to_string()),
        ));
    }
    for (name, command) in pages {
        let file = dir.join(format!("{name}.1"));
        let mut page = Vec::new();
        clap_mangen::Man::new(command).render(&mut page).map_err(|e| Failure::Run(e.into()))?;
        std::fs::write(&file, page)
            .map_err(|e| Failure::Usage(format!("generate man: cannot write {} ({e})", file.display())))?;
        say!("{}", file.display());
    }
    Ok(())
}

/// The Markdown reference: each command (and each command of a command) with its usage and a table of its
/// arguments and flags.
pub fn reference(cli: &Command) -> String {
    let mut page = String::from(
        "# Command-line reference\n\n\
         Every command and flag of `shootout`, made by `shootout generate reference` from the definitions the \
         binary\nparses (a test fails when this page and the binary differ). The guide explains them in use: \
         [docs/guide/](../guide/first-load.md).\n",
    );
    let mut commands: Vec<(String, &Command)> = Vec::new();
    for command in cli.get_subcommands().filter(|c| !c.is_hide_set() && c.get_name() != "help") {
        commands.push((format!("shootout {}", command.get_name()), command));
        for inner in command.get_subcommands().filter(|c| !c.is_hide_set() && c.get_name() != "help") {
            commands.push((format!("shootout {} {}", command.get_name(), inner.get_name()), inner));
        }
    }
    page.push_str("\n| command | what it does |\n|---|---|\n");
    for (name, command) in &commands {
        let _ = writeln!(page, "| [`{name}`](#{}) | {} |", name.replace(' ', "-"), cell(&about(command)));
    }
    for (name, command) in &commands {
        let _ = write!(page, "\n## {name}\n\n{}\n\n", about(command));
        let usage = (*command).clone().bin_name(name.clone()).render_usage().to_string();
        let _ = writeln!(page, "```text\n{}\n```", usage.trim_start_matches("Usage: "));
        let arguments: Vec<&Arg> = command
            .get_arguments()
            .filter(|a| !a.is_hide_set() && !matches!(a.get_id().as_str(), "help" | "version"))
            .collect();
        if arguments.is_empty() {
            continue;
        }
        page.push_str("\n| argument | meaning | default |\n|---|---|---|\n");
        for arg in arguments {
            let (meaning, said) = said_default(&help(arg));
            let default = if said.is_empty() { default(arg) } else { said };
            let _ = writeln!(page, "| {} | {} | {} |", cell(&spelling(arg)), cell(&meaning), cell(&default));
        }
    }
    page
}

/// A command's description: its long one where it has one.
fn about(command: &Command) -> String {
    command.get_long_about().or(command.get_about()).map(|s| s.to_string()).unwrap_or_default().trim().to_string()
}

/// How an argument is written: `-c, --connections <N>`, or `<URL>` for a positional one.
fn spelling(arg: &Arg) -> String {
    let value = arg.get_value_names().map(|names| names.iter().map(|n| format!("<{n}>")).collect::<Vec<_>>().join(" "));
    let value = value.unwrap_or_else(|| format!("<{}>", arg.get_id().as_str().to_uppercase()));
    let takes_value = !matches!(arg.get_action(), ArgAction::SetTrue | ArgAction::SetFalse | ArgAction::Count);
    let mut names = Vec::new();
    if let Some(short) = arg.get_short() {
        names.push(format!("-{short}"));
    }
    if let Some(long) = arg.get_long() {
        names.push(format!("--{long}"));
    }
    let repeat = if matches!(arg.get_action(), ArgAction::Append) { "…" } else { "" };
    if names.is_empty() {
        return format!("`{value}{repeat}`");
    }
    let names = names.join(", ");
    if takes_value {
        format!("`{names} {value}`{repeat}")
    } else {
        format!("`{names}`")
    }
}

/// An argument's help, with the values it takes when they are a fixed set.
fn help(arg: &Arg) -> String {
    let mut text = arg.get_long_help().or(arg.get_help()).map(|s| s.to_string()).unwrap_or_default();
    let values: Vec<String> =
        arg.get_possible_values().iter().filter(|v| !v.is_hide_set()).map(|v| format!("`{}`", v.get_name())).collect();
    if !values.is_empty() && !matches!(arg.get_action(), ArgAction::SetTrue | ArgAction::SetFalse) {
        let _ = write!(text, " One of {}.", values.join(", "));
    }
    text.trim().to_string()
}

/// A help text without the default it ends with (`… [default: 10s].`, the form clap's own `--help` gives a default
/// it knows), and that default; the text as it is, and nothing, when it says none at its end. A default clap does
/// not know (one that depends on the machine, or on another flag) is said this way, so that the reference gives
/// every default in one column.
fn said_default(help: &str) -> (String, String) {
    let text = help.trim_end().trim_end_matches('.');
    match text.rfind("[default: ") {
        Some(at) if text.ends_with(']') => {
            let said = text[at + "[default: ".len()..text.len() - 1].trim();
            (text[..at].trim_end().to_string(), said.to_string())
        }
        _ => (help.to_string(), String::new()),
    }
}

/// An argument's default, as clap knows it (one that depends on the machine is said in its help: [`said_default`]).
fn default(arg: &Arg) -> String {
    if matches!(arg.get_action(), ArgAction::SetTrue | ArgAction::SetFalse | ArgAction::Count) {
        return String::new();
    }
    arg.get_default_values().iter().map(|v| format!("`{}`", v.to_string_lossy())).collect::<Vec<_>>().join(", ")
}

/// Text made safe for one cell of a Markdown table.
fn cell(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ").replace('|', "\\|")
}

#[cfg(test)]
mod tests {
    use super::said_default;

    #[test]
    fn a_default_said_at_the_end_of_a_help_goes_to_its_column() {
        assert_eq!(
            said_default("Worker threads [default: the CPUs available]."),
            ("Worker threads".into(), "the CPUs available".into())
        );
        assert_eq!(said_default("Deadline [default: 30s]"), ("Deadline".into(), "30s".into()));
        // Mid-text, or none: the help as it is.
        let mid = "Streams [default: 1]. Closed model: more";
        assert_eq!(said_default(mid), (mid.into(), String::new()));
        assert_eq!(said_default("Send a body"), ("Send a body".into(), String::new()));
    }

    #[test]
    fn the_open_models_connection_cap_says_the_default_the_settings_take() {
        let cli = <crate::cli::Cli as clap::CommandFactory>::command();
        let load = cli.find_subcommand("load").expect("the load command");
        let arg = load.get_arguments().find(|a| a.get_id() == "max_connections").expect("--max-connections");
        let help = arg.get_long_help().or(arg.get_help()).map(|s| s.to_string()).unwrap_or_default();
        let default = shootout_model::settings::DEFAULT_MAX_CONNECTIONS.to_string();
        assert_eq!(said_default(&help).1, default, "{help}");
    }
}
