//! Parsing and canonical names of every transport, and the registry's own checks: every
//! option of every family parses at its bounds and is refused just outside them.

use super::*;
use crate::family::OptionKind;

/// Whether this build has the transport `name` (tests of one transport's names skip
/// themselves in a build without it).
fn built(spec: &str) -> bool {
    family(spec.split(':').next().unwrap_or(spec)).is_some()
}

#[test]
fn parses_names_and_options() {
    let cases = [
        ("tcp", "tcp"),
        ("tcp-bbr", "tcp:cc=bbr"),
        ("tcp:cc=bbr", "tcp:cc=bbr"),
        ("mtcp", "mtcp:streams=4"),
        ("mtcp:streams=8,cc=bbr", "mtcp:streams=8,cc=bbr"),
        ("mtcp:chunk=4096, streams=2", "mtcp:streams=2,chunk=4096"),
        ("mtcp:chunk=131072", "mtcp:streams=4"),
        ("udp", "udp:mtu=1500,rate=1gbit"),
        ("udp:rate=500mbit,mtu=9000", "udp:mtu=9000,rate=500mbit"),
        ("udp:rate=unlimited", "udp:mtu=1500,rate=unlimited"),
        ("udp:rate=2500kbit", "udp:mtu=1500,rate=2500kbit"),
        ("udp:rate=123456", "udp:mtu=1500,rate=123456bit"),
        ("udt", "udt:mss=1500"),
        ("udt:mss=9000", "udt:mss=9000"),
        (
            "udt:udpbuf=65536, fc=32,rcvbuf=1073741824,sndbuf=100000,mss=576",
            "udt:mss=576,sndbuf=100000,rcvbuf=1073741824,fc=32,udpbuf=65536",
        ),
        ("udt:ack=1", "udt:mss=1500"),
        ("udt:ack=0,mss=9000", "udt:mss=9000,ack=0"),
        ("quic", "quic:cc=cubic"),
        ("quic:cc=bbr", "quic:cc=bbr"),
        ("quic:iw=8388608,cc=bbr", "quic:cc=bbr,iw=8388608"),
        (
            "quic:mtu=9000, window=1048576,cc=newreno",
            "quic:cc=newreno,window=1048576,mtu=9000",
        ),
    ];
    for (input, canonical) in cases.into_iter().filter(|(i, _)| built(i)) {
        let spec: TransportSpec = input.parse().unwrap();
        assert_eq!(spec.to_string(), canonical, "{input}");
        assert_eq!(canonical.parse::<TransportSpec>().unwrap(), spec, "{input}");
    }
    if built("udt") {
        let v = "udt:fc=50000".parse::<TransportSpec>().unwrap();
        assert_eq!(
            (v.values().int("fc"), v.values().int("ack")),
            (Some(50000), Some(1))
        );
        assert_eq!(v.values().int("sndbuf"), None);
    }
    if built("quic") {
        let q = "quic:window=4294967296".parse::<TransportSpec>().unwrap();
        assert_eq!(q.to_string(), "quic:cc=cubic,window=4294967296");
    }
}

#[test]
fn names_what_is_wrong() {
    let e = |s: &str| s.parse::<TransportSpec>().unwrap_err().to_string();
    let unknown = e("sabul");
    assert!(unknown.starts_with("unknown transport 'sabul' (valid: tcp, tcp-bbr, mtcp, udp"));
    let cases = [
        (
            "tcp:streams=2",
            "transport 'tcp' has no option 'streams' (valid: cc)",
        ),
        ("mtcp:streams=0", "connections, from 1 to 64"),
        ("mtcp:streams=x", "bad value 'x' for option 'streams'"),
        ("mtcp:chunk=1", "from 1024"),
        (
            "tcp:cc=",
            "bad value '' for option 'cc': a name of up to 15",
        ),
        ("tcp:cc=a/b", "bad value 'a/b'"),
        ("tcp:cc=abcdefghijklmnop", "bad value 'abcdefghijklmnop'"),
        (
            "udp:cc=bbr",
            "transport 'udp' has no option 'cc' (valid: mtu, rate)",
        ),
        ("udp:mtu=100", "from 576 to 65535"),
        ("udp:rate=fast", "from 8kbit to 1000gbit, or unlimited"),
        ("udp:rate=1tbit", "bad value '1tbit'"),
        ("udp:rate=7999", "bad value '7999'"),
        (
            "udt:mtu=1500",
            "transport 'udt' has no option 'mtu' (valid: mss, sndbuf, rcvbuf, fc, udpbuf, ack)",
        ),
        ("udt:ack=65537", "packets, from 0 to 65536"),
        (
            "udt:mss=100",
            "transport 'udt': bad value '100' for option 'mss': bytes, from 576 to 65535",
        ),
        ("udt:mss=65536", "from 576 to 65535"),
        ("udt:sndbuf=1k", "bad value '1k' for option 'sndbuf'"),
        ("udt:rcvbuf=65535", "for option 'rcvbuf': bytes, from 65536"),
        ("udt:udpbuf=2147483648", "option 'udpbuf'"),
        ("udt:fc=31", "for option 'fc': packets, from 32 to 4194304"),
        ("udt:fc=", "bad value '' for option 'fc'"),
        (
            "quic:streams=2",
            "transport 'quic' has no option 'streams' (valid: cc, window, mtu, iw, lanes)",
        ),
        (
            "quic:cc=reno",
            "transport 'quic': bad value 'reno' for option 'cc': cubic, bbr or newreno",
        ),
        ("quic:window=1000", "bad value '1000' for option 'window'"),
        ("quic:window=8589934592", "from 16384 to 4294967296"),
        ("quic:mtu=1200", "bad value '1200' for option 'mtu'"),
        ("quic:mtu=9217", "from 1280 to 9216"),
        ("quic:iw=2399", "bad value '2399' for option 'iw'"),
        ("quic:lanes=65", "from 0 to 64"),
    ];
    for (input, wanted) in cases.into_iter().filter(|(i, _)| built(i)) {
        let got = e(input);
        assert!(got.contains(wanted), "{input}: {got}");
    }
}

/// A value of `kind` that the parser must take (`Some`), at `min` or `max`.
fn at(kind: &OptionKind, max: bool) -> String {
    match kind {
        OptionKind::Integer { min, max: hi, .. } => (if max { hi } else { min }).to_string(),
        OptionKind::Rate { min, max: hi } => format!("{}bit", if max { hi } else { min }),
        OptionKind::Choice(words) => (if max {
            words[words.len() - 1]
        } else {
            words[0]
        })
        .into(),
        OptionKind::Name => (if max { "abcdefghijklmno" } else { "x" }).into(),
        OptionKind::WordOrInteger { min, max: hi, .. } => (if max { hi } else { min }).to_string(),
    }
}

/// A value just outside `kind`'s range on one side, if the kind has a range there.
fn outside(kind: &OptionKind, max: bool) -> Option<String> {
    match kind {
        OptionKind::Integer { min, max: hi, .. } => {
            if max {
                hi.checked_add(1).map(|n| n.to_string())
            } else {
                min.checked_sub(1).map(|n| n.to_string())
            }
        }
        OptionKind::Rate { min, max: hi } => Some(if max {
            format!("{}bit", hi + 1)
        } else {
            format!("{}bit", min - 1)
        }),
        OptionKind::Choice(_) => (!max).then(|| "no-such-word".into()),
        OptionKind::WordOrInteger { min, max: hi, .. } => Some(if max {
            (hi + 1).to_string()
        } else if *min > 0 {
            (min - 1).to_string()
        } else {
            "no-such-word".into()
        }),
        OptionKind::Name => Some(if max { "abcdefghijklmnop" } else { "" }.into()),
    }
}

#[test]
fn every_option_of_every_transport_parses_at_its_bounds_and_not_beyond() {
    assert!(!families().is_empty());
    for f in families() {
        let plain: TransportSpec = f.name.parse().unwrap();
        assert_eq!(plain.name(), f.name);
        assert_eq!(plain.to_string().parse::<TransportSpec>().unwrap(), plain);
        for o in f.options {
            for max in [false, true] {
                let s = format!("{}:{}={}", f.name, o.key, at(&o.kind, max));
                let spec = s
                    .parse::<TransportSpec>()
                    .unwrap_or_else(|e| panic!("{s}: {e}"));
                let again = spec.to_string();
                assert_eq!(
                    again.parse::<TransportSpec>().unwrap(),
                    spec,
                    "{s} -> {again}"
                );
                let Some(bad) = outside(&o.kind, max) else {
                    continue;
                };
                let s = format!("{}:{}={bad}", f.name, o.key);
                let err = s.parse::<TransportSpec>().unwrap_err().to_string();
                let range = o.kind.describe();
                assert!(
                    err.contains(&format!("option '{}'", o.key)) && err.contains(&range),
                    "{s}: '{err}' should name the option and '{range}'"
                );
            }
            assert!(!o.doc.is_empty(), "{}:{} has no doc", f.name, o.key);
        }
        let err = format!("{}:no-such-option=1", f.name)
            .parse::<TransportSpec>()
            .unwrap_err()
            .to_string();
        assert!(err.contains(&f.option_keys()), "{err}");
        for (alias, _) in f.aliases {
            assert_eq!(alias.parse::<TransportSpec>().unwrap().name(), f.name);
        }
        for c in f.conformance {
            assert_eq!(c.parse::<TransportSpec>().unwrap().name(), f.name, "{c}");
        }
        assert!(
            f.conformance.first().is_some_and(|c| c.starts_with(f.name)),
            "{}: the conformance list starts with the plain name",
            f.name
        );
    }
}

#[test]
fn every_transport_is_listed() {
    let listed = transports();
    for f in families() {
        let info = listed.iter().find(|t| t.name == f.name).expect("listed");
        assert_eq!(info.description, f.summary);
        for o in f.options {
            assert!(info.options.contains(o.doc), "{}: {}", f.name, o.key);
        }
        for (alias, _) in f.aliases {
            assert!(listed.iter().any(|t| t.name == *alias), "{alias}");
        }
    }
    for (name, feature) in not_built() {
        let err = name.parse::<TransportSpec>().unwrap_err().to_string();
        assert!(
            err.contains("not in this build") && err.contains(feature),
            "{err}"
        );
    }
}

#[test]
fn a_congestion_control_the_kernel_lacks_is_refused_here_by_name() {
    let spec: TransportSpec = "tcp:cc=nosuchcc".parse().unwrap();
    let err = spec.check_here().unwrap_err().to_string();
    assert!(
        err.contains("'nosuchcc' is not available in this kernel") && err.contains("available:"),
        "{err}"
    );
    assert!("tcp".parse::<TransportSpec>().unwrap().check_here().is_ok());
}
