"""The GPUs each component holds *as written*, read from the first (literal) solve.

RLinf's model-parallel classes decide their mode and their packed layouts from the GPU ranks
every component is given in ``component_placement``. Those ranks are group-local, so two
components are compared here by the *physical* GPUs they hold (RLinf compares the group-local
ranks and so ignores ``node_group``). Nothing here places anything: these are the facts the
layout rules are stated from, and the checks RLinf makes on them.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

import numpy as np

from solver_placement._cluster.ranks import format_ranks
from solver_placement._constants import ACCELERATOR
from solver_placement._errors import PlacementConfigError, counted
from solver_placement._frontends.rlinf.strategies import PackedPlacementStrategy
from solver_placement._solver.solution import Solution


@dataclass(frozen=True)
class HeldGpus:
    """One component's GPUs as written: its node groups, group ranks and cluster GPU ids."""

    name: str
    labels: tuple[str, ...]
    ranks: tuple[int, ...]
    physical: frozenset[int]

    @property
    def count(self) -> int:
        return len(self.ranks)

    @property
    def first(self) -> int:
        return self.ranks[0]

    @property
    def last(self) -> int:
        return self.ranks[-1]

    def packed(self, per_process: int = 1, stride: int = 1) -> PackedPlacementStrategy:
        """RLinf's ``PackedPlacementStrategy(first, last, per_process, stride)`` over these GPUs,
        on the component's own node groups (so its ranks mean what the user wrote)."""
        return PackedPlacementStrategy(self.first, self.last, per_process, stride, list(self.labels), name=self.name)


def gpus_of(solution: Solution, name: str) -> frozenset[int] | None:
    """The cluster GPU ids ``name`` uses, or None when its resources are not GPUs (nodes, robots)."""
    resources = solution.spec.resources_of(name)
    if any(group.hardware_type != ACCELERATOR for group in resources.groups):
        return None
    return frozenset(np.unique(solution.assignment(name).hardware).tolist())


def read_held(solution: Solution, name: str) -> HeldGpus:
    """``name``'s GPUs as written; refuses non-GPU resources and ranks that are not one a-b range.

    Each model-parallel component becomes one packed range, so a gap in its ranks would hand the
    gap's GPUs to it (RLinf fills gaps of the reward silently).
    """
    resources = solution.spec.resources_of(name)
    text = solution.spec.components[name].text
    physical = gpus_of(solution, name)
    if physical is None:
        raise PlacementConfigError(
            f"{name}: placement \"{text}\" is on {resources.describe()}, whose resources are not GPUs; "
            "model-parallel components need GPUs"
        )
    ranks = tuple(np.unique(solution.assignment(name).ranks).tolist())
    if ranks != tuple(range(ranks[0], ranks[-1] + 1)):
        raise PlacementConfigError(
            f"{name}: placement \"{text}\" uses GPUs {format_ranks(ranks)}, which must be continuous "
            "(one a-b range): each model-parallel component is placed as one packed range"
        )
    return HeldGpus(name, resources.labels, ranks, physical)


def check_disjoint(held: Mapping[str, HeldGpus], pairs: Iterable[tuple[str, str]], context: str) -> None:
    """Every listed pair of roles (when both are present) holds disjoint cluster GPUs."""
    for first, second in pairs:
        if first not in held or second not in held:
            continue
        a, b = held[first], held[second]
        shared = a.physical & b.physical
        if shared:
            raise PlacementConfigError(
                f"{context}: {a.name} (cluster GPUs {format_ranks(a.physical)}) and {b.name} (cluster GPUs "
                f"{format_ranks(b.physical)}) share cluster GPUs {format_ranks(shared)}; in disaggregated mode actor, "
                "rollout, inference, critic and critic_inference hold disjoint GPUs"
            )


def check_tp_fits(held: HeldGpus, tp: int, key: str, rlinf_role: str) -> None:
    """RLinf's sanity check: a TP group cannot be larger than the component's GPUs. The message
    ends with RLinf's sentence for it (``rlinf_role`` is the role as RLinf capitalises it), which
    code written against RLinf matches."""
    if tp > held.count:
        raise PlacementConfigError(
            f"{held.name}: TP size {tp} ({key}) must be less than or equal to its {counted(held.count, 'GPU')} "
            f"({rlinf_role} TP size {tp} must be less than or equal to {rlinf_role} world size {held.count}.)"
        )


def check_divides(held: HeldGpus, size: int, key: str) -> None:
    """``held``'s GPU count is a multiple of ``size`` (the setting ``key``): every engine gets a full set."""
    if held.count % size:
        raise PlacementConfigError(
            f"{held.name}: its {counted(held.count, 'GPU')} ({format_ranks(held.ranks)}) are not divisible by {key} = {size}; "
            "every engine needs a full set"
        )
