//! Commitment keys written uncompressed, in nova-snark's own key format
//! (`save_setup` / `load_setup`: affine coordinates, every point checked on
//! the curve, HyperKZG's τ·H checked in its subgroup). Through serde the
//! points are compressed, and reading each costs a square root: ≈ 0.4 s
//! for the secondary's 2¹⁴ Grumpkin generators in a fresh `zkstep-verify`,
//! and most of the time a proving key takes to read (2¹⁷–2²¹ BN254 points).
//!
//! [`ck`] is a `#[serde(with)]` module for a commitment key, [`StoredKey`]
//! a key on its own (a points file), [`LazyKey`] one whose points are
//! checked when asked for (the secondary's IPA key in a verifying key,
//! `crate::spartan`, checked beside the matrices' decoding).

use crate::instance::CommitmentKey;
use nova_snark::traits::commitment::{CommitmentEngineTrait, Len};
use nova_snark::traits::Engine;
use serde::de::{self, Visitor};
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::fmt;

/// The label every zkstep key's blinding generator is derived from
/// (nova-snark's `R1CSShape::commitment_key*` use it; HyperKZG's key format
/// does not store that generator, so reading re-derives it from the label,
/// and [`ck::deserialize`] checks it against the one written).
const LABEL: &[u8] = b"ck";

/// A commitment key as (points, raw bytes, blinding key); see the module header.
pub(crate) mod ck {
    use super::*;

    pub fn serialize<E: Engine, Z: Serializer>(ck: &CommitmentKey<E>, s: Z) -> Result<Z::Ok, Z::Error> {
        LazyKey::<E>::of(ck).map_err(serde::ser::Error::custom)?.serialize(s)
    }

    pub fn deserialize<'de, E: Engine, D: Deserializer<'de>>(d: D) -> Result<CommitmentKey<E>, D::Error> {
        LazyKey::<E>::deserialize(d)?.key().map_err(de::Error::custom)
    }
}

/// A commitment key stored on its own (a file of G1 powers): uncompressed,
/// every point checked when read, as [`ck`] does inside a key file.
#[derive(Serialize, Deserialize)]
#[serde(bound = "")]
pub struct StoredKey<E: Engine> {
    /// The key.
    #[serde(serialize_with = "ck::serialize::<E, _>", deserialize_with = "ck::deserialize::<E, _>")]
    pub key: CommitmentKey<E>,
}

/// A commitment key as written: its length, its points in nova-snark's
/// format and its blinding key; the points are read and checked by
/// [`LazyKey::key`], not while the file is decoded, so a reader can do
/// that beside other work (the secondary's IPA key in a verifying key,
/// `crate::spartan`, beside the matrices).
#[derive(Serialize, Deserialize)]
#[serde(bound = "")]
pub struct LazyKey<E: Engine> {
    n: u64,
    raw: Raw,
    dk: <E::CE as CommitmentEngineTrait<E>>::DerandKey,
}

impl<E: Engine> LazyKey<E> {
    /// The key as written.
    pub fn of(ck: &CommitmentKey<E>) -> Result<Self, String> {
        let n = ck.length();
        if !n.is_power_of_two() {
            return Err(format!("a commitment key of {n} points (not a power of two)"));
        }
        let mut raw = std::io::Cursor::new(Vec::new());
        E::CE::save_setup(ck, &mut raw).map_err(|e| format!("{e:?}"))?;
        Ok(LazyKey {
            n: n as u64,
            raw: Raw(raw.into_inner()),
            dk: E::CE::derand_key(ck),
        })
    }

    /// The key, every point checked (nova-snark's `load_setup`) and its
    /// blinding key the one its label gives.
    pub fn key(&self) -> Result<CommitmentKey<E>, String> {
        let (n, raw) = (self.n, &self.raw.0);
        // a length the bytes cannot hold (a point takes ≥ 32 bytes) is
        // refused before anything is allocated for it
        if n == 0 || !n.is_power_of_two() || n.saturating_mul(32) > raw.len() as u64 {
            return Err(format!("commitment key of {n} points in {} bytes", raw.len()));
        }
        let mut r = std::io::Cursor::new(&raw[..]);
        let ck = E::CE::load_setup(&mut r, LABEL, n as usize).map_err(|e| format!("commitment key: {e:?}"))?;
        if r.position() != raw.len() as u64 || ck.length() as u64 != n {
            return Err("commitment key: bytes past its points".into());
        }
        let same = postcard::to_stdvec(&E::CE::derand_key(&ck)).ok() == postcard::to_stdvec(&self.dk).ok();
        if !same {
            return Err("commitment key: another blinding generator".into());
        }
        Ok(ck)
    }
}

/// Bytes written as one byte string (serde writes a `Vec<u8>` element by element).
#[derive(Clone)]
pub(crate) struct Raw(pub(crate) Vec<u8>);

impl Serialize for Raw {
    fn serialize<Z: Serializer>(&self, s: Z) -> Result<Z::Ok, Z::Error> {
        s.serialize_bytes(&self.0)
    }
}

impl<'de> Deserialize<'de> for Raw {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = Raw;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a byte string")
            }
            fn visit_bytes<Er: de::Error>(self, v: &[u8]) -> Result<Raw, Er> {
                Ok(Raw(v.to_vec()))
            }
            fn visit_byte_buf<Er: de::Error>(self, v: Vec<u8>) -> Result<Raw, Er> {
                Ok(Raw(v))
            }
        }
        d.deserialize_bytes(V)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    type E = nova_snark::provider::GrumpkinEngine;

    fn encode(label: &'static [u8]) -> Vec<u8> {
        let ck = <E as Engine>::CE::setup(label, 8).unwrap();
        postcard::to_stdvec(&LazyKey::<E>::of(&ck).unwrap()).unwrap()
    }

    fn decode(b: &[u8]) -> Result<CommitmentKey<E>, String> {
        postcard::from_bytes::<LazyKey<E>>(b).map_err(|e| e.to_string())?.key()
    }

    /// A key reads back as itself; a generator moved off the curve, another
    /// key's blinding generator, a cut key and a length past the bytes are refused.
    #[test]
    fn a_changed_commitment_key_is_refused() {
        let a = encode(b"ck");
        let back = decode(&a).unwrap();
        assert_eq!(postcard::to_stdvec(&LazyKey::<E>::of(&back).unwrap()).unwrap(), a);
        // n (1 byte), the byte string's length (2), "PEDERSEN_KEY" (12), h (64), then the generators
        let mut off_curve = a.clone();
        off_curve[1 + 2 + 12 + 64 + 70] ^= 1;
        assert!(decode(&off_curve).is_err());
        let b = encode(b"another label");
        let mut spliced = a.clone();
        let n = a.len();
        spliced[n - 32..].copy_from_slice(&b[n - 32..]);
        let e = decode(&spliced).err().map(|e| e.to_string());
        assert!(e.is_some(), "another blinding generator accepted");
        assert!(decode(&a[..a.len() - 40]).is_err());
        let mut long = a.clone();
        long[0] = 64; // 64 points claimed, 8 written
        assert!(decode(&long).is_err());
    }
}
