//! The one serialized form of every stateful object (learners, mechanisms, randomisers, loss families,
//! domains, generators): a small checksummed container around a [postcard](https://postcard.jamesmunns.com/)
//! payload.
//!
//! | offset | bytes | field |
//! | --- | --- | --- |
//! | 0 | 4 | magic `b"DPOS"` (dponline state) |
//! | 4 | 4 | format version [`STATE_VERSION`], little-endian `u32` |
//! | 8 | 8 | payload length `n`, little-endian `u64` |
//! | 16 | `n` | the payload: the object, postcard-encoded |
//! | 16 + `n` | 4 | CRC-32C (Castagnoli; the iSCSI polynomial) of bytes `0 .. 16 + n`, little-endian |
//!
//! Decoding ([`from_state_bytes`], [`open`]) is total: any byte string gives a value or a [`CoreError::State`]
//! that says what is wrong — too short, not a dponline state, truncated, extended by trailing bytes, damaged
//! (checksum mismatch), another format version, or a payload that does not decode to the expected type
//! completely. CRC-32C detects every error of up to 5 flipped bits and every burst of up to 32 bits in the
//! message lengths used here, and any other damage except with probability `2^-32`; it protects against
//! accidents, not against an adversary (who can recompute it). Against crafted bytes every type also checks
//! its invariants after decoding (lengths, finiteness, counters within the horizon, noise scales and derived
//! constants equal to what its parameters imply): see each type's `from_bytes`.
//!
//! The bytes of a learner or mechanism contain unreleased exact sums and noise: treat them as sensitive as
//! the raw data.

use crc::{CRC_32_ISCSI, Crc};
use serde::{Serialize, de::DeserializeOwned};

use crate::error::{CoreError, Result};

/// Format version of serialized states, and of the seeded noise streams: a state of another version is
/// refused (a seed gives other noise across versions, so a restored object would not continue its stream).
pub const STATE_VERSION: u32 = 12;

/// The four bytes every serialized state starts with.
pub const MAGIC: [u8; 4] = *b"DPOS";

const HEADER: usize = 16;
const TRAILER: usize = 4;
const CASTAGNOLI: Crc<u32> = Crc::<u32>::new(&CRC_32_ISCSI);

/// Wrap `payload` in the container described in the module docs.
pub fn seal(payload: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(HEADER + payload.len() + TRAILER);
    out.extend_from_slice(&MAGIC);
    out.extend_from_slice(&STATE_VERSION.to_le_bytes());
    out.extend_from_slice(&(payload.len() as u64).to_le_bytes());
    out.extend_from_slice(payload);
    let crc = CASTAGNOLI.checksum(&out);
    out.extend_from_slice(&crc.to_le_bytes());
    out
}

/// The payload of a container written by [`seal`], after checking its magic, length, checksum and version.
///
/// Errors: [`CoreError::State`] naming the problem (too short, not a dponline state, truncated, trailing
/// bytes, checksum mismatch, unsupported version).
pub fn open(bytes: &[u8]) -> Result<&[u8]> {
    let fail = |what: String| Err(CoreError::State(what));
    let (Some(magic), Some(version), Some(length)) = (
        bytes.get(0..4),
        bytes.get(4..8).and_then(|b| <[u8; 4]>::try_from(b).ok()),
        bytes.get(8..16).and_then(|b| <[u8; 8]>::try_from(b).ok()),
    ) else {
        return fail(format!(
            "{} bytes are too short for a dponline state (at least {} bytes)",
            bytes.len(),
            HEADER + TRAILER
        ));
    };
    if magic != MAGIC {
        return fail(
            "not a dponline state (no 'DPOS' header): the bytes are damaged, of another kind, or were written \
             by a dponline before state format 6"
                .into(),
        );
    }
    let declared = u64::from_le_bytes(length);
    let expected = usize::try_from(declared)
        .ok()
        .and_then(|n| n.checked_add(HEADER + TRAILER));
    match expected {
        Some(n) if n == bytes.len() => {}
        Some(n) if n > bytes.len() => {
            return fail(format!(
                "truncated: the header announces {n} bytes, got {} (or the header is damaged)",
                bytes.len()
            ));
        }
        Some(n) => {
            return fail(format!(
                "{} trailing bytes after the {n} bytes of the state (or the header is damaged)",
                bytes.len() - n
            ));
        }
        None => {
            return fail(format!(
                "truncated or damaged: the header announces a payload of {declared} bytes, got {} bytes in all",
                bytes.len()
            ));
        }
    }
    let body = bytes.len() - TRAILER;
    let stored = bytes
        .get(body..)
        .and_then(|b| <[u8; 4]>::try_from(b).ok())
        .map(u32::from_le_bytes);
    let computed = bytes.get(..body).map(|b| CASTAGNOLI.checksum(b));
    if stored.is_none() || stored != computed {
        return fail("damaged: checksum mismatch (CRC-32C)".into());
    }
    let version = u32::from_le_bytes(version);
    if version != STATE_VERSION {
        return fail(format!(
            "state format version {version} is not supported (this build reads version {STATE_VERSION})"
        ));
    }
    Ok(bytes.get(HEADER..body).unwrap_or(&[]))
}

/// Declare a type decoded through a checked mirror: the struct `$name`, whose attributes derive `Deserialize`
/// with `#[serde(try_from = "…")]` naming `$state`, holds the stored fields (serialized in order) and then
/// the `rebuilt` ones (`#[serde(skip)]`, recomputed on decoding); `$state` holds the stored fields alone, with
/// the same names, types and order, and is what `TryFrom<$state> for $name` checks and completes. The stored
/// fields are listed once, so the mirror cannot drift from the type. For example:
///
/// ```ignore
/// crate::state::checked_state! {
///     /// Pushes counted up to a horizon.
///     #[derive(Debug, Serialize, Deserialize)]
///     #[serde(try_from = "CounterState")]
///     pub struct Counter via CounterState {
///         horizon: u64,
///         t: u64,
///     }
///     rebuilt {
///         /// `horizon − t`.
///         left: u64,
///     }
/// }
/// ```
macro_rules! checked_state {
    (
        $(#[$meta:meta])*
        $vis:vis struct $name:ident via $state:ident {
            $($(#[$field_meta:meta])* $field_vis:vis $field:ident: $ty:ty,)*
        }
        $(rebuilt {
            $($(#[$rebuilt_meta:meta])* $rebuilt:ident: $rebuilt_ty:ty,)*
        })?
    ) => {
        $(#[$meta])*
        $vis struct $name {
            $($(#[$field_meta])* $field_vis $field: $ty,)*
            $($($(#[$rebuilt_meta])* #[serde(skip)] $rebuilt: $rebuilt_ty,)*)?
        }

        #[doc = concat!(
            "The serialized fields of [`", stringify!($name),
            "`] (the same names and order), checked and completed by its `TryFrom`."
        )]
        #[derive(serde::Deserialize)]
        struct $state {
            $($field: $ty,)*
        }
    };
}
pub(crate) use checked_state;

/// Serialize `value` into the container of the module docs.
///
/// Errors: [`CoreError::State`] if serialization fails (it does not for dponline's own types).
pub fn to_state_bytes<T: Serialize>(value: &T) -> Result<Vec<u8>> {
    postcard::to_stdvec(value)
        .map(|payload| seal(&payload))
        .map_err(|e| CoreError::State(e.to_string()))
}

/// Restore a value written by [`to_state_bytes`]: [`open`], then decode the payload, which must be consumed
/// exactly. Only the format is checked here; each type's `from_bytes` then checks its invariants.
///
/// Errors: [`CoreError::State`] as [`open`], or for a payload that does not decode to `T` completely.
pub fn from_state_bytes<T: DeserializeOwned>(bytes: &[u8]) -> Result<T> {
    let payload = open(bytes)?;
    let (value, rest) = postcard::take_from_bytes::<T>(payload)
        .map_err(|e| CoreError::State(format!("the payload does not decode: {e}")))?;
    if !rest.is_empty() {
        return Err(CoreError::State(format!(
            "the payload has {} undecoded bytes",
            rest.len()
        )));
    }
    Ok(value)
}

/// Check a restored state's invariant: `Ok(())` when `ok`, else [`CoreError::State`] saying that `what`'s
/// state is inconsistent and which `check` failed.
pub fn ensure(ok: bool, what: &str, check: &str) -> Result<()> {
    if ok {
        Ok(())
    } else {
        Err(CoreError::State(format!(
            "{what} state is inconsistent: {check}"
        )))
    }
}

/// Every vector of `vectors` of length `n` with every entry finite (for [`ensure`]: a restored learner's
/// working vectors).
pub fn all_finite_of_len(n: usize, vectors: &[&[f64]]) -> bool {
    vectors.iter().all(|v| v.len() == n && all_finite(v))
}

/// Every entry finite (for [`ensure`]).
pub fn all_finite(values: &[f64]) -> bool {
    values.iter().all(|v| v.is_finite())
}

/// Damaged copies of the serialized state `bytes`, for testing decoders: in turn a flipped bit, a truncation,
/// an extension by 1 to 8 equal bytes, and a byte overwritten by another value, at positions drawn from
/// `seed` (a seeded generator, so a failing case can be replayed). A truncation may leave `bytes` whole;
/// every other mutation changes them.
///
/// Returns `count` byte strings.
pub fn mutations(bytes: &[u8], count: usize, seed: u64) -> Vec<Vec<u8>> {
    let mut g = crate::rng::Generator::from_seed([seed, 23, 0, 0]);
    let mut below = |n: usize| ((g.open01() * n as f64) as usize).min(n.saturating_sub(1));
    (0..count)
        .map(|i| {
            let mut m = bytes.to_vec();
            match i % 4 {
                0 => {
                    let at = below(m.len() * 8);
                    m[at / 8] ^= 1 << (at % 8);
                }
                1 => m.truncate(below(m.len())),
                2 => m.extend(std::iter::repeat_n(below(256) as u8, 1 + below(8))),
                _ => {
                    let at = below(m.len());
                    m[at] = m[at].wrapping_add(1 + below(255) as u8);
                }
            }
            m
        })
        .collect()
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::rng::Generator;
    use proptest::prelude::*;

    /// Run `decode` on many mutations of `bytes`: each must be an error (never a panic, never a value).
    pub(crate) fn fuzz_decoder<T>(bytes: &[u8], decode: impl Fn(&[u8]) -> Result<T>) {
        for (i, m) in mutations(bytes, 400, bytes.len() as u64).iter().enumerate() {
            if m.as_slice() == bytes {
                continue;
            }
            assert!(
                matches!(decode(m), Err(CoreError::State(_))),
                "mutation {i} was accepted"
            );
        }
    }

    #[test]
    fn round_trip_and_layout() {
        let bytes = to_state_bytes(&(7u32, vec![1.5f64, -2.0])).unwrap();
        assert_eq!(&bytes[..4], b"DPOS");
        assert_eq!(
            u32::from_le_bytes(bytes[4..8].try_into().unwrap()),
            STATE_VERSION
        );
        let n = u64::from_le_bytes(bytes[8..16].try_into().unwrap()) as usize;
        assert_eq!(bytes.len(), 16 + n + 4);
        let back: (u32, Vec<f64>) = from_state_bytes(&bytes).unwrap();
        assert_eq!(back, (7, vec![1.5, -2.0]));
        // CRC-32C check value of the standard "123456789".
        assert_eq!(CASTAGNOLI.checksum(b"123456789"), 0xE306_9283);
    }

    fn message(r: Result<(u32, Vec<f64>)>) -> String {
        match r {
            Err(CoreError::State(m)) => m,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn each_defect_has_its_message() {
        let bytes = to_state_bytes(&(7u32, vec![1.5f64, -2.0])).unwrap();
        assert!(message(from_state_bytes(&bytes[..10])).contains("too short"));
        assert!(message(from_state_bytes(&bytes[..bytes.len() - 1])).contains("truncated"));
        let mut longer = bytes.clone();
        longer.push(0);
        assert!(message(from_state_bytes(&longer)).contains("1 trailing bytes"));
        let mut flipped = bytes.clone();
        flipped[20] ^= 4;
        assert!(message(from_state_bytes(&flipped)).contains("checksum mismatch"));
        let mut other = bytes.clone();
        other[0] = b'X';
        assert!(message(from_state_bytes(&other)).contains("not a dponline state"));
        // Another version with a valid checksum: refused by version.
        let mut old = bytes[..bytes.len() - 4].to_vec();
        old[4..8].copy_from_slice(&4u32.to_le_bytes());
        let crc = CASTAGNOLI.checksum(&old);
        old.extend_from_slice(&crc.to_le_bytes());
        assert!(message(from_state_bytes(&old)).contains("version 4 is not supported"));
        // A payload with bytes left over after the value: refused.
        let padded = seal(&[postcard::to_stdvec(&(7u32, vec![1.5f64])).unwrap(), vec![0]].concat());
        assert!(message(from_state_bytes(&padded)).contains("undecoded"));
        // The layout before format 6 (version word, then the value) is not a dponline state.
        let legacy = postcard::to_stdvec(&(4u32, (7u32, vec![1.5f64; 8]))).unwrap();
        assert!(message(from_state_bytes(&legacy)).contains("not a dponline state"));
    }

    #[test]
    fn every_mutation_of_a_state_is_refused() {
        let g = Generator::from_seed([1, 2, 3, 4]);
        let bytes = to_state_bytes(&g).unwrap();
        fuzz_decoder(&bytes, from_state_bytes::<Generator>);
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

        /// Arbitrary bytes: an error, never a panic (the decoder is total).
        #[test]
        fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..64)) {
            let _ = from_state_bytes::<(u32, Vec<f64>)>(&bytes);
            let _ = open(&bytes);
        }

        /// Arbitrary payloads in a valid container: a value or an error, never a panic.
        #[test]
        fn arbitrary_payloads_never_panic(payload in proptest::collection::vec(any::<u8>(), 0..64)) {
            let _ = from_state_bytes::<Generator>(&seal(&payload));
            let _ = from_state_bytes::<(u32, Vec<f64>, String)>(&seal(&payload));
        }
    }
}
