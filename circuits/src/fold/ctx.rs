//! What every component of a fold reads: the layout's dimensions, the
//! spec's constants (value range, rounding offsets) and the incoming state.

use crate::layout::Layout;
use nova_snark::frontend::num::AllocatedNum;
use nova_snark::frontend::ConstraintSystem;
use zkstep_core::fixed::RemainderClass;
use zkstep_core::fixed::{SCALE_I128, SCALE_SQ};
use zkstep_gadgets::expr::{cst, var, Expr, Fr};

/// A variable of the circuit.
pub(crate) type Var = AllocatedNum<Fr>;

/// One fold's fixed context.
pub(crate) struct Ctx<'a> {
    /// The layout (shape of every fold, the state's slots).
    pub lay: &'a Layout,
    /// Rows (output units) per tile.
    pub rows: usize,
    /// Padded row width n_max.
    pub n: usize,
    /// Weights of a row in this fold (n_max, or a segment of it).
    pub seg_w: usize,
    /// The first `live_w` of them may hold a weight; the rest are constant
    /// zeros ([`Layout::live_slots`]).
    pub live_w: usize,
    /// Batch size B.
    pub batch: usize,
    /// Bits of a stored value.
    pub bits: u32,
    /// S.
    pub s: u128,
    /// Rounding offset of a rescale by S.
    pub off_s: u128,
    /// Rounding offset of a rescale by S².
    pub off_sq: u128,
    /// The incoming state z_i.
    pub z: &'a [Var],
}

impl<'a> Ctx<'a> {
    /// The context of a fold of `lay` on state `z`.
    pub fn new(lay: &'a Layout, z: &'a [Var]) -> Self {
        let rounding = lay.spec.rounding;
        Ctx {
            lay,
            rows: lay.rows,
            n: lay.n_max,
            seg_w: lay.seg_w,
            live_w: lay.live_slots(),
            batch: lay.batch,
            bits: lay.spec.value_range.bits,
            s: SCALE_I128 as u128,
            off_s: rounding.offset(SCALE_I128) as u128,
            off_sq: rounding.offset(SCALE_SQ) as u128,
            z,
        }
    }

    /// Slot `i` of the incoming state.
    pub fn z(&self, i: usize) -> Expr {
        var(&self.z[i])
    }

    /// Index of cell (sample i, row t).
    pub fn cell(&self, i: usize, t: usize) -> usize {
        i * self.rows + t
    }

    /// Remainders of a rescale by S of a dividend with no known factor.
    pub fn any_by_s(&self) -> RemainderClass {
        RemainderClass::any(self.s, self.off_s)
    }

    /// Remainders of a rescale by `d` (S or S²) of `c` times an integer.
    pub fn multiple(&self, c: i64, d: u128) -> RemainderClass {
        let off = if d == self.s { self.off_s } else { self.off_sq };
        RemainderClass::new(c as i128, d, off)
    }

    /// The constant 1.
    pub fn one<CS: ConstraintSystem<Fr>>(&self) -> Expr {
        cst::<CS>(Fr::from(1u64))
    }
}
