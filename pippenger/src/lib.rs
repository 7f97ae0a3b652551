//! A Pippenger whose bucket additions are all affine, for any halo2curves
//! curve of the form y² = x³ + b (BN254 G1 and Grumpkin).
//!
//! Why: halo2curves' projective addition (complete formulas) costs ≈ 17
//! field multiplications, 317 ns on the project's host; an affine addition
//! costs 6 when a whole round of additions shares one inversion
//! (Montgomery's trick). halo2curves' `msm_best` schedules affine additions
//! too, but with 2^(c−1) buckets a window its batches are small and every
//! collision falls back on a projective addition: a 2¹⁴-point Grumpkin MSM
//! took 99 ms on one core there (≈ 220 ns an addition).
//!
//! How: scalars are grouped by width (1, 8, 16, 32, 64 bits after taking
//! the shorter of s and −s, or full), each group split into signed (Booth)
//! windows of c bits (c from a cost model per group). One task is a
//! (window, chunk of points) pair: a slice of 2¹⁵ points at a time, it
//! sorts the points into buckets by digit (each bucket's sum so far
//! first), then adds each bucket's points pairwise, every pair of every
//! bucket in one round with one inversion (the slopes in a short loop of
//! their own), until each bucket holds one point; the buckets are then
//! summed as Σ b·S_b with running sums, in segments whose sums advance side
//! by side so they too are affine additions under a shared inversion
//! (`bucket_sum`). Tasks run in parallel; each group's windows are joined
//! by doublings.
//!
//! A few points (≤ `STRAUS_MAX`) take `straus` instead: one chain of
//! doublings shared by every point, each scalar in width-5 NAF over its
//! point's odd multiples. Pippenger's fixed cost a window (its buckets,
//! their running sums, an inversion a round) is most of a small MSM: the
//! verifier's openings (3 to 21 points at a step) took 0.5–1.3 ms each
//! there and take 0.11–0.41 ms here.
//!
//! Exact for every input (zero scalars, the identity, equal or opposite
//! points in a bucket: doubled or cancelled); tested against halo2curves'
//! `msm_best` and the naive sum.

use ff::{Field, PrimeField};
use group::{Curve, Group};
use halo2curves::CurveAffine;
use rayon::prelude::*;

/// Widths the scalars are grouped by; the last is "full".
const WIDTHS: [u32; 6] = [1, 8, 16, 32, 64, 256];

/// Points a task handles at most (bounds its working memory: 64 bytes a point).
const MAX_CHUNK: usize = 1 << 20;

/// Σ scalars[i]·bases[i] over the first `min(len)` pairs.
pub fn msm<C: CurveAffine>(scalars: &[C::Scalar], bases: &[C]) -> C::Curve {
    let n = scalars.len().min(bases.len());
    let (scalars, bases) = (&scalars[..n], &bases[..n]);
    // points are indexed by u32 below: larger inputs go in halves
    if n > u32::MAX as usize {
        let h = n / 2;
        return msm(&scalars[..h], &bases[..h]) + msm(&scalars[h..], &bases[h..]);
    }
    if n <= STRAUS_MAX {
        return straus(scalars, bases);
    }
    // classify: (group, index, negated, limbs)
    let entries: Vec<(u8, u32, bool, [u64; 4])> = scalars
        .par_iter()
        .zip(bases.par_iter())
        .enumerate()
        .filter_map(|(i, (s, b))| {
            if bool::from(s.is_zero()) || bool::from(b.is_identity()) {
                return None;
            }
            let l = limbs(s);
            let (neg, l) = if bits(&l) > 64 {
                let m = limbs(&-*s);
                if bits(&m) <= 64 {
                    (true, m)
                } else {
                    (false, l)
                }
            } else {
                (false, l)
            };
            let w = bits(&l);
            let g = WIDTHS.iter().position(|&x| w <= x).unwrap_or(WIDTHS.len() - 1);
            Some((g as u8, i as u32, neg, l))
        })
        .collect();
    let mut groups: Vec<Vec<(u32, bool, [u64; 4])>> = vec![Vec::new(); WIDTHS.len()];
    for (g, i, neg, l) in entries {
        groups[g as usize].push((i, neg, l));
    }
    let plans: Vec<Plan<C>> = groups
        .into_iter()
        .zip(WIDTHS)
        .filter(|(g, _)| !g.is_empty())
        .map(|(g, w)| Plan::new(g, w, bases))
        .collect();
    // every (group, window, chunk) task at once
    let tasks: Vec<(usize, usize, usize, usize)> = plans
        .iter()
        .enumerate()
        .flat_map(|(p, plan)| {
            let len = plan.points.len();
            let chunk = plan.chunk;
            (0..plan.windows).flat_map(move |w| (0..len).step_by(chunk).map(move |a| (p, w, a, (a + chunk).min(len))))
        })
        .collect();
    let sums: Vec<(usize, usize, C::Curve)> = tasks
        .into_par_iter()
        .map_init(Scratch::default, |sc, (p, w, a, b)| (p, w, plans[p].window_sum(w, a, b, sc)))
        .collect();
    let mut total = C::Curve::identity();
    for (p, plan) in plans.iter().enumerate() {
        let mut per_window = vec![C::Curve::identity(); plan.windows];
        for (q, w, s) in &sums {
            if *q == p {
                per_window[*w] += s;
            }
        }
        let mut acc = C::Curve::identity();
        for s in per_window.iter().rev() {
            for _ in 0..plan.c {
                acc = acc.double();
            }
            acc += s;
        }
        total += acc;
    }
    total
}

/// Up to this many points an MSM is one shared chain of doublings
/// ([`straus`]): Pippenger's per-window buckets and inversions cost more
/// than the whole sum there (a verifier's openings: 3 to 21 points at a
/// step, up to 66 at a π_merge). Measured on one core, full-width scalars:
/// 8 points 0.24 against 1.29 ms, 64 points 1.44 against 2.35 ms, even at
/// 128 (2.8 ms each), Pippenger ahead from 192.
const STRAUS_MAX: usize = 96;

/// Width of [`straus`]' signed digits: odd multiples up to 15·P a point.
const WNAF: u32 = 5;

/// Σ sᵢ·Pᵢ for a few points by Straus: each scalar (the shorter of s and
/// −s, the point negated for −s) in width-5 NAF, odd multiples P, 3P, …,
/// 15P a point made once (and made affine together), then one chain of
/// doublings from the top digit down, adding the digits' multiples as it
/// passes them (mixed additions). ≈ 254 doublings and n·254/6 additions,
/// against Pippenger's ≈ 52 windows of bucket work at a few points.
fn straus<C: CurveAffine>(scalars: &[C::Scalar], bases: &[C]) -> C::Curve {
    let half = 1usize << (WNAF - 2);
    let mut digits: Vec<Vec<i8>> = Vec::with_capacity(scalars.len());
    let mut multiples: Vec<C::Curve> = Vec::with_capacity(scalars.len() * half);
    for (s, b) in scalars.iter().zip(bases) {
        if bool::from(s.is_zero()) || bool::from(b.is_identity()) {
            continue;
        }
        let l = limbs(s);
        let m = limbs(&-*s);
        let (neg, l) = if bits(&m) < bits(&l) { (true, m) } else { (false, l) };
        digits.push(wnaf(&l));
        let p = if neg { -b.to_curve() } else { b.to_curve() };
        let twice = p.double();
        let mut q = p;
        for _ in 0..half {
            multiples.push(q);
            q += twice;
        }
    }
    let mut table = vec![C::identity(); multiples.len()];
    C::Curve::batch_normalize(&multiples, &mut table);
    let top = digits.iter().map(Vec::len).max().unwrap_or(0);
    let mut acc = C::Curve::identity();
    for at in (0..top).rev() {
        acc = acc.double();
        for (k, d) in digits.iter().enumerate() {
            match d.get(at).copied().unwrap_or(0) {
                0 => {}
                x if x > 0 => acc += table[k * half + (x as usize) / 2],
                x => acc -= table[k * half + (x.unsigned_abs() as usize) / 2],
            }
        }
    }
    acc
}

/// The width-[`WNAF`] NAF of a little-endian 256-bit number: odd digits in
/// ±(2^(w−1) − 1), each followed by at least w − 1 zeros, Σ dᵢ·2ⁱ = l.
fn wnaf(l: &[u64; 4]) -> Vec<i8> {
    let mut out = Vec::with_capacity(bits(l) as usize + 1);
    // the number, with room for the carry a negative digit leaves
    let mut v = [l[0], l[1], l[2], l[3], 0u64];
    let width = 1u64 << WNAF;
    while v.iter().any(|x| *x != 0) {
        let d = if v[0] & 1 == 1 {
            let m = (v[0] & (width - 1)) as i64;
            let d = if m >= (width / 2) as i64 { m - width as i64 } else { m };
            // v −= d (d odd, |d| < 2^(w−1))
            add_signed(&mut v, -d);
            d as i8
        } else {
            0
        };
        out.push(d);
        // v >>= 1
        for k in 0..5 {
            v[k] = (v[k] >> 1) | if k < 4 { v[k + 1] << 63 } else { 0 };
        }
    }
    out
}

/// v += d in 320-bit two's complement (d sign-extended).
fn add_signed(v: &mut [u64; 5], d: i64) {
    let ext = if d < 0 { u64::MAX } else { 0 };
    let mut carry = false;
    for (k, x) in v.iter_mut().enumerate() {
        let y = if k == 0 { d as u64 } else { ext };
        let (r, c1) = x.overflowing_add(y);
        let (r, c2) = r.overflowing_add(u64::from(carry));
        *x = r;
        carry = c1 || c2;
    }
}

/// A scalar's little-endian 64-bit limbs (halo2curves' reprs are little-endian).
fn limbs<F: PrimeField>(s: &F) -> [u64; 4] {
    let r = s.to_repr();
    let b = r.as_ref();
    let mut out = [0u64; 4];
    for (k, chunk) in b.chunks(8).take(4).enumerate() {
        let mut w = [0u8; 8];
        w[..chunk.len()].copy_from_slice(chunk);
        out[k] = u64::from_le_bytes(w);
    }
    out
}

fn bits(l: &[u64; 4]) -> u32 {
    for k in (0..4).rev() {
        if l[k] != 0 {
            return 64 * k as u32 + 64 - l[k].leading_zeros();
        }
    }
    0
}

/// `c` bits of `l` from bit `at` (zero past the end).
fn window_bits(l: &[u64; 4], at: u32, c: u32) -> u64 {
    let (k, off) = ((at / 64) as usize, at % 64);
    if k >= 4 {
        return 0;
    }
    if c == 0 {
        return 0;
    }
    let mut v = l[k] >> off;
    if off > 0 && off + c > 64 && k + 1 < 4 {
        v |= l[k + 1] << (64 - off);
    }
    if c >= 64 {
        v
    } else {
        v & ((1u64 << c) - 1)
    }
}

/// One width group: its points' coordinates, scalars (the shorter of s and
/// −s) and signs, and the window size.
struct Plan<C: CurveAffine> {
    points: Vec<(C::Base, C::Base)>,
    limbs: Vec<[u64; 4]>,
    neg: Vec<bool>,
    windows: usize,
    c: u32,
    chunk: usize,
}

impl<C: CurveAffine> Plan<C> {
    fn new(group: Vec<(u32, bool, [u64; 4])>, width: u32, bases: &[C]) -> Self {
        let n = group.len();
        let threads = rayon::current_num_threads().max(1);
        let c = best_window(n, width);
        // Booth digits reach one bit past the widest scalar
        let widest = group.par_iter().map(|(_, _, l)| bits(l)).max().unwrap_or(0);
        let windows = (widest / c + 1) as usize;
        let points = group
            .par_iter()
            .map(|(i, _, _)| {
                // never the identity (left out when classified)
                Option::from(bases[*i as usize].coordinates())
                    .map_or((C::Base::ZERO, C::Base::ZERO), |co: halo2curves::Coordinates<C>| (*co.x(), *co.y()))
            })
            .collect();
        let limbs = group.iter().map(|g| g.2).collect();
        let neg = group.iter().map(|g| g.1).collect();
        // enough tasks for every thread, each worth its bucket reduction
        let per = n.div_ceil((2 * threads).div_ceil(windows.max(1))).max(1);
        let chunk = per.max(4 << c).clamp(1, MAX_CHUNK);
        Plan {
            points,
            limbs,
            neg,
            windows,
            c,
            chunk,
        }
    }

    /// Point k's signed digit in window w (Booth: the window's low c − 1
    /// bits, plus the bit below the window, less 2^(c−1) times its top bit;
    /// Σ_w digit_w·2^(c·w) is the scalar), negated for a negated scalar.
    #[inline]
    fn digit(&self, k: usize, w: usize) -> i32 {
        let c = self.c;
        let l = &self.limbs[k];
        let at = w as u32 * c;
        let low = window_bits(l, at, c - 1) as i32;
        let below = if at == 0 { 0 } else { window_bits(l, at - 1, 1) as i32 };
        let top = window_bits(l, at + c - 1, 1) as i32;
        let d = low + below - (top << (c - 1));
        if self.neg[k] {
            -d
        } else {
            d
        }
    }

    /// Σ d·P over points a..b, d their digits in window w. The points go
    /// through the buckets a slice at a time (each bucket's point carried
    /// into the next slice), so the working memory stays near the cache.
    fn window_sum(&self, w: usize, a: usize, b: usize, sc: &mut Scratch<C::Base>) -> C::Curve {
        let buckets = 1usize << (self.c - 1);
        let slice = (8 * buckets).max(1 << 15);
        // room for a whole slice at once: no vector grows (and is copied) mid-task
        let room = slice.min(b - a) + buckets;
        sc.xy.clear();
        sc.xy.reserve(room);
        for v in [&mut sc.num, &mut sc.den, &mut sc.prefix] {
            v.clear();
            v.reserve(room / 2);
        }
        sc.pairs.clear();
        sc.pairs.reserve(room / 2);
        sc.carry.clear();
        sc.carry.resize(buckets, None);
        for lo in (a..b).step_by(slice) {
            let hi = (lo + slice).min(b);
            let start = &mut sc.start;
            start.clear();
            start.resize(buckets + 1, 0);
            for (j, c) in sc.carry.iter().enumerate() {
                start[j + 1] += u32::from(c.is_some());
            }
            for k in lo..hi {
                let d = self.digit(k, w);
                if d != 0 {
                    start[d.unsigned_abs() as usize] += 1;
                }
            }
            for j in 0..buckets {
                start[j + 1] += start[j];
            }
            let total = start[buckets] as usize;
            sc.xy.clear();
            sc.xy.resize(total, [C::Base::ZERO; 2]);
            sc.fill.clear();
            sc.fill.extend_from_slice(&start[..buckets]);
            for (j, c) in sc.carry.iter().enumerate() {
                if let Some(p) = c {
                    sc.xy[sc.fill[j] as usize] = *p;
                    sc.fill[j] += 1;
                }
            }
            for k in lo..hi {
                let d = self.digit(k, w);
                if d != 0 {
                    let j = d.unsigned_abs() as usize - 1;
                    let at = sc.fill[j] as usize;
                    sc.fill[j] += 1;
                    let (px, py) = self.points[k];
                    sc.xy[at] = [px, if d < 0 { -py } else { py }];
                }
            }
            sc.len.clear();
            sc.len.extend((0..buckets).map(|j| start[j + 1] - start[j]));
            reduce_buckets(sc);
            for (j, c) in sc.carry.iter_mut().enumerate() {
                *c = (sc.len[j] == 1).then(|| sc.xy[sc.start[j] as usize]);
            }
        }
        bucket_sum::<C>(sc)
    }
}

/// Σ (j+1)·B_j over the buckets B_j in `sc.carry`, by running sums. The
/// buckets are cut into K segments of L; the segments' running sums
/// advance side by side, top bucket first, so each step's K affine
/// additions share one inversion. Segment k gives its sum R_k and its
/// running sums' total T_k = Σ_i (i+1)·B_{kL+i}; the window's sum is then
/// Σ_k T_k + L·Σ_k k·R_k, 3K projective additions (one bucket's running
/// sums in projective coordinates cost two projective additions a bucket,
/// ≈ 17 multiplications each, where an affine one costs ≈ 9 with its
/// share of the inversion).
fn bucket_sum<C: CurveAffine>(sc: &mut Scratch<C::Base>) -> C::Curve {
    let carry = std::mem::take(&mut sc.carry);
    let b = carry.len();
    // b is a power of two: L ≈ √b / 2 balances inversions against the join
    let log_l = (b.trailing_zeros() / 2).saturating_sub(1);
    let l = 1usize << log_l;
    let k = b / l;
    let (mut run, mut tot) = (vec![None; k], vec![None; k]);
    let mut col = Vec::with_capacity(k);
    for i in (0..l).rev() {
        col.clear();
        col.extend((0..k).map(|s| carry[s * l + i]));
        add_into(&mut run, &col, sc);
        add_into(&mut tot, &run, sc);
    }
    sc.carry = carry;
    let point = |p: &Option<[C::Base; 2]>| p.map_or(C::Curve::identity(), |[x, y]| affine::<C>(x, y).to_curve());
    let (mut acc, mut weighted, mut total) = (C::Curve::identity(), C::Curve::identity(), C::Curve::identity());
    for s in (0..k).rev() {
        // weighted gains Σ_{s' > s} R_{s'} at each s: Σ_s s·R_s in the end
        weighted += acc;
        acc += point(&run[s]);
        total += point(&tot[s]);
    }
    for _ in 0..log_l {
        weighted = weighted.double();
    }
    total + weighted
}

/// dst[i] += src[i] for every i, in affine coordinates with one inversion
/// for them all (None is the identity; equal points double, opposite
/// ones cancel).
fn add_into<F: Field>(dst: &mut [Option<[F; 2]>], src: &[Option<[F; 2]>], sc: &mut Scratch<F>) {
    let Scratch { num, den, prefix, fill: at, .. } = sc;
    at.clear();
    num.clear();
    den.clear();
    for (i, (d, s)) in dst.iter_mut().zip(src).enumerate() {
        match (*d, *s) {
            (_, None) => {}
            (None, Some(q)) => *d = Some(q),
            (Some([x1, y1]), Some([x2, y2])) => {
                let dx = x2 - x1;
                if !bool::from(dx.is_zero()) {
                    num.push(y2 - y1);
                    den.push(dx);
                    at.push(i as u32);
                } else if y1 == y2 && !bool::from(y1.is_zero()) {
                    let xx = x1.square();
                    num.push(xx + xx.double());
                    den.push(y1.double());
                    at.push(i as u32);
                } else {
                    // P + (−P) (or a point of order two): the identity
                    *d = None;
                }
            }
        }
    }
    if at.is_empty() {
        return;
    }
    invert_all(den, prefix);
    for (&i, (inv, n)) in at.iter().zip(den.iter().zip(num.iter())) {
        let i = i as usize;
        if let (Some([x1, y1]), Some([x2, _])) = (dst[i], src[i]) {
            // a doubling has x2 = x1: the same formulas with its slope
            let lambda = *inv * n;
            let x3 = lambda.square() - x1 - x2;
            dst[i] = Some([x3, lambda * (x1 - x3) - y1]);
        }
    }
}

fn affine<C: CurveAffine>(x: C::Base, y: C::Base) -> C {
    // every point here is a sum of curve points, so on the curve
    C::from_xy(x, y).unwrap_or(C::identity())
}

/// How a pair of a bucket adds.
#[derive(Clone, Copy)]
enum Kind {
    Add,
    Double,
    Cancel,
}

/// A task's working memory, kept by its thread for the next task.
struct Scratch<F> {
    /// the points, bucket by bucket
    xy: Vec<[F; 2]>,
    /// each bucket's sum so far (none: the identity)
    carry: Vec<Option<[F; 2]>>,
    /// where each bucket starts in `xy`, and how many points it holds
    start: Vec<u32>,
    len: Vec<u32>,
    fill: Vec<u32>,
    pairs: Vec<(u32, Kind)>,
    /// per pair: the slope's numerator and denominator
    num: Vec<F>,
    den: Vec<F>,
    prefix: Vec<F>,
}

impl<F> Default for Scratch<F> {
    fn default() -> Self {
        Scratch {
            xy: Vec::new(),
            carry: Vec::new(),
            start: Vec::new(),
            len: Vec::new(),
            fill: Vec::new(),
            pairs: Vec::new(),
            num: Vec::new(),
            den: Vec::new(),
            prefix: Vec::new(),
        }
    }
}

/// Add each bucket's points pairwise, all buckets' pairs in one round with
/// one inversion, until each bucket holds at most one point.
fn reduce_buckets<F: Field>(sc: &mut Scratch<F>) {
    let Scratch {
        xy,
        start,
        len,
        pairs,
        num,
        den,
        prefix,
        ..
    } = sc;
    loop {
        pairs.clear();
        num.clear();
        den.clear();
        for (j, l) in len.iter().enumerate() {
            let s = start[j];
            for k in 0..l / 2 {
                let i = (s + 2 * k) as usize;
                let ([x1, y1], [x2, y2]) = (xy[i], xy[i + 1]);
                let dx = x2 - x1;
                if !bool::from(dx.is_zero()) {
                    pairs.push((i as u32, Kind::Add));
                    num.push(y2 - y1);
                    den.push(dx);
                } else if y1 == y2 && !bool::from(y1.is_zero()) {
                    pairs.push((i as u32, Kind::Double));
                    let xx = x1.square();
                    num.push(xx + xx.double());
                    den.push(y1.double());
                } else {
                    // P + (−P) (or a point of order two): the identity
                    pairs.push((i as u32, Kind::Cancel));
                    num.push(F::ZERO);
                    den.push(F::ONE);
                }
            }
        }
        if pairs.is_empty() {
            return;
        }
        invert_all(den, prefix);
        // the slopes, each independent of the others (a short loop the
        // processor overlaps)
        for (d, n) in den.iter_mut().zip(num.iter()) {
            *d *= n;
        }
        // results compacted to the front of each bucket; an odd last point follows
        let mut p = 0;
        for (j, l) in len.iter_mut().enumerate() {
            let s = start[j] as usize;
            let mut out = s;
            for _ in 0..*l / 2 {
                let (i, kind) = pairs[p];
                let i = i as usize;
                let ([x1, y1], [x2, _]) = (xy[i], xy[i + 1]);
                if let Kind::Cancel = kind {
                    p += 1;
                    continue;
                }
                let lambda = den[p];
                let x3 = lambda.square() - x1 - x2;
                let y3 = lambda * (x1 - x3) - y1;
                xy[out] = [x3, y3];
                out += 1;
                p += 1;
            }
            if *l % 2 == 1 {
                xy[out] = xy[s + *l as usize - 1];
                out += 1;
            }
            *l = (out - s) as u32;
        }
    }
}

/// Replace every element of `den` (none zero) by its inverse: Montgomery's
/// trick, one inversion for them all, over four interleaved product chains
/// so the multiplications of one do not wait on another's.
fn invert_all<F: Field>(den: &mut [F], prefix: &mut Vec<F>) {
    const LANES: usize = 4;
    prefix.clear();
    let mut acc = [F::ONE; LANES];
    for (k, d) in den.iter().enumerate() {
        prefix.push(acc[k % LANES]);
        acc[k % LANES] *= d;
    }
    // the lanes' products inverted together
    let p01 = acc[0] * acc[1];
    let p23 = acc[2] * acc[3];
    let all = (p01 * p23).invert().unwrap_or(F::ZERO);
    let (i01, i23) = (all * p23, all * p01);
    let mut inv = [i01 * acc[1], i01 * acc[0], i23 * acc[3], i23 * acc[2]];
    for k in (0..den.len()).rev() {
        let dk = den[k];
        den[k] = inv[k % LANES] * prefix[k];
        inv[k % LANES] *= dk;
    }
}

/// The window size with the least modelled work for `n` points of `width`
/// bits: per window, one affine addition a point plus ≈ 3 a bucket (its
/// two running-sum additions, their share of the inversions and of the
/// segments' join).
fn best_window(n: usize, width: u32) -> u32 {
    (1..=16u32)
        .min_by_key(|&c| {
            let windows = u64::from(width / c + 1);
            windows * (n as u64 + 3 * (1u64 << (c - 1)))
        })
        .unwrap_or(1)
}

#[cfg(test)]
mod tests {
    use super::*;
    use group::prime::PrimeCurveAffine;
    use group::Curve;
    use rand_chacha::rand_core::{RngCore, SeedableRng};
    use rand_chacha::ChaCha20Rng;

    fn check<C: CurveAffine>(scalars: &[C::Scalar], bases: &[C]) {
        let ours = msm(scalars, bases);
        let theirs = halo2curves::msm::msm_best(scalars, bases);
        assert_eq!(ours.to_affine(), theirs.to_affine(), "n = {}", scalars.len());
    }

    fn inputs<C: CurveAffine>(n: usize, seed: u64) -> (Vec<C::Scalar>, Vec<C>) {
        let mut rng = ChaCha20Rng::seed_from_u64(seed);
        let g = C::generator();
        let mut p = C::Curve::random(&mut rng);
        let mut bases = Vec::with_capacity(n);
        for _ in 0..n {
            p += g;
            bases.push(p.to_affine());
        }
        let scalars = (0..n)
            .map(|k| match k % 7 {
                0 => C::Scalar::random(&mut rng),
                1 => C::Scalar::from(rng.next_u64() & 1),
                2 => C::Scalar::from(rng.next_u64() & 0xff),
                3 => -C::Scalar::from(rng.next_u64() & 0xffff),
                4 => C::Scalar::from(rng.next_u64()),
                5 => -C::Scalar::from(u64::from(rng.next_u32())),
                _ => -C::Scalar::ONE,
            })
            .collect();
        (scalars, bases)
    }

    #[test]
    fn agrees_with_halo2curves_on_both_curves() {
        for n in [1, 2, 17, 300, 5000] {
            let (s, b) = inputs::<halo2curves::bn256::G1Affine>(n, n as u64);
            check(&s, &b);
            let (s, b) = inputs::<halo2curves::grumpkin::G1Affine>(n, n as u64 + 1);
            check(&s, &b);
        }
    }

    #[test]
    fn straus_agrees_at_every_small_size() {
        // every size the few-point path takes, and the first Pippenger one
        for n in 0..=STRAUS_MAX + 1 {
            let (s, b) = inputs::<halo2curves::bn256::G1Affine>(n, 100 + n as u64);
            check(&s, &b);
            let (s, b) = inputs::<halo2curves::grumpkin::G1Affine>(n, 200 + n as u64);
            check(&s, &b);
        }
        // equal and opposite points, zero scalars, the identity
        type A = halo2curves::bn256::G1Affine;
        let g = A::generator();
        let two = <A as PrimeCurveAffine>::Scalar::from(2);
        let s = [two, -two, <A as PrimeCurveAffine>::Scalar::ZERO, two, -<A as PrimeCurveAffine>::Scalar::ONE];
        let b = [g, g, g, A::identity(), -g];
        check(&s, &b);
        assert_eq!(msm(&s, &b).to_affine(), g);
    }

    #[test]
    fn wnaf_digits_sum_to_the_number() {
        let mut rng = ChaCha20Rng::seed_from_u64(5);
        let cases = [[0u64; 4], [1, 0, 0, 0], [15, 0, 0, 0], [16, 0, 0, 0], [u64::MAX; 4]];
        let random: Vec<[u64; 4]> = (0..200).map(|_| [rng.next_u64(), rng.next_u64(), rng.next_u64(), rng.next_u64()]).collect();
        for l in cases.iter().chain(&random) {
            let d = wnaf(l);
            // odd digits within ±15, w − 1 zeros after each
            for (i, x) in d.iter().enumerate() {
                if *x != 0 {
                    assert!(x % 2 != 0 && x.unsigned_abs() < 16);
                    assert!(d[i + 1..].iter().take(WNAF as usize - 1).all(|y| *y == 0));
                }
            }
            // Σ dᵢ·2ⁱ over 320-bit two's complement
            let mut acc = [0u64; 5];
            for x in d.iter().rev() {
                let mut carry = 0u64;
                for a in acc.iter_mut() {
                    let nx = (*a << 1) | carry;
                    carry = *a >> 63;
                    *a = nx;
                }
                add_signed(&mut acc, i64::from(*x));
            }
            assert_eq!(&acc[..4], &l[..]);
            assert_eq!(acc[4], 0);
        }
    }

    #[test]
    fn full_width_scalars_only() {
        let mut rng = ChaCha20Rng::seed_from_u64(7);
        type A = halo2curves::grumpkin::G1Affine;
        let (_, b) = inputs::<A>(20000, 3);
        let s: Vec<_> = (0..b.len()).map(|_| <A as PrimeCurveAffine>::Scalar::random(&mut rng)).collect();
        check(&s, &b);
    }

    #[test]
    fn buckets_carried_across_slices() {
        // more points than one slice holds (2¹⁵ at these window sizes), so
        // each bucket's sum is carried into the next slice
        type A = halo2curves::bn256::G1Affine;
        let mut rng = ChaCha20Rng::seed_from_u64(11);
        let (_, b) = inputs::<A>(70_000, 5);
        let small: Vec<_> = (0..b.len()).map(|_| <A as PrimeCurveAffine>::Scalar::from(rng.next_u64() & 0xff)).collect();
        check(&small, &b);
        let full: Vec<_> = (0..40_000).map(|_| <A as PrimeCurveAffine>::Scalar::random(&mut rng)).collect();
        check(&full, &b[..40_000]);
    }

    #[test]
    fn equal_opposite_and_identity_points() {
        type A = halo2curves::bn256::G1Affine;
        type S = halo2curves::bn256::Fr;
        let mut rng = ChaCha20Rng::seed_from_u64(9);
        let p = halo2curves::bn256::G1::random(&mut rng).to_affine();
        let q = -p;
        // the same point many times (doublings), its negation (cancellations),
        // the identity, zero scalars
        let mut bases: Vec<A> = Vec::new();
        let mut scalars: Vec<S> = Vec::new();
        for k in 0..3000u64 {
            bases.push(match k % 4 {
                0 | 1 => p,
                2 => q,
                _ => A::identity(),
            });
            scalars.push(match k % 5 {
                0 => S::ZERO,
                1 => S::from(k % 3 + 1),
                2 => S::random(&mut rng),
                3 => -S::from(k % 11),
                _ => S::from(5),
            });
        }
        check(&scalars, &bases);
        // everything cancels
        let s = vec![S::from(3); 2];
        check(&s, &[p, q]);
        let naive = bases.iter().zip(&scalars).fold(halo2curves::bn256::G1::identity(), |a, (b, s)| a + *b * s);
        assert_eq!(msm(&scalars, &bases).to_affine(), naive.to_affine());
    }

    /// Buckets that all hold ±P: the segments' running sums double (the
    /// next bucket equals the sum so far) and cancel (it is its negation).
    #[test]
    fn running_sums_double_and_cancel() {
        type S = halo2curves::bn256::Fr;
        let mut rng = ChaCha20Rng::seed_from_u64(13);
        let p = halo2curves::bn256::G1::random(&mut rng).to_affine();
        for (n, alternate) in [(600u64, false), (600, true), (70, true), (5000, false)] {
            let bases: Vec<_> = (0..n).map(|k| if alternate && k % 2 == 1 { -p } else { p }).collect();
            let scalars: Vec<S> = (1..=n).map(S::from).collect();
            check(&scalars, &bases);
            let naive = bases.iter().zip(&scalars).fold(halo2curves::bn256::G1::identity(), |a, (b, s)| a + *b * s);
            assert_eq!(msm(&scalars, &bases).to_affine(), naive.to_affine(), "n = {n}, alternating {alternate}");
        }
    }

    #[test]
    fn empty_and_mismatched_lengths() {
        type A = halo2curves::bn256::G1Affine;
        let (s, b) = inputs::<A>(10, 1);
        assert_eq!(msm::<A>(&[], &b), halo2curves::bn256::G1::identity());
        // the first min(len) pairs, as the crate's entry point does
        assert_eq!(msm(&s[..4], &b).to_affine(), halo2curves::msm::msm_best(&s[..4], &b[..4]).to_affine());
    }
}
