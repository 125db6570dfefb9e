//! The record layer, without I/O: sealing and opening records with AEGIS-128X4.
//!
//! # Wire format of one record
//!
//! ```text
//! +-------------------------+---------------------+----------------------+
//! | sealed header (4 + 16)  | body (len bytes)    | body tag (16)        |
//! +-------------------------+---------------------+----------------------+
//! header plaintext: kind (1 byte: 0 data, 1 close) | len (3 bytes, big-endian)
//! ```
//!
//! Each direction has its own key and a record counter `n`, starting at 0 and never sent.
//! The key is HKDF-SHA256-Expand(k, "transputation record key v3 aegis-128x4", 16 bytes),
//! where k is that direction's 32-byte half of the Noise handshake's split (a pseudorandom
//! key, so it serves as HKDF's PRK). The header is sealed with the 16-byte nonce
//! `01 ‖ 0^7 ‖ n` (n big-endian, 64 bits) and no associated data; the body with nonce
//! `00 ‖ 0^7 ‖ n` and the header's plaintext as associated data. Both nonces are unique per
//! key, which is all AEGIS asks (like GCM, it must never see a nonce twice under one key);
//! and because the receiver computes `n` itself, a record that was replayed, reordered,
//! dropped or moved to the other direction fails its tag.
//!
//! Why AEGIS-128X4 (the 4-way parallel AEGIS-128L of IRTF CFRG draft-irtf-cfrg-aegis-aead,
//! §5 "AEGIS-128X"; AEGIS-128L is Wu and Preneel's, CAESAR portfolio for high-performance
//! applications; the tests check the draft's test vectors) with 128-bit tags: a protected
//! session seals and opens every garbled table, and on this machine class AEGIS-128X4 does
//! so at about 42 GB/s, AEGIS-128L at 16 and AES-128-GCM (ring, with VAES) at 7–10, 44 MiB
//! in 1 MiB records on one thread (1.05 ms against 2.75 ms for AEGIS-128L). The CPU that
//! protection takes is what its cost in wall time is made of, since both parties keep both
//! cores busy (docs/BENCHMARKS.md, protected sessions). AEGIS is built from the AES round
//! function alone; AEGIS-128X runs several AEGIS-128L states side by side (one per
//! 128-bit lane of VAES registers) with the same security claims (128-bit key and state
//! recovery, forgery probability 2^-128 per attempt with 128-bit tags, nonce-respecting).
//! The `aegis` crate (libaegis, by one of the draft's authors) picks AES-NI, AVX2 or
//! AVX-512 VAES code at run time.
//!
//! Why seal the header apart: the receiver learns an authenticated length before it reads
//! the body. A flipped bit in a length field is then a clear error at once, never a wait
//! for bytes that will not come (which would end only in a timeout), and an oversized
//! length is refused before anything is allocated. It costs 16 bytes and one short AEAD
//! call per record (as the encrypted lengths of SSH's chacha20-poly1305 do).
//!
//! A `close` record (empty body) is the authenticated end of the stream: a stream that
//! ends without one was cut short, and the receiver says so.

use aegis::aegis128x4::Aegis128X4;
use ring::hkdf;
use zeroize::Zeroizing;

/// The most plaintext bytes in one record: large enough that the per-record cost (two
/// AEAD calls, 36 bytes, a system call) vanishes next to the bytes and that a batch of
/// garbled tables (256 KiB and up to one garbling window more) is one record, small enough
/// that a record stays in a core's L2 cache (1 MiB on the machine class measured) between
/// copying and encrypting it.
pub const MAX_RECORD: usize = 1 << 20;
/// Bytes of a sealed header: 4 of header, 16 of tag.
pub const SEALED_HEADER: usize = 4 + TAG;
/// Bytes of a tag (AEGIS-128X4 with 128-bit tags).
pub const TAG: usize = 16;
/// HKDF's info when deriving a record key.
const RECORD_KEY_LABEL: &[u8] = b"transputation record key v3 aegis-128x4";

/// The HKDF label of a lane's 32-byte key, followed by the lane's index (4 bytes,
/// big-endian).
const LANE_KEY_LABEL: &[u8] = b"transputation lane key v1";

/// Lane `lane`'s 32-byte key of one direction: HKDF-SHA256-Expand(k, label ‖ lane, 32),
/// `k` that direction's half of the handshake's split. A lane's records are sealed under
/// the record key derived from it as from `k` (above), with counters of their own from 0:
/// distinct HKDF inputs give independent keys (HKDF's expand is a PRF keyed by `k`), so no
/// nonce repeats under any key, and a record moved from one lane (or the first channel) to
/// another fails its tag.
pub fn lane_key(k: &Zeroizing<[u8; 32]>, lane: u32) -> Zeroizing<[u8; 32]> {
    let prk = hkdf::Prk::new_less_safe(hkdf::HKDF_SHA256, &k[..]);
    let index = lane.to_be_bytes();
    let mut key = Zeroizing::new([0u8; 32]);
    prk.expand(&[LANE_KEY_LABEL, &index], LaneKeyLen)
        .and_then(|okm| okm.fill(&mut key[..]))
        .expect("32 bytes are within HKDF's limit");
    key
}

/// The HKDF output length of a lane key.
struct LaneKeyLen;

impl hkdf::KeyType for LaneKeyLen {
    fn len(&self) -> usize {
        32
    }
}

/// What a record carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// Bytes of the stream.
    Data,
    /// The authenticated end of the stream; its body is empty.
    Close,
}

impl Kind {
    fn byte(self) -> u8 {
        match self {
            Kind::Data => 0,
            Kind::Close => 1,
        }
    }
}

/// Why a record was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RecordError {
    /// The sealed header failed its tag: altered, replayed, reordered or not ours.
    Header,
    /// The body failed its tag.
    Body,
    /// An authenticated header that breaks the format (unknown kind, a close with a body,
    /// a length over [`MAX_RECORD`]): only a broken peer sends it.
    Format(String),
    /// 2^64 records: the counter would repeat a nonce.
    Exhausted,
}

/// One direction's key and counter.
struct Direction {
    key: Zeroizing<[u8; 16]>,
    counter: u64,
}

/// The HKDF output length of a record key.
struct KeyLen;

impl hkdf::KeyType for KeyLen {
    fn len(&self) -> usize {
        16
    }
}

impl Direction {
    fn new(key: &Zeroizing<[u8; 32]>) -> Self {
        let prk = hkdf::Prk::new_less_safe(hkdf::HKDF_SHA256, &key[..]);
        let mut record_key = Zeroizing::new([0u8; 16]);
        prk.expand(&[RECORD_KEY_LABEL], KeyLen)
            .and_then(|okm| okm.fill(&mut record_key[..]))
            .expect("16 bytes are within HKDF's limit");
        Direction {
            key: record_key,
            counter: 0,
        }
    }

    /// The nonces of the next record's header and body.
    fn nonces(&self) -> Result<([u8; 16], [u8; 16]), RecordError> {
        if self.counter == u64::MAX {
            return Err(RecordError::Exhausted);
        }
        let mut b = [0u8; 16];
        b[8..].copy_from_slice(&self.counter.to_be_bytes());
        let mut h = b;
        h[0] = 1;
        Ok((h, b))
    }

    fn cipher(&self, nonce: &[u8; 16]) -> Aegis128X4<TAG> {
        Aegis128X4::new(&self.key, nonce)
    }
}

/// Seals the records of the sending direction.
pub struct Sealer(Direction);

/// Opens the records of the receiving direction, in order.
pub struct Opener(Direction);

impl Sealer {
    /// The sealer of a direction's 32-byte key.
    pub fn new(key: &Zeroizing<[u8; 32]>) -> Self {
        Sealer(Direction::new(key))
    }

    /// Seals the record in `buf` in place: on entry, [`SEALED_HEADER`] bytes of room, then
    /// `len` (at most [`MAX_RECORD`]) bytes of plaintext, then at least [`TAG`] bytes of
    /// room; on return, the whole record, tag appended. Returns its length,
    /// `SEALED_HEADER + len + TAG`.
    ///
    /// # Panics
    /// If `len` is over [`MAX_RECORD`], a close record has a body, or `buf` is too short.
    pub fn seal(&mut self, kind: Kind, buf: &mut [u8], len: usize) -> Result<usize, RecordError> {
        let (header, nb) = self.start(kind, len)?;
        let (head, rest) = buf.split_at_mut(SEALED_HEADER);
        let (body, tail) = rest.split_at_mut(len);
        let body_tag = self.0.cipher(&nb).encrypt_in_place(body, &header);
        self.finish(header, head, tail, body_tag)?;
        Ok(SEALED_HEADER + len + TAG)
    }

    /// As [`Sealer::seal`] with the plaintext taken from `plaintext` rather than from
    /// `buf`: the body is encrypted straight into `buf` (one pass over the bytes instead of a
    /// copy and then an encryption in place). `buf` needs `SEALED_HEADER + len + TAG` bytes.
    ///
    /// # Panics
    /// As [`Sealer::seal`].
    pub fn seal_from(
        &mut self,
        kind: Kind,
        plaintext: &[u8],
        buf: &mut [u8],
    ) -> Result<usize, RecordError> {
        let len = plaintext.len();
        let (header, nb) = self.start(kind, len)?;
        let (head, rest) = buf.split_at_mut(SEALED_HEADER);
        let (body, tail) = rest.split_at_mut(len);
        let mut enc = self.0.cipher(&nb).encryptor(&header);
        enc.update(plaintext, body);
        self.finish(header, head, tail, enc.finalize())?;
        Ok(SEALED_HEADER + len + TAG)
    }

    /// The next record's header plaintext and body nonce.
    fn start(&self, kind: Kind, len: usize) -> Result<([u8; 4], [u8; 16]), RecordError> {
        assert!(len <= MAX_RECORD && (kind == Kind::Data || len == 0));
        let (_, nb) = self.0.nonces()?;
        Ok((
            [kind.byte(), (len >> 16) as u8, (len >> 8) as u8, len as u8],
            nb,
        ))
    }

    /// Seals the header into `head`, puts the body's tag at the start of `tail`, and moves
    /// on to the next record.
    fn finish(
        &mut self,
        header: [u8; 4],
        head: &mut [u8],
        tail: &mut [u8],
        body_tag: [u8; TAG],
    ) -> Result<(), RecordError> {
        let (nh, _) = self.0.nonces()?;
        head[..4].copy_from_slice(&header);
        let head_tag = self.0.cipher(&nh).encrypt_in_place(&mut head[..4], &[]);
        head[4..].copy_from_slice(&head_tag);
        tail[..TAG].copy_from_slice(&body_tag);
        self.0.counter += 1;
        Ok(())
    }
}

impl Opener {
    /// The opener of a direction's 32-byte key.
    pub fn new(key: &Zeroizing<[u8; 32]>) -> Self {
        Opener(Direction::new(key))
    }

    /// Opens the next record's sealed header: its kind and body length.
    pub fn open_header(
        &mut self,
        sealed: &[u8; SEALED_HEADER],
    ) -> Result<(Kind, usize), RecordError> {
        let (nh, _) = self.0.nonces()?;
        let mut h = [0u8; 4];
        h.copy_from_slice(&sealed[..4]);
        let tag: [u8; TAG] = sealed[4..].try_into().expect("16 bytes");
        self.0
            .cipher(&nh)
            .decrypt_in_place(&mut h, &tag, &[])
            .map_err(|_| RecordError::Header)?;
        let len = usize::from(h[1]) << 16 | usize::from(h[2]) << 8 | usize::from(h[3]);
        let kind = match h[0] {
            0 => Kind::Data,
            1 if len == 0 => Kind::Close,
            1 => {
                return Err(RecordError::Format(format!(
                    "a close record with {len} bytes"
                )))
            }
            k => return Err(RecordError::Format(format!("unknown record kind {k}"))),
        };
        if len > MAX_RECORD {
            return Err(RecordError::Format(format!(
                "a record of {len} bytes, more than the maximum of {MAX_RECORD}"
            )));
        }
        Ok((kind, len))
    }

    /// Opens the body of the record whose header [`Opener::open_header`] just opened, in
    /// place, and moves on to the next record. On error, `body` holds no plaintext to use.
    pub fn open_body(
        &mut self,
        kind: Kind,
        body: &mut [u8],
        tag: &[u8; TAG],
    ) -> Result<(), RecordError> {
        let (_, nb) = self.0.nonces()?;
        let len = body.len();
        let header = [kind.byte(), (len >> 16) as u8, (len >> 8) as u8, len as u8];
        self.0
            .cipher(&nb)
            .decrypt_in_place(body, tag, &header)
            .map_err(|_| RecordError::Body)?;
        self.0.counter += 1;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn pair() -> (Sealer, Opener) {
        let k = Zeroizing::new([7u8; 32]);
        (Sealer::new(&k), Opener::new(&k))
    }

    fn sealed(s: &mut Sealer, kind: Kind, data: &[u8]) -> Vec<u8> {
        let mut r = vec![0u8; SEALED_HEADER];
        r.extend_from_slice(data);
        r.resize(r.len() + TAG, 0);
        let n = s.seal(kind, &mut r, data.len()).unwrap();
        assert_eq!(n, r.len());
        r
    }

    /// `seal_from` gives the very bytes of `seal`: same record, same counter step.
    #[test]
    fn sealing_from_a_slice_equals_sealing_in_place() {
        let k = Zeroizing::new([9u8; 32]);
        let (mut a, mut b) = (Sealer::new(&k), Sealer::new(&k));
        for len in [0, 1, 15, 16, 17, 255, 4096, 100_003] {
            let data: Vec<u8> = (0..len).map(|i| (i * 7 + 3) as u8).collect();
            let in_place = sealed(&mut a, Kind::Data, &data);
            let mut buf = vec![0xa5u8; SEALED_HEADER + len + TAG + 5];
            let n = b.seal_from(Kind::Data, &data, &mut buf).unwrap();
            assert_eq!(&buf[..n], &in_place[..], "{len} bytes");
        }
    }

    /// Opens one whole record from `r`.
    fn open(o: &mut Opener, r: &[u8]) -> Result<(Kind, Vec<u8>), RecordError> {
        if r.len() < SEALED_HEADER + TAG {
            return Err(RecordError::Format("short".into()));
        }
        let (kind, len) = o.open_header(r[..SEALED_HEADER].try_into().unwrap())?;
        if r.len() != SEALED_HEADER + len + TAG {
            return Err(RecordError::Format("length".into()));
        }
        let mut body = r[SEALED_HEADER..SEALED_HEADER + len].to_vec();
        o.open_body(
            kind,
            &mut body,
            r[SEALED_HEADER + len..].try_into().unwrap(),
        )?;
        Ok((kind, body))
    }

    fn hex(s: &str) -> Vec<u8> {
        (0..s.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
            .collect()
    }

    /// AEGIS-128X4 against draft-irtf-cfrg-aegis-aead, Appendix A.5 (AEGIS-128X4 test
    /// vectors 1 and 2 with 128-bit tags, as in the CFRG repository's test-vector files),
    /// and a forged tag.
    #[test]
    fn aegis_128x4_known_answers() {
        let key: [u8; 16] = hex("000102030405060708090a0b0c0d0e0f").try_into().unwrap();
        let nonce: [u8; 16] = hex("101112131415161718191a1b1c1d1e1f").try_into().unwrap();
        let msg2 = "04050607".repeat(30);
        let cases = [
            ("", "", "", "5bef762d0947c00455b97bb3af30dfa3"),
            (
                "0102030401020304",
                msg2.as_str(),
                "e836118562f4479c9d35c17356a833114c21f9aa39e4dda5e5c87f4152a00fce\
                 9a7c38f832eafe8b1c12f8a7cf12a81a1ad8a9c24ba9dedfbdaa586ffea67ddc\
                 801ea97d9ab4a872f42d0e352e2713dacd609f9442c17517c5a29daf3e2a3fac\
                 4ff6b1380c4e46df7b086af6ce6bc1ed594b8dd64aed2a7e",
                "0e56ab94e2e85db80f9d54010caabfb4",
            ),
        ];
        for (ad, msg, ct, tag) in cases {
            let (ad, want_ct, want_tag) = (hex(ad), hex(ct), hex(tag));
            let mut buf = hex(msg);
            let got = Aegis128X4::<TAG>::new(&key, &nonce).encrypt_in_place(&mut buf, &ad);
            assert_eq!(
                (buf.clone(), got.to_vec()),
                (want_ct.clone(), want_tag.clone())
            );
            Aegis128X4::<TAG>::new(&key, &nonce)
                .decrypt_in_place(&mut buf, &got, &ad)
                .unwrap();
            assert_eq!(buf, hex(msg));
            let mut forged = got;
            forged[15] ^= 1;
            let mut buf = want_ct;
            assert!(Aegis128X4::<TAG>::new(&key, &nonce)
                .decrypt_in_place(&mut buf, &forged, &ad)
                .is_err());
        }
    }

    #[test]
    fn lane_keys_differ_by_lane_and_direction() {
        let k = Zeroizing::new([7u8; 32]);
        let other = Zeroizing::new([8u8; 32]);
        let (a, b) = (lane_key(&k, 0), lane_key(&k, 1));
        assert_ne!(*a, *b);
        assert_ne!(*a, *lane_key(&other, 0));
        assert_eq!(*a, *lane_key(&k, 0));
        // A record sealed on lane 0 does not open on lane 1 or on the first channel.
        let mut s0 = Sealer::new(&a);
        let r = sealed(&mut s0, Kind::Data, b"tables");
        assert!(open(&mut Opener::new(&b), &r).is_err());
        assert!(open(&mut Opener::new(&k), &r).is_err());
        assert_eq!(open(&mut Opener::new(&a), &r).unwrap().1, b"tables");
    }

    #[test]
    fn round_trip_in_order() {
        let (mut s, mut o) = pair();
        let a = sealed(&mut s, Kind::Data, b"garbled tables");
        let b = sealed(&mut s, Kind::Data, &[]);
        let c = sealed(&mut s, Kind::Close, &[]);
        assert_eq!(a.len(), SEALED_HEADER + 14 + TAG);
        assert_ne!(&a[SEALED_HEADER..SEALED_HEADER + 14], b"garbled tables");
        assert_eq!(
            open(&mut o, &a).unwrap(),
            (Kind::Data, b"garbled tables".to_vec())
        );
        assert_eq!(open(&mut o, &b).unwrap(), (Kind::Data, vec![]));
        assert_eq!(open(&mut o, &c).unwrap(), (Kind::Close, vec![]));
    }

    #[test]
    fn every_flipped_bit_is_refused() {
        let (mut s, _) = pair();
        let r = sealed(&mut s, Kind::Data, &[0x5a; 40]);
        for i in 0..r.len() * 8 {
            let mut bad = r.clone();
            bad[i / 8] ^= 1 << (i % 8);
            let (_, mut o) = pair();
            assert!(open(&mut o, &bad).is_err(), "bit {i}");
        }
    }

    #[test]
    fn replay_reorder_and_drop_are_refused() {
        let (mut s, mut o) = pair();
        let a = sealed(&mut s, Kind::Data, b"one");
        let b = sealed(&mut s, Kind::Data, b"two");
        // b before a: b's nonce is 1, the opener expects 0.
        assert_eq!(open(&mut o, &b), Err(RecordError::Header));
        let (_, mut o) = pair();
        open(&mut o, &a).unwrap();
        assert_eq!(open(&mut o, &a), Err(RecordError::Header), "replayed");
        // A record from the other direction (another key) is not accepted either.
        let mut other = Sealer::new(&Zeroizing::new([8u8; 32]));
        let (_, mut o) = pair();
        assert_eq!(
            open(&mut o, &sealed(&mut other, Kind::Data, b"x")),
            Err(RecordError::Header)
        );
    }

    #[test]
    fn the_largest_record_and_beyond() {
        let (mut s, mut o) = pair();
        let r = sealed(&mut s, Kind::Data, &vec![1u8; MAX_RECORD]);
        assert_eq!(open(&mut o, &r).unwrap().1.len(), MAX_RECORD);
    }

    proptest! {
        #[test]
        fn arbitrary_bytes_never_open_or_panic(bytes in proptest::collection::vec(any::<u8>(), 0..200)) {
            let (_, mut o) = pair();
            prop_assert!(open(&mut o, &bytes).is_err());
        }

        #[test]
        fn arbitrary_headers_never_panic(h in proptest::collection::vec(any::<u8>(), SEALED_HEADER)) {
            let (_, mut o) = pair();
            prop_assert!(o.open_header(h[..].try_into().unwrap()).is_err());
        }
    }
}
