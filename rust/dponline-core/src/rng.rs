//! Random generators: a CSPRNG for every unseeded object (the default) and one named, reproducible generator for
//! seeded experiments.
//!
//! * [`Generator::from_seed`] builds **xoshiro256++** (Blackman & Vigna 2018) from 256 bits of seed material.
//!   The algorithm is fixed by name, so the same seed gives bit-identical streams on every platform and
//!   every dponline version that keeps [`crate::state::STATE_VERSION`]. Anyone who knows the seed can reproduce the noise:
//!   a seeded run is private only while its seed is secret.
//! * [`Generator::secure`] builds **ChaCha20** (Bernstein 2008) keyed from the operating system's entropy
//!   source: what every object built without a seed uses. It is not reproducible by design. Floating-point
//!   samplers built on any generator still have the representation gaps described by Mironov (2012, "On
//!   significance of the least significant bits for differential privacy"); the secure generator removes
//!   predictability of the stream, not those gaps (the exact samplers of [`crate::noise::exact`] remove them).
//!
//! **A secure generator is never serialised, never copied and never shared with a forked child.** Its
//! serialised form is a marker only; deserialising it, or cloning it, keys a fresh ChaCha20 from the OS. A
//! `fork()` of the process bumps a process-wide fork epoch (a `pthread_atfork` child handler, registered when the
//! first secure generator is keyed); a secure generator whose epoch is stale re-keys from the OS before its next
//! word. So restoring one pickle twice, copying a secure object, or forking a process that holds one can never
//! replay noise: the copies continue with independent noise. Buffers of noise drawn ahead of use must compare
//! [`fork_epoch`] with the epoch they were drawn in (see [`Generator::epoch`]).
//!
//! Independent streams are split from one root seed with [`derive_seed`], a pseudorandom function keyed by
//! the whole 256-bit root; a stream is never reused for two purposes.

use core::convert::Infallible;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, Once};

use chacha20::ChaCha20Rng;
use rand::rngs::Xoshiro256PlusPlus;
use rand_core::{SeedableRng, TryRng};
use serde::{Deserialize, Serialize};

use crate::error::{CoreError, Result};

/// 256 bits of seed material, as four little-endian 64-bit words.
pub type Seed = [u64; 4];

/// Run `$body` with `$g` bound to the concrete generator inside `$rng` (a `&mut Generator`), so loops in
/// `$body` are monomorphic: one dispatch per call instead of one per draw.
#[macro_export]
macro_rules! with_generator {
    ($rng:expr, $g:ident => $body:expr) => {
        match $rng {
            $crate::rng::Generator::Reproducible($g) => $body,
            $crate::rng::Generator::Secure(boxed) => {
                let $g = boxed.as_mut();
                $body
            }
        }
    };
}

/// The generator every sampler in dponline draws from.
#[derive(Debug)]
pub enum Generator {
    /// xoshiro256++: fast, reproducible from a [`Seed`].
    Reproducible(Xoshiro256PlusPlus),
    /// ChaCha20 keyed from the operating system: cryptographically secure, not reproducible, re-keyed after
    /// a fork.
    Secure(Box<SecureRng>),
}

/// Number of `fork()`s this process descends from since the first secure generator was keyed (bumped in the
/// child by a `pthread_atfork` handler).
static FORK_EPOCH: AtomicU64 = AtomicU64::new(0);
static FORK_HANDLER: Once = Once::new();

#[cfg(unix)]
extern "C" fn bump_fork_epoch() {
    // Async-signal-safe: one atomic increment, run in the child right after fork().
    FORK_EPOCH.fetch_add(1, Ordering::Relaxed);
}

fn register_fork_handler() {
    FORK_HANDLER.call_once(|| {
        #[cfg(unix)]
        #[allow(unsafe_code)]
        // SAFETY: registers a handler that performs one atomic increment; it has no preconditions.
        unsafe {
            libc::pthread_atfork(None, None, Some(bump_fork_epoch));
        }
    });
}

/// SplitMix64's finaliser (Steele, Lea & Flood 2014; the constants of Stafford's "Mix13"): a bijection of
/// `u64` whose output bits each depend on every input bit. It derives reproducible per-round values from a seed
/// and a round number (a bootstrap stream's row, a Bernoulli arm's loss) without any generator state: not for
/// noise, which comes from the generators of this module.
#[inline]
pub fn mix64(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// The current fork epoch: it changes in a forked child (once a secure generator exists in the process).
///
/// Noise drawn ahead of use from a secure generator must be discarded when the epoch it was drawn in differs
/// from this value, or a forked child would release the parent's noise.
#[inline]
pub fn fork_epoch() -> u64 {
    FORK_EPOCH.load(Ordering::Relaxed)
}

fn os_key() -> Result<[u8; 32]> {
    let mut key = [0u8; 32];
    getrandom::fill(&mut key).map_err(|e| CoreError::Entropy(e.to_string()))?;
    Ok(key)
}

/// ChaCha20 keyed with 256 bits from the operating system, that re-keys itself from the OS before its first word
/// in a forked child.
#[derive(Debug)]
pub struct SecureRng {
    rng: ChaCha20Rng,
    epoch: u64,
}

impl SecureRng {
    /// A freshly OS-keyed generator.
    ///
    /// Errors: [`CoreError::Entropy`] if the OS entropy source fails.
    pub fn new() -> Result<Self> {
        register_fork_handler();
        Ok(SecureRng {
            rng: ChaCha20Rng::from_seed(os_key()?),
            epoch: fork_epoch(),
        })
    }

    /// Re-key from the OS if the process forked since this generator was keyed.
    #[inline]
    fn fresh(&mut self) -> &mut ChaCha20Rng {
        if self.epoch != fork_epoch() {
            self.rekey_after_fork();
        }
        &mut self.rng
    }

    #[cold]
    fn rekey_after_fork(&mut self) {
        match os_key() {
            Ok(key) => {
                self.rng = ChaCha20Rng::from_seed(key);
                self.epoch = fork_epoch();
            }
            Err(e) => {
                // Failing closed: continuing would release the parent's noise in this child.
                eprintln!(
                    "dponline: cannot re-key the secure generator after fork ({e}); aborting"
                );
                std::process::abort();
            }
        }
    }
}

impl TryRng for SecureRng {
    type Error = Infallible;

    #[inline]
    fn try_next_u32(&mut self) -> core::result::Result<u32, Infallible> {
        Ok(rand_core::Rng::next_u32(self.fresh()))
    }

    #[inline]
    fn try_next_u64(&mut self) -> core::result::Result<u64, Infallible> {
        Ok(rand_core::Rng::next_u64(self.fresh()))
    }

    fn try_fill_bytes(&mut self, dst: &mut [u8]) -> core::result::Result<(), Infallible> {
        self.fresh().try_fill_bytes(dst)
    }
}

/// The process-wide secure generator behind [`with_shared_secure`], with the id of the process that keyed it.
static SHARED_SECURE: Mutex<Option<(u32, Generator)>> = Mutex::new(None);

/// Run `f` on one process-wide OS-keyed ChaCha20 generator, keyed on first use: for one-off draws (a few noise
/// values per call from an unseeded entry point), where keying a fresh generator per call (a `getrandom` system
/// call and the ChaCha20 key setup) would cost more than the draws.
///
/// Security: one ChaCha20 stream continued across calls never repeats a word (the key is drawn once from the OS,
/// never serialised, and each call reads words no call read before), so the draws of separate calls are as
/// independent as those of separate generators. A forked child never continues the parent's stream: the
/// generator re-keys on a stale fork epoch (see the module docs), and this cache also compares the process id
/// with the one that keyed it and re-keys from the OS on a mismatch (a fork the `pthread_atfork` handler did not
/// see). When the cache is in use by another thread (or was poisoned by a panic), `f` runs on a freshly keyed
/// generator instead, so a call never waits and a child forked while another thread held the lock never
/// deadlocks.
///
/// Errors: [`CoreError::Entropy`] if the OS entropy source fails.
pub fn with_shared_secure<T>(f: impl FnOnce(&mut Generator) -> T) -> Result<T> {
    let pid = std::process::id();
    let Ok(mut slot) = SHARED_SECURE.try_lock() else {
        return Ok(f(&mut Generator::secure()?));
    };
    let g = match slot.as_mut() {
        Some((keyed_in, g)) if *keyed_in == pid => g,
        _ => &mut slot.insert((pid, Generator::secure()?)).1,
    };
    Ok(f(g))
}

impl PartialEq for Generator {
    /// Reproducible generators compare by state; two secure generators are never equal (their keys are
    /// secret and independent).
    fn eq(&self, other: &Self) -> bool {
        match (self, other) {
            (Generator::Reproducible(a), Generator::Reproducible(b)) => a == b,
            _ => false,
        }
    }
}

fn seed_bytes(seed: &Seed) -> [u8; 32] {
    let mut bytes = [0u8; 32];
    for (chunk, word) in bytes.chunks_exact_mut(8).zip(seed) {
        chunk.copy_from_slice(&word.to_le_bytes());
    }
    bytes
}

impl Generator {
    /// The reproducible generator for `seed`.
    pub fn from_seed(seed: Seed) -> Self {
        Generator::Reproducible(Xoshiro256PlusPlus::from_seed(seed_bytes(&seed)))
    }

    /// A ChaCha20 generator keyed with 256 fresh bits from the operating system.
    ///
    /// Errors: [`CoreError::Entropy`] if the OS entropy source fails.
    pub fn secure() -> Result<Self> {
        Ok(Generator::Secure(Box::new(SecureRng::new()?)))
    }

    /// Build a generator for stream `stream` of `root`: reproducible when `secure` is false, otherwise
    /// freshly keyed from the OS (the seed is then ignored).
    ///
    /// Errors: [`CoreError::Entropy`] if `secure` and the OS entropy source fails.
    pub fn for_stream(root: &Seed, stream: u64, secure: bool) -> Result<Self> {
        if secure {
            Self::secure()
        } else {
            Ok(Self::from_seed(derive_seed(root, stream)))
        }
    }

    /// A copy that continues the same stream (reproducible), or a freshly OS-keyed generator (secure): a secure
    /// stream is never duplicated.
    ///
    /// Errors: [`CoreError::Entropy`] if a secure generator cannot be keyed.
    pub fn try_clone(&self) -> Result<Self> {
        match self {
            Generator::Reproducible(g) => Ok(Generator::Reproducible(g.clone())),
            Generator::Secure(_) => Self::secure(),
        }
    }

    /// Whether this is the cryptographically secure generator.
    pub fn is_secure(&self) -> bool {
        matches!(self, Generator::Secure(_))
    }

    /// The fork epoch noise drawn now belongs to: [`fork_epoch`] for a secure generator, and 0 for a reproducible
    /// one (a seeded generator is copied by a fork by design: its noise is reproducible anyway).
    ///
    /// A buffer of noise drawn ahead of use records this value and is redrawn when it differs from
    /// [`Generator::epoch`] at the time of use.
    #[inline]
    pub fn epoch(&self) -> u64 {
        match self {
            Generator::Reproducible(_) => 0,
            Generator::Secure(_) => fork_epoch(),
        }
    }

    /// A uniform draw from the open interval (0, 1) with 53 random bits: never exactly 0 or 1.
    #[inline]
    pub fn open01(&mut self) -> f64 {
        let bits = self.next_u64_inner() >> 11;
        (bits as f64 + 0.5) * (1.0 / (1u64 << 53) as f64)
    }

    #[inline]
    fn next_u64_inner(&mut self) -> u64 {
        match self {
            Generator::Reproducible(g) => rand_core::Rng::next_u64(g),
            Generator::Secure(g) => rand_core::Rng::next_u64(g.as_mut()),
        }
    }
}

impl TryRng for Generator {
    type Error = Infallible;

    #[inline]
    fn try_next_u32(&mut self) -> core::result::Result<u32, Infallible> {
        Ok((self.next_u64_inner() >> 32) as u32)
    }

    #[inline]
    fn try_next_u64(&mut self) -> core::result::Result<u64, Infallible> {
        Ok(self.next_u64_inner())
    }

    fn try_fill_bytes(&mut self, dst: &mut [u8]) -> core::result::Result<(), Infallible> {
        match self {
            Generator::Reproducible(g) => g.try_fill_bytes(dst),
            Generator::Secure(g) => g.try_fill_bytes(dst),
        }
    }
}

/// Seed material for the independent stream `stream` of `root`.
///
/// ChaCha20 keyed with the 256-bit `root`, on its 64-bit stream id `stream`, outputs the four words: a
/// pseudorandom function of the whole `(root, stream)` pair, so distinct pairs give unrelated 256-bit
/// xoshiro256++ states. Two streams of length `2^64` drawn this way overlap with probability about
/// `2^65 / 2^256 = 2^-191`.
pub fn derive_seed(root: &Seed, stream: u64) -> Seed {
    let mut prf = ChaCha20Rng::from_seed(seed_bytes(root));
    prf.set_stream(stream);
    let mut out = [0u64; 4];
    for o in &mut out {
        *o = rand_core::Rng::next_u64(&mut prf);
    }
    out
}

/// The seed material NumPy derives from an integer seed: `numpy.random.SeedSequence(entropy).generate_state(4,
/// dtype=numpy.uint64)` for the entropy's little-endian 32-bit words (`[0]` for the integer 0), pool size 4 and
/// no spawn key — the algorithm of NumPy's `bit_generator.pyx` (O'Neill's seed_seq hash mixing), so an integer
/// seed keys the same stream as the `SeedSequence` of that integer, without calling into Python.
pub fn seed_sequence_words(entropy: &[u32]) -> Seed {
    const INIT_A: u32 = 0x43b0_d7e5;
    const MULT_A: u32 = 0x931e_8875;
    const INIT_B: u32 = 0x8b51_f9dd;
    const MULT_B: u32 = 0x58f3_8ded;
    const MIX_MULT_L: u32 = 0xca01_f9dd;
    const MIX_MULT_R: u32 = 0x4973_f715;
    const XSHIFT: u32 = 16;
    let mut hash_const = INIT_A;
    let mut hashmix = |value: u32| {
        let mut v = value ^ hash_const;
        hash_const = hash_const.wrapping_mul(MULT_A);
        v = v.wrapping_mul(hash_const);
        v ^ (v >> XSHIFT)
    };
    let mix = |x: u32, y: u32| {
        let r = MIX_MULT_L
            .wrapping_mul(x)
            .wrapping_sub(MIX_MULT_R.wrapping_mul(y));
        r ^ (r >> XSHIFT)
    };
    let mut pool = [0u32; 4];
    for (i, slot) in pool.iter_mut().enumerate() {
        *slot = hashmix(entropy.get(i).copied().unwrap_or(0));
    }
    for src in 0..pool.len() {
        for dst in 0..pool.len() {
            if src != dst {
                let h = hashmix(pool[src]);
                pool[dst] = mix(pool[dst], h);
            }
        }
    }
    for &word in entropy.iter().skip(pool.len()) {
        for slot in &mut pool {
            let h = hashmix(word);
            *slot = mix(*slot, h);
        }
    }
    let mut hash_const = INIT_B;
    let mut state = [0u32; 8];
    for (i, out) in state.iter_mut().enumerate() {
        let mut v = pool[i % pool.len()] ^ hash_const;
        hash_const = hash_const.wrapping_mul(MULT_B);
        v = v.wrapping_mul(hash_const);
        *out = v ^ (v >> XSHIFT);
    }
    std::array::from_fn(|k| u64::from(state[2 * k]) | (u64::from(state[2 * k + 1]) << 32))
}

/// Serializable form of a [`Generator`] (used for pickling). A secure generator serialises as a marker only.
#[derive(Debug, Clone, Serialize, Deserialize)]
enum GeneratorState {
    /// xoshiro256++ state words.
    Reproducible(Xoshiro256PlusPlus),
    /// Marker: a ChaCha20 generator was here; restoring keys a fresh one from the OS.
    Secure,
}

impl Serialize for Generator {
    fn serialize<S: serde::Serializer>(&self, s: S) -> core::result::Result<S::Ok, S::Error> {
        match self {
            Generator::Reproducible(x) => GeneratorState::Reproducible(x.clone()).serialize(s),
            Generator::Secure(_) => GeneratorState::Secure.serialize(s),
        }
    }
}

impl<'de> Deserialize<'de> for Generator {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> core::result::Result<Self, D::Error> {
        match GeneratorState::deserialize(d)? {
            GeneratorState::Reproducible(x) => Ok(Generator::Reproducible(x)),
            GeneratorState::Secure => Generator::secure().map_err(serde::de::Error::custom),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::state::{from_state_bytes, to_state_bytes};

    #[test]
    fn seed_sequence_words_match_numpy() {
        // numpy.random.SeedSequence(s).generate_state(4, dtype=numpy.uint64) for s = 0, 42, 2**32 + 5, 2**70 + 3.
        let cases: [(&[u32], Seed); 4] = [
            (
                &[0],
                [
                    0xdb2cd7e7b0f478be,
                    0xabf4641a2c71ba49,
                    0x20c6ed6d9d7b8d41,
                    0x2c4099de223c39d4,
                ],
            ),
            (
                &[42],
                [
                    0x9f1e2e6dcd540ab7,
                    0xd57873dc79fb94b6,
                    0x7d282a1b64d420b7,
                    0x336579714692d5ff,
                ],
            ),
            (
                &[5, 1],
                [
                    0xf9c15bd6e249d9ac,
                    0xb2021b4036320ed7,
                    0x9388b47fe6dcf739,
                    0x5eeba8d9ad6439e1,
                ],
            ),
            (
                &[3, 0, 64],
                [
                    0x449916e45e0b88e4,
                    0xa7cf3269996cf1c2,
                    0x9f822a5f2c111b5e,
                    0x70f529c350d24d0c,
                ],
            ),
        ];
        for (entropy, words) in cases {
            assert_eq!(seed_sequence_words(entropy), words);
        }
    }

    #[test]
    fn same_seed_same_stream_and_streams_differ() {
        let mut a = Generator::from_seed([1, 2, 3, 4]);
        let mut b = Generator::from_seed([1, 2, 3, 4]);
        let xs: Vec<u64> = (0..8).map(|_| a.next_u64_inner()).collect();
        let ys: Vec<u64> = (0..8).map(|_| b.next_u64_inner()).collect();
        assert_eq!(xs, ys);
        assert_ne!(derive_seed(&[1, 2, 3, 4], 0), derive_seed(&[1, 2, 3, 4], 1));
        assert_ne!(derive_seed(&[1, 2, 3, 4], 0), derive_seed(&[1, 2, 3, 5], 0));
    }

    #[test]
    fn open01_is_strictly_inside() {
        let mut g = Generator::from_seed([0, 0, 0, 0]);
        for _ in 0..10_000 {
            let u = g.open01();
            assert!(u > 0.0 && u < 1.0);
        }
    }

    #[test]
    fn state_round_trip_continues_the_stream() {
        let mut g = Generator::from_seed([9, 8, 7, 6]);
        let _ = g.next_u64_inner();
        let bytes = to_state_bytes(&g).unwrap();
        let mut h: Generator = from_state_bytes(&bytes).unwrap();
        assert_eq!(g.next_u64_inner(), h.next_u64_inner());
        let mut c = g.try_clone().unwrap();
        assert_eq!(g.next_u64_inner(), c.next_u64_inner());
    }

    #[test]
    fn secure_state_is_never_serialised_nor_replayed() {
        let g = Generator::secure().unwrap();
        let bytes = to_state_bytes(&g).unwrap();
        // The variant tag only (one payload byte in the container): no key material.
        assert_eq!(crate::state::open(&bytes).unwrap().len(), 1, "{bytes:?}");
        let mut a: Generator = from_state_bytes(&bytes).unwrap();
        let mut b: Generator = from_state_bytes(&bytes).unwrap();
        let mut c = a.try_clone().unwrap();
        let xs: Vec<u64> = (0..4).map(|_| a.next_u64_inner()).collect();
        let ys: Vec<u64> = (0..4).map(|_| b.next_u64_inner()).collect();
        let zs: Vec<u64> = (0..4).map(|_| c.next_u64_inner()).collect();
        assert!(a.is_secure() && b.is_secure() && c.is_secure());
        assert_ne!(xs, ys);
        assert_ne!(xs, zs);
    }

    #[test]
    fn a_secure_generator_rekeys_after_a_fork() {
        // A forked child sees a bumped epoch: the generator must not continue the parent's ChaCha20 stream.
        let mut parent = SecureRng::new().unwrap();
        let mut copy = ChaCha20Rng::deserialize_state(&parent.rng.serialize_state());
        #[cfg(unix)]
        bump_fork_epoch();
        #[cfg(not(unix))]
        FORK_EPOCH.fetch_add(1, Ordering::Relaxed);
        let child: Vec<u64> = (0..4).map(|_| parent.try_next_u64().unwrap()).collect();
        let replay: Vec<u64> = (0..4)
            .map(|_| rand_core::Rng::next_u64(&mut copy))
            .collect();
        assert_ne!(child, replay);
        assert_eq!(parent.epoch, fork_epoch());
        let g = Generator::secure().unwrap();
        assert_eq!(g.epoch(), fork_epoch());
        assert_eq!(Generator::from_seed([1, 2, 3, 4]).epoch(), 0);
    }

    #[test]
    fn the_shared_secure_generator_continues_one_stream_and_rekeys_in_another_process() {
        let first: Vec<u64> =
            with_shared_secure(|g| (0..4).map(|_| g.next_u64_inner()).collect()).unwrap();
        let second: Vec<u64> =
            with_shared_secure(|g| (0..4).map(|_| g.next_u64_inner()).collect()).unwrap();
        assert!(with_shared_secure(|g| g.is_secure()).unwrap());
        assert_ne!(first, second);
        // A cache keyed in another process (a fork the atfork handler missed) is replaced, not continued.
        let stale = std::process::id().wrapping_add(1);
        let mut copy = match SHARED_SECURE.lock().unwrap().as_mut() {
            Some((pid, Generator::Secure(g))) => {
                *pid = stale;
                ChaCha20Rng::deserialize_state(&g.rng.serialize_state())
            }
            other => panic!("the cache holds {other:?}"),
        };
        let after: Vec<u64> =
            with_shared_secure(|g| (0..4).map(|_| g.next_u64_inner()).collect()).unwrap();
        let replay: Vec<u64> = (0..4)
            .map(|_| rand_core::Rng::next_u64(&mut copy))
            .collect();
        assert_ne!(after, replay);
        assert_eq!(
            SHARED_SECURE.lock().unwrap().as_ref().map(|(pid, _)| *pid),
            Some(std::process::id())
        );
    }

    #[test]
    fn derived_seeds_use_the_whole_root() {
        // Roots differing only in the last word, and streams differing by one, give unrelated words.
        let a = derive_seed(&[1, 2, 3, 4], 0);
        for other in [derive_seed(&[1, 2, 3, 5], 0), derive_seed(&[1, 2, 3, 4], 1)] {
            assert!(a.iter().zip(&other).all(|(x, y)| x != y));
        }
    }
}
