"""Auto-placement solve time: CP-SAT beside enumerating splits, 16 / 128 / 1024 nodes x 8 GPUs.

Run: ``python benchmarks/auto_cost.py`` (under a minute on 2 cores). Inputs: RLinf's reference
job scaled with the cluster (rollout_batch_size = 32 x nodes, group 16, 4 minibatches, 128
running requests, costs rollout 224 s / inference 10 s / actor 101 s, Megatron model-parallel
size 2), as a 3-stage pipeline and with a 4th stage (a Megatron reward model, 20 s).

Columns: the CP-SAT search for the best placement (``best``) and for the best five
(``top-5``); the optimality gap of the best (CP-SAT's bound against its objective); the
rollout counts the reachability filter keeps; two enumerations measured in the same run, with
the same cost model, each checked to find the same optimum: every composition of the GPUs
(``all splits``, only where there are at most 2 million) and only the compositions whose counts
are in the tables (``table rows``), with the ratio of their time to CP-SAT's best.
"""

from __future__ import annotations

import math
import sys
import time
from collections.abc import Iterator, Sequence
from pathlib import Path

from tabulate import tabulate

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from solver_placement._auto import AutoProblem, auto_place, fillable_counts  # noqa: E402

ALL_SPLITS_LIMIT = 2_000_000
STAGES = {
    3: ["rollout", "inference", "actor"],
    4: ["rollout", "reward", "inference", "actor"],
}
COSTS = {"rollout": 224, "reward": 20, "inference": 10, "actor": 101}


def config(nodes: int, stages: int) -> dict[str, object]:
    pipeline = STAGES[stages]
    return {
        "num_nodes": nodes,
        "num_gpus_per_node": 8,
        "rollout_batch_size": 32 * nodes,
        "group_size": 16,
        "n_minibatches": 4,
        "max_running_requests": 128,
        "pipeline": pipeline,
        "costs": {name: COSTS[name] for name in pipeline},
        "model_parallel": {name: 1 if name == "rollout" else 2 for name in pipeline},
    }


def compositions(total: int, parts: int) -> Iterator[tuple[int, ...]]:
    if parts == 1:
        yield (total,)
        return
    for first in range(1, total - parts + 2):
        for rest in compositions(total - first, parts - 1):
            yield (first, *rest)


def table_compositions(total: int, allowed: Sequence[Sequence[int]]) -> Iterator[tuple[int, ...]]:
    """Compositions whose first counts are table rows; the last stage takes the rest."""
    if len(allowed) == 1:
        yield (total,)
        return
    for first in allowed[0]:
        if first < total:
            for rest in table_compositions(total - first, allowed[1:]):
                yield (first, *rest)


def enumerate_best(problem: AutoProblem, splits: Iterator[tuple[int, ...]]) -> tuple[float, float]:
    """(best modelled time, seconds taken) over collocation and ``splits``."""
    started = time.perf_counter()
    best = problem.collocated_time() or math.inf
    for counts in splits:
        value = problem.disaggregated_time(counts)
        if value is not None and value < best:
            best = value
    return best, time.perf_counter() - started


def timed_auto_place(problem: AutoProblem, top_k: int) -> tuple[float, object]:
    started = time.perf_counter()
    result = auto_place(problem, top_k=top_k)
    return time.perf_counter() - started, result


def main() -> None:
    rows = []
    for nodes in (16, 128, 1024):
        for stages in (3, 4):
            problem = AutoProblem.from_config(config(nodes, stages))
            total = problem.num_gpus
            best_s, result = timed_auto_place(problem, 1)
            top5_s, _ = timed_auto_place(problem, 5)
            kept = len(fillable_counts(problem)["rollout"])
            split = "/".join(str(result.gpus[name]) for name in problem.pipeline)  # type: ignore[attr-defined]
            found = result.time_s  # type: ignore[attr-defined]
            row = [nodes, total, stages, split, f"{found:.3f}", f"{best_s:.3f}", f"{top5_s:.3f}", f"{result.stats.gap:.1e}"]  # type: ignore[attr-defined]
            row.append(f"{kept}/{len(problem.tables['rollout'].allowed())}")
            if math.comb(total - 1, stages - 1) <= ALL_SPLITS_LIMIT:
                value, seconds = enumerate_best(problem, compositions(total, stages))
                row += [f"{seconds:.3f}", f"{seconds / best_s:.1f}x", "yes" if math.isclose(value, found, rel_tol=1e-9) else "NO"]
            else:
                row += [f"({math.comb(total - 1, stages - 1):.1e} splits)", "-", "-"]
            allowed = [problem.tables[name].allowed() for name in problem.pipeline]
            value, seconds = enumerate_best(problem, table_compositions(total, allowed))
            row += [f"{seconds:.3f}", f"{seconds / best_s:.2f}x", "yes" if math.isclose(value, found, rel_tol=1e-9) else "NO"]
            rows.append(row)
            print(f"done: {nodes} nodes, {stages} stages", file=sys.stderr)
    headers = [
        "nodes", "GPUs", "stages", "best split", "time (s)", "best: CP-SAT (s)", "top-5 (s)", "gap", "rollout rows kept",
        "all splits (s)", "ratio", "same", "table rows (s)", "ratio", "same",
    ]  # fmt: skip
    print(tabulate(rows, headers=headers, disable_numparse=True))


if __name__ == "__main__":
    main()
