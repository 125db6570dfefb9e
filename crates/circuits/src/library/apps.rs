//! PLACEHOLDER: to be written.
use super::{Builtin, Params};
use crate::circuit::Circuit;

pub(crate) static BIOMATCH: Builtin = Builtin {
    name: "biomatch",
    summary: "placeholder",
    params: &[],
    encoding: "placeholder",
    build,
    reference,
};

pub(crate) static MEXP: Builtin = Builtin {
    name: "mexp",
    summary: "placeholder",
    params: &[],
    encoding: "placeholder",
    build,
    reference,
};

pub(crate) static MVMUL: Builtin = Builtin {
    name: "mvmul",
    summary: "placeholder",
    params: &[],
    encoding: "placeholder",
    build,
    reference,
};

pub(crate) static MILLIONAIRES: Builtin = Builtin {
    name: "millionaires",
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
