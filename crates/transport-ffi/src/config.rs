//! `tp_config`: timeouts, retries, buffer sizes and the message limit, as a plain C struct
//! in which a field left 0 takes its default, so `tp_config cfg = {0};` is a valid start.

use std::time::Duration;

use transputation_transport::{Config, DEFAULT_MAX_MESSAGE};

use crate::status::Failure;

/// Settings for `tp_listen` and `tp_connect`. Every field left 0 takes its default (the
/// value `tp_config_default()` shows), so `tp_config cfg = {0};` followed by the fields you
/// care about is the intended use. Passing NULL instead of a `tp_config*` means all
/// defaults.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct tp_config {
    /// Longest wait for any progress when sending, receiving or accepting, in
    /// milliseconds (default 30000).
    pub io_timeout_ms: u64,
    /// Longest wait for a connection, in milliseconds (default 5000): `tp_connect` gives
    /// up after this or `connect_attempts` × `retry_delay_ms`, whichever is longer.
    pub connect_timeout_ms: u64,
    /// Connection attempts before `tp_connect` gives up (default 50); a refused attempt is
    /// retried after `retry_delay_ms`, so a client may start before its server.
    pub connect_attempts: u32,
    /// Pause between connection attempts, in milliseconds (default 100).
    pub retry_delay_ms: u32,
    /// Bytes of buffering per direction the transport should use (kernel socket buffers
    /// for tcp, mtcp and udp); default: the transport's own. An option in the transport
    /// string that sets a buffer wins over this.
    pub buffer_bytes: u64,
    /// The largest message `tp_send_message` sends and `tp_recv_message` accepts, in bytes
    /// (default 67108864, 64 MiB).
    pub max_message: u64,
}

/// The defaults that a zero field of `tp_config` stands for, written out.
#[no_mangle]
pub extern "C" fn tp_config_default() -> tp_config {
    let d = Config::default();
    tp_config {
        io_timeout_ms: millis(d.io_timeout),
        connect_timeout_ms: millis(d.connect_timeout),
        connect_attempts: d.connect_attempts,
        retry_delay_ms: u32::try_from(d.retry_delay.as_millis()).unwrap_or(u32::MAX),
        buffer_bytes: d.buffer_bytes.map_or(0, |b| b as u64),
        max_message: DEFAULT_MAX_MESSAGE,
    }
}

fn millis(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

/// What a `tp_config` means for the transport crate.
#[derive(Debug, Clone)]
pub(crate) struct Settings {
    pub(crate) config: Config,
    pub(crate) max_message: u64,
}

impl tp_config {
    /// The settings, zero fields replaced by defaults.
    pub(crate) fn settings(&self) -> Result<Settings, Failure> {
        let mut config = Config::default();
        let ms = Duration::from_millis;
        if self.io_timeout_ms != 0 {
            config.io_timeout = ms(self.io_timeout_ms);
        }
        if self.connect_timeout_ms != 0 {
            config.connect_timeout = ms(self.connect_timeout_ms);
        }
        if self.connect_attempts != 0 {
            config.connect_attempts = self.connect_attempts;
        }
        if self.retry_delay_ms != 0 {
            config.retry_delay = ms(self.retry_delay_ms.into());
        }
        if self.buffer_bytes != 0 {
            config.buffer_bytes = Some(usize::try_from(self.buffer_bytes).map_err(|_| {
                Failure::invalid(format!(
                    "buffer_bytes {} does not fit this machine's address space",
                    self.buffer_bytes
                ))
            })?);
        }
        let max_message = match self.max_message {
            0 => DEFAULT_MAX_MESSAGE,
            m => m,
        };
        Ok(Settings {
            config,
            max_message,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zero_fields_take_the_defaults() {
        let zero = tp_config::default().settings().unwrap();
        let explicit = tp_config_default().settings().unwrap();
        for s in [zero, explicit] {
            let d = Config::default();
            assert_eq!(s.config.io_timeout, d.io_timeout);
            assert_eq!(s.config.connect_timeout, d.connect_timeout);
            assert_eq!(s.config.connect_attempts, d.connect_attempts);
            assert_eq!(s.config.retry_delay, d.retry_delay);
            assert_eq!(s.config.buffer_bytes, d.buffer_bytes);
            assert_eq!(s.max_message, DEFAULT_MAX_MESSAGE);
        }
    }

    #[test]
    fn set_fields_are_used() {
        let c = tp_config {
            io_timeout_ms: 1500,
            connect_timeout_ms: 20,
            connect_attempts: 3,
            retry_delay_ms: 7,
            buffer_bytes: 1 << 20,
            max_message: 10,
        };
        let s = c.settings().unwrap();
        assert_eq!(s.config.io_timeout, Duration::from_millis(1500));
        assert_eq!(s.config.connect_timeout, Duration::from_millis(20));
        assert_eq!(s.config.connect_attempts, 3);
        assert_eq!(s.config.retry_delay, Duration::from_millis(7));
        assert_eq!(s.config.buffer_bytes, Some(1 << 20));
        assert_eq!(s.max_message, 10);
    }
}
