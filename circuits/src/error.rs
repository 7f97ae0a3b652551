//! The error type of zkstep-circuits.

/// What can go wrong when laying out a proof or building its witness.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum CircuitError {
    /// A tile must hold at least one output unit.
    #[error("layout: rows per tile must be at least 1")]
    ZeroRows,
    /// Even the smallest tile (one output unit) exceeds the fold budget.
    #[error("layout: the smallest tile ({rows} output unit(s) a fold) needs {need} constraints per fold, more than the fold budget {budget}; raise --fold-budget, or pass --rows {rows} to accept a fold of that size")]
    OverBudget {
        /// Constraints of the smallest fold.
        need: usize,
        /// The budget.
        budget: usize,
        /// Rows of the smallest tile.
        rows: usize,
    },
    /// No fold of the spec fits the budget, however it is cut: refused when
    /// the spec is first used (`zkstep init`), not at keygen after training.
    #[error("this spec cannot be proven within a fold budget of {budget} constraints: its smallest fold (one output unit, rows wider than 256 inputs cut into hash blocks of 69 weights) needs {need}, and every sample of the batch ({batch}) adds to every fold; use a smaller batch_size (or a larger --fold-budget, whose prover needs more memory)")]
    Unprovable {
        /// Constraints of the smallest fold (or a lower bound on them).
        need: usize,
        /// The budget.
        budget: usize,
        /// The spec's batch size.
        batch: usize,
    },
    /// A row cut into segments where that is not possible.
    #[error(
        "layout: a row cannot be cut into {segments} segments with {rows} rows a tile (segments need one row a tile, rows wider than 256 inputs, and a number of segments that divides the row's hash blocks)"
    )]
    Segments {
        /// Segments asked for.
        segments: usize,
        /// Rows per tile asked for.
        rows: usize,
    },
    /// More rows a tile than any layer has units: every extra row would be
    /// padding (and a key asking for 2²⁰ of them a circuit too large to build).
    #[error("layout: {rows} rows a tile, more than the widest layer's {widest} (at most {widest})")]
    TooManyRows {
        /// Rows per tile asked for.
        rows: usize,
        /// The widest layer (inputs or outputs).
        widest: usize,
    },
    /// The fold's circuit does not synthesise.
    #[error("layout: the fold's circuit cannot be synthesised: {0}")]
    Synthesis(String),
    /// The trace has another number of layers than the spec.
    #[error("witness: the trace does not match the spec's layers")]
    TraceLayers,
    /// The step's trace has no softmax for a sample of a cross-entropy spec
    /// (a trace of another spec).
    #[error("witness: layer {0}, sample {1}: the step's trace has no softmax of the top layer's outputs for this sample")]
    Softmax(usize, usize),
    /// The lookup argument's multiplicities cannot be laid out.
    #[error("witness: lookup: {0}")]
    Lookup(String),
    /// The checkpoints lack the optimizer state the spec's optimizer keeps.
    #[error("witness: layer {0}: the checkpoints carry no (or the wrong) optimizer state")]
    NoOptimizerState(usize),
    /// The trace lacks a layer's input gradient.
    #[error("witness: layer {0} has no input gradient in the trace")]
    NoInputGradient(usize),
    /// The trace was made under another optimizer.
    #[error("witness: layer {0}: the trace's optimizer is not the spec's")]
    OptimizerMismatch(usize),
}
