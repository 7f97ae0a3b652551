//! Linear expressions with values (`Expr`, nova's `Num`), allocation,
//! products, equalities and selects: the vocabulary of every other gadget.
//! Linear operations are free in R1CS; each product or equality is one
//! constraint.

use crate::Result;
use ff::Field;
use nova_snark::frontend::gadgets::poseidon::Elt;
use nova_snark::frontend::num::{AllocatedNum, Num};
use nova_snark::frontend::{ConstraintSystem, SynthesisError};

/// The circuit field.
pub type Fr = zkstep_core::Fr;

/// A linear combination of variables together with its value (if known).
pub type Expr = Num<Fr>;

/// The constant `c`.
pub fn cst<CS: ConstraintSystem<Fr>>(c: Fr) -> Expr {
    Elt::num_from_fr::<CS>(c).num()
}

/// The constant zero.
pub fn zero() -> Expr {
    Num::zero()
}

/// A variable as an expression.
pub fn var(a: &AllocatedNum<Fr>) -> Expr {
    Num::from(a.clone())
}

/// `a + b`.
pub fn add(a: &Expr, b: &Expr) -> Expr {
    a.clone().add(b)
}

/// `acc += b` in place. An accumulating loop uses this, not `acc = add(&acc, b)`:
/// [`add`] copies its left side, which makes a loop over n terms O(n²) (a
/// fold's lookup sum has tens of thousands).
pub fn add_assign(acc: &mut Expr, b: &Expr) {
    let a = std::mem::replace(acc, zero());
    *acc = a.add(b);
}

/// `a − b`.
pub fn sub(a: &Expr, b: &Expr) -> Expr {
    a.clone().add(&b.clone().scale(-Fr::ONE))
}

/// `c·a`.
pub fn scale(a: &Expr, c: Fr) -> Expr {
    a.clone().scale(c)
}

/// `Σ cᵢ·aᵢ`.
pub fn lin(terms: &[(Fr, &Expr)]) -> Expr {
    terms
        .iter()
        .fold(zero(), |acc, (c, e)| acc.add(&(*e).clone().scale(*c)))
}

/// Allocate a private variable with a value given by the witness (if any).
pub fn alloc<CS: ConstraintSystem<Fr>>(mut cs: CS, value: Option<Fr>) -> Result<AllocatedNum<Fr>> {
    AllocatedNum::alloc(cs.namespace(|| "v"), || {
        value.ok_or(SynthesisError::AssignmentMissing)
    })
}

/// Allocate a variable equal to `e` (one constraint).
pub fn materialise<CS: ConstraintSystem<Fr>>(mut cs: CS, e: &Expr) -> Result<AllocatedNum<Fr>> {
    let v = alloc(cs.namespace(|| "alloc"), e.get_value())?;
    cs.enforce(
        || "eq",
        |_| e.lc(Fr::ONE),
        |lc| lc + CS::one(),
        |lc| lc + v.get_variable(),
    );
    Ok(v)
}

/// `a·b` as a new variable (one constraint).
pub fn mul<CS: ConstraintSystem<Fr>>(mut cs: CS, a: &Expr, b: &Expr) -> Result<AllocatedNum<Fr>> {
    let value = a.get_value().zip(b.get_value()).map(|(x, y)| x * y);
    let p = alloc(cs.namespace(|| "prod"), value)?;
    cs.enforce(
        || "mul",
        |_| a.lc(Fr::ONE),
        |_| b.lc(Fr::ONE),
        |lc| lc + p.get_variable(),
    );
    Ok(p)
}

/// Enforce `a·b = c` (one constraint).
pub fn enforce_mul<CS: ConstraintSystem<Fr>>(mut cs: CS, a: &Expr, b: &Expr, c: &Expr) {
    cs.enforce(
        || "a*b=c",
        |_| a.lc(Fr::ONE),
        |_| b.lc(Fr::ONE),
        |_| c.lc(Fr::ONE),
    );
}

/// Enforce `a = b` (one constraint).
pub fn enforce_eq<CS: ConstraintSystem<Fr>>(mut cs: CS, a: &Expr, b: &Expr) {
    cs.enforce(
        || "a=b",
        |_| a.lc(Fr::ONE),
        |lc| lc + CS::one(),
        |_| b.lc(Fr::ONE),
    );
}

/// Enforce `cond·(a − b) = 0`: `a = b` whenever the boolean `cond` is 1 (one constraint).
pub fn enforce_eq_if<CS: ConstraintSystem<Fr>>(mut cs: CS, cond: &Expr, a: &Expr, b: &Expr) {
    let d = sub(a, b);
    cs.enforce(
        || "cond*(a-b)=0",
        |_| cond.lc(Fr::ONE),
        |_| d.lc(Fr::ONE),
        |lc| lc,
    );
}

/// Enforce that `b` is 0 or 1 (one constraint).
pub fn enforce_bool<CS: ConstraintSystem<Fr>>(mut cs: CS, b: &Expr) {
    cs.enforce(
        || "b*(1-b)=0",
        |_| b.lc(Fr::ONE),
        |lc| lc + CS::one() - &b.lc(Fr::ONE),
        |lc| lc,
    );
}

/// `cond ? a : b` for a boolean `cond` (one constraint).
pub fn select<CS: ConstraintSystem<Fr>>(
    mut cs: CS,
    cond: &Expr,
    a: &Expr,
    b: &Expr,
) -> Result<AllocatedNum<Fr>> {
    let value = match (cond.get_value(), a.get_value(), b.get_value()) {
        (Some(c), Some(x), Some(y)) => Some(if c == Fr::ONE { x } else { y }),
        _ => None,
    };
    let out = alloc(cs.namespace(|| "sel"), value)?;
    // out − b = cond·(a − b)
    let d = sub(a, b);
    cs.enforce(
        || "select",
        |_| cond.lc(Fr::ONE),
        |_| d.lc(Fr::ONE),
        |lc| lc + out.get_variable() - &b.lc(Fr::ONE),
    );
    Ok(out)
}

/// `Σ_k x^k·c_k` by Horner's rule (`len − 1` constraints, no powers of x):
/// `c_0 + x·(c_1 + x·(c_2 + …))`. Native twin: the plain sum of `x^k·c_k`.
pub fn horner<CS: ConstraintSystem<Fr>>(mut cs: CS, x: &Expr, coeffs: &[Expr]) -> Result<Expr> {
    let Some((last, rest)) = coeffs.split_last() else {
        return Ok(zero());
    };
    let mut acc = last.clone();
    for (k, c) in rest.iter().enumerate().rev() {
        let p = mul(cs.namespace(|| format!("h{k}")), &acc, x)?;
        acc = add(&var(&p), c);
    }
    Ok(acc)
}

#[cfg(test)]
mod tests {
    use super::*;
    use ff::Field;
    use nova_snark::frontend::test_cs::TestConstraintSystem;

    #[test]
    fn horner_is_the_sum_of_powers() {
        let mut cs = TestConstraintSystem::<Fr>::new();
        let x = alloc(cs.namespace(|| "x"), Some(Fr::from(7u64))).unwrap();
        let c: Vec<Expr> = (0..5u64)
            .map(|k| {
                var(&alloc(cs.namespace(|| format!("c{k}")), Some(Fr::from(k * k + 1))).unwrap())
            })
            .collect();
        let h = horner(cs.namespace(|| "h"), &var(&x), &c).unwrap();
        let want: Fr = (0..5u64)
            .map(|k| Fr::from(7u64).pow_vartime([k]) * Fr::from(k * k + 1))
            .sum();
        assert_eq!(h.get_value(), Some(want));
        assert!(cs.is_satisfied());
        assert_eq!(cs.num_constraints(), 4);
    }

    #[test]
    fn add_assign_is_add_in_place() {
        let mut cs = TestConstraintSystem::<Fr>::new();
        let v: Vec<Expr> = (0..6u64)
            .map(|k| var(&alloc(cs.namespace(|| format!("v{k}")), Some(Fr::from(k + 3))).unwrap()))
            .collect();
        let (mut acc, mut want) = (zero(), zero());
        for (k, e) in v.iter().enumerate() {
            // a repeated variable too: its coefficient must add up
            add_assign(&mut acc, e);
            want = add(&want, e);
            if k % 2 == 0 {
                add_assign(&mut acc, &scale(&v[0], Fr::from(2u64)));
                want = add(&want, &scale(&v[0], Fr::from(2u64)));
            }
        }
        assert_eq!(acc.get_value(), want.get_value());
        // the same linear combination, term by term
        let terms = |e: &Expr| -> Vec<_> { e.lc(Fr::ONE).iter().map(|(v, c)| (v, *c)).collect() };
        assert_eq!(terms(&acc), terms(&want));
        assert_eq!(terms(&acc).len(), 6);
    }
}
