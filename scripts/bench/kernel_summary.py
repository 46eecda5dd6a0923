#!/usr/bin/env python3
"""Sums the GPU time of each kernel in an Nsight Compute CSV
(`ncu --metrics gpu__time_duration.sum --csv ...`, as scripts/gpu_lease.sh
profile writes it) by kernel name and prints the kernels by total time.

Usage: kernel_summary.py NCU.csv
Lines of the program's own output mixed into the file (ncu writes the CSV to
stdout) are skipped: only lines starting with a quote are read.
"""
import csv
import sys
from collections import defaultdict

# Microseconds per unit, in ncu's spellings.
SCALE = {"nsecond": 1e-3, "ns": 1e-3, "usecond": 1.0, "us": 1.0, "msecond": 1e3, "ms": 1e3,
         "second": 1e6, "s": 1e6}


def short_name(name):
    """A kernel's name without return type, namespaces but the last, template
    arguments past 40 characters and parameters."""
    name = name.removeprefix("void ").replace("(anonymous namespace)::", "")
    depth, out = 0, ""
    for ch in name:  # cut at the parameter list (the first '(' outside <>)
        if ch == "(" and depth == 0:
            break
        depth += {"<": 1, ">": -1}.get(ch, 0)
        out += ch
    head, _, args = out.partition("<")
    head = "::".join(head.split("::")[-2:])
    return head + ("<" + args[:40] if args else "")


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    with open(sys.argv[1], errors="replace") as f:
        rows = list(csv.reader(line for line in f if line.startswith('"')))
    if not rows:
        sys.exit(f"{sys.argv[1]}: no ncu CSV rows")
    head = rows[0]
    try:
        name_at, unit_at, value_at = (head.index("Kernel Name"), head.index("Metric Unit"),
                                      head.index("Metric Value"))
    except ValueError as e:
        sys.exit(f"{sys.argv[1]}: not an ncu metrics CSV ({e})")
    total = defaultdict(float)
    count = defaultdict(int)
    for row in rows[1:]:
        if len(row) <= max(name_at, unit_at, value_at):
            continue
        name = short_name(row[name_at])
        if row[unit_at] not in SCALE:
            sys.exit(f"{sys.argv[1]}: unknown time unit {row[unit_at]!r}")
        us = float(row[value_at].replace(",", "")) * SCALE[row[unit_at]]
        total[name] += us
        count[name] += 1
    all_us = sum(total.values())
    print(f"{sys.argv[1]}: {sum(count.values())} kernels, {all_us / 1e3:.3f} ms of GPU time")
    for name, us in sorted(total.items(), key=lambda kv: -kv[1]):
        print(f"{us / 1e3:9.3f} ms {100 * us / all_us:5.1f} % {count[name]:5d}x  {name}")


if __name__ == "__main__":
    main()
