//! The garbler's side of IKNP (the extension sender): the base-OT receiver, then the
//! extension that answers each chunk's msg_u with that chunk's msg_y.

use rand::{CryptoRng, Rng, RngCore};
use transputation_core::aes::FixedKeyAes;
use transputation_core::Block;

use super::shared::{next_index, read_u128, Columns, HASH_KEY, SUB_BLOCKS, U_BLOCK};
use crate::base::{self, check_len, Precomputed};
use crate::transpose::transpose128;
use crate::{msg_d_len, msg_u_len, msg_y_len, Error, Message, BASE_OTS};

/// The garbler's extension state: the base OTs done, answering each chunk's msg_u
/// ([`Sender::extend`]).
pub struct Sender {
    /// The secret base-OT choices `s`, bit `i` for column `i`.
    s: u128,
    /// `G(k_i^{s_i})`.
    cols: Columns,
    hash: FixedKeyAes,
    /// OTs sent so far: the index of the next chunk's first OT.
    ots: u64,
    /// One sub-batch of `q`, block by block.
    q: Vec<u128>,
    /// One sub-batch of the columns `G(k_i^{s_i})`, column by column (`SUB_BLOCKS` blocks
    /// each), as the PRG makes them.
    g: Vec<Block>,
    /// Whether `s` is the caller's offset ([`Sender::setup_correlated`]), so that
    /// correlated chunks ([`Sender::extend_correlated_into`]) are allowed.
    correlated: bool,
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
        Ok((Sender::new(s, seeds, false, HASH_KEY), msg_b))
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
            correlated: false,
            hash_key: HASH_KEY,
        }
    }

    /// As [`Sender::setup`] for correlated OTs ([`Sender::extend_correlated_into`]) with
    /// the offset `delta`: the secret `s` is `delta` rather than random. `delta` must be
    /// uniform and secret, as the garbler's free-XOR offset is (see "Correlated OT" in the
    /// crate documentation).
    pub fn setup_correlated<R: RngCore + CryptoRng>(delta: Block, rng: &mut R) -> SenderSetup {
        SenderSetup {
            s: delta.0,
            pre: Precomputed::new(BASE_OTS, rng),
            correlated: true,
            hash_key: HASH_KEY,
        }
    }

    fn new(s: u128, seeds: Vec<Block>, correlated: bool, hash_key: Block) -> Sender {
        Sender {
            s,
            cols: Columns::new(seeds.into_iter()),
            hash: FixedKeyAes::new(hash_key),
            ots: 0,
            q: vec![0; SUB_BLOCKS * BASE_OTS],
            g: vec![Block::ZERO; SUB_BLOCKS * BASE_OTS],
            correlated,
        }
    }

    /// Fills `self.q` with the rows `q_j = t_j ⊕ r_j·s` of sub-batch `sb` of a chunk, whose
    /// part of msg_u is `u` (whole blocks of 128 OTs): block `b`'s rows are
    /// `q[128·b .. 128·b + 128]`.
    fn rows(&mut self, sb: usize, u: &[u8]) {
        let n = u.len() / U_BLOCK;
        self.cols.fill_sub_batch(sb, n, &mut self.g);
        // q_i = G(k_i^{s_i}) ⊕ s_i·u_i, masked rather than branched on the secret s_i;
        // column i of block k is word 128·k + i, at bytes 16·(128·k + i) of msg_u. Block by
        // block: its 128 words gathered from the columns (strided loads, each cache line
        // used by the next blocks too, where stores scattered 2 KiB apart missed), then
        // transposed while they are hot.
        let masks: [u128; BASE_OTS] = core::array::from_fn(|i| ((self.s >> i) & 1).wrapping_neg());
        for (k, (q, u)) in self.q[..n * BASE_OTS]
            .as_chunks_mut::<BASE_OTS>()
            .0
            .iter_mut()
            .zip(u.chunks_exact(U_BLOCK))
            .enumerate()
        {
            for (i, ((w, u), mask)) in q.iter_mut().zip(u.chunks_exact(16)).zip(&masks).enumerate()
            {
                *w = self.g[i * SUB_BLOCKS + k].0 ^ (read_u128(u) & mask);
            }
            transpose128(q);
        }
    }

    /// Sends the next chunk of `pairs` (one pair `[x_j^0, x_j^1]` per OT,
    /// `m = pairs.len()`, any `m ≥ 0`): returns its msg_y ([`crate::msg_y_len`]`(m)`
    /// bytes) from the evaluator's msg_u of the same chunk. The chunk's OTs take the next
    /// `m` session-wide indices, as on the evaluator's side.
    ///
    /// # Errors
    /// If msg_u is not [`crate::msg_u_len`]`(m)` bytes (the evaluator chose a number of OTs
    /// in another multiple of 128, or the message is malformed). The state is unchanged
    /// then.
    pub fn extend(&mut self, msg_u: &[u8], pairs: &[[Block; 2]]) -> Result<Vec<u8>, Error> {
        let mut msg_y = Vec::new();
        self.extend_into(msg_u, pairs, &mut msg_y)?;
        Ok(msg_y)
    }

    /// As [`Sender::extend`], writing msg_y into `msg_y` (cleared first), so that a caller
    /// can reuse one buffer for every chunk.
    ///
    /// # Errors
    /// As [`Sender::extend`]; `msg_y` is unchanged then.
    ///
    /// # Panics
    /// After 2^64 OTs in one session.
    pub fn extend_into(
        &mut self,
        msg_u: &[u8],
        pairs: &[[Block; 2]],
        msg_y: &mut Vec<u8>,
    ) -> Result<(), Error> {
        let m = pairs.len();
        check_len(Message::U, msg_u, msg_u_len(m))?;
        let first = self.ots;
        self.ots = next_index(first, m);
        msg_y.clear();
        msg_y.reserve_exact(msg_y_len(m));
        let mut xs = [Block::ZERO; 2 * BASE_OTS];
        let mut tweaks = [0u64; 2 * BASE_OTS];
        let mut h = [Block::ZERO; 2 * BASE_OTS];
        let mut y = [0u8; 32 * BASE_OTS];
        for (sb, (u, pairs)) in msg_u
            .chunks(SUB_BLOCKS * U_BLOCK)
            .zip(pairs.chunks(SUB_BLOCKS * BASE_OTS))
            .enumerate()
        {
            self.rows(sb, u);
            for (b, (q, pairs)) in self
                .q
                .as_chunks::<BASE_OTS>()
                .0
                .iter()
                .zip(pairs.chunks(BASE_OTS))
                .enumerate()
            {
                // Two hashes per OT, both under its index j: H(q_j, j) and H(q_j ⊕ s, j).
                let base = first + ((sb * SUB_BLOCKS + b) * BASE_OTS) as u64;
                for (k, &q) in q[..pairs.len()].iter().enumerate() {
                    xs[2 * k] = Block(q);
                    xs[2 * k + 1] = Block(q ^ self.s);
                    tweaks[2 * k] = base + k as u64;
                    tweaks[2 * k + 1] = base + k as u64;
                }
                let n = 2 * pairs.len();
                self.hash.tccr(&xs[..n], &tweaks[..n], &mut h[..n]);
                for ((pair, h), y) in pairs
                    .iter()
                    .zip(h.chunks_exact(2))
                    .zip(y.chunks_exact_mut(32))
                {
                    y[..16].copy_from_slice(&(pair[0] ^ h[0]).to_bytes());
                    y[16..].copy_from_slice(&(pair[1] ^ h[1]).to_bytes());
                }
                msg_y.extend_from_slice(&y[..32 * pairs.len()]);
            }
        }
        self.cols.advance(m.div_ceil(BASE_OTS));
        Ok(())
    }

    /// Sends the next chunk of correlated OTs: for each OT `j` of the chunk the evaluator
    /// learns `x_j^0 ⊕ r_j·Δ`, where `x_j^0 = zeros[j]` (`m = zeros.len()`, any `m ≥ 0`),
    /// `r_j` is its choice and `Δ` the offset given to [`Sender::setup_correlated`].
    /// Writes the chunk's msg_d ([`crate::msg_d_len`]`(m)` bytes: `d_j = x_j^0 ⊕ q_j`) into
    /// `msg_d` (cleared first), from the evaluator's msg_u of the same chunk; the chunk takes
    /// the next `m` session-wide indices, as [`Sender::extend`] does. Half the bytes of
    /// msg_y and no hashing (see "Correlated OT" in the crate documentation).
    ///
    /// # Errors
    /// As [`Sender::extend`]; `msg_d` is unchanged then.
    ///
    /// # Panics
    /// If this sender was not made by [`Sender::setup_correlated`] (its `s` is not the
    /// caller's offset, so the evaluator's labels would be wrong), and after 2^64 OTs in
    /// one session.
    pub fn extend_correlated_into(
        &mut self,
        msg_u: &[u8],
        zeros: &[Block],
        msg_d: &mut Vec<u8>,
    ) -> Result<(), Error> {
        assert!(
            self.correlated,
            "correlated OTs need a sender made by Sender::setup_correlated"
        );
        let m = zeros.len();
        check_len(Message::U, msg_u, msg_u_len(m))?;
        self.ots = next_index(self.ots, m);
        msg_d.clear();
        msg_d.reserve_exact(msg_d_len(m));
        for (sb, (u, zeros)) in msg_u
            .chunks(SUB_BLOCKS * U_BLOCK)
            .zip(zeros.chunks(SUB_BLOCKS * BASE_OTS))
            .enumerate()
        {
            self.rows(sb, u);
            for (&q, x0) in self.q.iter().zip(zeros) {
                msg_d.extend_from_slice(&(x0.0 ^ q).to_le_bytes());
            }
        }
        self.cols.advance(m.div_ceil(BASE_OTS));
        Ok(())
    }

    /// Runs the next chunk of `m` correlated OTs whose messages the OT itself draws: the
    /// zero label of OT `j` is the row `q_j`, appended to `zeros`, and the evaluator holds
    /// `q_j ⊕ r_j·Δ` ([`crate::ReceiverExtension::extend_cot_into`]) with nothing sent back
    /// (see "Correlated OT" in the crate documentation). The chunk takes the next `m`
    /// session-wide indices.
    ///
    /// # Errors
    /// As [`Sender::extend`]; `zeros` is unchanged then.
    ///
    /// # Panics
    /// As [`Sender::extend_correlated_into`].
    pub fn extend_cot_zeros_into(
        &mut self,
        msg_u: &[u8],
        m: usize,
        zeros: &mut Vec<Block>,
    ) -> Result<(), Error> {
        assert!(
            self.correlated,
            "correlated OTs need a sender made by Sender::setup_correlated"
        );
        check_len(Message::U, msg_u, msg_u_len(m))?;
        self.ots = next_index(self.ots, m);
        zeros.reserve(m);
        for (sb, u) in msg_u.chunks(SUB_BLOCKS * U_BLOCK).enumerate() {
            self.rows(sb, u);
            let rows = (m - sb * SUB_BLOCKS * BASE_OTS).min(SUB_BLOCKS * BASE_OTS);
            zeros.extend(self.q[..rows].iter().map(|&q| Block(q)));
        }
        self.cols.advance(m.div_ceil(BASE_OTS));
        Ok(())
    }

    /// The one-shot form: [`Sender::extend`] of all `pairs` as the session's only chunk.
    ///
    /// # Errors
    /// As [`Sender::extend`].
    pub fn send(mut self, msg_u: &[u8], pairs: &[[Block; 2]]) -> Result<Vec<u8>, Error> {
        self.extend(msg_u, pairs)
    }

    /// The number of OTs sent so far, over all chunks: the session-wide index (and hash
    /// tweak) of the next chunk's first OT.
    pub fn ots(&self) -> u64 {
        self.ots
    }
}

impl std::fmt::Debug for Sender {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Sender").finish_non_exhaustive()
    }
}

/// The garbler's state before msg_a, made by [`Sender::setup`] or
/// [`Sender::setup_correlated`].
pub struct SenderSetup {
    s: u128,
    pre: Precomputed,
    correlated: bool,
    hash_key: Block,
}

impl SenderSetup {
    /// Hashes under `key` instead of [`HASH_KEY`]: a session's own public key, drawn at
    /// random by the garbler and sent to the evaluator before the extension
    /// ([`crate::ReceiverExtension`] must use the same: [`Receiver::with_hash_key`]), so
    /// that no precomputation against the hash serves two sessions (see "The hash" in the
    /// crate documentation).
    ///
    /// [`Receiver::with_hash_key`]: crate::Receiver::with_hash_key
    pub fn with_hash_key(self, key: Block) -> SenderSetup {
        SenderSetup {
            hash_key: key,
            ..self
        }
    }

    /// As [`Sender::respond`], with the precomputed half.
    ///
    /// # Errors
    /// As [`Sender::respond`].
    pub fn respond(self, msg_a: &[u8]) -> Result<(Sender, Vec<u8>), Error> {
        let (msg_b, seeds) = self.pre.receive(msg_a, &choice_bits(self.s))?;
        Ok((
            Sender::new(self.s, seeds, self.correlated, self.hash_key),
            msg_b,
        ))
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
