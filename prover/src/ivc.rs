//! Keygen, proving and compression: the Nova driver.
//!
//! `keygen(spec)` synthesises the fold's shape and makes Nova's public
//! parameters (dev: a fresh random τ; ceremony: powers of τ from
//! `ppot_pruned_NN.ptau` files, through `zkstep_circuits::params`, which the
//! verifier's `--ptau` check calls too) and the MicroSpartan (ppsnark) keys.
//! `prove` runs the reference executor, insists that θ_{t+1} is exactly what
//! the declared step gives, builds every fold's witness from the trace, folds
//! one IVC step per tile and compresses, telling its caller how far it got
//! through [`ProveEvent`]s (the CLI draws a progress bar from them).

use crate::error::{ProverError, Result};
use std::path::Path;
use std::sync::{Arc, Mutex, OnceLock};
use zkstep_circuits::fold::Tally;
use std::time::Instant;
use zkstep_circuits::engine::{
    CompressedSnark, Compression, Ivc, ProverKey, PublicParams, VerifierKey,
};
use zkstep_fold::FoldError;
use zkstep_circuits::files::{
    self, FileError, FileKind, FirstStep, Header, ParamsKind, ProofPayload, ProvingKeyPayload,
    ProvingKeyRef, SegmentPayload, SegmentStatement, Statement, VerifyingKeyRef,
};
use zkstep_circuits::params::{ceremony_keys, ParamsError};
use zkstep_circuits::state::CommitScheme;
use zkstep_circuits::theta::{PointKey, ThetaKey, ThetaVk};
use zkstep_circuits::verify::StepKeys;
use zkstep_circuits::transcript::Challenges;
use zkstep_circuits::witness::{build_step, multiplicity_slices, NextStep, StepStatement};
use zkstep_circuits::{Layout, TileCircuit, TileDesc};
use zkstep_core::format::{read_input, write_atomic, write_new, Input};
use zkstep_core::input::peek;
use zkstep_core::{step, Batch, Checkpoint, ModelSpec, StepTrace};

/// Where the commitment key comes from.
pub enum Setup<'a> {
    /// Fresh random τ (sound for the party that ran keygen).
    Dev,
    /// A directory of `ppot_pruned_NN.ptau` files from a ceremony.
    Ceremony(&'a Path),
}

/// Everything needed to prove (and, for convenience, to verify).
pub struct Keys {
    /// Layout of the proofs these keys are for.
    pub layout: Arc<Layout>,
    /// Nova public parameters.
    pub pp: PublicParams,
    /// Compression prover key.
    pub pk: ProverKey,
    /// Compression verifier key: made by keygen, or derived from the
    /// parameters on first use ([`Keys::vk`]) when the keys were read from
    /// a proving key (`zkstep prove` never needs it; MicroSpartan's costs
    /// seconds to derive).
    vk: OnceLock<VerifierKey>,
    /// The checksum of the verifying key file (read from the proving key,
    /// or computed from the verifier key on first use).
    vk_checksum: OnceLock<[u8; 32]>,
    /// How the commitment key was made.
    pub params: ParamsKind,
    /// The opening key of checkpoint points (keys on
    /// `CommitScheme::Evaluation`).
    theta: Option<ThetaKey>,
    /// The checksum of the points file (keys on KZG points; computed on first use).
    points_checksum: OnceLock<[u8; 32]>,
}

impl Keys {
    /// What a proof made with these keys is verified with.
    pub fn step_keys(&self) -> Result<StepKeys<'_>> {
        Ok(StepKeys { nova: self.vk()?, theta: self.theta.as_ref() })
    }

    /// The G1 powers checkpoints are committed under (keys on
    /// `CommitScheme::Evaluation`: Commit(θ) = H(spec, t, C_θ)).
    pub fn point_key(&self) -> PointKey<'_> {
        PointKey(self.pp.primary_key())
    }

    /// The compression's verifier key (derived on first use, see the field).
    pub fn vk(&self) -> Result<&VerifierKey> {
        if let Some(vk) = self.vk.get() {
            return Ok(vk);
        }
        let (_, vk) = CompressedSnark::setup(&self.pp, self.pk.compression())
            .map_err(fold_err("compression keys"))?;
        Ok(self.vk.get_or_init(|| vk))
    }

    /// The checksum of these keys' verifying key file, which every proof
    /// made with them names (the verifier refuses it under another key).
    pub fn vk_checksum(&self) -> Result<[u8; 32]> {
        if let Some(c) = self.vk_checksum.get() {
            return Ok(*c);
        }
        let c = checksum_of(&verifying_key_bytes(self)?)?;
        Ok(*self.vk_checksum.get_or_init(|| c))
    }

    /// What the verifying key holds for checkpoints as KZG points: the
    /// opening's key and the points file's checksum (None for chain keys).
    pub fn theta_vk(&self) -> Result<Option<ThetaVk>> {
        let Some(key) = &self.theta else { return Ok(None) };
        let points = match self.points_checksum.get() {
            Some(c) => *c,
            None => {
                let bytes = points_bytes(self)?
                    .ok_or_else(|| ProverError::Invalid("keys on KZG points without a points file".into()))?;
                let c = checksum_of(&bytes)?;
                *self.points_checksum.get_or_init(|| c)
            }
        };
        Ok(Some(ThetaVk { key: key.clone(), points }))
    }

    /// The compression these keys prove with.
    pub fn compression(&self) -> Compression {
        self.pk.compression()
    }
}

fn fold_err(what: &str) -> impl Fn(FoldError) -> ProverError + '_ {
    move |e| ProverError::Fold(format!("{what}: {e}"))
}

/// Make keys for a spec, with the default compression for its fold
/// ([`zkstep_circuits::sizing::compression_for`]).
pub fn keygen(spec: &ModelSpec, rows: Option<usize>, budget: usize, setup: Setup) -> Result<Keys> {
    keygen_with(spec, rows, budget, None, CommitScheme::Chain, setup)
}

/// Make keys for a spec with a given compression (None: the default) and
/// commitment scheme (the fold's rows sized for it).
pub fn keygen_with(
    spec: &ModelSpec,
    rows: Option<usize>,
    budget: usize,
    compression: Option<Compression>,
    scheme: CommitScheme,
    setup: Setup,
) -> Result<Keys> {
    let layout = Arc::new(zkstep_circuits::sizing::layout_for_as(spec, rows, budget, compression, scheme)?);
    let compression = match compression {
        Some(c) => c,
        None => zkstep_circuits::sizing::compression_for(&layout)?,
    };
    keygen_layout(layout, compression, setup)
}

/// Make keys for a layout chosen by the caller (its rows, segments and
/// commitment scheme) and a compression.
pub fn keygen_layout(layout: Arc<Layout>, compression: Compression, setup: Setup) -> Result<Keys> {
    let (pp, pk, vk, params) = match setup {
        Setup::Dev => {
            let shape = TileCircuit::shape(layout.clone());
            let pp = PublicParams::setup_with(
                &shape,
                zkstep_circuits::engine::CHALLENGES,
                &*zkstep_circuits::theta::ck_floor(&layout, compression.dev_ck_floor()),
                &*Compression::ck_floor_secondary(),
                crate::devkey::fold_dev_key,
            )
            .map_err(fold_err("public parameters"))?;
            let (pk, vk) =
                CompressedSnark::setup(&pp, compression).map_err(fold_err("compression keys"))?;
            (pp, pk, vk, ParamsKind::Dev)
        }
        // the same function `zkstep-verify --ptau` re-derives the key with
        Setup::Ceremony(dir) => {
            let k = ceremony_keys(layout.clone(), compression, dir).map_err(|e| match e {
                ParamsError::Ptau { .. } => ProverError::Invalid(e.to_string()),
                ParamsError::Setup(_) => ProverError::Fold(e.to_string()),
            })?;
            (k.pp, k.pk, k.vk, ParamsKind::Ceremony)
        }
    };
    Ok(Keys {
        theta: theta_key(&layout, &pp)?,
        layout,
        pp,
        pk,
        vk: OnceLock::from(vk),
        vk_checksum: OnceLock::new(),
        params,
        points_checksum: OnceLock::new(),
    })
}

/// The opening key of checkpoint points, for keys on `CommitScheme::Evaluation`.
fn theta_key(layout: &Layout, pp: &PublicParams) -> Result<Option<ThetaKey>> {
    match layout.commit_scheme {
        CommitScheme::Chain => Ok(None),
        CommitScheme::Evaluation => zkstep_circuits::theta::opening_key(pp.primary_key())
            .map(Some)
            .map_err(|e| ProverError::Fold(format!("the opening key: {e}"))),
    }
}

/// The checksum an encoded key file carries.
fn checksum_of(bytes: &[u8]) -> Result<[u8; 32]> {
    files::envelope_checksum(bytes)
        .ok_or_else(|| ProverError::Invalid("a key file shorter than its header".into()))
}

/// File names inside a keys directory.
pub const PROVING_KEY_FILE: &str = "proving.key";
/// Verifying key file name.
pub const VERIFYING_KEY_FILE: &str = "verifying.key";

fn header(keys: &Keys, kind: FileKind) -> Header {
    Header {
        kind,
        spec_digest: keys.layout.spec_digest,
        params: keys.params,
    }
}

/// Points file name (keys on KZG points).
pub const POINTS_FILE: &str = "points.key";

/// Encode the points file of keys on KZG points (None for chain keys).
pub fn points_bytes(keys: &Keys) -> Result<Option<Vec<u8>>> {
    if keys.theta.is_none() {
        return Ok(None);
    }
    let payload = zkstep_circuits::theta::points_payload(keys.pp.primary_key(), &keys.layout)
        .map_err(ProverError::Invalid)?;
    files::encode(header(keys, FileKind::Points), &payload)
        .map(Some)
        .map_err(|e| ProverError::Invalid(e.to_string()))
}

/// Encode the verifying key file.
pub fn verifying_key_bytes(keys: &Keys) -> Result<Vec<u8>> {
    let toml = keys.layout.spec.to_toml();
    let theta = keys.theta_vk()?;
    let payload = VerifyingKeyRef {
        spec_toml: &toml,
        rows: keys.layout.rows as u64,
        segments: keys.layout.segments as u64,
        vk: keys.vk()?,
        theta: theta.as_ref(),
    };
    files::encode(header(keys, FileKind::VerifyingKey), &payload)
        .map_err(|e| ProverError::Invalid(e.to_string()))
}

/// Write `proving.key` and `verifying.key` (and, for keys on KZG points,
/// `points.key`) into `dir` (atomically).
pub fn write_keys(dir: &Path, keys: &Keys) -> Result<()> {
    write_keys_as(dir, keys, true)
}

/// [`write_keys`] that replaces existing key files only if `replace`; else
/// each is put in place only if no file has that name by then (another
/// keygen wrote it since the caller checked): nothing is replaced.
pub fn write_keys_as(dir: &Path, keys: &Keys, replace: bool) -> Result<()> {
    std::fs::create_dir_all(dir).map_err(|e| ProverError::io(dir, e))?;
    let toml = keys.layout.spec.to_toml();
    let vk = verifying_key_bytes(keys)?;
    let pk = ProvingKeyRef {
        spec_toml: &toml,
        rows: keys.layout.rows as u64,
        segments: keys.layout.segments as u64,
        scheme: keys.layout.commit_scheme,
        pp: &keys.pp,
        pk: &keys.pk,
        vk_checksum: checksum_of(&vk)?,
    };
    let bytes = files::encode(header(keys, FileKind::ProvingKey), &pk)
        .map_err(|e| ProverError::Invalid(e.to_string()))?;
    let (pk_path, vk_path) = (dir.join(PROVING_KEY_FILE), dir.join(VERIFYING_KEY_FILE));
    let points = points_bytes(keys)?;
    let points_path = dir.join(POINTS_FILE);
    if replace {
        write_atomic(&pk_path, &bytes)?;
        write_atomic(&vk_path, &vk)?;
        match &points {
            Some(p) => write_atomic(&points_path, p)?,
            // chain keys have none: a stale one would name other keys
            None => match std::fs::remove_file(&points_path) {
                Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(ProverError::io(&points_path, e)),
                _ => {}
            },
        }
        return Ok(());
    }
    write_new(&pk_path, &bytes)?;
    if let Err(e) = write_new(&vk_path, &vk) {
        // a verifying key appeared meanwhile: keep it, and leave no proving
        // key beside it that it does not match
        let _ = std::fs::remove_file(&pk_path);
        return Err(e.into());
    }
    if let Some(p) = &points {
        if let Err(e) = write_new(&points_path, p) {
            let _ = std::fs::remove_file(&pk_path);
            let _ = std::fs::remove_file(&vk_path);
            return Err(e.into());
        }
    }
    Ok(())
}

/// Read a proving key file (the verifying key is derived from it when asked for).
pub fn read_proving_key(path: &Path) -> Result<Keys> {
    let bad = |m: String| ProverError::Invalid(format!("{}: {m}", path.display()));
    // another kind of file (a verifying key, a proof, not a zkstep file) is
    // refused by its header before the whole of it is read
    let head = peek(path, files::MAGIC.len() + 1, Input::ProvingKey)?;
    if let Err(e @ (FileError::Kind { .. } | FileError::Magic)) =
        files::open(&head, FileKind::ProvingKey)
    {
        return Err(bad(e.to_string()));
    }
    let bytes = read_input(path, Input::ProvingKey)?;
    let (h, p): (Header, ProvingKeyPayload) =
        files::decode(&bytes, FileKind::ProvingKey).map_err(|e| bad(e.to_string()))?;
    let spec =
        ModelSpec::from_toml_str(&p.spec_toml).map_err(|e| bad(format!("embedded spec: {e}")))?;
    if spec.digest() != h.spec_digest {
        return Err(bad(
            "the embedded spec does not match the header's spec digest".into(),
        ));
    }
    files::check_tiling(p.rows, p.segments).map_err(|e| bad(e.to_string()))?;
    let layout = Arc::new(
        Layout::with_segments(&spec, p.rows as usize, p.segments as usize)
            .map_err(|e| bad(e.to_string()))?
            .with_commit_scheme(p.scheme),
    );
    // a key changed after keygen (re-sealed, so the checksum passes) would
    // give proofs that no verifier accepts: refuse it here, by name
    let corrupt = |why: String| bad(format!("proving key corrupt: {why}"));
    p.pp.check_digest().map_err(|e| corrupt(e.to_string()))?;
    zkstep_circuits::engine::check_key_lengths(&p.pp, p.pk.compression()).map_err(|e| corrupt(e.to_string()))?;
    if p.pp.config().arity != layout.arity() {
        return Err(corrupt(format!(
            "its circuits have {} state slots, its layout ({} rows a fold) {}",
            p.pp.config().arity,
            p.rows,
            layout.arity()
        )));
    }
    // the layout's circuit and the folding layer's own are the key's circuit
    let stats = zkstep_circuits::sizing::shape_stats(&layout)?;
    let want = stats.constraints + stats.layer.primary_constraints;
    let (got, _) = p.pp.num_constraints();
    if got != want {
        return Err(corrupt(format!(
            "its primary circuit has {got} constraints, its layout ({} rows a fold) gives {want} in this zkstep: a key made by another version of zkstep (run `zkstep keygen` again) or a damaged file",
            p.rows
        )));
    }
    let need = zkstep_circuits::theta::powers_needed(&layout);
    if p.pp.primary_key().ck().len() < need {
        return Err(corrupt(format!(
            "its commitment key has {} powers, a checkpoint of its spec needs {need}",
            p.pp.primary_key().ck().len()
        )));
    }
    Ok(Keys {
        theta: theta_key(&layout, &p.pp)?,
        layout,
        pp: p.pp,
        pk: p.pk,
        vk: OnceLock::new(),
        vk_checksum: OnceLock::from(p.vk_checksum),
        params: h.params,
        points_checksum: OnceLock::new(),
    })
}

/// Seconds spent in each phase of `prove`.
#[derive(Clone, Copy, Debug, Default, serde::Serialize)]
pub struct Timings {
    /// Reference executor + witness generation.
    pub witness_s: f64,
    /// All folds.
    pub fold_s: f64,
    /// Compression.
    pub compress_s: f64,
}

/// The first place where `got` differs from the declared step's `want`
/// (weights, biases, then each optimizer state tensor).
fn first_difference(names: &[&str], want: &Checkpoint, got: &Checkpoint) -> Option<String> {
    for (l, (a, b)) in want.layers.iter().zip(&got.layers).enumerate() {
        let cols = a.w.cols.max(1);
        let mut tensors = vec![
            ("W".to_string(), &a.w.data, &b.w.data, Some(cols)),
            ("b".to_string(), &a.b, &b.b, None),
        ];
        for ((x, y), name) in a.state.iter().zip(&b.state).zip(names) {
            tensors.push((format!("{name}W"), &x.w.data, &y.w.data, Some(cols)));
            tensors.push((format!("{name}b"), &x.b, &y.b, None));
        }
        for (name, x, y, cols) in tensors {
            if let Some(n) = (0..x.len().min(y.len())).find(|&n| x[n] != y[n]) {
                let at = match cols {
                    Some(c) => format!("{},{}", n / c, n % c),
                    None => format!("{n}"),
                };
                return Some(format!(
                    "layer {}, {name}[{at}]: expected {}, got {}",
                    l + 1,
                    x[n],
                    y[n]
                ));
            }
        }
    }
    None
}

/// Everything folding needs for one step: its statement (computed once),
/// the first state and one circuit per fold.
pub struct FoldInputs {
    /// The step's public values (commitments, step, challenges).
    pub statement: StepStatement,
    /// The step index t (θ_t → θ_{t+1}).
    pub step: u64,
    /// z₀.
    pub z0: Vec<zkstep_core::Fr>,
    /// One circuit (with its witness) per fold, in order.
    pub circuits: Vec<TileCircuit>,
}

impl FoldInputs {
    /// Make the step's last fold open `next` (the step that follows in a segment).
    fn open_next(&mut self, next: &StepStatement) {
        if let Some(w) = self.circuits.last_mut().and_then(|c| c.witness.as_mut()) {
            Arc::make_mut(w).next = NextStep::of(next);
        }
    }

    /// Give every fold its slice of the step's lookup multiplicities.
    fn set_multiplicities(&mut self, layout: &Layout, tally: &[u64]) {
        for (c, m) in self
            .circuits
            .iter_mut()
            .zip(multiplicity_slices(layout, tally))
        {
            if let Some(w) = c.witness.as_mut() {
                Arc::make_mut(w).mult = m;
            }
        }
    }

    /// The proof file's statement of this step.
    pub fn public(&self, layout: &Layout) -> Statement {
        let st = &self.statement;
        Statement {
            spec_digest: layout.spec_digest,
            c_before: st.c_before,
            c_after: st.c_after,
            c_batch: st.c_batch,
            step: self.step,
        }
    }
}

/// Run the declared step from `before` on `batch` and insist that it gives
/// exactly `after` (and that `after` is the next step). Cheap next to
/// proving: callers may check this before loading keys.
pub fn check_step(
    spec: &ModelSpec,
    before: &Checkpoint,
    after: &Checkpoint,
    batch: &Batch,
) -> Result<StepTrace> {
    let trace = step(spec, before, batch)?;
    if let Some(diff) = first_difference(spec.optimizer.state_names(), &trace.after, after) {
        return Err(ProverError::NotTheStep(format!(
            "the after-checkpoint differs from the declared step at {diff}"
        )));
    }
    if after.step != before.step + 1 {
        return Err(ProverError::NotTheStep(format!(
            "the after-checkpoint is step {}, expected step {}",
            after.step,
            before.step + 1
        )));
    }
    Ok(trace)
}

/// The ρ a prover's first pass builds the witnesses at: what it commits (the
/// first phases) does not depend on ρ, and what does is rebuilt at the
/// drawn ρ in the later passes.
pub const STAND_IN_RHO: u64 = 2;

/// The γ a prover's first two passes build the witnesses at: what they
/// commit (the first phases, the second parts) does not depend on γ.
pub const STAND_IN_GAMMA: u64 = 3;

/// The challenges a prover's first pass builds the witnesses at.
pub fn stand_ins() -> Challenges {
    Challenges {
        rho: zkstep_core::Fr::from(STAND_IN_RHO),
        gamma: zkstep_core::Fr::from(STAND_IN_GAMMA),
    }
}

/// Check θ_after against the declared step ([`check_step`]) and build every
/// fold's witness and the step's statement at the challenges
/// ([`stand_ins`] before they are drawn).
pub fn fold_inputs(
    layout: &Arc<Layout>,
    before: &Checkpoint,
    after: &Checkpoint,
    batch: &Batch,
    challenges: Challenges,
    anchors: [zkstep_core::Fr; 2],
) -> Result<FoldInputs> {
    let trace = check_step(&layout.spec, before, after, batch)?;
    let (witnesses, statement) = build_step(layout, &trace, before, batch, challenges, anchors)?;
    let circuits = witnesses
        .into_iter()
        .map(|w| TileCircuit::fold(layout.clone(), w))
        .collect();
    Ok(FoldInputs {
        z0: layout.first_state(&statement),
        statement,
        step: before.step,
        circuits,
    })
}

/// How far [`prove`] has got, in order: one `Committing` and one
/// `Committed` per fold for each of the two commit passes (round 1: the
/// first phases; round 2: the second parts, at the first round's
/// challenges), one `Folding`, one `Folded` per fold, one `Compressing`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ProveEvent {
    /// A commit pass starts: every fold's first phase (round 1) or second
    /// part (round 2) committed.
    Committing {
        /// Folds to commit.
        total: usize,
        /// Which pass: 1 or 2.
        round: usize,
    },
    /// Fold `index` (0-based) of `total` has its part of this round committed.
    Committed {
        /// Which fold.
        index: usize,
        /// Folds in all.
        total: usize,
    },
    /// The witnesses are built; folding starts.
    Folding {
        /// Folds to do.
        total: usize,
    },
    /// Fold `index` (0-based) of `total` is done.
    Folded {
        /// Which fold.
        index: usize,
        /// Folds in all.
        total: usize,
        /// What that fold did.
        desc: TileDesc,
    },
    /// Every fold is done; compression starts.
    Compressing,
}

/// Prove one step: θ_after = Step(θ_before, batch), reporting progress to
/// `progress` (pass `&mut |_| {}` to ignore it).
pub fn prove(
    keys: &Keys,
    before: &Checkpoint,
    after: &Checkpoint,
    batch: &Batch,
    progress: &mut dyn FnMut(ProveEvent),
) -> Result<(ProofPayload, Timings)> {
    let (seg, timings, statement) = prove_steps(
        keys,
        &[before.clone(), after.clone()],
        std::slice::from_ref(batch),
        progress,
    )?;
    Ok((
        ProofPayload {
            statement,
            vk_checksum: keys.vk_checksum()?,
            challenges: seg.first.challenges,
            num_folds: seg.num_folds,
            snark: seg.snark,
            theta: seg.theta,
        },
        timings,
    ))
}

/// Prove a segment: k = `batches.len()` consecutive steps, checkpoint
/// `checkpoints[s + 1]` = Step(`checkpoints[s]`, `batches[s]`), folded as one
/// IVC (each step's last fold opens the next step), compressed once.
pub fn prove_segment(
    keys: &Keys,
    checkpoints: &[Checkpoint],
    batches: &[Batch],
    progress: &mut dyn FnMut(ProveEvent),
) -> Result<(SegmentPayload, Timings)> {
    prove_steps(keys, checkpoints, batches, progress).map(|(p, t, _)| (p, t))
}

/// The one folding loop of [`prove`] and [`prove_segment`] (it also returns
/// the first step's statement), in three passes over the segment's steps.
/// The challenges α (lookups) and ρ (matrix identities) must come after
/// every fold's first phase, γ after every fold's second: the first pass
/// builds the witnesses at a stand-in ρ, runs each fold's first phase and
/// commits what it allocates before the challenges (counting the step's
/// lookups, whose multiplicities are then added to each fold's
/// commitment); the second rebuilds them at the ρ drawn from those
/// commitments and commits the second phase; the third folds at [α, ρ, γ].
/// At most two steps' witnesses are held at once (a step's last fold needs
/// the next step's statement).
fn prove_steps(
    keys: &Keys,
    checkpoints: &[Checkpoint],
    batches: &[Batch],
    progress: &mut dyn FnMut(ProveEvent),
) -> Result<(SegmentPayload, Timings, Statement)> {
    let k = segment_len(checkpoints, batches)?;
    let t = Instant::now();
    let points = anchor_points(keys, [&checkpoints[0], &checkpoints[k]])?;
    let anchors = points.map_or([zkstep_core::Fr::from(0u64); 2], |p| [p[0].0, p[1].0]);
    let witness_s = t.elapsed().as_secs_f64();
    let mut seg = Segment { keys, checkpoints, batches, k, anchors, witness_s, fold_s: 0.0 };
    let total = keys.layout.num_folds() * k;
    let (folded, snark, t) = crate::masks::beside(&keys.pp, |masks| {
        let (mut pres, tallies) = seg.commit_first_phases(progress)?;
        let first = zkstep_fold::run_challenges(&keys.pp, &pres);
        let rho = *first.get(1).ok_or_else(|| ProverError::Invalid("no ρ drawn".into()))?;
        seg.commit_second_phases(&mut pres, &tallies, &first, rho, progress)?;
        let drawn = zkstep_fold::run_challenges(&keys.pp, &pres);
        let gamma = *drawn.get(2).ok_or_else(|| ProverError::Invalid("no γ drawn".into()))?;
        let folded = seg.fold_all(&pres, &tallies, drawn, Challenges { rho, gamma }, progress)?;
        progress(ProveEvent::Compressing);
        let t = Instant::now();
        let snark = CompressedSnark::prove_masked(&keys.pp, &keys.pk, &folded.ivc, masks()?)
            .map_err(fold_err("compression"))?;
        Ok((folded, snark, t))
    })?;
    let (first, first_ch) = folded.head;
    // under KZG points the states hold evaluations at ζ: the statement
    // names the points' commitments, the opening ties the two together
    let (mut head, mut c_end, mut theta) = (first, folded.c_end, None);
    if let Some([(c_start, p_start), (c_last, p_end)]) = points {
        let zeta = keys.layout.zeta(&first_ch, anchors);
        let o = keys
            .point_key()
            .open(&keys.layout.spec, [&checkpoints[0], &checkpoints[k]], [p_start, p_end], zeta)
            .map_err(ProverError::Invalid)?;
        if (o.y_start, o.y_end) != (first.c_before, folded.c_end) {
            return Err(ProverError::Invalid(
                "the checkpoints' evaluations at ζ are not the ones the folds proved".into(),
            ));
        }
        head.c_before = c_start;
        if k == 1 {
            head.c_after = c_last;
        }
        c_end = c_last;
        theta = Some(o);
    }
    let compress_s = t.elapsed().as_secs_f64();
    let statement = SegmentStatement {
        spec_digest: keys.layout.spec_digest,
        c_start: head.c_before,
        c_end,
        batches: keys.layout.batches_digest(&folded.batch_commits),
        step: first.step,
        steps: k as u64,
    };
    let payload = SegmentPayload {
        statement,
        vk_checksum: keys.vk_checksum()?,
        first: FirstStep {
            c_after: first.c_after,
            c_batch: first.c_batch,
            challenges: first_ch,
        },
        num_folds: total as u64,
        snark,
        theta,
    };
    let timings = Timings { witness_s: seg.witness_s, fold_s: seg.fold_s, compress_s };
    Ok((payload, timings, head))
}

/// Under KZG points (`CommitScheme::Evaluation`), the commitments and
/// points of a proof's first and last checkpoints (ζ absorbs the
/// commitments); none under the chains.
fn anchor_points(keys: &Keys, ends: [&Checkpoint; 2]) -> Result<Option<[(zkstep_core::Fr, zkstep_circuits::theta::G1); 2]>> {
    if keys.layout.commit_scheme == CommitScheme::Chain {
        return Ok(None);
    }
    let pk = keys.point_key();
    let spec = &keys.layout.spec;
    let (a, b) = std::thread::scope(|sc| {
        let a = sc.spawn(|| pk.commitment(spec, ends[0]));
        let b = pk.commitment(spec, ends[1]);
        (a.join().unwrap_or_else(|p| std::panic::resume_unwind(p)), b)
    });
    Ok(Some([a.map_err(ProverError::Invalid)?, b.map_err(ProverError::Invalid)?]))
}

type Pre = zkstep_fold::Precommitment<zkstep_circuits::engine::E1>;

/// A segment being proven: what every pass walks, and the time it took.
struct Segment<'a> {
    keys: &'a Keys,
    checkpoints: &'a [Checkpoint],
    batches: &'a [Batch],
    k: usize,
    /// The proof's first and last commitments (ζ absorbs them).
    anchors: [zkstep_core::Fr; 2],
    witness_s: f64,
    fold_s: f64,
}

/// What the folding pass leaves for compression and the statement.
struct Folded {
    ivc: Ivc,
    /// The first step's public values and challenges.
    head: (Statement, Challenges),
    /// The last step's θ_{t+1} commitment.
    c_end: zkstep_core::Fr,
    /// Every step's batch commitment, in order.
    batch_commits: Vec<zkstep_core::Fr>,
}

impl Segment<'_> {
    /// Visit every step at challenges `ch`, step s with step s + 1's
    /// opening (every pass walks the steps alike); the last step's inputs.
    fn walk(
        &mut self,
        ch: Challenges,
        visit: &mut dyn FnMut(usize, &mut FoldInputs) -> Result<()>,
    ) -> Result<FoldInputs> {
        let (layout, cps, batches) = (&self.keys.layout, self.checkpoints, self.batches);
        let anchors = self.anchors;
        let inputs = |s: usize| fold_inputs(layout, &cps[s], &cps[s + 1], &batches[s], ch, anchors);
        let t = Instant::now();
        let mut cur = inputs(0)?;
        self.witness_s += t.elapsed().as_secs_f64();
        for s in 0..self.k {
            let t = Instant::now();
            let next = if s + 1 < self.k { Some(inputs(s + 1)?) } else { None };
            if let Some(n) = &next {
                cur.open_next(&n.statement);
            }
            self.witness_s += t.elapsed().as_secs_f64();
            let t = Instant::now();
            visit(s, &mut cur)?;
            self.fold_s += t.elapsed().as_secs_f64();
            if let Some(n) = next {
                cur = n;
            }
        }
        Ok(cur)
    }

    /// First pass: commit every fold's first phase (at stand-in challenges),
    /// each step's lookups counted and their multiplicities added.
    fn commit_first_phases(
        &mut self,
        progress: &mut dyn FnMut(ProveEvent),
    ) -> Result<(Vec<Pre>, Vec<Vec<u64>>)> {
        let keys = self.keys;
        let (layout, pp) = (&keys.layout, &keys.pp);
        let per = layout.num_folds();
        let total = per * self.k;
        progress(ProveEvent::Committing { total, round: 1 });
        let mut pres = Vec::with_capacity(total);
        let mut tallies = Vec::with_capacity(self.k);
        let mut z = vec![];
        self.walk(stand_ins(), &mut |s, cur| {
            if s == 0 {
                z = cur.z0.clone();
            }
            let tally: Tally = Arc::new(Mutex::new(vec![0; layout.table_size()]));
            let from = pres.len();
            pipelined(
                &mut pres,
                cur.circuits.len(),
                |_, i| {
                    let c = &mut cur.circuits[i];
                    c.tally = Some(tally.clone());
                    let (first, next) = Ivc::synthesize_first(pp, c, &z)
                        .map_err(|e| ProverError::Fold(format!("fold {}: {e}", s * per + i)))?;
                    c.tally = None;
                    z = next;
                    Ok(first)
                },
                |first| Ivc::commit_first(pp, first),
                |pres, i, p| {
                    pres.push(p);
                    progress(ProveEvent::Committed { index: s * per + i, total });
                    Ok(())
                },
            )?;
            tallies.push(complete_step(keys, &tally, &mut pres[from..])?);
            Ok(())
        })?;
        Ok((pres, tallies))
    }

    /// Second pass: commit every fold's second phase at the drawn [α, ρ]
    /// (`first`), the witnesses rebuilt at ρ.
    fn commit_second_phases(
        &mut self,
        pres: &mut Vec<Pre>,
        tallies: &[Vec<u64>],
        first: &[zkstep_core::Fr],
        rho: zkstep_core::Fr,
        progress: &mut dyn FnMut(ProveEvent),
    ) -> Result<()> {
        let (layout, pp) = (&self.keys.layout, &self.keys.pp);
        let per = layout.num_folds();
        let total = per * self.k;
        progress(ProveEvent::Committing { total, round: 2 });
        let mut z = vec![];
        self.walk(Challenges { rho, ..stand_ins() }, &mut |s, cur| {
            if s == 0 {
                z = cur.z0.clone();
            }
            cur.set_multiplicities(layout, &tallies[s]);
            pipelined(
                pres,
                cur.circuits.len(),
                |pres, i| {
                    let index = s * per + i;
                    let (second, next) = Ivc::synthesize_second(pp, &cur.circuits[i], &z, &pres[index], first)
                        .map_err(|e| ProverError::Fold(format!("fold {index}: {e}")))?;
                    z = next;
                    Ok(second)
                },
                |second| Ivc::commit_second(pp, second),
                |pres, i, c| {
                    let index = s * per + i;
                    pres[index].attach_second(c);
                    progress(ProveEvent::Committed { index, total });
                    Ok(())
                },
            )
        })?;
        Ok(())
    }

    /// Third pass: fold every step at the challenges drawn from every
    /// commitment (`drawn` = [α, ρ, γ]; `ch` the circuits' ρ and γ).
    fn fold_all(
        &mut self,
        pres: &[Pre],
        tallies: &[Vec<u64>],
        drawn: Vec<zkstep_core::Fr>,
        ch: Challenges,
        progress: &mut dyn FnMut(ProveEvent),
    ) -> Result<Folded> {
        let (layout, pp) = (&self.keys.layout, &self.keys.pp);
        let per = layout.num_folds();
        let total = per * self.k;
        let mut ivc: Option<Ivc> = None;
        let mut head = None;
        let mut batch_commits = Vec::with_capacity(self.k);
        progress(ProveEvent::Folding { total });
        let last = self.walk(ch, &mut |s, cur| {
            if s == 0 {
                head = Some((cur.public(layout), cur.statement.challenges));
                ivc = Some(Ivc::new(pp, &cur.z0, drawn.clone()).map_err(fold_err("the first state"))?);
            }
            let ivc = ivc
                .as_mut()
                .ok_or_else(|| ProverError::Invalid("a segment without a first step".into()))?;
            batch_commits.push(cur.statement.c_batch);
            cur.set_multiplicities(layout, &tallies[s]);
            for (i, c) in cur.circuits.iter().enumerate() {
                let index = s * per + i;
                ivc.prove_step(pp, c, Some(&pres[index]))
                    .map_err(|e| ProverError::Fold(format!("fold {index}: {e}")))?;
                if let Some(w) = &c.witness {
                    progress(ProveEvent::Folded { index, total, desc: w.desc });
                }
            }
            Ok(())
        })?;
        let head = head.ok_or_else(|| ProverError::Invalid("a segment without steps".into()))?;
        let ivc = ivc.ok_or_else(|| ProverError::Invalid("a segment without steps".into()))?;
        if ivc.num_steps() == 0 {
            return Err(ProverError::Invalid("a segment without folds".into()));
        }
        Ok(Folded { ivc, head, c_end: last.statement.c_after, batch_commits })
    }
}

/// Synthesise items `0..n` one after another on this thread and commit
/// each on a scoped thread while the next is synthesised: a fold's
/// synthesis runs on one core, its commitment (an MSM) on every core, so
/// side by side they keep both busy. `done` takes each commitment in order.
pub(crate) fn pipelined<C, T: Send, U: Send>(
    ctx: &mut C,
    n: usize,
    mut synth: impl FnMut(&mut C, usize) -> Result<T>,
    commit: impl Fn(T) -> U + Sync,
    mut done: impl FnMut(&mut C, usize, U) -> Result<()>,
) -> Result<()> {
    let join = |h: std::thread::ScopedJoinHandle<'_, U>| {
        h.join().unwrap_or_else(|p| std::panic::resume_unwind(p))
    };
    std::thread::scope(|sc| {
        let commit = &commit;
        let mut pending = None;
        for i in 0..n {
            let t = synth(ctx, i)?;
            if let Some((j, h)) = pending.take() {
                done(ctx, j, join(h))?;
            }
            pending = Some((i, sc.spawn(move || commit(t))));
        }
        match pending {
            Some((j, h)) => done(ctx, j, join(h)),
            None => Ok(()),
        }
    })
}

/// The number of steps k of a segment of `checkpoints` (k + 1) and
/// `batches` (k), at most what a verifier accepts (it hashes a segment's
/// steps before the proof).
fn segment_len(checkpoints: &[Checkpoint], batches: &[Batch]) -> Result<usize> {
    let k = batches.len();
    if k == 0 || checkpoints.len() != k + 1 {
        return Err(ProverError::Invalid(format!(
            "a segment needs k ≥ 1 batches and k + 1 checkpoints, got {k} and {}",
            checkpoints.len()
        )));
    }
    let max = zkstep_circuits::verify::MAX_SEGMENT_STEPS;
    if k as u64 > max {
        return Err(ProverError::Invalid(format!(
            "a segment of {k} steps: a verifier accepts at most {max}; prove it as several segments"
        )));
    }
    Ok(k)
}

/// Add a step's lookup multiplicities (counted in `tally` by its first
/// pass) to its folds' precommitments; the counts, for the later passes.
fn complete_step(
    keys: &Keys,
    tally: &Tally,
    pres: &mut [zkstep_fold::Precommitment<zkstep_circuits::engine::E1>],
) -> Result<Vec<u64>> {
    let counts = tally
        .lock()
        .map_err(|_| ProverError::Invalid("the lookup tally was poisoned".into()))?
        .clone();
    for (p, m) in pres.iter_mut().zip(multiplicity_slices(&keys.layout, &counts)) {
        let m: Vec<_> = m.into_iter().map(zkstep_core::Fr::from).collect();
        p.complete(keys.pp.primary_key(), &m).map_err(fold_err("the multiplicities"))?;
    }
    Ok(counts)
}

/// Encode a segment proof file.
pub fn segment_proof_bytes(keys: &Keys, proof: &SegmentPayload) -> Result<Vec<u8>> {
    files::encode(header(keys, FileKind::SegmentProof), proof)
        .map_err(|e| ProverError::Invalid(e.to_string()))
}

/// Encode a proof file.
pub fn proof_bytes(keys: &Keys, proof: &ProofPayload) -> Result<Vec<u8>> {
    files::encode(header(keys, FileKind::Proof), proof)
        .map_err(|e| ProverError::Invalid(e.to_string()))
}
