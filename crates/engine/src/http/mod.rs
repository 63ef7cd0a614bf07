//! HTTP on the client side, without I/O: [`request`] encodes a request once before the run,
//! [`response`] parses HTTP/1.1 responses as bytes arrive, streaming bodies through without keeping them,
//! [`stream`] is what HTTP/2 and HTTP/3 keep of a response on a stream, and
//! [`h2`] speaks HTTP/2 and [`h3`] HTTP/3 (the same requests, their fields made by [`fields`] and compressed
//! into header blocks and field sections).

pub mod fields;
pub mod h2;
pub mod h3;
pub mod request;
pub mod response;
pub mod stream;
