//! PLACEHOLDER: to be written.
use super::{Builtin, Params};
use crate::circuit::Circuit;

pub(crate) static AES128: Builtin = Builtin {
    name: "aes128",
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
