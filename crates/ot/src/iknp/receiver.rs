//! The evaluator's side of IKNP (the extension receiver): the base-OT sender's state, then
//! the extension that makes one msg_u per chunk of choices and unmasks the chunks' msg_y
//! in the same order.

use std::collections::VecDeque;

use rand::{CryptoRng, RngCore};
use transputation_core::aes::FixedKeyAes;
use transputation_core::Block;

use super::shared::{next_index, read_u128, Columns, HASH_KEY, SUB_BLOCKS, U_BLOCK};
use crate::base::{check_len, BaseSender};
use crate::transpose::transpose128;
use crate::{msg_d_len, msg_u_len, msg_y_len, Error, Message, BASE_OTS};

/// Hashes per call to the TCCR kernel.
const HASH_BATCH: usize = 256;

/// Spare row buffers kept for reuse: enough for a pipeline that has a few chunks in flight.
const SPARE: usize = 4;

/// The evaluator's first state: the base-OT sender, waiting for msg_b.
pub struct Receiver {
    base: BaseSender,
    hash_key: Block,
}

impl Receiver {
    /// Starts the OT: returns the state and msg_a ([`crate::MSG_A_LEN`] bytes).
    pub fn start<R: RngCore + CryptoRng>(rng: &mut R) -> (Receiver, Vec<u8>) {
        let (base, msg_a) = BaseSender::new(rng);
        (
            Receiver {
                base,
                hash_key: HASH_KEY,
            },
            msg_a.to_vec(),
        )
    }

    /// Hashes under `key`, the session's public hash key the garbler drew
    /// ([`crate::SenderSetup::with_hash_key`]), instead of [`HASH_KEY`].
    pub fn with_hash_key(self, key: Block) -> Receiver {
        Receiver {
            hash_key: key,
            ..self
        }
    }

    /// Finishes the base OTs with the garbler's msg_b: derives the key pairs
    /// `k_i^0, k_i^1` and sets up the 2×128 column PRGs. The returned extension makes any
    /// number of chunks of OTs ([`ReceiverExtension::extend`]).
    ///
    /// # Errors
    /// If msg_b is not [`crate::MSG_B_LEN`] bytes, or one of its points is not a canonical
    /// Ristretto255 encoding or is the identity.
    pub fn base(self, msg_b: &[u8]) -> Result<ReceiverExtension, Error> {
        let keys = self.base.keys(msg_b, BASE_OTS)?;
        Ok(ReceiverExtension {
            g0: Columns::new(keys.iter().map(|k| k[0])),
            g1: Columns::new(keys.iter().map(|k| k[1])),
            hash: FixedKeyAes::new(self.hash_key),
            ots: 0,
            pending: VecDeque::new(),
            spare: Vec::new(),
            c0: vec![Block::ZERO; SUB_BLOCKS * BASE_OTS],
            c1: vec![Block::ZERO; SUB_BLOCKS * BASE_OTS],
        })
    }

    /// The one-shot form: [`Receiver::base`] and one [`ReceiverExtension::extend`] of all
    /// `choices` (one per OT, `m = choices.len()`, any `m ≥ 0`). Returns the state waiting
    /// for msg_y and msg_u ([`crate::msg_u_len`]`(m)` bytes).
    ///
    /// # Errors
    /// As [`Receiver::base`].
    pub fn choose(self, msg_b: &[u8], choices: &[bool]) -> Result<(Chosen, Vec<u8>), Error> {
        let mut ext = self.base(msg_b)?;
        let msg_u = ext.extend(choices);
        Ok((Chosen { ext }, msg_u))
    }
}

impl std::fmt::Debug for Receiver {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Receiver").finish_non_exhaustive()
    }
}

/// A chunk whose msg_u has been made and whose msg_y has not arrived yet.
struct Pending {
    /// The number of OTs.
    m: usize,
    /// The session-wide index of its first OT, the tweak of its first hash.
    first: u64,
    /// The choice bits, 128 per word, padding bits 0.
    r: Vec<u128>,
    /// The rows `t_j`, padded to whole blocks of 128.
    t: Vec<u128>,
}

/// The evaluator's extension state, after the base OTs: makes msg_u for each chunk of
/// choices ([`ReceiverExtension::extend`]) and unmasks each chunk's msg_y
/// ([`ReceiverExtension::receive`]), oldest chunk first.
///
/// Any number of chunks of any sizes (0 included); the garbler must process the same
/// chunks in the same order with the same sizes (see the crate documentation). Each pending
/// chunk keeps its rows `t_j` (16 bytes per OT, padded to 128) until its msg_y arrives.
pub struct ReceiverExtension {
    /// `G(k_i^0)`, the columns of `t`.
    g0: Columns,
    /// `G(k_i^1)`.
    g1: Columns,
    hash: FixedKeyAes,
    /// OTs extended so far: the index of the next chunk's first OT.
    ots: u64,
    /// Chunks waiting for their msg_y, oldest first.
    pending: VecDeque<Pending>,
    /// Row buffers of received chunks, reused by later chunks.
    spare: Vec<Vec<u128>>,
    /// One sub-batch of the columns `G(k_i^0)` and `G(k_i^1)`, column by column
    /// (`SUB_BLOCKS` blocks each), as the PRGs make them.
    c0: Vec<Block>,
    c1: Vec<Block>,
}

impl ReceiverExtension {
    /// Commits to the next chunk of `choices` (one per OT, `m = choices.len()`, any
    /// `m ≥ 0`) and returns its msg_u ([`crate::msg_u_len`]`(m)` bytes). The chunk is
    /// padded to a multiple of 128 on its own and its OTs take the next `m` session-wide
    /// indices.
    pub fn extend(&mut self, choices: &[bool]) -> Vec<u8> {
        let mut msg_u = Vec::new();
        self.extend_into(choices, &mut msg_u);
        msg_u
    }

    /// As [`ReceiverExtension::extend`], writing msg_u over what `msg_u` held (resized to its length), so
    /// that a caller can reuse one buffer for every chunk.
    ///
    /// # Panics
    /// After 2^64 OTs in one session.
    pub fn extend_into(&mut self, choices: &[bool], msg_u: &mut Vec<u8>) {
        let (first, r, t) = self.matrix(choices, msg_u);
        self.pending.push_back(Pending {
            m: choices.len(),
            first,
            r,
            t,
        });
    }

    /// Runs the next chunk of `m = choices.len()` correlated OTs whose messages the OT
    /// itself draws (see "Correlated OT" in the crate documentation): writes its msg_u as
    /// [`ReceiverExtension::extend_into`] does, and appends the evaluator's label of each OT,
    /// `t_j = q_j ⊕ r_j·Δ`, to `labels` at once. The garbler answers nothing: its zero labels
    /// are the `q_j` ([`crate::Sender::extend_cot_zeros_into`]). The chunk takes the next
    /// `m` session-wide indices, so ordinary and correlated chunks may follow it.
    ///
    /// # Panics
    /// After 2^64 OTs in one session.
    pub fn extend_cot_into(
        &mut self,
        choices: &[bool],
        msg_u: &mut Vec<u8>,
        labels: &mut Vec<Block>,
    ) {
        let (_, _, t) = self.matrix(choices, msg_u);
        labels.extend(t[..choices.len()].iter().map(|&t| Block(t)));
        self.recycle(t);
    }

    /// The next chunk's IKNP matrix: writes msg_u, advances the column PRGs and the OT
    /// index, and returns the chunk's first index, its packed choices and its rows `t_j`.
    fn matrix(&mut self, choices: &[bool], msg_u: &mut Vec<u8>) -> (u64, Vec<u128>, Vec<u128>) {
        let m = choices.len();
        let first = self.ots;
        self.ots = next_index(first, m);
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
        let mut t = self.spare.pop().unwrap_or_default();
        t.clear();
        t.resize(blocks * BASE_OTS, 0);
        // Written in place (every byte below), over what the buffer held: no zeroing
        // beyond growth.
        msg_u.resize(msg_u_len(m), 0);
        for (sb, ((t, r), u)) in t
            .chunks_mut(SUB_BLOCKS * BASE_OTS)
            .zip(r.chunks(SUB_BLOCKS))
            .zip(msg_u.chunks_mut(SUB_BLOCKS * U_BLOCK))
            .enumerate()
        {
            let n = r.len();
            self.g0.fill_sub_batch(sb, n, &mut self.c0);
            self.g1.fill_sub_batch(sb, n, &mut self.c1);
            // Column i of block k is word 128·k + i: t_i = G(k_i^0), u_i = t_i ⊕ G(k_i^1) ⊕ r,
            // at bytes 16·(128·k + i) of this sub-batch's part of msg_u. Block by block, its
            // words gathered from the columns and `t`'s transposed while hot (as the
            // garbler's rows, `Sender::rows`).
            for (k, ((t, u), &r)) in t
                .as_chunks_mut::<BASE_OTS>()
                .0
                .iter_mut()
                .zip(u.chunks_exact_mut(U_BLOCK))
                .zip(r)
                .enumerate()
            {
                for (i, (t, u)) in t.iter_mut().zip(u.chunks_exact_mut(16)).enumerate() {
                    let (a, b) = (self.c0[i * SUB_BLOCKS + k].0, self.c1[i * SUB_BLOCKS + k].0);
                    *t = a;
                    u.copy_from_slice(&(a ^ b ^ r).to_le_bytes());
                }
                transpose128(t);
            }
        }
        self.g0.advance(blocks);
        self.g1.advance(blocks);
        (first, r, t)
    }

    /// Takes the oldest pending chunk if `msg` has the length `len(m)` its message needs.
    fn oldest(
        &mut self,
        msg: Message,
        bytes: &[u8],
        len: fn(usize) -> usize,
    ) -> Result<Pending, Error> {
        let chunk = self
            .pending
            .pop_front()
            .ok_or(Error::NothingPending { msg })?;
        if let Err(e) = check_len(msg, bytes, len(chunk.m)) {
            self.pending.push_front(chunk);
            return Err(e);
        }
        Ok(chunk)
    }

    /// Keeps a received chunk's row buffer for a later chunk.
    fn recycle(&mut self, rows: Vec<u128>) {
        if self.spare.len() < SPARE {
            self.spare.push(rows);
        }
    }

    /// Unmasks the oldest pending chunk as correlated OTs, from the garbler's msg_d
    /// ([`crate::Sender::extend_correlated_into`]): appends `x_j^0 ⊕ r_j·Δ = d_j ⊕ t_j`
    /// for each OT `j` of the chunk, in order, to `labels`.
    ///
    /// # Errors
    /// As [`ReceiverExtension::receive`], for msg_d ([`crate::msg_d_len`]`(m)` bytes);
    /// `labels` is unchanged then.
    pub fn receive_correlated_into(
        &mut self,
        msg_d: &[u8],
        labels: &mut Vec<Block>,
    ) -> Result<(), Error> {
        let chunk = self.oldest(Message::D, msg_d, msg_d_len)?;
        labels.extend(
            chunk.t[..chunk.m]
                .iter()
                .zip(msg_d.chunks_exact(16))
                .map(|(&t, d)| Block(t ^ read_u128(d))),
        );
        self.recycle(chunk.t);
        Ok(())
    }

    /// Unmasks the oldest pending chunk from its msg_y: one label per choice of that
    /// chunk, in order.
    ///
    /// # Errors
    /// [`Error::NothingPending`] if every chunk has been received, and [`Error::Length`] if
    /// msg_y is not [`crate::msg_y_len`]`(m)` bytes for that chunk's `m`. On an error the
    /// state is unchanged (the chunk stays pending).
    pub fn receive(&mut self, msg_y: &[u8]) -> Result<Vec<Block>, Error> {
        let mut labels = Vec::new();
        self.receive_into(msg_y, &mut labels)?;
        Ok(labels)
    }

    /// As [`ReceiverExtension::receive`], appending the labels to `labels`.
    ///
    /// # Errors
    /// As [`ReceiverExtension::receive`]; `labels` is unchanged then.
    pub fn receive_into(&mut self, msg_y: &[u8], labels: &mut Vec<Block>) -> Result<(), Error> {
        let chunk = self.oldest(Message::Y, msg_y, msg_y_len)?;
        labels.reserve(chunk.m);
        let mut xs = [Block::ZERO; HASH_BATCH];
        let mut tweaks = [0u64; HASH_BATCH];
        let mut h = [Block::ZERO; HASH_BATCH];
        for (c, (ts, ys)) in chunk.t[..chunk.m]
            .chunks(HASH_BATCH)
            .zip(msg_y.chunks(32 * HASH_BATCH))
            .enumerate()
        {
            let n = ts.len();
            let base = chunk.first + (c * HASH_BATCH) as u64;
            for (k, ((x, tw), &t)) in xs.iter_mut().zip(&mut tweaks).zip(ts).enumerate() {
                *x = Block(t);
                *tw = base + k as u64;
            }
            self.hash.tccr(&xs[..n], &tweaks[..n], &mut h[..n]);
            for (k, (y, h)) in ys.chunks_exact(32).zip(&h).enumerate() {
                let j = c * HASH_BATCH + k;
                let bit = (chunk.r[j / BASE_OTS] >> (j % BASE_OTS)) & 1 == 1;
                let (y0, y1) = (Block(read_u128(y)), Block(read_u128(&y[16..])));
                // y_j^{r_j}, selected without a branch on the secret choice.
                labels.push(y0 ^ (y0 ^ y1).select(bit) ^ *h);
            }
        }
        self.recycle(chunk.t);
        Ok(())
    }

    /// Hands the extension row buffers to use for later chunks (each is cleared and grown
    /// as a chunk needs): a caller that allocates them, and writes to them once, before the
    /// session spares the session those pages' first-touch faults (4 MiB of rows for
    /// 250,000 OTs are a thousand page faults).
    pub fn add_row_buffers(&mut self, buffers: impl IntoIterator<Item = Vec<u128>>) {
        self.spare.extend(buffers);
    }

    /// The number of OTs of the oldest pending chunk (whose msg_y is
    /// [`crate::msg_y_len`] of it), or `None` if no chunk is pending.
    pub fn next_pending(&self) -> Option<usize> {
        self.pending.front().map(|c| c.m)
    }

    /// The number of chunks waiting for their msg_y.
    pub fn pending(&self) -> usize {
        self.pending.len()
    }

    /// The number of OTs extended so far, over all chunks: the session-wide index (and
    /// hash tweak) of the next chunk's first OT.
    pub fn ots(&self) -> u64 {
        self.ots
    }
}

impl std::fmt::Debug for ReceiverExtension {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ReceiverExtension")
            .field("ots", &self.ots)
            .field("pending", &self.pending.len())
            .finish_non_exhaustive()
    }
}

/// The evaluator's one-shot state ([`Receiver::choose`]): a [`ReceiverExtension`] with its
/// single chunk pending, waiting for msg_y.
pub struct Chosen {
    ext: ReceiverExtension,
}

impl Chosen {
    /// The number of OTs `m`.
    pub fn len(&self) -> usize {
        self.ext.next_pending().unwrap_or(0)
    }

    /// Whether there are no OTs.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Unmasks the chosen label of each pair from the garbler's msg_y: one label per
    /// choice, in order.
    ///
    /// # Errors
    /// If msg_y is not [`crate::msg_y_len`]`(m)` bytes.
    pub fn receive(mut self, msg_y: &[u8]) -> Result<Vec<Block>, Error> {
        self.ext.receive(msg_y)
    }
}

impl std::fmt::Debug for Chosen {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Chosen")
            .field("m", &self.len())
            .finish_non_exhaustive()
    }
}
