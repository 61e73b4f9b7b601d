"""Building the flat model checks the time limit inside every loop that grows with the spec, so
``time_limit_s`` holds while a big model is being built, not only while CP-SAT searches."""

from __future__ import annotations

import importlib
import time
from collections import Counter

import pytest
from flat_model import counts_kept_out
from helpers import config

from solver_placement import Cluster, PlacementSpec, SolverTimeoutError, solve
from solver_placement._solver.build import build_model
from solver_placement._solver.context import PAIRS_PER_CHECK
from solver_placement._specification.candidates import expand_all

#: Every rule family with a loop that grows with the spec, on 4 nodes of 8 GPUs in two racks.
PLACEMENT = {
    "actor": {"processes": 16, "tensor_parallel_size": 4, "topology": {"tensor_parallel": {"rack": "prefer"}}},
    "rollout": {"processes": 8, "hardware_per_process": 2, "stride": 1, "collocate_with": "actor", "memory_gb": 10},
    "reward": {"processes": 8, "exclusive_with": ["actor"], "max_processes_per_hardware": 1},
}
RACKS = [{"rack": str(node // 2)} for node in range(4)]


def spec() -> PlacementSpec:
    return PlacementSpec.from_config(config(4, 8, PLACEMENT, node_labels=RACKS, gpu_memory_gb=80))


def stages_checked() -> Counter[str]:
    seen: Counter[str] = Counter()
    built = spec()
    build_model(built, expand_all(built.requests), check=lambda stage: seen.update([stage]))
    return seen


def test_loops_over_processes_items_and_groups_check_at_every_step() -> None:
    seen = stages_checked()
    assert seen["building the model (actor's amounts)"] == 16
    assert seen["building the model (rollout's stride patterns)"] == 8
    assert seen["building the model (actor: each tensor-parallel group on one node)"] > 0
    assert seen["building the model (reward is exclusive with actor (no shared hardware))"] == 32  # every GPU both may take
    assert seen["building the model (GPU memory)"] == 32
    assert seen["building the model (ordering reward's processes)"] >= 8
    assert seen["building the model (creating actor's variables)"] == 1  # 512 pairs: one batch of variables


def test_loops_over_single_pairs_check_every_batch_of_pairs() -> None:
    seen = stages_checked()
    pairs = 32 * 16  # rank-weighted pairs of the actor: all but those on rank 0
    assert seen["building the model (actor's contiguity)"] == -(-pairs // PAIRS_PER_CHECK)
    assert seen["building the model (the objective)"] >= 1


def test_a_check_that_raises_stops_the_build_inside_a_rule() -> None:
    calls = []

    def out_of_time(stage: str) -> None:
        calls.append(stage)
        if len(calls) == 40:
            raise SolverTimeoutError(f"the time ran out while {stage}")

    built = spec()
    with pytest.raises(SolverTimeoutError, match=r"while building the model \((?!the \w+ rule\))"):  # inside a rule's loop
        build_model(built, expand_all(built.requests), check=out_of_time)
    assert len(calls) == 40


@pytest.mark.slow
def test_a_build_longer_than_the_limit_ends_at_the_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    # ~295,000 declarative pairs: the estimate lets it start (about 3 s), building takes 3-5 s
    # here; the count model is kept out (it answers this spec), so the flat model is built,
    # stopped at the limit, and the first-fit placement made before it is the answer
    counts_kept_out(monkeypatch)
    half = 64
    racks = [{"rack": str(node // 4)} for node in range(2 * half)]
    big = config(2 * half, [8] * half + [4] * half, {
        "actor": {"node_group": "a800", "processes": 4 * half, "tensor_parallel_size": 4, "topology": {"tensor_parallel": {"rack": "prefer"}}},
        "rollout": {"node_group": "a800", "processes": 2 * half, "hardware_per_process": 2, "collocate_with": "actor"},
        "reward": {"processes": 2 * half, "exclusive_with": ["actor"]},
    }, node_groups=[{"label": "a800", "node_ranks": f"0-{half - 1}"}], node_labels=racks)  # fmt: skip
    limit = 3.5
    started = time.perf_counter()
    answer = solve(big, time_limit_s=limit, objective={"contiguity": 1})
    assert time.perf_counter() - started < limit + 1.5
    assert (answer.method, answer.status) == ("first fit", "FEASIBLE")


def test_the_search_keeps_back_the_time_its_answer_is_verified_in(monkeypatch: pytest.MonkeyPatch) -> None:
    """The exact model's search ends ``FINISH_S`` plus ``FINISH_S_PER_PROCESS`` per process
    before the time limit, so reading and verifying its answer (and first fit's) fits in the
    limit: a search that used all of it ended 11-23 ms past ``time_limit_s``."""
    counts_kept_out(monkeypatch)
    paths = importlib.import_module("solver_placement._solver.solve")
    searched: list[float] = []
    real = paths.solve_polished
    monkeypatch.setattr(paths, "solve_polished", lambda ctx, options, budget: (searched.append(budget.deadline), real(ctx, options, budget))[1])
    ring = {name: {"processes": 11, "exclusive_with": [following]} for name, following in zip("abcdef", "bcdefa", strict=True)}
    built, limit = PlacementSpec.build(Cluster(3, 8), ring), 1.0  # first fit misses the counting bound: the search runs
    reserve = paths.FINISH_S + paths.FINISH_S_PER_PROCESS * sum(r.num_processes for r in built.requests.values())
    before = time.perf_counter()
    solve(built, time_limit_s=limit, objective={"balance": 1_000, "nodes": 1})
    after = time.perf_counter()
    assert len(searched) == 1
    assert before + limit - reserve <= searched[0] <= after + limit - reserve


def test_the_time_kept_back_for_verifying_leaves_first_fit_time_on_a_large_spec() -> None:
    """The reserve follows what verifying costs now (at most 1.5 us CPU, 4.4 us wall a process
    on a loaded machine at 65,536 nodes): at 15 us a process it was more than a 5 s limit on the
    721,765 processes of a 65,536-node spec, so first fit never ran there; now 2 s of it are left."""
    paths = importlib.import_module("solver_placement._solver.solve")
    assert paths.FINISH_S + paths.FINISH_S_PER_PROCESS * 721_765 < 5.0 - 2.0
