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

/// Quantise a real number: round(x·S) to nearest, ties away from zero.
/// `None` if x is not finite or does not fit the range.
pub fn to_fixed(x: f64, range: ValueRange) -> Option<i64> {
    if !x.is_finite() {
        return None;
    }
    let v = (x * SCALE as f64).round();
    if v < range.min() as f64 || v > range.max() as f64 {
        return None;
    }
    Some(v as i64)
}

/// The real number a fixed-point integer stands for.
pub fn to_real(v: i64) -> f64 {
    v as f64 / SCALE as f64
}

#[cfg(test)]
mod tests {
    use super::*;

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
}
