//! The slots of the IVC state each fold component owns, registered in the
//! [`crate::state::Registry`] in a fixed order (which fixes z's indices; the
//! order is the table in docs/ARCHITECTURE.md). One struct per owner:
//! a component reads and writes only its own slots.

use crate::state::{constant, private, Final, Init, Registry, StatementField};
use std::ops::Range;

/// The public statement and the challenges (constants of every fold).
#[derive(Clone, Copy, Debug)]
pub struct StatementSlots {
    /// spec_digest.
    pub spec: usize,
    /// c_before.
    pub c_before: usize,
    /// c_after.
    pub c_after: usize,
    /// c_batch.
    pub c_batch: usize,
    /// The challenge ρ (must equal the folding layer's run challenge).
    pub rho: usize,
    /// Step index.
    pub step: usize,
}

/// Adam's per-step constants (registered for Adam specs only): public, derived
/// by the verifier from the statement's step, read by every weight's gadget.
#[derive(Clone, Copy, Debug)]
pub struct AdamSlots {
    /// k₁ = lr/bc₁.
    pub k1: usize,
    /// c₂ = 1/√bc₂.
    pub c2: usize,
}

/// Cross-entropy's softmax across the top layer's folds (registered for
/// cross-entropy specs only; `fold::softmax`): each sample's maximum M_i
/// and sum of exponentials Σ_i are claimed in every top fold's first phase.
#[derive(Clone, Copy, Debug)]
pub struct SoftmaxSlots {
    /// The first top fold's claims under ρ, `Σ_i ρ^{i·n}·(Σ_i + ρ^{B·n}·M_i)`,
    /// which every other top fold's claims must equal.
    pub claims: usize,
    /// Running `Σ_i ρ^{i·n}·(Σ_t e_it − Σ_i + ρ^{B·n}·(Σ_t o_it − 1))` over
    /// the top layer's folds so far: zero at its last fold.
    pub acc: usize,
}

/// Chains over a whole segment (not restarted between steps): each step's
/// last fold absorbs the step's public values, and the verifier compares
/// them with what the statement gives.
#[derive(Clone, Copy, Debug)]
pub struct SegmentSlots {
    /// The steps' batch commitments, in order.
    pub batches: usize,
    /// The steps' Adam constants (Adam specs only).
    pub adam: Option<usize>,
}

/// Owned by the descriptor component: the schedule chain.
#[derive(Clone, Copy, Debug)]
pub struct ScheduleSlots {
    /// Chain of the tile descriptors of every fold so far.
    pub sched: usize,
}

/// Owned by the weight rows: the running commitments (chains), or the
/// running evaluations of the checkpoint polynomials at ζ.
#[derive(Clone, Copy, Debug)]
pub struct CommitSlots {
    /// Running Commit(θ_t), or Σ_k c_k(θ_t)·ζ^k over the coefficients so far.
    pub h_before: usize,
    /// Running Commit(θ_{t+1}), or its evaluation so far.
    pub h_after: usize,
    /// Chains only: Commit(θ_{t+1})'s first link `params_chain_init(spec, t + 1)`,
    /// kept so that the next step's Commit(θ_t) chain starts from it (one
    /// hash fewer where a step closes).
    pub after_start: Option<usize>,
    /// Evaluations only: ζ and the running power ζ^k of the next coefficient.
    pub eval: Option<EvalSlots>,
}

/// The evaluation point and the position reached ([`crate::state::CommitScheme::Evaluation`]).
#[derive(Clone, Copy, Debug)]
pub struct EvalSlots {
    /// ζ (constant over a proof).
    pub zeta: usize,
    /// ζ^k, k the index of the next coefficient (1 at a step's start).
    pub power: usize,
}

/// Owned by the settle component: γ.
#[derive(Clone, Copy, Debug)]
pub struct TranscriptSlots {
    /// The second challenge γ (constant; every fold requires it to be the
    /// folding layer's second-round challenge).
    pub gamma: usize,
}

/// Owned by the producer component: digests of the batch columns.
#[derive(Clone, Copy, Debug)]
pub struct BatchSlots {
    /// Running D(X).
    pub d_x: usize,
    /// Running D(Y).
    pub d_y: usize,
}

/// Owned by the link components (consumer and producer claims).
#[derive(Clone, Debug)]
pub struct LinkSlots {
    /// Σ_k τA[k]·γ^k of each segment of the τA vector the current layer
    /// consumes (set by the layer's first row, equal in all its folds; one
    /// slot when rows are whole).
    pub claim_ta: Range<usize>,
    /// The layer above's claim about the current layer's output: Σ_k τA[k]·γ^k.
    pub out_ta: usize,
    /// Running Σ_j τA[j]·γ^j over the current layer's output units so far.
    pub prod_ta: usize,
    /// Digest of the Aρ vector the current layer consumes.
    pub claim_ar: usize,
    /// Remaining of the input-gradient identity of the current layer's output.
    pub rem_da: usize,
    /// Running right-hand side of the input-gradient identity of the current layer's input.
    pub acc_r: usize,
    /// ρ^{j0} of the last tile.
    pub rho_off: usize,
    /// Σ_k τA[k]·γ^k of the vector the current layer consumes.
    pub claim_rlc: usize,
    /// γ^{j0} of the last tile.
    pub g_off: usize,
    /// The B remaining Aρ values of the current layer's output.
    pub rem_ar: Range<usize>,
    /// ρ^{k0} of the last fold's segment.
    pub rho_k0: usize,
    /// γ^{k0} of the last fold's segment.
    pub gamma_k0: usize,
    /// A row's running F1 right side `Σ_k τA[k]·W[k]` over its segments so far.
    pub acc_f1: usize,
    /// A row's running F2 left side `Σ_k ρ^k·term_k` over its segments so far.
    pub acc_f2: usize,
    /// A row's running F3 weight factor `Σ_k ρ^k·W[k]` over its segments so far.
    pub acc_wrho: usize,
}

/// Owned by the inputs component: what the folds' X sections produced so
/// far about the batch input X, settled against layer 1's claims on the last fold.
#[derive(Clone, Debug)]
pub struct InputSlots {
    /// ρ^{x0} of the next X section.
    pub x_rho: usize,
    /// γ^{x0} of the next X section.
    pub x_gamma: usize,
    /// Running Σ_k γ^k·τA_X[k] over the X columns so far.
    pub x_prod: usize,
    /// Running Aρ_X[i] = Σ_k ρ^k·X[i, k] over the X columns so far (B values).
    pub x_ar: Range<usize>,
}

/// Owned by the lookup component: the step's two LogUp sums so far.
#[derive(Clone, Copy, Debug)]
pub struct LookupSlots {
    /// Σ 1/(α − q) over the step's queries so far.
    pub queries: usize,
    /// Σ m_t/(α − t) over the table entries of the step's folds so far.
    pub table: usize,
}

/// Every slot of a fold's state.
#[derive(Clone, Debug)]
pub struct FoldSlots {
    /// Statement and ρ.
    pub statement: StatementSlots,
    /// Schedule chain.
    pub schedule: ScheduleSlots,
    /// Commitment chains.
    pub commit: CommitSlots,
    /// γ.
    pub transcript: TranscriptSlots,
    /// Batch digests.
    pub batch: BatchSlots,
    /// Claims between folds.
    pub links: LinkSlots,
    /// The batch input's running claims.
    pub inputs: InputSlots,
    /// The lookup sums.
    pub lookup: LookupSlots,
    /// Adam's step constants (None for the other optimizers).
    pub adam: Option<AdamSlots>,
    /// Cross-entropy's softmax claims (None for MSE).
    pub softmax: Option<SoftmaxSlots>,
    /// The segment chains.
    pub segment: SegmentSlots,
    /// The registry (z₀ and the final checks are derived from it).
    pub registry: Registry,
}

/// Register every slot for a batch of `batch` samples and rows cut into
/// `segments`, with Adam's step constants when `adam`, the softmax's claims
/// when `softmax` (cross-entropy), the commitments' slots for `scheme`, and
/// the segment chains last.
pub fn register(
    batch: usize,
    segments: usize,
    adam: bool,
    softmax: bool,
    scheme: crate::state::CommitScheme,
) -> FoldSlots {
    let evaluated = scheme == crate::state::CommitScheme::Evaluation;
    use zkstep_core::commit::DOMAIN_COLUMNS;
    let mut r = Registry::default();
    let statement = StatementSlots {
        spec: constant(&mut r, "spec digest", StatementField::Spec),
        c_before: constant(&mut r, "c_before", StatementField::CBefore),
        c_after: constant(&mut r, "c_after", StatementField::CAfter),
        c_batch: constant(&mut r, "c_batch", StatementField::CBatch),
        rho: constant(&mut r, "challenge", StatementField::Rho),
        step: constant(&mut r, "step", StatementField::Step),
    };
    let schedule = ScheduleSlots {
        sched: r.add(
            "schedule",
            Init::Chain(crate::transcript::domain::SCHEDULE),
            Final::Schedule,
        ),
    };
    let mut commit = if evaluated {
        CommitSlots {
            h_before: r.add("y_before", Init::Zero, Final::OpensCBefore),
            h_after: r.add("y_after", Init::Zero, Final::OpensCAfter),
            after_start: None,
            eval: Some(EvalSlots {
                zeta: constant(&mut r, "zeta", StatementField::Zeta),
                power: r.add("zeta power", Init::One, Final::Cleared),
            }),
        }
    } else {
        CommitSlots {
            h_before: r.add("h_before", Init::ParamsChain(false), Final::OpensCBefore),
            h_after: r.add("h_after", Init::ParamsChain(true), Final::OpensCAfter),
            after_start: None,
            eval: None,
        }
    };
    let batch_slots = BatchSlots {
        d_x: r.add("d_x", Init::Chain(DOMAIN_COLUMNS), Final::Cleared),
        d_y: r.add("d_y", Init::Chain(DOMAIN_COLUMNS), Final::Cleared),
    };
    let claim_ta = r.add_private("claim_ta", segments);
    let out_ta = private(&mut r, "out_ta");
    let prod_ta = private(&mut r, "prod_ta");
    let claim_ar = private(&mut r, "claim_ar");
    let rem_da = private(&mut r, "rem_da");
    let acc_r = private(&mut r, "acc_r");
    let rho_off = private(&mut r, "rho_off");
    let transcript = TranscriptSlots {
        gamma: constant(&mut r, "second challenge", StatementField::Gamma),
    };
    let links = LinkSlots {
        claim_ta,
        out_ta,
        prod_ta,
        claim_ar,
        rem_da,
        acc_r,
        rho_off,
        claim_rlc: private(&mut r, "claim_rlc"),
        g_off: private(&mut r, "g_off"),
        rem_ar: r.add_private("rem_ar", batch),
        rho_k0: private(&mut r, "rho_k0"),
        gamma_k0: private(&mut r, "gamma_k0"),
        acc_f1: private(&mut r, "acc_f1"),
        acc_f2: private(&mut r, "acc_f2"),
        acc_wrho: private(&mut r, "acc_wrho"),
    };
    let inputs = InputSlots {
        x_rho: r.add("x_rho", Init::One, Final::Cleared),
        x_gamma: r.add("x_gamma", Init::One, Final::Cleared),
        x_prod: private(&mut r, "x_prod"),
        x_ar: r.add_private("x_ar", batch),
    };
    let lookup = LookupSlots {
        queries: r.add("lookup queries", Init::Zero, Final::Lookup),
        table: r.add("lookup table", Init::Zero, Final::Lookup),
    };
    let adam = adam.then(|| AdamSlots {
        k1: constant(&mut r, "Adam's k1", StatementField::AdamK1),
        c2: constant(&mut r, "Adam's c2", StatementField::AdamC2),
    });
    let softmax = softmax.then(|| SoftmaxSlots {
        claims: private(&mut r, "softmax claims"),
        acc: private(&mut r, "softmax sums"),
    });
    if !evaluated {
        commit.after_start = Some(r.add(
            "c_after's first link",
            Init::ParamsChain(true),
            Final::Unchanged("c_after's first link"),
        ));
    }
    use crate::transcript::domain::{SEGMENT_ADAM, SEGMENT_BATCHES};
    let segment = SegmentSlots {
        batches: r.add(
            "segment's batches",
            Init::Segment(SEGMENT_BATCHES),
            Final::AbsorbsBatch,
        ),
        adam: adam.is_some().then(|| {
            r.add(
                "segment's Adam constants",
                Init::Segment(SEGMENT_ADAM),
                Final::AbsorbsAdam,
            )
        }),
    };
    FoldSlots {
        adam,
        softmax,
        segment,
        statement,
        schedule,
        commit,
        transcript,
        batch: batch_slots,
        links,
        inputs,
        lookup,
        registry: r,
    }
}
