//! [`LatencyHistogram`]: microsecond HDR histograms, their summaries and their portable encoding, and the one
//! place a percentile is computed ([`value_at`], from a histogram) or read ([`percentile_us`], from a summary).

use base64::Engine as _;
use hdrhistogram::serialization::{Deserializer, Serializer, V2DeflateSerializer};
use hdrhistogram::Histogram;
use shootout_model::result::{LatencySummary, Percentile};

use crate::percentile;

/// Largest value a histogram tracks: one hour, in microseconds. Larger values are clamped to it.
pub const MAX_US: u64 = 3_600_000_000;

/// The percentiles of ab's table, which every summary reports.
pub const AB_PERCENTILES: [f64; 11] = [50.0, 66.0, 75.0, 80.0, 90.0, 95.0, 98.0, 99.0, 99.9, 99.99, 100.0];

/// An HDR histogram of durations in microseconds, 1 µs to 1 h, 3 significant digits.
pub type LatencyHistogram = Histogram<u64>;

/// A new, empty latency histogram.
pub fn new_histogram() -> LatencyHistogram {
    Histogram::new_with_bounds(1, MAX_US, 3).expect("fixed bounds are valid")
}

/// Records one value in microseconds; 0 becomes 1 and values past one hour are clamped, never dropped.
#[inline]
pub fn record_us(histogram: &mut LatencyHistogram, us: u64) {
    record_us_n(histogram, us, 1);
}

/// Records `n` durations of `us` microseconds at once, clamped as [`record_us`] does.
pub fn record_us_n(histogram: &mut LatencyHistogram, us: u64, n: u64) {
    let _ = histogram.record_n(us.clamp(1, MAX_US), n);
}

/// The value at `percentile` (0 to 100) of `histogram`, µs (0 when it is empty): the value at its nearest rank,
/// computed in integers ([`percentile::rank`]). Every percentile shootout computes comes from here.
pub fn value_at(histogram: &LatencyHistogram, percentile: f64) -> u64 {
    percentile::value_at_rank(histogram, percentile::rank(percentile, histogram.len()))
}

/// `percentile` (0 to 100) of a summary read from a result, µs: from its table when the table has it (ab's
/// percentiles always are there), otherwise from its raw histogram; 0 when neither has it. Every percentile read
/// out of a result goes through here.
pub fn percentile_us(summary: &LatencySummary, percentile: f64) -> u64 {
    match summary.percentiles.iter().find(|x| x.percentile == percentile) {
        Some(stored) => stored.us,
        None => decode_histogram(&summary.histogram).map_or(0, |h| value_at(&h, percentile)),
    }
}

/// The summary written to results: count, mean, spread, extremes and ab's percentiles, plus the raw histogram.
pub fn summarize(histogram: &LatencyHistogram) -> LatencySummary {
    let empty = histogram.is_empty();
    let percentiles =
        AB_PERCENTILES.iter().map(|&p| Percentile { percentile: p, us: value_at(histogram, p) }).collect();
    LatencySummary {
        count: histogram.len(),
        mean_us: if empty { 0.0 } else { histogram.mean() },
        stdev_us: if empty { 0.0 } else { histogram.stdev() },
        min_us: if empty { 0 } else { histogram.min() },
        max_us: if empty { 0 } else { histogram.max() },
        percentiles,
        histogram: encode_histogram(histogram),
    }
}

/// Encodes a histogram as HdrHistogram's V2 deflate-compressed format in base64 (as in `.hlog` files).
pub fn encode_histogram(histogram: &LatencyHistogram) -> String {
    let mut bytes = Vec::new();
    V2DeflateSerializer::new().serialize(histogram, &mut bytes).expect("serialising into memory cannot fail");
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

/// The histogram as HdrHistogram's percentile distribution text (`.hgrm`, values in milliseconds, 5 ticks per
/// half distance, [`percentile::distribution`]), which HdrHistogram's plotter and wrk2's users read. As in
/// HdrHistogram's, `TotalCount` is the number of values at or below the row's value.
pub fn hgrm(histogram: &LatencyHistogram) -> String {
    use std::fmt::Write as _;
    let mut out = format!("{:>12} {:>14} {:>10} {:>14}\n\n", "Value", "Percentile", "TotalCount", "1/(1-Percentile)");
    for step in percentile::distribution(histogram, 5) {
        let q = step.quantile;
        let inverse = if q < 1.0 { format!("{:>14.2}", 1.0 / (1.0 - q)) } else { String::new() };
        let _ = writeln!(out, "{:>12.3} {:>14.12} {:>10} {inverse}", step.value as f64 / 1000.0, q, step.total_count);
    }
    let _ = writeln!(
        out,
        "#[Mean    = {:>12.3}, StdDeviation   = {:>12.3}]\n#[Max     = {:>12.3}, Total count    = {:>12}]",
        histogram.mean() / 1000.0,
        histogram.stdev() / 1000.0,
        histogram.max() as f64 / 1000.0,
        histogram.len()
    );
    let _ =
        writeln!(out, "#[Buckets = {:>12}, SubBuckets     = {:>12}]", histogram.buckets(), histogram.distinct_values());
    out
}

/// Why an encoded histogram could not be read back.
#[derive(Debug, thiserror::Error)]
pub enum DecodeError {
    /// Not base64.
    #[error("histogram is not valid base64: {0}")]
    Base64(#[from] base64::DecodeError),
    /// Not an HdrHistogram V2 (deflate) payload.
    #[error("histogram is not a valid HdrHistogram V2 payload: {0:?}")]
    Payload(hdrhistogram::serialization::DeserializeError),
    /// Beyond what any histogram shootout writes holds, or cut short: why.
    #[error("the histogram: {0}")]
    Bounds(String),
}

/// How many values of `summary` are `at_least_us` or more; none when its histogram cannot be read.
pub fn count_at_least(summary: &LatencySummary, at_least_us: u64) -> u64 {
    let Ok(histogram) = decode_histogram(&summary.histogram) else { return 0 };
    if histogram.is_empty() || histogram.max() < at_least_us {
        return 0;
    }
    histogram.count_between(at_least_us, histogram.max())
}

/// The most bytes an encoded histogram may expand to. One of shootout's (1 µs to 1 h, 3 digits) holds 23,552
/// counts of at most 9 bytes each, some 212 KB; a zlib bomb or a declared length of gigabytes stops here.
const LARGEST_DECODED: usize = 1 << 20;

/// The cookies that open HdrHistogram's V2 format and its deflate-compressed form.
const V2_COOKIE: u32 = 0x1c84_9313;
const V2_DEFLATE_COOKIE: u32 = 0x1c84_9314;

/// Decodes the output of [`encode_histogram`] (or any V2 / V2-deflate base64 histogram within shootout's range:
/// 3 significant digits or fewer, up to [`MAX_US`]), in memory bounded by [`LARGEST_DECODED`] whatever its
/// header declares.
pub fn decode_histogram(text: &str) -> Result<LatencyHistogram, DecodeError> {
    let bytes = base64::engine::general_purpose::STANDARD.decode(text.trim())?;
    let plain = expanded(&bytes)?;
    // The V2 header: cookie, payload length, normalizing offset, digits, lowest, highest, ratio (40 bytes).
    let field = |at: usize| -> Result<u64, DecodeError> {
        let word = plain.get(at..at + 8).ok_or(DecodeError::Bounds("it ends inside its header".into()))?;
        Ok(u64::from_be_bytes(word.try_into().expect("8 bytes")))
    };
    let (payload, digits, highest) = (field(0)? & 0xffff_ffff, field(8)? & 0xffff_ffff, field(24)?);
    field(32)?;
    let held = plain.len() - 40;
    if payload > held as u64 {
        return Err(DecodeError::Bounds(format!("it declares {payload} bytes of counts and holds {held}")));
    }
    if digits > 3 || highest > MAX_US {
        return Err(DecodeError::Bounds(format!(
            "its range ({digits} digits, up to {highest} µs) is wider than any shootout records"
        )));
    }
    Deserializer::new().deserialize(&mut plain.as_slice()).map_err(DecodeError::Payload)
}

/// The V2 bytes of an encoded histogram: inflated, to at most [`LARGEST_DECODED`] bytes, when it is compressed.
fn expanded(bytes: &[u8]) -> Result<Vec<u8>, DecodeError> {
    use std::io::Read;
    let cookie = bytes.get(..4).map(|c| u32::from_be_bytes(c.try_into().expect("4 bytes")));
    if cookie != Some(V2_DEFLATE_COOKIE) {
        return match cookie {
            Some(V2_COOKIE) => Ok(bytes.to_vec()),
            _ => Err(DecodeError::Bounds("it does not begin as an HdrHistogram V2 histogram does".into())),
        };
    }
    let mut plain = Vec::new();
    let inflating = flate2::read::ZlibDecoder::new(bytes.get(8..).unwrap_or_default());
    inflating
        .take(LARGEST_DECODED as u64 + 1)
        .read_to_end(&mut plain)
        .map_err(|e| DecodeError::Bounds(format!("its compressed counts cannot be inflated ({e})")))?;
    if plain.len() > LARGEST_DECODED {
        return Err(DecodeError::Bounds(format!(
            "it inflates past {} KiB, more than any histogram shootout writes",
            LARGEST_DECODED >> 10
        )));
    }
    Ok(plain)
}

/// Serde for a [`LatencyHistogram`] as the base64 text of [`encode_histogram`], exact to the bucket, for the
/// reports agents send (`#[serde(with = "shootout_metrics::histogram::base64_v2")]`). Reading checks that the
/// histogram fits shootout's bounds, so it always adds to a [`new_histogram`].
pub mod base64_v2 {
    use std::borrow::Borrow;

    use serde::{Deserialize, Deserializer, Serializer};

    use super::{decode_histogram, encode_histogram, new_histogram, LatencyHistogram};

    /// Writes the encoded histogram (given as itself or as a reference to it).
    pub fn serialize<H: Borrow<LatencyHistogram>, S: Serializer>(
        histogram: &H,
        serializer: S,
    ) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&encode_histogram(histogram.borrow()))
    }

    /// Reads an encoded histogram into shootout's bounds.
    pub fn deserialize<'de, D: Deserializer<'de>, H: From<LatencyHistogram>>(deserializer: D) -> Result<H, D::Error> {
        let text = <std::borrow::Cow<'de, str>>::deserialize(deserializer)?;
        let decoded = decode_histogram(&text).map_err(serde::de::Error::custom)?;
        let mut histogram = new_histogram();
        histogram.add(&decoded).map_err(|e| serde::de::Error::custom(format!("histogram out of bounds: {e:?}")))?;
        Ok(histogram.into())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encoding_round_trips_exactly() {
        let mut h = new_histogram();
        for us in [1, 7, 420, 420, 99_999, 2_000_000] {
            record_us(&mut h, us);
        }
        let back = decode_histogram(&encode_histogram(&h)).unwrap();
        assert_eq!(back.len(), 6);
        assert_eq!(back, h);
    }

    #[test]
    fn a_histogram_past_shootouts_bounds_is_refused_before_it_is_expanded() {
        let encode = |bytes: &[u8]| base64::engine::general_purpose::STANDARD.encode(bytes);
        let header = |payload: u32, digits: u32, highest: u64| {
            let mut bytes = [V2_COOKIE, payload, 0, digits].map(u32::to_be_bytes).concat();
            bytes.extend([1u64.to_be_bytes(), highest.to_be_bytes(), 1f64.to_be_bytes()].concat());
            bytes
        };
        let why = |bytes: &[u8]| decode_histogram(&encode(bytes)).unwrap_err().to_string();
        assert!(why(&header(u32::MAX, 3, MAX_US)).contains("declares 4294967295 bytes of counts and holds 0"));
        assert!(why(&header(0, 5, u64::MAX >> 1)).contains("wider than any shootout records"));
        assert!(why(&header(0, 3, MAX_US)[..30]).contains("ends inside its header"));
        assert!(why(b"GIF89a").contains("does not begin as an HdrHistogram V2"));
        let empty = header(0, 3, MAX_US);
        assert_eq!(decode_histogram(&encode(&empty)).unwrap().len(), 0, "an empty histogram is read");
    }

    #[test]
    fn hgrm_lists_the_distribution() {
        let mut h = new_histogram();
        for us in 1..=1000 {
            record_us(&mut h, us);
        }
        let text = hgrm(&h);
        assert!(text.starts_with("       Value     Percentile TotalCount 1/(1-Percentile)"));
        assert!(text.contains("#[Max     =        1.000, Total count    =         1000]"), "{text}");
        assert!(text.contains("\n       0.900 0.900000000000        900          10.00\n"), "p90 at rank 900: {text}");
        assert!(text.contains("\n       0.999 0.998828125000        999         853.33\n"), "{text}");
        assert!(text.contains("\n       1.000 0.999023437500       1000        1024.00\n"), "{text}");
        let last_value = text.lines().rfind(|l| !l.starts_with('#') && !l.trim().is_empty()).unwrap();
        assert!(last_value.trim_start().starts_with("1.000 1.0000"), "{last_value}");
    }

    #[test]
    fn clamps_instead_of_dropping() {
        let mut h = new_histogram();
        record_us(&mut h, 0);
        record_us(&mut h, MAX_US * 10);
        assert_eq!(h.len(), 2);
        assert_eq!(h.min(), 1);
        assert!(h.max() >= MAX_US);
    }

    #[test]
    fn summary_of_known_values() {
        let mut h = new_histogram();
        for us in 1..=1000 {
            record_us(&mut h, us);
        }
        let s = summarize(&h);
        assert_eq!(s.count, 1000);
        assert!((s.mean_us - 500.5).abs() < 0.5, "{}", s.mean_us);
        assert_eq!(s.min_us, 1);
        assert_eq!(s.max_us, 1000);
        assert_eq!(percentile_us(&s, 50.0), 500);
        assert_eq!(percentile_us(&s, 42.0), 420, "a percentile not in the table comes from the histogram");
        assert_eq!(s.percentiles.len(), AB_PERCENTILES.len());
    }

    #[test]
    fn empty_summary_is_zero() {
        let s = summarize(&new_histogram());
        assert_eq!((s.count, s.min_us, s.max_us), (0, 0, 0));
        assert_eq!(s.mean_us, 0.0);
    }
}
