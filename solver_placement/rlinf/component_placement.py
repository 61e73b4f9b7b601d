"""RLinf's ``ComponentPlacement`` base class and its HYBRID variant, solved by the CP-SAT model.

:class:`ComponentPlacement` parses ``cluster.component_placement`` into a spec and solves it once,
eagerly, so every error surfaces when the object is built. The model-parallel subclasses
(``model_parallel.py``, ``eval_placement.py``, ``multi_agent.py``) read the job's sizes, decide a
mode from the GPUs each component holds as written, and re-state the components they manage as
RLinf's packed strategies (:meth:`ComponentPlacement._lay_out`), which the solver places again.
Placements, strategies, world sizes and hardware ranks all come from the solved spec; nothing
here walks ranks to compute a layout. The spec is solved once: every strategy handed out serves
its ``get_placement`` on this placement's cluster from that solution.
"""

from __future__ import annotations

from collections.abc import Mapping
from enum import Enum, auto
from typing import Any

import numpy as np

from solver_placement.cluster.cluster import Cluster
from solver_placement.cluster.schema import cluster_section
from solver_placement.config import ConfigSource, load_config, require_mapping
from solver_placement.errors import PlacementConfigError
from solver_placement.records import Placement
from solver_placement.rlinf.parallel_keys import check_entry_meanings, check_laid_out_entries
from solver_placement.rlinf.rlinf_cluster import as_cluster
from solver_placement.rlinf.strategies import FlexiblePlacementStrategy, NodePlacementStrategy, PlacementStrategy
from solver_placement.solver.solution import Solution
from solver_placement.solver.solve import solve
from solver_placement.spec.placement_spec import PlacementSpec


class PlacementMode(Enum):
    """How a job's components share GPUs (RLinf's modes)."""

    COLLOCATED = auto()
    DISAGGREGATED = auto()
    HYBRID = auto()
    AUTO = auto()


class RolloutSyncMode(Enum):
    """How rollout weights are refreshed: CUDA IPC on shared GPUs, or collectives across GPUs."""

    COLLOCATED = auto()
    DISAGGREGATED = auto()


class ComponentPlacement:
    """Parses ``config.cluster.component_placement`` and solves it (RLinf's base class).

    ``config`` is a ``DictConfig``, a mapping or a YAML path holding the whole job config (or just
    its ``cluster:`` section). ``cluster`` is this project's :class:`Cluster` or the one RLinf
    hands out (see :func:`~solver_placement.rlinf.rlinf_cluster.as_cluster`); without it the
    cluster is built from the same config.
    """

    def __init__(self, config: ConfigSource, cluster: Any = None) -> None:
        self._config = load_config(config)
        self._section = cluster_section(self._config)
        if "component_placement" not in self._section:
            raise PlacementConfigError("cluster.component_placement is missing: nothing to place")
        self._cluster = as_cluster(cluster) if cluster is not None else Cluster.from_config(self._section)
        self._raw = require_mapping(self._section["component_placement"], "cluster.component_placement")
        check_entry_meanings(self._raw, self._config)
        self._placement_mode: PlacementMode | None = None
        self._strategies: dict[str, PlacementStrategy] = {}
        self._use(PlacementSpec.build(self._cluster, self._raw, self._section.get("solver")))

    def _use(self, spec: PlacementSpec) -> None:
        """Adopt ``spec`` and its solution as what every accessor reports."""
        self._spec = spec
        self._solution = solve(spec)

    def _lay_out(self, strategies: Mapping[str, PlacementStrategy], relations: Mapping[str, Mapping[str, Any]]) -> None:
        """Re-state the named components as ``strategies`` and solve again; every other component
        keeps its entry as written. ``relations`` (``collocate_with``, ``exclusive_with``, ...) are
        added to the entry of the component they are keyed by, laid out or not.

        This is how the model-parallel subclasses place their layouts: the rule becomes a spec,
        the solver places it, and the strategies are what :meth:`get_strategy` hands out.
        """
        entries = {name: self._raw_entry(name) for name in self._spec.names}
        check_laid_out_entries(entries, strategies, type(self).__name__)
        for name, strategy in strategies.items():
            entries[name] = strategy.component_entry()
        for name, extra in relations.items():
            entries[name] = with_relations(entries[name], extra)
        spec = PlacementSpec.build(self._cluster, entries, self._section.get("solver"))
        for strategy in strategies.values():
            strategy.build_spec(self._cluster)  # the strategy's own checks on the cluster
        self._use(spec)
        for strategy in strategies.values():
            strategy.serve(self._solution)
        self._strategies = dict(strategies)

    def _raw_entry(self, name: str) -> Any:
        """The ``component_placement`` value ``name`` was given (under its possibly shared key)."""
        return self._raw[self._spec.components[name].key]

    # ------------------------------------------------------------------ RLinf API
    @property
    def placement_mode(self) -> PlacementMode | None:
        return self._placement_mode

    @property
    def components(self) -> list[str]:
        """Component names in config order."""
        return self._spec.names

    def get_world_size(self, component_name: str) -> int:
        """Number of processes of the component."""
        return self._solution.assignment(self._known(component_name)).num_processes

    def get_hardware_ranks(self, component_name: str) -> list[int]:
        """Ranks (within the component's node groups) its processes use, ascending."""
        ranks = self._solution.assignment(self._known(component_name)).ranks
        return np.unique(ranks).tolist()

    def get_strategy(self, component_name: str) -> PlacementStrategy:
        """A strategy that reproduces the component's placement (components on one key share it)."""
        name = self._known(component_name)
        if name not in self._strategies:
            owner = self._spec.components[name].shares_rule_with
            self._strategies[name] = self.get_strategy(owner) if owner else self._solved_strategy(name)
        return self._strategies[name]

    def get_placements(self, component_name: str, isolate_accelerator: bool = True) -> list[Placement]:
        """The component's placement records, ordered by rank."""
        return self._solution.placements(self._known(component_name), isolate_accelerator)

    # ------------------------------------------------------------------ extras
    @property
    def cluster(self) -> Cluster:
        return self._cluster

    @property
    def spec(self) -> PlacementSpec:
        """The spec that was solved (for :func:`solver_placement.verify`)."""
        return self._spec

    @property
    def solution(self) -> Solution:
        return self._solution

    def _known(self, component_name: str) -> str:
        if component_name not in self._spec.components:
            mode = self._placement_mode.name if self._placement_mode else "none"
            raise PlacementConfigError(
                f"component {component_name!r} does not exist in {type(self).__name__} (placement mode {mode}); "
                f"known components: {', '.join(self.components)}"
            )
        return component_name

    def _solved_strategy(self, name: str) -> PlacementStrategy:
        """Flexible (hardware) or Node (node-only) strategy holding the solved per-process ranks,
        served by this placement's solution."""
        if self._spec.resources_of(name).counts_nodes:
            return NodePlacementStrategy.from_solution(self._solution, name)
        return FlexiblePlacementStrategy.from_solution(self._solution, name)


class HybridComponentPlacement(ComponentPlacement):
    """Components on any sets of GPUs (embodied jobs); the base class in HYBRID mode."""

    def __init__(self, config: ConfigSource, cluster: Any = None) -> None:
        super().__init__(config, cluster)
        self._placement_mode = PlacementMode.HYBRID


def with_relations(entry: Any, relations: Mapping[str, Any]) -> dict[str, Any]:
    """``entry`` (a rank string or a mapping) as a mapping with ``relations`` added; an
    ``exclusive_with`` the entry already states is kept and extended."""
    body = dict(entry) if isinstance(entry, Mapping) else {"placement": entry}
    for key, value in relations.items():
        if key == "exclusive_with" and key in body:
            stated = body[key]
            stated = [part.strip() for part in stated.split(",")] if isinstance(stated, str) else list(stated)
            body[key] = [*stated, *(name for name in value if name not in stated)]
        else:
            body[key] = value
    return body
