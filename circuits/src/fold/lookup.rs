//! The lookup component: the fold's slice of the table and the LogUp sums.
//!
//! First phase ([`first`]): after every other component, the
//! multiplicities of the table entries `tbase … tbase + slice` (the late
//! values: they count the whole step's queries). Second phase ([`close`]),
//! at the challenge α the folding layer draws after every fold's first
//! phase: Σ 1/(α − q) over the fold's queries and Σ mₖ/(α − tbase − k) over
//! its slice, added to the state's two sums; where the step closes the two
//! must be equal (`lookup/balanced`), and both restart at zero.

use super::ctx::Var;
use super::desc::Desc;
use crate::layout::Layout;
use nova_snark::frontend::{ConstraintSystem, SynthesisError};
use zkstep_gadgets::expr::{add, alloc, enforce_eq_if, materialise, mul, sub, var, Expr, Fr};
use zkstep_fold::UnitTag;
use zkstep_gadgets::lookup::{query_sum, table_sum};

/// What the first phase hands the second.
pub struct FirstPhase {
    /// The next state, the lookup sums still as they came in.
    pub z: Vec<Var>,
    /// Every value the fold looked up.
    pub queries: Vec<Expr>,
    /// The unit each query was made in (its inverse goes there too).
    pub units: Vec<UnitTag>,
    /// Multiplicities of the fold's table slice.
    pub mult: Vec<Var>,
    /// Whether this fold closes the step.
    pub is_final: Expr,
    /// The slice's first entry.
    pub tbase: Var,
    /// The ρ the fold used (its input state's).
    pub rho: Var,
    /// The γ the fold used (its input state's).
    pub gamma: Var,
}

/// The table slice's multiplicities, allocated last (the late values).
pub(crate) fn first<CS: ConstraintSystem<Fr>>(
    mut cs: CS,
    lay: &Layout,
    z: Vec<Var>,
    desc: Desc,
    (queries, units): (Vec<Expr>, Vec<UnitTag>),
    mult: Option<&[u64]>,
    (rho, gamma): (Var, Var),
) -> Result<FirstPhase, SynthesisError> {
    let mult = (0..lay.table_slice)
        .map(|k| {
            alloc(
                cs.namespace(|| format!("m{k}")),
                mult.map(|m| Fr::from(m.get(k).copied().unwrap_or(0))),
            )
        })
        .collect::<Result<Vec<_>, _>>()?;
    Ok(FirstPhase {
        z,
        queries,
        units,
        mult,
        is_final: desc.flags.is_final,
        tbase: desc.tbase,
        rho,
        gamma,
    })
}

/// A fold's lookups and table slice, closed at α (the step circuit's and
/// π_merge's second phase).
pub struct Sums<'a> {
    /// Every value the fold looked up.
    pub queries: &'a [Expr],
    /// The unit each query was made in.
    pub units: &'a [UnitTag],
    /// The slice's first entry.
    pub tbase: &'a Expr,
    /// The slice's multiplicities.
    pub mult: &'a [Var],
    /// Whether this fold closes the proof's lookups.
    pub is_final: &'a Expr,
}

impl Sums<'_> {
    /// Both sums at α added to the state's (`z`: queries, table), equal
    /// where the fold closes (`balanced`); both restart at zero after it.
    pub fn close<CS: ConstraintSystem<Fr>>(
        &self,
        mut cs: CS,
        alpha: &Expr,
        z: (&Var, &Var),
    ) -> Result<(Var, Var), SynthesisError> {
        let h = query_sum(cs.namespace(|| "queries"), alpha, self.queries, self.units)?;
        let g = table_sum(cs.namespace(|| "table"), alpha, self.tbase, self.mult)?;
        // each sum once as a variable: the balance and the restart both
        // read it (as a combination it was written out twice, one entry a
        // query and a table entry each time)
        let q = var(&materialise(cs.namespace(|| "queries sum"), &add(&var(z.0), &h))?);
        let t = var(&materialise(cs.namespace(|| "table sum"), &add(&var(z.1), &g))?);
        enforce_eq_if(cs.namespace(|| "balanced"), self.is_final, &q, &t);
        // both restart at zero for what follows (z_n is public)
        let keep = sub(&zkstep_gadgets::expr::cst::<CS>(Fr::from(1u64)), self.is_final);
        Ok((
            mul(cs.namespace(|| "queries next"), &keep, &q)?,
            mul(cs.namespace(|| "table next"), &keep, &t)?,
        ))
    }
}

/// The second phase: both sums at α into the state, balanced where the step closes.
pub fn close<CS: ConstraintSystem<Fr>>(
    cs: CS,
    lay: &Layout,
    p: FirstPhase,
    alpha: &Var,
) -> Result<Vec<Var>, SynthesisError> {
    let sl = lay.slots.lookup;
    let sums = Sums {
        queries: &p.queries,
        units: &p.units,
        tbase: &var(&p.tbase),
        mult: &p.mult,
        is_final: &p.is_final,
    };
    let (q, t) = sums.close(cs, &var(alpha), (&p.z[sl.queries], &p.z[sl.table]))?;
    let mut out = p.z;
    out[sl.queries] = q;
    out[sl.table] = t;
    Ok(out)
}
