//! Standard error, as every command writes its notices and progress to it ([`tell!`] and [`tell_raw!`], in place
//! of `eprintln!` and `eprint!`, which panic when it cannot be written). What cannot be written is dropped: a run
//! whose terminal or reader went away (`shootout run … 2>&1 | head -1`) measures on, stores its results and exits
//! as it would have.

use std::fmt;
use std::io::{self, Write};

/// Writes formatted text (what [`tell!`] and [`tell_raw!`] expand to), or nothing when it cannot.
pub fn write(text: fmt::Arguments<'_>) {
    let _ = io::stderr().lock().write_fmt(text);
}
