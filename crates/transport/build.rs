//! Builds the C++ shim over the UDT4 library (udt_shim/shim.cpp) for the `udt` transport,
//! as a shared object linking libudt that the crate embeds and loads at run time, when the
//! `udt` feature is on (the default). Without libudt's headers
//! and library the build then stops with a message that says how to install them, or how
//! to build without `udt`.

#[cfg(feature = "udt")]
use std::path::{Path, PathBuf};

#[cfg(not(feature = "udt"))]
fn main() {}

#[cfg(feature = "udt")]
fn main() {
    println!("cargo:rerun-if-changed=udt_shim/shim.cpp");
    println!("cargo:rerun-if-env-changed=UDT_INCLUDE_DIR");
    println!("cargo:rerun-if-env-changed=UDT_LIB_DIR");

    let include = find(
        "UDT_INCLUDE_DIR",
        &["/usr/include", "/usr/local/include"],
        &["udt/udt.h"],
    );
    let lib = find(
        "UDT_LIB_DIR",
        &[
            "/usr/lib",
            "/usr/lib/x86_64-linux-gnu",
            "/usr/lib/aarch64-linux-gnu",
            "/usr/local/lib",
        ],
        &["libudt.so", "libudt.a"],
    );
    let (Some(include), Some(lib)) = (include, lib) else {
        eprintln!(
            "error: the `udt` transport needs the UDT4 library (udt/udt.h and libudt), which \
             was not found.\n\
             Install the Debian package libudt-dev (`sudo apt-get install libudt-dev`) or run \
             ./scripts/setup.sh; for a library elsewhere set UDT_INCLUDE_DIR (the directory \
             holding udt/udt.h) and UDT_LIB_DIR. To build without the `udt` transport, \
             build with --no-default-features (adding --features quic to keep `quic`)."
        );
        std::process::exit(1);
    };

    // A shared object that links libudt, which the crate embeds and loads at its first UDT
    // call (src/transports/udt/library.rs says why it is not linked into the program).
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"))
        .join("libtransputation_udt_shim.so");
    let compiler = cc::Build::new().cpp(true).get_compiler();
    let status = compiler
        .to_command()
        .args(["-shared", "-fPIC", "-O2", "-std=c++11", "-Wall", "-Wextra"])
        .arg("-I")
        .arg(&include)
        .arg("udt_shim/shim.cpp")
        .arg("-L")
        .arg(&lib)
        .args(["-ludt", "-lpthread", "-o"])
        .arg(&out)
        .status();
    match status {
        Ok(s) if s.success() => {}
        Ok(s) => {
            eprintln!(
                "error: compiling udt_shim/shim.cpp into {} failed ({s})",
                out.display()
            );
            std::process::exit(1);
        }
        Err(e) => {
            eprintln!("error: cannot run the C++ compiler for udt_shim/shim.cpp: {e}");
            std::process::exit(1);
        }
    }
}

#[cfg(feature = "udt")]
/// The first directory (the environment variable's, else one of `defaults`) that holds one
/// of `files`.
fn find(var: &str, defaults: &[&str], files: &[&str]) -> Option<PathBuf> {
    let dirs: Vec<PathBuf> = match std::env::var_os(var) {
        Some(d) => vec![PathBuf::from(d)],
        None => defaults.iter().map(PathBuf::from).collect(),
    };
    dirs.into_iter()
        .find(|d| files.iter().any(|f| Path::new(d).join(f).exists()))
}
