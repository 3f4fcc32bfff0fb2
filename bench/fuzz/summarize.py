#!/usr/bin/env python3
"""Prints bench/README.md's fuzz table from bench/results/fuzz/summary.txt (what run.sh appends):
per target, the run with the most executions; ✔ when a run reached 10 million executions or
ran its full 30 minutes without a crash (the bar issue 14 set)."""
import collections, pathlib, re, sys
root = pathlib.Path(__file__).resolve().parent.parent.parent
summary = root / "bench/results/fuzz/summary.txt"
targets = sorted(p.name for p in (root / "Tests/Fixtures/fuzz").iterdir() if p.is_dir())
best = {}
done = collections.defaultdict(bool)
pattern = re.compile(r"^(\S+)T\S+ (\S+) (\d+) s (\d+) executions (\d+)/s$")
for line in summary.read_text().splitlines() if summary.exists() else []:
    m = pattern.match(line.strip())
    if not m:
        continue  # interrupted runs count for nothing
    day, target, seconds, runs, rate = m.group(1), m.group(2), int(m.group(3)), int(m.group(4)), int(m.group(5))
    full = runs >= 10_000_000 or seconds >= 1800
    done[target] |= full
    if target not in best or runs > best[target][2]:
        how = "until 10 M executions" if runs >= 10_000_000 else f"{seconds} s"
        best[target] = (how, day, runs, rate)
print("| target | run with the most executions | executions | per second |")
print("| --- | --- | --- | --- |")
for t in targets:
    if t not in best:
        print(f"| {t} | never run | 0 | - |")
        continue
    how, day, runs, rate = best[t]
    print(f"| {t} {'✔' if done[t] else ''} | {how} ({day}) | {runs:,} | {rate} |")
