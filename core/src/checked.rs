//! Checked arithmetic of the reference executor: every i128 operation is
//! checked and every stored result must lie in the spec's value range; a
//! failure is an error naming the layer, the tensor and the index.

use crate::error::{CoreError, Result};
use crate::fixed::{rescale, Rescaled, SCALE_I128};
use crate::spec::ModelSpec;

/// An exact integer sum of i128 terms: the sum wrapped into i128 and the
/// number of wraps, so no partial sum can overflow and the result does not
/// depend on the order of the terms (docs/SEMANTICS.md §1).
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct ExactSum {
    wrapped: i128,
    wraps: i64,
}

impl ExactSum {
    /// Add a term.
    #[inline]
    pub(crate) fn add(&mut self, x: i128) {
        let (w, over) = self.wrapped.overflowing_add(x);
        if over {
            self.wraps += if x > 0 { 1 } else { -1 };
        }
        self.wrapped = w;
    }

    /// The exact sum, if it fits i128.
    pub(crate) fn get(self) -> Option<i128> {
        (self.wraps == 0).then_some(self.wrapped)
    }
}

/// Checked arithmetic with error context.
pub(crate) struct Ctx<'a> {
    pub(crate) spec: &'a ModelSpec,
    pub(crate) layer: usize,
}

impl Ctx<'_> {
    pub(crate) fn fit(&self, v: i128, tensor: &'static str, i: usize, j: usize) -> Result<i64> {
        if self.spec.value_range.contains(v) {
            Ok(v as i64)
        } else {
            Err(CoreError::range(
                self.layer,
                tensor,
                format!("({i},{j})"),
                format!(
                    "{v} does not fit the declared {}-bit range",
                    self.spec.value_range.bits
                ),
            ))
        }
    }
    pub(crate) fn over(&self, tensor: &'static str, i: usize, j: usize) -> CoreError {
        CoreError::range(
            self.layer,
            tensor,
            format!("({i},{j})"),
            "i128 overflow in the accumulation",
        )
    }
    /// The value of an exact sum; beyond i128 (|Σ| ≥ 2¹²⁷) no rescale of it
    /// fits any declared range, so that is the range error.
    pub(crate) fn exact(
        &self,
        s: ExactSum,
        tensor: &'static str,
        i: usize,
        j: usize,
    ) -> Result<i128> {
        s.get().ok_or_else(|| {
            CoreError::range(
                self.layer,
                tensor,
                format!("({i},{j})"),
                "the exact sum is beyond ±2^127, so its rescaled value does not fit the declared range",
            )
        })
    }
    pub(crate) fn mul(
        &self,
        a: i128,
        b: i128,
        tensor: &'static str,
        i: usize,
        j: usize,
    ) -> Result<i128> {
        a.checked_mul(b).ok_or_else(|| self.over(tensor, i, j))
    }
    pub(crate) fn rescale(
        &self,
        z: i128,
        d: i128,
        tensor: &'static str,
        i: usize,
        j: usize,
    ) -> Result<Rescaled> {
        rescale(z, d, self.spec.rounding).ok_or_else(|| self.over(tensor, i, j))
    }
    /// `rescale_S(z)` stored as a value: quotient range-checked, remainder returned.
    pub(crate) fn rescale_fit(
        &self,
        z: i128,
        tensor: &'static str,
        i: usize,
        j: usize,
    ) -> Result<(i64, i64)> {
        let r = self.rescale(z, SCALE_I128, tensor, i, j)?;
        Ok((self.fit(r.q, tensor, i, j)?, r.r as i64))
    }
}
