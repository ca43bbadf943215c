"""The plots a user asks for with ``--plot``: the butterfly family's load sweep and
Kuszmaul's experiment (``fatnet experiment ... --plot FILE``).

matplotlib is imported when a plot is drawn, not when the CLI starts; the golden model
computes the rows and documents, and never draws.
"""

from __future__ import annotations

__all__ = ["plot_sweep", "plot_kuszmaul"]


def _pyplot():
    """matplotlib's pyplot on the Agg backend (files only, no display)."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    return plt


def plot_sweep(rows: list[dict], path: str, title: str | None = None) -> str:
    """Plot :func:`fatnet.golden.butterfly.circuit.load_sweep` rows (throughput and
    latency against load) to ``path``."""
    plt = _pyplot()

    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(10, 4))
    kinds = list(dict.fromkeys(r["kind"] for r in rows))
    for kind in kinds:
        pts = [r for r in rows if r["kind"] == kind]
        loads = [r["load"] for r in pts]
        ax1.plot(loads, [r["throughput"] for r in pts], marker="o", label=kind)
        ax2.plot(loads, [r["latency"] for r in pts], marker="o", label=kind)
        if kind == "butterfly":
            ax1.plot(loads, [r["patel"] * r["load"] for r in pts], ls="--", color="grey",
                     label="Patel (butterfly)")
    ax1.plot([0, 1], [0, 1], ls=":", color="lightgrey")
    ax1.set_xlabel("offered load (messages per input)")
    ax1.set_ylabel("throughput, one circuit-switched cycle")
    ax2.set_xlabel("offered load (messages per input)")
    ax2.set_ylabel("mean latency, store-and-forward (steps)")
    for ax in (ax1, ax2):
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8)
    fig.suptitle(title or f"N = {rows[0]['inputs']}: butterfly, dilated butterfly, "
                          f"multibutterfly")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path


def plot_kuszmaul(doc: dict, path) -> None:
    """Three panels against k, one line per algorithm and pattern: bit-times at
    ``M = 2k`` (the sweep: Algorithm 2's schedule, the baselines' cut-through), steps and
    the largest node storage (the comparison)."""
    from ..golden.hypercube.patterns import PATTERNS
    plt = _pyplot()

    fig, (ax0, ax1, ax2) = plt.subplots(1, 3, figsize=(17, 5))
    styles = {"alg2": "-", "ecube": "--", "valiant": ":", "valiant-phased": "-."}
    colours = dict(zip(PATTERNS, plt.rcParams["axes.prop_cycle"].by_key()["color"]))

    def lines(rows, key):
        out = {}
        for r in rows:
            if r.get("routed", True):
                out.setdefault((r["algorithm"], r["pattern"]), []).append(r)
        return out

    for (alg, pattern), rs in sorted(lines(doc.get("sweep", []), "bit_times").items()):
        if alg == "alg2" and pattern != "random-permutation":
            continue                  # the same schedule for every pattern: one line
        rs = sorted(rs, key=lambda r: r["k"])
        label = "alg2 (every pattern)" if alg == "alg2" else f"{alg}, {pattern}"
        ax0.plot([r["k"] for r in rs], [r["bit_times"] for r in rs],
                 linestyle=styles[alg], color="black" if alg == "alg2" else colours[pattern],
                 marker="o", label=label)
    for (alg, pattern), rs in sorted(lines(doc["compare"], "steps_mean").items()):
        rs = sorted(rs, key=lambda r: r["k"])
        ks = [r["k"] for r in rs]
        kw = {"linestyle": styles[alg], "color": colours[pattern], "marker": "o",
              "label": f"{alg}, {pattern}"}
        ax1.plot(ks, [r["steps_mean"] for r in rs], **kw)
        ax2.plot(ks, [r["max_bits"] for r in rs], **kw)
    ax0.set(xlabel="k (dimension)", ylabel="bit-times (baselines: cut-through)",
            yscale="log", title="Bit-times to deliver every message, M = 2k")
    ax1.set(xlabel="k (dimension)", ylabel="steps (store-and-forward; alg2: dimension "
            "steps)", yscale="log", title="Steps to deliver every message")
    ax2.set(xlabel="k (dimension)", ylabel="bits", yscale="log",
            title="Largest node storage at M = 2k")
    ax0.set_xticks(sorted({r["k"] for r in doc.get("sweep", [])}))
    ks = sorted({r["k"] for r in doc["compare"]})
    for ax in (ax1, ax2):
        ax.set_xticks(ks)
    ax0.legend(fontsize=6)
    ax2.legend(fontsize=6, ncol=2)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
