//! Constraint systems that know which part of the witness each variable is in.
//!
//! A fold's witness is `W = W₂ ‖ W₁` when its step circuit draws challenges
//! (a *split* layout): W₁ holds what the step circuit allocates before the
//! challenges exist (its first phase), W₂ everything else — the folding
//! layer's own variables and the step circuit's second phase. W₂ comes first,
//! padded to a power of two `m`, so that "a commitment to a vector of length
//! m" (what a polynomial opening of m coefficients proves) means "supported
//! on W₂'s columns"; docs/SOUNDNESS.md says why that is the property the
//! challenge needs. Without challenges the layout is the allocation order.
//!
//! With a second round of challenges (`ChallengeMode::PerRunTwice`) the
//! witness has three parts, `W = W₃ ‖ W₂ ‖ W₁`: W₂ is then only the step's
//! second phase (committed before the second round), W₃ what depends on the
//! second round and the layer's own variables. W₃ is padded to a power of
//! two m₃ and W₃ ‖ W₂ to a power of two m₂₃, so each later part is shown to
//! lie on a prefix that misses every earlier part's columns.
//!
//! [`ShapeRecorder`] builds the R1CS matrices, [`WitnessRecorder`] the
//! values; both tag each allocation with the [`Region`] current at that
//! moment, and [`WitnessLayout`] maps (region, rank) to a column the same way
//! for both.

use crate::error::{FoldError, Result};
use ff::PrimeField;
use nova_snark::frontend::{
    ConstraintSystem, Index, LinearCombination, SynthesisError, Variable,
};
use nova_snark::r1cs::{R1CSShape, SparseMatrix};
use nova_snark::traits::Engine;
use serde::{Deserialize, Serialize};

/// Which part of a fold's witness a variable belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Region {
    /// W₁: fixed before the challenges are drawn (committed first).
    First,
    /// W₂: may depend on the challenges (of the first round, with two).
    Second,
    /// W₃: may depend on every challenge (only with two rounds).
    Third,
}

/// A constraint system whose next allocations can be put in a region.
pub trait PhasedCs<F: PrimeField>: ConstraintSystem<F, Root = Self> {
    /// Put the following allocations in `r` (ignored without a split layout).
    fn set_region(&mut self, r: Region);
}

/// How a fold's witness vector is laid out.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct WitnessLayout {
    /// How many parts W has, each with its own commitment: 1 (no
    /// challenges), 2 (W₂ ‖ W₁) or 3 (W₃ ‖ W₂ ‖ W₁).
    pub parts: usize,
    /// Variables of W₁ (all of them with one part).
    pub first: usize,
    /// Variables of W₂ (0 with one part).
    pub second: usize,
    /// Variables of W₃ (0 unless three parts).
    pub third: usize,
}

impl WitnessLayout {
    /// One part: W in allocation order.
    pub fn plain(num_vars: usize) -> Self {
        WitnessLayout {
            parts: 1,
            first: num_vars,
            second: 0,
            third: 0,
        }
    }

    /// Whether W is split (committed in more than one part).
    pub fn split(&self) -> bool {
        self.parts > 1
    }

    /// m₃: W₃'s padded length (a power of two, at least 2); 0 unless three parts.
    pub fn third_padded(&self) -> usize {
        if self.parts == 3 {
            self.third.next_power_of_two().max(2)
        } else {
            0
        }
    }

    /// Where W₂ starts (after W₃'s m₃ columns).
    pub fn second_offset(&self) -> usize {
        self.third_padded()
    }

    /// The prefix every part after W₁ lies on: W₂'s padded length m with
    /// two parts, m₂₃ (W₃ ‖ W₂ padded) with three; 0 with one part.
    pub fn second_padded(&self) -> usize {
        match self.parts {
            1 => 0,
            2 => self.second.next_power_of_two().max(2),
            _ => (self.third_padded() + self.second).next_power_of_two().max(2),
        }
    }

    /// Length of W.
    pub fn num_vars(&self) -> usize {
        self.second_padded() + self.first
    }

    /// Where W₁ starts.
    pub fn first_offset(&self) -> usize {
        self.second_padded()
    }

    /// The columns part `k` (0: W₁, 1: W₂, 2: W₃) occupies, padding included.
    pub fn part_columns(&self, k: usize) -> std::ops::Range<usize> {
        match (self.parts, k) {
            (1, _) | (_, 0) => self.first_offset()..self.num_vars(),
            (2, _) | (_, 1) => self.second_offset()..self.second_padded(),
            _ => 0..self.third_padded(),
        }
    }

    /// Columns no variable takes (the padding of each part after W₁).
    pub fn padding(&self) -> Vec<usize> {
        if !self.split() {
            return vec![];
        }
        let mut p: Vec<usize> = (self.second_offset() + self.second..self.second_padded()).collect();
        if self.parts == 3 {
            p.extend(self.third..self.third_padded());
        }
        p
    }

    /// Columns of the aux variables in allocation order, from their tags.
    fn columns(&self, tags: &[Region]) -> Vec<usize> {
        if !self.split() {
            return (0..tags.len()).collect();
        }
        let mut next = [self.first_offset(), self.second_offset(), 0];
        tags.iter()
            .map(|t| {
                let k = match t {
                    Region::First => 0,
                    Region::Second => 1,
                    Region::Third => 2,
                };
                next[k] += 1;
                next[k] - 1
            })
            .collect()
    }

    /// W (zero padded) from values in allocation order and their tags.
    pub fn arrange<F: PrimeField>(&self, values: &[F], tags: &[Region]) -> Result<Vec<F>> {
        if values.len() != tags.len() || values.len() != self.first + self.second + self.third {
            return Err(FoldError::Invalid(format!(
                "a witness of {} values for a layout of {} + {} + {}",
                values.len(),
                self.first,
                self.second,
                self.third
            )));
        }
        let mut w = vec![F::ZERO; self.num_vars()];
        for (v, c) in values.iter().zip(self.columns(tags)) {
            w[c] = *v;
        }
        Ok(w)
    }
}

thread_local! {
    /// How many [`after_challenges`] calls are running on this thread.
    static AFTER: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
    /// How many [`after_late_challenges`] calls are running on this thread.
    static LATE: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

/// Run `f` with a thread-local counter raised (lowered again even if `f` panics).
fn inside<T>(key: &'static std::thread::LocalKey<std::cell::Cell<usize>>, f: impl FnOnce() -> T) -> T {
    struct Leave(&'static std::thread::LocalKey<std::cell::Cell<usize>>);
    impl Drop for Leave {
        fn drop(&mut self) {
            self.0.with(|d| d.set(d.get().saturating_sub(1)));
        }
    }
    key.with(|d| d.set(d.get() + 1));
    let _leave = Leave(key);
    f()
}

/// Run `f` with every allocation it makes put in W₂, even inside a step
/// circuit's first phase: for values that depend on a challenge (a power of
/// it, a sum at it) but sit, in the circuit's code, among values that do not.
/// The first phase's own values stay in W₁, committed before the challenges
/// exist; what `f` allocates is recomputed at the real challenges when the
/// fold is proven (the prover's first pass runs it at stand-ins). Only a
/// split layout is affected. Thread-local: a fold is synthesised on one thread.
pub fn after_challenges<T>(f: impl FnOnce() -> T) -> T {
    inside(&AFTER, f)
}

/// Run `f` with every allocation it makes put in W₃: for values that depend
/// on the second round of challenges (`ChallengeMode::PerRunTwice`; a power
/// of one, a sum at one) inside a step circuit's second phase, whose own
/// values (W₂) are committed before that round is drawn. The prover's W₂
/// pass runs `f` at stand-ins. With one round of challenges this is
/// [`after_challenges`].
pub fn after_late_challenges<T>(f: impl FnOnce() -> T) -> T {
    inside(&LATE, f)
}

/// Whether [`after_challenges`] or [`after_late_challenges`] is running on
/// this thread (a range check refuses to record a lookup there: its limbs
/// must be in W₁).
pub fn is_after_challenges() -> bool {
    AFTER.with(|d| d.get() > 0) || LATE.with(|d| d.get() > 0)
}

fn region_of(parts: usize, current: Region) -> Region {
    let late = LATE.with(|d| d.get() > 0);
    match parts {
        1 => Region::First,
        2 if late || is_after_challenges() => Region::Second,
        2 => current.min(Region::Second),
        _ if late => Region::Third,
        _ if is_after_challenges() => current.max(Region::Second),
        _ => current,
    }
}

/// One matrix under construction, rows in order, variables still in
/// allocation order (remapped to columns once the layout is known).
#[derive(Default)]
struct Rows<F> {
    data: Vec<F>,
    vars: Vec<Index>,
    indptr: Vec<usize>,
}

impl<F: PrimeField> Rows<F> {
    fn new() -> Self {
        Rows {
            data: vec![],
            vars: vec![],
            indptr: vec![0],
        }
    }

    fn push(&mut self, lc: &LinearCombination<F>) {
        for (v, c) in lc.iter() {
            // as nova-snark builds its matrices: a zero coefficient is no entry
            if !bool::from(c.is_zero()) {
                self.data.push(*c);
                self.vars.push(v.get_unchecked());
            }
        }
        self.indptr.push(self.data.len());
    }

    fn finish(self, cols: &[usize], num_vars: usize, num_inputs: usize) -> SparseMatrix<F> {
        let indices = self
            .vars
            .iter()
            .map(|v| match v {
                Index::Aux(j) => cols[*j],
                Index::Input(k) => num_vars + k,
            })
            .collect();
        SparseMatrix {
            data: self.data,
            indices,
            indptr: self.indptr,
            cols: num_vars + num_inputs,
        }
    }
}

/// Records a circuit's constraints (no values) and builds its R1CS shape.
pub struct ShapeRecorder<F: PrimeField> {
    parts: usize,
    region: Region,
    tags: Vec<Region>,
    inputs: usize,
    a: Rows<F>,
    b: Rows<F>,
    c: Rows<F>,
    constraints: usize,
    // the namespace stack and constraints by its first two levels, when asked
    names: Option<(Vec<String>, std::collections::BTreeMap<String, usize>)>,
    // each private variable's full name, when asked (tests that name a column)
    aux_names: Option<Vec<String>>,
}

impl<F: PrimeField> ShapeRecorder<F> {
    /// A recorder that also counts constraints by the first two levels of
    /// their namespaces, indices folded ([`ShapeRecorder::by_namespace`]).
    pub fn counting(parts: usize) -> Self {
        let mut r = Self::new(parts);
        r.names = Some(Default::default());
        r
    }

    /// A recorder that also names every private variable by its full
    /// namespace path ([`ShapeRecorder::column_names`]).
    pub fn naming(parts: usize) -> Self {
        let mut r = Self::counting(parts);
        r.aux_names = Some(vec![]);
        r
    }

    /// Each witness column's variable name (empty unless made by
    /// [`ShapeRecorder::naming`]; padding columns are unnamed).
    pub fn column_names(&self) -> Vec<String> {
        let Some(names) = &self.aux_names else { return vec![] };
        let layout = self.layout();
        let mut out = vec![String::new(); layout.num_vars()];
        for (name, col) in names.iter().zip(layout.columns(&self.tags)) {
            if let Some(slot) = out.get_mut(col) {
                slot.clone_from(name);
            }
        }
        out
    }

    /// Constraints by namespace (empty unless made by [`ShapeRecorder::counting`]).
    pub fn by_namespace(&self) -> Vec<(String, usize)> {
        self.names
            .as_ref()
            .map(|(_, m)| m.iter().map(|(k, v)| (k.clone(), *v)).collect())
            .unwrap_or_default()
    }

    /// A recorder for a layout of `parts` parts (1, 2 or 3).
    pub fn new(parts: usize) -> Self {
        ShapeRecorder {
            parts,
            region: Region::Second,
            tags: vec![],
            inputs: 1,
            a: Rows::new(),
            b: Rows::new(),
            c: Rows::new(),
            constraints: 0,
            names: None,
            aux_names: None,
        }
    }

    /// Constraints so far.
    pub fn num_constraints(&self) -> usize {
        self.constraints
    }

    /// Matrix non-zeros so far (A, B and C together).
    pub fn num_nonzeros(&self) -> usize {
        self.a.data.len() + self.b.data.len() + self.c.data.len()
    }

    /// Private variables so far.
    pub fn num_aux(&self) -> usize {
        self.tags.len()
    }

    /// The witness layout of what was recorded.
    pub fn layout(&self) -> WitnessLayout {
        let count = |r| self.tags.iter().filter(|t| **t == r).count();
        WitnessLayout {
            parts: self.parts,
            first: count(Region::First),
            second: count(Region::Second),
            third: count(Region::Third),
        }
    }

    /// The R1CS shape and the witness layout.
    pub fn into_shape<E: Engine<Scalar = F>>(self) -> Result<(R1CSShape<E>, WitnessLayout)> {
        let layout = self.layout();
        let cols = layout.columns(&self.tags);
        let (nv, ni) = (layout.num_vars(), self.inputs);
        let a = self.a.finish(&cols, nv, ni);
        let b = self.b.finish(&cols, nv, ni);
        let c = self.c.finish(&cols, nv, ni);
        // nova-snark does not count the constant one as an input
        let shape = R1CSShape::new(self.constraints, nv, ni - 1, a, b, c)?;
        Ok((shape, layout))
    }
}

impl<F: PrimeField> ConstraintSystem<F> for ShapeRecorder<F> {
    type Root = Self;

    fn alloc<Fv, A, AR>(&mut self, name: A, _: Fv) -> std::result::Result<Variable, SynthesisError>
    where
        Fv: FnOnce() -> std::result::Result<F, SynthesisError>,
        A: FnOnce() -> AR,
        AR: Into<String>,
    {
        if let (Some(all), Some((stack, _))) = (self.aux_names.as_mut(), self.names.as_ref()) {
            all.push(format!("{}/{}", stack.join("/"), name().into()));
        }
        self.tags.push(region_of(self.parts, self.region));
        Ok(Variable::new_unchecked(Index::Aux(self.tags.len() - 1)))
    }

    fn alloc_input<Fv, A, AR>(
        &mut self,
        _: A,
        _: Fv,
    ) -> std::result::Result<Variable, SynthesisError>
    where
        Fv: FnOnce() -> std::result::Result<F, SynthesisError>,
        A: FnOnce() -> AR,
        AR: Into<String>,
    {
        self.inputs += 1;
        Ok(Variable::new_unchecked(Index::Input(self.inputs - 1)))
    }

    fn enforce<A, AR, LA, LB, LC>(&mut self, _: A, a: LA, b: LB, c: LC)
    where
        A: FnOnce() -> AR,
        AR: Into<String>,
        LA: FnOnce(LinearCombination<F>) -> LinearCombination<F>,
        LB: FnOnce(LinearCombination<F>) -> LinearCombination<F>,
        LC: FnOnce(LinearCombination<F>) -> LinearCombination<F>,
    {
        self.a.push(&a(LinearCombination::zero()));
        self.b.push(&b(LinearCombination::zero()));
        self.c.push(&c(LinearCombination::zero()));
        self.constraints += 1;
        if let Some((stack, counts)) = self.names.as_mut() {
            let key: Vec<&str> = stack
                .iter()
                .take(2)
                .map(|p| p.trim_end_matches(|ch: char| ch.is_ascii_digit()))
                .collect();
            *counts.entry(key.join("/")).or_default() += 1;
        }
    }

    fn push_namespace<NR, N>(&mut self, name: N)
    where
        NR: Into<String>,
        N: FnOnce() -> NR,
    {
        if let Some((stack, _)) = self.names.as_mut() {
            stack.push(name().into());
        }
    }

    fn pop_namespace(&mut self) {
        if let Some((stack, _)) = self.names.as_mut() {
            stack.pop();
        }
    }

    fn get_root(&mut self) -> &mut Self::Root {
        self
    }
}

impl<F: PrimeField> PhasedCs<F> for ShapeRecorder<F> {
    fn set_region(&mut self, r: Region) {
        self.region = r;
    }
}

/// Records a circuit's values (no constraints), tagged by region.
pub struct WitnessRecorder<F: PrimeField> {
    parts: usize,
    region: Region,
    tags: Vec<Region>,
    aux: Vec<F>,
    inputs: Vec<F>,
}

impl<F: PrimeField> WitnessRecorder<F> {
    /// A recorder for a layout of `parts` parts (1, 2 or 3).
    pub fn new(parts: usize) -> Self {
        WitnessRecorder {
            parts,
            region: Region::Second,
            tags: vec![],
            aux: vec![],
            inputs: vec![F::ONE],
        }
    }

    /// The public inputs (X, without the constant one).
    pub fn public(&self) -> &[F] {
        &self.inputs[1..]
    }

    /// W laid out as `layout` says.
    pub fn witness(&self, layout: &WitnessLayout) -> Result<Vec<F>> {
        layout.arrange(&self.aux, &self.tags)
    }

    /// The values of W₁ in allocation order (what the first phase allocated).
    pub fn first_values(&self) -> impl Iterator<Item = &F> + '_ {
        self.values_in(Region::First)
    }

    /// The values of one region in allocation order.
    pub fn values_in(&self, r: Region) -> impl Iterator<Item = &F> + '_ {
        self.aux
            .iter()
            .zip(&self.tags)
            .filter(move |(_, t)| **t == r)
            .map(|(v, _)| v)
    }

    fn tag(&mut self, n: usize) {
        let r = region_of(self.parts, self.region);
        self.tags.extend(std::iter::repeat_n(r, n));
    }
}

impl<F: PrimeField> ConstraintSystem<F> for WitnessRecorder<F> {
    type Root = Self;

    fn new() -> Self {
        WitnessRecorder::new(1)
    }

    fn alloc<Fv, A, AR>(&mut self, _: A, f: Fv) -> std::result::Result<Variable, SynthesisError>
    where
        Fv: FnOnce() -> std::result::Result<F, SynthesisError>,
        A: FnOnce() -> AR,
        AR: Into<String>,
    {
        self.aux.push(f()?);
        self.tag(1);
        Ok(Variable::new_unchecked(Index::Aux(self.aux.len() - 1)))
    }

    fn alloc_input<Fv, A, AR>(
        &mut self,
        _: A,
        f: Fv,
    ) -> std::result::Result<Variable, SynthesisError>
    where
        Fv: FnOnce() -> std::result::Result<F, SynthesisError>,
        A: FnOnce() -> AR,
        AR: Into<String>,
    {
        self.inputs.push(f()?);
        Ok(Variable::new_unchecked(Index::Input(self.inputs.len() - 1)))
    }

    fn enforce<A, AR, LA, LB, LC>(&mut self, _: A, _: LA, _: LB, _: LC)
    where
        A: FnOnce() -> AR,
        AR: Into<String>,
        LA: FnOnce(LinearCombination<F>) -> LinearCombination<F>,
        LB: FnOnce(LinearCombination<F>) -> LinearCombination<F>,
        LC: FnOnce(LinearCombination<F>) -> LinearCombination<F>,
    {
    }

    fn push_namespace<NR, N>(&mut self, _: N)
    where
        NR: Into<String>,
        N: FnOnce() -> NR,
    {
    }

    fn pop_namespace(&mut self) {}

    fn get_root(&mut self) -> &mut Self::Root {
        self
    }

    fn is_witness_generator(&self) -> bool {
        true
    }

    fn extend_inputs(&mut self, new_inputs: &[F]) {
        self.inputs.extend(new_inputs);
    }

    fn extend_aux(&mut self, new_aux: &[F]) {
        self.aux.extend(new_aux);
        self.tag(new_aux.len());
    }

    fn allocate_empty(&mut self, aux_n: usize, inputs_n: usize) -> (&mut [F], &mut [F]) {
        let (i, j) = (self.aux.len(), self.inputs.len());
        self.aux.resize(i + aux_n, F::ZERO);
        self.tag(aux_n);
        self.inputs.resize(j + inputs_n, F::ZERO);
        (&mut self.aux[i..], &mut self.inputs[j..])
    }

    fn allocate_empty_inputs(&mut self, n: usize) -> &mut [F] {
        let j = self.inputs.len();
        self.inputs.resize(j + n, F::ZERO);
        &mut self.inputs[j..]
    }

    fn allocate_empty_aux(&mut self, n: usize) -> &mut [F] {
        let i = self.aux.len();
        self.aux.resize(i + n, F::ZERO);
        self.tag(n);
        &mut self.aux[i..]
    }

    fn inputs_slice(&self) -> &[F] {
        &self.inputs
    }

    fn aux_slice(&self) -> &[F] {
        &self.aux
    }
}

impl<F: PrimeField> PhasedCs<F> for WitnessRecorder<F> {
    fn set_region(&mut self, r: Region) {
        self.region = r;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use nova_snark::provider::Bn256EngineKZG as E;
    type F = <E as Engine>::Scalar;

    fn record<CS: PhasedCs<F>>(cs: &mut CS) {
        cs.set_region(Region::First);
        let _ = cs.alloc(|| "a", || Ok(F::from(1u64)));
        let _ = after_challenges(|| {
            let _ = cs.alloc(|| "b", || Ok(F::from(2u64)));
            // nested calls keep the region until the outermost returns
            after_challenges(|| cs.alloc(|| "c", || Ok(F::from(3u64))))
        });
        let _ = cs.alloc(|| "d", || Ok(F::from(4u64)));
    }

    #[test]
    fn allocations_after_the_challenges_go_to_w2_inside_the_first_phase() {
        let mut shape = ShapeRecorder::<F>::new(2);
        record(&mut shape);
        let lay = shape.layout();
        assert_eq!((lay.first, lay.second), (2, 2));
        let mut wit = WitnessRecorder::<F>::new(2);
        record(&mut wit);
        let w1: Vec<F> = wit.first_values().copied().collect();
        assert_eq!(w1, vec![F::from(1u64), F::from(4u64)]);
        let w = wit.witness(&lay).unwrap();
        // W = W₂ (padded to 2) ‖ W₁
        assert_eq!(w, [2u64, 3, 1, 4].map(F::from).to_vec());
        assert!(!is_after_challenges());
        // without a split nothing moves
        let mut plain = ShapeRecorder::<F>::new(1);
        record(&mut plain);
        assert_eq!((plain.layout().first, plain.layout().second), (4, 0));
    }

    fn record_three<CS: PhasedCs<F>>(cs: &mut CS) {
        cs.set_region(Region::Third);
        let _ = cs.alloc(|| "layer", || Ok(F::from(9u64)));
        cs.set_region(Region::First);
        let _ = cs.alloc(|| "a", || Ok(F::from(1u64)));
        let _ = after_challenges(|| cs.alloc(|| "b", || Ok(F::from(2u64))));
        cs.set_region(Region::Second);
        let _ = cs.alloc(|| "c", || Ok(F::from(3u64)));
        let _ = after_late_challenges(|| cs.alloc(|| "d", || Ok(F::from(4u64))));
        let _ = cs.alloc(|| "e", || Ok(F::from(5u64)));
        cs.set_region(Region::Third);
        let _ = cs.alloc(|| "out", || Ok(F::from(6u64)));
    }

    #[test]
    fn three_parts_put_each_round_on_its_own_columns() {
        let mut shape = ShapeRecorder::<F>::new(3);
        record_three(&mut shape);
        let lay = shape.layout();
        assert_eq!((lay.first, lay.second, lay.third), (1, 3, 3));
        // W₃ padded to m₃ = 4, W₃ ‖ W₂ to m₂₃ = 8, then W₁
        assert_eq!((lay.third_padded(), lay.second_padded(), lay.num_vars()), (4, 8, 9));
        assert_eq!(lay.part_columns(2), 0..4);
        assert_eq!(lay.part_columns(1), 4..8);
        assert_eq!(lay.part_columns(0), 8..9);
        let mut wit = WitnessRecorder::<F>::new(3);
        record_three(&mut wit);
        let w = wit.witness(&lay).unwrap();
        assert_eq!(w, [9u64, 4, 6, 0, 2, 3, 5, 0, 1].map(F::from).to_vec());
        let w2: Vec<F> = wit.values_in(Region::Second).copied().collect();
        assert_eq!(w2, [2u64, 3, 5].map(F::from).to_vec());
        // two parts: the second round's values join W₂, nothing goes to W₃
        let mut two = ShapeRecorder::<F>::new(2);
        record_three(&mut two);
        let l2 = two.layout();
        assert_eq!((l2.first, l2.second, l2.third), (1, 6, 0));
    }
}
