//! Checked arithmetic of the reference executor: every i128 operation is
//! checked and every stored result must lie in the spec's value range; a
//! failure is an error naming the layer, the tensor and the index.

use crate::error::{CoreError, Result};
use crate::fixed::{rescale, Rescaled, SCALE_I128};
use crate::spec::ModelSpec;

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
    pub(crate) fn mul(&self, a: i128, b: i128, tensor: &'static str, i: usize, j: usize) -> Result<i128> {
        a.checked_mul(b).ok_or_else(|| self.over(tensor, i, j))
    }
    pub(crate) fn add(&self, a: i128, b: i128, tensor: &'static str, i: usize, j: usize) -> Result<i128> {
        a.checked_add(b).ok_or_else(|| self.over(tensor, i, j))
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
    pub(crate) fn rescale_fit(&self, z: i128, tensor: &'static str, i: usize, j: usize) -> Result<(i64, i64)> {
        let r = self.rescale(z, SCALE_I128, tensor, i, j)?;
        Ok((self.fit(r.q, tensor, i, j)?, r.r as i64))
    }
}

