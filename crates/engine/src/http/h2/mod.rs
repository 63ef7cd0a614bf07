//! HTTP/2 on the client side, without I/O: [`frame`] reads and writes the framing, [`request`] turns a request
//! into HPACK header blocks once, and [`session`] is one connection's state (settings, streams, flow-control
//! windows, the HPACK decoder), fed the bytes the worker reads and queuing the bytes it must write.
//!
//! The framing and HPACK are ours, written for the hot path (no allocation per stream in steady state, bodies
//! counted as they stream past); Huffman-coded strings are decoded by the `httlib-huffman` crate. [`hpack`]
//! decodes response header blocks.

pub mod frame;
pub mod hpack;
pub mod request;
pub mod session;

#[cfg(test)]
mod tests;
