//! PLACEHOLDER: to be written.
use super::{Builtin, Params};
use crate::circuit::Circuit;

pub(crate) static ADD: Builtin = Builtin {
    name: "add",
    summary: "placeholder",
    params: &[],
    encoding: "placeholder",
    build,
    reference,
};

pub(crate) static MULT: Builtin = Builtin {
    name: "mult",
    summary: "placeholder",
    params: &[],
    encoding: "placeholder",
    build,
    reference,
};

pub(crate) static MIN: Builtin = Builtin {
    name: "min",
    summary: "placeholder",
    params: &[],
    encoding: "placeholder",
    build,
    reference,
};

pub(crate) static ARGMIN: Builtin = Builtin {
    name: "argmin",
    summary: "placeholder",
    params: &[],
    encoding: "placeholder",
    build,
    reference,
};

pub(crate) static MATMUL: Builtin = Builtin {
    name: "matmul",
    summary: "placeholder",
    params: &[],
    encoding: "placeholder",
    build,
    reference,
};

pub(crate) static SORT: Builtin = Builtin {
    name: "sort",
    summary: "placeholder",
    params: &[],
    encoding: "placeholder",
    build,
    reference,
};

fn build(_: &Params) -> Circuit {
    todo!()
}

fn reference(_: &Params, _: &str, _: &str) -> String {
    todo!()
}
