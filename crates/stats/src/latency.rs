//! Latency in HDR histograms: mergeable exactly (across clients and, later,
//! MPI ranks) and stored as compressed blobs, so a later merge or comparison
//! works on the real distribution, never on averaged percentiles.

use hdrhistogram::serialization::{Deserializer, Serializer, V2DeflateSerializer, V2Serializer};
use hdrhistogram::Histogram;
use std::borrow::Cow;
use std::io::Read;

/// Values are nanoseconds from 1 ns to 1 hour, at 3 significant digits:
/// every recorded value is exact to within 0.1%.
pub const SIGNIFICANT_DIGITS: u8 = 3;
const LOWEST_NS: u64 = 1;
const HIGHEST_NS: u64 = 3_600_000_000_000;

/// HdrHistogram's V2 cookies (its serialization module keeps them private): plain, and deflated
/// (what [`Latency::to_bytes`] writes).
const V2_COOKIE: u32 = 0x1c84_9313;
const V2_DEFLATE_COOKIE: u32 = 0x1c84_9314;
/// A plain V2 header: cookie, payload length, normalizing offset, significant digits (u32 each),
/// lowest and highest trackable values (u64 each), integer-to-double ratio (f64).
const V2_HEADER_BYTES: usize = 40;

/// One latency distribution: an HDR histogram of nanoseconds (1 ns to an hour, 3 significant
/// digits) that merges exactly and stores as a compressed blob.
#[derive(Clone, Debug)]
pub struct Latency {
    hist: Histogram<u64>,
}

/// What reports show of a latency distribution, in nanoseconds.
#[derive(Debug, Clone, Copy, PartialEq, Default, serde::Serialize, serde::Deserialize)]
pub struct LatencySummary {
    /// How many latencies were recorded.
    pub count: u64,
    /// Their mean (ns), from the histogram: within 0.1% of the exact mean.
    pub mean_ns: f64,
    /// The smallest (ns).
    pub min_ns: u64,
    /// The median (ns).
    pub p50_ns: u64,
    /// The 90th percentile (ns).
    pub p90_ns: u64,
    /// The 99th percentile (ns).
    pub p99_ns: u64,
    /// The 99.9th percentile (ns).
    pub p99_9_ns: u64,
    /// The 99.99th percentile (ns).
    pub p99_99_ns: u64,
    /// The largest (ns), clamped to an hour as recorded.
    pub max_ns: u64,
}

impl Default for Latency {
    fn default() -> Self {
        Self::new()
    }
}

impl Latency {
    /// An empty histogram covering 1 ns to an hour at this crate's precision.
    ///
    /// # Panics
    /// Never in practice: the bounds are constants hdrhistogram accepts.
    pub fn new() -> Latency {
        let hist = Histogram::new_with_bounds(1, HIGHEST_NS, SIGNIFICANT_DIGITS)
            .expect("constant bounds are valid for hdrhistogram");
        Latency { hist }
    }

    /// The memory one histogram holds (its counts: some 33,000 of 8 bytes),
    /// whatever it records, for the plan-time memory check.
    pub fn footprint() -> u64 {
        counters() as u64 * std::mem::size_of::<u64>() as u64
    }

    /// Records one latency; values beyond an hour are clamped to an hour.
    pub fn record(&mut self, ns: u64) {
        self.hist.saturating_record(ns.max(1));
    }

    /// How many latencies were recorded.
    pub fn count(&self) -> u64 {
        self.hist.len()
    }

    /// Forgets every recorded latency, keeping the memory for the next cell.
    pub fn reset(&mut self) {
        self.hist.reset();
    }

    /// Adds another distribution exactly (same bounds by construction).
    ///
    /// # Panics
    /// Never in practice: every `Latency` has the same bounds, so the merge cannot fail.
    pub fn merge(&mut self, other: &Latency) {
        self.hist.add(&other.hist).expect("histograms with identical bounds always merge");
    }

    /// The latency (ns) at quantile `q` (0.0 to 1.0); 0 when nothing was recorded.
    pub fn quantile_ns(&self, q: f64) -> u64 {
        if self.hist.is_empty() {
            0
        } else {
            self.hist.value_at_quantile(q)
        }
    }

    /// The standard deviation of the recorded values (0 when none), from the histogram: exact
    /// to its 3 significant digits.
    pub fn stddev_ns(&self) -> f64 {
        if self.hist.is_empty() {
            0.0
        } else {
            self.hist.stdev()
        }
    }

    /// How many recorded values lie in `low..=high` nanoseconds (bucket edges at the histogram's
    /// 3 significant digits).
    pub fn count_between_ns(&self, low: u64, high: u64) -> u64 {
        if self.hist.is_empty() || high < low {
            0
        } else {
            self.hist.count_between(low.max(1), high.min(HIGHEST_NS))
        }
    }

    /// For each of `highs` (nanoseconds), what [`Latency::count_between_ns`]`(1, high)` counts, in
    /// one pass over the recorded buckets (where each count alone walks every bucket up to its high).
    pub fn counts_at_most_ns(&self, highs: &[u64]) -> Vec<u64> {
        let mut counts = vec![0u64; highs.len()];
        for v in self.hist.iter_recorded() {
            // A bucket is counted up to `high` when it holds a value at or below it.
            let low = self.hist.lowest_equivalent(v.value_iterated_to());
            for (count, &high) in counts.iter_mut().zip(highs) {
                if high >= 1 && low <= high.min(HIGHEST_NS) {
                    *count += v.count_at_value();
                }
            }
        }
        counts
    }

    /// Count, mean, percentiles and extremes for reports; all zero when nothing was recorded.
    pub fn summary(&self) -> LatencySummary {
        if self.hist.is_empty() {
            return LatencySummary::default();
        }
        LatencySummary {
            count: self.hist.len(),
            mean_ns: self.hist.mean(),
            min_ns: self.hist.min(),
            p50_ns: self.hist.value_at_quantile(0.50),
            p90_ns: self.hist.value_at_quantile(0.90),
            p99_ns: self.hist.value_at_quantile(0.99),
            p99_9_ns: self.hist.value_at_quantile(0.999),
            p99_99_ns: self.hist.value_at_quantile(0.9999),
            max_ns: self.hist.max(),
        }
    }

    /// HdrHistogram's V2 format, deflate-compressed: readable by every HDR implementation.
    ///
    /// # Panics
    /// Never in practice: serialising into a `Vec` cannot fail.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::new();
        V2DeflateSerializer::new().serialize(&self.hist, &mut out).expect("serialising into a Vec cannot fail");
        out
    }

    /// HdrHistogram's V2 format, not compressed, which [`Latency::from_bytes`] reads as well: for
    /// a client's histogram on its way to the leader, which merges the clients' and stores the
    /// merge with [`Latency::to_bytes`]. Deflating allocates and writes some 300 KB of zlib state:
    /// done by a client between two phases run back to back, it left a following phase of one
    /// rmdir (the metadata suite's one-folder tree-remove) running from cold caches.
    ///
    /// # Panics
    /// Never in practice: serialising into a `Vec` cannot fail.
    pub fn to_plain_bytes(&self) -> Vec<u8> {
        let mut out = Vec::new();
        V2Serializer::new().serialize(&self.hist, &mut out).expect("serialising into a Vec cannot fail");
        out
    }

    /// Whether `bytes` read back as [`Latency::from_bytes`] would read them (an HDR histogram
    /// of this type's shape, within its range), without the merge into a full-range histogram that reading
    /// does: a fifth of its cost or less (0.06 to 0.12 ms against 0.4 to 0.6 ms each, release build,
    /// this 2-core VM), for a check of every histogram a database holds.
    pub fn check_bytes(bytes: &[u8]) -> Result<(), HistogramError> {
        let hist = decode(bytes)?;
        // What merging it needs: its largest value within the top of this type's last bucket.
        static TOP: std::sync::OnceLock<u64> = std::sync::OnceLock::new();
        let top = *TOP.get_or_init(|| Latency::new().hist.iter_all().last().map_or(0, |v| v.value_iterated_to()));
        if !hist.is_empty() && hist.max() > top {
            return Err(HistogramError::OutOfRange(format!("it holds {} ns, {top} ns at most", hist.max())));
        }
        Ok(())
    }

    /// The longest bytes [`Latency::to_bytes`] can write, or a plain V2 histogram of this type
    /// can be (304,281: `largest_deflated` and its 8-byte frame): longer ones are refused unread.
    pub fn largest_stored() -> usize {
        (V2_HEADER_BYTES + largest_payload()).max(8 + largest_deflated())
    }

    /// Reads back what [`Latency::to_bytes`] wrote (or a plain V2 histogram of the same shape),
    /// refusing anything larger than [`Latency::largest_stored`] before allocating for it.
    pub fn from_bytes(bytes: &[u8]) -> Result<Latency, HistogramError> {
        let hist = decode(bytes)?;
        let mut latency = Latency::new();
        latency.hist.add(&hist).map_err(|e| HistogramError::OutOfRange(format!("{e:?}")))?;
        Ok(latency)
    }
}

/// The counters a histogram of this type holds: 33,792 (32 buckets of 1,024 at 3 digits, 1 ns to
/// an hour, and the first bucket's lower half).
fn counters() -> usize {
    static COUNTERS: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *COUNTERS.get_or_init(|| Latency::new().hist.distinct_values())
}

/// The longest counts payload a V2 histogram of this type can have, so the longest
/// [`Latency::to_bytes`] can ever write once inflated, less its 40-byte header: every one of its
/// [`counters`] non-zero and as large as a count goes, each a LEB128-64b9B varint of at most
/// 9 bytes (hdrhistogram's `counts_array_max_encoded_size`): 33,792 x 9 = 304,128 bytes.
fn largest_payload() -> usize {
    counters() * 9
}

/// The longest deflated stream [`largest_payload`] (and its header) can take: zlib's own
/// `compressBound` of it, for data that does not compress (stored blocks, 5 bytes each per 64 KiB,
/// the zlib header and checksum): 304,273 bytes.
fn largest_deflated() -> usize {
    let n = V2_HEADER_BYTES + largest_payload();
    n + (n >> 12) + (n >> 14) + (n >> 25) + 13
}

/// Stored or sent bytes as an HDR histogram of exactly the shape this type records, or why not:
/// the one way such bytes reach hdrhistogram. Its deserializer trusts the header: it allocates the
/// payload length the header claims (up to 4 GiB) and counters for the bounds it claims (some
/// 50 MB at 5 digits up to u64::MAX) before it reads a byte of the payload. So the header is read
/// here first: a V2 cookie, a payload within [`largest_payload`] (deflated: within
/// [`largest_deflated`], inflated no further than the longest plain histogram), and bounds and
/// digits equal to this type's own. Only then does hdrhistogram decode it.
fn decode(bytes: &[u8]) -> Result<Histogram<u64>, HistogramError> {
    let cap = Latency::largest_stored();
    if bytes.len() > cap {
        return Err(HistogramError::Oversized(format!("it is {} bytes, {cap} at most", bytes.len())));
    }
    let plain = match be_u32(bytes, 0) {
        Some(V2_COOKIE) => Cow::Borrowed(bytes),
        Some(V2_DEFLATE_COOKIE) => Cow::Owned(inflate(bytes)?),
        Some(other) => return Err(HistogramError::Bad(format!("not an HDR V2 histogram (it starts 0x{other:08x})"))),
        None => return Err(HistogramError::Bad(format!("{} bytes, shorter than a histogram's cookie", bytes.len()))),
    };
    check_header(&plain)?;
    Deserializer::new().deserialize(&mut &plain[..]).map_err(|e| HistogramError::Bad(format!("{e:?}")))
}

/// A deflated V2 histogram's plain form, inflated no further than the longest this type writes.
fn inflate(bytes: &[u8]) -> Result<Vec<u8>, HistogramError> {
    let claimed = be_u32(bytes, 4).ok_or_else(|| {
        HistogramError::Bad(format!("{} bytes, shorter than a deflated histogram's header", bytes.len()))
    })? as usize;
    let (cap, held) = (largest_deflated(), bytes.len() - 8);
    if claimed > cap {
        return Err(HistogramError::Oversized(format!(
            "it claims {claimed} deflated bytes, {cap} at most (the largest iomatrix writes)"
        )));
    }
    if claimed > held {
        return Err(HistogramError::Bad(format!("it claims {claimed} deflated bytes and holds {held}")));
    }
    let limit = V2_HEADER_BYTES + largest_payload();
    let mut plain = Vec::new();
    flate2::read::ZlibDecoder::new(&bytes[8..8 + claimed])
        .take(limit as u64 + 1)
        .read_to_end(&mut plain)
        .map_err(|e| HistogramError::Bad(format!("its deflated stream does not inflate ({e})")))?;
    if plain.len() > limit {
        return Err(HistogramError::Oversized(format!(
            "it inflates to more than {limit} bytes (the largest iomatrix writes)"
        )));
    }
    Ok(plain)
}

/// A plain V2 header against what this type writes: the payload it claims within
/// [`largest_payload`] and all there, bounds and digits this type's own.
fn check_header(plain: &[u8]) -> Result<(), HistogramError> {
    if be_u32(plain, 0) != Some(V2_COOKIE) {
        return Err(HistogramError::Bad("its inflated stream is not an HDR V2 histogram".into()));
    }
    if plain.len() < V2_HEADER_BYTES {
        return Err(HistogramError::Bad(format!("{} bytes, shorter than a histogram's header", plain.len())));
    }
    let claimed = be_u32(plain, 4).unwrap_or_default() as usize;
    let (cap, held) = (largest_payload(), plain.len() - V2_HEADER_BYTES);
    if claimed > cap {
        return Err(HistogramError::Oversized(format!(
            "it claims {claimed} bytes of counts, {cap} at most (the largest iomatrix writes)"
        )));
    }
    if claimed != held {
        return Err(HistogramError::Bad(format!("it claims {claimed} bytes of counts and holds {held}")));
    }
    let digits = be_u32(plain, 12).unwrap_or_default();
    let (low, high) = (be_u64(plain, 16).unwrap_or_default(), be_u64(plain, 24).unwrap_or_default());
    if (digits, low, high) != (u32::from(SIGNIFICANT_DIGITS), LOWEST_NS, HIGHEST_NS) {
        return Err(HistogramError::OtherShape(format!(
            "it tracks {low} to {high} ns at {digits} significant digits; iomatrix records {LOWEST_NS} to \
             {HIGHEST_NS} ns at {SIGNIFICANT_DIGITS}"
        )));
    }
    Ok(())
}

fn be_u32(bytes: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_be_bytes(bytes.get(at..at + 4)?.try_into().ok()?))
}

fn be_u64(bytes: &[u8], at: usize) -> Option<u64> {
    Some(u64::from_be_bytes(bytes.get(at..at + 8)?.try_into().ok()?))
}

/// Why stored or sent bytes are not a latency histogram of this type. (HDR's own errors are
/// kept in their debug form, the only one they have.)
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum HistogramError {
    /// Not an HDR V2 histogram, cut short, or its payload does not decode.
    #[error("bad latency histogram: {0}")]
    Bad(String),
    /// A histogram whose values do not fit this type's range (1 ns to an hour).
    #[error("latency histogram out of range: {0}")]
    OutOfRange(String),
    /// Longer than any this type writes: refused before anything is allocated for it.
    #[error("latency histogram too large: {0}")]
    Oversized(String),
    /// Bounds or digits other than this type's.
    #[error("latency histogram of another shape: {0}")]
    OtherShape(String),
}

/// As HDR's V2 bytes: how a client's histogram travels to rank 0 exactly.
impl serde::Serialize for Latency {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_bytes(&self.to_bytes())
    }
}

impl<'de> serde::Deserialize<'de> for Latency {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Latency, D::Error> {
        let bytes = <Vec<u8>>::deserialize(d)?;
        Latency::from_bytes(&bytes).map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_at_most_are_count_between_from_one() {
        let mut l = Latency::new();
        // Values over ten orders of magnitude, some on bucket edges, one past an hour.
        let mut x = 7u64;
        for _ in 0..5_000 {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            l.record(1 + (x >> 20) % 10u64.pow(1 + (x % 10) as u32));
        }
        for v in [1, 1000, 1024, 2047, 2048, 4_000_000, HIGHEST_NS * 2] {
            l.record(v);
        }
        let highs: Vec<u64> = [0u64, 1, 2, 4, 10, 20, 50, 100, 250, 500, 750, 1000, 2048, 2_000_000, 1_000_000_000]
            .into_iter()
            .chain([HIGHEST_NS, u64::MAX])
            .collect();
        let expected: Vec<u64> = highs.iter().map(|&h| if h == 0 { 0 } else { l.count_between_ns(1, h) }).collect();
        assert_eq!(l.counts_at_most_ns(&highs), expected);
        assert_eq!(Latency::new().counts_at_most_ns(&[1, 10]), vec![0, 0]);
    }

    #[test]
    fn percentiles_are_ordered_and_merge_is_exact() {
        let mut a = Latency::new();
        let mut b = Latency::new();
        for i in 1..=1000u64 {
            a.record(i * 1000);
            b.record(i * 2000);
        }
        let mut merged = a.clone();
        merged.merge(&b);
        assert_eq!(merged.count(), 2000);
        let s = merged.summary();
        assert!(s.min_ns <= s.p50_ns && s.p50_ns <= s.p90_ns && s.p90_ns <= s.p99_ns);
        assert!(s.p99_ns <= s.p99_9_ns && s.p99_9_ns <= s.p99_99_ns && s.p99_99_ns <= s.max_ns);
        // 1000 values 1..1000 us and 1000 values 2,4..2000 us: at x us, x + x/2 of
        // the 2000 values lie below, so the median is at 2/3 ms.
        assert!((664_000..=670_000).contains(&s.p50_ns), "{s:?}");
        assert!((s.max_ns as f64 - 2_000_000.0).abs() < 2_000_000.0 * 0.001);
    }

    #[test]
    fn round_trips_through_bytes() {
        let mut a = Latency::new();
        for v in [5u64, 50, 500, 5_000, 5_000_000] {
            a.record(v);
        }
        let back = Latency::from_bytes(&a.to_bytes()).unwrap();
        assert_eq!(back.summary(), a.summary());
        let plain = a.to_plain_bytes();
        assert_eq!(Latency::from_bytes(&plain).unwrap().summary(), a.summary());
        assert!(Latency::check_bytes(&plain).is_ok() && plain.len() <= Latency::largest_stored());
        assert!(Latency::from_bytes(b"junk").is_err());
        assert!(Latency::check_bytes(&a.to_bytes()).is_ok() && Latency::check_bytes(b"junk").is_err());
        let mut wide = Histogram::<u64>::new_with_bounds(1, HIGHEST_NS * 4, SIGNIFICANT_DIGITS).unwrap();
        wide.record(HIGHEST_NS * 3).unwrap();
        let mut bytes = Vec::new();
        V2DeflateSerializer::new().serialize(&wide, &mut bytes).unwrap();
        assert!(Latency::from_bytes(&bytes).is_err() && Latency::check_bytes(&bytes).is_err());
    }

    /// A plain V2 header as hdrhistogram writes it, claiming `payload` bytes of counts (none held).
    fn header(payload: u32, digits: u32, low: u64, high: u64) -> Vec<u8> {
        let mut h = Vec::with_capacity(V2_HEADER_BYTES);
        for word in [V2_COOKIE, payload, 0, digits] {
            h.extend_from_slice(&word.to_be_bytes());
        }
        h.extend_from_slice(&low.to_be_bytes());
        h.extend_from_slice(&high.to_be_bytes());
        h.extend_from_slice(&1.0f64.to_be_bytes());
        h
    }

    /// `plain` deflated as V2DeflateSerializer frames it, its outer length given.
    fn deflated(plain: &[u8], claimed: Option<u32>) -> Vec<u8> {
        use std::io::Write;
        let mut z = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::default());
        z.write_all(plain).unwrap();
        let stream = z.finish().unwrap();
        let mut out = V2_DEFLATE_COOKIE.to_be_bytes().to_vec();
        out.extend_from_slice(&claimed.unwrap_or(stream.len() as u32).to_be_bytes());
        out.extend_from_slice(&stream);
        out
    }

    #[test]
    fn the_caps_are_those_the_comments_state() {
        assert_eq!((counters(), largest_payload(), largest_deflated()), (33_792, 304_128, 304_273));
        assert_eq!(Latency::largest_stored(), 304_281);
        let err = Latency::from_bytes(&vec![0; 304_282]).unwrap_err();
        assert!(matches!(err, HistogramError::Oversized(_)) && err.to_string().contains("304282 bytes"), "{err}");
        let mine = Latency::new().to_bytes();
        let plain = inflate(&mine).unwrap();
        // All but the payload's length (an empty histogram writes 1 byte of counts).
        assert_eq!(plain[8..V2_HEADER_BYTES], header(0, 3, LOWEST_NS, HIGHEST_NS)[8..]);
    }

    #[test]
    fn the_largest_histogram_this_type_writes_is_within_the_caps_and_decodes() {
        let mut full = Latency::new();
        let values: Vec<u64> = full.hist.iter_all().map(|v| v.value_iterated_to()).collect();
        for v in values {
            // A count whose zig-zag varint takes the longest form, 9 bytes.
            full.hist.record_n(v, 1 << 60).unwrap();
        }
        let bytes = full.to_bytes();
        let plain = inflate(&bytes).unwrap();
        assert_eq!(plain.len() - V2_HEADER_BYTES, largest_payload(), "every counter written at its longest");
        assert!(bytes.len() <= largest_deflated() + 8);
        assert!(Latency::check_bytes(&bytes).is_ok());
        assert!(Latency::check_bytes(&plain).is_ok(), "the plain form reads too");
    }

    #[test]
    fn a_header_claiming_a_huge_payload_is_refused_before_anything_is_allocated() {
        // 40 bytes that ask hdrhistogram for a 4 GiB buffer.
        let hostile = header(0xFFFF_FFF0, 3, LOWEST_NS, HIGHEST_NS);
        assert_eq!(hostile.len(), 40);
        for bytes in [hostile.clone(), deflated(&hostile, None)] {
            let err = Latency::from_bytes(&bytes).unwrap_err();
            assert!(matches!(err, HistogramError::Oversized(_)), "{err}");
            assert!(err.to_string().contains("4294967280 bytes of counts, 304128 at most"), "{err}");
            assert!(Latency::check_bytes(&bytes).is_err());
        }
        let err = Latency::from_bytes(&deflated(&hostile, Some(0xFFFF_FFF0))).unwrap_err();
        assert!(matches!(err, HistogramError::Oversized(_)) && err.to_string().contains("deflated bytes"), "{err}");
        // A deflate bomb: 64 MiB of zeros after a sound header, in some 64 KiB.
        let mut bomb = header(304_128, 3, LOWEST_NS, HIGHEST_NS);
        bomb.resize(64 << 20, 0);
        let err = Latency::from_bytes(&deflated(&bomb, None)).unwrap_err();
        assert!(matches!(err, HistogramError::Oversized(_)) && err.to_string().contains("inflates to more"), "{err}");
    }

    #[test]
    fn a_header_of_other_bounds_or_digits_is_refused() {
        for (digits, low, high) in
            [(5, 1, u64::MAX), (2, LOWEST_NS, HIGHEST_NS), (3, 2, HIGHEST_NS), (3, 1, HIGHEST_NS * 2)]
        {
            let bytes = header(0, digits, low, high);
            let err = Latency::from_bytes(&bytes).unwrap_err();
            assert!(matches!(err, HistogramError::OtherShape(_)), "{digits} {low} {high}: {err}");
            assert!(
                err.to_string().contains(&format!("it tracks {low} to {high} ns at {digits} significant")),
                "{err}"
            );
            assert!(Latency::check_bytes(&deflated(&bytes, None)).is_err());
        }
    }

    #[test]
    fn short_truncated_and_foreign_bytes_are_refused() {
        let sound = Latency::new().to_bytes();
        let plain = inflate(&sound).unwrap();
        for bytes in [&b""[..], b"\x1c\x84", b"\x1c\x84\x93\x14\x00", &sound[..sound.len() - 3], &plain[..30], b"junk"]
        {
            assert!(matches!(Latency::from_bytes(bytes), Err(HistogramError::Bad(_))), "{bytes:?}");
        }
        let mut longer = plain.clone();
        longer.push(2);
        let err = Latency::from_bytes(&longer).unwrap_err();
        assert!(err.to_string().contains("claims 1 bytes of counts and holds 2"), "{err}");
    }
}
