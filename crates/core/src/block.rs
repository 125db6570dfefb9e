//! The 128-bit block: wire labels, AES inputs and outputs, table entries.
//!
//! A [`Block`] is a `u128` whose little-endian bytes are the 16 bytes of the AES block, so
//! byte 0 is the lowest-addressed byte (docs/garbling.md §1.1), and `lsb` (bit 0 of byte 0) is
//! the lowest bit of the integer. XOR compiles to one vector instruction.

use std::fmt;
use std::ops::{BitAnd, BitXor, BitXorAssign};

/// A 128-bit block; see the module documentation.
#[derive(Clone, Copy, Default, PartialEq, Eq, Hash)]
#[repr(transparent)]
pub struct Block(pub u128);

impl Block {
    /// The all-zero block.
    pub const ZERO: Block = Block(0);
    /// The all-one block.
    pub const ONES: Block = Block(u128::MAX);
    /// Size in bytes.
    pub const SIZE: usize = 16;

    /// From the 16 bytes of an AES block, byte 0 first.
    #[inline]
    pub const fn from_bytes(bytes: [u8; 16]) -> Block {
        Block(u128::from_le_bytes(bytes))
    }

    /// The 16 bytes, byte 0 first.
    #[inline]
    pub const fn to_bytes(self) -> [u8; 16] {
        self.0.to_le_bytes()
    }

    /// Reads a block from the first 16 bytes of `bytes`.
    ///
    /// # Panics
    /// If `bytes` is shorter than 16 bytes.
    #[inline]
    pub fn read(bytes: &[u8]) -> Block {
        let mut b = [0u8; 16];
        b.copy_from_slice(&bytes[..16]);
        Block::from_bytes(b)
    }

    /// Bit 0 of byte 0: the point-and-permute bit of a label.
    #[inline(always)]
    pub const fn lsb(self) -> bool {
        self.0 & 1 == 1
    }

    /// This block with bit 0 of byte 0 set to `bit` (no other bit touched).
    #[inline(always)]
    pub const fn with_lsb(self, bit: bool) -> Block {
        Block((self.0 & !1) | bit as u128)
    }

    /// `self` if `bit`, else zero (constant time).
    #[inline(always)]
    pub const fn select(self, bit: bool) -> Block {
        Block(self.0 & (bit as u128).wrapping_neg())
    }

    /// Parses 32 hex digits, byte 0 first (the order of the known-answer vectors,
    /// docs/garbling.md §8).
    ///
    /// # Panics
    /// If `hex` is not 32 hex digits; meant for constants and tests.
    pub fn from_hex(hex: &str) -> Block {
        assert_eq!(hex.len(), 32, "a block is 32 hex digits");
        let mut b = [0u8; 16];
        for (i, byte) in b.iter_mut().enumerate() {
            *byte = u8::from_str_radix(&hex[2 * i..2 * i + 2], 16).expect("hex digits");
        }
        Block::from_bytes(b)
    }
}

impl BitXor for Block {
    type Output = Block;
    #[inline(always)]
    fn bitxor(self, rhs: Block) -> Block {
        Block(self.0 ^ rhs.0)
    }
}

impl BitXorAssign for Block {
    #[inline(always)]
    fn bitxor_assign(&mut self, rhs: Block) {
        self.0 ^= rhs.0;
    }
}

impl BitAnd for Block {
    type Output = Block;
    #[inline(always)]
    fn bitand(self, rhs: Block) -> Block {
        Block(self.0 & rhs.0)
    }
}

impl fmt::Debug for Block {
    /// Hex, byte 0 first.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for b in self.to_bytes() {
            write!(f, "{b:02x}")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn byte_order_and_lsb() {
        let b = Block::from_hex("000102030405060708090a0b0c0d0e0f");
        assert_eq!(b.to_bytes()[1], 1);
        assert_eq!(format!("{b:?}"), "000102030405060708090a0b0c0d0e0f");
        assert!(!b.lsb());
        assert!(b.with_lsb(true).lsb());
        assert_eq!(b.with_lsb(true).to_bytes()[0], 1);
        assert_eq!(b.select(true), b);
        assert_eq!(b.select(false), Block::ZERO);
    }
}
