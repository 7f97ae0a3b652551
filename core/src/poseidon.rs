//! The only place zkstep-core touches nova-snark: the BN254 scalar field `Fr`
//! and the Poseidon sponge (arity 24, standard strength) that nova-snark ships
//! in its frontend. Using the very sponge whose circuit twin lives in the same
//! crate is what lets native and in-circuit commitments agree.
//!
//! Everything zkstep commits to goes through [`h24`]: one absorption of
//! exactly [`RATE`] field elements and one squeeze, i.e. one permutation of
//! width 25, except a chain's chunks of at most 7 elements
//! (`commit::chain_absorb`). Those and the short hashes that live only
//! inside proofs (the challenges, the transcripts' first links, the segment
//! chains) use [`h8`], the same sponge at width 9: half the constraints in
//! a circuit that pays for them in every fold.

use ff::PrimeField;
use generic_array::typenum::{U24, U8};
use nova_snark::frontend::gadgets::poseidon::{
    IOPattern, PoseidonConstants, Simplex, Sponge, SpongeAPI, SpongeOp, SpongeTrait, Strength,
};
use std::sync::OnceLock;

/// The BN254 scalar field (the circuit field of the primary Nova curve).
pub type Fr = nova_snark::provider::bn256_grumpkin::bn256::Scalar;

/// Field elements absorbed per permutation.
pub const RATE: usize = 24;

/// The sponges' constants as nova-snark's serde writes them
/// (`core/presets/`: reading one costs ≈ 1 ms, deriving it ≈ 0.2 s, which a
/// fresh verifier would pay; `presets_are_the_derived_constants` checks
/// them, `ZKSTEP_WRITE_PRESETS=1` rewrites them).
const PRESET24: &[u8] = include_bytes!("../presets/poseidon-fr-u24.bin");
const PRESET8: &[u8] = include_bytes!("../presets/poseidon-fr-u8.bin");

/// Constants read from `preset`, or derived if it does not decode.
fn preset_or<T: for<'de> serde::Deserialize<'de>>(preset: &[u8], derive: impl FnOnce() -> T) -> T {
    postcard::from_bytes(preset).unwrap_or_else(|_| derive())
}

/// The sponge constants (read once; they are deterministic).
pub fn constants() -> &'static PoseidonConstants<Fr, U24> {
    static C: OnceLock<PoseidonConstants<Fr, U24>> = OnceLock::new();
    C.get_or_init(|| preset_or(PRESET24, || Sponge::<Fr, U24>::api_constants(Strength::Standard)))
}

/// The IO pattern of [`h24`]: absorb 24, squeeze 1.
pub fn io_pattern() -> IOPattern {
    io_pattern_of(RATE)
}

/// Field elements absorbed by the short hash [`h8`].
pub const RATE8: usize = 8;

/// The short sponge's constants (width 9).
pub fn constants8() -> &'static PoseidonConstants<Fr, U8> {
    static C: OnceLock<PoseidonConstants<Fr, U8>> = OnceLock::new();
    C.get_or_init(|| preset_or(PRESET8, || Sponge::<Fr, U8>::api_constants(Strength::Standard)))
}

/// The IO pattern of a hash of `rate` elements: absorb them, squeeze 1.
pub fn io_pattern_of(rate: usize) -> IOPattern {
    IOPattern(vec![SpongeOp::Absorb(rate as u32), SpongeOp::Squeeze(1)])
}

/// One absorption of all of `$inputs` (the sponge's rate) and one squeeze,
/// with the constants `$c` (a macro: nova-snark keeps its `Arity` bound private).
macro_rules! sponge_hash {
    ($c:expr, $inputs:expr) => {{
        let inputs: &[Fr] = $inputs;
        let mut sponge = Sponge::new_with_constants($c, Simplex);
        let acc = &mut ();
        sponge.start(io_pattern_of(inputs.len()), None, acc);
        SpongeAPI::absorb(&mut sponge, inputs.len() as u32, inputs, acc);
        let out = SpongeAPI::squeeze(&mut sponge, 1, acc);
        // `finish` only fails if the IO pattern was not followed, which it was just above.
        let _ = sponge.finish(acc);
        out[0]
    }};
}

/// Poseidon hash of exactly 24 field elements.
pub fn h24(inputs: &[Fr; RATE]) -> Fr {
    sponge_hash!(constants(), inputs)
}

/// Poseidon hash of exactly 8 field elements (width 9; short chunks and proof-internal hashes).
pub fn h8(inputs: &[Fr; RATE8]) -> Fr {
    sponge_hash!(constants8(), inputs)
}

/// [`h8`] of up to 8 elements, zero-padded.
pub fn h8_of(inputs: &[Fr]) -> Fr {
    let mut a = [Fr::from(0u64); RATE8];
    a[..inputs.len()].copy_from_slice(inputs);
    h8(&a)
}

/// A field element from 32 digest bytes: the first 31 bytes, little-endian (248 bits < p).
pub fn fr_from_digest_bytes(b: &[u8; 32]) -> Fr {
    let mut repr = [0u8; 32];
    repr[..31].copy_from_slice(&b[..31]);
    Fr::from_repr(repr.into())
        .into_option()
        .unwrap_or_else(|| unreachable!("a 248-bit integer is below p"))
}

/// A field element from a u128.
pub fn fr_from_u128(v: u128) -> Fr {
    Fr::from_u128(v)
}

/// A signed integer as a field element (negative values map to p − |v|).
pub fn fr_from_i128(v: i128) -> Fr {
    if v >= 0 {
        Fr::from_u128(v as u128)
    } else {
        -Fr::from_u128(v.unsigned_abs())
    }
}

/// Canonical hex of a field element: `0x` + 64 big-endian hex digits.
pub fn fr_to_hex(f: &Fr) -> String {
    let repr = f.to_repr();
    let mut be: Vec<u8> = repr.as_ref().to_vec();
    be.reverse();
    format!("0x{}", hex::encode(be))
}

/// Parse [`fr_to_hex`]'s output; `None` if malformed or not below p.
pub fn fr_from_hex(s: &str) -> Option<Fr> {
    let s = s.strip_prefix("0x").unwrap_or(s);
    if s.len() != 64 {
        return None;
    }
    let mut bytes = hex::decode(s).ok()?;
    bytes.reverse();
    let mut repr = [0u8; 32];
    repr.copy_from_slice(&bytes);
    Fr::from_repr(repr.into()).into_option()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hex_round_trip_and_rejects_bad() {
        let f = fr_from_i128(-5);
        assert_eq!(fr_from_hex(&fr_to_hex(&f)), Some(f));
        assert_eq!(fr_from_hex("0x12"), None);
        assert_eq!(fr_from_hex(&format!("0x{}", "f".repeat(64))), None); // ≥ p
    }

    #[test]
    fn h24_is_deterministic_and_sensitive() {
        let mut a = [Fr::from(0u64); RATE];
        let h0 = h24(&a);
        assert_eq!(h0, h24(&a));
        a[23] = Fr::from(1u64);
        assert_ne!(h0, h24(&a));
    }

    /// The presets are nova-snark's derivation byte for byte, and hash as
    /// the derived constants do.
    #[test]
    fn presets_are_the_derived_constants() {
        let d24 = Sponge::<Fr, U24>::api_constants(Strength::Standard);
        let d8 = Sponge::<Fr, U8>::api_constants(Strength::Standard);
        let b24 = postcard::to_stdvec(&d24).unwrap();
        let b8 = postcard::to_stdvec(&d8).unwrap();
        if std::env::var_os("ZKSTEP_WRITE_PRESETS").is_some() {
            let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("presets");
            std::fs::write(dir.join("poseidon-fr-u24.bin"), &b24).unwrap();
            std::fs::write(dir.join("poseidon-fr-u8.bin"), &b8).unwrap();
            return;
        }
        assert!(b24 == PRESET24 && b8 == PRESET8, "stale presets: rerun with ZKSTEP_WRITE_PRESETS=1");
        let x: [Fr; RATE] = std::array::from_fn(|k| Fr::from(k as u64 * 31 + 5));
        let y: [Fr; RATE8] = std::array::from_fn(|k| x[k]);
        assert_eq!(h24(&x), sponge_hash!(&d24, &x));
        assert_eq!(h8(&y), sponge_hash!(&d8, &y));
    }
}
