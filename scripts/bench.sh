#!/usr/bin/env bash
# Runs the benchmarks users feel and prints medians and ratios (CONTRIBUTING.md: Benchmark).
# Numbers vary on a small noisy machine: compare medians, never single runs.
#   scripts/bench.sh            # all, 5 runs each
#   COUNT=3 scripts/bench.sh
set -euo pipefail
cd "$(dirname "$0")/.."
count=${COUNT:-5}
out=$(mktemp)
trap 'rm -f "$out"' EXIT
go test -run '^$' -bench 'FullRun' -benchtime 3x -count "$count" ./pipeline/ >>"$out"
# The realistic world (real latencies, arXiv's 3 s, one model request at a
# time): ~1 min a run, so 3 runs unless COUNT says otherwise.
go test -run '^$' -bench 'RealWorld' -benchtime 1x -count "${WORLD_COUNT:-3}" ./pipeline/ >>"$out"
go test -run '^$' -bench . -count "$count" ./ui/ ./store/ ./store/vector/ >>"$out"
python3 - "$out" <<'PY'
import re, statistics, sys
rows = {}
for line in open(sys.argv[1]):
    if not line.startswith("Benchmark"):
        continue
    f = line.split()
    name = re.sub(r"-\d+$", "", f[0])
    vals = {"ns/op": float(f[2])}
    for v, unit in zip(f[4::2], f[5::2]):
        vals[unit] = float(v)
    for unit, v in vals.items():
        rows.setdefault((name, unit), []).append(v)
med = {k: statistics.median(v) for k, v in rows.items()}
def ms(name): return med[(name, "ns/op")] / 1e6
print("orchestration (wall ÷ model-busy time; 1.00 is perfect)")
for d in ("2ms", "10ms"):
    n = f"BenchmarkFullRun/token_delay={d}"
    print(f"  token delay {d:>4}: overhead {med[(n,'overhead-x')]:.3f}x, model busy {med[(n,'model-util-%')]:.1f}% of the run")
print("realistic world (20 ms/token, 300 ms to first token, APIs 300 ms, arXiv 3 s, PDFs 0.5-1 s, one refusing host)")
for w in ("answers=short/parallel=1", "answers=8B/parallel=1", "answers=8B/parallel=2"):
    n = f"BenchmarkRealWorldRun/{w}"
    if (n, "model-util") in med:
        print(f"  {w:<26} model busy {100*med[(n,'model-util')]:.0f}% of the run, wall {med[(n,'wall-s')]:.1f} s = {med[(n,'wall/bound')]:.2f}x the lower bound")
print("ui")
first, cached = ms("BenchmarkReportRender/first"), ms("BenchmarkReportRender/cached")
print(f"  30,000-word report: first render {first:.0f} ms, cached {cached:.2f} ms ({first/cached:.0f}x faster)")
print(f"  run screen at 10k token events/s: {med[('BenchmarkRunScreenFlood/batch-167','ms/frame')]:.2f} ms per 60 Hz frame ({16.7/med[('BenchmarkRunScreenFlood/batch-167','ms/frame')]:.0f}x headroom)")
print(f"  start-up to first frame, 500 sessions: {ms('BenchmarkStartup500'):.1f} ms")
print("store")
print(f"  exact top-10 over 10k x 768-d vectors: {ms('BenchmarkIndexSearch10k768'):.2f} ms per query")
print(f"  list 500 sessions: {ms('BenchmarkListSessions500'):.1f} ms")
PY
