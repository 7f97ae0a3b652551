#!/usr/bin/env python3
"""Render scripts/width_sweep.sh output (JSON lines on stdin) as a Markdown table."""
import json
import sys

rows = [json.loads(l) for l in sys.stdin if l.strip()]
print("| width | batch | rows/fold | folds | constraints/fold | total constraints | per weight | per MAC | keygen s | witness s | fold s | compress s | verify ms | proof B | peak RSS GB | native step | prove ÷ native |")
print("| ---: " * 17 + "|")
for d in sorted(rows, key=lambda d: (d["batch"], d["width"])):
    print(f"| {d['width']} | {d['batch']} | {d['rows_per_fold']} | {d['folds']} | {d['constraints_per_fold']:,} | {d['total_constraints']:,} | {d['constraints_per_weight']:.0f} | {d['constraints_per_mac']:.1f} | {d['keygen_s']:.1f} | {d['witness_s']:.2f} | {d['fold_s']:.1f} | {d['compress_s']:.1f} | {d['verify_ms_median']:.1f} | {d['proof_bytes']:,} | {d['peak_rss_mb']/1024:.1f} | {d['native_step_s']*1e6:.0f} µs | {d['overhead']:.2e} |")
