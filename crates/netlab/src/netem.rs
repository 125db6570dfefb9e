//! The `netem` backend: Linux tc netem on veth devices, for kernels that have it.
//!
//! A router namespace sits between the parties (`A ─ veth ─ R ─ veth ─ B`) and netem runs
//! on the router's two egress devices, each with one direction's parameters: on the
//! parties' own devices netem would interact with TCP small queues and the sender's
//! pacing, which a real network path does not. Each qdisc gets `delay` (± `jitter`),
//! `loss` and `rate`, and a `limit` (in packets; netem counts the delay line and the rate
//! queue together) of the bandwidth-delay product plus the queue, in full-sized packets
//! (the default 1000 is far too small: 1 Gbit/s × 100 ms is about 8,600). Segmentation
//! offloads are turned off on every veth so that loss hits MTU-sized packets, not 64 KiB
//! super-packets: with `ethtool -K` where it is installed, else by capping the devices'
//! GSO size to one MTU (`ip link set … gso_max_size`).
//!
//! Netem is detected by adding a netem qdisc to a veth in a throw-away namespace (once per
//! process); a kernel without the module refuses with "Unknown qdisc", and iproute2 without
//! `tc` fails to start.

use std::sync::OnceLock;

use crate::spec::{Direction, LinkSpec};
use crate::{ns, Backend, Error, LinkStats, Links, Side, Wiring};

/// Bytes per packet assumed when sizing the netem limit.
const MTU: u64 = 1500;

/// Whether the kernel has netem (and iproute2 has `tc`); the reason if not. Tried once per
/// process by adding a netem qdisc in a temporary namespace, which is then deleted.
pub fn available() -> Result<(), String> {
    static RESULT: OnceLock<Result<(), String>> = OnceLock::new();
    RESULT.get_or_init(detect).clone()
}

fn detect() -> Result<(), String> {
    let t = format!("{}{}-t", ns::PREFIX, ns::next_id());
    ns::add(&t).map_err(|e| e.to_string())?;
    let tried = (|| {
        ns::ip(&[
            "-n", &t, "link", "add", "tpb-x", "type", "veth", "peer", "name", "tpb-y",
        ])?;
        ns::run(std::process::Command::new("tc").args([
            "-n", &t, "qdisc", "add", "dev", "tpb-x", "root", "netem", "delay", "1ms",
        ]))
    })();
    ns::delete(&t);
    tried.map(|_| ()).map_err(|e| match e {
        Error::Command { stderr, .. } => format!("tc refused a netem qdisc: {stderr}"),
        e => e.to_string(),
    })
}

/// The `netem` backend.
#[derive(Debug, Default, Clone, Copy)]
pub struct Netem;

/// Nothing runs in this process: the qdiscs die with the router's namespace.
struct Installed;

impl Links for Installed {
    fn stats(&self) -> Option<[LinkStats; 2]> {
        None
    }
}

/// The `tc qdisc add` arguments (after `dev DEV root`) for one direction.
pub fn netem_args(d: &Direction) -> Vec<String> {
    let us = |x: std::time::Duration| format!("{}us", x.as_micros());
    let mut a = vec!["netem".to_string(), "delay".into(), us(d.delay)];
    if !d.jitter.is_zero() {
        a.push(us(d.jitter));
    }
    if d.loss > 0.0 {
        a.extend(["loss".into(), format!("{}%", d.loss * 100.0)]);
    }
    if let Some(r) = d.rate_bps {
        a.extend(["rate".into(), format!("{r}bit")]);
    }
    let bytes = d.bdp_bytes() + d.queue_bytes().unwrap_or(0);
    let limit = bytes.div_ceil(MTU).max(1000);
    a.extend(["limit".into(), limit.to_string()]);
    a
}

/// Turns segmentation offloads off on `dev` in namespace `ns_name`.
fn offloads_off(ns_name: &str, dev: &str) -> Result<(), Error> {
    let ethtool = ns::run(
        std::process::Command::new("ip")
            .args(["netns", "exec", ns_name, "ethtool", "-K", dev])
            .args(["tso", "off", "gso", "off", "gro", "off"]),
    );
    match ethtool {
        Ok(_) => Ok(()),
        // No ethtool (or a feature it cannot change): cap GSO to one packet instead.
        Err(_) => ns::ip(&[
            "-n",
            ns_name,
            "link",
            "set",
            "dev",
            dev,
            "gso_max_size",
            "1500",
            "gso_max_segs",
            "1",
        ])
        .map(|_| ()),
    }
}

impl Backend for Netem {
    fn name(&self) -> &'static str {
        "netem"
    }

    fn max_rate_bps(&self) -> Option<u64> {
        None
    }

    fn needs_router(&self) -> bool {
        true
    }

    fn install(&self, w: &Wiring<'_>, spec: &LinkSpec) -> Result<Box<dyn Links>, Error> {
        let r = w.router();
        // (party, router device, party address, router address, prefix).
        let legs = [
            (Side::A, "r-a", w.block_addr(1), w.block_addr(2)),
            (Side::B, "r-b", w.block_addr(6), w.block_addr(5)),
        ];
        for (side, rdev, addr, raddr) in legs {
            let p = w.namespace(side);
            ns::ip(&[
                "-n", r, "link", "add", rdev, "type", "veth", "peer", "name", "tpb0", "netns", p,
            ])?;
            ns::ip(&["-n", p, "addr", "add", &format!("{addr}/30"), "dev", "tpb0"])?;
            ns::ip(&["-n", r, "addr", "add", &format!("{raddr}/30"), "dev", rdev])?;
            for (n, d) in [(p, "tpb0"), (r, rdev)] {
                offloads_off(n, d)?;
                ns::ip(&["-n", n, "link", "set", d, "up"])?;
            }
            let other = w.addr(match side {
                Side::A => Side::B,
                Side::B => Side::A,
            });
            ns::ip(&[
                "-n",
                p,
                "route",
                "add",
                &format!("{other}/32"),
                "via",
                &raddr.to_string(),
            ])?;
        }
        if !ns::sysctl(r, "net/ipv4/ip_forward", "1")? {
            return Err(Error::Io {
                context: format!("enabling forwarding in {r}"),
                source: std::io::Error::other("net.ipv4.ip_forward is read-only"),
            });
        }
        // A→B leaves the router towards B on r-b; B→A towards A on r-a.
        for (dev, d) in [("r-b", &spec.a_to_b), ("r-a", &spec.b_to_a)] {
            let mut c = std::process::Command::new("tc");
            c.args(["-n", r, "qdisc", "add", "dev", dev, "root"])
                .args(netem_args(d));
            ns::run(&mut c)?;
        }
        Ok(Box::new(Installed))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn qdisc_arguments() {
        let s = LinkSpec::parse_custom(
            Some("100ms"),
            Some("1gbit"),
            Some("0.1%"),
            Some("1ms"),
            None,
        )
        .unwrap();
        let a = netem_args(&s.a_to_b).join(" ");
        // 50 ms × 1 Gbit/s = 6.25 MB, plus 20 ms of queue = 2.5 MB: 5,834 packets.
        assert_eq!(
            a,
            "netem delay 50000us 1000us loss 0.1% rate 1000000000bit limit 5834"
        );
        let plain = LinkSpec::parse_custom(Some("1ms"), None, None, None, None).unwrap();
        assert_eq!(
            netem_args(&plain.a_to_b).join(" "),
            "netem delay 500us limit 1000"
        );
    }
}
