//! Keys of protected sessions: pre-shared keys, static X25519 key pairs and pinned public
//! keys, their files, and the checks on those files.
//!
//! # File format
//!
//! Every key file is text: lines starting with `#` are comments, and the one other
//! non-empty line is the key as 64 hexadecimal digits (32 bytes). The first line says what
//! key the file holds, one of
//!
//! ```text
//! # transputation pre-shared key
//! # transputation static private key (X25519)
//! # transputation static public key (X25519)
//! ```
//!
//! (followed by more words on the same line), as `keygen` has always written it; a file
//! of another kind than asked for (a pre-shared key as `--key`, a private key as
//! `--psk-file` or `--peer-key`) is refused, naming both kinds, and so is a file without
//! that line, with the `keygen` command that makes a proper one: the three kinds are all 64
//! hex digits, so nothing else tells them apart. A private key file and a pre-shared key
//! file are secrets: they are written with mode 0600 and refused when the group or others
//! have any access to them. A public key file (`FILE.pub` next to the private key) may be
//! shared freely; a public key may also be passed as its 64 hex digits.
//!
//! Secret bytes live in [`Zeroizing`] buffers, so they are overwritten when dropped, and no
//! type here prints them: their `Debug` shows only that a secret is there.

use std::fmt;
use std::fs::{File, OpenOptions};
use std::io::{Read, Write};
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

use zeroize::{Zeroize, Zeroizing};

/// Bytes of every key: X25519 private and public keys, pre-shared keys.
pub const KEY_LEN: usize = 32;

/// The largest key file read: comments are allowed, megabytes are not.
const MAX_KEY_FILE: u64 = 4096;

/// Why a key could not be read, parsed or written.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum KeyError {
    /// A key file to write exists already (keys are never overwritten).
    #[error(
        "{path} exists already, and a key file is never overwritten: remove it first, or \
         choose another path"
    )]
    Exists {
        /// The file.
        path: PathBuf,
    },
    /// The file could not be opened, read or written.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The operating system's error.
        #[source]
        source: std::io::Error,
    },
    /// A secret file that the group or others may access.
    #[error(
        "{path} holds a secret key but its mode is {mode:04o} (the group or others may access \
         it): run `chmod 600 {path}`"
    )]
    Permissions {
        /// The file.
        path: PathBuf,
        /// Its permission bits.
        mode: u32,
    },
    /// The file holds another kind of key than the one asked for.
    #[error("{path} holds {found}, not {expected}: {hint}")]
    WrongKind {
        /// The file.
        path: PathBuf,
        /// The kind of key in it.
        found: &'static str,
        /// The kind of key asked for.
        expected: &'static str,
        /// What to do instead.
        hint: &'static str,
    },
    /// The file or argument is not a key in the expected format.
    #[error("{source_name}: {what}")]
    Format {
        /// The file, or "the argument".
        source_name: String,
        /// What is wrong.
        what: String,
    },
    /// The system's random number generator failed.
    #[error("the system's random number generator failed")]
    Random,
}

/// The kinds of key file, told apart by their first line (see the module docs).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum KeyKind {
    Psk,
    Private,
    Public,
}

impl KeyKind {
    const ALL: [KeyKind; 3] = [KeyKind::Psk, KeyKind::Private, KeyKind::Public];

    /// The start of the first line of a file of this kind.
    fn header(self) -> &'static str {
        match self {
            KeyKind::Psk => "# transputation pre-shared key",
            KeyKind::Private => "# transputation static private key (X25519)",
            KeyKind::Public => "# transputation static public key (X25519)",
        }
    }

    /// The kind, with the flag that takes it.
    fn name(self) -> &'static str {
        match self {
            KeyKind::Psk => "a pre-shared key (for --psk-file)",
            KeyKind::Private => "a static private key (for --key)",
            KeyKind::Public => "a static public key (for --peer-key)",
        }
    }

    /// How to make a file of this kind.
    fn how_to_make(self) -> &'static str {
        match self {
            KeyKind::Psk => "make one with `transputation keygen --psk --out FILE`",
            KeyKind::Private => "make a key pair with `transputation keygen --out FILE`",
            KeyKind::Public => "pass the FILE.pub that `transputation keygen --out FILE` wrote",
        }
    }

    /// Checks that `text`, a key file's contents, starts with this kind's header.
    fn check(self, text: &[u8], path: &Path) -> Result<(), KeyError> {
        let first = text.split(|&b| b == b'\n').next().unwrap_or_default();
        let first = String::from_utf8_lossy(first);
        let first = first.trim();
        match KeyKind::ALL
            .into_iter()
            .find(|k| first.starts_with(k.header()))
        {
            Some(k) if k == self => Ok(()),
            Some(k) => Err(KeyError::WrongKind {
                path: path.to_path_buf(),
                found: k.name(),
                expected: self.name(),
                hint: self.how_to_make(),
            }),
            None => Err(KeyError::Format {
                source_name: path.display().to_string(),
                what: format!(
                    "its first line must say what key it holds, `{}` for {} (a bare key \
                     could be any kind); {}",
                    self.header(),
                    self.name(),
                    self.how_to_make()
                ),
            }),
        }
    }
}

/// A 32-byte pre-shared key, known to both parties and no one else.
pub struct Psk(Zeroizing<[u8; KEY_LEN]>);

/// This party's static X25519 key pair.
pub struct StaticKeypair {
    private: Zeroizing<[u8; KEY_LEN]>,
    public: PublicKey,
}

/// A static X25519 public key: what a party pins as its peer's identity.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct PublicKey([u8; KEY_LEN]);

impl Psk {
    /// A fresh random key from the operating system's generator.
    pub fn generate() -> Result<Self, KeyError> {
        Ok(Psk(random_key()?))
    }

    /// Wraps 32 key bytes.
    pub fn from_bytes(bytes: [u8; KEY_LEN]) -> Self {
        Psk(Zeroizing::new(bytes))
    }

    /// Reads a pre-shared key file, refusing one the group or others may access.
    pub fn read_file(path: &Path) -> Result<Self, KeyError> {
        Ok(Psk(read_secret(path, KeyKind::Psk)?))
    }

    /// Writes the key to a new file with mode 0600 (an existing file is not overwritten).
    pub fn write_file(&self, path: &Path) -> Result<(), KeyError> {
        write_secret(path, KeyKind::Psk, &self.0)
    }

    pub(crate) fn bytes(&self) -> &[u8; KEY_LEN] {
        &self.0
    }
}

impl fmt::Debug for Psk {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Psk(<secret>)")
    }
}

impl StaticKeypair {
    /// A fresh key pair from the operating system's generator.
    pub fn generate() -> Result<Self, KeyError> {
        Ok(Self::from_private(random_key()?))
    }

    /// The key pair of a private key (the public key is computed from it).
    pub fn from_private(private: Zeroizing<[u8; KEY_LEN]>) -> Self {
        let public =
            PublicKey(curve25519_dalek::MontgomeryPoint::mul_base_clamped(*private).to_bytes());
        StaticKeypair { private, public }
    }

    /// Reads a private key file (as `keygen` writes it), refusing one the group or others
    /// may access.
    pub fn read_file(path: &Path) -> Result<Self, KeyError> {
        Ok(Self::from_private(read_secret(path, KeyKind::Private)?))
    }

    /// Writes the private key to `path` (mode 0600, not overwriting) and the public key to
    /// `path` + `.pub`; returns the public key's path.
    pub fn write_files(&self, path: &Path) -> Result<PathBuf, KeyError> {
        let mut pub_path = path.as_os_str().to_owned();
        pub_path.push(".pub");
        let pub_path = PathBuf::from(pub_path);
        write_secret(path, KeyKind::Private, &self.private)?;
        let text = format!(
            "{}: give it to the peer for --peer-key\n{}\n",
            KeyKind::Public.header(),
            self.public
        );
        std::fs::write(&pub_path, text).map_err(|source| KeyError::Io {
            path: pub_path.clone(),
            source,
        })?;
        Ok(pub_path)
    }

    /// The public half, to give to the peer.
    pub fn public(&self) -> PublicKey {
        self.public
    }

    pub(crate) fn private_bytes(&self) -> &[u8; KEY_LEN] {
        &self.private
    }
}

impl fmt::Debug for StaticKeypair {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("StaticKeypair")
            .field("public", &self.public)
            .field("private", &"<secret>")
            .finish()
    }
}

impl PublicKey {
    /// Wraps 32 key bytes.
    pub fn from_bytes(bytes: [u8; KEY_LEN]) -> Self {
        PublicKey(bytes)
    }

    /// The key's bytes.
    pub fn as_bytes(&self) -> &[u8; KEY_LEN] {
        &self.0
    }

    /// A public key given as 64 hex digits, or else as the name of a file holding it.
    pub fn from_arg(arg: &str) -> Result<Self, KeyError> {
        let t = arg.trim();
        if t.len() == 2 * KEY_LEN && t.bytes().all(|b| b.is_ascii_hexdigit()) {
            let mut k = [0u8; KEY_LEN];
            parse_hex(t, &mut k, "the --peer-key argument")?;
            return Ok(PublicKey(k));
        }
        let path = Path::new(arg);
        if !path.exists() {
            return Err(KeyError::Format {
                source_name: format!("--peer-key {arg}"),
                what: "neither 64 hex digits nor an existing file".into(),
            });
        }
        let text = read_limited(path, false)?;
        KeyKind::Public.check(&text, path)?;
        let mut k = [0u8; KEY_LEN];
        parse_key_text(&text, &mut k, path)?;
        Ok(PublicKey(k))
    }
}

impl fmt::Display for PublicKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for b in self.0 {
            write!(f, "{b:02x}")?;
        }
        Ok(())
    }
}

impl fmt::Debug for PublicKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "PublicKey({self})")
    }
}

fn random_key() -> Result<Zeroizing<[u8; KEY_LEN]>, KeyError> {
    use ring::rand::SecureRandom;
    let mut k = Zeroizing::new([0u8; KEY_LEN]);
    ring::rand::SystemRandom::new()
        .fill(&mut k[..])
        .map_err(|_| KeyError::Random)?;
    Ok(k)
}

/// Reads a secret key file after checking that only its owner may access it.
fn read_secret(path: &Path, kind: KeyKind) -> Result<Zeroizing<[u8; KEY_LEN]>, KeyError> {
    let text = read_limited(path, true)?;
    kind.check(&text, path)?;
    let mut k = Zeroizing::new([0u8; KEY_LEN]);
    parse_key_text(&text, &mut k, path)?;
    Ok(k)
}

/// Reads at most [`MAX_KEY_FILE`] bytes of a file into a buffer zeroed on drop; with
/// `secret`, first refuses a file the group or others may access.
fn read_limited(path: &Path, secret: bool) -> Result<Zeroizing<Vec<u8>>, KeyError> {
    let io = |source| KeyError::Io {
        path: path.to_path_buf(),
        source,
    };
    let file = File::open(path).map_err(io)?;
    let meta = file.metadata().map_err(io)?;
    if secret {
        let mode = meta.permissions().mode() & 0o7777;
        if mode & 0o077 != 0 {
            return Err(KeyError::Permissions {
                path: path.to_path_buf(),
                mode,
            });
        }
    }
    let mut buf = Zeroizing::new(Vec::with_capacity(256));
    file.take(MAX_KEY_FILE + 1)
        .read_to_end(&mut buf)
        .map_err(io)?;
    if buf.len() as u64 > MAX_KEY_FILE {
        return Err(KeyError::Format {
            source_name: path.display().to_string(),
            what: format!("longer than {MAX_KEY_FILE} bytes: not a key file"),
        });
    }
    Ok(buf)
}

/// The one non-comment line of a key file, as 32 bytes.
fn parse_key_text(text: &[u8], out: &mut [u8; KEY_LEN], path: &Path) -> Result<(), KeyError> {
    let name = path.display().to_string();
    let format = |what: &str| KeyError::Format {
        source_name: name.clone(),
        what: what.to_string(),
    };
    let text = std::str::from_utf8(text).map_err(|_| format("not text"))?;
    let mut lines = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'));
    let line = lines
        .next()
        .ok_or_else(|| format("no key in it (expected a line of 64 hex digits)"))?;
    if lines.next().is_some() {
        return Err(format("more than one key line"));
    }
    parse_hex(line, out, &name)
}

/// Decodes exactly 64 hex digits; the error does not repeat the input (it may be secret).
fn parse_hex(s: &str, out: &mut [u8; KEY_LEN], name: &str) -> Result<(), KeyError> {
    let bad = || KeyError::Format {
        source_name: name.to_string(),
        what: format!(
            "a key is {} hex digits; this is {} characters or not hex",
            2 * KEY_LEN,
            s.len()
        ),
    };
    let b = s.as_bytes();
    if b.len() != 2 * KEY_LEN {
        return Err(bad());
    }
    let digit = |c: u8| (c as char).to_digit(16).map(|d| d as u8);
    for (i, o) in out.iter_mut().enumerate() {
        match (digit(b[2 * i]), digit(b[2 * i + 1])) {
            (Some(h), Some(l)) => *o = (h << 4) | l,
            _ => {
                out.zeroize();
                return Err(bad());
            }
        }
    }
    Ok(())
}

/// Writes a secret key as its kind's header and 64 hex digits to a new file with mode 0600.
fn write_secret(path: &Path, kind: KeyKind, key: &[u8; KEY_LEN]) -> Result<(), KeyError> {
    let io = |source| KeyError::Io {
        path: path.to_path_buf(),
        source,
    };
    let mut text = Zeroizing::new(format!("{}; keep it secret (mode 0600)\n", kind.header()));
    for b in key {
        text.push_str(&format!("{b:02x}"));
    }
    text.push('\n');
    let mut f = OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(path)
        .map_err(|e| match e.kind() {
            std::io::ErrorKind::AlreadyExists => KeyError::Exists {
                path: path.to_path_buf(),
            },
            _ => io(e),
        })?;
    // The mode given to open is filtered by the umask, which never adds bits; set it
    // exactly anyway, in case the file system ignores the creation mode.
    f.set_permissions(std::fs::Permissions::from_mode(0o600))
        .map_err(io)?;
    f.write_all(text.as_bytes()).map_err(io)?;
    f.sync_all().map_err(io)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keygen_round_trip_and_modes() {
        let dir = std::env::temp_dir().join(format!("tp-keys-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir(&dir).unwrap();
        let kp = StaticKeypair::generate().unwrap();
        let path = dir.join("k");
        let pub_path = kp.write_files(&path).unwrap();
        let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
        let back = StaticKeypair::read_file(&path).unwrap();
        assert_eq!(back.public(), kp.public());
        assert_eq!(back.private_bytes(), kp.private_bytes());
        assert_eq!(
            PublicKey::from_arg(pub_path.to_str().unwrap()).unwrap(),
            kp.public()
        );
        assert_eq!(
            PublicKey::from_arg(&kp.public().to_string()).unwrap(),
            kp.public()
        );
        // Never overwrite.
        let e = kp.write_files(&path).unwrap_err();
        assert!(matches!(e, KeyError::Exists { .. }), "{e}");
        assert!(e.to_string().contains("remove it"), "{e}");
        // Refused once others may read it, with the fix in the message.
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o640)).unwrap();
        let e = StaticKeypair::read_file(&path).unwrap_err().to_string();
        assert!(e.contains("chmod 600") && e.contains("0640"), "{e}");
        // A public key file is not a secret.
        std::fs::set_permissions(&pub_path, std::fs::Permissions::from_mode(0o644)).unwrap();
        assert!(PublicKey::from_arg(pub_path.to_str().unwrap()).is_ok());

        let psk = Psk::generate().unwrap();
        let p = dir.join("psk");
        psk.write_file(&p).unwrap();
        assert_eq!(Psk::read_file(&p).unwrap().bytes(), psk.bytes());
        assert_eq!(format!("{psk:?}"), "Psk(<secret>)");
        assert!(!format!("{kp:?}").contains(&hex(kp.private_bytes())));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    fn hex(b: &[u8]) -> String {
        b.iter().map(|b| format!("{b:02x}")).collect()
    }

    #[test]
    fn bad_key_text_is_named_not_echoed() {
        let p = Path::new("f");
        let mut k = [0u8; KEY_LEN];
        for text in [
            "",
            "# only a comment\n",
            "abcd\n",
            &"g".repeat(64),
            &format!("{}\n{}\n", "0".repeat(64), "1".repeat(64)),
        ] {
            let e = parse_key_text(text.as_bytes(), &mut k, p).unwrap_err();
            assert!(!e.to_string().contains(&"g".repeat(64)), "{e}");
        }
        parse_key_text(format!("# c\n {}\n", "ab".repeat(32)).as_bytes(), &mut k, p).unwrap();
        assert_eq!(k, [0xab; KEY_LEN]);
        assert!(PublicKey::from_arg("/nonexistent/key.pub").is_err());
    }

    #[test]
    fn a_key_file_of_another_kind_is_refused() {
        let dir = std::env::temp_dir().join(format!("tp-key-kinds-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir(&dir).unwrap();
        let psk = dir.join("psk");
        Psk::generate().unwrap().write_file(&psk).unwrap();
        let private = dir.join("k");
        let public = StaticKeypair::generate()
            .unwrap()
            .write_files(&private)
            .unwrap();
        let e = StaticKeypair::read_file(&psk).unwrap_err().to_string();
        assert!(
            e.contains("holds a pre-shared key") && e.contains("--key"),
            "{e}"
        );
        let e = Psk::read_file(&private).unwrap_err().to_string();
        assert!(
            e.contains("holds a static private key") && e.contains("keygen --psk"),
            "{e}"
        );
        let e = PublicKey::from_arg(private.to_str().unwrap()).unwrap_err();
        assert!(matches!(e, KeyError::WrongKind { .. }), "{e}");
        // A public key file is refused as a secret for its kind, not only for its mode
        // (which the umask decides).
        std::fs::set_permissions(&public, std::fs::Permissions::from_mode(0o600)).unwrap();
        let e = Psk::read_file(&public).unwrap_err();
        assert!(
            matches!(e, KeyError::WrongKind { .. })
                && e.to_string().contains("holds a static public key"),
            "{e}"
        );
        // A bare key says nothing of its kind: refused, with the way to make a proper one.
        let bare = dir.join("bare");
        write_bare(&bare, &"ab".repeat(32));
        let e = Psk::read_file(&bare).unwrap_err().to_string();
        assert!(
            e.contains("# transputation pre-shared key") && e.contains("keygen"),
            "{e}"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    fn write_bare(path: &Path, text: &str) {
        let mut f = OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(path)
            .unwrap();
        f.write_all(text.as_bytes()).unwrap();
    }

    #[test]
    fn the_public_key_matches_x25519() {
        // RFC 7748 §6.1: Alice's private key and public key.
        let mut private = [0u8; KEY_LEN];
        parse_hex(
            "77076d0a7318a57d3c16c17251b26645df4c2f87ebc0992ab177fba51db92c2a",
            &mut private,
            "t",
        )
        .unwrap();
        let kp = StaticKeypair::from_private(Zeroizing::new(private));
        assert_eq!(
            kp.public().to_string(),
            "8520f0098930a754748b7ddcb43ef75a0dbf3a0d26381af4eba4a98eaa9b4e6a"
        );
    }
}
