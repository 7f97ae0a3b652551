//! Adam and AdamW in zkstep's fixed point: the element update and the
//! per-step constants, exactly as docs/SEMANTICS.md §3 states them.
//!
//! PyTorch's order (`torch.optim.Adam`/`AdamW`, `foreach=False`): the step
//! count becomes t (1 for the first update); AdamW first decays the
//! parameter, θ ← θ·(1 − lr·λ); Adam instead adds λ·θ to the gradient;
//! then `m ← β₁m + (1−β₁)g`, `v ← β₂v + (1−β₂)g²`, and
//! `θ ← θ − (lr/bc₁)·m / (√v/√bc₂ + ε)` with `bc_i = 1 − β_iᵗ`.
//!
//! Every value is an integer at scale S (both moments and the denominator
//! at S²); each
//! product is brought back by [`rescale`] under the spec's rounding, the
//! root is [`sqrt_round`] (√v' at scale S², rounded to nearest), and the
//! last quotient is a division by the value-dependent denominator with
//! [`div_round`] (rounded like a rescale). The step constants
//! (`β_iᵗ`, `lr/bc₁`, `1/√bc₂`) are computed from t by the same rescales,
//! so a verifier recomputes them from the step index alone.
//!
//! A layer's update ([`update`]) feeds each weight the gradient
//! `g = rescale_S(dW_acc)` (like momentum) and each bias `g = db_acc`, with
//! the update number t = (the checkpoint's step) + 1.

use crate::checked::Ctx;
use crate::error::{CoreError, Result};
use crate::fixed::{div_round, isqrt, rescale, Rounding, SCALE_I128};
use crate::model::{LayerParams, StateTensor};
pub use crate::spec::AdamHyper;

/// The constants of update number t (t ≥ 1), all at scale S.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AdamStep {
    /// t.
    pub t: u64,
    /// β₁ᵗ: `p₀ = S`, `p_t = rescale_S(p_{t−1}·β₁)`.
    pub pow1: i128,
    /// β₂ᵗ, the same way.
    pub pow2: i128,
    /// `bc₁ = S − β₁ᵗ` (≥ 1).
    pub bc1: i128,
    /// `bc₂ = S − β₂ᵗ` (≥ 1).
    pub bc2: i128,
    /// The step size `k₁ = rescale_{bc₁}(lr·S)` = lr / bc₁.
    pub k1: i128,
    /// `√bc₂` at scale S: `isqrt(bc₂·S)`.
    pub sqrt_bc2: i128,
    /// `c₂ = rescale_{√bc₂}(S²)` = 1/√bc₂.
    pub c2: i128,
}

impl AdamStep {
    /// The constants of update t under `rounding`. The powers are defined
    /// step by step (so that every implementation rounds them the same
    /// way) and computed by [`power_after`], whose cost is logarithmic in t
    /// where t single steps would take seconds (a verifier computes these
    /// for the step a proof claims). None for t = 0 or β outside (0, 1).
    pub fn at(h: &AdamHyper, t: u64, rounding: Rounding) -> Option<Self> {
        let s = SCALE_I128;
        let ok = |b: i64| b > 0 && (b as i128) < s;
        if t == 0 || !ok(h.beta1_fx) || !ok(h.beta2_fx) || h.eps_fx < 1 {
            return None;
        }
        let pow1 = power_after(s, h.beta1_fx as i128, t, rounding)?;
        let pow2 = power_after(s, h.beta2_fx as i128, t, rounding)?;
        // β < 1 keeps every power ≤ β·S < S, so each bias correction is ≥ 1
        let (bc1, bc2) = (s - pow1, s - pow2);
        let k1 = rescale(h.lr_fx as i128 * s, bc1, rounding)?.q;
        let sqrt_bc2 = isqrt((bc2 * s) as u128) as i128;
        let c2 = rescale(s * s, sqrt_bc2, rounding)?.q;
        Some(AdamStep {
            t,
            pow1,
            pow2,
            bc1,
            bc2,
            k1,
            sqrt_bc2,
            c2,
        })
    }
}

/// `p` advanced `n` steps of `p ↦ rescale_S(p·β)` (0 < β < S, p ≥ 0):
/// exactly the value of n single steps (a test compares them), in time
/// logarithmic in the length of each run of equal decrements. Why runs: the
/// decrement `δ(p) = p − rescale_S(p·β)` is non-decreasing in p (one more p
/// adds β/S < 1 to p·β/S, so a monotone rounding adds 0 or 1), and p falls
/// along the sequence, so if δ is the same at p and at p − (j−1)·δ it is
/// the same at every step between, and the sequence is p, p − δ, …,
/// p − j·δ. The longest such j is found by doubling and bisection. β₂ =
/// 1 − 10⁻⁹ under floor is one run of ≈ 10⁹ steps (≈ 5 s step by step).
pub fn power_after(p: i128, beta: i128, n: u64, rounding: Rounding) -> Option<i128> {
    let step = |p: i128| rescale(p.checked_mul(beta)?, SCALE_I128, rounding).map(|r| r.q);
    let (mut p, mut left) = (p, n);
    while left > 0 {
        let d = p - step(p)?;
        if d == 0 {
            break; // a fixed point: every later power is the same
        }
        // whether the first j steps from p all decrease by d
        let run = |j: u64| -> Option<bool> {
            let q = p.checked_sub(i128::from(j - 1).checked_mul(d)?)?;
            Some(q >= 0 && q - step(q)? == d)
        };
        let mut good = 1u64;
        let mut bad = None;
        while good < left {
            let j = good.saturating_mul(2).min(left);
            if run(j)? {
                good = j;
            } else {
                bad = Some(j);
                break;
            }
        }
        if let Some(mut b) = bad {
            while b - good > 1 {
                let m = good + (b - good) / 2;
                if run(m)? {
                    good = m;
                } else {
                    b = m;
                }
            }
        }
        p -= i128::from(good) * d;
        left -= good;
    }
    Some(p)
}

/// One parameter's values before an update.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AdamState {
    /// The parameter θ.
    pub theta: i128,
    /// First moment m, at scale S².
    pub m: i128,
    /// Second moment v (≥ 0), at scale S².
    pub v: i128,
}

/// Everything one element's update computed (the gadget's witness).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AdamTrace {
    /// AdamW: `rescale_{S²}((lr·λ)·θ)`, the decay; Adam: 0.
    pub decay: i128,
    /// Adam: `rescale_S(λ·θ)`, added to the gradient; AdamW: 0.
    pub l2: i128,
    /// The remainder of whichever of the two is computed.
    pub wd_rem: i128,
    /// The gradient the moments see (g, plus the L2 term for Adam).
    pub g: i128,
    /// `m' = rescale_S(β₁·m + (S − β₁)·g·S)`, at scale S².
    pub m: i128,
    /// Its remainder.
    pub m_rem: i128,
    /// `v' = rescale_S(β₂·v + (S − β₂)·g²)`, at scale S² (a squared
    /// gradient of 10⁻⁶ is 10⁻¹² and would vanish at S).
    pub v: i128,
    /// Its remainder.
    pub v_rem: i128,
    /// `round(√(v'·S²))` ([`sqrt_round`]), √v' at scale S².
    pub sqrt_v: i128,
    /// `den = rescale_S(sqrt_v·c₂) + ε·S` at scale S² (≥ ε·S ≥ S).
    pub den: i128,
    /// The remainder of `rescale_S(sqrt_v·c₂)`.
    pub den_rem: i128,
    /// `Δ`: `2·k₁·m' + off = Δ·(2·den) + r`, `0 ≤ r < 2·den` (m' and den
    /// at S², so Δ at S), off = den for half-up rounding, 0 for floor.
    pub delta: i128,
    /// Its remainder r.
    pub delta_rem: i128,
    /// The new parameter `θ' = θ − decay − Δ`.
    pub theta: i128,
}

/// `round(√(v·S²))` for a second moment v ≥ 0 at scale S²: √v at scale S²,
/// rounded to the nearest integer, as `⌊(⌊√(4·v·S²)⌋ + 1) / 2⌋` (which is
/// `⌊√(v·S²) + ½⌋`). At scale S the floor of √v moved a realistic step by
/// ≈ 10⁻³ of itself, always the same way: √v' is tens to hundreds of units
/// there for gradients of 10⁻⁸–10⁻⁷. None for v < 0 or 4·v·S² ≥ 2¹²⁸.
pub fn sqrt_round(v: i128) -> Option<i128> {
    let x4 = u128::try_from(v.checked_mul(4 * SCALE_I128 * SCALE_I128)?).ok()?;
    Some(isqrt(x4).div_ceil(2) as i128)
}

/// One element's Adam/AdamW update under the step constants `k` and the
/// gradient g (scale S). None if an intermediate leaves i128 (the caller
/// names the element; stored values are range-checked by the caller).
pub fn adam_element(
    h: &AdamHyper,
    k: &AdamStep,
    rounding: Rounding,
    st: AdamState,
    g: i128,
) -> Option<AdamTrace> {
    let s = SCALE_I128;
    let (b1, b2) = (h.beta1_fx as i128, h.beta2_fx as i128);
    let wd = h.weight_decay_fx as i128;
    let (decay, l2, wd_rem) = if h.decoupled {
        let lr_wd = (h.lr_fx as i128).checked_mul(wd)?;
        let r = rescale(lr_wd.checked_mul(st.theta)?, s * s, rounding)?;
        (r.q, 0, r.r)
    } else {
        let r = rescale(wd.checked_mul(st.theta)?, s, rounding)?;
        (0, r.q, r.r)
    };
    let g = g.checked_add(l2)?;
    // m at scale S²: β₁·m + (S − β₁)·g·S is at S³ (at S, a moment of a few
    // units stuck where half-up rounds β₁·m back up, and kept stepping
    // while PyTorch's decayed)
    let mr = rescale(
        b1.checked_mul(st.m)?
            .checked_add((s - b1).checked_mul(g)?.checked_mul(s)?)?,
        s,
        rounding,
    )?;
    let g2 = g.checked_mul(g)?;
    // v at scale S²: β₂·v + (S − β₂)·g² is at S³
    let vr = rescale(
        b2.checked_mul(st.v)?
            .checked_add((s - b2).checked_mul(g2)?)?,
        s,
        rounding,
    )?;
    let (m, v) = (mr.q, vr.q);
    if v < 0 {
        return None; // a negative second moment is no Adam state
    }
    let sqrt_v = sqrt_round(v)?;
    // den at scale S²: the root keeps its precision through the division
    let dr = rescale(sqrt_v.checked_mul(k.c2)?, s, rounding)?;
    let den = dr.q.checked_add((h.eps_fx as i128).checked_mul(s)?)?;
    let (delta, delta_rem) = div_round(k.k1.checked_mul(m)?, den, rounding)?;
    let theta = st.theta.checked_sub(decay)?.checked_sub(delta)?;
    Some(AdamTrace {
        decay,
        l2,
        wd_rem,
        g,
        m,
        m_rem: mr.r,
        v,
        v_rem: vr.r,
        sqrt_v,
        den,
        den_rem: dr.r,
        delta,
        delta_rem,
        theta,
    })
}

/// What the Adam update of one layer computed.
#[derive(Clone, Debug)]
pub struct AdamLayerTrace {
    /// The step's constants.
    pub step: AdamStep,
    /// The weights' gradients `rescale_S(dW_acc)`, `[outputs, inputs]`.
    pub dw: Vec<i64>,
    /// Their remainders.
    pub dw_rem: Vec<i64>,
    /// Per weight.
    pub w: Vec<AdamTrace>,
    /// Per bias (gradient `db_acc`).
    pub b: Vec<AdamTrace>,
}

/// One element, with every stored result in the declared range.
fn element(
    ctx: &Ctx,
    h: &AdamHyper,
    k: &AdamStep,
    st: AdamState,
    g: i128,
    (name, i, j): (&'static str, usize, usize),
) -> Result<AdamTrace> {
    let tr = adam_element(h, k, ctx.spec.rounding, st, g).ok_or_else(|| ctx.over(name, i, j))?;
    let wd = if h.decoupled { tr.decay } else { tr.l2 };
    for (v, what) in [
        (tr.theta, name),
        (tr.m, "m'"),
        (tr.v, "v'"),
        (wd, "weight decay"),
        (tr.delta, "Adam step"),
    ] {
        ctx.fit(v, what, i, j)?;
    }
    Ok(tr)
}

/// One Adam/AdamW update of a layer, the update number t ≥ 1.
pub(crate) fn update(
    ctx: &Ctx,
    h: &AdamHyper,
    t: u64,
    lp: &LayerParams,
    dw_acc: &[i128],
    db_acc: &[i128],
) -> Result<(LayerParams, AdamLayerTrace)> {
    let k = AdamStep::at(h, t, ctx.spec.rounding).ok_or_else(|| {
        CoreError::Invalid(format!(
            "Adam's step constants are undefined at update {t} (β must lie in (0, 1), ε ≥ 10⁻⁹)"
        ))
    })?;
    let (m, v) = match lp.state.as_slice() {
        [m, v] => (m, v),
        _ => {
            return Err(CoreError::Invalid(format!(
                "layer {}: the Adam optimizer needs m and v in the checkpoint",
                ctx.layer
            )))
        }
    };
    let n_in = lp.w.cols.max(1);
    let mut new = lp.clone();
    let n = dw_acc.len();
    let (mut dw, mut dw_rem, mut w) = (vec![0; n], vec![0; n], Vec::with_capacity(n));
    for e in 0..n {
        let (j, c) = (e / n_in, e % n_in);
        (dw[e], dw_rem[e]) = ctx.rescale_fit(dw_acc[e], "dW", j, c)?;
        let st = AdamState {
            theta: lp.w.data[e] as i128,
            m: m.w.data[e] as i128,
            v: v.w.data[e] as i128,
        };
        w.push(element(ctx, h, &k, st, dw[e] as i128, ("W'", j, c))?);
    }
    let mut b = Vec::with_capacity(db_acc.len());
    for (j, &g) in db_acc.iter().enumerate() {
        let st = AdamState {
            theta: lp.b[j] as i128,
            m: m.b[j] as i128,
            v: v.b[j] as i128,
        };
        b.push(element(ctx, h, &k, st, g, ("b'", j, 0))?);
    }
    // every value was range-checked by `element`
    let fit = |x: i128| x as i64;
    new.w.data = w.iter().map(|e| fit(e.theta)).collect();
    new.b = b.iter().map(|e| fit(e.theta)).collect();
    let moment = |f: fn(&AdamTrace) -> i128| StateTensor {
        w: crate::tensor::Matrix {
            rows: lp.w.rows,
            cols: lp.w.cols,
            data: w.iter().map(|e| fit(f(e))).collect(),
        },
        b: b.iter().map(|e| fit(f(e))).collect(),
    };
    new.state = vec![moment(|e| e.m), moment(|e| e.v)];
    Ok((
        new,
        AdamLayerTrace {
            step: k,
            dw,
            dw_rem,
            w,
            b,
        },
    ))
}

/// PyTorch's update in float64, the real arithmetic the fixed point approximates.
pub fn adam_f64(h: &AdamHyper, t: u64, th: f64, m: f64, v: f64, g: f64) -> (f64, f64, f64) {
    let s = crate::fixed::SCALE as f64;
    let (lr, b1, b2, eps, wd) = (
        h.lr_fx as f64 / s,
        h.beta1_fx as f64 / s,
        h.beta2_fx as f64 / s,
        h.eps_fx as f64 / s,
        h.weight_decay_fx as f64 / s,
    );
    let (th, g) = if h.decoupled {
        (th * (1.0 - lr * wd), g)
    } else {
        (th, g + wd * th)
    };
    let m = b1 * m + (1.0 - b1) * g;
    let v = b2 * v + (1.0 - b2) * g * g;
    let bc1 = 1.0 - b1.powi(t as i32);
    let bc2 = 1.0 - b2.powi(t as i32);
    let den = v.sqrt() / bc2.sqrt() + eps;
    (th - lr / bc1 * m / den, m, v)
}

/// The first-order-free bound of docs/SEMANTICS.md §5 on one update's
/// |θ' − θ*'| in units of S, from the stored inputs: `tr` the update,
/// `e_grad` a bound on the error of the gradient it saw (units of S; 0 when
/// it is exact), `delta_star` PyTorch's step from the same reals (units of
/// S), `rho` the rounding's unit (½ or 1), `dk` the step constants'
/// relative error.
pub fn update_bound(
    h: &AdamHyper,
    k: &AdamStep,
    tr: &AdamTrace,
    e_grad: f64,
    delta_star: f64,
    rho: f64,
    dk: f64,
) -> f64 {
    let s = crate::fixed::SCALE as f64;
    let lambda = h.weight_decay_fx as f64 / s;
    // Adam's L2 term is rounded into the gradient, AdamW's decay into θ
    let e_g = e_grad + if !h.decoupled && lambda > 0.0 { rho } else { 0.0 };
    let e_decay = if h.decoupled && lambda > 0.0 { rho } else { 0.0 };
    let (b1, b2) = (h.beta1_fx as f64 / s, h.beta2_fx as f64 / s);
    let g = tr.g.unsigned_abs() as f64;
    // the moments (units of S²): their rounding and the gradient's
    let em = rho + (1.0 - b1) * e_g * s;
    let ev = rho + (1.0 - b2) * (2.0 * g * e_g + e_g * e_g);
    let v = tr.v as f64;
    // the root (units of S²): its rounding and v's
    let er = 0.5 + s * if v > 0.0 { ev.sqrt().min(ev / v.sqrt()) } else { ev.sqrt() };
    let (c2, k1) = (k.c2 as f64, k.k1 as f64);
    let den = tr.den as f64;
    let ed = er * c2 / s + rho + dk * den;
    let m = tr.m.unsigned_abs() as f64;
    let den_lo = (den - ed).max(h.eps_fx as f64 * s);
    rho + e_decay
        + (k1 * em + dk * k1 * m) / den
        + k1 * (m + em) * (1.0 + dk) * ed / (den * den_lo)
        // float64's own roundings in the reference (powi, sqrt, the division)
        + 1e-9 * delta_star.abs()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixed::SCALE;

    /// n single steps of the power sequence, as SEMANTICS defines them.
    fn power_by_steps(mut p: i128, beta: i128, n: u64, r: Rounding) -> i128 {
        for _ in 0..n {
            p = rescale(p * beta, SCALE_I128, r).unwrap().q;
        }
        p
    }

    proptest::proptest! {
        #[test]
        fn power_after_is_the_step_by_step_power(
            beta in proptest::prop_oneof![1i128..SCALE_I128, (SCALE_I128 - 3000)..SCALE_I128],
            n in 0u64..4000,
            floor in proptest::bool::ANY,
        ) {
            let r = if floor { Rounding::Floor } else { Rounding::HalfUp };
            proptest::prop_assert_eq!(
                power_after(SCALE_I128, beta, n, r),
                Some(power_by_steps(SCALE_I128, beta, n, r))
            );
        }
    }

    #[test]
    fn power_after_reaches_far_steps_exactly() {
        // β₂ = 1 − 10⁻⁹: each step takes off 1 (floor) until 0, or until
        // S/2 under half-up rounding (p·β/S + ½ rounds back to p there)
        let b = SCALE_I128 - 1;
        for (n, floor, half) in [(10, SCALE_I128 - 10, SCALE_I128 - 10), (1 << 40, 0, SCALE_I128 / 2)] {
            assert_eq!(power_after(SCALE_I128, b, n, Rounding::Floor), Some(floor));
            assert_eq!(power_after(SCALE_I128, b, n, Rounding::HalfUp), Some(half));
        }
        // one step before the end of the run, and the step after it
        let n = (SCALE_I128 - 2) as u64;
        assert_eq!(power_after(SCALE_I128, b, n, Rounding::Floor), Some(2));
        assert_eq!(power_after(SCALE_I128, b, n + 1, Rounding::Floor), Some(1));
        let k = AdamStep::at(&AdamHyper { beta2_fx: SCALE - 1, ..AdamHyper::pytorch_default(false) }, 1 << 40, Rounding::Floor).unwrap();
        assert_eq!((k.pow1, k.pow2, k.bc2), (0, 0, SCALE_I128));
    }

    #[test]
    fn step_constants_follow_the_powers() {
        let h = AdamHyper::pytorch_default(false);
        let k = AdamStep::at(&h, 1, Rounding::HalfUp).unwrap();
        assert_eq!((k.pow1, k.pow2), (900_000_000, 999_000_000));
        assert_eq!((k.bc1, k.bc2), (100_000_000, 1_000_000));
        assert_eq!(k.k1, 10_000_000); // lr / 0.1 = 0.01
        assert_eq!(k.sqrt_bc2, 31_622_776); // √0.001 = 0.0316227766…
                                            // 1/√0.001 = 31.6227766017: within the root's 3·10⁻⁸ relative error
        assert!((k.c2 - 31_622_776_602).abs() <= 1_000, "{}", k.c2);
        assert!(AdamStep::at(&h, 0, Rounding::HalfUp).is_none());
        let mut bad = h;
        bad.beta2_fx = SCALE;
        assert!(AdamStep::at(&bad, 3, Rounding::HalfUp).is_none());
        // late steps: the corrections tend to 1 and stay ≥ 1
        let late = AdamStep::at(&h, 100_000, Rounding::HalfUp).unwrap();
        assert!(late.bc1 >= 1 && late.bc2 >= 1);
        assert!((late.k1 - h.lr_fx as i128).abs() <= 1);
    }

    /// 30 steps of a few parameters against float64: the fixed-point
    /// trajectory stays within 1.5·10⁻⁹ a step of the real one (45 units at S).
    #[test]
    fn tracks_float64_over_many_steps() {
        let s = SCALE as f64;
        for decoupled in [false, true] {
            let mut h = AdamHyper::pytorch_default(decoupled);
            h.weight_decay_fx = 10_000_000;
            let mut worst = 0f64;
            for seed in 0..8u64 {
                let mut fx = AdamState {
                    theta: (seed as i128 - 4) * 123_456_789,
                    m: 0,
                    v: 0,
                };
                let (mut th, mut m, mut v) = (fx.theta as f64 / s, 0.0, 0.0);
                let mut x = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
                for t in 1..=30u64 {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    // gradients between −0.5 and 0.5, on the grid
                    let g = (x % 1_000_000_001) as i128 - 500_000_000;
                    let k = AdamStep::at(&h, t, Rounding::HalfUp).unwrap();
                    let tr = adam_element(&h, &k, Rounding::HalfUp, fx, g).unwrap();
                    fx = AdamState {
                        theta: tr.theta,
                        m: tr.m,
                        v: tr.v,
                    };
                    (th, m, v) = adam_f64(&h, t, th, m, v, g as f64 / s);
                    worst = worst.max((fx.theta as f64 - th * s).abs());
                }
            }
            // each step rounds the decay and Δ (½ unit each) and moves Δ by
            // ≈ 10⁻⁷ of itself (k₁, c₂, √ and the moments' roundings)
            eprintln!("decoupled {decoupled}: worst {worst:.1} units at S after 30 steps");
            assert!(worst <= 45.0, "decoupled {decoupled}: {worst} units at S");
        }
    }

    /// One update from stored (θ, m, v) beside PyTorch's from the same reals
    /// and the same gradient, for gradients of every size from 10⁻⁸ to 10⁻¹
    /// (a 60-step trajectory of each, every 7th gradient zero as at a dead
    /// unit), Adam and AdamW with λ = 0.01, both roundings: within
    /// [`update_bound`] every time, and the step constants within 10⁻⁶ of
    /// their real values. The figures it prints are BENCHMARKS.md's.
    #[test]
    fn one_step_is_within_its_bound_for_gradients_of_every_size() {
        let (s, dk) = (SCALE as f64, 1e-6);
        for rounding in [Rounding::HalfUp, Rounding::Floor] {
            let rho = if rounding == Rounding::HalfUp { 0.5 } else { 1.0 };
            for decoupled in [false, true] {
                let mut h = AdamHyper::pytorch_default(decoupled);
                h.weight_decay_fx = 10_000_000;
                let lr = h.lr_fx as f64 / s;
                for e in -8i32..=-1 {
                    let size = 10f64.powi(e);
                    let mut st = AdamState { theta: 123_456_789, m: 0, v: 0 };
                    let mut x = ((e as i64 + 100) as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
                    let (mut worst, mut worst_rel) = (0f64, 0f64);
                    for t in 1..=60u64 {
                        x ^= x << 13;
                        x ^= x >> 7;
                        x ^= x << 17;
                        let u = (x % 2001) as f64 / 1000.0 - 1.0;
                        let g = if t % 7 == 0 { 0 } else { (u * size * s).round() as i128 };
                        let k = AdamStep::at(&h, t, rounding).unwrap();
                        let (b1, b2) = (h.beta1_fx as f64 / s, h.beta2_fx as f64 / s);
                        let (bc1, bc2) = (1.0 - b1.powi(t as i32), 1.0 - b2.powi(t as i32));
                        assert!((k.k1 as f64 / s / (lr / bc1) - 1.0).abs() <= dk, "k₁ at {t}");
                        assert!((k.c2 as f64 / s * bc2.sqrt() - 1.0).abs() <= dk, "c₂ at {t}");
                        let tr = adam_element(&h, &k, rounding, st, g).unwrap();
                        let th = st.theta as f64 / s;
                        let (want, _, _) = adam_f64(&h, t, th, st.m as f64 / (s * s), st.v as f64 / (s * s), g as f64 / s);
                        let th_d = if decoupled { th * (1.0 - lr * h.weight_decay_fx as f64 / s) } else { th };
                        let delta_star = (th_d - want) * s;
                        let err = (tr.theta as f64 - want * s).abs();
                        let bound = update_bound(&h, &k, &tr, 0.0, delta_star, rho, dk);
                        assert!(err <= bound, "{rounding:?} decoupled {decoupled} |g| ~ {size:e}, t {t}: {err} units > bound {bound} ({tr:?})");
                        worst = worst.max(err);
                        if delta_star.abs() > 0.0 {
                            worst_rel = worst_rel.max(err / delta_star.abs());
                        }
                        st = AdamState { theta: tr.theta, m: tr.m, v: tr.v };
                    }
                    eprintln!("{rounding:?} decoupled {decoupled} |g| ≤ {size:e}: worst {worst:.2} units, {worst_rel:.2e} of the step");
                }
            }
        }
    }

    #[test]
    fn the_division_is_rounded_like_a_rescale() {
        let h = AdamHyper::pytorch_default(false);
        let k = AdamStep::at(&h, 1, Rounding::HalfUp).unwrap();
        let st = AdamState {
            theta: 0,
            m: 0,
            v: 0,
        };
        // first step: m' = 0.1·g, v' = 0.001·g², den ≈ |g|·√0.001/√0.001 = |g|
        let tr = adam_element(&h, &k, Rounding::HalfUp, st, 250_000_000).unwrap();
        assert_eq!(tr.m, 25_000_000_000_000_000); // 0.025 at S²
        assert_eq!(tr.v, 62_500_000_000_000); // 0.001·0.0625 at S²
                                              // Δ = k₁·m'/den ≈ 0.01·0.025/0.25 = lr
        assert!((tr.delta - h.lr_fx as i128).abs() <= 1, "{tr:?}");
        let floor = adam_element(&h, &k, Rounding::Floor, st, -250_000_000).unwrap();
        assert!(floor.delta <= tr.delta.checked_neg().unwrap());
        // a negative second moment is refused
        let neg = AdamState { v: -5, ..st };
        assert!(adam_element(&h, &k, Rounding::HalfUp, neg, 0).is_none());
    }
}
