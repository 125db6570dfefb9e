//! A gate and the numbers of its wires: what a circuit is made of, and what a gate source
//! (`source`) hands out.

/// Index of a wire. Circuits have at most [`MAX_WIRES`](crate::MAX_WIRES) wires.
pub type WireId = u32;

/// A gate. `a` and `b` are the first and second input as written; the garbling schemes are
/// not symmetric in them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Gate {
    /// `out = a XOR b`.
    Xor {
        /// First input.
        a: WireId,
        /// Second input.
        b: WireId,
        /// Output wire.
        out: WireId,
    },
    /// `out = a AND b`.
    And {
        /// First input.
        a: WireId,
        /// Second input.
        b: WireId,
        /// Output wire.
        out: WireId,
    },
    /// `out = NOT a`.
    Inv {
        /// Input.
        a: WireId,
        /// Output wire.
        out: WireId,
    },
}

impl Gate {
    /// The wire this gate writes.
    pub fn output(&self) -> WireId {
        match *self {
            Gate::Xor { out, .. } | Gate::And { out, .. } | Gate::Inv { out, .. } => out,
        }
    }

    /// The gate's place in [`Circuit::gate_counts`](crate::Circuit::gate_counts): 0 for
    /// AND, 1 for XOR, 2 for INV.
    pub fn kind_index(&self) -> usize {
        match self {
            Gate::And { .. } => 0,
            Gate::Xor { .. } => 1,
            Gate::Inv { .. } => 2,
        }
    }

    /// The same gate with its inputs numbered by `input` and its output `out`.
    pub fn renumbered(&self, input: impl Fn(WireId) -> WireId, out: WireId) -> Gate {
        match *self {
            Gate::Xor { a, b, .. } => Gate::Xor {
                a: input(a),
                b: input(b),
                out,
            },
            Gate::And { a, b, .. } => Gate::And {
                a: input(a),
                b: input(b),
                out,
            },
            Gate::Inv { a, .. } => Gate::Inv { a: input(a), out },
        }
    }

    /// The wires this gate reads: one or two.
    pub fn inputs(&self) -> (WireId, Option<WireId>) {
        match *self {
            Gate::Xor { a, b, .. } | Gate::And { a, b, .. } => (a, Some(b)),
            Gate::Inv { a, .. } => (a, None),
        }
    }
}
