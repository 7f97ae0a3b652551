//! zkstep's stand-in for the `blitzar` crate, put in its place by
//! `[patch.crates-io]`: nova-snark 0.76 (feature `blitzar`) sends every BN254
//! `vartime_multiscalar_mul` here, and this crate hands it to
//! `zkstep_msm::msm`, which runs it on the CPU or the GPU. It offers only
//! what nova-snark calls; nothing else of blitzar's API exists here.

/// Scalar sequences as nova-snark passes them.
pub mod sequence {
    /// One MSM's scalars, each 32 little-endian bytes of a canonical BN254 Fr.
    pub struct Sequence<'a> {
        /// The scalars.
        pub data: &'a [[u8; 32]],
    }

    impl<'a> From<&'a Vec<[u8; 32]>> for Sequence<'a> {
        fn from(v: &'a Vec<[u8; 32]>) -> Self {
            Sequence { data: v }
        }
    }

    impl<'a> From<&'a [[u8; 32]]> for Sequence<'a> {
        fn from(v: &'a [[u8; 32]]) -> Self {
            Sequence { data: v }
        }
    }
}

/// The one computation nova-snark asks for.
pub mod compute {
    use super::sequence::Sequence;
    use ff::FromUniformBytes;
    use halo2curves::bn256::{Fr, G1Affine, G1};

    /// `out[i] = Σ_j seqs[i][j]·generators[j]` for every sequence.
    ///
    /// nova-snark builds the byte strings from field elements, so they are
    /// canonical; a non-canonical one (a bug upstream) is reduced mod r
    /// rather than trusted or panicked on.
    pub fn compute_bn254_g1_uncompressed_commitments_with_halo2_generators(
        out: &mut [G1],
        seqs: &[Sequence<'_>],
        generators: &[G1Affine],
    ) {
        for (o, s) in out.iter_mut().zip(seqs) {
            let scalars: Vec<Fr> = s.data.iter().map(scalar_from_bytes).collect();
            *o = zkstep_msm::msm(&scalars, generators);
        }
    }

    fn scalar_from_bytes(b: &[u8; 32]) -> Fr {
        Option::from(Fr::from_bytes(b)).unwrap_or_else(|| {
            let mut wide = [0u8; 64];
            wide[..32].copy_from_slice(b);
            Fr::from_uniform_bytes(&wide)
        })
    }
}
