//! `sha256`: the SHA-256 compression function on one 512-bit block, with the standard IV as
//! chaining value and the final feed-forward addition (FIPS 180-4 §6.2.2), so that for a
//! message that fits in one block once padded the output is its SHA-256 digest.
//!
//! The garbler's input group (declared first) is the first half of the block (`block bytes
//! 0..31`, 256 bits, message words `W0..W7`), the evaluator's the second half (`block bytes
//! 32..63`, 256 bits, `W8..W15`); the output group is the 256-bit `digest`. All three are
//! [`BitOrder::MsbFirst`] hex in natural byte order: the block's bytes as written, and the
//! digest as SHA-256 prints it (`H0..H7` big-endian).
//!
//! Gate counts (as measured by [`Stats::of`], pinned by the tests): **22,177 AND**, 92,169
//! XOR, 2,227 INV (AND-depth 1,604). Every 32-bit addition is the builder's one-AND-per-bit
//! ripple adder (at most 31 ANDs); `Ch(e, f, g) = g ^ (e & (f ^ g))` and
//! `Maj(a, b, c) = b ^ ((a ^ b) & (b ^ c))` take one AND per bit; the rotations and shifts of
//! the Σ/σ functions are free. Constants fold: the IV makes round 0 entirely constant except
//! for `W0`, so it costs two additions (`e = (d + T1const) + W0`, `a = (T2 + T1const) + W0`);
//! in round 1 `Ch` and `Maj` fold away (their `f, g` and `b, c` are still IV words, which is
//! why `Maj` is written with `b ^ c`), and in rounds 0 to 3 `h + K[t]` is a constant. Without
//! constants the count would be 48·3·31 (message schedule) + 64·(7·31 + 64) (rounds) +
//! 8·31 (feed-forward) = 22,696.
//!
//! Reference: FIPS 180-4, *Secure Hash Standard (SHS)*, NIST 2015, §4.1.2, §4.2.2, §5.3.3,
//! §6.2.
//!
//! [`BitOrder::MsbFirst`]: crate::BitOrder::MsbFirst
//! [`Stats::of`]: crate::Stats::of

use super::{Builtin, Params};
use crate::builder::{Bit, Builder, Uint, Word};
use crate::circuit::{Circuit, Party};
use crate::encoding::hex_to_bytes;

pub(crate) static SHA256: Builtin = Builtin {
    name: "sha256",
    summary: "SHA-256 compression of one 512-bit block from the standard IV, feed-forward \
              included (FIPS 180-4): the digest of a one-block padded message",
    params: &[],
    encoding: "garbler: block bytes 0..31, 256 bits; evaluator: block bytes 32..63, 256 bits; \
               output: digest, 256 bits; all hex in natural byte order (64 digits, MsbFirst), \
               the block already padded, e.g. garbler 6162638000...00, evaluator 00...0018 \
               (\"abc\") -> ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad",
    build,
    reference,
    check: None,
};

/// The initial hash value H(0) (FIPS 180-4 §5.3.3).
const IV: [u32; 8] = [
    0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19,
];

/// The round constants K (FIPS 180-4 §4.2.2).
const K: [u32; 64] = [
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
];

fn build(_: &Params) -> Circuit {
    let mut b = Builder::new();
    let mut w = b.input_uints(Party::Garbler, "block bytes 0..31", 8, 32);
    w.extend(b.input_uints(Party::Evaluator, "block bytes 32..63", 8, 32));

    // Message schedule (§6.2.2 step 1).
    for t in 16..64 {
        let s1 = small_sigma1(&mut b, &w[t - 2]);
        let s0 = small_sigma0(&mut b, &w[t - 15]);
        let wt = sum(&mut b, &[&s1, &w[t - 7], &s0, &w[t - 16]]);
        w.push(wt);
    }

    // Rounds (steps 2 to 4), the working variables starting from the IV.
    let iv: Vec<Uint> = IV.iter().map(|&v| b.constant_uint(v.into(), 32)).collect();
    let mut v: [Uint; 8] = std::array::from_fn(|i| iv[i].clone());
    for (t, wt) in w.iter().enumerate() {
        let [a, bb, c, d, e, f, g, h] = &v;
        let s1 = big_sigma1(&mut b, e);
        let ch = ch(&mut b, e, f, g);
        let k = b.constant_uint(K[t].into(), 32);
        let s0 = big_sigma0(&mut b, a);
        let maj = maj(&mut b, a, bb, c);
        let t2 = sum(&mut b, &[&s0, &maj]);
        let (new_e, new_a) = if d.as_const().is_some() && t2.as_const().is_some() {
            // Only T1 is variable (round 0): fold d and T2 into its constant part rather
            // than materialising T1, which saves one addition.
            let e = sum(&mut b, &[d, h, &s1, &ch, &k, wt]);
            let a = sum(&mut b, &[&t2, h, &s1, &ch, &k, wt]);
            (e, a)
        } else {
            let t1 = sum(&mut b, &[h, &s1, &ch, &k, wt]);
            (b.add(d, &t1), b.add(&t1, &t2))
        };
        v = [
            new_a,
            a.clone(),
            bb.clone(),
            c.clone(),
            new_e,
            e.clone(),
            f.clone(),
            g.clone(),
        ];
    }

    // Feed-forward (step 4): H(1) = H(0) + working variables.
    let digest: Vec<Uint> = v.iter().zip(&iv).map(|(x, h0)| b.add(h0, x)).collect();
    b.output_uints("digest", &digest);
    b.build()
}

fn reference(_: &Params, garbler: &str, evaluator: &str) -> String {
    use sha2::digest::generic_array::GenericArray;
    let block = hex_to_bytes(&[garbler, evaluator].concat(), 64).expect("512 bits of hex");
    let mut state = IV;
    // compress256 adds the input state back in (the feed-forward) itself.
    sha2::compress256(&mut state, &[GenericArray::clone_from_slice(&block)]);
    state.iter().map(|word| format!("{word:08x}")).collect()
}

/// The sum of 32-bit words modulo 2^32: the constant words are added first (at no cost),
/// then the variable ones, then the constant, so that an expression with one variable
/// word costs at most one addition.
fn sum(b: &mut Builder, terms: &[&Uint]) -> Uint {
    let mut constant = 0u32;
    let mut acc: Option<Uint> = None;
    for &term in terms {
        match term.as_const() {
            Some(k) => constant = constant.wrapping_add(k as u32),
            None => {
                acc = Some(match acc {
                    None => term.clone(),
                    Some(x) => b.add(&x, term),
                })
            }
        }
    }
    let k = b.constant_uint(constant.into(), 32);
    match acc {
        None => k,
        Some(x) if constant == 0 => x,
        Some(x) => b.add(&x, &k),
    }
}

fn xor3(b: &mut Builder, x: &Uint, y: &Uint, z: &Uint) -> Uint {
    let xy = b.xor_bits(x.bits(), y.bits());
    Uint::new(b.xor_bits(&xy, z.bits()))
}

/// Σ0(x) = ROTR^2(x) ^ ROTR^13(x) ^ ROTR^22(x).
fn big_sigma0(b: &mut Builder, x: &Uint) -> Uint {
    xor3(b, &x.rotr(2), &x.rotr(13), &x.rotr(22))
}

/// Σ1(x) = ROTR^6(x) ^ ROTR^11(x) ^ ROTR^25(x).
fn big_sigma1(b: &mut Builder, x: &Uint) -> Uint {
    xor3(b, &x.rotr(6), &x.rotr(11), &x.rotr(25))
}

/// σ0(x) = ROTR^7(x) ^ ROTR^18(x) ^ SHR^3(x).
fn small_sigma0(b: &mut Builder, x: &Uint) -> Uint {
    xor3(b, &x.rotr(7), &x.rotr(18), &x.shr(3))
}

/// σ1(x) = ROTR^17(x) ^ ROTR^19(x) ^ SHR^10(x).
fn small_sigma1(b: &mut Builder, x: &Uint) -> Uint {
    xor3(b, &x.rotr(17), &x.rotr(19), &x.shr(10))
}

/// Ch(e, f, g) = (e & f) ^ (!e & g) = g ^ (e & (f ^ g)): one AND per bit.
fn ch(b: &mut Builder, e: &Uint, f: &Uint, g: &Uint) -> Uint {
    let bits: Vec<Bit> = (0..32)
        .map(|i| {
            let (e, f, g) = (e.bits()[i], f.bits()[i], g.bits()[i]);
            let fg = b.xor(f, g);
            let sel = b.and(e, fg);
            b.xor(g, sel)
        })
        .collect();
    Uint::new(bits)
}

/// Maj(a, b, c) = b ^ ((a ^ b) & (b ^ c)): one AND per bit, and none where `b` and `c`
/// are both constant (round 1, where they are still IV words).
fn maj(b: &mut Builder, x: &Uint, y: &Uint, z: &Uint) -> Uint {
    let bits: Vec<Bit> = (0..32)
        .map(|i| {
            let (x, y, z) = (x.bits()[i], y.bits()[i], z.bits()[i]);
            let xy = b.xor(x, y);
            let yz = b.xor(y, z);
            let m = b.and(xy, yz);
            b.xor(y, m)
        })
        .collect();
    Uint::new(bits)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::library::testing::{check_against_reference, check_vector};
    use crate::Stats;

    /// Checks one block (128 hex digits), split between the parties at byte 32.
    fn check_block(block: &str, digest: &str) -> Stats {
        assert_eq!(block.len(), 128);
        let (g, e) = block.split_at(64);
        check_vector("sha256", g, e, digest)
    }

    #[test]
    fn padded_one_block_messages_give_their_digest() {
        // "abc": 61 62 63, the 1 bit, zeros, then the length 24 in the last 8 bytes.
        let abc = format!("61626380{}{:016x}", "0".repeat(112 - 8), 24);
        check_block(
            &abc,
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad",
        );
        // "": the 1 bit, then zeros (length 0).
        let empty = format!("80{}", "0".repeat(126));
        check_block(
            &empty,
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
        );
    }

    #[test]
    fn compression_vectors() {
        check_block(
            &"0".repeat(128),
            "da5698be17b9b46962335799779fbeca8ce5d491c0d26243bafef9ea1837a9d8",
        );
        let counting: String = (0..64u8).map(|i| format!("{i:02x}")).collect();
        check_block(
            &counting,
            "fc99a2df88f42a7a7bb9d18033cdc6a20256755f9d5b9a5044a9cc315abe84a7",
        );
        check_block(
            &"f".repeat(128),
            "ef0c748df4da50a8d6c43c013edc3ce76c9d9fa9a1458ade56eb86c0a64492d2",
        );
    }

    #[test]
    fn gate_counts_and_encoding() {
        let c = check_against_reference("sha256", 200);
        let s = Stats::of(&c);
        assert_eq!(s.and, 22177);
        assert!(s.and <= 23_000);
        assert_eq!((s.xor, s.inv, s.and_depth), (92169, 2227, 1604));
        assert_eq!(
            (s.garbler_inputs, s.evaluator_inputs, s.outputs),
            (256, 256, 256)
        );
        let names: Vec<(Party, &str)> = c
            .inputs()
            .iter()
            .map(|g| (g.party, g.name.as_str()))
            .collect();
        assert_eq!(
            names,
            [
                (Party::Garbler, "block bytes 0..31"),
                (Party::Evaluator, "block bytes 32..63")
            ]
        );
        assert_eq!(c.outputs()[0].name, "digest");
    }
}
