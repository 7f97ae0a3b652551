//! Exponential, softmax and the cross-entropy gradient in fixed point, as
//! docs/SEMANTICS.md §3.1 states them: the reference for the loss
//! `cross_entropy` (the executor's `loss_grad` and the circuit's softmax
//! block in the cells use it).
//!
//! `exp` is defined for x ≤ 0 (softmax subtracts the maximum first) by
//! range reduction and a polynomial: with L = round(ln 2·S) and u = −x,
//! `u = k·L + ρ` (0 ≤ ρ < L), `e_ρ ≈ S·e^{−ρ/S}` by Horner on the degree-10
//! Taylor polynomial, one rescale a step, then `exp(x) = rescale_{2^k}(e_ρ)`.
//! Every step is a division with remainder the circuit checks
//! (`zkstep_gadgets::arith::exp_neg`).

use crate::fixed::{div_rem, div_round, rescale, Rounding, SCALE_I128};

/// round(ln 2 · S).
pub const LN2_FX: i128 = 693_147_181;
/// Degree of the Taylor polynomial of e^{−y} on [0, ln 2): its remainder is
/// below (ln 2)¹¹/11! < 4.5·10⁻¹⁰.
pub const EXP_DEGREE: usize = 10;
/// Past this k the result is 0 under either rounding (e_ρ ≤ S < 2³⁰, so
/// `e_ρ / 2³¹ < ½`); the circuit divides by `2^min(k, 31)`, which gives the
/// same value.
pub const EXP_MAX_SHIFT: u32 = 31;

/// The coefficients `c_i = round(S / i!)`, i = 0..=10.
pub fn exp_coefficients() -> [i128; EXP_DEGREE + 1] {
    let mut c = [0i128; EXP_DEGREE + 1];
    let mut fact = 1i128;
    for (i, ci) in c.iter_mut().enumerate() {
        if i > 0 {
            fact *= i as i128;
        }
        *ci = (SCALE_I128 + fact / 2) / fact;
    }
    c
}

/// Everything one exponential computed (the gadget's witness).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ExpTrace {
    /// k = ⌊u / L⌋ with u = −x.
    pub k: i128,
    /// ρ = u − k·L ∈ [0, L).
    pub rho: i128,
    /// Horner's values `h_10 = c_10`, `h_i = c_i + rescale_S(−h_{i+1}·ρ)`;
    /// `h[0]` is e_ρ.
    pub h: [i128; EXP_DEGREE + 1],
    /// The remainders of those rescales (`rem[i]` for h_i, i < 10).
    pub rem: [i128; EXP_DEGREE],
    /// The result `rescale_{2^min(k,31)}(e_ρ)`.
    pub value: i128,
    /// Its remainder.
    pub value_rem: i128,
}

/// The bound on `|exp_neg(x) − S·e^{x/S}|` in units of 10⁻⁹: the Taylor
/// remainder (0.45), the coefficients' roundings (½ each, weighted by ρⁱ:
/// 1.63), Horner's ten roundings (½ or < 1 each, weighted alike: 1.63 or
/// 3.26), L's rounding (≤ k·0.44·2⁻ᵏ < 0.22) and the last division (½ or 1).
pub fn exp_error_bound(rounding: Rounding) -> f64 {
    match rounding {
        Rounding::HalfUp => 0.45 + 1.63 + 1.63 + 0.22 + 0.5,
        Rounding::Floor => 0.45 + 1.63 + 3.26 + 0.22 + 1.0,
    }
}

/// `S·e^{x/S}` for x ≤ 0 at scale S, within [`exp_error_bound`] of the
/// real value (docs/SEMANTICS.md §3.1). None for x > 0.
pub fn exp_neg(x: i128, rounding: Rounding) -> Option<ExpTrace> {
    if x > 0 {
        return None;
    }
    let (k, rho) = div_rem(x.checked_neg()?, LN2_FX)?;
    let c = exp_coefficients();
    let mut h = [0i128; EXP_DEGREE + 1];
    let mut rem = [0i128; EXP_DEGREE];
    h[EXP_DEGREE] = c[EXP_DEGREE];
    for i in (0..EXP_DEGREE).rev() {
        let r = rescale(-h[i + 1] * rho, SCALE_I128, rounding)?;
        h[i] = c[i] + r.q;
        rem[i] = r.r;
    }
    let shift = k.min(EXP_MAX_SHIFT as i128) as u32;
    let r = rescale(h[0], 1i128 << shift, rounding)?;
    Some(ExpTrace {
        k,
        rho,
        h,
        rem,
        value: r.q,
        value_rem: r.r,
    })
}

/// One row's softmax with every value the circuit checks.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SoftmaxTrace {
    /// `m = max z`.
    pub m: i128,
    /// `exp(z_j − m)` per entry.
    pub exp: Vec<ExpTrace>,
    /// `Σ e_j`.
    pub sum: i128,
    /// `p_j = div_round(e_j·S, Σe)`.
    pub p: Vec<i128>,
    /// The divisions' remainders (in `[0, 2·Σe)`).
    pub p_rem: Vec<i128>,
}

/// Softmax of one row of logits at scale S: `m = max z`,
/// `e_j = exp(z_j − m)`, `p_j = div_round(e_j·S, Σe)` (a division by the
/// value-dependent Σe ≥ S, rounded like a rescale). None on overflow.
pub fn softmax(z: &[i128], rounding: Rounding) -> Option<Vec<i128>> {
    softmax_trace(z, rounding).map(|t| t.p)
}

/// [`softmax`] with its trace. None on overflow or an empty row.
pub fn softmax_trace(z: &[i128], rounding: Rounding) -> Option<SoftmaxTrace> {
    let m = z.iter().copied().max()?;
    let exp: Vec<ExpTrace> = z
        .iter()
        .map(|&zj| exp_neg(zj.checked_sub(m)?, rounding))
        .collect::<Option<_>>()?;
    let sum: i128 = exp.iter().map(|e| e.value).sum();
    let (p, p_rem) = exp
        .iter()
        .map(|e| div_round(e.value.checked_mul(SCALE_I128)?, sum, rounding))
        .collect::<Option<Vec<_>>>()?
        .into_iter()
        .unzip();
    Some(SoftmaxTrace {
        m,
        exp,
        sum,
        p,
        p_rem,
    })
}

/// What a fold of `rows` output units, from `j0`, `active` of them in use,
/// checks of one sample's softmax: the row's maximum and sum (the same in
/// every fold of the layer), the exponentials and probabilities of its
/// units (a unit not in use is an entry at the maximum: `exp(0) = S`, its
/// probability `S²/Σ`), and which of its units attains the maximum (the
/// first in the row that does; None when another fold holds it). The
/// semantics is the whole row's [`softmax_trace`]; this only cuts it.
pub fn softmax_tile(
    full: &SoftmaxTrace,
    j0: usize,
    rows: usize,
    active: usize,
    rounding: Rounding,
) -> Option<(SoftmaxTrace, Option<usize>)> {
    let at_max = exp_neg(0, rounding)?;
    let (p_max, r_max) = div_round(at_max.value.checked_mul(SCALE_I128)?, full.sum, rounding)?;
    let mut t = SoftmaxTrace {
        m: full.m,
        exp: Vec::with_capacity(rows),
        sum: full.sum,
        p: Vec::with_capacity(rows),
        p_rem: Vec::with_capacity(rows),
    };
    for r in 0..rows {
        let j = j0 + r;
        if r < active {
            t.exp.push(full.exp.get(j)?.clone());
            t.p.push(*full.p.get(j)?);
            t.p_rem.push(*full.p_rem.get(j)?);
        } else {
            t.exp.push(at_max.clone());
            t.p.push(p_max);
            t.p_rem.push(r_max);
        }
    }
    // the maximum's entry: exp(0), the only one reduced by k = 0, ρ = 0
    let first = full.exp.iter().position(|e| e.k == 0 && e.rho == 0)?;
    let hit = (j0..j0 + active).contains(&first).then(|| first - j0);
    Some((t, hit))
}

/// The cross-entropy gradient constant `c = round(S / B)`.
pub fn ce_grad_c(batch: usize) -> i128 {
    let b = batch as i128;
    (SCALE_I128 + b / 2) / b
}

/// The cross-entropy gradient of a batch with respect to the logits, at
/// scale S: `dZ[i, j] = rescale_S(c·(P[i, j] − Y[i, j]))` with
/// `c = round(S / B)` and P the row-wise [`softmax`] of Z (Y one-hot at
/// scale S, or any distribution). The loss itself, `−(1/B)·Σ Y·ln P`, is
/// reported, not proven (as MSE's is). None on overflow or an empty row.
pub fn cross_entropy_grad(
    z: &[Vec<i128>],
    y: &[Vec<i128>],
    rounding: Rounding,
) -> Option<Vec<Vec<i128>>> {
    let b = z.len() as i128;
    if b == 0 || y.len() != z.len() {
        return None;
    }
    let c = ce_grad_c(b as usize);
    z.iter()
        .zip(y)
        .map(|(zr, yr)| {
            let p = softmax(zr, rounding)?;
            if yr.len() != p.len() {
                return None;
            }
            p.iter()
                .zip(yr)
                .map(|(pi, yi)| rescale(c.checked_mul(pi - yi)?, SCALE_I128, rounding).map(|r| r.q))
                .collect()
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn coefficients_are_the_rounded_inverse_factorials() {
        let c = exp_coefficients();
        assert_eq!(c[0], 1_000_000_000);
        assert_eq!(c[1], 1_000_000_000);
        assert_eq!(c[2], 500_000_000);
        assert_eq!(c[3], 166_666_667);
        assert_eq!(c[10], 276); // 10⁹ / 3 628 800 = 275.6
    }

    /// |exp_neg(x) − S·e^{x/S}| ≤ [`exp_error_bound`] for x from 0 down to
    /// −40 (every reduction k of interest, both roundings), exact at 0, 0 far below.
    #[test]
    fn exp_is_within_its_bound_of_float64() {
        let s = SCALE_I128 as f64;
        for rounding in [Rounding::HalfUp, Rounding::Floor] {
            assert_eq!(exp_neg(0, rounding).unwrap().value, SCALE_I128);
            let mut worst = 0f64;
            let mut x = 0i128;
            while x > -40 * SCALE_I128 {
                let got = exp_neg(x, rounding).unwrap().value as f64;
                worst = worst.max((got - s * (x as f64 / s).exp()).abs());
                x -= 7_654_321;
            }
            eprintln!("{rounding:?}: worst {worst:.2} units");
            assert!(worst <= exp_error_bound(rounding), "{rounding:?}: {worst}");
            assert_eq!(exp_neg(-100 * SCALE_I128, rounding).unwrap().value, 0);
        }
        assert!(exp_neg(1, Rounding::HalfUp).is_none());
    }

    /// Each probability is within E·(n + 1) + 1 units of float64's softmax
    /// (E the exponential's bound), and the rows sum to S within n units.
    #[test]
    fn softmax_is_within_its_bound_of_float64() {
        let s = SCALE_I128 as f64;
        let rows: [&[i128]; 4] = [
            &[0, 0],
            &[1_500_000_000, -2_000_000_000, 300_000_000, 0],
            &[
                -7_000_000_000,
                9_000_000_000,
                8_999_999_999,
                5,
                -5,
                12,
                0,
                1,
                2,
                3,
            ],
            &[20_000_000_000, -20_000_000_000, 0],
        ];
        for z in rows {
            let p = softmax(z, Rounding::HalfUp).unwrap();
            let zf: Vec<f64> = z.iter().map(|&v| v as f64 / s).collect();
            let mf = zf.iter().cloned().fold(f64::MIN, f64::max);
            let ef: Vec<f64> = zf.iter().map(|v| (v - mf).exp()).collect();
            let sf: f64 = ef.iter().sum();
            let n = z.len() as f64;
            for (pi, ei) in p.iter().zip(&ef) {
                let err = (*pi as f64 - s * ei / sf).abs();
                let bound = exp_error_bound(Rounding::HalfUp) * (n + 1.0) + 1.0;
                assert!(err <= bound, "{z:?}: {err}");
            }
            let total: i128 = p.iter().sum();
            assert!((total - SCALE_I128).abs() <= z.len() as i128, "{z:?}");
        }
    }

    /// Cut into tiles of 1–4 units (the last one padded), a row's softmax is
    /// the whole row's: every tile carries its maximum and sum, the units'
    /// values are the row's in order, a padded unit sits at the maximum
    /// (exp(0) = S, p = S²/Σ), and exactly one tile holds the first unit
    /// attaining the maximum (here a tie: units 1 and 4).
    #[test]
    fn tiles_of_a_row_are_the_row() {
        let z = [3, 9_000_000_000, -2_000_000_000, 7, 9_000_000_000, 0, 5];
        for rounding in [Rounding::HalfUp, Rounding::Floor] {
            let full = softmax_trace(&z, rounding).unwrap();
            for rows in 1..=4 {
                let mut hits = vec![];
                let (mut exps, mut ps) = (vec![], vec![]);
                for j0 in (0..z.len()).step_by(rows) {
                    let active = rows.min(z.len() - j0);
                    let (t, hit) = softmax_tile(&full, j0, rows, active, rounding).unwrap();
                    assert_eq!((t.m, t.sum), (full.m, full.sum));
                    exps.extend(t.exp[..active].iter().cloned());
                    ps.extend(t.p[..active].iter().cloned());
                    for r in active..rows {
                        assert_eq!(t.exp[r].value, SCALE_I128);
                        assert_eq!(t.p[r], div_round(SCALE_I128 * SCALE_I128, full.sum, rounding).unwrap().0);
                    }
                    if let Some(h) = hit {
                        hits.push(j0 + h);
                    }
                }
                assert_eq!(exps, full.exp, "{rows} a tile");
                assert_eq!(ps, full.p, "{rows} a tile");
                assert_eq!(hits, vec![1], "{rows} a tile");
            }
            // a fold that checks none of its units holds no hit
            assert_eq!(softmax_tile(&full, 0, 2, 0, rounding).unwrap().1, None);
        }
    }

    /// One-hot targets: the gradient is (p − y)/B within the softmax's bound
    /// plus the rescale's half unit, and each row of it sums to about 0.
    #[test]
    fn cross_entropy_gradient_is_p_minus_y_over_b() {
        let s = SCALE_I128;
        let z = vec![vec![2 * s, 0, -s], vec![0, 0, 0], vec![-3 * s, 5 * s, s]];
        let y = vec![vec![s, 0, 0], vec![0, s, 0], vec![0, 0, s]];
        let g = cross_entropy_grad(&z, &y, Rounding::HalfUp).unwrap();
        for (i, row) in g.iter().enumerate() {
            let p = softmax(&z[i], Rounding::HalfUp).unwrap();
            for j in 0..3 {
                let want = (p[j] - y[i][j]) as f64 / 3.0;
                assert!((row[j] as f64 - want).abs() <= 1.0, "{i},{j}");
            }
            assert!(row.iter().sum::<i128>().abs() <= 3, "row {i}");
        }
        assert!(cross_entropy_grad(&z, &y[..2], Rounding::HalfUp).is_none());
    }
}
