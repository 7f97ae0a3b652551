//! Fixed-point numbers at scale S = 10⁹ and the declared rounding rule.
//!
//! A real x is stored as the integer X = round(x·S). Products land at scale S²
//! (S³ for `lr·dW`) and are brought back by [`rescale`], the single rounding
//! primitive of the reference executor: `z + off = q·d + r`, `0 ≤ r < d`, where
//! `off = d/2` for round-half-up (the default) and `0` for floor.
//! The circuit's rescale gadget proves exactly this equation.

use serde::{Deserialize, Serialize};

/// The fixed-point scale S.
pub const SCALE: i64 = 1_000_000_000;
/// S as i128.
pub const SCALE_I128: i128 = SCALE as i128;
/// S² as i128 (the divisor of the fused SGD update).
pub const SCALE_SQ: i128 = SCALE_I128 * SCALE_I128;

/// The rounding rule of every rescale.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum Rounding {
    /// q = floor((z + d/2) / d): round half up (towards +∞). Unbiased enough for SGD.
    #[default]
    HalfUp,
    /// q = floor(z / d). Cheaper to explain, but biases updates downwards.
    Floor,
}

impl Rounding {
    /// The offset added before the Euclidean division by `d`.
    pub fn offset(self, d: i128) -> i128 {
        match self {
            Rounding::HalfUp => d / 2,
            Rounding::Floor => 0,
        }
    }

    /// Canonical name, as written in a spec.
    pub fn name(self) -> &'static str {
        match self {
            Rounding::HalfUp => "half-up",
            Rounding::Floor => "floor",
        }
    }
}

/// Quotient and remainder of one rescale: `z + off = q·d + r`, `0 ≤ r < d`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Rescaled {
    /// The rounded quotient (the stored result).
    pub q: i128,
    /// The remainder, in `[0, d)`.
    pub r: i128,
}

/// Rescale `z` by divisor `d > 0` under `rounding`. `None` if `z + off` overflows i128.
pub fn rescale(z: i128, d: i128, rounding: Rounding) -> Option<Rescaled> {
    debug_assert!(d > 0);
    let shifted = z.checked_add(rounding.offset(d))?;
    Some(Rescaled {
        q: shifted.div_euclid(d),
        r: shifted.rem_euclid(d),
    })
}

/// The remainders a rescale of `c·x` can leave, for a public integer c (a
/// learning rate, a momentum coefficient) and any integer x: `c·x + off`
/// is `≡ off (mod g)` with `g = gcd(c, d)`, and g divides d, so every
/// remainder is `r = g·k + r0` with `r0 = off mod g` and `0 ≤ k < d/g`.
/// A circuit that stores k checks ⌈log₂(d/g)⌉ bits where r would need
/// ⌈log₂ d⌉ (lr = 0.01 at S²: 37 instead of 60; docs/SOUNDNESS.md).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RemainderClass {
    /// The divisor d.
    pub d: u128,
    /// The rounding offset added before dividing.
    pub off: u128,
    /// `gcd(c, d)` (d itself when c = 0: the remainder is then `off`).
    pub g: u128,
    /// `off mod g`.
    pub r0: u128,
}

impl RemainderClass {
    /// The remainders of `c·x + off` by `d > 0`, `off < d`.
    pub fn new(c: i128, d: u128, off: u128) -> Self {
        debug_assert!(d > 0 && off < d);
        let g = gcd(c.unsigned_abs(), d);
        RemainderClass {
            d,
            off,
            g,
            r0: off % g,
        }
    }

    /// Every remainder in `[0, d)` (a dividend with no known factor).
    pub fn any(d: u128, off: u128) -> Self {
        Self::new(1, d, off)
    }

    /// How many remainders the class has: k ranges over `[0, d/g)`.
    pub fn steps(&self) -> u128 {
        self.d / self.g
    }

    /// `k` of a remainder of the class, `None` for any other value.
    pub fn step(&self, r: i128) -> Option<u128> {
        let r = u128::try_from(r)
            .ok()
            .filter(|&r| r < self.d && r >= self.r0)?;
        (r - self.r0)
            .is_multiple_of(self.g)
            .then(|| (r - self.r0) / self.g)
    }
}

fn gcd(mut a: u128, mut b: u128) -> u128 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

/// The declared range of every stored value: `[−2^(bits−1), 2^(bits−1))`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ValueRange {
    /// Number of bits of a stored value (2..=64).
    pub bits: u32,
}

impl Default for ValueRange {
    fn default() -> Self {
        ValueRange { bits: 64 }
    }
}

impl ValueRange {
    /// Smallest admissible value.
    pub fn min(self) -> i128 {
        -(1i128 << (self.bits - 1))
    }
    /// Largest admissible value.
    pub fn max(self) -> i128 {
        (1i128 << (self.bits - 1)) - 1
    }
    /// Whether `v` lies in the range.
    pub fn contains(self, v: i128) -> bool {
        v >= self.min() && v <= self.max()
    }
}

/// Quantise a real number: `X = floor(x·S + 1/2)`, computed exactly on the
/// float's value (round half up, ties towards +∞: the rule of every rescale;
/// docs/SEMANTICS.md §1). `None` if x is not finite or X does not fit the range.
pub fn to_fixed(x: f64, range: ValueRange) -> Option<i64> {
    to_fixed_at(x, SCALE_I128, range)
}

/// [`to_fixed`] at another scale (Adam's second moment is stored at S²).
pub fn to_fixed_at(x: f64, scale: i128, range: ValueRange) -> Option<i64> {
    let v = round_half_up_scaled(x, scale)?;
    range.contains(v).then_some(v as i64)
}

/// `floor(x·scale + 1/2)` for a finite f64 and a scale below 2⁶¹, exactly
/// (`None` where it leaves i128).
fn round_half_up_scaled(x: f64, scale: i128) -> Option<i128> {
    if !x.is_finite() {
        return None;
    }
    if x == 0.0 {
        return Some(0);
    }
    // x = ±m·2^e exactly, m < 2^53
    let bits = x.to_bits();
    let exp = ((bits >> 52) & 0x7ff) as i32;
    let frac = (bits & ((1u64 << 52) - 1)) as i128;
    let (m, e) = if exp == 0 {
        (frac, -1074)
    } else {
        (frac | (1i128 << 52), exp - 1075)
    };
    let n = if x < 0.0 { -m } else { m } * scale; // |n| < 2^114
    if e >= 0 {
        // an integer already; far beyond every declared range when large
        return if e <= 60 {
            n.checked_mul(1i128 << e)
        } else {
            None
        };
    }
    let shift = -e;
    if shift >= 120 {
        // |x·S| < 2^83 / 2^120: rounds to 0 (x·S = −1/2 is impossible here)
        return Some(0);
    }
    let half = 1i128 << (shift - 1);
    Some((n + half).div_euclid(1i128 << shift))
}

/// The real number a fixed-point integer stands for.
pub fn to_real(v: i64) -> f64 {
    v as f64 / SCALE as f64
}

/// `⌊√x⌋`: the r with `r² ≤ x < (r + 1)²`, exactly (Newton's iteration
/// on integers, then a final correction). Native twin of the circuit's
/// square-root gadget (`zkstep_gadgets::fixed::isqrt`).
pub fn isqrt(x: u128) -> u128 {
    if x < 2 {
        return x;
    }
    // start above the root: 2^⌈bits/2⌉ > √x
    let mut r = 1u128 << (128 - x.leading_zeros()).div_ceil(2);
    loop {
        let next = (r + x / r) / 2;
        if next >= r {
            break;
        }
        r = next;
    }
    while r * r > x {
        r -= 1;
    }
    while (r + 1).checked_mul(r + 1).is_some_and(|s| s <= x) {
        r += 1;
    }
    r
}

/// Division with remainder by a value-dependent divisor `d > 0`:
/// `n = q·d + r`, `0 ≤ r < d` (q = ⌊n / d⌋, also for negative n).
/// `None` if d ≤ 0. Native twin of `zkstep_gadgets::fixed::div_rem`.
pub fn div_rem(n: i128, d: i128) -> Option<(i128, i128)> {
    (d > 0).then(|| (n.div_euclid(d), n.rem_euclid(d)))
}

/// `n / d` rounded like a rescale, for a value-dependent divisor `d > 0`:
/// `2n + off(2d) = q·2d + r`, `0 ≤ r < 2d` (off(2d) = d for half-up, 0
/// for floor), so half-up is exactly round-half-up of n/d also for an odd
/// d. Returns (q, r). Used where a divisor is a value (Adam's denominator,
/// softmax's sum); the circuit checks the same division.
pub fn div_round(n: i128, d: i128, rounding: Rounding) -> Option<(i128, i128)> {
    let d2 = d.checked_mul(2)?;
    div_rem(n.checked_mul(2)?.checked_add(rounding.offset(d2))?, d2)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_rescale_of_a_multiple_leaves_a_remainder_of_its_class() {
        // lr = 0.01, 0.05, 0.003, 0.00314159, 1 and 0 at S and S²; μ = 0.9
        let d2 = SCALE_SQ as u128;
        let s = SCALE_I128 as u128;
        for &c in &[
            10_000_000i128,
            50_000_000,
            3_000_000,
            3_141_590,
            SCALE_I128,
            0,
            900_000_000,
            -7,
        ] {
            for &(d, rounding) in &[
                (d2, Rounding::HalfUp),
                (s, Rounding::HalfUp),
                (d2, Rounding::Floor),
            ] {
                let off = rounding.offset(d as i128) as u128;
                let cl = RemainderClass::new(c, d, off);
                assert_eq!(d % cl.g, 0);
                for x in [
                    -(1i128 << 90),
                    -12_345_678_901_234,
                    -1,
                    0,
                    1,
                    987_654_321_987,
                    1i128 << 88,
                ] {
                    let r = rescale(c * x, d as i128, rounding).unwrap().r;
                    let k = cl.step(r).expect("the remainder is in the class");
                    assert!(k < cl.steps());
                    assert_eq!((k * cl.g + cl.r0) as i128, r);
                }
                // the class's neighbours are not in it (unless every value is)
                if cl.g > 1 {
                    let r = rescale(c * 3, d as i128, rounding).unwrap().r;
                    assert_eq!(cl.step(r + 1), None);
                }
                assert_eq!(cl.step(d as i128), None);
                assert_eq!(cl.step(-1), None);
            }
        }
        let lr = RemainderClass::new(10_000_000, d2, d2 / 2);
        assert_eq!((lr.g, lr.r0, lr.steps()), (10_000_000, 0, 100_000_000_000));
        assert_eq!(RemainderClass::any(s, s / 2).steps(), s);
    }

    #[test]
    fn half_up_rounds_ties_up_and_negative_correctly() {
        let s = SCALE_I128;
        let r = |z| rescale(z, s, Rounding::HalfUp).unwrap();
        assert_eq!(r(s / 2).q, 1); // 0.5 → 1
        assert_eq!(r(s / 2 - 1).q, 0);
        assert_eq!(r(-s / 2).q, 0); // −0.5 → 0 (half up)
        assert_eq!(r(-s / 2 - 1).q, -1);
        assert_eq!(r(-3 * s).q, -3);
        for z in [-7 * s - 3, 12345, -1, 0, s * s] {
            let x = r(z);
            assert!(x.r >= 0 && x.r < s);
            assert_eq!(x.q * s + x.r, z + s / 2);
        }
    }

    #[test]
    fn floor_rounding() {
        let x = rescale(-1, SCALE_I128, Rounding::Floor).unwrap();
        assert_eq!((x.q, x.r), (-1, SCALE_I128 - 1));
    }

    #[test]
    fn overflow_is_none() {
        assert!(rescale(i128::MAX, SCALE_I128, Rounding::HalfUp).is_none());
    }

    #[test]
    fn range_bounds() {
        let r = ValueRange { bits: 8 };
        assert!(r.contains(-128) && r.contains(127) && !r.contains(128) && !r.contains(-129));
        let r64 = ValueRange::default();
        assert_eq!(r64.min(), i64::MIN as i128);
        assert_eq!(r64.max(), i64::MAX as i128);
        assert_eq!(to_fixed(1.5, r64), Some(1_500_000_000));
        assert_eq!(to_fixed(f64::NAN, r64), None);
        assert_eq!(to_fixed(1e30, r64), None);
    }

    #[test]
    fn quantisation_rounds_ties_up_like_rescale() {
        let r64 = ValueRange::default();
        // −59,570,312.5 exactly (x = −0.0595703125 is a dyadic rational): half up → −59,570,312
        let x = -0.0595703125f64;
        assert_eq!(x * 1e9, -59_570_312.5);
        assert_eq!(to_fixed(x, r64), Some(-59_570_312));
        assert_eq!(to_fixed(0.0595703125, r64), Some(59_570_313));
        // exact on the float's value: the f64 nearest −5e-10 is slightly below it
        assert!(std::hint::black_box(-5e-10f64) * 1e9 <= -0.5);
        assert_eq!(to_fixed(-5e-10, r64), Some(-1));
        // −1/2048 · 10⁹ = −488,281.25 → −488,281; −3/2048 · 10⁹ = −1,464,843.75 → −1,464,844
        assert_eq!(to_fixed(-1.0 / 2048.0, r64), Some(-488_281));
        assert_eq!(to_fixed(-3.0 / 2048.0, r64), Some(-1_464_844));
        assert_eq!(to_fixed(1.5, r64), Some(1_500_000_000));
        assert_eq!(to_fixed(-1.5, r64), Some(-1_500_000_000));
        assert_eq!(to_fixed(f64::MIN_POSITIVE, r64), Some(0));
        assert_eq!(to_fixed(-(2f64.powi(53)), ValueRange { bits: 64 }), None);
        assert_eq!(to_fixed(9.2e9, r64), Some(9_200_000_000_000_000_000));
    }

    #[test]
    fn isqrt_is_the_floor_of_the_root() {
        for x in (0u128..2000).chain([
            u64::MAX as u128,
            (1u128 << 100) - 1,
            1u128 << 100,
            u128::MAX,
            999_999_999_999_999_999,
        ]) {
            let r = isqrt(x);
            assert!(r * r <= x, "x {x}");
            assert!((r + 1).checked_mul(r + 1).is_none_or(|s| s > x), "x {x}");
        }
        assert_eq!(isqrt(SCALE_SQ as u128), SCALE_I128 as u128);
    }

    #[test]
    fn div_rem_is_euclidean() {
        for (n, d) in [
            (7i128, 2i128),
            (-7, 2),
            (0, 5),
            (-1, 1_000_000_007),
            (1 << 100, 3),
        ] {
            let (q, r) = div_rem(n, d).unwrap();
            assert_eq!(q * d + r, n);
            assert!((0..d).contains(&r));
        }
        assert_eq!(div_rem(-7, 2), Some((-4, 1)));
        assert_eq!(div_rem(1, 0), None);
        assert_eq!(div_rem(1, -3), None);
    }
}
