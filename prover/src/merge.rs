//! π_merge's keys, prover and verifier: the merge circuit
//! (`zkstep_circuits::merge`) folded by zkstep-fold, one fold per tile of
//! units, then compressed. Two passes, as a step's proof: every fold's
//! first phase is committed (counting the lookups), the challenge α is drawn
//! from those commitments, and the folds are made at α. A fold's witness is
//! read from the checkpoints when the fold is made, so only the tile being
//! folded is held beside the checkpoints.
//!
//! Keys on KZG points (a layout on `CommitScheme::Evaluation`) commit every
//! checkpoint as a hash of its point under the keys' own G1 powers (written
//! beside the keys as `merge_points.key`); the folds evaluate the
//! checkpoints at ζ = H(ZETA, spec, α, the statement's commitments), and
//! the proof opens every point there to the last state's evaluations.

use crate::error::{ProverError, Result};
use crate::ivc::{pipelined, Timings};
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Instant;
use zkstep_circuits::files::{
    self, FileError, FileKind, Header, MergeProvingKeyPayload, MergeProvingKeyRef, MergeVerifyingKeyRef,
    ParamsKind,
};
use zkstep_core::format::{read_input, write_atomic, write_new, Input};
use zkstep_core::input::peek;
use zkstep_circuits::engine::{CompressedSnark, Compression, Ivc, ProverKey, PublicParams, VerifierKey, E1, E2};
use zkstep_circuits::merge::{slice_of, MergeCircuit, MergeInputs, MergeLayout, MergeStatement, MergeWitness};
use zkstep_circuits::state::CommitScheme;
use zkstep_circuits::theta::{MergeOpening, PointKey, ThetaKey, ThetaVk, G1};
use zkstep_core::{Checkpoint, Fr, ModelSpec};
use zkstep_fold::{ChallengeMode, FoldError};

/// Keys for merges of N checkpoints of one spec.
pub struct MergeKeys {
    /// The spec the checkpoints are of.
    pub spec: ModelSpec,
    /// How the checkpoints are cut into folds.
    pub layout: Arc<MergeLayout>,
    /// The folding layer's parameters.
    pub pp: PublicParams,
    /// Compression prover key.
    pub pk: ProverKey,
    /// Compression verifier key (keygen's; not in a proving key file).
    pub vk: Option<VerifierKey>,
    /// The checksum of the merge verifying key file (what proofs name).
    pub vk_checksum: Option<[u8; 32]>,
    /// Keys on KZG points: the opening's key ([1]₁, [1]₂, [τ]₂).
    pub theta: Option<ThetaKey>,
}

impl MergeKeys {
    /// The G1 powers checkpoints are committed under (keys on KZG points).
    pub fn point_key(&self) -> PointKey<'_> {
        PointKey(self.pp.primary_key())
    }

    /// Each checkpoint's commitment under these keys, in order: chains
    /// (side by side), or the hashes of their points (with the points).
    fn commitments(&self, ckpts: &[&Checkpoint]) -> Result<(Vec<Fr>, Vec<G1>)> {
        match self.layout.scheme {
            CommitScheme::Chain => Ok((zkstep_core::commit::commit_all(&self.spec, ckpts, &[]).0, vec![])),
            CommitScheme::Evaluation => {
                let pk = self.point_key();
                let all: Vec<(Fr, G1)> = ckpts
                    .iter()
                    .map(|c| pk.commitment(&self.spec, c))
                    .collect::<std::result::Result<_, String>>()
                    .map_err(ProverError::Invalid)?;
                Ok(all.into_iter().unzip())
            }
        }
    }

    /// The statement of `m`, the merge of `nodes` around `centre` under
    /// these reputations and τ, its commitments under these keys.
    pub fn statement(
        &self,
        centre: &Checkpoint,
        nodes: &[&Checkpoint],
        reputations: &[u64],
        tau_fx: i64,
        m: &zkstep_core::merge::Merged,
    ) -> Result<MergeStatement> {
        let (cs, _) = self.commitments(&ordered(nodes, centre, &m.global))?;
        Ok(MergeStatement::with_commitments(nodes.len(), reputations, tau_fx, m, centre.step, &cs))
    }

    /// The merge points file's bytes (keys on KZG points), None for chain keys.
    pub fn points_bytes(&self) -> Result<Option<Vec<u8>>> {
        if self.layout.scheme == CommitScheme::Chain {
            return Ok(None);
        }
        let payload = zkstep_circuits::theta::points_payload_of(self.pp.primary_key(), self.layout.powers_needed(&self.spec))
            .map_err(ProverError::Invalid)?;
        encoded(header(self, FileKind::Points), &payload).map(Some)
    }

    /// What the merge verifying key says of its points: the opening's key
    /// and the points file's checksum.
    fn theta_vk(&self) -> Result<Option<ThetaVk>> {
        let Some(key) = &self.theta else { return Ok(None) };
        let bytes = self
            .points_bytes()?
            .ok_or_else(|| ProverError::Invalid("merge keys on KZG points without a points file".into()))?;
        Ok(Some(ThetaVk { key: key.clone(), points: checksum(&bytes)? }))
    }
}

/// The nodes, the centre and the global model: the statement's order.
fn ordered<'a>(nodes: &[&'a Checkpoint], centre: &'a Checkpoint, global: &'a Checkpoint) -> Vec<&'a Checkpoint> {
    let mut all = nodes.to_vec();
    all.push(centre);
    all.push(global);
    all
}

/// The merge proving key's file name in a keys directory.
pub const MERGE_PROVING_KEY_FILE: &str = "merge_proving.key";
/// The merge verifying key's file name.
pub const MERGE_VERIFYING_KEY_FILE: &str = "merge_verifying.key";
/// The merge points file's name (keys on KZG points).
pub const MERGE_POINTS_FILE: &str = "merge_points.key";

/// A merge proof: the folds made and the compressed proof.
pub struct MergeProof {
    /// Folds (the verifier requires the layout's count).
    pub num_folds: u64,
    /// The compressed proof.
    pub snark: CompressedSnark,
    /// Keys on KZG points: α, the points, their evaluations and the opening.
    pub theta: Option<MergeOpening>,
}

fn fold_err(what: &'static str) -> impl Fn(FoldError) -> ProverError {
    move |e| ProverError::Fold(format!("{what}: {e}"))
}

fn circuit_err(e: zkstep_circuits::CircuitError) -> ProverError {
    ProverError::Invalid(e.to_string())
}

/// Keys for merging `nodes` checkpoints of `spec`, folds sized to `budget`
/// constraints (Spartan's compression: a merge is verified by few, proven once).
pub fn merge_keygen(spec: &ModelSpec, nodes: usize, budget: usize) -> Result<MergeKeys> {
    merge_keygen_as(spec, nodes, budget, CommitScheme::Chain)
}

/// [`merge_keygen`] with the checkpoints bound by `scheme` (the folds
/// sized for it).
pub fn merge_keygen_as(spec: &ModelSpec, nodes: usize, budget: usize, scheme: CommitScheme) -> Result<MergeKeys> {
    merge_keygen_with(spec, MergeLayout::fit_in(spec, nodes, budget, scheme).map_err(circuit_err)?)
}

/// Keys for a given merge layout of `spec` (on KZG points where the
/// layout's scheme is `Evaluation`: the commitment key then holds at least
/// a checkpoint's powers).
pub fn merge_keygen_with(spec: &ModelSpec, layout: MergeLayout) -> Result<MergeKeys> {
    let layout = Arc::new(layout);
    let compression = Compression::Spartan;
    let need = layout.powers_needed(spec);
    let floor = compression.dev_ck_floor();
    let floor1: zkstep_circuits::engine::CkFloor<E1> = Box::new(move |s| floor(s).max(need));
    let pp = PublicParams::setup_with(
        &MergeCircuit::shape(layout.clone()),
        ChallengeMode::PerRun,
        &*floor1,
        &*Compression::ck_floor_secondary(),
        crate::devkey::fold_dev_key,
    )
    .map_err(fold_err("public parameters"))?;
    let (pk, vk) = CompressedSnark::setup(&pp, compression).map_err(fold_err("compression keys"))?;
    let theta = opening_key_of(&layout, &pp)?;
    Ok(MergeKeys {
        spec: spec.clone(),
        layout,
        pp,
        pk,
        vk: Some(vk),
        vk_checksum: None,
        theta,
    })
}

/// The opening key of merge keys on KZG points (None for chain keys).
fn opening_key_of(layout: &MergeLayout, pp: &PublicParams) -> Result<Option<ThetaKey>> {
    match layout.scheme {
        CommitScheme::Chain => Ok(None),
        CommitScheme::Evaluation => zkstep_circuits::theta::opening_key(pp.primary_key())
            .map(Some)
            .map_err(ProverError::Invalid),
    }
}

fn header(keys: &MergeKeys, kind: FileKind) -> Header {
    Header {
        kind,
        spec_digest: keys.layout.spec_digest,
        params: ParamsKind::Dev,
    }
}

fn encoded<T: serde::Serialize>(h: Header, payload: &T) -> Result<Vec<u8>> {
    files::encode(h, payload).map_err(|e| ProverError::Invalid(e.to_string()))
}

/// Encode the merge verifying key file (keys from keygen, which hold the verifier key).
pub fn merge_verifying_key_bytes(keys: &MergeKeys) -> Result<Vec<u8>> {
    let vk = keys
        .vk
        .as_ref()
        .ok_or_else(|| ProverError::Invalid("keys read from a proving key carry no verifier key".into()))?;
    encoded(
        header(keys, FileKind::MergeVerifyingKey),
        &MergeVerifyingKeyRef {
            shape: &keys.layout.shape(&keys.spec),
            vk,
            theta: keys.theta_vk()?.as_ref(),
        },
    )
}

fn checksum(file: &[u8]) -> Result<[u8; 32]> {
    files::envelope_checksum(file).ok_or_else(|| ProverError::Invalid("a key file shorter than its header".into()))
}

/// Write `merge_proving.key` and `merge_verifying.key` into `dir`
/// (atomically; existing files replaced only if `replace`).
pub fn write_merge_keys(dir: &Path, keys: &MergeKeys, replace: bool) -> Result<()> {
    std::fs::create_dir_all(dir).map_err(|e| ProverError::io(dir, e))?;
    let shape = keys.layout.shape(&keys.spec);
    let vk_bytes = merge_verifying_key_bytes(keys)?;
    let vk_checksum = checksum(&vk_bytes)?;
    let pk_bytes = encoded(
        header(keys, FileKind::MergeProvingKey),
        &MergeProvingKeyRef {
            shape: &shape,
            pp: &keys.pp,
            pk: &keys.pk,
            vk_checksum,
        },
    )?;
    let (pk_path, vk_path) = (dir.join(MERGE_PROVING_KEY_FILE), dir.join(MERGE_VERIFYING_KEY_FILE));
    let mut files = vec![(pk_path, pk_bytes), (vk_path, vk_bytes)];
    if let Some(points) = keys.points_bytes()? {
        files.push((dir.join(MERGE_POINTS_FILE), points));
    }
    if replace {
        for (path, bytes) in &files {
            write_atomic(path, bytes)?;
        }
        return Ok(());
    }
    // none replaced: a failure removes the files this call wrote
    for (i, (path, bytes)) in files.iter().enumerate() {
        if let Err(e) = write_new(path, bytes) {
            for (written, _) in &files[..i] {
                let _ = std::fs::remove_file(written);
            }
            return Err(e.into());
        }
    }
    Ok(())
}

/// Read a merge proving key file.
pub fn read_merge_proving_key(path: &Path) -> Result<MergeKeys> {
    let bad = |m: String| ProverError::Invalid(format!("{}: {m}", path.display()));
    let head = peek(path, files::MAGIC.len() + 1, Input::ProvingKey)?;
    if let Err(e @ (FileError::Kind { .. } | FileError::Magic)) = files::open(&head, FileKind::MergeProvingKey) {
        return Err(bad(e.to_string()));
    }
    let bytes = read_input(path, Input::ProvingKey)?;
    let (h, p): (Header, MergeProvingKeyPayload) =
        files::decode(&bytes, FileKind::MergeProvingKey).map_err(|e| bad(e.to_string()))?;
    let (spec, layout) = MergeLayout::from_shape(&p.shape).map_err(|e| bad(e.to_string()))?;
    if spec.digest() != h.spec_digest {
        return Err(bad("the embedded spec does not match the header's spec digest".into()));
    }
    let corrupt = |why: String| bad(format!("merge proving key corrupt: {why}"));
    p.pp.check_digest().map_err(|e| corrupt(e.to_string()))?;
    zkstep_circuits::engine::check_key_lengths(&p.pp, p.pk.compression()).map_err(|e| corrupt(e.to_string()))?;
    if p.pp.config().arity != layout.arity() {
        return Err(corrupt(format!(
            "its circuits have {} state slots, a merge of {} nodes {}",
            p.pp.config().arity,
            layout.nodes,
            layout.arity()
        )));
    }
    // the merge circuit and the folding layer's own are the key's circuit
    let own = zkstep_fold::params::layer_sizes::<E1, E2>(layout.arity(), 1, ChallengeMode::PerRun)
        .map_err(|e| corrupt(e.to_string()))?;
    let want = layout.num_constraints().map_err(circuit_err)? + own.primary_constraints;
    let (got, _) = p.pp.num_constraints();
    if got != want {
        return Err(corrupt(format!(
            "its primary circuit has {got} constraints, a merge of {} nodes at {} units a fold {want}",
            layout.nodes, layout.units_per_fold
        )));
    }
    let theta = opening_key_of(&layout, &p.pp)?;
    if layout.powers_needed(&spec) > p.pp.primary_key().ck().len() {
        return Err(corrupt("its commitment key is shorter than a checkpoint's coefficients".into()));
    }
    Ok(MergeKeys {
        spec,
        layout: Arc::new(layout),
        pp: p.pp,
        pk: p.pk,
        vk: None,
        vk_checksum: Some(p.vk_checksum),
        theta,
    })
}

/// Encode a merge proof file.
pub fn merge_proof_bytes(keys: &MergeKeys, proof: &MergeProof, stmt: &MergeStatement) -> Result<Vec<u8>> {
    let vk_checksum = match keys.vk_checksum {
        Some(c) => c,
        None => checksum(&merge_verifying_key_bytes(keys)?)?,
    };
    let payload = files::MergeProofFile {
        statement: files::StoredMergeStatement::of(stmt, proof.theta.is_some()),
        vk_checksum,
        num_folds: proof.num_folds,
        snark: &proof.snark,
        theta: proof.theta.as_ref(),
    };
    encoded(header(keys, FileKind::MergeProof), &payload)
}

/// Prove that `global` is the merge of `nodes` around `centre` under the
/// statement (its weights, its commitments).
pub fn prove_merge(
    keys: &MergeKeys,
    spec: &ModelSpec,
    nodes: &[&Checkpoint],
    centre: &Checkpoint,
    global: &Checkpoint,
    stmt: &MergeStatement,
) -> Result<(MergeProof, Timings)> {
    // the compression's masks are drawn beside the folds (crate::masks)
    crate::masks::beside(&keys.pp, |masks| {
        let lay = &keys.layout;
        let pp = &keys.pp;
        stmt.check(lay).map_err(circuit_err)?;
        if nodes.len() != lay.nodes {
            return Err(ProverError::Invalid(format!(
                "keys for {} nodes, {} given",
                lay.nodes,
                nodes.len()
            )));
        }
        // what a proof could only fail on, said before any work (the points,
        // under KZG keys, are what the opening needs)
        let t = Instant::now();
        let all = ordered(nodes, centre, global);
        let (cs, points) = keys.commitments(&all)?;
        let points_s = t.elapsed().as_secs_f64();
        stmt.check_inputs(spec, nodes, centre, global, &cs)
            .map_err(|e| ProverError::Invalid(format!("merge: {e}")))?;
        let evaluated = lay.scheme == CommitScheme::Evaluation;
        let weights = stmt.weights();
        let inp = MergeInputs {
            nodes,
            centre,
            global,
            weights: &weights,
        };
        let folds = lay.num_folds();
        let (mut witness_s, mut fold_s) = (0.0, 0.0);
        let mut build = |f: usize, mult: Option<&[u64]>| {
            let t = Instant::now();
            let mut w = MergeWitness::build(lay, spec, &inp, f);
            if let Some(m) = mult {
                w.mult = slice_of(lay, m, f);
            }
            witness_s += t.elapsed().as_secs_f64();
            MergeCircuit::fold(lay.clone(), w)
        };
        // first pass: commit every fold's first phase, counting the lookups
        // (under evaluations at a stand-in α: the first phase never reads α, ζ
        // or the evaluations, only passes them on)
        let z0 = match evaluated {
            false => stmt.z0(lay),
            true => stmt.evaluated_states(lay, Fr::from(0u64), Fr::from(0u64)).0,
        };
        let tally = Arc::new(Mutex::new(vec![0u64; lay.table_size()]));
        let mut pres = Vec::with_capacity(folds);
        let mut z = z0.clone();
        let t = Instant::now();
        pipelined(
            &mut pres,
            folds,
            |_, f| {
                let c = MergeCircuit {
                    tally: Some(tally.clone()),
                    ..build(f, None)
                };
                let (first, next) = Ivc::synthesize_first(pp, &c, &z)
                    .map_err(|e| ProverError::Fold(format!("merge fold {f}: {e}")))?;
                z = next;
                Ok(first)
            },
            |first| Ivc::commit_first(pp, first),
            |pres, _, p| {
                pres.push(p);
                Ok(())
            },
        )?;
        let counts = tally
            .lock()
            .map_err(|_| ProverError::Invalid("the lookup tally was poisoned".into()))?
            .clone();
        for (f, p) in pres.iter_mut().enumerate() {
            let m: Vec<Fr> = slice_of(lay, &counts, f).into_iter().map(Fr::from).collect();
            p.complete(pp.primary_key(), &m).map_err(fold_err("the multiplicities"))?;
        }
        // second pass: fold at α drawn from every commitment
        let drawn = zkstep_fold::run_challenges(pp, &pres);
        let alpha = *drawn.first().ok_or_else(|| ProverError::Invalid("no α drawn".into()))?;
        let z0 = match evaluated {
            false => z0,
            true => stmt.evaluated_states(lay, alpha, Fr::from(0u64)).0,
        };
        let mut ivc = Ivc::new(pp, &z0, drawn).map_err(fold_err("the first state"))?;
        for (f, pre) in pres.iter().enumerate() {
            let c = build(f, Some(&counts));
            ivc.prove_step(pp, &c, Some(pre))
                .map_err(|e| ProverError::Fold(format!("merge fold {f}: {e}")))?;
        }
        fold_s += t.elapsed().as_secs_f64() - witness_s;
        // the points (or chains) of the inputs count as the witness's
        witness_s += points_s;
        let t = Instant::now();
        let snark = CompressedSnark::prove_masked(pp, &keys.pk, &ivc, masks()?).map_err(fold_err("compression"))?;
        // under KZG points: every point opened at ζ to the evaluations the folds ended at
        let theta = match evaluated {
            false => None,
            true => {
                let zeta = lay.zeta(alpha, stmt.anchors());
                let r = zkstep_circuits::theta::combination_r(zeta);
                let (value, proof) = keys.point_key().open_combined(spec, &all, r, zeta).map_err(ProverError::Invalid)?;
                if stmt.evaluated_states(lay, alpha, value).1 != ivc.outputs() {
                    return Err(ProverError::Invalid(
                        "the checkpoints' evaluations at ζ are not the ones the folds proved".into(),
                    ));
                }
                Some(MergeOpening { alpha, points, value, proof })
            }
        };
        let compress_s = t.elapsed().as_secs_f64();
        Ok((
            MergeProof {
                num_folds: folds as u64,
                snark,
                theta,
            },
            Timings {
                witness_s,
                fold_s,
                compress_s,
            },
        ))
    })
}

/// Accept a merge proof for `stmt` (keygen's verifier key), or say why not.
pub fn verify_merge(keys: &MergeKeys, proof: &MergeProof, stmt: &MergeStatement) -> std::result::Result<(), String> {
    let vk = keys.vk.as_ref().ok_or("keys read from a proving key carry no verifier key")?;
    let theta = (keys.theta.as_ref(), proof.theta.as_ref());
    zkstep_circuits::merge::verify_merge(&keys.layout, vk, proof.num_folds, &proof.snark, stmt, theta, &Default::default())
}
