//! The `shootout` binary: a thin shell over the library crates. `cli/` holds one file per command.

mod cli;

fn main() -> std::process::ExitCode {
    cli::main()
}
