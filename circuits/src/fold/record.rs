//! What a fold absorbs into the transcript T, in one order for the native
//! witness builder (`i64`) and the circuit (its variables): both call
//! [`fold_transcript`], and a test checks the circuit's T against the
//! native chain after every fold.

use super::cells::Cell;

/// The ρ-independent values one fold puts into the transcript T, in order:
/// every cell's Z, then every Z remainder, every dA, every dA remainder
/// (cells in the fold's order), then each weight's own values as its update
/// rule lists them (rows in order, weights in order). Used by the witness
/// builder with `V = i64` and by the circuit with allocated variables.
pub fn fold_transcript<V: Clone>(
    cells: &[Cell<V>],
    weights: impl IntoIterator<Item = V>,
) -> Vec<V> {
    let mut v = Vec::with_capacity(4 * cells.len());
    v.extend(cells.iter().map(|c| c.z.clone()));
    v.extend(cells.iter().map(|c| c.z_r.clone()));
    v.extend(cells.iter().map(|c| c.da.clone()));
    v.extend(cells.iter().map(|c| c.da_r.clone()));
    v.extend(weights);
    v
}
