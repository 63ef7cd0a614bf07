//! HTTP/3 on the client side (RFC 9114), without I/O: [`frame`] reads and writes the framing and QUIC's
//! variable-length integers, [`qpack`] turns a request into a field section once and decodes the server's (static
//! table only), and [`session`] is one connection's HTTP/3 state over a `quinn-proto` QUIC connection (its control
//! streams, its request streams and their responses).
//!
//! QUIC itself (packets, encryption, loss recovery, flow control) is `quinn-proto`'s; the framing and QPACK are
//! ours, written for the hot path as HTTP/2's are (no allocation per stream in steady state, bodies counted as
//! they stream past).

pub mod frame;
pub mod qpack;
pub mod session;
