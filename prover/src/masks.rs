//! The compression's masks drawn while the prover folds, on threads that
//! take only otherwise idle CPU.
//!
//! A compression first folds a random relaxed instance into each of the
//! IVC's last ones (zero knowledge; `zkstep_fold::Masks`): a random W, its
//! error vector E and their commitments, about 1 s of MSMs at width 256.
//! They depend on the parameters alone, and the folds leave a core idle for
//! about a tenth of their time (synthesis, hashing and the secondary are
//! serial). Drawn at normal priority beside the folds they only slow them
//! down by as much as they save; under Linux's `SCHED_IDLE` they run in
//! those gaps instead, and whatever is left runs while the prover waits for
//! them. With a GPU, or off Linux, they are drawn when compression starts,
//! as before.

use crate::error::{ProverError, Result};
use zkstep_circuits::engine::{Masks, PublicParams};

/// Run `work` with the masks for `pp` drawn beside it; `work` receives the
/// function that waits for them (call it once, when compression starts).
pub(crate) fn beside<T>(
    pp: &PublicParams,
    work: impl FnOnce(&mut dyn FnMut() -> Result<Masks>) -> Result<T>,
) -> Result<T> {
    let draw = || Masks::draw(pp).map_err(|e| ProverError::Fold(format!("compression's masks: {e}")));
    let pool = match in_background() {
        true => idle_pool(),
        false => None,
    };
    let Some(pool) = pool else {
        return work(&mut || draw());
    };
    std::thread::scope(|sc| {
        let mut handle = Some(sc.spawn(|| pool.install(draw)));
        work(&mut || {
            let h = handle
                .take()
                .ok_or_else(|| ProverError::Invalid("the masks were taken twice".into()))?;
            h.join()
                .map_err(|_| ProverError::Invalid("drawing the masks panicked".into()))?
        })
    })
}

/// Whether the masks' MSMs run on the CPU (a GPU takes them in a moment,
/// and is better not shared between two threads' MSMs).
fn in_background() -> bool {
    cfg!(target_os = "linux") && zkstep_msm::route(1 << 20) == zkstep_msm::Backend::Cpu
}

/// A pool of as many threads as the global one, each under `SCHED_IDLE`;
/// None when the pool cannot be built.
fn idle_pool() -> Option<rayon::ThreadPool> {
    rayon::ThreadPoolBuilder::new()
        .num_threads(rayon::current_num_threads())
        .thread_name(|i| format!("zkstep-masks-{i}"))
        .start_handler(|_| lower_priority())
        .build()
        .ok()
}

/// Put the calling thread under `SCHED_IDLE` (best effort: at worst the
/// masks compete with the folds, which is still correct).
fn lower_priority() {
    #[cfg(target_os = "linux")]
    {
        use thread_priority::unix::{
            set_thread_priority_and_policy, thread_native_id, NormalThreadSchedulePolicy,
            ThreadSchedulePolicy,
        };
        let _ = set_thread_priority_and_policy(
            thread_native_id(),
            thread_priority::ThreadPriority::Min,
            ThreadSchedulePolicy::Normal(NormalThreadSchedulePolicy::Idle),
        );
    }
}

#[cfg(test)]
mod tests {
    #[cfg(target_os = "linux")]
    #[test]
    fn the_pool_runs_under_sched_idle() {
        let Some(pool) = super::idle_pool() else {
            panic!("no idle pool");
        };
        let policy = pool.install(thread_priority::unix::thread_schedule_policy).unwrap();
        assert_eq!(
            policy,
            thread_priority::unix::ThreadSchedulePolicy::Normal(
                thread_priority::unix::NormalThreadSchedulePolicy::Idle
            )
        );
    }
}
