//! PLACEHOLDER: to be written.
use super::{Builtin, Params};
use crate::circuit::Circuit;

pub(crate) static SYNTHETIC: Builtin = Builtin {
    name: "synthetic",
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
