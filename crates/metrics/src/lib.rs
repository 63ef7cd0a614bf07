//! Measurements kept at full resolution and merged exactly.
//!
//! Layout:
//! - [`histogram`]: [`LatencyHistogram`], an HDR histogram of microseconds (1 µs to 1 h, 3 significant digits),
//!   its summary ([`summarize`]), its portable encoding (HdrHistogram V2, deflate, base64), and the one place a
//!   percentile is computed ([`value_at`]) or read back from a result ([`percentile_us`]).
//! - [`percentile`]: percentiles by nearest rank computed in integers ([`percentile::rank`]), and the percentile
//!   distribution of `.hgrm` files and the HTML report ([`percentile::distribution`]).
//! - [`recorder`]: [`Recorder`], what one engine thread writes into for every request: histograms, status and
//!   error counters, bytes, and the current second of the timeline. Recorders merge with `+=`.
//! - [`resets`]: [`StreamResets`], the HTTP/2 requests ended by RST_STREAM, per error code, counted without
//!   allocation for the codes RFC 9113 defines.
//! - [`timeline`]: [`Interval`] (one thread's view of one second) and [`Timeline`], which merges intervals from
//!   every thread into the per-second series of the result.
//!
//! Recorders and intervals cross a process boundary (an agent's reports to its coordinator) with serde, their
//! histograms as HdrHistogram V2 base64 ([`histogram::base64_v2`]), exactly: they add up on the other side as they
//! would have here.
//!
//! Nothing here allocates per recorded value; a histogram is a fixed array sized once.

pub mod histogram;
pub mod percentile;
pub mod recorder;
pub mod resets;
pub mod timeline;

pub use histogram::{
    decode_histogram, encode_histogram, hgrm, percentile_us, summarize, value_at, LatencyHistogram, AB_PERCENTILES,
};
pub use recorder::{Check, Recorder, WindowCounts};
pub use resets::StreamResets;
pub use timeline::{Interval, Timeline};
