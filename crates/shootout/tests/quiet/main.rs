//! The end-to-end tests that read where the CPUs' time went, each with the machine to itself: the capacity
//! search against servers whose capacity is known ([`capacity`]), the limit column against servers whose limit is
//! known ([`limits`]), and a profile compared with the same app's made costlier ([`profiles`]).
//!
//! A binary of its own, because cargo runs test binaries one after another but a binary's tests side by side:
//! beside the e2e binary's tests, the CPU they take from a server would be what these tests measure (a service
//! time during a search that is not the one measured before it, a limit read as CPU taken). For the same reason
//! its own tests take turns ([`alone`]); other work on the machine is still theirs to name.

#[path = "../e2e/support.rs"]
#[allow(dead_code)] // the e2e tests' helpers, of which this binary needs a few
mod support;

#[path = "../e2e/postgres.rs"]
mod postgres;

mod capacity;
mod limits;
mod profiles;

/// Held by each test for its whole run.
static ALONE: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// Waits for the machine to be this test's alone (a test that failed while holding it does not stop the next).
fn alone() -> std::sync::MutexGuard<'static, ()> {
    ALONE.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}
