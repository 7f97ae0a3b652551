//! Public parameters: the two circuits' R1CS shapes (synthesised once from
//! the step circuit's shape), the primary's witness layout, both commitment
//! keys, and a digest that every fold hashes, so that a proof is bound to
//! these circuits.

use crate::augmented::{synthesize_primary, synthesize_secondary, Config};
use crate::cs::{ShapeRecorder, Units, WitnessLayout};
use crate::error::{FoldError, Result};
use crate::hash::HASH_BITS;
use crate::instance::CommitmentKey;
use crate::step::{ChallengeMode, StepCircuit};
use ff::{Field, PrimeField, PrimeFieldBits};
use nova_snark::gadgets::utils::field_switch;
use nova_snark::r1cs::{CommitmentKeyHint, R1CSShape};
use nova_snark::traits::commitment::CommitmentEngineTrait;
use nova_snark::traits::{Engine, ROConstants, ROConstantsCircuit};
use serde::{Deserialize, Serialize};
use sha3::{Digest, Sha3_256};
use std::any::{type_name, Any, TypeId};
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, OnceLock};

/// The Poseidon constants of both curves' ROs, native and in-circuit
/// (deterministic: never stored in keys), from [`shared_constants`]
/// (presets for BN254/Grumpkin, else derived: ≈ 0.2 s each on the
/// development machine), read once a process and shared; the in-circuit
/// ones on first use, so a verifier never makes them.
pub struct RoSet<E1: Engine, E2: Engine> {
    n1: Arc<ROConstants<E1>>,
    n2: Arc<ROConstants<E2>>,
    c1: OnceLock<Arc<ROConstantsCircuit<E1>>>,
    c2: OnceLock<Arc<ROConstantsCircuit<E2>>>,
}

impl<E1: Engine, E2: Engine> RoSet<E1, E2> {
    /// Native, over E1's base field (the secondary's hashes).
    pub fn n1(&self) -> &ROConstants<E1> {
        &self.n1
    }

    /// Native, over E2's base field (the primary's hashes).
    pub fn n2(&self) -> &ROConstants<E2> {
        &self.n2
    }
}

impl<E1: Engine + 'static, E2: Engine + 'static> RoSet<E1, E2> {
    /// In the secondary circuit.
    pub fn c1(&self) -> &ROConstantsCircuit<E1> {
        self.c1.get_or_init(shared_constants)
    }

    /// In the primary circuit.
    pub fn c2(&self) -> &ROConstantsCircuit<E2> {
        self.c2.get_or_init(shared_constants)
    }
}

impl<E1: Engine, E2: Engine> Clone for RoSet<E1, E2> {
    fn clone(&self) -> Self {
        RoSet {
            n1: self.n1.clone(),
            n2: self.n2.clone(),
            c1: self.c1.clone(),
            c2: self.c2.clone(),
        }
    }
}

impl<E1: Engine + 'static, E2: Engine + 'static> Default for RoSet<E1, E2> {
    fn default() -> Self {
        RoSet {
            n1: shared_constants::<ROConstants<E1>>(),
            n2: shared_constants::<ROConstants<E2>>(),
            c1: OnceLock::new(),
            c2: OnceLock::new(),
        }
    }
}

/// nova-snark's native RO constants over BN254's two fields, as its serde
/// writes them (`fold/presets/`; `native_constants_presets_are_the_derived_ones`
/// checks them against a fresh derivation, `ZKSTEP_WRITE_PRESETS=1` rewrites them).
const PRESET_FR: &[u8] = include_bytes!("../presets/ro-bn254-fr.bin");
const PRESET_FQ: &[u8] = include_bytes!("../presets/ro-bn254-fq.bin");

fn preset(name: &str) -> Option<&'static [u8]> {
    use nova_snark::provider::bn256_grumpkin::bn256::{Base, Scalar};
    use nova_snark::provider::poseidon::PoseidonConstantsCircuit;
    if name == type_name::<PoseidonConstantsCircuit<Scalar>>() {
        Some(PRESET_FR)
    } else if name == type_name::<PoseidonConstantsCircuit<Base>>() {
        Some(PRESET_FQ)
    } else {
        None
    }
}

/// RO constants of type `T` (native or in-circuit: nova-snark uses one type
/// for both): read from a preset when one is for `T`
/// (≈ 1 ms), derived otherwise (≈ 0.2 s: round constants, MDS matrices and
/// their sparse factors). Reading them is what keeps a fresh verifier fast.
pub fn native_constants<T: Default + for<'de> Deserialize<'de>>() -> T {
    // by name: the RO's constants type is an associated type, not known 'static
    preset(type_name::<T>())
        .and_then(|b| postcard::from_bytes(b).ok())
        .unwrap_or_default()
}

/// [`native_constants`] of type `T`, read once a process and shared (a
/// verifier's key, its proof and a prover's parameters all hold them; a
/// second reader waits for the first). Why: reading a preset is ≈ 1 ms of
/// a fresh verification's serial start, which `zkstep-verify` now does on a
/// thread of its own beside reading the files.
pub fn shared_constants<T>() -> Arc<T>
where
    T: Default + for<'de> Deserialize<'de> + Send + Sync + 'static,
{
    type Shared = Mutex<BTreeMap<TypeId, Arc<OnceLock<Arc<dyn Any + Send + Sync>>>>>;
    static SHARED: OnceLock<Shared> = OnceLock::new();
    let slot = {
        let mut map = SHARED.get_or_init(Default::default).lock().unwrap_or_else(|e| e.into_inner());
        map.entry(TypeId::of::<T>()).or_default().clone()
    };
    let any = slot.get_or_init(|| Arc::new(native_constants::<T>()) as Arc<dyn Any + Send + Sync>);
    // the slot of T's TypeId holds a T
    any.clone().downcast::<T>().unwrap_or_else(|_| Arc::new(native_constants::<T>()))
}

/// What verification reads of the parameters (the verifier key has it too).
pub(crate) struct View<'a, E1: Engine, E2: Engine> {
    pub ro: &'a RoSet<E1, E2>,
    pub cfg: Config,
    pub digest: E1::Scalar,
}

impl<E1, E2> View<'_, E1, E2>
where
    E1: Engine<Base = <E2 as Engine>::Scalar> + 'static,
    E2: Engine<Base = <E1 as Engine>::Scalar> + 'static,
{
    /// The digest as a number of the other field.
    pub fn digest_base(&self) -> E1::Base {
        field_switch::<E1::Scalar, E1::Base>(self.digest)
    }
}

/// Sizes of the layer's circuits, for reports: the primary's own part
/// (without the step circuit) and the secondary.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct CircuitSizes {
    /// Constraints of the primary circuit (step circuit included).
    pub primary_constraints: usize,
    /// Its private variables.
    pub primary_variables: usize,
    /// Its matrix non-zeros.
    pub primary_nonzeros: usize,
    /// Variables after its W₁ (W₂, and W₃ with two rounds) before padding
    /// (0 without a split layout).
    pub primary_second: usize,
    /// Constraints of the secondary circuit.
    pub secondary_constraints: usize,
    /// Its matrix non-zeros.
    pub secondary_nonzeros: usize,
}

/// The public parameters of an IVC over the cycle (E1, E2).
#[derive(Serialize, Deserialize)]
#[serde(bound = "")]
pub struct Params<E1, E2>
where
    E1: Engine<Base = <E2 as Engine>::Scalar> + 'static,
    E2: Engine<Base = <E1 as Engine>::Scalar> + 'static,
{
    pub(crate) cfg: Config,
    pub(crate) shape1: R1CSShape<E1>,
    pub(crate) layout1: WitnessLayout,
    /// The primary's units: its rows' groups (how its verifying key is
    /// written) and where its parts' variables sit.
    pub(crate) units1: Units,
    pub(crate) shape2: R1CSShape<E2>,
    #[serde(serialize_with = "crate::rawkey::ck::serialize::<E1, _>")]
    #[serde(deserialize_with = "crate::rawkey::ck::deserialize::<E1, _>")]
    pub(crate) ck1: CommitmentKey<E1>,
    #[serde(serialize_with = "crate::rawkey::ck::serialize::<E2, _>")]
    #[serde(deserialize_with = "crate::rawkey::ck::deserialize::<E2, _>")]
    pub(crate) ck2: CommitmentKey<E2>,
    pub(crate) digest: E1::Scalar,
    #[serde(skip)]
    pub(crate) ro: RoSet<E1, E2>,
}

/// The two circuits' shapes for a step circuit, the primary's rows and
/// variables in their recorded order.
pub fn shapes<E1, E2, C>(
    cfg: &Config,
    step: &C,
) -> Result<(R1CSShape<E1>, WitnessLayout, R1CSShape<E2>)>
where
    E1: Engine<Base = <E2 as Engine>::Scalar> + 'static,
    E2: Engine<Base = <E1 as Engine>::Scalar> + 'static,
    C: StepCircuit<E1::Scalar>,
{
    shapes_of(cfg, step, false).map(|(s1, layout, _, s2)| (s1, layout, s2))
}

/// [`shapes`] with the primary's units ([`crate::in_unit`]).
pub fn grouped_shapes<E1, E2, C>(
    cfg: &Config,
    step: &C,
) -> Result<(R1CSShape<E1>, WitnessLayout, Units, R1CSShape<E2>)>
where
    E1: Engine<Base = <E2 as Engine>::Scalar> + 'static,
    E2: Engine<Base = <E1 as Engine>::Scalar> + 'static,
    C: StepCircuit<E1::Scalar>,
{
    shapes_of(cfg, step, true)
}

/// Both shapes, the primary's units laid out where `group` says.
fn shapes_of<E1, E2, C>(
    cfg: &Config,
    step: &C,
    group: bool,
) -> Result<(R1CSShape<E1>, WitnessLayout, Units, R1CSShape<E2>)>
where
    E1: Engine<Base = <E2 as Engine>::Scalar> + 'static,
    E2: Engine<Base = <E1 as Engine>::Scalar> + 'static,
    C: StepCircuit<E1::Scalar>,
{
    let ro = RoSet::<E1, E2>::default();
    let cs = record_primary(&ro, cfg, step, ShapeRecorder::new(cfg.primary_parts()))?;
    let (s1, layout, units) = match group {
        true => cs.into_grouped_shape::<E1>()?,
        false => cs.into_shape::<E1>().map(|(s, l)| (s, l, Units::default()))?,
    };
    let mut cs = ShapeRecorder::<E2::Scalar>::new(1);
    synthesize_secondary::<E1, _>(&mut cs, cfg, ro.c1(), None)?;
    let (s2, _) = cs.into_shape::<E2>()?;
    Ok((s1, layout, units, s2))
}

/// The primary's witness columns, each named by its variable's namespace
/// path (tests that report a column by name).
#[cfg(test)]
pub(crate) fn primary_column_names<E1, E2, C>(cfg: &Config, step: &C) -> Result<Vec<String>>
where
    E1: Engine<Base = <E2 as Engine>::Scalar> + 'static,
    E2: Engine<Base = <E1 as Engine>::Scalar> + 'static,
    C: StepCircuit<E1::Scalar>,
{
    let cs = record_primary(&RoSet::<E1, E2>::default(), cfg, step, ShapeRecorder::naming(cfg.primary_parts()))?;
    Ok(cs.column_names())
}

/// The primary circuit recorded into `cs`.
fn record_primary<E1, E2, C>(
    ro: &RoSet<E1, E2>,
    cfg: &Config,
    step: &C,
    mut cs: ShapeRecorder<E1::Scalar>,
) -> Result<ShapeRecorder<E1::Scalar>>
where
    E1: Engine<Base = <E2 as Engine>::Scalar> + 'static,
    E2: Engine<Base = <E1 as Engine>::Scalar> + 'static,
    C: StepCircuit<E1::Scalar>,
{
    synthesize_primary::<E2, C, _>(&mut cs, cfg, ro.c2(), step, None)?;
    Ok(cs)
}

/// A step circuit that passes its state through (to measure the layer
/// alone): `arity` slots, `challenges` challenges, the last `late` of them
/// in a second round.
pub struct Pass(pub usize, pub usize, pub usize);

impl<F: PrimeField> StepCircuit<F> for Pass {
    type Carry = Vec<nova_snark::frontend::num::AllocatedNum<F>>;

    fn arity(&self) -> usize {
        self.0
    }

    fn num_challenges(&self) -> usize {
        self.1
    }

    fn num_late_challenges(&self) -> usize {
        self.2
    }

    fn first<CS: nova_snark::frontend::ConstraintSystem<F>>(
        &self,
        _: &mut CS,
        z: &[nova_snark::frontend::num::AllocatedNum<F>],
    ) -> std::result::Result<Self::Carry, nova_snark::frontend::SynthesisError> {
        Ok(z.to_vec())
    }

    fn second<CS: nova_snark::frontend::ConstraintSystem<F>>(
        &self,
        _: &mut CS,
        carry: Self::Carry,
        _: &[nova_snark::frontend::num::AllocatedNum<F>],
    ) -> std::result::Result<Vec<nova_snark::frontend::num::AllocatedNum<F>>, nova_snark::frontend::SynthesisError>
    {
        Ok(carry)
    }
}

/// The layer's own circuits around a step circuit of `arity` slots that
/// draws `challenges` challenges in `mode`: what every fold pays on top of
/// the step circuit.
pub fn layer_sizes<E1, E2>(arity: usize, challenges: usize, mode: ChallengeMode) -> Result<CircuitSizes>
where
    E1: Engine<Base = <E2 as Engine>::Scalar> + 'static,
    E2: Engine<Base = <E1 as Engine>::Scalar> + 'static,
{
    layer_sizes_by::<E1, E2, _>(arity, challenges, mode, shapes::<E1, E2, Pass>)
}

/// [`layer_sizes`] with the shapes `make` gives (the CycleFold shape's:
/// `crate::cfivc::layer_sizes`).
pub(crate) fn layer_sizes_by<E1, E2, M>(arity: usize, challenges: usize, mode: ChallengeMode, make: M) -> Result<CircuitSizes>
where
    E1: Engine<Base = <E2 as Engine>::Scalar> + 'static,
    E2: Engine<Base = <E1 as Engine>::Scalar> + 'static,
    M: FnOnce(&Config, &Pass) -> Result<(R1CSShape<E1>, WitnessLayout, R1CSShape<E2>)>,
{
    let late = usize::from(mode == ChallengeMode::PerRunTwice);
    let c = Pass(arity, challenges, late);
    let cfg = config::<E1::Scalar, _>(&c, mode)?;
    let (s1, l, s2) = make(&cfg, &c)?;
    Ok(CircuitSizes {
        primary_second: l.second + l.third,
        ..sizes_of(&s1, &s2)
    })
}

fn nonzeros<E: Engine>(s: &R1CSShape<E>) -> usize {
    s.A().len() + s.B().len() + s.C().len()
}

fn sizes_of<E1: Engine + 'static, E2: Engine>(s1: &R1CSShape<E1>, s2: &R1CSShape<E2>) -> CircuitSizes {
    CircuitSizes {
        primary_constraints: s1.num_cons(),
        primary_variables: s1.num_vars(),
        primary_nonzeros: nonzeros(s1),
        primary_second: 0,
        secondary_constraints: s2.num_cons(),
        secondary_nonzeros: nonzeros(s2),
    }
}

/// The layer's configuration for a step circuit and a challenge mode.
pub fn config<F: PrimeField, C: StepCircuit<F>>(step: &C, mode: ChallengeMode) -> Result<Config> {
    let (k, late) = (step.num_challenges(), step.num_late_challenges());
    if (k == 0) != (mode == ChallengeMode::None) {
        return Err(FoldError::Invalid(format!(
            "a step circuit with {k} challenges cannot use challenge mode {mode:?}"
        )));
    }
    // a second round needs challenges in both rounds; a circuit that wants
    // one cannot fold in a mode that draws everything at once
    if (mode == ChallengeMode::PerRunTwice) != (late > 0) || late >= k.max(1) {
        return Err(FoldError::Invalid(format!(
            "a step circuit with {late} of {k} challenges in a second round cannot use challenge mode {mode:?}"
        )));
    }
    Ok(Config {
        arity: step.arity(),
        challenges: k,
        late,
        mode,
    })
}

/// The low `HASH_BITS` bits of `x` (a value both fields hold as the same number).
pub fn truncate<F: PrimeFieldBits>(x: F) -> F {
    let mut v = F::ZERO;
    let mut m = F::ONE;
    for b in x.to_le_bits().into_iter().take(HASH_BITS) {
        if b {
            v += m;
        }
        m = m.double();
    }
    v
}

fn digest_of<E1, E2>(cfg: &Config, s1: &R1CSShape<E1>, l: &WitnessLayout, s2: &R1CSShape<E2>) -> E1::Scalar
where
    E1: Engine,
    E2: Engine,
{
    let mut h = Sha3_256::new();
    h.update(b"zkstep-fold params v2");
    for v in [
        cfg.arity,
        cfg.challenges,
        cfg.late,
        cfg.mode as usize,
        l.parts,
        l.first,
        l.second,
        l.third,
    ] {
        h.update((v as u64).to_le_bytes());
    }
    h.update(s1.digest().to_repr());
    h.update(s2.digest().to_repr());
    let bytes = h.finalize();
    // 256 bits read little-endian into the field, then cut to 250 bits
    let mut x = E1::Scalar::ZERO;
    let mut m = E1::Scalar::ONE;
    for byte in bytes.iter() {
        for k in 0..8 {
            if byte >> k & 1 == 1 {
                x += m;
            }
            m = m.double();
        }
    }
    truncate(x)
}

/// How many values an engine's commitment key commits: its `commit`
/// panics past that (nova-snark's Pedersen and HyperKZG assert it).
pub trait KeyCapacity: Engine {
    /// The longest vector `ck` commits.
    fn capacity(ck: &CommitmentKey<Self>) -> usize;
}

impl KeyCapacity for nova_snark::provider::Bn256EngineKZG {
    fn capacity(ck: &CommitmentKey<Self>) -> usize {
        nova_snark::traits::commitment::Len::length(ck)
    }
}

impl KeyCapacity for nova_snark::provider::GrumpkinEngine {
    fn capacity(ck: &CommitmentKey<Self>) -> usize {
        nova_snark::traits::commitment::Len::length(ck)
    }
}

impl KeyCapacity for crate::rows::GrumpkinRows {
    fn capacity(ck: &CommitmentKey<Self>) -> usize {
        crate::rows::ROWS * nova_snark::traits::commitment::Len::length(ck)
    }
}

impl<E1, E2> Params<E1, E2>
where
    E1: Engine<Base = <E2 as Engine>::Scalar> + 'static,
    E2: Engine<Base = <E1 as Engine>::Scalar> + 'static,
{
    /// Parameters with fresh commitment keys (HyperKZG needs nova-snark's
    /// `test-utils` feature for a fresh τ: development keys).
    pub fn setup<C: StepCircuit<E1::Scalar>>(
        step: &C,
        mode: ChallengeMode,
        hint1: &CommitmentKeyHint<E1>,
        hint2: &CommitmentKeyHint<E2>,
    ) -> Result<Self> {
        Self::setup_with(step, mode, hint1, hint2, |n| Ok(E1::CE::setup(b"ck", n)?))
    }

    /// Parameters whose primary commitment key `make_ck1` makes, of the
    /// length the primary's shape and `hint1` need (what nova-snark's
    /// `R1CSShape::commitment_key` would ask its engine for).
    pub fn setup_with<C: StepCircuit<E1::Scalar>>(
        step: &C,
        mode: ChallengeMode,
        hint1: &CommitmentKeyHint<E1>,
        hint2: &CommitmentKeyHint<E2>,
        make_ck1: impl FnOnce(usize) -> Result<CommitmentKey<E1>>,
    ) -> Result<Self> {
        let cfg = config(step, mode)?;
        let (s1, layout1, groups1, s2) = grouped_shapes::<E1, E2, C>(&cfg, step)?;
        let ck1 = make_ck1(s1.num_cons().max(s1.num_vars()).max(hint1(&s1)))?;
        let ck2 = R1CSShape::commitment_key(&[&s2], &[hint2])?;
        Ok(Self::assemble(cfg, (s1, layout1, groups1), s2, ck1, ck2))
    }

    /// Parameters whose primary commitment key comes from the
    /// `ppot_pruned_NN.ptau` files of a powers-of-τ ceremony in `dir`.
    pub fn setup_with_ptau_dir<C: StepCircuit<E1::Scalar>>(
        step: &C,
        mode: ChallengeMode,
        hint1: &CommitmentKeyHint<E1>,
        hint2: &CommitmentKeyHint<E2>,
        dir: &std::path::Path,
    ) -> Result<Self>
    where
        E1::GE: nova_snark::provider::traits::PairingGroup,
    {
        let cfg = config(step, mode)?;
        let (s1, layout1, groups1, s2) = grouped_shapes::<E1, E2, C>(&cfg, step)?;
        let ck1 = R1CSShape::commitment_key_from_ptau_dir(&[&s1], &[hint1], dir)?;
        let ck2 = R1CSShape::commitment_key(&[&s2], &[hint2])?;
        Ok(Self::assemble(cfg, (s1, layout1, groups1), s2, ck1, ck2))
    }

    pub(crate) fn assemble(
        cfg: Config,
        (shape1, layout1, units1): (R1CSShape<E1>, WitnessLayout, Units),
        shape2: R1CSShape<E2>,
        ck1: CommitmentKey<E1>,
        ck2: CommitmentKey<E2>,
    ) -> Self {
        let digest = digest_of(&cfg, &shape1, &layout1, &shape2);
        Params {
            cfg,
            shape1,
            layout1,
            units1,
            shape2,
            ck1,
            ck2,
            digest,
            ro: RoSet::default(),
        }
    }

    /// The digest every fold hashes.
    pub fn digest(&self) -> E1::Scalar {
        self.digest
    }

    /// Recompute the digest from the configuration, the witness layout and
    /// both shapes, and compare it with the one read: a key changed after it
    /// was written (a flipped bit in a matrix, an edited count) would make
    /// proofs no verifier with the original key accepts. Costs a hash of
    /// the shapes (nova-snark's shape digests). Also refuses an order of a
    /// part's variables ([`crate::cs::ColumnOrder`]) that is not a
    /// permutation of the part, before any witness is placed by it.
    pub fn check_digest(&self) -> Result<()> {
        if digest_of(&self.cfg, &self.shape1, &self.layout1, &self.shape2) != self.digest {
            return Err(FoldError::Invalid(
                "the parameters' digest is not the one their circuits give: the key was changed after it was written".into(),
            ));
        }
        // where each part's variables sit: a permutation of the part, or none
        let l = &self.layout1;
        self.units1.columns.check([l.first, l.second, l.third])
    }

    /// The digest as a number of the other field.
    pub(crate) fn digest_base(&self) -> E1::Base {
        field_switch::<E1::Scalar, E1::Base>(self.digest)
    }

    pub(crate) fn view(&self) -> View<'_, E1, E2> {
        View {
            ro: &self.ro,
            cfg: self.cfg,
            digest: self.digest,
        }
    }

    /// What the shapes depend on.
    pub fn config(&self) -> Config {
        self.cfg
    }

    /// The primary's witness layout.
    pub fn layout(&self) -> WitnessLayout {
        self.layout1
    }

    /// The primary circuit's shape.
    pub fn primary_shape(&self) -> &R1CSShape<E1> {
        &self.shape1
    }

    /// The secondary circuit's shape.
    pub fn secondary_shape(&self) -> &R1CSShape<E2> {
        &self.shape2
    }

    /// The primary commitment key.
    pub fn primary_key(&self) -> &CommitmentKey<E1> {
        &self.ck1
    }

    /// The secondary commitment key.
    pub fn secondary_key(&self) -> &CommitmentKey<E2> {
        &self.ck2
    }

    /// Refuse commitment keys too short for the shapes (or for the floors
    /// the compression asked for at setup): nova-snark's engines, and ours,
    /// panic on a vector past their key, and a key file can be edited and
    /// re-sealed.
    pub fn check_key_lengths(&self, floor1: usize, floor2: usize) -> Result<()>
    where
        E1: KeyCapacity,
        E2: KeyCapacity,
    {
        let need = |s_cons: usize, s_vars: usize, floor: usize| s_cons.max(s_vars).max(floor);
        let sides = [
            ("primary", E1::capacity(&self.ck1), need(self.shape1.num_cons(), self.shape1.num_vars(), floor1)),
            ("secondary", E2::capacity(&self.ck2), need(self.shape2.num_cons(), self.shape2.num_vars(), floor2)),
        ];
        for (side, has, need) in sides {
            if has < need {
                return Err(FoldError::Invalid(format!(
                    "the {side} commitment key commits {has} values, its circuit needs {need}"
                )));
            }
        }
        Ok(())
    }

    /// Constraints of the primary and the secondary circuit.
    pub fn num_constraints(&self) -> (usize, usize) {
        (self.shape1.num_cons(), self.shape2.num_cons())
    }

    /// Private variables of the primary and the secondary circuit.
    pub fn num_variables(&self) -> (usize, usize) {
        (self.shape1.num_vars(), self.shape2.num_vars())
    }

    /// Sizes of both circuits.
    pub fn sizes(&self) -> CircuitSizes {
        CircuitSizes {
            primary_second: self.layout1.second + self.layout1.third,
            ..sizes_of(&self.shape1, &self.shape2)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use nova_snark::provider::bn256_grumpkin::bn256::{Base, Scalar};
    use nova_snark::provider::poseidon::{PoseidonConstantsCircuit, PoseidonRO};
    use nova_snark::traits::ROTrait;

    /// The preset equals a fresh derivation byte for byte, and the sponge
    /// read from it hashes as the derived one does.
    fn check<F>(file: &str, preset: &[u8])
    where
        F: PrimeField + PrimeFieldBits + Serialize + for<'de> Deserialize<'de>,
    {
        let derived = PoseidonConstantsCircuit::<F>::default();
        let bytes = postcard::to_stdvec(&derived).unwrap();
        if std::env::var_os("ZKSTEP_WRITE_PRESETS").is_some() {
            let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("presets").join(file);
            std::fs::write(path, &bytes).unwrap();
            return;
        }
        assert!(bytes == preset, "{file} is not nova-snark's derivation; rerun with ZKSTEP_WRITE_PRESETS=1");
        let read: PoseidonConstantsCircuit<F> = native_constants();
        for mode in [nova_snark::traits::ROMode::Wide, nova_snark::traits::ROMode::Narrow] {
            let mut a = PoseidonRO::<F>::new_with_mode(derived.clone(), mode);
            let mut b = PoseidonRO::<F>::new_with_mode(read.clone(), mode);
            for k in 0..30u64 {
                a.absorb(F::from(k * k + 7));
                b.absorb(F::from(k * k + 7));
            }
            assert_eq!(a.squeeze(HASH_BITS, false), b.squeeze(HASH_BITS, false));
        }
    }

    #[test]
    fn native_constants_presets_are_the_derived_ones() {
        check::<Scalar>("ro-bn254-fr.bin", PRESET_FR);
        check::<Base>("ro-bn254-fq.bin", PRESET_FQ);
        // the engines zkstep folds over find their presets (by type name)
        type E1 = nova_snark::provider::Bn256EngineKZG;
        type E2 = nova_snark::provider::GrumpkinEngine;
        assert_eq!(preset(type_name::<ROConstants<E1>>()), Some(PRESET_FQ));
        assert_eq!(preset(type_name::<ROConstants<E2>>()), Some(PRESET_FR));
        assert_eq!(preset(type_name::<ROConstantsCircuit<E1>>()), Some(PRESET_FQ));
        assert_eq!(preset(type_name::<ROConstantsCircuit<E2>>()), Some(PRESET_FR));
    }

    /// The secondary's Spartan, and so the verifier's IPA MSM, runs at 2¹³
    /// in both run modes (two rounds: 8,946 constraints before format 27,
    /// whose state hashes are cut where they are used, were 2¹⁴).
    #[test]
    fn the_secondary_fits_2_13_in_both_run_modes() {
        type E1 = nova_snark::provider::Bn256EngineKZG;
        type E2 = nova_snark::provider::GrumpkinEngine;
        for mode in [ChallengeMode::PerRun, ChallengeMode::PerRunTwice] {
            let c = Pass(3, 2, usize::from(mode == ChallengeMode::PerRunTwice));
            let cfg = config::<Scalar, _>(&c, mode).unwrap();
            let (_, _, s2) = shapes::<E1, E2, Pass>(&cfg, &c).unwrap();
            let (n, v) = (s2.num_cons(), s2.num_vars());
            assert!(n <= 1 << 13 && v <= 1 << 13, "{mode:?}: {n} constraints, {v} variables");
        }
    }
}
