//! The UDP probe: round-trip time, loss rate and bottleneck bandwidth of a path, measured
//! by a [`serve`]r at one end and a prober ([`probe`], or the few-round-trip
//! [`probe_quick`]) at the other. A library so that the `transputation probe` command, the
//! testbed's link checks (which bind the two sockets inside two network namespaces and
//! call these functions on threads) and a party choosing its transport share one
//! protocol. [`ProbeCache`] keeps recent peers' measurements so that repeated sessions
//! need not probe again.
//!
//! Wire protocol (UDP, every packet starts with the same 24 bytes): `b"TPPR"`, a kind byte
//! (1 ping, 2 pong, 3 train packet, 4 report request, 5 report), a flags byte (0, but in
//! a report bit 0 says that the server timed the train's arrivals by the kernel's receive
//! times; a server that predates it sends 0 and a prober that predates it ignores it), two
//! zero bytes, the client's session number (u64), a sequence number (u32) and a count
//! (u32), big-endian.
//! The server echoes a ping as a pong (the whole packet: [`probe_quick`] puts its send
//! time in it), records the train packets of each session (the last 8 sessions; a train
//! packet's count is its train's length) with their arrival times, and answers a report
//! request with the number of train packets it got (u32), a span of arrival times (u64 ns)
//! and the IP bytes (UDP payload plus IP and UDP headers) that arrived in it after its
//! first packet (u64). Bandwidth is those bytes over that span (train dispersion): the
//! rate of the narrowest link, if the sender is faster than it.
//!
//! The report may go on with an extension: `b"EXT1"`, the span timed by prompt reads
//! (u64 ns, see below) and its bytes (u64), then an arrival map: the number of packets m
//! it covers (u32, the train's length, at most [`MAP_MAX_PACKETS`]) and ⌈m/8⌉ bytes whose
//! bit i (most significant first) says whether train packet i arrived. The server adds
//! it only if the request is at least as long as the report with it (a prober pads its
//! request), so the server never answers a datagram, whose source may be forged, with a
//! larger one. This keeps both directions compatible: a server that predates it sends the
//! 44-byte report alone (the prober then judges loss by the count and takes the fixed
//! part's span), and a prober that predates it sends a 24-byte request and gets the same
//! 44 bytes as ever.
//!
//! The map separates random loss from a queue's overflow: a train sent back to back
//! faster than the bottleneck drains fills the bottleneck's queue, which then drops most
//! of the rest, and counting those drops as the path's loss would make a clean path with
//! a short queue look lossy. A run of heavy loss to the train's end is taken as overflow
//! and left out of the loss evidence ([`Measurement::loss_evidence`],
//! [`Measurement::overflow_packets`]; the rule is in [`loss`]). The plain
//! [`Measurement::loss_rate`] still counts every loss.
//!
//! The span leaves out the first quarter of the n arrivals (it starts at index ⌊n/4⌋ at
//! the earliest and ends at the last, as far as the server could time them, see below):
//! the first quarter is left out because a rate limiter with a token bucket (a shaper such as tbf,
//! or a policer) lets its bucket's worth through at the sender's speed before it holds the
//! rate, and that burst would inflate the estimate. The full probe's train (1000 packets
//! of 1200 bytes by default, sent as fast as the host can) overruns such a bucket; where
//! the bottleneck's queue is shorter than the train, the packets it drops count in
//! `loss_rate` (and as overflow, not in the evidence). The quick probe's trains start at
//! 32 packets and grow only while the path is fast enough to carry a larger one within
//! its time budget ([`quick`] has the rule and why).
//!
//! Arrival times are the kernel's receive times where it gives them (Linux's
//! `SO_TIMESTAMPNS`): exact however late the server reads. Without them they are the
//! times the server reads the packets, and a read is late when the server's thread was not
//! running as the packet arrived: asleep and slow to wake, or preempted on a busy host.
//! Packets that pile up meanwhile are then read back to back, and a train read that way
//! shows the server's reading speed, not the path's: on the 2-core testbed, with the link
//! relay's threads and a build competing, a 32-packet train on a 200 Mbit/s link read as
//! 9 Gbit/s in half of a dozen trials. So the extension's span is timed by *prompt* reads
//! only: reads that found the socket empty just before (the server was waiting for the
//! packet) and just after (nothing arrived while it read), whose times are the arrivals'
//! to within a gap between packets. It runs from the first prompt read at or past the
//! quarter to the last prompt read, and its bytes are those of every packet after the
//! first up to the last (the queue is first in, first out); without two prompt reads it
//! is 0. The fixed part's span is the first version's, over every read from the quarter
//! to the last. The quick probe takes the timed span alone (no rate rather than a wrong
//! one; its floor, [`Measurement::bandwidth_floor_mbps`], needs no server timing at all).
//! The full probe takes the timed span and, without one, the fixed part's as it always
//! did: a path faster than the server reads (loopback, where the prober is as fast as the
//! server) gives no prompt reads in about a quarter of the trials, and there the read
//! speed is the best figure there is. After a train packet the server spins on reads for
//! 100 µs before it sleeps, so that it is running when the next one arrives.

pub mod cache;
mod error;
pub mod loss;
mod measurement;
mod prober;
pub mod quick;
mod server;
mod socket;
pub mod stamped;
mod wire;

pub use cache::{
    unix_now, user_cache_file, CachedMeasurement, ProbeCache, CACHE_FILE_NAME, MAX_CACHED_PEERS,
};
pub use error::Error;
pub use loss::{LossEvidence, MAX_EVIDENCE_PACKETS};
pub use measurement::Measurement;
pub use prober::{probe, Settings};
pub use quick::{probe_quick, probe_quick_until, QuickSettings};
pub use server::{serve, serve_until, serve_until_with};
pub use socket::{big_buffers, prober_socket};
pub use wire::{MAP_MAX_PACKETS, MAX_PACKET_BYTES};

#[cfg(test)]
mod tests;
