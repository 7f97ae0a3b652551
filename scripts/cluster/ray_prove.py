#!/usr/bin/env python3
"""Prove a zkstep run, or a whole federated round, on a Ray cluster.

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

With --round DIR (a round directory: round.toml, whose nodes' checkpoints
are each the last of a trained run directory, and keys/ with the step keys
and `zkstep keygen --merge N`'s keys) every node's run is one task
(`prove-run`, with --segment if given), run in parallel; after all of them,
one more task merges the round (`zkstep merge`, into DIR/global.safetensors)
and proves the merge (`prove-merge`, DIR/merge.zkstep); then `zkstep
verify-round DIR` checks the whole round on the driver.

    python3 scripts/cluster/ray_prove.py --round round/ --spec spec.toml [--segment 2]
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
    p.add_argument("--run", help="run directory (from zkstep train)")
    p.add_argument("--keys", help="keys directory (from zkstep keygen; with --round: DIR/keys)")
    p.add_argument("--round", help="round directory: prove every node's run, then the merge")
    p.add_argument("--spec", help="with --round: the spec every checkpoint is of")
    p.add_argument("--shards", type=int, default=None, help="shards (default: --workers)")
    p.add_argument("--workers", type=int, default=2, help="CPUs of a local cluster (no --address)")
    p.add_argument("--segment", type=int, default=None, help="prove segments of K steps")
    p.add_argument("--address", default=None, help="join this Ray cluster (e.g. auto)")
    p.add_argument("--zkstep", default=shutil.which("zkstep") or "zkstep",
                   help="the zkstep binary every worker runs (same path on every node)")
    p.add_argument("--json", action="store_true", help="print a JSON report")
    a = p.parse_args()
    if bool(a.run) == bool(a.round):
        p.error("give --run (with --keys) or --round (with --spec)")
    if a.run and not a.keys:
        p.error("--run needs --keys")
    if a.round and not a.spec:
        p.error("--round needs --spec")
    return a


def task(cmd):
    """Run one zkstep command on a worker; what the driver reports of it."""
    t = time.time()
    o = subprocess.run(cmd, capture_output=True, text=True, stdin=subprocess.DEVNULL)
    return {"rc": o.returncode, "host": socket.gethostname(), "pid": os.getpid(),
            "seconds": round(time.time() - t, 2), "stdout": o.stdout, "stderr": o.stderr[-2000:]}


def round_nodes(round_file):
    """The run directory of each node of a round file (its checkpoint's folder)."""
    import tomllib
    with open(round_file, "rb") as f:
        r = tomllib.load(f)
    base = os.path.dirname(os.path.abspath(round_file))
    return [os.path.dirname(os.path.join(base, n["checkpoint"])) for n in r.get("nodes", [])]


def prove_round(a, ray, zkstep):
    """Every node's run in parallel, then the merge; verify-round on the driver."""
    d = os.path.abspath(a.round)
    keys, spec = os.path.abspath(a.keys or os.path.join(d, "keys")), os.path.abspath(a.spec)
    runs = round_nodes(os.path.join(d, "round.toml"))

    @ray.remote(num_cpus=1, max_retries=2)
    def remote(cmd):
        return task(cmd)

    t0 = time.time()
    node_cmds = [[zkstep, "prove-run", "--run", r, "--keys", keys, "--msm", "cpu", "--json"]
                 + (["--segment", str(a.segment)] if a.segment else []) for r in runs]
    nodes = ray.get([remote.remote(c) for c in node_cmds])
    merged = None
    if all(n["rc"] == 0 for n in nodes):
        global_ = os.path.join(d, "global.safetensors")
        merged = ray.get(remote.remote(
            [zkstep, "merge", "--spec", spec, "--round", os.path.join(d, "round.toml"),
             "--out", global_, "--force", "--json"]))
        if merged["rc"] == 0:
            merged = ray.get(remote.remote(
                [zkstep, "prove-merge", "--spec", spec, "--keys", keys, "--round",
                 os.path.join(d, "round.toml"), "--global", global_, "--out",
                 os.path.join(d, "merge.zkstep"), "--force", "--json"]))
    ray.shutdown()
    v = subprocess.run([zkstep, "verify-round", d, "--vk", os.path.join(keys, "verifying.key"),
                        "--merge-vk", os.path.join(keys, "merge_verifying.key"), "--json"],
                       capture_output=True, text=True, stdin=subprocess.DEVNULL)
    report = {"round": d, "nodes": [dict(n, run=r) for n, r in zip(nodes, runs)], "merge": merged,
              "seconds": round(time.time() - t0, 2),
              "workers": sorted({(n["host"], n["pid"]) for n in nodes}),
              "verify_round": json.loads(v.stdout) if v.stdout.strip() else None,
              "accepted": v.returncode == 0}
    if a.json:
        print(json.dumps(report))
    else:
        for n, r in zip(nodes, runs):
            print(f"{r}: {'ok' if n['rc'] == 0 else 'FAILED'} on {n['host']} (pid {n['pid']}), {n['seconds']} s")
            if n["rc"]:
                print(n["stderr"], file=sys.stderr)
        if merged and merged["rc"]:
            print(f"merge failed:\n{merged['stderr']}", file=sys.stderr)
        print(v.stdout.strip() if not v.returncode else "verify-round: ACCEPTED")
        if v.returncode:
            print(v.stderr.strip(), file=sys.stderr)
    sys.exit(0 if report["accepted"] else 1)


def main():
    a = parse_args()
    try:
        import ray
    except ImportError:
        sys.exit("error: Ray is not installed (python3 -m pip install 'ray>=2.40')")
    zkstep = os.path.abspath(a.zkstep) if os.path.exists(a.zkstep) else a.zkstep
    if a.address:
        ray.init(address=a.address, logging_level="ERROR")
    else:
        ray.init(num_cpus=a.workers, include_dashboard=False, logging_level="ERROR")
    if a.round:
        return prove_round(a, ray, zkstep)
    shards = a.shards or a.workers
    if shards < 1:
        sys.exit("error: --shards must be at least 1")
    run_dir, keys = os.path.abspath(a.run), os.path.abspath(a.keys)

    @ray.remote(num_cpus=1, max_retries=2)
    def prove_shard(i, n):
        cmd = [zkstep, "prove-run", "--run", run_dir, "--keys", keys,
               "--shard", f"{i}/{n}", "--msm", "cpu", "--json"]
        if a.segment:
            cmd += ["--segment", str(a.segment)]
        r = task(cmd)
        r["shard"] = f"{i}/{n}"
        r["proofs"] = json.loads(r.pop("stdout"))["proofs"] if r["rc"] == 0 else None
        return r

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
