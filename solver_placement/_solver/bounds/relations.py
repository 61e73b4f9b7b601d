"""The statements counting reads between components, each with the nodes where it bites.

Three kinds matter to a count of items per node:

* *apart*: two components share no item (``exclusive_with``; ``memory_gb`` when the two do not
  fit one GPU together; ``max_processes_per_hardware`` when one process of each already exceeds
  the limit), so their items add up on every node;
* *together*: ``collocate_with``, the two use the same items, so the same number per node;
* *room*: a component may use at most ``room[n]`` items of node ``n`` (its memory exceeds the
  GPU's, or a rank string already fills its items to the limit).

Each rule family gives its own relations (its ``bound`` form, next to its CP-SAT rule in
``_solver/rules/``), worded as the statement the user wrote (the model's own wording), so a
conflict found by counting reads like one found by the solver. This module holds what they share.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from solver_placement._errors import Statement
from solver_placement._specification.placement_spec import PlacementSpec

APART, TOGETHER, ROOM = "apart", "together", "room"


@dataclass(frozen=True)
class Relation:
    """One statement: ``kind`` between rule owners ``first`` and ``second`` on the nodes of
    ``nodes`` (a bool per node); for ``room``, ``room[n]`` caps ``first`` on node ``n`` (and
    ``second``, when it differs, is the fixed component whose load makes it so)."""

    statement: Statement
    kind: str
    first: str
    second: str
    nodes: np.ndarray
    room: np.ndarray | None = None


def everywhere(spec: PlacementSpec) -> np.ndarray:
    """Every node: the nodes a relation that holds on the whole cluster bites on."""
    return np.ones(spec.cluster.num_nodes, dtype=bool)
