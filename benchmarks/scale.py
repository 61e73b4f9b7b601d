"""Scale benchmark: fully specified placements on 2 to 12,500 nodes x 8 GPUs.

Run ``python benchmarks/scale.py`` (all sizes) or ``python benchmarks/scale.py --quick`` (2 and 128
nodes). Each size runs in a fresh subprocess so that its peak RSS is its own: the parent reaps the
child with ``os.wait4``, whose rusage is that child's alone (``RUSAGE_CHILDREN`` would report the
largest child so far). The spec, per size (``train`` = the first 3/4 of the nodes, ``serve`` = the
rest; on 2 nodes, one each):

* ``actor,rollout: all`` on ``train``: collocated by one shared rule, one process per GPU;
* ``inference`` on the first half of ``serve``'s GPUs, 2 GPUs per process;
* ``reward`` on the second half of ``serve``'s GPUs, 2 processes per GPU;
* ``env`` on the reserved ``node`` label, 2 node-only processes per node.

Timed stages: parse (``PlacementSpec.from_config``, resolution included), build and solve
(``solve(spec)``, split by ``solution.timings``), convert (``placements_by_component``) and verify
(given up after 30 s). Baselines: a plain-numpy computation of RLinf's even split of the same spec,
timed in the same child process ("x numpy"), and the time per GPU relative to the 2-node case. The
library's layout is checked against that numpy reference (outside the timed stages), so the table
never reports the speed of a wrong answer.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from typing import Any

import numpy as np
from tabulate import tabulate

from solver_placement import PlacementSpec, solve, verify

SIZES = (2, 128, 1024, 12_500)
QUICK_SIZES = (2, 128)
GPUS_PER_NODE = 8
VERIFY_LIMIT_S = 30
#: Small sizes take milliseconds: the best of several runs keeps one-off warm-up out of the table.
REPEATS_UP_TO_128_NODES = 5


def split_nodes(num_nodes: int) -> int:
    """Number of ``train`` nodes (the rest is ``serve``)."""
    return max(1, num_nodes * 3 // 4)


def config(num_nodes: int) -> dict[str, Any]:
    train = split_nodes(num_nodes)
    serve_gpus = (num_nodes - train) * GPUS_PER_NODE
    half = serve_gpus // 2
    return {
        "cluster": {
            "num_nodes": num_nodes,
            "num_gpus_per_node": GPUS_PER_NODE,
            "node_groups": [
                {"label": "train", "node_ranks": f"0-{train - 1}"},
                {"label": "serve", "node_ranks": f"{train}-{num_nodes - 1}"},
            ],
            "component_placement": {
                "actor,rollout": {"node_group": "train", "placement": "all"},
                "inference": {"node_group": "serve", "placement": f"0-{half - 1}:0-{half // 2 - 1}"},
                "reward": {"node_group": "serve", "placement": f"{half}-{serve_gpus - 1}:0-{half * 2 - 1}"},
                "env": {"node_group": "node", "placement": f"0-{num_nodes - 1}:0-{2 * num_nodes - 1}"},
            },
        }
    }


def even_split(ranks: np.ndarray, processes: int) -> tuple[np.ndarray, np.ndarray]:
    """RLinf's rule as CSR: |R| >= |P| gives process i R[i*k:(i+1)*k]; else R[i] serves m processes."""
    if ranks.size >= processes:
        k = ranks.size // processes
        return np.arange(processes + 1) * k, ranks
    return np.arange(processes + 1), np.repeat(ranks, processes // ranks.size)


def numpy_reference(num_nodes: int) -> dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """Per component (indptr, node, local GPU or -1) computed directly, without the library."""
    train = split_nodes(num_nodes)
    serve_gpus = (num_nodes - train) * GPUS_PER_NODE
    half = serve_gpus // 2
    train_ranks = np.arange(train * GPUS_PER_NODE)
    actor = even_split(train_ranks, train_ranks.size)
    layouts = {
        "actor": (*actor, 0),
        "rollout": (*actor, 0),
        "inference": (*even_split(np.arange(half), half // 2), train * GPUS_PER_NODE),
        "reward": (*even_split(np.arange(half, serve_gpus), half * 2), train * GPUS_PER_NODE),
    }
    reference = {
        name: (indptr, (offset + ranks) // GPUS_PER_NODE, ranks % GPUS_PER_NODE)
        for name, (indptr, ranks, offset) in layouts.items()
    }
    indptr, nodes = even_split(np.arange(num_nodes), 2 * num_nodes)
    reference["env"] = (indptr, nodes, np.full(nodes.size, -1))
    return reference


def matches_reference(placements: dict[str, list[Any]], reference: dict[str, tuple[np.ndarray, ...]]) -> bool:
    for name, (indptr, nodes, local) in reference.items():
        records = placements[name]
        sizes = [max(1, len(r.local_hardware_ranks)) for r in records]
        flat_nodes = [r.cluster_node_rank for r, size in zip(records, sizes) for _ in range(size)]
        flat_local = [g for r in records for g in (r.local_hardware_ranks or [-1])]
        if not (np.array_equal(np.diff(indptr), sizes) and np.array_equal(nodes, flat_nodes) and np.array_equal(local, flat_local)):
            return False
    return True


def best_of(repeats: int, run: Callable[[], Any]) -> tuple[float, Any]:
    """Fastest wall time of ``repeats`` runs and the last result."""
    best, result = float("inf"), None
    for _ in range(repeats):
        started = time.perf_counter()
        result = run()
        best = min(best, time.perf_counter() - started)
    return best, result


class VerifyTimeout(Exception):
    """Raised by SIGALRM when verify runs past VERIFY_LIMIT_S."""


def timed_verify(spec: PlacementSpec, placements: dict[str, list[Any]]) -> float | None:
    """Verify time in seconds, or None when it was given up after VERIFY_LIMIT_S."""

    def give_up(signum: int, frame: Any) -> None:
        raise VerifyTimeout

    previous = signal.signal(signal.SIGALRM, give_up)
    signal.alarm(VERIFY_LIMIT_S)
    started = time.perf_counter()
    try:
        verify(spec, placements)
        return time.perf_counter() - started
    except VerifyTimeout:
        return None
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def measure(num_nodes: int) -> dict[str, Any]:
    """Run every stage for one size (in this process) and return the timings."""
    repeats = REPEATS_UP_TO_128_NODES if num_nodes <= 128 else 1
    cfg = config(num_nodes)
    parse, spec = best_of(repeats, lambda: PlacementSpec.from_config(cfg))
    solutions = [solve(spec) for _ in range(repeats)]
    build = min(s.timings["build"] for s in solutions)
    solve_s = min(s.timings["solve"] for s in solutions)
    # one conversion per Solution: records are cached on the object after the first call
    converted = [best_of(1, s.placements_by_component) for s in solutions]
    convert, placements = min(seconds for seconds, _ in converted), converted[-1][1]
    reference_s, reference = best_of(repeats, lambda: numpy_reference(num_nodes))
    return {
        "nodes": num_nodes,
        "gpus": num_nodes * GPUS_PER_NODE,
        "processes": sum(len(records) for records in placements.values()),
        "parse": parse,
        "build": build,
        "solve": solve_s,
        "convert": convert,
        "verify": timed_verify(spec, placements),
        "numpy": reference_s,
        "matches": matches_reference(placements, reference),
    }


def run_child(num_nodes: int) -> dict[str, Any]:
    """Measure one size in a fresh interpreter; add its own peak RSS (MiB)."""
    child = subprocess.Popen([sys.executable, __file__, "--child", str(num_nodes)], stdout=subprocess.PIPE, text=True)
    output = child.stdout.read()
    _, status, usage = os.wait4(child.pid, 0)
    child.returncode = os.waitstatus_to_exitcode(status)
    if child.returncode:
        raise SystemExit(f"the {num_nodes}-node run failed with exit code {child.returncode}")
    result = json.loads(output)
    result["peak_mib"] = usage.ru_maxrss / 1024  # Linux reports KiB
    return result


def table(results: list[dict[str, Any]]) -> str:
    def g(value: float) -> str:
        return f"{value:.3g}"

    base = results[0]
    base_per_gpu = (base["parse"] + base["build"] + base["solve"] + base["convert"]) / base["gpus"]
    rows = []
    for r in results:
        total = r["parse"] + r["build"] + r["solve"] + r["convert"]
        rows.append([
            f"{r['nodes']:,}", f"{r['gpus']:,}", f"{r['processes']:,}",
            g(r["parse"]), g(r["build"]), g(r["solve"]), g(r["convert"]),
            "skipped (>30 s)" if r["verify"] is None else g(r["verify"]),
            g(total), f"{r['peak_mib']:.0f}", g(total / r["gpus"] * 1e6), g(total / r["gpus"] / base_per_gpu),
            g(r["numpy"]), f"{total / r['numpy']:.0f}", "yes" if r["matches"] else "NO",
        ])
    headers = [
        "nodes", "GPUs", "processes", "parse s", "build s", "solve s", "convert s", "verify s",
        "total s", "peak MiB", "µs/GPU", "µs/GPU vs 2 nodes", "numpy ref s", "x numpy", "= numpy layout",
    ]
    return tabulate(rows, headers=headers, disable_numparse=True, colalign=("right",) * len(headers))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="only 2 and 128 nodes")
    parser.add_argument("--child", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child is not None:
        print(json.dumps(measure(args.child)))
        return
    results = [run_child(n) for n in (QUICK_SIZES if args.quick else SIZES)]
    print(table(results))
    print("total = parse + build + solve + convert; x numpy = total / the numpy even split in the same process")


if __name__ == "__main__":
    main()
