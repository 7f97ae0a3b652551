//! A dense row-major i64 matrix: the only tensor shape a dense MLP step needs.

use serde::{Deserialize, Serialize};

/// Row-major matrix of fixed-point integers.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Matrix {
    /// Number of rows.
    pub rows: usize,
    /// Number of columns.
    pub cols: usize,
    /// `rows * cols` values, row-major.
    pub data: Vec<i64>,
}

impl Matrix {
    /// An all-zero matrix.
    pub fn zeros(rows: usize, cols: usize) -> Self {
        Matrix {
            rows,
            cols,
            data: vec![0; rows * cols],
        }
    }

    /// Build from row-major data; `None` if the length does not match.
    pub fn from_vec(rows: usize, cols: usize, data: Vec<i64>) -> Option<Self> {
        (data.len() == rows * cols).then_some(Matrix { rows, cols, data })
    }

    /// Element (i, j).
    #[inline]
    pub fn at(&self, i: usize, j: usize) -> i64 {
        self.data[i * self.cols + j]
    }

    /// Mutable element (i, j).
    #[inline]
    pub fn at_mut(&mut self, i: usize, j: usize) -> &mut i64 {
        &mut self.data[i * self.cols + j]
    }

    /// Row i as a slice.
    #[inline]
    pub fn row(&self, i: usize) -> &[i64] {
        &self.data[i * self.cols..(i + 1) * self.cols]
    }

    /// Shape as `[rows, cols]`, for messages.
    pub fn shape_str(&self) -> String {
        format!("[{}, {}]", self.rows, self.cols)
    }
}
