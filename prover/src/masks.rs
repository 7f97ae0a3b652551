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
//! those gaps instead. When compression needs them their threads go back to
//! normal priority, so on a machine busy with other work (tests side by
//! side, several provers) what is left is not starved. With a GPU, or off
//! Linux, they are drawn when compression starts, as before.

use crate::error::{ProverError, Result};
use std::sync::{Arc, Mutex};
#[cfg(target_os = "linux")]
use thread_priority::unix::NormalThreadSchedulePolicy;
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
        let mut handle = Some(sc.spawn(|| pool.0.install(draw)));
        let out = work(&mut || {
            let h = handle
                .take()
                .ok_or_else(|| ProverError::Invalid("the masks were taken twice".into()))?;
            pool.restore();
            h.join()
                .map_err(|_| ProverError::Invalid("drawing the masks panicked".into()))?
        });
        // after an early error the scope still waits for them: not at idle priority
        pool.restore();
        out
    })
}

/// Whether the masks' MSMs run on the CPU (a GPU takes them in a moment,
/// and is better not shared between two threads' MSMs).
fn in_background() -> bool {
    cfg!(target_os = "linux") && zkstep_msm::route(1 << 20) == zkstep_msm::Backend::Cpu
}

/// A rayon pool whose threads run under `SCHED_IDLE` until [`IdlePool::restore`].
struct IdlePool(rayon::ThreadPool, Arc<Mutex<Vec<Native>>>);

#[cfg(target_os = "linux")]
type Native = thread_priority::unix::ThreadId;
#[cfg(not(target_os = "linux"))]
type Native = ();

impl IdlePool {
    /// Its threads back to the normal policy (best effort).
    fn restore(&self) {
        #[cfg(target_os = "linux")]
        if let Ok(ids) = self.1.lock() {
            for id in ids.iter() {
                set_policy(*id, NormalThreadSchedulePolicy::Other);
            }
        }
    }
}

/// A pool of as many threads as the global one, each under `SCHED_IDLE`;
/// None when the pool cannot be built.
fn idle_pool() -> Option<IdlePool> {
    let ids: Arc<Mutex<Vec<Native>>> = Arc::default();
    let seen = ids.clone();
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(rayon::current_num_threads())
        .thread_name(|i| format!("zkstep-masks-{i}"))
        .start_handler(move |_| {
            #[cfg(target_os = "linux")]
            {
                let id = thread_priority::unix::thread_native_id();
                set_policy(id, NormalThreadSchedulePolicy::Idle);
                if let Ok(mut v) = seen.lock() {
                    v.push(id);
                }
            }
            let _ = &seen;
        })
        .build()
        .ok()?;
    Some(IdlePool(pool, ids))
}

/// Put thread `id` under `policy` (best effort: at worst the masks compete
/// with the folds, or wait at idle priority, which is still correct).
#[cfg(target_os = "linux")]
fn set_policy(id: Native, policy: NormalThreadSchedulePolicy) {
    let _ = thread_priority::unix::set_thread_priority_and_policy(
        id,
        thread_priority::ThreadPriority::Min,
        thread_priority::unix::ThreadSchedulePolicy::Normal(policy),
    );
}

#[cfg(test)]
mod tests {
    #[cfg(target_os = "linux")]
    #[test]
    fn the_pool_runs_under_sched_idle_until_restored() {
        use thread_priority::unix::{thread_schedule_policy, NormalThreadSchedulePolicy, ThreadSchedulePolicy};
        let Some(pool) = super::idle_pool() else {
            panic!("no idle pool");
        };
        let policies = || {
            pool.0.broadcast(|_| thread_schedule_policy().unwrap())
        };
        let idle = ThreadSchedulePolicy::Normal(NormalThreadSchedulePolicy::Idle);
        assert!(policies().iter().all(|p| *p == idle));
        pool.restore();
        let normal = ThreadSchedulePolicy::Normal(NormalThreadSchedulePolicy::Other);
        assert!(policies().iter().all(|p| *p == normal));
    }
}
