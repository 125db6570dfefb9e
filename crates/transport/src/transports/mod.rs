//! The registry's list: one line per transport module, and nothing else.
//!
//! Each module declares a [`Family`] named `FAMILY` (its name, options, delivery, how it
//! listens and connects). Everything that knows transports by name (parsing, the
//! `transports` listing, `--help`, the conformance suite, the testbed's presets, the
//! README's table) reads [`ALL`], so adding a transport is a module and a line here, and
//! removing one is deleting its line. A line with `#[feature = "..."]` exists only in builds
//! with that Cargo feature; without it, [`NOT_BUILT`] says which feature would bring it.

use crate::family::Family;

/// Declares the transport modules, [`ALL`] and [`NOT_BUILT`].
macro_rules! registry {
    ($( $(#[feature = $feature:literal])? $module:ident, )*) => {
        $(
            $(#[cfg(feature = $feature)])?
            pub(crate) mod $module;
        )*

        /// Every transport of this build, in the order listings show them.
        pub(crate) static ALL: &[&Family] = &[
            $( $(#[cfg(feature = $feature)])? &$module::FAMILY, )*
        ];

        /// Transports this build was compiled without: (name, the Cargo feature).
        pub(crate) static NOT_BUILT: &[(&str, &str)] = &[
            $( $( #[cfg(not(feature = $feature))] (stringify!($module), $feature), )? )*
        ];
    };
}

registry! {
    tcp,
    mtcp,
    udp,
    blast,
    #[feature = "udt"] udt,
    #[feature = "quic"] quic,
}
