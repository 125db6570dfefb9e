//! `aes128`: AES-128 encryption of one block, key schedule included (FIPS-197).
//!
//! The garbler's input group (declared first) is the 128-bit key (`key`), the evaluator's the
//! 128-bit plaintext (`plaintext`); the output group is the 128-bit ciphertext
//! (`ciphertext`). All three are [`BitOrder::MsbFirst`] hex in FIPS-197 byte order, so the
//! strings are exactly those of FIPS-197 Appendix C: wire `k` of a group is bit `7 - k % 8`
//! of byte `k / 8`.
//!
//! Gate counts (as measured by [`Stats::of`], pinned by the tests): **6,400 AND**, 24,040
//! XOR, 816 INV (AND-depth 60). The AND gates are all in the 200 S-boxes (160 in the rounds,
//! 40 in the key schedule), 32 each. ShiftRows, MixColumns, AddRoundKey and the rest of the
//! key schedule are linear, hence free of AND gates: of the XORs, 16,600 are in the S-boxes
//! (83 each), 4,752 in the nine MixColumns, 1,408 in the eleven AddRoundKeys and 1,280 in
//! the key schedule. The INV gates are the four XNORs of each S-box (800) and the 16 set
//! bits of the round constants.
//!
//! The S-box is the 32-AND, 83-XOR/XNOR circuit of Boyar and Peralta (J. Boyar, R. Peralta,
//! "A new combinational logic minimization technique with applications to cryptology",
//! SEA 2010, LNCS 6049; also J. Boyar, P. Matthews, R. Peralta, "Logic minimization
//! techniques with applications to cryptology", J. Cryptology 26(2), 2013; the 34-AND
//! circuit of "A depth-16 circuit for the AES S-box", IFIP SEC 2012, is not used here): a
//! top linear layer of 23 XORs, a non-linear middle of 32 ANDs and 30 XORs (the inversion
//! in GF(2^8), in a tower-field basis), and a bottom linear layer of 26 XORs and 4 XNORs
//! that also applies the affine map of the S-box. It is written out gate by gate in
//! `sbox` and checked against the S-box's definition on all 256 inputs.
//!
//! References: FIPS-197, *Advanced Encryption Standard (AES)*, NIST 2001 (updated 2023);
//! the Boyar–Peralta papers above.
//!
//! [`BitOrder::MsbFirst`]: crate::BitOrder::MsbFirst
//! [`Stats::of`]: crate::Stats::of

use super::{Builtin, Params};
use crate::builder::{Bit, Builder};
use crate::circuit::{Circuit, Party};
use crate::encoding::hex_to_bytes;

pub(crate) static AES128: Builtin = Builtin {
    name: "aes128",
    summary: "AES-128 encryption of one block, key schedule included (FIPS-197); 6,400 AND gates",
    params: &[],
    encoding: "garbler: key, 128 bits; evaluator: plaintext, 128 bits; output: ciphertext, \
               128 bits; all hex in FIPS-197 byte order (32 digits, MsbFirst: wire k is bit \
               7 - k%8 of byte k/8), e.g. key 000102030405060708090a0b0c0d0e0f, plaintext \
               00112233445566778899aabbccddeeff -> 69c4e0d86a7b0430d8cdb78070b4c55a",
    build,
    reference,
    check: None,
};

/// A byte as bits, most significant first (bit 7 of the byte is element 0).
type Byte = [Bit; 8];

/// The AES state or a round key: 16 bytes in FIPS-197 order (byte `r + 4c` is row `r` of
/// column `c`).
type Block = [Byte; 16];

/// The key schedule's round constants `Rcon[1..=10]`.
const RCON: [u8; 10] = [0x01, 0x02, 0x04, 0x08, 0x10, 0x20, 0x40, 0x80, 0x1b, 0x36];

fn build(_: &Params) -> Circuit {
    let mut b = Builder::new();
    let key = to_block(&b.input_bits(Party::Garbler, "key", 128));
    let plaintext = to_block(&b.input_bits(Party::Evaluator, "plaintext", 128));
    let round_keys = expand_key(&mut b, &key);

    let mut state = xor_block(&mut b, &plaintext, &round_keys[0]);
    for (round, round_key) in round_keys.iter().enumerate().skip(1) {
        for byte in state.iter_mut() {
            *byte = sbox(&mut b, byte);
        }
        state = shift_rows(&state);
        if round < 10 {
            state = mix_columns(&mut b, &state);
        }
        state = xor_block(&mut b, &state, round_key);
    }
    let out: Vec<Bit> = state.iter().flatten().copied().collect();
    b.output_bits("ciphertext", &out);
    b.build()
}

fn reference(_: &Params, garbler: &str, evaluator: &str) -> String {
    use aes::cipher::{BlockCipherEncrypt, KeyInit};
    let bytes = |hex| -> [u8; 16] {
        let v = hex_to_bytes(hex, 16).expect("128 bits of hex");
        v.try_into().expect("16 bytes")
    };
    let mut block = bytes(evaluator).into();
    aes::Aes128::new(&bytes(garbler).into()).encrypt_block(&mut block);
    block.iter().map(|byte| format!("{byte:02x}")).collect()
}

fn to_block(bits: &[Bit]) -> Block {
    let mut block = [[Bit::ZERO; 8]; 16];
    for (byte, chunk) in block.iter_mut().zip(bits.chunks(8)) {
        byte.copy_from_slice(chunk);
    }
    block
}

fn xor_byte(b: &mut Builder, x: &Byte, y: &Byte) -> Byte {
    std::array::from_fn(|i| b.xor(x[i], y[i]))
}

fn xor_block(b: &mut Builder, x: &Block, y: &Block) -> Block {
    std::array::from_fn(|i| xor_byte(b, &x[i], &y[i]))
}

fn const_byte(v: u8) -> Byte {
    std::array::from_fn(|i| Bit::Const((v >> (7 - i)) & 1 == 1))
}

/// The key expansion of FIPS-197 §5.2 for Nk = 4: 11 round keys, 40 S-boxes.
fn expand_key(b: &mut Builder, key: &Block) -> Vec<Block> {
    let mut words: Vec<[Byte; 4]> = (0..4)
        .map(|i| std::array::from_fn(|j| key[4 * i + j]))
        .collect();
    for i in 4..44 {
        let prev = words[i - 1];
        let temp = if i % 4 == 0 {
            // SubWord(RotWord(w[i-1])) XOR Rcon[i/4]
            let mut t: [Byte; 4] = std::array::from_fn(|j| sbox(b, &prev[(j + 1) % 4]));
            t[0] = xor_byte(b, &t[0], &const_byte(RCON[i / 4 - 1]));
            t
        } else {
            prev
        };
        let back = words[i - 4];
        let w = std::array::from_fn(|j| xor_byte(b, &back[j], &temp[j]));
        words.push(w);
    }
    words
        .chunks(4)
        .map(|ws| std::array::from_fn(|k| ws[k / 4][k % 4]))
        .collect()
}

/// ShiftRows: row `r` rotates left by `r` columns.
fn shift_rows(s: &Block) -> Block {
    std::array::from_fn(|k| {
        let (r, c) = (k % 4, k / 4);
        s[r + 4 * ((c + r) % 4)]
    })
}

/// Multiplication by `x` (0x02) in GF(2^8) mod x^8 + x^4 + x^3 + x + 1: XORs only.
fn xtime(b: &mut Builder, a: &Byte) -> Byte {
    // Shift left (towards the most significant bit, element 0) and reduce by 0x1b = bits
    // 4, 3, 1, 0, i.e. elements 3, 4, 6, 7, when the old top bit a[0] is set.
    let top = a[0];
    let mut out = [a[1], a[2], a[3], a[4], a[5], a[6], a[7], top];
    for i in [3, 4, 6] {
        out[i] = b.xor(out[i], top);
    }
    out
}

/// MixColumns: each column times {03}x^3 + {01}x^2 + {01}x + {02}, written as
/// `r_i = a_i + t + xtime(a_i + a_{i+1})` with `t = a_0 + a_1 + a_2 + a_3`.
fn mix_columns(b: &mut Builder, s: &Block) -> Block {
    let mut out = *s;
    for c in 0..4 {
        let a: [Byte; 4] = std::array::from_fn(|r| s[4 * c + r]);
        let t01 = xor_byte(b, &a[0], &a[1]);
        let t23 = xor_byte(b, &a[2], &a[3]);
        let t = xor_byte(b, &t01, &t23);
        for r in 0..4 {
            let pair = xor_byte(b, &a[r], &a[(r + 1) % 4]);
            let doubled = xtime(b, &pair);
            let at = xor_byte(b, &a[r], &t);
            out[4 * c + r] = xor_byte(b, &at, &doubled);
        }
    }
    out
}

/// The AES S-box as the Boyar–Peralta circuit (SEA 2010; see the module documentation):
/// 32 AND, 79 XOR and 4 XNOR gates. `x[0]` is the most significant input bit (their `U0`),
/// and the output is most significant bit first (their `S0..S7`).
fn sbox(b: &mut Builder, x: &Byte) -> Byte {
    let top = sbox_top_linear(b, x);
    let z = sbox_nonlinear_middle(b, &top);
    sbox_bottom_linear(b, &z)
}

/// The S-box's top linear layer: 23 XORs. Returns `U7` (the least significant input bit,
/// which the middle reads too) at index 0 and `y1..y21` at indices 1 to 21.
fn sbox_top_linear(b: &mut Builder, x: &Byte) -> [Bit; 22] {
    let [x0, x1, x2, x3, x4, x5, x6, x7] = *x;
    let mut xor = |p: Bit, q: Bit| b.xor(p, q);

    let y14 = xor(x3, x5);
    let y13 = xor(x0, x6);
    let y9 = xor(x0, x3);
    let y8 = xor(x0, x5);
    let t0 = xor(x1, x2);
    let y1 = xor(t0, x7);
    let y4 = xor(y1, x3);
    let y12 = xor(y13, y14);
    let y2 = xor(y1, x0);
    let y5 = xor(y1, x6);
    let y3 = xor(y5, y8);
    let t1 = xor(x4, y12);
    let y15 = xor(t1, x5);
    let y20 = xor(t1, x1);
    let y6 = xor(y15, x7);
    let y10 = xor(y15, t0);
    let y11 = xor(y20, y9);
    let y7 = xor(x7, y11);
    let y17 = xor(y10, y11);
    let y19 = xor(y10, y8);
    let y16 = xor(t0, y11);
    let y21 = xor(y13, y16);
    let y18 = xor(x0, y16);
    [
        x7, y1, y2, y3, y4, y5, y6, y7, y8, y9, y10, y11, y12, y13, y14, y15, y16, y17, y18, y19,
        y20, y21,
    ]
}

/// The S-box's non-linear middle: 32 ANDs, 30 XORs, from the top layer's outputs (as
/// [`sbox_top_linear`] returns them) to `z0..z17`.
fn sbox_nonlinear_middle(b: &mut Builder, top: &[Bit; 22]) -> [Bit; 18] {
    let [x7, y1, y2, y3, y4, y5, y6, y7, y8, y9, y10, ..] = *top;
    let [.., y11, y12, y13, y14, y15, y16, y17, y18, y19, y20, y21] = *top;
    let t2 = b.and(y12, y15);
    let t3 = b.and(y3, y6);
    let t4 = b.xor(t3, t2);
    let t5 = b.and(y4, x7);
    let t6 = b.xor(t5, t2);
    let t7 = b.and(y13, y16);
    let t8 = b.and(y5, y1);
    let t9 = b.xor(t8, t7);
    let t10 = b.and(y2, y7);
    let t11 = b.xor(t10, t7);
    let t12 = b.and(y9, y11);
    let t13 = b.and(y14, y17);
    let t14 = b.xor(t13, t12);
    let t15 = b.and(y8, y10);
    let t16 = b.xor(t15, t12);
    let t17 = b.xor(t4, t14);
    let t18 = b.xor(t6, t16);
    let t19 = b.xor(t9, t14);
    let t20 = b.xor(t11, t16);
    let t21 = b.xor(t17, y20);
    let t22 = b.xor(t18, y19);
    let t23 = b.xor(t19, y21);
    let t24 = b.xor(t20, y18);
    let t25 = b.xor(t21, t22);
    let t26 = b.and(t21, t23);
    let t27 = b.xor(t24, t26);
    let t28 = b.and(t25, t27);
    let t29 = b.xor(t28, t22);
    let t30 = b.xor(t23, t24);
    let t31 = b.xor(t22, t26);
    let t32 = b.and(t31, t30);
    let t33 = b.xor(t32, t24);
    let t34 = b.xor(t23, t33);
    let t35 = b.xor(t27, t33);
    let t36 = b.and(t24, t35);
    let t37 = b.xor(t36, t34);
    let t38 = b.xor(t27, t36);
    let t39 = b.and(t29, t38);
    let t40 = b.xor(t25, t39);
    let t41 = b.xor(t40, t37);
    let t42 = b.xor(t29, t33);
    let t43 = b.xor(t29, t40);
    let t44 = b.xor(t33, t37);
    let t45 = b.xor(t42, t41);
    let z0 = b.and(t44, y15);
    let z1 = b.and(t37, y6);
    let z2 = b.and(t33, x7);
    let z3 = b.and(t43, y16);
    let z4 = b.and(t40, y1);
    let z5 = b.and(t29, y7);
    let z6 = b.and(t42, y11);
    let z7 = b.and(t45, y17);
    let z8 = b.and(t41, y10);
    let z9 = b.and(t44, y12);
    let z10 = b.and(t37, y3);
    let z11 = b.and(t33, y4);
    let z12 = b.and(t43, y13);
    let z13 = b.and(t40, y5);
    let z14 = b.and(t29, y2);
    let z15 = b.and(t42, y9);
    let z16 = b.and(t45, y14);
    let z17 = b.and(t41, y8);
    [
        z0, z1, z2, z3, z4, z5, z6, z7, z8, z9, z10, z11, z12, z13, z14, z15, z16, z17,
    ]
}

/// The S-box's bottom linear layer: 26 XORs and 4 XNORs (XOR then INV), from `z0..z17` to
/// the output byte, most significant bit first.
fn sbox_bottom_linear(b: &mut Builder, z: &[Bit; 18]) -> Byte {
    let [z0, z1, z2, z3, z4, z5, z6, z7, z8, z9, z10, z11, z12, z13, z14, z15, z16, z17] = *z;
    let t46 = b.xor(z15, z16);
    let t47 = b.xor(z10, z11);
    let t48 = b.xor(z5, z13);
    let t49 = b.xor(z9, z10);
    let t50 = b.xor(z2, z12);
    let t51 = b.xor(z2, z5);
    let t52 = b.xor(z7, z8);
    let t53 = b.xor(z0, z3);
    let t54 = b.xor(z6, z7);
    let t55 = b.xor(z16, z17);
    let t56 = b.xor(z12, t48);
    let t57 = b.xor(t50, t53);
    let t58 = b.xor(z4, t46);
    let t59 = b.xor(z3, t54);
    let t60 = b.xor(t46, t57);
    let t61 = b.xor(z14, t57);
    let t62 = b.xor(t52, t58);
    let t63 = b.xor(t49, t58);
    let t64 = b.xor(z4, t59);
    let t65 = b.xor(t61, t62);
    let t66 = b.xor(z1, t63);
    let s0 = b.xor(t59, t63);
    let s6 = xnor(b, t56, t62);
    let s7 = xnor(b, t48, t60);
    let t67 = b.xor(t64, t65);
    let s3 = b.xor(t53, t66);
    let s4 = b.xor(t51, t66);
    let s5 = b.xor(t47, t65);
    let s1 = xnor(b, t64, s3);
    let s2 = xnor(b, t55, t67);
    [s0, s1, s2, s3, s4, s5, s6, s7]
}

fn xnor(b: &mut Builder, p: Bit, q: Bit) -> Bit {
    let x = b.xor(p, q);
    b.not(x)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::library::testing::{check_against_reference, check_vector};
    use crate::Stats;

    /// The S-box from its definition: inversion in GF(2^8) followed by the affine map.
    fn sbox_table() -> [u8; 256] {
        fn mul(mut a: u8, mut b: u8) -> u8 {
            let mut p = 0u8;
            while b != 0 {
                if b & 1 == 1 {
                    p ^= a;
                }
                let hi = a & 0x80 != 0;
                a <<= 1;
                if hi {
                    a ^= 0x1b;
                }
                b >>= 1;
            }
            p
        }
        std::array::from_fn(|x| {
            let x = x as u8;
            let inv = (1..=255u8).find(|&y| mul(x, y) == 1).unwrap_or(0);
            inv ^ inv.rotate_left(1)
                ^ inv.rotate_left(2)
                ^ inv.rotate_left(3)
                ^ inv.rotate_left(4)
                ^ 0x63
        })
    }

    #[test]
    fn sbox_circuit_matches_the_definition_on_all_inputs() {
        let table = sbox_table();
        assert_eq!((table[0x00], table[0x53], table[0xff]), (0x63, 0xed, 0x16));
        let mut b = Builder::new();
        let x = b.input_bits(Party::Garbler, "x", 8);
        let out = sbox(&mut b, &std::array::from_fn(|i| x[i]));
        b.output_bits("s", &out);
        let c = b.build();
        let s = Stats::of(&c);
        assert_eq!((s.and, s.xor, s.inv), (32, 83, 4));
        for v in 0..=255u8 {
            let hex = format!("{v:02x}");
            assert_eq!(
                c.eval_hex(&hex, "").unwrap(),
                format!("{:02x}", table[v as usize])
            );
        }
    }

    #[test]
    fn fips_197_vectors() {
        let vectors = [
            (
                "00000000000000000000000000000000",
                "00000000000000000000000000000000",
                "66e94bd4ef8a2c3b884cfa59ca342b2e",
            ),
            // FIPS-197 Appendix C.1
            (
                "000102030405060708090a0b0c0d0e0f",
                "00112233445566778899aabbccddeeff",
                "69c4e0d86a7b0430d8cdb78070b4c55a",
            ),
            // FIPS-197 Appendix B
            (
                "2b7e151628aed2a6abf7158809cf4f3c",
                "3243f6a8885a308d313198a2e0370734",
                "3925841d02dc09fbdc118597196a0b32",
            ),
            (
                "ffffffffffffffffffffffffffffffff",
                "00000000000000000000000000000000",
                "a1f6258c877d5fcd8964484538bfc92c",
            ),
        ];
        for (key, pt, ct) in vectors {
            check_vector("aes128", key, pt, ct);
        }
    }

    #[test]
    fn gate_counts_and_encoding() {
        let c = check_against_reference("aes128", 200);
        let s = Stats::of(&c);
        assert_eq!(s.and, 6400);
        assert_eq!((s.xor, s.inv, s.and_depth), (24040, 816, 60));
        assert_eq!(
            (s.garbler_inputs, s.evaluator_inputs, s.outputs),
            (128, 128, 128)
        );
        let names: Vec<(Party, &str)> = c
            .inputs()
            .iter()
            .map(|g| (g.party, g.name.as_str()))
            .collect();
        assert_eq!(
            names,
            [(Party::Garbler, "key"), (Party::Evaluator, "plaintext")]
        );
        assert_eq!(c.outputs()[0].name, "ciphertext");
    }
}
