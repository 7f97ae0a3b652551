//! The secondary's verifier key, written as what rebuilds it: its R1CS
//! shape and its commitment key in nova-snark's uncompressed key format
//! (`save_setup` / `load_setup`: affine coordinates, each point checked on
//! the curve). Through serde the key's 2¹⁴ Grumpkin generators are
//! compressed, and reading each costs a square root: ≈ 0.4 s of a fresh
//! `zkstep-verify` on the development machine, against ≈ 10 ms this way.
//! The key is rebuilt by the SNARK's own `setup`, so it is the very key
//! keygen made (same padding, same digest).

use crate::instance::CommitmentKey;
use nova_snark::r1cs::R1CSShape;
use nova_snark::traits::commitment::{CommitmentEngineTrait, Len};
use nova_snark::traits::snark::RelaxedR1CSSNARKTrait;
use nova_snark::traits::Engine;
use serde::de::{self, SeqAccess, Visitor};
use serde::ser::SerializeTuple;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::fmt;
use std::marker::PhantomData;

/// A SNARK's verifier key with the shape and commitment key it was made from.
pub(crate) struct RebuiltVk<E: Engine, S: RelaxedR1CSSNARKTrait<E>> {
    shape: R1CSShape<E>,
    ck: CommitmentKey<E>,
    /// The key itself.
    pub vk: S::VerifierKey,
}

impl<E: Engine, S: RelaxedR1CSSNARKTrait<E>> RebuiltVk<E, S> {
    /// `S::setup` on the shape and key, keeping both to write them.
    pub fn setup(ck: &CommitmentKey<E>, shape: &R1CSShape<E>) -> Result<(S::ProverKey, Self), nova_snark::errors::NovaError> {
        let (pk, vk) = S::setup(ck, shape)?;
        Ok((
            pk,
            RebuiltVk {
                shape: shape.clone(),
                ck: ck.clone(),
                vk,
            },
        ))
    }
}

impl<E: Engine, S: RelaxedR1CSSNARKTrait<E>> Serialize for RebuiltVk<E, S> {
    fn serialize<Z: Serializer>(&self, s: Z) -> Result<Z::Ok, Z::Error> {
        let mut raw = std::io::Cursor::new(Vec::new());
        E::CE::save_setup(&self.ck, &mut raw).map_err(|e| serde::ser::Error::custom(format!("{e:?}")))?;
        let raw = raw.into_inner();
        let mut t = s.serialize_tuple(3)?;
        t.serialize_element(&self.shape)?;
        t.serialize_element(&(self.ck.length() as u64))?;
        t.serialize_element(&Raw(raw))?;
        t.end()
    }
}

impl<'de, E: Engine, S: RelaxedR1CSSNARKTrait<E>> Deserialize<'de> for RebuiltVk<E, S> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V<E, S>(PhantomData<(E, S)>);
        impl<'de, E: Engine, S: RelaxedR1CSSNARKTrait<E>> Visitor<'de> for V<E, S> {
            type Value = RebuiltVk<E, S>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a shape, a key length and an uncompressed commitment key")
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
                let missing = || de::Error::custom("truncated verifier key");
                let shape: R1CSShape<E> = seq.next_element()?.ok_or_else(missing)?;
                let n: u64 = seq.next_element()?.ok_or_else(missing)?;
                let raw: Raw = seq.next_element()?.ok_or_else(missing)?;
                // a length the bytes cannot hold (a point takes ≥ 32 bytes) is
                // refused before anything is allocated for it
                if n == 0 || !n.is_power_of_two() || n.saturating_mul(32) > raw.0.len() as u64 {
                    return Err(de::Error::custom(format!("commitment key of {n} points in {} bytes", raw.0.len())));
                }
                let mut r = std::io::Cursor::new(&raw.0[..]);
                let ck = E::CE::load_setup(&mut r, b"", n as usize)
                    .map_err(|e| de::Error::custom(format!("commitment key: {e:?}")))?;
                if r.position() != raw.0.len() as u64 {
                    return Err(de::Error::custom("trailing bytes after the commitment key"));
                }
                let (_, vk) = S::setup(&ck, &shape).map_err(|e| de::Error::custom(format!("verifier key: {e}")))?;
                Ok(RebuiltVk { shape, ck, vk })
            }
        }
        d.deserialize_tuple(3, V(PhantomData))
    }
}

/// Bytes written as one byte string (serde writes a `Vec<u8>` element by element).
struct Raw(Vec<u8>);

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
