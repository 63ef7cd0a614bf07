//! HTTP/1.1 on the client side, without I/O: [`request`] encodes a request once before the run,
//! [`response`] parses responses as bytes arrive, streaming bodies through without keeping them.

pub mod request;
pub mod response;
