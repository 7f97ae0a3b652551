//! Compression into one zero-knowledge proof of constant size.
//!
//! 1. The secondary's last instance is folded into its running instance.
//! 2. Each running instance is folded with a random satisfying instance of
//!    its shape, so the witness the SNARKs see is uniformly random; the
//!    folded commitments are hiding, and their blinds are revealed only
//!    after that masking (as nova-snark's `CompressedSNARK` does).
//! 3. nova-snark's Spartan (`S1`, `S2`: `snark` or `ppsnark`, with any
//!    evaluation engine: zkstep's `S1` opens with Mercury) proves each
//!    masked instance satisfiable.
//! 4. On a split layout, a polynomial opening (`EE1`) of the masked comm_W₂
//!    as a vector of m values proves that W₂'s commitment lies on W₂'s
//!    generators (docs/SOUNDNESS.md: why the challenges need it; `EE1`
//!    must bound the degree, as HyperKZG does and Mercury does not); with three
//!    parts, comm_W₂ is opened as m₂₃ values and comm_W₃ as m₃, so each
//!    later part misses the columns of every earlier one.

use crate::cs::WitnessLayout;
use crate::error::{FoldError, Result};
use crate::instance::{
    commit_witness, parts, Commitment, DerandKey, FoldInstance, RunningInstance, RunningWitness,
};
use crate::ivc::{check_final, derive_run, plain_layout, FinalState, Ivc};
use crate::nifs;
use crate::params::{Params, RoSet, View};
use crate::spartan::Compressor;
use crate::augmented::Config;
use ff::Field;
use nova_snark::r1cs::R1CSShape;
use nova_snark::spartan::polys::multilinear::MultilinearPolynomial;
use nova_snark::traits::commitment::CommitmentEngineTrait;
use nova_snark::traits::evaluation::EvaluationEngineTrait;
use nova_snark::traits::{Engine, TranscriptEngineTrait};
use rand::rngs::OsRng;
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

/// An evaluation argument whose accepted opening of a commitment as m
/// values also shows that the commitment lies on the first m generators,
/// the degree bound the later parts' openings exist for (docs/SOUNDNESS.md,
/// "Why comm_W₂ must lie on W₂'s generators"). HyperKZG's does: its last
/// folding round fails for a higher block unless that block vanishes at a
/// point drawn after the commitment. Mercury's does not (it bounds only its
/// remainder's degree), so it is not implemented for it: opening the later
/// parts with it would not compile.
pub trait BoundsDegree {}

impl<E> BoundsDegree for nova_snark::provider::hyperkzg::EvaluationEngine<E>
where
    E: Engine + 'static,
    E::GE: nova_snark::provider::traits::PairingGroup,
{
}

/// What the prover needs to compress (beside the parameters).
#[derive(Clone, Serialize, Deserialize)]
#[serde(bound = "")]
pub struct ProverKey<E1, E2, S1, S2, EE1>
where
    E1: Engine,
    E2: Engine,
    S1: Compressor<E1>,
    S2: Compressor<E2>,
    EE1: EvaluationEngineTrait<E1> + BoundsDegree,
{
    pk1: S1::ProverKey,
    pk2: S2::ProverKey,
    // only a split layout opens its later parts
    ee_pk: Option<EE1::ProverKey>,
}

/// What the verifier needs (nothing of the prover's parameters).
#[derive(Serialize, Deserialize)]
#[serde(bound = "")]
pub struct VerifierKey<E1, E2, S1, S2, EE1>
where
    E1: Engine + 'static,
    E2: Engine + 'static,
    S1: Compressor<E1>,
    S2: Compressor<E2>,
    EE1: EvaluationEngineTrait<E1> + BoundsDegree,
{
    cfg: Config,
    layout1: WitnessLayout,
    digest: E1::Scalar,
    vk1: S1::Vk,
    vk2: S2::Vk,
    ee_vk: Option<EE1::VerifierKey>,
    dk1: DerandKey<E1>,
    dk2: DerandKey<E2>,
    #[serde(skip)]
    ro: RoSet<E1, E2>,
}

/// The opening of a masked later part's commitment (comm_W₂, comm_W₃) as
/// a vector of the prefix it must lie on.
#[derive(Clone, Serialize, Deserialize)]
#[serde(bound = "")]
struct SecondOpening<E: Engine, EE: EvaluationEngineTrait<E>> {
    eval: E::Scalar,
    arg: EE::EvaluationArgument,
}

/// A compressed proof of n folds.
#[derive(Clone, Serialize, Deserialize)]
#[serde(bound = "")]
pub struct CompressedProof<E1, E2, S1, S2, EE1>
where
    E1: Engine<Base = <E2 as Engine>::Scalar> + 'static,
    E2: Engine<Base = <E1 as Engine>::Scalar> + 'static,
    S1: Compressor<E1>,
    S2: Compressor<E2>,
    EE1: EvaluationEngineTrait<E1> + BoundsDegree,
{
    // z_n is the verifier's (what it expects), not the proof's
    chain: Vec<E2::Scalar>,
    run1: RunningInstance<E1>,
    run2: RunningInstance<E2>,
    last2: FoldInstance<E2>,
    blind1: E1::Scalar,
    blind2: E2::Scalar,
    t_last2: Commitment<E2>,
    rand2: RunningInstance<E2>,
    t_rand2: Commitment<E2>,
    rand1: RunningInstance<E1>,
    t_rand1: Commitment<E1>,
    blinds1: Vec<E1::Scalar>,
    r_e1: E1::Scalar,
    blind2_w: E2::Scalar,
    r_e2: E2::Scalar,
    snark1: S1::Proof,
    snark2: S2::Proof,
    // one per part after W₁
    openings: Vec<SecondOpening<E1, EE1>>,
}

/// Compression keys for the parameters.
#[allow(clippy::type_complexity)]
pub fn setup<E1, E2, S1, S2, EE1>(
    pp: &Params<E1, E2>,
) -> Result<(ProverKey<E1, E2, S1, S2, EE1>, VerifierKey<E1, E2, S1, S2, EE1>)>
where
    E1: Engine<Base = <E2 as Engine>::Scalar> + 'static,
    E2: Engine<Base = <E1 as Engine>::Scalar> + 'static,
    S1: Compressor<E1>,
    S2: Compressor<E2>,
    EE1: EvaluationEngineTrait<E1> + BoundsDegree,
{
    let (pk1, vk1) = S1::keys(&pp.ck1, &pp.shape1, &pp.units1.rows)?;
    let (pk2, vk2) = S2::keys(&pp.ck2, &pp.shape2, &Default::default())?;
    let (ee_pk, ee_vk) = if pp.layout1.split() {
        let (p, v) = EE1::setup(&pp.ck1)?;
        (Some(p), Some(v))
    } else {
        (None, None)
    };
    Ok((
        ProverKey { pk1, pk2, ee_pk },
        VerifierKey {
            cfg: pp.cfg,
            layout1: pp.layout1,
            digest: pp.digest,
            vk1,
            vk2,
            ee_vk,
            dk1: E1::CE::derand_key(&pp.ck1),
            dk2: E2::CE::derand_key(&pp.ck2),
            ro: RoSet::default(),
        },
    ))
}

/// A random satisfying running instance of a shape (every value random,
/// E what makes it satisfied), committed as `layout` splits W.
fn random_instance<E: Engine + 'static>(
    ck: &crate::instance::CommitmentKey<E>,
    shape: &R1CSShape<E>,
    layout: &WitnessLayout,
) -> Result<(RunningInstance<E>, RunningWitness<E>)> {
    let (nv, ni) = (shape.num_vars(), shape.num_io());
    let z: Vec<E::Scalar> = (0..nv + 1 + ni)
        .into_par_iter()
        .map(|_| E::Scalar::random(&mut OsRng))
        .collect();
    let u = z[nv];
    let (az, bz, cz) = shape.multiply_vec(&z)?;
    let e: Vec<E::Scalar> = (0..az.len())
        .into_par_iter()
        .map(|k| az[k] * bz[k] - u * cz[k])
        .collect();
    let blinds: Vec<E::Scalar> = (0..parts(layout))
        .map(|_| E::Scalar::random(&mut OsRng))
        .collect();
    let r_e = E::Scalar::random(&mut OsRng);
    let w = z[..nv].to_vec();
    let comm_w = commit_witness::<E>(ck, layout, &w, &blinds)?;
    let comm_e = crate::commit::commit_on::<E>(ck, 0, &e, &r_e);
    Ok((
        RunningInstance {
            comm_w,
            comm_e,
            u,
            x: z[nv + 1..].to_vec(),
        },
        RunningWitness { w, blinds, e, r_e },
    ))
}

/// The transcript that fixes the point part `k` (1: W₂, 2: W₃) is opened at.
fn second_point<E: Engine>(
    digest: &E::Scalar,
    k: usize,
    comm: &Commitment<E>,
    vars: usize,
) -> Result<(E::TE, Vec<E::Scalar>)> {
    let (label, part): (&'static [u8], &'static [u8]) = if k == 1 {
        (b"zkstep-fold W2", b"W2")
    } else {
        (b"zkstep-fold W3", b"W3")
    };
    let mut tr = E::TE::new(label);
    tr.absorb(b"pp", digest);
    tr.absorb(part, comm);
    let point = (0..vars)
        .map(|_| tr.squeeze(b"x"))
        .collect::<std::result::Result<Vec<_>, _>>()?;
    Ok((tr, point))
}

/// The random running instances (and their witnesses) a compression folds
/// into the IVC's last ones. They depend on the parameters alone, so a
/// prover may draw them while it folds ([`Masks::draw`], then
/// [`CompressedProof::prove_masked`]); each is used once, by value.
pub struct Masks<E1: Engine, E2: Engine> {
    rand1: RunningInstance<E1>,
    rand1_w: RunningWitness<E1>,
    rand2: RunningInstance<E2>,
    rand2_w: RunningWitness<E2>,
}

/// The openings of the masked comm_W₂ (and comm_W₃) on their prefixes.
fn open_later_parts<E1: Engine, EE1: EvaluationEngineTrait<E1> + BoundsDegree>(
    key: (&crate::instance::CommitmentKey<E1>, &WitnessLayout, &E1::Scalar),
    ee_pk: Option<&EE1::ProverKey>,
    dk1: &DerandKey<E1>,
    n1: &RunningInstance<E1>,
    n1_w: &RunningWitness<E1>,
) -> Result<Vec<SecondOpening<E1, EE1>>> {
    let (ck1, layout1, digest) = key;
    let mut openings = vec![];
    for k in 1..layout1.parts {
        // the part's values on its columns, zero on the prefix before them
        let cols = layout1.part_columns(k);
        let mut values = n1_w.w[..cols.end].to_vec();
        values[..cols.start].iter_mut().for_each(|v| *v = E1::Scalar::ZERO);
        let comm = E1::CE::derandomize(dk1, &n1.comm_w[k], &n1_w.blinds[k]);
        let (mut tr, point) = second_point::<E1>(digest, k, &comm, log2(cols.end))?;
        let eval = MultilinearPolynomial::evaluate_with(&values, &point);
        tr.absorb(b"v", &eval);
        let ee_pk =
            ee_pk.ok_or_else(|| FoldError::Invalid("a prover key without the opening's key".into()))?;
        let arg = EE1::prove(ck1, ee_pk, &mut tr, &comm, &values, &point, &eval)?;
        openings.push(SecondOpening { eval, arg });
    }
    Ok(openings)
}

impl<E1, E2> Masks<E1, E2>
where
    E1: Engine<Base = <E2 as Engine>::Scalar> + 'static,
    E2: Engine<Base = <E1 as Engine>::Scalar> + 'static,
{
    /// Draw the random instances a compression folds in (step 2 of the
    /// module header), the primary's and the secondary's side by side.
    pub fn draw(pp: &Params<E1, E2>) -> Result<Self> {
        let layout2 = plain_layout(pp.shape2.num_vars());
        let (r1, r2) = rayon::join(
            || random_instance(&pp.ck1, &pp.shape1, &pp.layout1),
            || random_instance(&pp.ck2, &pp.shape2, &layout2),
        );
        let (rand1, rand1_w) = r1?;
        let (rand2, rand2_w) = r2?;
        Ok(Masks { rand1, rand1_w, rand2, rand2_w })
    }
}

fn log2(m: usize) -> usize {
    m.trailing_zeros() as usize
}

impl<E1, E2, S1, S2, EE1> CompressedProof<E1, E2, S1, S2, EE1>
where
    E1: Engine<Base = <E2 as Engine>::Scalar> + 'static,
    E2: Engine<Base = <E1 as Engine>::Scalar> + 'static,
    S1: Compressor<E1>,
    S2: Compressor<E2>,
    EE1: EvaluationEngineTrait<E1> + BoundsDegree,
{
    /// Compress a finished IVC.
    pub fn prove(
        pp: &Params<E1, E2>,
        pk: &ProverKey<E1, E2, S1, S2, EE1>,
        ivc: &Ivc<E1, E2>,
    ) -> Result<Self> {
        Self::prove_masked(pp, pk, ivc, Masks::draw(pp)?)
    }

    /// Compress a finished IVC with masks drawn beforehand under the same
    /// parameters (fresh ones: a mask used twice would leak the difference
    /// of two witnesses, which is why it is taken by value).
    pub fn prove_masked(
        pp: &Params<E1, E2>,
        pk: &ProverKey<E1, E2, S1, S2, EE1>,
        ivc: &Ivc<E1, E2>,
        masks: Masks<E1, E2>,
    ) -> Result<Self> {
        if ivc.i == 0 {
            return Err(FoldError::Invalid("an IVC of no folds".into()));
        }
        let Masks { rand1, rand1_w, rand2, rand2_w } = masks;
        if rand1_w.w.len() != pp.shape1.num_vars()
            || rand1_w.e.len() != pp.shape1.num_cons()
            || rand2_w.w.len() != pp.shape2.num_vars()
            || rand2_w.e.len() != pp.shape2.num_cons()
        {
            return Err(FoldError::Invalid("masks drawn under other parameters".into()));
        }
        let (t_last2, f2, f2_w) = nifs::fold(
            &pp.ck2,
            pp.ro.n2(),
            pp.digest,
            &pp.shape2,
            &ivc.run2,
            &ivc.run2_w,
            &ivc.last2,
            &ivc.last2_w,
        )?;
        let (t_rand2, n2, n2_w) = nifs::fold_relaxed(
            &pp.ck2,
            pp.ro.n2(),
            pp.digest,
            &pp.shape2,
            &f2,
            &f2_w,
            &rand2,
            &rand2_w,
        )?;
        let (t_rand1, n1, n1_w) = nifs::fold_relaxed(
            &pp.ck1,
            pp.ro.n1(),
            pp.digest_base(),
            &pp.shape1,
            &ivc.run1,
            &ivc.run1_w,
            &rand1,
            &rand1_w,
        )?;
        let dk1 = E1::CE::derand_key(&pp.ck1);
        let dk2 = E2::CE::derand_key(&pp.ck2);
        let u1 = derandomize::<E1>(&dk1, &n1, &n1_w.blinds, &n1_w.r_e)?;
        let u2 = derandomize::<E2>(&dk2, &n2, &n2_w.blinds, &n2_w.r_e)?;
        let w1 = n1_w.to_nova(&pp.shape1)?.derandomize().0;
        let w2 = n2_w.to_nova(&pp.shape2)?.derandomize().0;
        // the openings and the two SNARKs are independent: side by side, so
        // the sequential parts of each (transcripts, sum-check rounds) leave
        // no core idle
        let ((openings, snark1), snark2) = rayon::join(
            || {
                rayon::join(
                    || {
                        let key = (&pp.ck1, &pp.layout1, &pp.digest);
                        open_later_parts::<E1, EE1>(key, pk.ee_pk.as_ref(), &dk1, &n1, &n1_w)
                    },
                    || S1::prove(&pp.ck1, &pk.pk1, &pp.shape1, &u1, &w1),
                )
            },
            || S2::prove(&pp.ck2, &pk.pk2, &pp.shape2, &u2, &w2),
        );
        Ok(CompressedProof {
            chain: ivc.chain.clone(),
            run1: ivc.run1.clone(),
            run2: ivc.run2.clone(),
            last2: ivc.last2.clone(),
            blind1: ivc.blind1,
            blind2: ivc.blind2,
            t_last2,
            rand2,
            t_rand2,
            rand1,
            t_rand1,
            blinds1: n1_w.blinds,
            r_e1: n1_w.r_e,
            blind2_w: n2_w.blinds[0],
            r_e2: n2_w.r_e,
            snark1: snark1?.into_proof()?,
            snark2: snark2?.into_proof()?,
            openings: openings?,
        })
    }

    /// A test's edit: the k-th later part's claimed evaluation one more.
    #[cfg(test)]
    pub(crate) fn shift_opening(&mut self, k: usize) {
        self.openings[k].eval += E1::Scalar::ONE;
    }

    /// Verify `num_steps` folds from the step's `z0` to its `zn`. The proof
    /// does not carry z_n: the verifier says which last state it accepts
    /// (its own, from the statement), so the proof is smaller by a state.
    pub fn verify(
        &self,
        vk: &VerifierKey<E1, E2, S1, S2, EE1>,
        num_steps: u64,
        z0: &[E1::Scalar],
        zn: &[E1::Scalar],
    ) -> Result<()> {
        let states = || Ok::<_, FoldError>((z0.to_vec(), zn.to_vec()));
        self.verify_with(vk, num_steps, states, || Ok(())).and_then(|r| r)
    }

    /// [`CompressedProof::verify`] with the states from `states`, which runs
    /// beside the proof's own checks (the SNARKs and openings need nothing
    /// of the states; a verifier's states may need work of their own), and
    /// `beside`, a check of the statement that the states' values do not
    /// wait for (an opening of the checkpoints at the values `states`
    /// takes from it), run beside the states and the state hashes. A proof
    /// of no folds or of the wrong shape is refused first, before either
    /// runs; then `Err(x)` is `beside`'s error, else `states`' error, both
    /// reported before the SNARKs' verdict, and `Ok(r)` the proof's verdict.
    pub fn verify_with<X: Send>(
        &self,
        vk: &VerifierKey<E1, E2, S1, S2, EE1>,
        num_steps: u64,
        states: impl FnOnce() -> std::result::Result<(Vec<E1::Scalar>, Vec<E1::Scalar>), X> + Send,
        beside: impl FnOnce() -> std::result::Result<(), X> + Send,
    ) -> std::result::Result<Result<()>, X> {
        let cfg = vk.cfg;
        if num_steps == 0 {
            return Ok(Err(FoldError::Rejected("a proof of no folds".into())));
        }
        // every instance's size before the two sides start (neither then
        // relies on the other's checks)
        let sized = |u: &RunningInstance<_>, parts: usize, io: usize| u.comm_w.len() == parts && u.x.len() == io;
        if self.blinds1.len() != parts(&vk.layout1)
            || !sized(&self.rand1, cfg.primary_parts(), cfg.primary_io())
            || !sized(&self.run1, cfg.primary_parts(), cfg.primary_io())
            || self.rand2.comm_w.len() != 1
            || self.rand2.x.len() != 2
            || self.run2.comm_w.len() != 1
            || self.run2.x.len() != 2
            || self.last2.comm_w.len() != 1
            || self.last2.x.len() != 2
            || self.chain.len() != cfg.chain_len()
            || self.openings.len() != vk.layout1.parts - 1
        {
            return Ok(Err(FoldError::Rejected("a proof of the wrong shape".into())));
        }
        let view = View {
            ro: &vk.ro,
            cfg,
            digest: vk.digest,
        };
        // the states' checks: the state hashes the last instances carry.
        // They come last on a thread (after the secondary's SNARK), so
        // their parts are tasks an idle thread can take: `beside`, the
        // run's challenges, each side's state hash
        let hashes = || -> std::result::Result<Result<()>, X> {
            let (states, ch) = rayon::join(states, || derive_run(&view, &self.chain));
            let (z0, zn) = states?;
            if z0.len() != cfg.arity || zn.len() != cfg.arity {
                return Ok(Err(FoldError::Rejected(format!(
                    "{num_steps} folds from {} slots, the key's step circuit has {}",
                    z0.len(),
                    cfg.arity
                ))));
            }
            // the challenges of a PerRun IVC come from the chains' ends
            let mut z0f = z0;
            z0f.extend(ch.iter().copied());
            let mut znf = zn;
            znf.extend(ch);
            let st = FinalState {
                zn: &znf,
                chain: &self.chain,
                run1: &self.run1,
                run2: &self.run2,
                last2: &self.last2,
                blind1: self.blind1,
                blind2: self.blind2,
            };
            Ok(check_final(&view, num_steps, &z0f, &st))
        };
        let ends = || -> std::result::Result<Result<()>, X> {
            let (hashes, beside) = rayon::join(hashes, beside);
            beside?;
            hashes
        };
        let (proof, ends) = self.check_snarks(vk, &view, ends);
        Ok(ends?.and(proof))
    }

    /// The checks that read the proof alone: the last folds, the two
    /// SNARKs and the openings of the later parts; `last` (the states'
    /// checks) beside them, started after them.
    fn check_snarks<T: Send>(
        &self,
        vk: &VerifierKey<E1, E2, S1, S2, EE1>,
        view: &View<'_, E1, E2>,
        last: impl FnOnce() -> T + Send,
    ) -> (Result<()>, T) {
        // the two sides share nothing: the primary's folds, SNARK and
        // later-part openings beside the secondary's folds and SNARK (its
        // IPA one long MSM). rayon runs a join's first closure where it is
        // called and lets an idle thread take the second: the two SNARKs
        // start at once, the openings and `last` wait for a free thread.
        let secondary = || -> Result<()> {
            let f2 = nifs::verify_fold(view.ro.n2(), vk.digest, &self.run2, &self.last2, &self.t_last2);
            let n2 = nifs::verify_relaxed(view.ro.n2(), vk.digest, &f2, &self.rand2, &self.t_rand2);
            let u2 = derandomize::<E2>(&vk.dk2, &n2, &[self.blind2_w], &self.r_e2)?;
            S2::check(&self.snark2, &vk.vk2, &u2)
                .map_err(|e| FoldError::Rejected(format!("the secondary's SNARK: {e}")))
        };
        let primary = || -> Result<()> {
            let n1 = nifs::verify_relaxed(
                view.ro.n1(),
                view.digest_base(),
                &self.run1,
                &self.rand1,
                &self.t_rand1,
            );
            let u1 = derandomize::<E1>(&vk.dk1, &n1, &self.blinds1, &self.r_e1)?;
            let opening = |(i, s): (usize, &SecondOpening<E1, EE1>)| -> Result<()> {
                let k = i + 1;
                let end = vk.layout1.part_columns(k).end;
                let comm = E1::CE::derandomize(&vk.dk1, &n1.comm_w[k], &self.blinds1[k]);
                let (mut tr, point) = second_point::<E1>(&vk.digest, k, &comm, log2(end))?;
                tr.absorb(b"v", &s.eval);
                let ee_vk = vk
                    .ee_vk
                    .as_ref()
                    .ok_or_else(|| FoldError::Rejected("a verifying key without the opening's key".into()))?;
                EE1::verify(ee_vk, &mut tr, &comm, &point, &s.eval, &s.arg)
                    .map_err(|e| FoldError::Rejected(format!("the opening of comm_W{}: {e}", k + 1)))
            };
            // each part's opening a task of its own (an idle thread takes
            // one); the first failure in the parts' order is the one reported
            let openings = || -> Result<()> {
                let each: Vec<Result<()>> = self.openings.par_iter().enumerate().map(opening).collect();
                each.into_iter().collect()
            };
            let (r1, ro) = rayon::join(|| S1::check(&self.snark1, &vk.vk1, &u1), openings);
            ro?;
            r1.map_err(|e| FoldError::Rejected(format!("the primary's SNARK: {e}")))
        };
        // each check is independent of the others' outcome; the primary's
        // verdict is reported first
        let (r1, (r2, t)) = rayon::join(primary, || rayon::join(secondary, last));
        (r1.and(r2), t)
    }
}

/// nova-snark's relaxed instance with the blinds taken out of its
/// commitments (what Spartan proves).
fn derandomize<E: Engine + 'static>(
    dk: &DerandKey<E>,
    u: &RunningInstance<E>,
    blinds: &[E::Scalar],
    r_e: &E::Scalar,
) -> Result<nova_snark::r1cs::RelaxedR1CSInstance<E>> {
    let r_w = blinds.iter().fold(E::Scalar::ZERO, |a, b| a + b);
    Ok(u.to_nova()?.derandomize(dk, &r_w, r_e))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rows::{RowCommitment, ROWS};
    use crate::tests::common::*;
    use crate::{ChallengeMode, OnePhase};

    /// One row of the secondary's commitments changed in a compressed
    /// proof — the running instance's W or E, the last instance's W, the
    /// last fold's T — is refused, whichever row.
    #[test]
    fn an_edited_row_of_the_secondarys_commitments_is_rejected() {
        let c = OnePhase(Cubic);
        let pp = params(&c, ChallengeMode::None);
        let (pk, vk) = setup::<E1, E2, S1, S2, EE1>(&pp).unwrap();
        let z0 = vec![F::from(7), F::from(1)];
        let mut ivc = Ivc::new(&pp, &z0, vec![]).unwrap();
        for _ in 0..2 {
            ivc.prove_step(&pp, &c, None).unwrap();
        }
        let proof = Proof::prove(&pp, &pk, &ivc).unwrap();
        let zn = ivc.verify(&pp, 2, &z0).unwrap();
        proof.verify(&vk, 2, &z0, &zn).unwrap();
        // a point that is not the identity, added to one row
        let shift = proof.rand2.comm_w[0].rows()[0];
        assert_ne!(shift, Default::default());
        let edit = |c: &mut RowCommitment, j: usize| {
            let mut rows = *c.rows();
            rows[j] = rows[j] + shift;
            *c = RowCommitment::from_rows(rows);
        };
        // a fresh copy through the proof's encoding (the SNARKs are not Clone)
        let bytes = postcard::to_stdvec(&proof).unwrap();
        for j in 0..ROWS {
            for which in ["the running W", "the running E", "the last W", "the last T"] {
                let mut p: Proof = postcard::from_bytes(&bytes).unwrap();
                match which {
                    "the running W" => edit(&mut p.run2.comm_w[0], j),
                    "the running E" => edit(&mut p.run2.comm_e, j),
                    "the last W" => edit(&mut p.last2.comm_w[0], j),
                    _ => edit(&mut p.t_last2, j),
                }
                assert!(p.verify(&vk, 2, &z0, &zn).is_err(), "row {j} of {which} edited");
            }
        }
    }
}
