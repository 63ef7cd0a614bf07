//! HTTP on the client side, without I/O: [`request`] encodes a request once before the run,
//! [`response`] parses HTTP/1.1 responses as bytes arrive, streaming bodies through without keeping them, and
//! [`h2`] speaks HTTP/2 (the same requests, translated into header blocks).

pub mod h2;
pub mod request;
pub mod response;
