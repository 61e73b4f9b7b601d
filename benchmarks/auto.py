"""Declarative placement at scale: solve time and optimality gap, against the exact model.

Run: ``python benchmarks/auto.py`` (about a minute). Four declarative components (actor with
TP groups of 4, a strided rollout collocated with it, inference and reward exclusive with the
others) on 2, 16, 128 and 1,024 nodes x 8 GPUs. For each size: ``solve`` (the count model
answers these), the nodes it uses against a lower bound (every component needs at least
ceil(its GPUs / 8) nodes), and in the same run the exact flat model alone with a 10 s limit as
the baseline (its status, time and nodes when it finishes).
"""

from __future__ import annotations

import math
import sys
import time
from pathlib import Path

from tabulate import tabulate

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from solver_placement import Cluster, PlacementError, PlacementSpec, solve, verify  # noqa: E402
from solver_placement._solver.build import build_model  # noqa: E402
from solver_placement._solver.exact import check_build_fits, solve_polished  # noqa: E402
from solver_placement._solver.options import SolverOptions  # noqa: E402
from solver_placement._specification.candidates import expand_all  # noqa: E402

GPUS_PER_NODE = 8
BASELINE_LIMIT_S = 10.0


def components(gpus: int) -> dict:
    return {
        "actor": {"processes": gpus // 2, "tensor_parallel_size": 4},
        "rollout": {"processes": gpus // 4, "hardware_per_process": 2, "stride": "auto", "collocate_with": "actor"},
        "inference": {"processes": gpus // 8, "hardware_per_process": 2, "exclusive_with": ["actor"]},
        "reward": {"processes": gpus // 8, "exclusive_with": ["actor", "inference"]},
    }


def nodes_used(solution) -> int:
    return sum(len({p.cluster_node_rank for p in records}) for records in solution.placements_by_component().values())


def lower_bound(placement: dict) -> int:
    total = 0
    for rule in placement.values():
        items = rule["processes"] * rule.get("hardware_per_process", 1)
        total += math.ceil(items / GPUS_PER_NODE)
    return total


def main() -> None:
    rows = []
    for nodes in (2, 16, 128, 1024):
        gpus = nodes * GPUS_PER_NODE
        placement = components(gpus)
        spec = PlacementSpec.build(Cluster(nodes, GPUS_PER_NODE), placement)
        started = time.perf_counter()
        solution = solve(spec)
        elapsed = time.perf_counter() - started
        verify(solution.spec, solution.placements_by_component())
        used, bound = nodes_used(solution), lower_bound(placement)
        baseline = exact_baseline(spec)
        processes = sum(rule["processes"] for rule in placement.values())
        rows.append([
            nodes, gpus, processes, solution.status.lower(), f"{elapsed:.2f}", used, bound,
            f"{100 * (used - bound) / bound:.1f}%", baseline,
        ])
    print(tabulate(rows, headers=["nodes", "GPUs", "processes", "status", "solve s", "nodes used", "lower bound", "gap",
                                  f"exact flat model ({BASELINE_LIMIT_S:g} s limit)"], tablefmt="github"))


def exact_baseline(spec: PlacementSpec) -> str:
    """The exact flat model alone (one boolean per process and candidate GPU), for the same spec."""
    options = SolverOptions(time_limit_s=BASELINE_LIMIT_S)
    started = time.perf_counter()
    budget = options.start()
    try:
        check_build_fits(spec.requests, budget)
    except PlacementError:
        pairs = sum(request.candidate_pairs for request in spec.requests.values())
        return f"too large to build within the limit ({pairs:,} candidate pairs)"
    try:
        ctx = build_model(spec, expand_all(spec.requests), check=budget.check)
        solver, status = solve_polished(ctx, options, budget)
    except PlacementError as error:
        return f"{type(error).__name__} after {time.perf_counter() - started:.1f} s"
    if solver.status_name(status) not in ("OPTIMAL", "FEASIBLE"):
        return f"{solver.status_name(status).lower()} after {time.perf_counter() - started:.1f} s"
    used = sum(len({int(spec.cluster.hw_node[hw]) for hw in assignment.hardware}) for assignment in ctx.assignments(solver.response_proto.solution).values())
    return f"{solver.status_name(status).lower()} in {time.perf_counter() - started:.2f} s, {used} nodes"


if __name__ == "__main__":
    main()
