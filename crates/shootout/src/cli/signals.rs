//! How a command ends on a signal. SIGINT (Ctrl-C), SIGTERM (`timeout`, a CI job's cancel, systemd, Kubernetes)
//! and SIGHUP (a closed terminal, a dropped ssh session to the bench machine) all end it the same way: the first
//! sets the command's stop flag, so it stops sending, keeps and reports what it measured, and stops its servers
//! as after any run; a second leaves at once, after the command's last act (`run` kills its servers' trees). The
//! exit code is 128 + the number of the first signal (130 for Ctrl-C, 143 for SIGTERM, 129 for SIGHUP).

use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};
use std::sync::Arc;

use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
use signal_hook::iterator::Signals;

/// The first stop signal received, 0 before any.
static FIRST: AtomicI32 = AtomicI32::new(0);

/// Watches for SIGINT, SIGTERM and SIGHUP from now on: the first sets `stop`; the second calls `last` and exits.
pub fn watch(stop: Arc<AtomicBool>, last: impl Fn() + Send + 'static) {
    let Ok(mut signals) = Signals::new([SIGINT, SIGTERM, SIGHUP]) else {
        return; // no handler could be installed: each signal keeps its default, ending the process
    };
    std::thread::spawn(move || {
        for signal in signals.forever() {
            if FIRST.compare_exchange(0, signal, Ordering::SeqCst, Ordering::SeqCst).is_ok() {
                stop.store(true, Ordering::SeqCst);
                continue;
            }
            last();
            std::process::exit(exit_code().into());
        }
    });
}

/// The exit code of a command stopped by a signal: 128 + its number (130, as for Ctrl-C, when none came).
pub fn exit_code() -> u8 {
    match FIRST.load(Ordering::SeqCst) {
        0 => 130,
        signal => (128 + signal).clamp(0, 255) as u8,
    }
}
