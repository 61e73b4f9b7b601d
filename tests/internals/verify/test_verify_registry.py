"""The verifier's registry covers every component config key once, and stays independent of
the solver and of the resolved candidates it is meant to check."""

from __future__ import annotations

from collections import Counter
from dataclasses import replace

from import_graph import graph, path_to, reachable

from solver_placement import Cluster, PlacementSpec, solve, verify
from solver_placement._specification.grammar import ALIASES, COMPONENT_KEYS
from solver_placement._verify import CHECKS

CANONICAL_KEYS = [key for key in COMPONENT_KEYS if key not in ALIASES]


def test_every_canonical_key_is_owned_by_exactly_one_check() -> None:
    owners = Counter(key for check in CHECKS for key in check.keys)
    assert sorted(owners) == sorted(CANONICAL_KEYS)
    assert [key for key, count in owners.items() if count > 1] == []


def test_aliases_are_read_as_the_key_they_spell() -> None:
    assert set(ALIASES.values()) <= set(CANONICAL_KEYS)
    assert not {key for check in CHECKS for key in check.keys} & set(ALIASES)


def test_check_names_are_unique() -> None:
    names = [check.name for check in CHECKS]
    assert len(set(names)) == len(names)


#: What the verifier re-derives on its own, so it must never run it.
SOLVER_SIDE = ("solver_placement._solver", "solver_placement._specification.candidates")


def test_the_verifier_runs_neither_the_solver_nor_the_candidates_not_even_through_other_modules() -> None:
    """Every module the verifier's code imports when it runs, followed import by import (an
    annotation under ``TYPE_CHECKING`` runs nothing), stays clear of the solver and of the
    resolved candidates it checks."""
    edges = graph(runtime_only=True)
    reached = reachable({module for module in edges if module.startswith("solver_placement._verify")}, edges)
    leaks = [path_to(module, reached) for module in reached if module.startswith(SOLVER_SIDE)]
    assert not leaks, leaks


class _Untouchable(dict):
    """Candidates the verifier must not read: any look at them fails the test."""

    def _refuse(self, *args: object, **kwargs: object) -> object:
        raise AssertionError("the verifier read the solver's candidates")

    __getitem__ = __iter__ = __contains__ = __len__ = get = items = keys = values = _refuse  # type: ignore[assignment]


def test_the_verifier_never_reads_the_resolved_candidates() -> None:
    """A spec holds its resolved candidates (``requests``), which the verifier could read
    without importing them: it checks a spec whose candidates are poisoned, so any read fails."""
    cluster = Cluster(2, 8, gpu_memory_gb=80)
    solved = solve(PlacementSpec.build(cluster, {
        "actor": {"placement": "0-7", "memory_gb": 30, "tensor_parallel_size": 2},
        "rollout": {"processes": 4, "hardware_per_process": 2, "collocate_with": "actor", "memory_gb": 20},
        "reward": {"processes": 4, "stride": 2, "hardware_per_process": 2, "exclusive_with": ["actor"]},
    }))  # fmt: skip
    poisoned = replace(solved.spec, requests=_Untouchable())
    verify(poisoned, solved.placements_by_component())
