//! Base OT: Chou–Orlandi, "The Simplest Oblivious Transfer Protocol" (LATINCRYPT 2015,
//! eprint 2015/267), over the Ristretto255 group, many OTs in one round trip.
//!
//! # Protocol (generator `G`, `n` OTs, one `a` for all of them)
//!
//! ```text
//! base sender                                   base receiver (choices c_i)
//! a random, A = a·G          ── A (32 B) ──▶
//!                                               b_i random, B_i = b_i·G + c_i·A
//!                            ◀─ B_0..B_{n-1} (32 B each) ─
//! k_i^0 = KDF(i, a·B_i)                         k_i^{c_i} = KDF(i, b_i·A)
//! k_i^1 = KDF(i, a·B_i − a·A)
//! ```
//!
//! `a·B_i = b_i·A + c_i·a·A`, so the receiver's key is the sender's `k_i^{c_i}`; the other
//! key needs `b_i·A ± a·A`, a Diffie–Hellman value the receiver cannot compute (CDH), and
//! the KDF makes the keys look random. `B_i` is uniform whatever `c_i` is, so the sender
//! learns nothing about the choices.
//!
//! `KDF(i, P)` is the first 16 bytes of `SHA-256(TAG ‖ A ‖ B_i ‖ LE64(i) ‖ P)` with the
//! canonical 32-byte Ristretto encodings of the points: the transcript `(A, B_i)` and the
//! index bind each key to its OT, so no two OTs of a session or of two sessions share a
//! hash input.
//!
//! # Security note
//!
//! The UC proof of the original paper is flawed: Genç, Iovino and Rial ("The simplest
//! protocol for oblivious transfer" revisited, eprint 2017/370) and Hauck and Loss
//! ("Efficient and Universally Composable Protocols for Oblivious Transfer from the CDH
//! Assumption", eprint 2017/1011) show that a malicious receiver can delay committing to
//! its choice, so the protocol does not UC-realise OT against active adversaries. Against
//! semi-honest parties, which is all Transputation claims, the argument above (CDH plus a
//! random oracle for the KDF) stands. Ristretto gives a prime-order group with canonical
//! encodings, so there is no cofactor to clear and every 32-byte string either decodes to
//! one group element or is rejected.
//!
//! # Cost
//!
//! The sender does one variable-base multiplication per OT: `a·B_i − a·A` reuses `a·B_i`
//! and the once-computed `a·A`. The receiver's multiplications are all fixed-base: `b_i·G`
//! with the precomputed basepoint table, `b_i·A` with a table built once for `A`. Both
//! sides compress their points in one batch (one field inversion for all of them) with
//! `double_and_compress_batch`, which compresses `2·P`: each side therefore computes the
//! halves `P/2` of the points it must encode (with the scalar `1/2 mod ℓ`), which costs
//! nothing extra since the scalars are random or fixed anyway.

use curve25519_dalek::constants::RISTRETTO_BASEPOINT_TABLE;
use curve25519_dalek::ristretto::{CompressedRistretto, RistrettoBasepointTable, RistrettoPoint};
use curve25519_dalek::scalar::Scalar;
use curve25519_dalek::traits::{Identity, IsIdentity};
use rand::{CryptoRng, RngCore};
use sha2::{Digest, Sha256};
use subtle::{Choice, ConditionallySelectable};
use transputation_core::Block;

use crate::{Error, Message};

/// Bytes of an encoded point (a compressed Ristretto255 element).
pub const POINT_LEN: usize = 32;

/// The KDF's domain-separation tag: 32 bytes, so that `TAG ‖ A` fills one SHA-256 block,
/// whose state is computed once per session.
const TAG: &[u8; 32] = b"transputation/ot/co15-kdf/v1\0\0\0\0";

/// `1/2 mod ℓ`: see the module documentation on batch compression.
fn half() -> Scalar {
    Scalar::from(2u64).invert()
}

/// Decodes point `index` of message `msg`, rejecting non-canonical encodings and the
/// identity (a receiver sending the identity, or a sender whose `A` is the identity, would
/// make keys that do not depend on the other party's secret).
fn decode(bytes: &[u8], msg: Message, index: usize) -> Result<RistrettoPoint, Error> {
    let mut b = [0u8; POINT_LEN];
    b.copy_from_slice(bytes);
    let p = CompressedRistretto(b)
        .decompress()
        .ok_or(Error::InvalidPoint { msg, index })?;
    if p.is_identity() {
        return Err(Error::IdentityPoint { msg, index });
    }
    Ok(p)
}

/// The KDF state after `TAG ‖ A`.
fn kdf_prefix(a: &[u8; POINT_LEN]) -> Sha256 {
    let mut h = Sha256::new();
    h.update(TAG);
    h.update(a);
    h
}

/// `KDF(i, P)` from the state after `TAG ‖ A`; see the module documentation.
fn kdf(prefix: &Sha256, b_i: &[u8], i: usize, p: &CompressedRistretto) -> Block {
    let mut h = prefix.clone();
    h.update(b_i);
    h.update((i as u64).to_le_bytes());
    h.update(p.as_bytes());
    let d = h.finalize();
    Block::read(&d[..16])
}

/// The base-OT sender: holds `a` between its two steps. Its secret is not printed by
/// `Debug`.
pub struct BaseSender {
    /// `a/2`: the sender's multiplications compute halves of the points to compress.
    a_half: Scalar,
    /// `(a/2)·A`.
    aa_half: RistrettoPoint,
    a_bytes: [u8; POINT_LEN],
}

impl BaseSender {
    /// Draws `a` and returns the sender with its message `A` ([`POINT_LEN`] bytes).
    pub fn new<R: RngCore + CryptoRng>(rng: &mut R) -> (BaseSender, [u8; POINT_LEN]) {
        let a = Scalar::random(rng);
        let a_half = a * half();
        let big_a = RISTRETTO_BASEPOINT_TABLE * &a;
        let a_bytes = big_a.compress().to_bytes();
        // (a/2)·A = (a²/2)·G: a fixed-base multiplication instead of a variable-base one.
        let aa_half = RISTRETTO_BASEPOINT_TABLE * &(a * a_half);
        let sender = BaseSender {
            a_half,
            aa_half,
            a_bytes,
        };
        (sender, a_bytes)
    }

    /// The key pairs `[k_i^0, k_i^1]` from the receiver's message of `n` points.
    ///
    /// # Errors
    /// If `msg_b` is not `n` points of 32 bytes, or a point is not a canonical Ristretto255
    /// encoding or is the identity.
    pub fn keys(self, msg_b: &[u8], n: usize) -> Result<Vec<[Block; 2]>, Error> {
        check_len(Message::B, msg_b, n * POINT_LEN)?;
        // Halves of a·B_i and a·B_i − a·A, for one batch compression; the variable-base
        // multiplications, the bulk of the work, on all threads.
        let encoded: Vec<&[u8]> = msg_b.chunks_exact(POINT_LEN).collect();
        let products = par_map(&encoded, threads(), |i, b| {
            decode(b, Message::B, i).map(|p| p * self.a_half)
        });
        let mut halves = Vec::with_capacity(2 * n);
        for x in products {
            let x = x?;
            halves.push(x);
            halves.push(x - self.aa_half);
        }
        let points = RistrettoPoint::double_and_compress_batch(&halves);
        let prefix = kdf_prefix(&self.a_bytes);
        Ok(msg_b
            .chunks_exact(POINT_LEN)
            .zip(points.chunks_exact(2))
            .enumerate()
            .map(|(i, (b, p))| [kdf(&prefix, b, i, &p[0]), kdf(&prefix, b, i, &p[1])])
            .collect())
    }
}

impl std::fmt::Debug for BaseSender {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BaseSender").finish_non_exhaustive()
    }
}

/// The base-OT receiver's single step: from the sender's `A` and the choices, the message
/// `B_0 ‖ … ‖ B_{n-1}` and the chosen keys `k_i^{c_i}`.
///
/// # Errors
/// If `msg_a` is not 32 bytes, not a canonical Ristretto255 encoding, or the identity.
pub fn receive<R: RngCore + CryptoRng>(
    msg_a: &[u8],
    choices: &[bool],
    rng: &mut R,
) -> Result<(Vec<u8>, Vec<Block>), Error> {
    check_len(Message::A, msg_a, POINT_LEN)?;
    let big_a = decode(msg_a, Message::A, 0)?;
    let cs: Vec<Scalar> = choices.iter().map(|_| Scalar::random(rng)).collect();
    let threads = threads();
    // The table for A costs about as much as 80 multiplications with it: on two or more
    // threads, one builds it and then does the first TABLE_SHARE of the c_i·G while the
    // calling thread does the rest.
    const TABLE_SHARE: usize = 24;
    let (table_a, c_g) = if threads >= 2 {
        let (low, high) = cs.split_at(TABLE_SHARE.min(cs.len()));
        std::thread::scope(|scope| {
            let worker = scope.spawn(|| {
                let table = RistrettoBasepointTable::create(&big_a);
                let low: Vec<RistrettoPoint> =
                    low.iter().map(|c| RISTRETTO_BASEPOINT_TABLE * c).collect();
                (table, low)
            });
            let high: Vec<RistrettoPoint> =
                high.iter().map(|c| RISTRETTO_BASEPOINT_TABLE * c).collect();
            let (table, mut c_g) = join(worker);
            c_g.extend(high);
            (table, c_g)
        })
    } else {
        let c_g = cs.iter().map(|c| RISTRETTO_BASEPOINT_TABLE * c).collect();
        (RistrettoBasepointTable::create(&big_a), c_g)
    };
    let c_a = par_map(&cs, threads, |_, c| &table_a * c);
    let a_half = &table_a * &half();
    Ok(finish(msg_a, choices, &c_g, &c_a, a_half))
}

/// The base-OT receiver's work that does not need `A`: the scalars `c_i` and the points
/// `c_i·G`, computed before msg_a arrives (e.g. while the connection is set up), so that
/// only the multiplications by `A` remain on the critical path
/// ([`Precomputed::receive`]).
pub struct Precomputed {
    cs: Vec<Scalar>,
    c_g: Vec<RistrettoPoint>,
}

impl Precomputed {
    /// Draws `n` scalars and multiplies each by `G`. The draws are those [`receive`] makes,
    /// so both paths give the same messages and keys from the same randomness.
    pub fn new<R: RngCore + CryptoRng>(n: usize, rng: &mut R) -> Precomputed {
        let cs: Vec<Scalar> = (0..n).map(|_| Scalar::random(rng)).collect();
        let c_g = par_map(&cs, threads(), |_, c| RISTRETTO_BASEPOINT_TABLE * c);
        Precomputed { cs, c_g }
    }

    /// The number of OTs prepared.
    pub fn len(&self) -> usize {
        self.cs.len()
    }

    /// Whether no OT is prepared.
    pub fn is_empty(&self) -> bool {
        self.cs.is_empty()
    }

    /// [`receive`] with the precomputed half. Multiplications by `A` are variable-base
    /// here: once the `c_i·G` are done, a table for `A` no longer pays for itself on two
    /// threads or more.
    ///
    /// # Errors
    /// As [`receive`].
    ///
    /// # Panics
    /// If `choices.len()` is not [`Precomputed::len`].
    pub fn receive(self, msg_a: &[u8], choices: &[bool]) -> Result<(Vec<u8>, Vec<Block>), Error> {
        assert_eq!(
            choices.len(),
            self.cs.len(),
            "one choice per precomputed OT"
        );
        check_len(Message::A, msg_a, POINT_LEN)?;
        let big_a = decode(msg_a, Message::A, 0)?;
        let threads = threads();
        let c_a = if threads >= 2 {
            par_map(&self.cs, threads, |_, c| big_a * c)
        } else {
            let table_a = RistrettoBasepointTable::create(&big_a);
            self.cs.iter().map(|c| &table_a * c).collect()
        };
        Ok(finish(msg_a, choices, &self.c_g, &c_a, big_a * half()))
    }
}

impl std::fmt::Debug for Precomputed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Precomputed")
            .field("n", &self.cs.len())
            .finish_non_exhaustive()
    }
}

/// The receiver's message and keys from `c_i·G`, `c_i·A` and `A/2`.
fn finish(
    msg_a: &[u8],
    choices: &[bool],
    c_g: &[RistrettoPoint],
    c_a: &[RistrettoPoint],
    a_half: RistrettoPoint,
) -> (Vec<u8>, Vec<Block>) {
    let identity = RistrettoPoint::identity();
    // Halves of B_i = 2c_i·G + s_i·A and of b_i·A = 2c_i·A, with c_i random (so b_i = 2c_i
    // is uniform too), interleaved for one batch compression.
    let mut halves = Vec::with_capacity(2 * choices.len());
    for ((&choice, c_g), c_a) in choices.iter().zip(c_g).zip(c_a) {
        let offset =
            RistrettoPoint::conditional_select(&identity, &a_half, Choice::from(choice as u8));
        halves.push(c_g + offset);
        halves.push(*c_a);
    }
    let points = RistrettoPoint::double_and_compress_batch(&halves);
    let mut a_bytes = [0u8; POINT_LEN];
    a_bytes.copy_from_slice(msg_a);
    let prefix = kdf_prefix(&a_bytes);
    let mut msg_b = Vec::with_capacity(choices.len() * POINT_LEN);
    let mut keys = Vec::with_capacity(choices.len());
    for (i, p) in points.chunks_exact(2).enumerate() {
        let b = p[0].as_bytes();
        msg_b.extend_from_slice(b);
        keys.push(kdf(&prefix, b, i, &p[1]));
    }
    (msg_b, keys)
}

/// Threads for the group operations: the machine's parallelism, at most four (the work
/// is 128 multiplications; more threads cost more to start than they save).
fn threads() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get().min(4))
}

/// `f(i, &items[i])` for every item, in order, on up to `threads` threads (the calling
/// thread included).
fn par_map<T: Sync, U: Send>(
    items: &[T],
    threads: usize,
    f: impl Fn(usize, &T) -> U + Sync,
) -> Vec<U> {
    let chunk = items.len().div_ceil(threads.max(1)).max(1);
    if threads <= 1 || items.len() <= chunk {
        return items.iter().enumerate().map(|(i, x)| f(i, x)).collect();
    }
    let f = &f;
    std::thread::scope(|scope| {
        let workers: Vec<_> = items
            .chunks(chunk)
            .enumerate()
            .skip(1)
            .map(|(c, xs)| {
                scope.spawn(move || {
                    xs.iter()
                        .enumerate()
                        .map(|(k, x)| f(c * chunk + k, x))
                        .collect::<Vec<U>>()
                })
            })
            .collect();
        let mut out: Vec<U> = items[..chunk]
            .iter()
            .enumerate()
            .map(|(i, x)| f(i, x))
            .collect();
        for w in workers {
            out.extend(join(w));
        }
        out
    })
}

/// A scoped thread's result; a panic in it (a bug: the work cannot fail) is passed on.
fn join<T>(handle: std::thread::ScopedJoinHandle<'_, T>) -> T {
    handle
        .join()
        .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
}

/// `Ok` if `bytes` has exactly `expected` bytes.
pub(crate) fn check_len(msg: Message, bytes: &[u8], expected: usize) -> Result<(), Error> {
    if bytes.len() == expected {
        Ok(())
    } else {
        Err(Error::Length {
            msg,
            expected,
            got: bytes.len(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha20Rng;

    #[test]
    fn receiver_gets_the_chosen_key_and_not_the_other() {
        let mut rng = ChaCha20Rng::seed_from_u64(15);
        for n in [0, 1, 5, 128] {
            let choices: Vec<bool> = (0..n).map(|_| rng.gen()).collect();
            let (sender, msg_a) = BaseSender::new(&mut rng);
            let (msg_b, got) = receive(&msg_a, &choices, &mut rng).unwrap();
            assert_eq!(msg_b.len(), n * POINT_LEN);
            let keys = sender.keys(&msg_b, n).unwrap();
            assert_eq!(keys.len(), n);
            for i in 0..n {
                let c = choices[i] as usize;
                assert_eq!(got[i], keys[i][c], "OT {i}");
                assert_ne!(got[i], keys[i][1 - c], "OT {i}");
                assert_ne!(keys[i][0], keys[i][1]);
            }
            // Keys of different OTs are distinct.
            let mut all: Vec<u128> = keys.iter().flatten().map(|k| k.0).collect();
            all.sort_unstable();
            all.dedup();
            assert_eq!(all.len(), 2 * n);
        }
    }

    /// The batch compression of halves gives the plain encodings of the protocol's points.
    #[test]
    fn halves_trick_matches_the_plain_protocol() {
        let mut rng = ChaCha20Rng::seed_from_u64(267);
        let a = Scalar::random(&mut rng);
        let b = Scalar::random(&mut rng);
        let big_a = RISTRETTO_BASEPOINT_TABLE * &a;
        let big_b = RISTRETTO_BASEPOINT_TABLE * &b + big_a;
        let halves = [
            big_b * (a * half()),
            big_b * (a * half()) - big_a * (a * half()),
        ];
        let got = RistrettoPoint::double_and_compress_batch(&halves);
        assert_eq!(got[0], (big_b * a).compress());
        assert_eq!(got[1], (big_b * a - big_a * a).compress());
        assert_eq!(got[1], (big_a * b).compress());
    }

    /// The precomputed path gives the same message and keys from the same randomness,
    /// and checks msg_a the same way.
    #[test]
    fn precomputed_path_equals_direct_path() {
        let mut rng = ChaCha20Rng::seed_from_u64(7);
        let choices: Vec<bool> = (0..128).map(|_| rng.gen()).collect();
        let (_, msg_a) = BaseSender::new(&mut rng);
        let direct = receive(&msg_a, &choices, &mut ChaCha20Rng::seed_from_u64(8)).unwrap();
        let pre = Precomputed::new(128, &mut ChaCha20Rng::seed_from_u64(8));
        assert_eq!(pre.len(), 128);
        assert_eq!(pre.receive(&msg_a, &choices).unwrap(), direct);
        let pre = Precomputed::new(1, &mut rng);
        assert_eq!(
            pre.receive(&[0; 32], &[true]).unwrap_err(),
            Error::IdentityPoint {
                msg: Message::A,
                index: 0
            }
        );
    }

    #[test]
    fn bad_points_are_errors() {
        let mut rng = ChaCha20Rng::seed_from_u64(1);
        let identity = RistrettoPoint::identity().compress().to_bytes();
        assert_eq!(
            receive(&identity, &[true], &mut rng).unwrap_err(),
            Error::IdentityPoint {
                msg: Message::A,
                index: 0
            }
        );
        // 0xff.. is not canonical (a field element ≥ p).
        assert_eq!(
            receive(&[0xff; 32], &[true], &mut rng).unwrap_err(),
            Error::InvalidPoint {
                msg: Message::A,
                index: 0
            }
        );
        assert_eq!(
            receive(&[1; 31], &[true], &mut rng).unwrap_err(),
            Error::Length {
                msg: Message::A,
                expected: 32,
                got: 31
            }
        );
        let (sender, msg_a) = BaseSender::new(&mut rng);
        let (mut msg_b, _) = receive(&msg_a, &[false, true, false], &mut rng).unwrap();
        msg_b[64..].copy_from_slice(&identity);
        assert_eq!(
            BaseSender::new(&mut rng).0.keys(&msg_b, 3).unwrap_err(),
            Error::IdentityPoint {
                msg: Message::B,
                index: 2
            }
        );
        msg_b[32] ^= 0x80; // the top bit of a canonical encoding is clear
        assert_eq!(
            sender.keys(&msg_b, 3).unwrap_err(),
            Error::InvalidPoint {
                msg: Message::B,
                index: 1
            }
        );
    }
}
