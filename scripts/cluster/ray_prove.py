#!/usr/bin/env python3
"""Prove a zkstep run on a Ray cluster: one Ray task per shard.

Each task runs `zkstep prove-run --shard I/N` on a worker; the run directory
and the keys must be on a file system every worker sees (a local cluster's
machine, or a shared mount such as NFS on a real cluster). A shard writes
only its own proof files, atomically, and skips proofs that already exist and
verify, so a failed task is simply run again. After every shard is done,
`zkstep verify-run` checks the whole run on the driver.

    python3 scripts/cluster/ray_prove.py --run run/ --keys keys/ --shards 8 \
        [--segment 4] [--address auto] [--zkstep /path/to/zkstep]

Without --address a local Ray cluster of --workers CPUs is started (the
tests use this); with --address auto (or host:port) the script joins an
existing cluster (`ray start --head` / `ray start --address=…` on the nodes).
Exit status: 0 when every shard succeeded and verify-run accepted the run.
"""

import argparse
import json
import os
import shutil
import socket
import subprocess
import sys
import time


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--run", required=True, help="run directory (from zkstep train)")
    p.add_argument("--keys", required=True, help="keys directory (from zkstep keygen)")
    p.add_argument("--shards", type=int, default=None, help="shards (default: --workers)")
    p.add_argument("--workers", type=int, default=2, help="CPUs of a local cluster (no --address)")
    p.add_argument("--segment", type=int, default=None, help="prove segments of K steps")
    p.add_argument("--address", default=None, help="join this Ray cluster (e.g. auto)")
    p.add_argument("--zkstep", default=shutil.which("zkstep") or "zkstep",
                   help="the zkstep binary every worker runs (same path on every node)")
    p.add_argument("--json", action="store_true", help="print a JSON report")
    return p.parse_args()


def main():
    a = parse_args()
    try:
        import ray
    except ImportError:
        sys.exit("error: Ray is not installed (python3 -m pip install 'ray>=2.40')")
    shards = a.shards or a.workers
    if shards < 1:
        sys.exit("error: --shards must be at least 1")
    run_dir, keys = os.path.abspath(a.run), os.path.abspath(a.keys)
    zkstep = os.path.abspath(a.zkstep) if os.path.exists(a.zkstep) else a.zkstep
    if a.address:
        ray.init(address=a.address, logging_level="ERROR")
    else:
        ray.init(num_cpus=a.workers, include_dashboard=False, logging_level="ERROR")

    @ray.remote(num_cpus=1, max_retries=2)
    def prove_shard(i, n):
        cmd = [zkstep, "prove-run", "--run", run_dir, "--keys", keys,
               "--shard", f"{i}/{n}", "--msm", "cpu", "--json"]
        if a.segment:
            cmd += ["--segment", str(a.segment)]
        t = time.time()
        o = subprocess.run(cmd, capture_output=True, text=True, stdin=subprocess.DEVNULL)
        return {"shard": f"{i}/{n}", "rc": o.returncode, "host": socket.gethostname(),
                "pid": os.getpid(), "seconds": round(time.time() - t, 2),
                "proofs": json.loads(o.stdout)["proofs"] if o.returncode == 0 else None,
                "stderr": o.stderr[-2000:]}

    t0 = time.time()
    results = ray.get([prove_shard.remote(i, shards) for i in range(shards)])
    ray.shutdown()
    failed = [r for r in results if r["rc"] != 0]
    v = subprocess.run([zkstep, "verify-run", "--run", run_dir,
                        "--vk", os.path.join(keys, "verifying.key"), "--json"],
                       capture_output=True, text=True, stdin=subprocess.DEVNULL)
    report = {"run": run_dir, "shards": results, "seconds": round(time.time() - t0, 2),
              "workers": sorted({(r["host"], r["pid"]) for r in results}),
              "verify_run": json.loads(v.stdout) if v.stdout.strip() else None,
              "accepted": v.returncode == 0 and not failed}
    if a.json:
        print(json.dumps(report))
    else:
        for r in results:
            n = len(r["proofs"] or [])
            print(f"shard {r['shard']} on {r['host']} (pid {r['pid']}): "
                  f"{'ok' if r['rc'] == 0 else 'FAILED'}, {n} proofs, {r['seconds']} s")
        for r in failed:
            print(f"shard {r['shard']} failed:\n{r['stderr']}", file=sys.stderr)
        print(v.stdout.strip() if not v.returncode else "verify-run: ACCEPTED")
        if v.returncode:
            print(v.stderr.strip(), file=sys.stderr)
    sys.exit(0 if report["accepted"] else 1)


if __name__ == "__main__":
    main()
