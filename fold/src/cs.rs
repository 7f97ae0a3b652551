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

    /// Columns of the aux variables in allocation order, from their tags:
    /// a variable's rank among its part's, placed by `order`.
    fn columns(&self, tags: &[Region], order: &ColumnOrder) -> Vec<usize> {
        let offsets = if self.split() { [self.first_offset(), self.second_offset(), 0] } else { [0; 3] };
        let mut next = [0usize; 3];
        tags.iter()
            .map(|t| {
                let k = if self.split() { part_of(*t) } else { 0 };
                next[k] += 1;
                offsets[k] + order.position(k, next[k] - 1)
            })
            .collect()
    }

    /// W (zero padded) from values in allocation order and their tags.
    pub fn arrange<F: PrimeField>(&self, values: &[F], tags: &[Region]) -> Result<Vec<F>> {
        self.arrange_in(values, tags, &ColumnOrder::default())
    }

    /// [`WitnessLayout::arrange`] with the parts' variables placed by `order`.
    pub fn arrange_in<F: PrimeField>(&self, values: &[F], tags: &[Region], order: &ColumnOrder) -> Result<Vec<F>> {
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
        for (v, c) in values.iter().zip(self.columns(tags, order)) {
            w[c] = *v;
        }
        Ok(w)
    }
}

/// Which part a region's variables are in (0: W₁, 1: W₂, 2: W₃).
fn part_of(r: Region) -> usize {
    match r {
        Region::First => 0,
        Region::Second => 1,
        Region::Third => 2,
    }
}

/// Where each part's variables sit within the part: by rank in allocation
/// order, a position (no entry: the rank itself). Units laid side by side
/// ([`in_unit`]) put unit u's j-th variable of a part at base + j·U + u,
/// as their rows: a verifier then reads one unit's columns a group.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ColumnOrder(pub [Vec<u32>; 3]);

impl ColumnOrder {
    /// The position in part `k` of its variable of rank `rank`.
    pub fn position(&self, k: usize, rank: usize) -> usize {
        self.0[k].get(rank).map_or(rank, |p| *p as usize)
    }

    /// Whether each part's positions are a permutation of its `sizes[k]`
    /// variables (or absent: the allocation order), as a key read from a
    /// file must have them before a witness is placed by them.
    pub fn check(&self, sizes: [usize; 3]) -> Result<()> {
        for (k, (p, n)) in self.0.iter().zip(sizes).enumerate() {
            if p.is_empty() {
                continue;
            }
            let mut seen = vec![false; n];
            let ok = p.len() == n && p.iter().all(|x| seen.get_mut(*x as usize).is_some_and(|s| !std::mem::replace(s, true)));
            if !ok {
                return Err(FoldError::Invalid(format!(
                    "the key's order of part {k}'s variables is not a permutation of its {n}"
                )));
            }
        }
        Ok(())
    }

    /// Part `k`'s first `values.len()` variables (allocation order) in
    /// their columns' order: for a part committed before the rest of W is
    /// known (W₁'s precommitment less its late values, W₂'s). Refused where
    /// one of them would sit past them (a late value moved among them).
    pub fn place<F: PrimeField>(&self, k: usize, values: &[F]) -> Result<Vec<F>> {
        let mut out = vec![F::ZERO; values.len()];
        for (r, v) in values.iter().enumerate() {
            let slot = out.get_mut(self.position(k, r)).ok_or_else(|| {
                FoldError::Invalid(format!("part {k}'s variable {r} is placed past the {} committed", values.len()))
            })?;
            *slot = *v;
        }
        Ok(out)
    }
}

thread_local! {
    /// How many [`after_challenges`] calls are running on this thread.
    static AFTER: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
    /// How many [`after_late_challenges`] calls are running on this thread.
    static LATE: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
    /// The unit [`in_unit`] runs on this thread, if any.
    static UNIT: std::cell::Cell<Option<(&'static str, usize)>> = const { std::cell::Cell::new(None) };
}

/// Run `f` as unit `index` of the family `kind`: the constraints it
/// enforces are that unit's, in the order it enforces them. A family's
/// units that enforce as many constraints (the code of one output row run
/// for each row) are laid out side by side when the shape is recorded —
/// unit u's i-th constraint at row base + i·U + u of a group of U = 2ᵏ of
/// them — so that a verifier evaluates one unit's entries a group, not
/// every unit's ([`RowGroups`]). Rows only: no witness column moves, so
/// the prover is unaffected; the shape is the same constraints in another
/// order. Thread-local, like [`after_challenges`]; an inner call replaces
/// the outer unit until it returns.
pub fn in_unit<T>(kind: &'static str, index: usize, f: impl FnOnce() -> T) -> T {
    with_unit(Some((kind, index)), f)
}

/// A unit ([`in_unit`]'s family and index), or none.
pub type UnitTag = Option<(&'static str, usize)>;

/// The unit running on this thread ([`in_unit`]): what a gadget records
/// beside a value it checks later (a lookup's query, whose inverse is its
/// unit's too).
pub fn current_unit() -> UnitTag {
    UNIT.with(|u| u.get())
}

/// Run `f` in the unit `tag` (none: outside every unit).
pub fn with_unit<T>(tag: UnitTag, f: impl FnOnce() -> T) -> T {
    struct Restore(UnitTag);
    impl Drop for Restore {
        fn drop(&mut self) {
            UNIT.with(|u| u.set(self.0));
        }
    }
    let _restore = Restore(UNIT.with(|u| u.replace(tag)));
    f()
}

/// Groups of units laid out side by side at the head of a shape's rows, in
/// order from row 0: (log₂ U, rows a unit). Group g starts where g − 1
/// ends; groups come largest U first, so each starts at a multiple of its U.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct RowGroups(pub Vec<(u32, u32)>);

impl RowGroups {
    /// Each group's (first row, U, rows a unit).
    pub fn placed(&self) -> Vec<(usize, usize, usize)> {
        let mut base = 0usize;
        self.0
            .iter()
            .map(|&(k, r)| {
                let u = 1usize << k;
                let g = (base, u, r as usize);
                base += u * r as usize;
                g
            })
            .collect()
    }
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

    /// The rows in the order `order` (old row indices).
    fn permute(self, order: &[usize]) -> Self {
        let mut out = Rows::new();
        for &r in order {
            let (a, b) = (self.indptr[r], self.indptr[r + 1]);
            out.data.extend_from_slice(&self.data[a..b]);
            out.vars.extend_from_slice(&self.vars[a..b]);
            out.indptr.push(out.data.len());
        }
        out
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
    // each constraint's and each variable's unit ([`in_unit`]), if any
    units: Vec<Option<(&'static str, usize)>>,
    alloc_units: Vec<Option<(&'static str, usize)>>,
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
        let (_, _, order) = group_units(&self.units, &self.alloc_units, &self.tags);
        for (name, col) in names.iter().zip(layout.columns(&self.tags, &order)) {
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
            units: vec![],
            alloc_units: vec![],
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
    /// Rows and variables in their recorded order: units ([`in_unit`]) are
    /// not laid out (the shape a witness from [`WitnessRecorder::witness`] fits).
    pub fn into_shape<E: Engine<Scalar = F>>(self) -> Result<(R1CSShape<E>, WitnessLayout)> {
        self.shape_of(false).map(|(s, l, _)| (s, l))
    }

    /// The R1CS shape, its witness layout, and its units' groups
    /// ([`in_unit`]): rows at the shape's head, columns at each part's.
    pub fn into_grouped_shape<E: Engine<Scalar = F>>(self) -> Result<(R1CSShape<E>, WitnessLayout, Units)> {
        self.shape_of(true)
    }

    fn shape_of<E: Engine<Scalar = F>>(self, group: bool) -> Result<(R1CSShape<E>, WitnessLayout, Units)> {
        let layout = self.layout();
        let (order, groups, columns) = match group {
            true => group_units(&self.units, &self.alloc_units, &self.tags),
            false => ((0..self.constraints).collect(), RowGroups::default(), ColumnOrder::default()),
        };
        let cols = layout.columns(&self.tags, &columns);
        let (nv, ni) = (layout.num_vars(), self.inputs);
        let a = self.a.permute(&order).finish(&cols, nv, ni);
        let b = self.b.permute(&order).finish(&cols, nv, ni);
        let c = self.c.permute(&order).finish(&cols, nv, ni);
        // nova-snark does not count the constant one as an input
        let shape = R1CSShape::new(self.constraints, nv, ni - 1, a, b, c)?;
        Ok((shape, layout, Units { rows: groups, columns }))
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
        self.alloc_units.push(UNIT.with(|u| u.get()));
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
        self.units.push(UNIT.with(|u| u.get()));
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

/// A shape's units ([`in_unit`]): its rows' groups and its columns' order.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Units {
    /// The groups at the head of the rows.
    pub rows: RowGroups,
    /// Each part's variables, the groups' first.
    pub columns: ColumnOrder,
}

/// One unit's rows and, per part, its variables (allocation indices).
#[derive(Default)]
struct Unit {
    rows: Vec<usize>,
    vars: [Vec<usize>; 3],
}

impl Unit {
    fn signature(&self) -> [usize; 4] {
        [self.rows.len(), self.vars[0].len(), self.vars[1].len(), self.vars[2].len()]
    }
}

/// The rows' order, their groups and the columns' order: each family's
/// units in index order; runs of units with as many rows and as many
/// variables in each part split into groups of powers of two (largest
/// first: 10 units are 8 + 2); the groups largest U first from row 0 and
/// from each part's first column, unit u's i-th row at base + i·U + u and
/// its j-th variable of a part at base + j·U + u; every other row and
/// variable after them in its order.
fn group_units(
    units: &[Option<(&'static str, usize)>],
    alloc_units: &[Option<(&'static str, usize)>],
    tags: &[Region],
) -> (Vec<usize>, RowGroups, ColumnOrder) {
    use std::collections::BTreeMap;
    let mut fams: BTreeMap<&str, BTreeMap<usize, Unit>> = BTreeMap::new();
    for (row, u) in units.iter().enumerate() {
        if let Some((kind, index)) = u {
            fams.entry(kind).or_default().entry(*index).or_default().rows.push(row);
        }
    }
    for (j, (u, t)) in alloc_units.iter().zip(tags).enumerate() {
        if let Some((kind, index)) = u {
            fams.entry(kind).or_default().entry(*index).or_default().vars[part_of(*t)].push(j);
        }
    }
    // runs of consecutive units alike
    let mut runs: Vec<Vec<&Unit>> = vec![];
    for members in fams.values() {
        let mut run: Vec<&Unit> = vec![];
        for unit in members.values() {
            if run.last().is_some_and(|l| l.signature() != unit.signature()) {
                runs.push(std::mem::take(&mut run));
            }
            run.push(unit);
        }
        runs.push(run);
    }
    // (U, members) of every group with rows
    let mut groups: Vec<(usize, &[&Unit])> = vec![];
    for run in &runs {
        let mut rest = &run[..];
        while rest.len() >= 2 {
            let u = 1usize << rest.len().ilog2();
            if !rest[0].rows.is_empty() {
                groups.push((u, &rest[..u]));
            }
            rest = &rest[u..];
        }
    }
    groups.sort_by_key(|g| std::cmp::Reverse(g.0));
    let n = units.len();
    let mut order = Vec::with_capacity(n);
    let mut placed = vec![false; n];
    let mut out = vec![];
    // each variable's part and rank within it
    let mut ranks = vec![0usize; tags.len()];
    let mut counts = [0usize; 3];
    for (j, t) in tags.iter().enumerate() {
        let k = part_of(*t);
        ranks[j] = counts[k];
        counts[k] += 1;
    }
    let mut columns: [Vec<u32>; 3] = Default::default();
    let mut moved: [Vec<bool>; 3] = [vec![false; counts[0]], vec![false; counts[1]], vec![false; counts[2]]];
    let mut next = [0usize; 3];
    for (u, members) in &groups {
        let r = members[0].rows.len();
        for i in 0..r {
            for m in members.iter() {
                order.push(m.rows[i]);
                placed[m.rows[i]] = true;
            }
        }
        out.push((u.trailing_zeros(), r as u32));
        for k in 0..3 {
            if columns[k].is_empty() && counts[k] > 0 {
                columns[k] = vec![u32::MAX; counts[k]];
            }
            for j in 0..members[0].vars[k].len() {
                for m in members.iter() {
                    let rank = ranks[m.vars[k][j]];
                    columns[k][rank] = next[k] as u32;
                    moved[k][rank] = true;
                    next[k] += 1;
                }
            }
        }
    }
    order.extend((0..n).filter(|r| !placed[*r]));
    for k in 0..3 {
        if columns[k].is_empty() {
            continue;
        }
        for rank in 0..counts[k] {
            if !moved[k][rank] {
                columns[k][rank] = next[k] as u32;
                next[k] += 1;
            }
        }
        // no group moved a variable of this part: the allocation order
        if columns[k].iter().enumerate().all(|(r, p)| *p as usize == r) {
            columns[k].clear();
        }
    }
    (order, RowGroups(out), ColumnOrder(columns))
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

    /// W laid out as `layout` says, each part's variables placed by `order`.
    pub fn witness_in(&self, layout: &WitnessLayout, order: &ColumnOrder) -> Result<Vec<F>> {
        layout.arrange_in(&self.aux, &self.tags, order)
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

    /// Four units of two constraints and two variables (one in W₁, one in
    /// W₂), between a variable before them and one after: unit u's i-th
    /// row is row i·4 + u, its j-th variable of a part that part's column
    /// j·4 + u, the others after them; the witness the prover arranges
    /// satisfies the shape so laid out, and a part committed early is
    /// placed in the same order.
    #[test]
    fn units_are_laid_side_by_side() {
        fn record<CS: PhasedCs<F>>(cs: &mut CS) {
            cs.set_region(Region::First);
            let before = cs.alloc(|| "before", || Ok(F::from(5u64))).unwrap();
            for u in 0..4u64 {
                in_unit("u", u as usize, || {
                    let a = cs.alloc(|| format!("a{u}"), || Ok(F::from(u + 1))).unwrap();
                    let b = after_challenges(|| cs.alloc(|| format!("b{u}"), || Ok(F::from(2 * u + 2)))).unwrap();
                    cs.enforce(|| "b = 2a", |lc| lc + a, |lc| lc + (F::from(2u64), CS::one()), |lc| lc + b);
                    cs.enforce(|| "a·5 = 5a", |lc| lc + a, |lc| lc + before, |lc| lc + (F::from(5 * (u + 1)), CS::one()));
                });
            }
            let after = cs.alloc(|| "after", || Ok(F::from(25u64))).unwrap();
            cs.enforce(|| "after", |lc| lc + before, |lc| lc + before, |lc| lc + after);
        }
        let mut shape = ShapeRecorder::<F>::new(2);
        record(&mut shape);
        let (s, lay, units) = shape.into_grouped_shape::<E>().unwrap();
        assert_eq!(units.rows, RowGroups(vec![(2, 2)]));
        assert_eq!((lay.first, lay.second), (6, 4));
        // W = W₂ (b₀…b₃, padded to 4) ‖ W₁ (a₀…a₃ side by side, then before, after)
        assert_eq!(units.columns.0[0], vec![4, 0, 1, 2, 3, 5]);
        assert!(units.columns.0[1].is_empty(), "the units' b are W₂'s order already");
        // row i·4 + u is unit u's i-th constraint: its A reads a_u, at column 4 + u
        for u in 0..4 {
            let (row0, row1) = (&s.A().indices[s.A().indptr[u]..s.A().indptr[u + 1]], u + 4);
            assert_eq!(row0, &[4 + u], "unit {u}'s first row");
            assert_eq!(s.A().indices[s.A().indptr[row1]], 4 + u, "unit {u}'s second row");
        }
        let mut wit = WitnessRecorder::<F>::new(2);
        record(&mut wit);
        let w = wit.witness_in(&lay, &units.columns).unwrap();
        assert_eq!(w, [2u64, 4, 6, 8, 1, 2, 3, 4, 5, 25].map(F::from).to_vec());
        let z = [w.clone(), vec![F::from(1u64)]].concat();
        let (a, b, c) = (s.A().multiply_vec(&z), s.B().multiply_vec(&z), s.C().multiply_vec(&z));
        assert!(a.iter().zip(&b).zip(&c).all(|((a, b), c)| *a * b == *c), "the arranged witness satisfies the shape");
        let w1: Vec<F> = wit.first_values().copied().collect();
        assert_eq!(units.columns.place(0, &w1).unwrap(), w[4..].to_vec());
        // a late value (the last of W₁) moved among the ones committed first is refused
        let moved = ColumnOrder([vec![5, 0, 1, 2, 3, 4], vec![], vec![]]);
        assert!(moved.place(0, &w1[..5]).is_err());
        // a key's order must be a permutation of each part
        assert!(units.columns.check([6, 4, 0]).is_ok());
        assert!(moved.check([6, 4, 0]).is_ok());
        for bad in [vec![0, 0, 1, 2, 3, 4], vec![0, 1, 2, 3, 4, 6], vec![0, 1, 2]] {
            assert!(ColumnOrder([bad.clone(), vec![], vec![]]).check([6, 4, 0]).is_err(), "{bad:?}");
        }
    }
}
