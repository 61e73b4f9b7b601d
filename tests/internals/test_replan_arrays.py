"""Re-planning's array forms agree with the per-record lookups they replace: the ranks of the
surviving processes on the shrunk cluster (``ranks_of``, read from the assignment, with
overlapping node groups, node-only processes and several items per process), where each process
was (``previous_hardware``, with records on lost or unknown hardware) and the ``changes`` term
counted from those arrays, on seeded random jobs and lost nodes; and the time limit bounds a
re-plan as a whole."""

from __future__ import annotations

import random
import time
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

import numpy as np
import pytest
from helpers import config

from solver_placement import PlacementConfigError, PlacementSpec, Solution, SolverTimeoutError, solve
from solver_placement._cluster.cluster import Cluster
from solver_placement._records import Placement
from solver_placement._replan import replan
from solver_placement._replan_pins import ranks_of
from solver_placement._solver.evaluate import objective_value
from solver_placement._solver.previous import HeldSets, previous_hardware
from solver_placement._specification.grammar import ComponentSpec


def ranks_one_by_one(
    solution: Solution, component: ComponentSpec, records: Sequence[Placement], renamed: Mapping[str, str], cluster: Cluster
) -> list[list[int]]:
    """The per-record lookup ``ranks_of`` replaced: a dict of (group, item) -> first rank."""
    labels = list(dict.fromkeys(renamed.values()))
    resources = cluster.resources(labels, component.count_nodes)
    rank_of: dict[tuple[int, int], int] = {}
    for rank, (group, hw) in enumerate(zip(resources.group_of.tolist(), resources.physical.tolist(), strict=True)):
        rank_of.setdefault((group, hw), rank)
    old = solution.spec.resources_of(component.name)
    new_group = [labels.index(renamed[group.label]) for group in old.groups]
    return [
        [
            rank_of[(new_group[int(old.group_of[rank])], cluster.physical_id(p.cluster_node_rank, p.hardware_type, local))]
            for rank, local in zip(p.hardware_ranks, p.local_hardware_ranks or [0], strict=True)
        ]
        for p in records
    ]


def job(rng: random.Random) -> dict[str, Any]:
    """Six nodes of random GPU counts, two overlapping groups, components of 1-2 GPUs and a
    node-only one."""
    gpus = [rng.choice([2, 4]) for _ in range(6)]
    groups = [{"label": "a", "node_ranks": "0-3"}, {"label": "b", "node_ranks": "2-5"}]
    placement = {
        "wide": {"node_group": ["b", "a"], "processes": rng.randint(1, 4), "hardware_per_process": rng.choice([1, 2])},
        "narrow": {"node_group": "a", "processes": rng.randint(1, 3)},
        "agents": {"node_group": ["a", "b"], "unit": "node", "processes": rng.randint(1, 3)},
    }
    return config(6, gpus, placement, node_groups=groups)


@pytest.mark.parametrize("seed", range(10))
def test_ranks_of_matches_the_per_record_lookup(seed: int) -> None:
    rng = random.Random(seed)
    solution = solve(job(rng))
    lost = set(rng.sample(range(6), rng.randint(0, 2)))
    cluster = solution.cluster.without_nodes(lost)
    for name, component in solution.spec.components.items():
        keep = np.array([p.cluster_node_rank not in lost for p in solution.placements(name)], dtype=bool)
        records = [p for p in solution.placements(name) if p.cluster_node_rank not in lost]
        renamed = {label: label for label in component.node_groups}
        if any(label not in cluster.node_groups for label in renamed):
            continue
        found = ranks_of(solution, component, keep, renamed, cluster)
        listed = found.tolist() if isinstance(found, np.ndarray) else found
        assert listed == ranks_one_by_one(solution, component, records, renamed, cluster), (seed, name)


def held_one_by_one(spec: Any, records: Mapping[str, Sequence[Placement]]) -> dict[str, list[list[int]]]:
    """The per-record reading ``previous_hardware`` replaced: the cluster's own lookup per item."""
    def exists(p: Placement) -> bool:
        try:
            for local in p.local_hardware_ranks or [0]:
                spec.cluster.physical_id(p.cluster_node_rank, p.hardware_type, local)
        except PlacementConfigError:
            return False
        return True

    return {
        name: [[spec.cluster.physical_id(p.cluster_node_rank, p.hardware_type, local) for local in p.local_hardware_ranks or [0]] for p in placements if exists(p)]
        for name, placements in records.items()
        if name in spec.components
    }


#: Changes of one record that name hardware the cluster may not have, or odd values.
ODD = ({"local_hardware_ranks": [99]}, {"local_hardware_ranks": [-1]}, {"cluster_node_rank": 77}, {"hardware_type": "tpu"}, {"cluster_node_rank": True})


@pytest.mark.parametrize("seed", range(10))
def test_previous_hardware_matches_the_per_record_lookup(seed: int) -> None:
    rng = random.Random(seed)
    solution = solve(job(rng))
    lost = set(rng.sample(range(6), rng.randint(0, 2)))
    spec = PlacementSpec.build(solution.cluster.without_nodes(lost), {"wide": {"processes": 1}, "narrow": {"processes": 1}, "agents": {"processes": 1}})
    records = {name: [*placements] for name, placements in solution.placements_by_component().items()}
    for _ in range(rng.randint(0, 3)):
        name = rng.choice(sorted(records))
        index = rng.randrange(len(records[name]))
        records[name][index] = replace(records[name][index], **rng.choice(ODD))
    assert previous_hardware(spec, records) == held_one_by_one(spec, records), seed


def test_the_time_limit_bounds_the_whole_replan() -> None:
    """A limit spent before keep-in-place can solve leaves the exact model nothing: the re-plan
    stops with a timeout that says the limit covers it all, instead of solving twice more."""
    solution = solve(config(4, 4, {"actor": {"processes": 8}, "rollout": {"processes": 4, "exclusive_with": ["actor"]}}))
    lost = [solution.placements("actor")[0].cluster_node_rank]
    started = time.perf_counter()
    with pytest.raises(SolverTimeoutError, match=r"time_limit_s=1e-06 s bounds the whole re-plan"):
        replan(solution, lost, time_limit_s=1e-6)
    assert time.perf_counter() - started < 5  # spec building only: no solve ran


@pytest.mark.parametrize("seed", range(10))
def test_previous_hardware_of_a_solution_reads_its_records(seed: int) -> None:
    """From a solution, ``previous_hardware`` reads its assignments; the same as from its records."""
    rng = random.Random(seed)
    solution = solve(job(rng))
    lost = set(rng.sample(range(6), rng.randint(0, 2)))
    spec = PlacementSpec.build(solution.cluster.without_nodes(lost), {"wide": {"processes": 1}, "narrow": {"processes": 1}, "agents": {"processes": 1}})
    assert previous_hardware(spec, solution) == previous_hardware(spec, solution.placements_by_component()) == held_one_by_one(spec, solution.placements_by_component())


@pytest.mark.parametrize("seed", range(10))
def test_the_changes_term_reads_held_sets_as_it_reads_lists(seed: int) -> None:
    """``evaluate``'s ``changes`` term counts the previous sets from a :class:`HeldSets`'s arrays
    exactly as from the same sets as lists, whatever answer it is held against."""
    rng = random.Random(seed)
    before, after = solve(job(rng)), solve(job(random.Random(seed + 100)))
    if sorted(before.components) != sorted(after.components):
        return
    held = previous_hardware(after.spec, before)
    assert all(isinstance(sets, HeldSets) for sets in held.values())
    as_lists = {name: [list(ids) for ids in sets] for name, sets in held.items()}
    weights = {"changes": 1, "nodes": 0, "topology": 0, "balance": 0, "contiguity": 0}
    assert objective_value(after.spec, after.requests, after.assignments, weights, held) == objective_value(after.spec, after.requests, after.assignments, weights, as_lists), seed
