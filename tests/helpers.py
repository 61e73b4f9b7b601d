"""Small shared helpers for the core tests."""

from __future__ import annotations

import inspect
import os
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from solver_placement import Solution, solve, verify

#: The repository root and its scenario models, for tests in any folder.
ROOT = Path(__file__).resolve().parents[1]
MODELS = ROOT / "models"
#: A model that is impossible by counting: rollout needs 4 GPUs the actor does not use, of 4.
INFEASIBLE = """
cluster:
  num_nodes: 1
  num_gpus_per_node: 4
  component_placement:
    actor: 0-3
    rollout: {processes: 2, hardware_per_process: 2, exclusive_with: [actor]}
"""


def config(num_nodes: int, gpus: int | list[int], placement: dict[str, Any], **cluster: Any) -> dict[str, Any]:
    """A config mapping with a ``cluster:`` section."""
    return {"cluster": {"num_nodes": num_nodes, "num_gpus_per_node": gpus, "component_placement": placement, **cluster}}


def solved(num_nodes: int, gpus: int | list[int], placement: dict[str, Any], **kwargs: Any) -> Solution:
    """Solve and independently verify, as every solving test must."""
    solution = solve(config(num_nodes, gpus, placement, **kwargs.pop("cluster", {})), **kwargs)
    verify(solution.spec, solution.placements_by_component())
    return solution


def layout(solution: Solution, component: str) -> list[tuple[int, list[int]]]:
    """Per process: (node, local hardware ids)."""
    return [(p.cluster_node_rank, p.local_hardware_ranks) for p in solution.placements(component)]


def cli_runner() -> CliRunner:
    """A click ``CliRunner`` whose results keep stdout and stderr apart (``result.stdout``,
    ``result.stderr``) on every click the dependency range allows: click >= 8.2 always does and
    has no ``mix_stderr`` argument; click 8.1 mixes stderr into stdout unless given
    ``mix_stderr=False``. Only ``result.output`` still differs (8.2: both streams, 8.1: stdout),
    so tests read ``stdout``/``stderr``, and ``output`` only in failure messages."""
    if "mix_stderr" in inspect.signature(CliRunner.__init__).parameters:
        return CliRunner(mix_stderr=False)  # type: ignore[call-arg]  # click < 8.2
    return CliRunner()


def example_tiers(fast: int, full: int) -> pytest.MarkDecorator:
    """Parametrize a property test by its example count: ``fast`` in the fast tier, the ``full``
    count under ``slow`` (which CI runs), so a property keeps every example in CI while the fast
    tier stays under a minute. Where the slow tests run, the ``fast`` run is left out
    (``superseded``): the derandomized ``full`` run draws from the same strategy, and its first
    examples are mostly the fast run's own, so running both spends CI's time on the same checks
    twice. The test runs its ``@given`` check with ``settings(max_examples=examples)``."""
    return pytest.mark.parametrize(
        "examples", [pytest.param(fast, id="fast", marks=pytest.mark.superseded), pytest.param(full, id="full", marks=pytest.mark.slow)]
    )


def needs_hydra(why: str) -> None:
    """Skip the calling test without Hydra (the ``[hydra]`` extra), saying ``why``; where
    ``SOLVER_PLACEMENT_REQUIRE_HYDRA`` is set (the CI steps that install Hydra), run it regardless,
    so a Hydra that failed to install fails the test instead of skipping it."""
    if not os.environ.get("SOLVER_PLACEMENT_REQUIRE_HYDRA"):
        pytest.importorskip("hydra", reason=why)


#: The words the last note of a solution starts with, by the path that answered (``loop.py``).
ANSWERED_BY = {"counts": "the count model (", "first fit": "first fit (", "search": "the exact model ("}


def declined_first(solution: Solution) -> tuple[str, ...]:
    """The notes of the paths tried before the one that answered: every note but the last, which
    names the path that answered and how it proved its answer (checked here)."""
    assert solution.notes and solution.notes[-1].startswith(ANSWERED_BY[solution.method]), solution.notes
    return solution.notes[:-1]
