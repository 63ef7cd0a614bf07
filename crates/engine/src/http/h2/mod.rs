//! HTTP/2 on the client side, without I/O: [`frame`] reads and writes the framing, [`request`] turns a request
//! into HPACK header blocks once, and [`session`] is one connection's state (settings, streams, flow-control
//! windows, the HPACK decoder), fed the bytes the worker reads and queuing the bytes it must write.
//!
//! The framing is ours, written for the hot path (no allocation per stream in steady state, bodies counted as
//! they stream past); HPACK decoding is the `loona-hpack` crate's.

pub mod frame;
pub mod request;
pub mod session;

#[cfg(test)]
mod tests;

pub use request::Request2;
pub use session::{Event, Session};
