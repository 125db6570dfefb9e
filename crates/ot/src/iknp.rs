//! IKNP OT extension: the receiver's and sender's states and their steps (the crate
//! documentation gives the flow, the wire formats and the security argument).

use rand::{CryptoRng, Rng, RngCore};
use transputation_garble::aes::FixedKeyAes;
use transputation_garble::prg::Prg;
use transputation_garble::Block;

use crate::base::{self, check_len, BaseSender, Precomputed};
use crate::transpose::transpose128;
use crate::{msg_u_len, msg_y_len, Error, Message, BASE_OTS};

/// The public fixed AES key of the OT hash `π`: the 16 ASCII bytes `transputation/ot`,
/// distinct from the garbling schemes' key.
pub const HASH_KEY: Block = Block::from_bytes(*b"transputation/ot");

/// Bytes of one block of msg_u: 128 columns × 128 bits.
const U_BLOCK: usize = BASE_OTS * 16;

/// Hashes per call to the TCCR kernel (two per OT on the sender's side).
const HASH_BATCH: usize = 256;

/// The evaluator's first state: the base-OT sender, waiting for msg_b.
pub struct Receiver {
    base: BaseSender,
}

impl Receiver {
    /// Starts the OT: returns the state and msg_a ([`crate::MSG_A_LEN`] bytes).
    pub fn start<R: RngCore + CryptoRng>(rng: &mut R) -> (Receiver, Vec<u8>) {
        let (base, msg_a) = BaseSender::new(rng);
        (Receiver { base }, msg_a.to_vec())
    }

    /// Finishes the base OTs with the garbler's msg_b and commits to `choices` (one per
    /// OT, `m = choices.len()`, any `m ≥ 0`): returns the state waiting for msg_y and
    /// msg_u ([`crate::msg_u_len`]`(m)` bytes).
    ///
    /// # Errors
    /// If msg_b is not [`crate::MSG_B_LEN`] bytes, or one of its points is not a canonical
    /// Ristretto255 encoding or is the identity.
    pub fn choose(self, msg_b: &[u8], choices: &[bool]) -> Result<(Chosen, Vec<u8>), Error> {
        let keys = self.base.keys(msg_b, BASE_OTS)?;
        let m = choices.len();
        let blocks = m.div_ceil(BASE_OTS);
        // r: the choice bits, 128 per word, padding bits 0.
        let r: Vec<u128> = choices
            .chunks(BASE_OTS)
            .map(|c| {
                c.iter()
                    .enumerate()
                    .fold(0, |w, (k, &bit)| w | (u128::from(bit) << k))
            })
            .collect();
        let mut g0: Vec<Prg> = keys.iter().map(|k| Prg::new(k[0])).collect();
        let mut g1: Vec<Prg> = keys.iter().map(|k| Prg::new(k[1])).collect();
        let mut t = Vec::with_capacity(blocks * BASE_OTS);
        let mut msg_u = vec![0u8; msg_u_len(m)];
        let mut block = [0u128; BASE_OTS];
        for (b, (&r_b, u)) in r.iter().zip(msg_u.chunks_exact_mut(U_BLOCK)).enumerate() {
            for (((t_i, u_i), p0), p1) in block
                .iter_mut()
                .zip(u.chunks_exact_mut(16))
                .zip(&mut g0)
                .zip(&mut g1)
            {
                *t_i = p0.block().0;
                u_i.copy_from_slice(&(*t_i ^ p1.block().0 ^ r_b).to_le_bytes());
            }
            transpose128(&mut block);
            t.extend_from_slice(&block[..(m - b * BASE_OTS).min(BASE_OTS)]);
        }
        Ok((Chosen { r, t }, msg_u))
    }
}

impl std::fmt::Debug for Receiver {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Receiver").finish_non_exhaustive()
    }
}

/// The evaluator's second state: choices made, waiting for msg_y.
pub struct Chosen {
    /// The choice bits, 128 per word.
    r: Vec<u128>,
    /// The rows `t_j`, one per OT.
    t: Vec<u128>,
}

impl Chosen {
    /// The number of OTs `m`.
    pub fn len(&self) -> usize {
        self.t.len()
    }

    /// Whether there are no OTs.
    pub fn is_empty(&self) -> bool {
        self.t.is_empty()
    }

    /// Unmasks the chosen label of each pair from the garbler's msg_y: one label per
    /// choice, in order.
    ///
    /// # Errors
    /// If msg_y is not [`crate::msg_y_len`]`(m)` bytes.
    pub fn receive(self, msg_y: &[u8]) -> Result<Vec<Block>, Error> {
        let m = self.t.len();
        check_len(Message::Y, msg_y, msg_y_len(m))?;
        let aes = FixedKeyAes::new(HASH_KEY);
        let mut labels = Vec::with_capacity(m);
        let mut xs = [Block::ZERO; HASH_BATCH];
        let mut tweaks = [0u64; HASH_BATCH];
        let mut h = [Block::ZERO; HASH_BATCH];
        for (c, (ts, ys)) in self
            .t
            .chunks(HASH_BATCH)
            .zip(msg_y.chunks(32 * HASH_BATCH))
            .enumerate()
        {
            let n = ts.len();
            for (k, &t) in ts.iter().enumerate() {
                xs[k] = Block(t);
                tweaks[k] = (c * HASH_BATCH + k) as u64;
            }
            aes.tccr(&xs[..n], &tweaks[..n], &mut h[..n]);
            for (k, y) in ys.chunks_exact(32).enumerate() {
                let j = c * HASH_BATCH + k;
                let bit = (self.r[j / BASE_OTS] >> (j % BASE_OTS)) & 1 == 1;
                let (y0, y1) = (Block::read(&y[..16]), Block::read(&y[16..]));
                // y_j^{r_j}, selected without a branch on the secret choice.
                labels.push(y0 ^ (y0 ^ y1).select(bit) ^ h[k]);
            }
        }
        Ok(labels)
    }
}

impl std::fmt::Debug for Chosen {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Chosen")
            .field("m", &self.t.len())
            .finish_non_exhaustive()
    }
}

/// The garbler's state: the base OTs done, waiting for msg_u.
pub struct Sender {
    /// The secret base-OT choices `s`, bit `i` for column `i`.
    s: u128,
    /// The seeds `k_i^{s_i}`.
    seeds: Vec<Block>,
}

impl Sender {
    /// Answers the evaluator's msg_a: draws the secret `s`, runs the base-OT receiver and
    /// returns the state and msg_b ([`crate::MSG_B_LEN`] bytes).
    ///
    /// # Errors
    /// If msg_a is not [`crate::MSG_A_LEN`] bytes, not a canonical Ristretto255 encoding,
    /// or the identity.
    pub fn respond<R: RngCore + CryptoRng>(
        msg_a: &[u8],
        rng: &mut R,
    ) -> Result<(Sender, Vec<u8>), Error> {
        let s: u128 = rng.gen();
        let (msg_b, seeds) = base::receive(msg_a, &choice_bits(s), rng)?;
        Ok((Sender { s, seeds }, msg_b))
    }

    /// Starts the garbler's side before msg_a arrives: draws `s` and does the half of the
    /// base-OT receiver that needs no message (see [`crate::base::Precomputed`]), so that
    /// [`SenderSetup::respond`] costs about half of [`Sender::respond`]. Same randomness,
    /// same messages: `Sender::setup(rng).respond(msg_a)` equals
    /// `Sender::respond(msg_a, rng)`.
    pub fn setup<R: RngCore + CryptoRng>(rng: &mut R) -> SenderSetup {
        let s: u128 = rng.gen();
        SenderSetup {
            s,
            pre: Precomputed::new(BASE_OTS, rng),
        }
    }

    /// Sends `pairs` (one pair `[x_j^0, x_j^1]` per OT, `m = pairs.len()`): returns msg_y
    /// ([`crate::msg_y_len`]`(m)` bytes) from the evaluator's msg_u.
    ///
    /// # Errors
    /// If msg_u is not [`crate::msg_u_len`]`(m)` bytes (the evaluator chose a number of OTs
    /// in another multiple of 128, or the message is malformed).
    pub fn send(self, msg_u: &[u8], pairs: &[[Block; 2]]) -> Result<Vec<u8>, Error> {
        let m = pairs.len();
        check_len(Message::U, msg_u, msg_u_len(m))?;
        let aes = FixedKeyAes::new(HASH_KEY);
        let mut prgs: Vec<Prg> = self.seeds.iter().map(|&k| Prg::new(k)).collect();
        let mut msg_y = vec![0u8; msg_y_len(m)];
        let mut q = [0u128; BASE_OTS];
        let mut xs = [Block::ZERO; HASH_BATCH];
        let mut tweaks = [0u64; HASH_BATCH];
        let mut h = [Block::ZERO; HASH_BATCH];
        for (b, ((u, pairs), y)) in msg_u
            .chunks_exact(U_BLOCK)
            .zip(pairs.chunks(BASE_OTS))
            .zip(msg_y.chunks_mut(32 * BASE_OTS))
            .enumerate()
        {
            // q_i = G(k_i^{s_i}) ⊕ s_i·u_i, masked rather than branched on the secret s_i.
            for (i, (q, u)) in q.iter_mut().zip(u.chunks_exact(16)).enumerate() {
                let mask = ((self.s >> i) & 1).wrapping_neg();
                *q = prgs[i].block().0 ^ (Block::read(u).0 & mask);
            }
            transpose128(&mut q);
            // Two hashes per OT, both under the tweak j: H(q_j, j) and H(q_j ⊕ s, j).
            for (k, &q) in q[..pairs.len()].iter().enumerate() {
                xs[2 * k] = Block(q);
                xs[2 * k + 1] = Block(q ^ self.s);
                tweaks[2 * k] = (b * BASE_OTS + k) as u64;
                tweaks[2 * k + 1] = (b * BASE_OTS + k) as u64;
            }
            let n = 2 * pairs.len();
            aes.tccr(&xs[..n], &tweaks[..n], &mut h[..n]);
            for ((pair, h), y) in pairs
                .iter()
                .zip(h.chunks_exact(2))
                .zip(y.chunks_exact_mut(32))
            {
                y[..16].copy_from_slice(&(pair[0] ^ h[0]).to_bytes());
                y[16..].copy_from_slice(&(pair[1] ^ h[1]).to_bytes());
            }
        }
        Ok(msg_y)
    }
}

/// The garbler's state before msg_a, made by [`Sender::setup`].
pub struct SenderSetup {
    s: u128,
    pre: Precomputed,
}

impl SenderSetup {
    /// As [`Sender::respond`], with the precomputed half.
    ///
    /// # Errors
    /// As [`Sender::respond`].
    pub fn respond(self, msg_a: &[u8]) -> Result<(Sender, Vec<u8>), Error> {
        let (msg_b, seeds) = self.pre.receive(msg_a, &choice_bits(self.s))?;
        Ok((Sender { s: self.s, seeds }, msg_b))
    }
}

impl std::fmt::Debug for SenderSetup {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SenderSetup").finish_non_exhaustive()
    }
}

/// The bits of `s`, bit `i` first.
fn choice_bits(s: u128) -> Vec<bool> {
    (0..BASE_OTS).map(|i| (s >> i) & 1 == 1).collect()
}

impl std::fmt::Debug for Sender {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Sender").finish_non_exhaustive()
    }
}
