//! The witness of every fold, read from the reference executor's trace.
//!
//! Nothing is recomputed differently here: values come from `StepTrace`, the
//! two checkpoints and the batch; padding (rows and columns beyond a layer's
//! widths) gets the canonical "zero" witness (zero values, remainders equal to
//! the rounding offset). The challenge ρ is derived from the transcript of all
//! ρ-independent values, then the ρ-dependent claims (τA, Aρ) are filled in;
//! the second challenge γ is derived from the second transcript of the τA
//! vectors the folds consume.

use crate::error::CircuitError;
use crate::layout::{
    challenge2_from_transcript, challenge_from_transcript, transcript2_init, Challenges, Layout,
    TileDesc,
};
use zkstep_core::commit::{chain_absorb, pack_values};
use zkstep_core::exec::{StepTrace, UpdateTrace};
use zkstep_core::fixed::{SCALE_I128, SCALE_SQ};
use zkstep_core::poseidon::{fr_from_i128, Fr};
use zkstep_core::{Batch, Checkpoint, Matrix};

/// Everything one fold needs. Rows are `t < rows`, columns `k < n_max`,
/// cells `(i, t)` stored at `i·rows + t`.
#[derive(Clone, Debug)]
pub struct TileWitness {
    /// What this fold does.
    pub desc: TileDesc,
    /// W rows (padded), `rows × n_max`.
    pub w: Vec<i64>,
    /// W' rows.
    pub w_new: Vec<i64>,
    /// b.
    pub b: Vec<i64>,
    /// b'.
    pub b_new: Vec<i64>,
    /// vW rows (momentum; empty otherwise).
    pub vw: Vec<i64>,
    /// vW' rows.
    pub vw_new: Vec<i64>,
    /// vb.
    pub vb: Vec<i64>,
    /// vb'.
    pub vb_new: Vec<i64>,
    /// Remainder of each weight update (divisor S² for SGD, S for momentum).
    pub upd_r: Vec<i64>,
    /// Momentum: dW = rescale_S(dW_acc) and its remainder.
    pub dw_q: Vec<i64>,
    /// Remainder of dW.
    pub dw_r: Vec<i64>,
    /// Momentum: rescale_S(μ·vW) and its remainder.
    pub mv_q: Vec<i64>,
    /// Remainder of μ·vW.
    pub mv_r: Vec<i64>,
    /// Remainder of each bias update.
    pub bu_r: Vec<i64>,
    /// Momentum: rescale_S(μ·vb) and its remainder.
    pub mvb_q: Vec<i64>,
    /// Remainder of μ·vb.
    pub mvb_r: Vec<i64>,
    /// Pre-activations Z of the tile's units (X for input tiles), `B × rows`.
    pub z: Vec<i64>,
    /// Remainders of Z's rescale.
    pub z_r: Vec<i64>,
    /// ReLU selectors `[Z ≥ 1]`.
    pub s: Vec<bool>,
    /// Targets Y of the tile's units (top layer; zero elsewhere).
    pub y: Vec<i64>,
    /// Incoming gradient dA of the tile's units.
    pub da: Vec<i64>,
    /// Remainders of dA's rescale.
    pub da_r: Vec<i64>,
    /// τA of the layer's input (n_max, zero-padded).
    pub ta_in: Vec<Fr>,
    /// Aρ of the layer's input (B).
    pub ar_in: Vec<Fr>,
    /// First tile of a non-top layer: the layer above's Aρ claim about this layer's output.
    pub ar_up: Vec<Fr>,
    /// Salt of the batch commitment.
    pub salt: Fr,
}

impl TileWitness {
    /// The ρ-independent values the transcript absorbs, in the circuit's order.
    pub fn transcript_values(&self, momentum: bool) -> Vec<i64> {
        let mut v = Vec::with_capacity(4 * self.z.len() + 2 * self.upd_r.len());
        v.extend_from_slice(&self.z);
        v.extend_from_slice(&self.z_r);
        v.extend_from_slice(&self.da);
        v.extend_from_slice(&self.da_r);
        if momentum {
            for (q, r) in self.dw_q.iter().zip(&self.dw_r) {
                v.push(*q);
                v.push(*r);
            }
        } else {
            v.extend_from_slice(&self.upd_r);
        }
        v
    }
}

fn off(layout: &Layout, d: i128) -> i64 {
    layout.spec.rounding.offset(d) as i64
}

fn get(m: &Matrix, i: usize, j: usize) -> i64 {
    if i < m.rows && j < m.cols {
        m.at(i, j)
    } else {
        0
    }
}

fn cell(v: &[i64], cols: usize, i: usize, j: usize, fallback: i64) -> i64 {
    if j < cols {
        v[i * cols + j]
    } else {
        fallback
    }
}

/// All fold witnesses and the challenges ρ, γ for one step.
pub fn build_witnesses(
    layout: &Layout,
    trace: &StepTrace,
    before: &Checkpoint,
    batch: &Batch,
) -> Result<(Vec<TileWitness>, Challenges), CircuitError> {
    let (r, n, bsz) = (layout.rows, layout.n_max, layout.batch);
    let momentum = layout.momentum();
    let (off_s, off_sq) = (off(layout, SCALE_I128), off(layout, SCALE_SQ));
    let w_off = if momentum { off_s } else { off_sq };
    let nl = layout.spec.layers.len();
    if trace.forward.len() != nl || before.layers.len() != nl {
        return Err(CircuitError::Witness(
            "the trace does not match the spec's layers".into(),
        ));
    }
    let mut out = Vec::with_capacity(layout.num_folds());
    for d in &layout.schedule {
        let rn = r * n;
        let mut tw = TileWitness {
            desc: *d,
            w: vec![0; rn],
            w_new: vec![0; rn],
            b: vec![0; r],
            b_new: vec![0; r],
            vw: vec![0; if momentum { rn } else { 0 }],
            vw_new: vec![0; if momentum { rn } else { 0 }],
            vb: vec![0; if momentum { r } else { 0 }],
            vb_new: vec![0; if momentum { r } else { 0 }],
            upd_r: vec![w_off; rn],
            dw_q: vec![0; if momentum { rn } else { 0 }],
            dw_r: vec![off_s; if momentum { rn } else { 0 }],
            mv_q: vec![0; if momentum { rn } else { 0 }],
            mv_r: vec![off_s; if momentum { rn } else { 0 }],
            bu_r: vec![off_s; r],
            mvb_q: vec![0; if momentum { r } else { 0 }],
            mvb_r: vec![off_s; if momentum { r } else { 0 }],
            z: vec![0; bsz * r],
            z_r: vec![0; bsz * r],
            s: vec![false; bsz * r],
            y: vec![0; bsz * r],
            da: vec![0; bsz * r],
            da_r: vec![off_s; bsz * r],
            ta_in: vec![Fr::from(0u64); n],
            ar_in: vec![Fr::from(0u64); bsz],
            ar_up: vec![Fr::from(0u64); bsz],
            salt: batch.salt,
        };
        if d.is_input {
            for i in 0..bsz {
                for t in 0..d.rows_active {
                    let x = batch.x.at(i, d.j0 + t);
                    tw.z[i * r + t] = x;
                    tw.s[i * r + t] = x >= 1;
                }
            }
            out.push(tw);
            continue;
        }
        let l = d.layer - 1;
        let (lp, np) = (&before.layers[l], &trace.after.layers[l]);
        let fwd = &trace.forward[l];
        let bwd = &trace.backward[l];
        let n_in = layout.spec.layers[l].inputs;
        let n_out = layout.spec.layers[l].outputs;
        for t in 0..d.rows_active {
            let j = d.j0 + t;
            for k in 0..n_in {
                let (p, src) = (t * n + k, j * n_in + k);
                tw.w[p] = lp.w.at(j, k);
                tw.w_new[p] = np.w.at(j, k);
                match &bwd.update {
                    UpdateTrace::Sgd { w_rem, .. } => tw.upd_r[p] = w_rem[src],
                    UpdateTrace::Momentum {
                        dw,
                        dw_rem,
                        mvw,
                        mvw_rem,
                        w_rem,
                        ..
                    } => {
                        tw.upd_r[p] = w_rem[src];
                        tw.dw_q[p] = dw[src];
                        tw.dw_r[p] = dw_rem[src];
                        tw.mv_q[p] = mvw[src];
                        tw.mv_r[p] = mvw_rem[src];
                    }
                }
                if let (Some(vw), Some(vw2)) = (&lp.vw, &np.vw) {
                    tw.vw[p] = vw.at(j, k);
                    tw.vw_new[p] = vw2.at(j, k);
                }
            }
            tw.b[t] = lp.b[j];
            tw.b_new[t] = np.b[j];
            match &bwd.update {
                UpdateTrace::Sgd { b_rem, .. } => tw.bu_r[t] = b_rem[j],
                UpdateTrace::Momentum {
                    mvb,
                    mvb_rem,
                    b_rem,
                    ..
                } => {
                    tw.bu_r[t] = b_rem[j];
                    tw.mvb_q[t] = mvb[j];
                    tw.mvb_r[t] = mvb_rem[j];
                }
            }
            if let (Some(vb), Some(vb2)) = (&lp.vb, &np.vb) {
                tw.vb[t] = vb[j];
                tw.vb_new[t] = vb2[j];
            }
            for i in 0..bsz {
                let c = i * r + t;
                tw.z[c] = fwd.z.at(i, j);
                tw.z_r[c] = fwd.z_rem[i * n_out + j];
                tw.s[c] = tw.z[c] >= 1;
                if d.is_top {
                    tw.y[c] = get(&batch.y, i, j);
                    tw.da[c] = trace.loss.da.at(i, j);
                    tw.da_r[c] = cell(&trace.loss.da_rem, n_out, i, j, off_s);
                } else {
                    let (m, rem) = trace.backward[l + 1].da_prev.as_ref().ok_or_else(|| {
                        CircuitError::Witness(format!(
                            "layer {} has no input gradient in the trace",
                            l + 2
                        ))
                    })?;
                    tw.da[c] = m.at(i, j);
                    tw.da_r[c] = rem[i * n_out + j];
                }
            }
        }
        out.push(tw);
    }
    // The challenge comes after everything it tests.
    let mut t = crate::layout::transcript_init(
        layout.spec_digest,
        zkstep_core::commit::commit_params(&layout.spec, before),
        zkstep_core::commit::commit_params(&layout.spec, &trace.after),
        zkstep_core::commit::commit_batch(&layout.spec, batch),
        before.step,
    );
    for tw in &out {
        let mut rec = pack_values(&tw.transcript_values(momentum));
        rec.push(tw.salt);
        t = chain_absorb(t, &rec);
    }
    let rho = challenge_from_transcript(t);
    // ρ-dependent claims.
    let pw: Vec<Fr> = powers(rho, layout.max_pow() + 1);
    let stride = pw[n];
    let bw: Vec<Fr> = powers(stride, bsz);
    let input_of = |layer: usize| -> &Matrix {
        if layer == 1 {
            &batch.x
        } else {
            &trace.forward[layer - 2].out
        }
    };
    let output_of = |layer: usize| -> &Matrix {
        if layer == 0 {
            &batch.x
        } else {
            &trace.forward[layer - 1].out
        }
    };
    let tau_a = |m: &Matrix| -> Vec<Fr> {
        (0..n)
            .map(|k| {
                if k < m.cols {
                    (0..bsz)
                        .map(|i| bw[i] * fr_from_i128(m.at(i, k) as i128))
                        .sum()
                } else {
                    Fr::from(0u64)
                }
            })
            .collect()
    };
    let a_rho = |m: &Matrix| -> Vec<Fr> {
        (0..bsz)
            .map(|i| {
                (0..m.cols)
                    .map(|k| pw[k] * fr_from_i128(m.at(i, k) as i128))
                    .sum()
            })
            .collect()
    };
    for tw in out.iter_mut() {
        let d = tw.desc;
        if !d.is_input {
            let a = input_of(d.layer);
            tw.ta_in = tau_a(a);
            tw.ar_in = a_rho(a);
        }
        if d.first && !d.is_top {
            tw.ar_up = a_rho(output_of(d.layer));
        }
    }
    // γ comes after every consumed τA vector (and, through T2₀, after ρ)
    let mut t2 = transcript2_init(layout.spec_digest, rho);
    for tw in &out {
        t2 = chain_absorb(t2, &[chain_absorb(layout.ta_init(), &tw.ta_in), tw.salt]);
    }
    let gamma = challenge2_from_transcript(t2);
    Ok((out, Challenges { rho, gamma }))
}

/// `[1, x, x², …]` of length `len`.
pub fn powers(x: Fr, len: usize) -> Vec<Fr> {
    let mut v = Vec::with_capacity(len);
    let mut p = Fr::from(1u64);
    for _ in 0..len {
        v.push(p);
        p *= x;
    }
    v
}
