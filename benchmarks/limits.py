"""Wall-clock limits on hard valid specs: every case ends within ``time_limit_s`` + 2 s.

Run ``python benchmarks/limits.py`` (every case) or ``--quick`` (the smaller ones);
``--no-estimate`` switches off the exact model's pre-build refusal (``check_build_fits``, an
estimate of the build time), so the big declarative cases show that the budget checks inside
the build alone end them within the limit (they ran 9.7 s and 16 s at 256/512 nodes before the
build checked the budget inside its loops). Each case
runs in a fresh subprocess, so its peak RSS is its own (``os.wait4`` reports the child's rusage);
a child still running 60 s past its limit is killed and reported as such. The table: spec,
limit, wall time (the child's own clock around ``solve``, import excluded), peak RSS, and the
outcome: a verified placement, or the ``PlacementError`` subclass that ended the call (a
``PlacementConfigError`` from the input limits is a valid outcome too). Timings are noisy when
other work shares the machine.

The cases are the ones issue 14 measured: heterogeneous declarative specs at 64, 256 and 512
nodes (``time_limit_s: 5``), a pigeonhole at 512 nodes (10 s), ten million rank-string processes
on one GPU and an explicit list of two million processes.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import time
from typing import Any

from tabulate import tabulate

#: Seconds a case may run past its own limit before the benchmark kills it.
GRACE_S = 60
#: The promise under test: every case ends within its limit plus this.
SLACK_S = 2.0


def heterogeneous(num_nodes: int, limit: float) -> dict[str, Any]:
    """Half 8-GPU a800 nodes, half 4-GPU 4090 nodes in racks of 4; declarative actor (TP groups
    preferably inside one rack),
    collocated rollout, reward and critic kept apart, all free to choose among thousands of GPUs."""
    half = num_nodes // 2
    return {"cluster": {
        "num_nodes": num_nodes,
        "node_labels": [{"rack": str(node // 4)} for node in range(num_nodes)],
        "num_gpus_per_node": [8] * half + [4] * (num_nodes - half),
        "node_groups": [{"label": "a800", "node_ranks": f"0-{half - 1}"}, {"label": "4090", "node_ranks": f"{half}-{num_nodes - 1}"}],
        "component_placement": {
            "actor": {"node_group": "a800", "processes": 4 * half, "tensor_parallel_size": 4, "topology": {"tensor_parallel": {"rack": "prefer"}}},
            "rollout": {"node_group": "a800", "processes": 2 * half, "hardware_per_process": 2, "collocate_with": "actor"},
            "reward": {"processes": 2 * (num_nodes - half), "exclusive_with": ["actor"]},
            "critic": {"node_group": "4090", "processes": num_nodes - half, "hardware_per_process": 2, "exclusive_with": ["reward"]},
        },
        "solver": {"time_limit_s": limit},
    }}


def pigeonhole(num_nodes: int, limit: float) -> dict[str, Any]:
    """Two components kept apart that together need every GPU but one more than there is,
    split so that no single component is short: the bounds prove it by counting."""
    gpus = 8 * num_nodes
    return {"cluster": {
        "num_nodes": num_nodes, "num_gpus_per_node": 8,
        "component_placement": {
            "actor": {"processes": gpus // 2, "tensor_parallel_size": 2},
            "reward": {"processes": gpus // 2 + 1, "exclusive_with": ["actor"]},
        },
        "solver": {"time_limit_s": limit},
    }}


def one_gpu_rank_string(processes: int, limit: float) -> dict[str, Any]:
    return {"cluster": {"num_nodes": 1, "num_gpus_per_node": 8,
                        "component_placement": {"actor": f"0:0-{processes - 1}"}, "solver": {"time_limit_s": limit}}}


def explicit_list(processes: int, limit: float) -> dict[str, Any]:
    return {"cluster": {"num_nodes": 1, "num_gpus_per_node": 8,
                        "component_placement": {"actor": {"placement": [[0]] * processes}}, "solver": {"time_limit_s": limit}}}


CASES = {
    "heterogeneous declarative, 64 nodes": (heterogeneous, 64, 5),
    "heterogeneous declarative, 256 nodes": (heterogeneous, 256, 5),
    "heterogeneous declarative, 512 nodes": (heterogeneous, 512, 5),
    "pigeonhole, 512 nodes": (pigeonhole, 512, 10),
    "10,000,000 rank-string processes on one GPU": (one_gpu_rank_string, 10_000_000, 10),
    "2,000,000 processes as an explicit list": (explicit_list, 2_000_000, 10),
}
QUICK = ("heterogeneous declarative, 64 nodes", "pigeonhole, 512 nodes")


def child(name: str, estimate: bool) -> None:
    """Run one case and print its outcome as JSON (the parent measures RSS)."""
    import importlib

    from solver_placement import PlacementError, solve, verify

    if not estimate:  # the benchmark's own switch; the library always refuses up front
        importlib.import_module("solver_placement._solver.solve").check_build_fits = lambda requests, budget: None

    make, size, limit = CASES[name]
    config = make(size, limit)
    started = time.perf_counter()
    try:
        solution = solve(config)
        wall = time.perf_counter() - started
        verify(solution.spec, solution.placements_by_component())
        outcome = f"placement ({solution.status.lower()}), verified"
    except PlacementError as error:
        wall = time.perf_counter() - started
        outcome = f"{type(error).__name__}: {str(error).splitlines()[0][:90]}"
    print(json.dumps({"wall": wall, "outcome": outcome}))


def run(name: str, estimate: bool) -> list[Any]:
    limit = CASES[name][2]
    flags = [] if estimate else ["--no-estimate"]
    proc = subprocess.Popen([sys.executable, __file__, "--child", name, *flags], stdout=subprocess.PIPE, text=True)
    started = time.perf_counter()
    while True:
        pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
        if pid:
            break
        if time.perf_counter() - started > limit + GRACE_S:
            os.kill(proc.pid, signal.SIGKILL)
            pid, status, usage = os.wait4(proc.pid, 0)
            return [name, limit, f"> {limit + GRACE_S} (killed)", f"{usage.ru_maxrss / 2**20:.2f}", "killed", "no"]
        time.sleep(0.05)
    text = proc.stdout.read().strip().splitlines() if proc.stdout is not None else []
    rss = f"{usage.ru_maxrss / 2**20:.2f}"
    if status != 0 or not text:
        return [name, limit, f"{time.perf_counter() - started:.1f}", rss, f"crashed (status {status})", "no"]
    result = json.loads(text[-1])
    within = "yes" if result["wall"] <= limit + SLACK_S else "no"
    return [name, limit, f"{result['wall']:.1f}", rss, result["outcome"], within]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="only " + ", ".join(QUICK))
    parser.add_argument("--no-estimate", action="store_true", help="build the exact model even when its estimated build time exceeds the limit")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.child, estimate=not args.no_estimate)
        return
    names = QUICK if args.quick else tuple(CASES)
    rows = [run(name, estimate=not args.no_estimate) for name in names]
    print(tabulate(rows, disable_numparse=True, headers=["spec", "limit s", "wall s", "peak RSS GiB", "outcome", f"within limit + {SLACK_S:g} s"]))


if __name__ == "__main__":
    main()
