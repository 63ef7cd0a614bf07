//! Standard output, as every command prints to it ([`say!`] and [`say_raw!`], in place of `println!` and `print!`,
//! which panic when the output cannot be written). A reader that went away (`shootout report … | head -1`) ends
//! what is printed, quietly, and not the command: it does its work to the end (a run keeps measuring and stores its
//! results) and exits as it would have. Any other failure to write (`> /dev/full`) is kept, the rest of the output
//! dropped, and [`finish`] gives it to the command line's end, which says it in one line and exits 1.

use std::fmt;
use std::io::{self, Write};
use std::sync::Mutex;

/// How writing to standard output has gone so far.
enum State {
    /// Everything written.
    Open,
    /// Its reader went away: nothing more is written, and that is no failure.
    ReaderGone,
    /// A write failed with this error: nothing more is written.
    Failed(io::Error),
}

static STATE: Mutex<State> = Mutex::new(State::Open);

/// Writes what `write` puts on standard output, unless an earlier write ended it.
fn write_with(write: impl FnOnce(&mut io::StdoutLock<'_>) -> io::Result<()>) {
    let mut state = STATE.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    if matches!(*state, State::Open) {
        if let Err(error) = write(&mut io::stdout().lock()) {
            *state = ended_by(error);
        }
    }
}

/// What a failed write means for the rest of the output.
fn ended_by(error: io::Error) -> State {
    if error.kind() == io::ErrorKind::BrokenPipe {
        State::ReaderGone
    } else {
        State::Failed(error)
    }
}

/// Prints formatted text (what [`say!`] and [`say_raw!`] expand to).
pub fn print(text: fmt::Arguments<'_>) {
    write_with(|out| out.write_fmt(text));
}

/// Prints bytes as they are (a completion script made into a buffer).
pub fn print_bytes(bytes: &[u8]) {
    write_with(|out| out.write_all(bytes));
}

/// Writes out what is still buffered; the error that kept some of the output from being written, if one did (a
/// reader that went away is none).
pub fn finish() -> Option<io::Error> {
    write_with(|out| out.flush());
    let mut state = STATE.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    match std::mem::replace(&mut *state, State::ReaderGone) {
        State::Failed(error) => Some(error),
        State::Open | State::ReaderGone => None,
    }
}
