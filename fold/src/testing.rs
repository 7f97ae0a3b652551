//! Step circuits for tests: a permutation shown by a grand product at a
//! challenge drawn after the values are committed ([`Permutation`]), a
//! lookup with late multiplicities ([`TableLookup`]), and a claim fixed
//! before a second round of challenges ([`Claim`]).
//!
//! Phase one allocates a fold's values a₁…aₙ and b₁…bₙ (W₁); phase two
//! computes Π(α − aᵢ) and Π(α − bᵢ) (W₂). `PerFold`: each fold's two
//! products must be equal (b a permutation of a within the fold), and the
//! state counts folds. `PerRun`: the state carries both running products
//! across folds, equal at the end iff the run's b is a permutation of its a.

use ff::PrimeField;
use nova_snark::frontend::num::AllocatedNum;
use nova_snark::frontend::{ConstraintSystem, SynthesisError};

/// The permutation circuit of one fold.
#[derive(Clone, Debug)]
pub struct Permutation<F> {
    /// Values of the first list.
    pub a: Vec<F>,
    /// Values of the second list.
    pub b: Vec<F>,
    /// Whether each fold must hold a permutation (PerFold) or only the run.
    pub per_fold: bool,
    /// Added to α where phase two computes its values (not in its
    /// constraints): a prover that computes W₂ under another challenge.
    pub skew: F,
}

impl<F: PrimeField> Permutation<F> {
    /// An honest fold of these lists.
    pub fn new(a: Vec<u64>, b: Vec<u64>, per_fold: bool) -> Self {
        assert_eq!(a.len(), b.len());
        Permutation {
            a: a.into_iter().map(F::from).collect(),
            b: b.into_iter().map(F::from).collect(),
            per_fold,
            skew: F::ZERO,
        }
    }

    /// Π(α − v) natively.
    pub fn product(alpha: F, v: &[F]) -> F {
        v.iter().fold(F::ONE, |p, x| p * (alpha - x))
    }
}

fn running_product<F: PrimeField, CS: ConstraintSystem<F>>(
    mut cs: CS,
    start: &AllocatedNum<F>,
    alpha: &AllocatedNum<F>,
    skew: F,
    values: &[AllocatedNum<F>],
) -> Result<AllocatedNum<F>, SynthesisError> {
    let mut p = start.clone();
    for (k, v) in values.iter().enumerate() {
        let next = AllocatedNum::alloc(cs.namespace(|| format!("p{k}")), || {
            match (p.get_value(), alpha.get_value(), v.get_value()) {
                (Some(p), Some(a), Some(v)) => Ok(p * (a + skew - v)),
                _ => Err(SynthesisError::AssignmentMissing),
            }
        })?;
        cs.enforce(
            || format!("p{k}·(α − v{k})"),
            |lc| lc + p.get_variable(),
            |lc| lc + alpha.get_variable() - v.get_variable(),
            |lc| lc + next.get_variable(),
        );
        p = next;
    }
    Ok(p)
}

impl<F: PrimeField> crate::StepCircuit<F> for Permutation<F> {
    type Carry = (Vec<AllocatedNum<F>>, Vec<AllocatedNum<F>>, Vec<AllocatedNum<F>>);

    fn arity(&self) -> usize {
        2
    }

    fn num_challenges(&self) -> usize {
        1
    }

    fn first<CS: ConstraintSystem<F>>(
        &self,
        cs: &mut CS,
        z: &[AllocatedNum<F>],
    ) -> Result<Self::Carry, SynthesisError> {
        let mut alloc = |name: &str, v: &[F]| {
            v.iter()
                .enumerate()
                .map(|(k, x)| AllocatedNum::alloc(cs.namespace(|| format!("{name}{k}")), || Ok(*x)))
                .collect::<Result<Vec<_>, _>>()
        };
        let a = alloc("a", &self.a)?;
        let b = alloc("b", &self.b)?;
        Ok((z.to_vec(), a, b))
    }

    fn second<CS: ConstraintSystem<F>>(
        &self,
        cs: &mut CS,
        (z, a, b): Self::Carry,
        challenges: &[AllocatedNum<F>],
    ) -> Result<Vec<AllocatedNum<F>>, SynthesisError> {
        let alpha = &challenges[0];
        if self.per_fold {
            let one = AllocatedNum::alloc(cs.namespace(|| "one"), || Ok(F::ONE))?;
            cs.enforce(
                || "one",
                |lc| lc + one.get_variable(),
                |lc| lc + CS::one(),
                |lc| lc + CS::one(),
            );
            let pa = running_product(cs.namespace(|| "a"), &one, alpha, self.skew, &a)?;
            let pb = running_product(cs.namespace(|| "b"), &one, alpha, self.skew, &b)?;
            cs.enforce(
                || "Π(α − a) = Π(α − b)",
                |lc| lc + pa.get_variable() - pb.get_variable(),
                |lc| lc + CS::one(),
                |lc| lc,
            );
            let count = AllocatedNum::alloc(cs.namespace(|| "count"), || {
                z[0].get_value()
                    .map(|v| v + F::ONE)
                    .ok_or(SynthesisError::AssignmentMissing)
            })?;
            cs.enforce(
                || "count + 1",
                |lc| lc + z[0].get_variable() + CS::one(),
                |lc| lc + CS::one(),
                |lc| lc + count.get_variable(),
            );
            Ok(vec![count, z[1].clone()])
        } else {
            let pa = running_product(cs.namespace(|| "a"), &z[0], alpha, self.skew, &a)?;
            let pb = running_product(cs.namespace(|| "b"), &z[1], alpha, self.skew, &b)?;
            Ok(vec![pa, pb])
        }
    }
}

/// z ↦ 2z + 1 on one slot: the smallest one-phase circuit (nova-snark's
/// trait, run through [`crate::OnePhase`]).
#[derive(Clone, Debug, Default)]
pub struct Doubler;

impl<F: PrimeField> nova_snark::traits::circuit::StepCircuit<F> for Doubler {
    fn arity(&self) -> usize {
        1
    }

    fn synthesize<CS: ConstraintSystem<F>>(
        &self,
        cs: &mut CS,
        z: &[AllocatedNum<F>],
    ) -> Result<Vec<AllocatedNum<F>>, SynthesisError> {
        let y = AllocatedNum::alloc(cs.namespace(|| "y"), || {
            z[0].get_value()
                .map(|v| v.double() + F::ONE)
                .ok_or(SynthesisError::AssignmentMissing)
        })?;
        cs.enforce(
            || "y = 2z + 1",
            |lc| lc + z[0].get_variable() + z[0].get_variable() + CS::one(),
            |lc| lc + CS::one(),
            |lc| lc + y.get_variable(),
        );
        Ok(vec![y])
    }
}

/// A LogUp lookup for tests: one fold's queries against its slice of the
/// table {0, …, n·s − 1}, where fold j holds entries [j·s, (j+1)·s) and
/// their multiplicities (counted over the whole run, so they are late
/// values of phase one). Phase two adds Σ 1/(α − v) over the queries and
/// Σ mₖ/(α − t) over the slice to the state (Q, T, next slice base); the
/// run's values all lie in the table iff Q = T at the end (`PerRun`).
#[derive(Clone, Debug)]
pub struct TableLookup<F> {
    /// The fold's queries.
    pub values: Vec<F>,
    /// The multiplicities of the fold's table slice (its size is the shape's).
    pub mult: Vec<F>,
}

impl<F: PrimeField> TableLookup<F> {
    /// The folds of a run: `queries[j]` for fold j, slices of `s` entries,
    /// multiplicities counted honestly over the run.
    pub fn run(queries: &[Vec<u64>], s: usize) -> Vec<Self> {
        let n = queries.len() * s;
        let mut count = vec![0u64; n];
        for v in queries.iter().flatten() {
            if let Some(c) = count.get_mut(*v as usize) {
                *c += 1;
            }
        }
        queries
            .iter()
            .enumerate()
            .map(|(j, q)| TableLookup {
                values: q.iter().map(|v| F::from(*v)).collect(),
                mult: count[j * s..(j + 1) * s].iter().map(|c| F::from(*c)).collect(),
            })
            .collect()
    }
}

/// v ↦ 1/(α − v) allocated, with (α − v)·h = m (m = 1 for a query).
fn inverse_term<F: PrimeField, CS: ConstraintSystem<F>>(
    mut cs: CS,
    alpha: &AllocatedNum<F>,
    v: nova_snark::frontend::LinearCombination<F>,
    v_value: Option<F>,
    m: Option<(&AllocatedNum<F>, Option<F>)>,
) -> Result<AllocatedNum<F>, SynthesisError> {
    let h = AllocatedNum::alloc(cs.namespace(|| "h"), || {
        let d = alpha.get_value().zip(v_value).map(|(a, v)| a - v);
        let num = m.map_or(Some(F::ONE), |(_, mv)| mv);
        match (d, num) {
            (Some(d), Some(n)) => Option::from(d.invert())
                .map(|i: F| i * n)
                .ok_or(SynthesisError::DivisionByZero),
            _ => Err(SynthesisError::AssignmentMissing),
        }
    })?;
    cs.enforce(
        || "(α − v)·h = m",
        |lc| lc + alpha.get_variable() - &v,
        |lc| lc + h.get_variable(),
        |lc| match m {
            Some((mv, _)) => lc + mv.get_variable(),
            None => lc + CS::one(),
        },
    );
    Ok(h)
}

impl<F: PrimeField> crate::StepCircuit<F> for TableLookup<F> {
    type Carry = (Vec<AllocatedNum<F>>, Vec<AllocatedNum<F>>, Vec<AllocatedNum<F>>);

    fn arity(&self) -> usize {
        3
    }

    fn num_challenges(&self) -> usize {
        1
    }

    fn late(&self) -> usize {
        self.mult.len()
    }

    fn first<CS: ConstraintSystem<F>>(
        &self,
        cs: &mut CS,
        z: &[AllocatedNum<F>],
    ) -> Result<Self::Carry, SynthesisError> {
        let values = self
            .values
            .iter()
            .enumerate()
            .map(|(k, v)| AllocatedNum::alloc(cs.namespace(|| format!("v{k}")), || Ok(*v)))
            .collect::<Result<Vec<_>, _>>()?;
        // the multiplicities last: they are the late values
        let mult = self
            .mult
            .iter()
            .enumerate()
            .map(|(k, m)| AllocatedNum::alloc(cs.namespace(|| format!("m{k}")), || Ok(*m)))
            .collect::<Result<Vec<_>, _>>()?;
        Ok((z.to_vec(), values, mult))
    }

    fn second<CS: ConstraintSystem<F>>(
        &self,
        cs: &mut CS,
        (z, values, mult): Self::Carry,
        challenges: &[AllocatedNum<F>],
    ) -> Result<Vec<AllocatedNum<F>>, SynthesisError> {
        use nova_snark::frontend::LinearCombination;
        let alpha = &challenges[0];
        let mut q = LinearCombination::zero() + z[0].get_variable();
        let mut qv = z[0].get_value();
        for (k, v) in values.iter().enumerate() {
            let h = inverse_term(
                cs.namespace(|| format!("query{k}")),
                alpha,
                LinearCombination::zero() + v.get_variable(),
                v.get_value(),
                None,
            )?;
            q = q + h.get_variable();
            qv = qv.zip(h.get_value()).map(|(a, b)| a + b);
        }
        let mut t = LinearCombination::zero() + z[1].get_variable();
        let mut tv = z[1].get_value();
        for (k, m) in mult.iter().enumerate() {
            // the entry base + k, base the state's next slice
            let entry = LinearCombination::zero() + z[2].get_variable() + (F::from(k as u64), CS::one());
            let ev = z[2].get_value().map(|b| b + F::from(k as u64));
            let g = inverse_term(
                cs.namespace(|| format!("entry{k}")),
                alpha,
                entry,
                ev,
                Some((m, m.get_value())),
            )?;
            t = t + g.get_variable();
            tv = tv.zip(g.get_value()).map(|(a, b)| a + b);
        }
        let s = F::from(mult.len() as u64);
        let mut out = vec![];
        for (name, lc, val) in [
            ("Q", q, qv),
            ("T", t, tv),
            (
                "base",
                LinearCombination::zero() + z[2].get_variable() + (s, CS::one()),
                z[2].get_value().map(|b| b + s),
            ),
        ] {
            let n = AllocatedNum::alloc(cs.namespace(|| name), || {
                val.ok_or(SynthesisError::AssignmentMissing)
            })?;
            cs.enforce(|| format!("{name} next"), |_| lc, |l| l + CS::one(), |l| l + n.get_variable());
            out.push(n);
        }
        Ok(out)
    }
}

/// A three-phase step circuit for tests (`PerRunTwice`): a vector v
/// supplied after the first-round challenge ρ, checked against ρ·a by a sum
/// at the second-round challenge γ — the shape of zkstep's consumed τA.
///
/// Phase one allocates a₁…aₙ (W₁); phase two tᵢ = ρ·aᵢ and the claimed vᵢ
/// (W₂: honestly tᵢ); W₃ the Horner sum Σᵢ (vᵢ − tᵢ)·γ^(n−1−i), which must
/// be 0. The state is the running Σv and a count of folds.
#[derive(Clone, Debug)]
pub struct Claim<F> {
    /// The fold's values.
    pub a: Vec<F>,
    /// Added to each vᵢ: a wrong claim fixed before γ.
    pub skew: Vec<F>,
    /// Whether v's last value is chosen once γ is known so that the sum is
    /// 0 (what a prover whose W₂ could follow γ would do).
    pub chase: bool,
    /// The γ a chasing prover aims at (None: the one the circuit is given).
    pub guess: Option<F>,
}

impl<F: PrimeField> Claim<F> {
    /// An honest fold of these values.
    pub fn new(a: &[u64]) -> Self {
        Claim {
            a: a.iter().map(|v| F::from(*v)).collect(),
            skew: vec![F::ZERO; a.len()],
            chase: false,
            guess: None,
        }
    }

    /// This fold's v at ρ and γ.
    pub fn claimed(&self, rho: F, gamma: F) -> Vec<F> {
        let mut v: Vec<F> = self.a.iter().zip(&self.skew).map(|(a, s)| rho * a + s).collect();
        if self.chase {
            // h = Σ_{i<n−1} sᵢ·γ^(n−1−i); the last difference cancels it
            let n = v.len();
            let gamma = self.guess.unwrap_or(gamma);
            let h = self.skew[..n - 1].iter().fold(F::ZERO, |h, s| (h + s) * gamma);
            v[n - 1] = rho * self.a[n - 1] - h;
        }
        v
    }
}

impl<F: PrimeField> crate::StepCircuit<F> for Claim<F> {
    type Carry = (Vec<AllocatedNum<F>>, Vec<AllocatedNum<F>>);

    fn arity(&self) -> usize {
        2
    }

    fn num_challenges(&self) -> usize {
        2
    }

    fn num_late_challenges(&self) -> usize {
        1
    }

    fn first<CS: ConstraintSystem<F>>(
        &self,
        cs: &mut CS,
        z: &[AllocatedNum<F>],
    ) -> Result<Self::Carry, SynthesisError> {
        let a = self
            .a
            .iter()
            .enumerate()
            // each value's work is a unit (crate::in_unit): its variables in
            // all three parts laid out side by side with the other values'
            .map(|(k, x)| crate::in_unit("claim", k, || AllocatedNum::alloc(cs.namespace(|| format!("a{k}")), || Ok(*x))))
            .collect::<Result<Vec<_>, _>>()?;
        Ok((z.to_vec(), a))
    }

    fn second<CS: ConstraintSystem<F>>(
        &self,
        cs: &mut CS,
        (z, a): Self::Carry,
        challenges: &[AllocatedNum<F>],
    ) -> Result<Vec<AllocatedNum<F>>, SynthesisError> {
        let (rho, gamma) = (&challenges[0], &challenges[1]);
        let v_vals = match (rho.get_value(), gamma.get_value()) {
            (Some(r), Some(g)) => Some(self.claimed(r, g)),
            _ => None,
        };
        let mut t = vec![];
        let mut v = vec![];
        for (k, ak) in a.iter().enumerate() {
            let (tk, vk) = crate::in_unit("claim", k, || {
                let tk = rho.mul(cs.namespace(|| format!("t{k}")), ak)?;
                let vk = AllocatedNum::alloc(cs.namespace(|| format!("v{k}")), || {
                    v_vals.as_ref().map(|v| v[k]).ok_or(SynthesisError::AssignmentMissing)
                })?;
                Ok::<_, SynthesisError>((tk, vk))
            })?;
            t.push(tk);
            v.push(vk);
        }
        let sum = AllocatedNum::alloc(cs.namespace(|| "sum"), || {
            v.iter().try_fold(z[0].get_value().ok_or(SynthesisError::AssignmentMissing)?, |s, x| {
                x.get_value().map(|x| s + x).ok_or(SynthesisError::AssignmentMissing)
            })
        })?;
        cs.enforce(
            || "sum = z0 + Σv",
            |lc| v.iter().fold(lc + z[0].get_variable(), |lc, x| lc + x.get_variable()),
            |lc| lc + CS::one(),
            |lc| lc + sum.get_variable(),
        );
        let count = AllocatedNum::alloc(cs.namespace(|| "count"), || {
            z[1].get_value().map(|c| c + F::ONE).ok_or(SynthesisError::AssignmentMissing)
        })?;
        cs.enforce(
            || "count + 1",
            |lc| lc + z[1].get_variable() + CS::one(),
            |lc| lc + CS::one(),
            |lc| lc + count.get_variable(),
        );
        // everything at γ goes to W₃
        crate::after_late_challenges(|| -> Result<(), SynthesisError> {
            let mut h: Option<AllocatedNum<F>> = None;
            for (k, (vk, tk)) in v.iter().zip(&t).enumerate() {
                let next = crate::in_unit("claim", k, || -> Result<AllocatedNum<F>, SynthesisError> {
                    let next = AllocatedNum::alloc(cs.namespace(|| format!("h{k}")), || {
                        let d = vk.get_value().zip(tk.get_value()).map(|(v, t)| v - t);
                        match &h {
                            None => d,
                            Some(h) => h.get_value().zip(gamma.get_value()).zip(d).map(|((h, g), d)| h * g + d),
                        }
                        .ok_or(SynthesisError::AssignmentMissing)
                    })?;
                    match &h {
                        None => cs.enforce(
                            || format!("h{k} = v{k} − t{k}"),
                            |lc| lc + vk.get_variable() - tk.get_variable(),
                            |lc| lc + CS::one(),
                            |lc| lc + next.get_variable(),
                        ),
                        Some(h) => cs.enforce(
                            || format!("h{k} = h·γ + v{k} − t{k}"),
                            |lc| lc + h.get_variable(),
                            |lc| lc + gamma.get_variable(),
                            |lc| lc + next.get_variable() - vk.get_variable() + tk.get_variable(),
                        ),
                    }
                    Ok(next)
                })?;
                h = Some(next);
            }
            if let Some(h) = h {
                cs.enforce(|| "Σ(v − t)γ = 0", |lc| lc + h.get_variable(), |lc| lc + CS::one(), |lc| lc);
            }
            Ok(())
        })?;
        Ok(vec![sum, count])
    }
}
