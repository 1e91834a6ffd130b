#!/usr/bin/env bash
# The vector index and corpus ingestion benchmarks (issue 9), as medians and
# ratios. Vectors are 768-d, shaped like text embeddings, generated on the
# fly (nothing is committed); ground truth is exact search.
#   scripts/bench-index.sh                      # 10k and 100k, 3 runs each
#   SIZES=1000000 COUNT=1 scripts/bench-index.sh   # a million: ~30 min, ~8 GB RAM
#   SKIP_SWITCH=1 SKIP_CORPUS=1 ...              # only the scale table (SKIP_SCALE skips it)
# Numbers vary on a small shared machine: compare medians, never single runs.
set -euo pipefail
cd "$(dirname "$0")/.."
count=${COUNT:-3}
out=$(mktemp)
trap 'rm -f "$out"' EXIT
if [ -z "${SKIP_SCALE:-}" ]; then
	INDEX_BENCH_SIZES=${SIZES:-10000,100000} nice go test -run '^$' -bench 'IndexScale' -benchtime 1x -count "$count" -timeout 6h ./store/vector/ | tee -a "$out" | grep -v '^ok' >&2
fi
if [ -z "${SKIP_SWITCH:-}" ]; then
	nice go test -run '^$' -bench 'SwitchPoint' -benchtime 1x -count "$count" -timeout 1h ./store/vector/ >>"$out"
fi
if [ -z "${SKIP_CORPUS:-}" ]; then
	nice go test -run '^$' -bench 'CorpusAdd' -benchtime 1x -count "$count" -timeout 1h ./ui/cli/ >>"$out"
	nice go test -run '^$' -bench 'SearchWarm' -benchtime 5x -count "$count" -timeout 1h ./ui/cli/ >>"$out"
fi
python3 - "$out" <<'PY'
import re, statistics, sys
rows = {}
for line in open(sys.argv[1]):
    if not line.startswith("Benchmark"):
        continue
    f = line.split()
    name = re.sub(r"-\d+$", "", f[0])
    for v, unit in zip(f[4::2], f[5::2]):
        rows.setdefault(name, {}).setdefault(unit, []).append(float(v))
med = {n: {u: statistics.median(v) for u, v in us.items()} for n, us in rows.items()}
runs = max((len(v) for us in rows.values() for v in us.values()), default=0)
def g(n, u, fmt="{:.2f}"):
    v = med.get(n, {}).get(u)
    return "-" if v is None else fmt.format(v)

scale = sorted((int(n.split("=")[1]), n) for n in med if n.startswith("BenchmarkIndexScale/"))
if scale:
    print(f"vector index: 768-d vectors, k=10, default ef, {int(med[scale[0][1]].get('cpus', 0))} cores, median of {runs} run(s)")
    print(f"{'vectors':>9} {'recall@10':>9} {'p50 ms':>7} {'p99 ms':>7} {'exact p50':>9} {'speed-up':>8} {'build s':>8} {'file MB':>8} {'file/raw':>8} {'open cold':>9} {'open warm':>9} {'RSS MB':>7} {'RSS/raw':>7}")
    for n, name in scale:
        m = med[name]
        speed = m["exact-p50-ms"] / m["p50-ms"]
        cold = g(name, "open-cold-ms", "{:.0f} ms")
        print(f"{n:>9,} {m['recall@10']:>9.4f} {m['p50-ms']:>7.3f} {m['p99-ms']:>7.3f} {m['exact-p50-ms']:>9.2f} {speed:>7.0f}x {m['build-s']:>8.1f} {m['file-MB']:>8.0f} {m['file/raw']:>8.3f} {cold:>9} {g(name,'open-warm-ms','{:.0f} ms'):>9} {g(name,'rss-MB','{:.0f}'):>7} {g(name,'rss/raw'):>7}")
    print("  served from the mapped file in a fresh process: p50/p99 " + ", ".join(
        f"{n:,}: {g(name,'served-p50-ms','{:.3f}')}/{g(name,'served-p99-ms','{:.3f}')} ms, ID map {g(name,'idmap-ms','{:.0f}')} ms" for n, name in scale))
    print("  targets: recall@10 >= 0.95 at p50 <= 2 ms for 100k; RSS <= 2x the raw vectors; open <= 1 s at 1M")

sw = sorted((int(n.split("=")[1]), n) for n in med if n.startswith("BenchmarkSwitchPoint/"))
if sw:
    print("switch point (exact scan vs graph walk at default ef):")
    print(f"{'vectors':>9} {'exact p50':>9} {'graph p50':>9} {'exact/graph':>11} {'recall@10':>9} {'build ms/vector':>15}")
    for n, name in sw:
        m = med[name]
        print(f"{n:>9,} {m['exact-p50-ms']:>9.3f} {m['hnsw-p50-ms']:>9.3f} {m['exact-p50-ms']/m['hnsw-p50-ms']:>10.1f}x {m['recall@10']:>9.4f} {m['build-ms/vector']:>15.3f}")

ca = sorted((int(n.split("=")[1]), n) for n in med if n.startswith("BenchmarkCorpusAdd/"))
if ca:
    print("corpus add against the fake embedding server (where the wall time goes):")
    for n, name in ca:
        m = med[name]
        print(f"  {n:>5} files, {m['chunks']:>7,.0f} chunks: {m['chunks/s']:>6,.0f} chunks/s; busy: reading {100*m['read-share']:.0f}% (of one core), "
              f"committing {100*m['commit-share']:.0f}%, embedding {100*m['embed-share']:.0f}% (of each request slot), committing vectors {100*m['vecstore-share']:.0f}%, "
              f"vector index {100*m['index-share']:.0f}%, close {100*m['close-share']:.0f}%; reading waited for embedding {100*m['backlog-share']:.0f}%")
warm = med.get("BenchmarkSearchWarm")
if warm:
    print(f"researchtui search on a warm store of 100,000 chunks, a fresh process end to end: p50 {warm['search-p50-ms']:.0f} ms (max {warm['search-max-ms']:.0f} ms)")
    print(f"  without an index file: vectors read from bbolt in {warm['rebuild-load-s']:.1f} s (exact search from then on), graph built in the background in {warm['rebuild-graph-s']:.0f} s")
PY
