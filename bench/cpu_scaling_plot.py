#!/usr/bin/env python3
"""Chart the CPU scaling sweep: infiniop-bench --sweep --json FILE, then
    python3 bench/cpu_scaling_plot.py FILE [OUT.png]
One panel per working set (the listed shape, and >= 4x the last-level
cache): fraction of the copy ceiling (measured at the same bytes and thread
count) against threads, one line per case; oneDNN dashed where measured."""
import json
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    rows = json.load(open(sys.argv[1]))
    out = sys.argv[2] if len(sys.argv) > 2 else sys.argv[1].rsplit(".", 1)[0] + ".png"
    sets = [s for s in ("listed", ">=4xLLC") if any(r["set"] == s for r in rows)]
    fig, axes = plt.subplots(1, len(sets), figsize=(7 * len(sets), 5), squeeze=False)
    for ax, st in zip(axes[0], sets):
        cases = sorted({r["case"] for r in rows if r["set"] == st})
        for i, case in enumerate(cases):
            rs = sorted((r for r in rows if r["set"] == st and r["case"] == case), key=lambda r: r["threads"])
            th = [r["threads"] for r in rs]
            color = plt.cm.tab10(i % 10)
            ax.plot(th, [100 * r["of_copy"] for r in rs], "o-", color=color, label=case)
            dn = [(r["threads"], 100 * r["bytes"] / r["onednn_time_s"] / (r["copy_gbps"] * 1e9))
                  for r in rs if r.get("onednn_time_s")]
            if dn:
                ax.plot(*zip(*dn), "x--", color=color, alpha=0.6)
        ax.set_xticks(sorted({r["threads"] for r in rows}))
        ax.axhline(80, color="grey", lw=0.8, ls=":")
        ax.set_title(f"working set: {st}")
        ax.set_xlabel("threads")
        ax.set_ylabel("% of copy bandwidth (same bytes, same threads)")
        ax.set_ylim(bottom=0)
        ax.legend(fontsize=7)
    fig.suptitle("infiniop CPU scaling (dashed: oneDNN)")
    fig.tight_layout()
    fig.savefig(out, dpi=110)
    print("wrote", out)


if __name__ == "__main__":
    main()
