//! The `shootout` binary: a thin shell over the library crates. `cli/` holds one file per command. It prints
//! through `say!` and `tell!` only, which a reader that went away does not make panic.

#![deny(clippy::print_stdout, clippy::print_stderr)]

mod cli;

fn main() -> std::process::ExitCode {
    cli::main()
}
