"""RLinf's ``ComponentPlacement`` base class and its HYBRID variant, solved by the CP-SAT model.

:class:`ComponentPlacement` parses ``cluster.component_placement`` into a spec and solves it once,
eagerly, so every error surfaces when the object is built. The model-parallel subclasses
(``model_parallel.py``, ``eval_placement.py``, ``multi_agent.py``) read the job's sizes, decide a
mode from the GPUs each component holds as written, and re-state the components they manage as
RLinf's packed strategies (:meth:`ComponentPlacement._lay_out`), which the solver places again.
Placements, strategies, world sizes and hardware ranks all come from the solved spec; nothing
here walks ranks to compute a layout. The spec is solved once: every strategy handed out serves
its ``get_placement`` on this placement's cluster from that solution.

RLinf's own workers and scripts read private attributes of a placement (``_placement_mode``,
``_components`` here; ``_rollout_sync_mode`` and ``_cluster_num_gpus`` on the model-parallel
classes, which alone have them in RLinf too) and write two
(``_placements[name] = strategy``, ``_rollout_num_gpus = n``). Each exists here under RLinf's
name with RLinf's value: read-only views of this placement's own state, and for the two written
ones state whose writes take effect (``strategy_table.py``, ``model_parallel_sizes.py``). The
mode enums compare equal to RLinf's members of the same name, because RLinf's code compares what
it reads with its own ``PlacementMode`` / ``RolloutSyncMode``.
"""

from __future__ import annotations

from collections.abc import Mapping
from enum import Enum, auto
from typing import Any

import numpy as np

from solver_placement._cluster.cluster import Cluster
from solver_placement._config import ConfigSource, require_mapping
from solver_placement._errors import PlacementConfigError
from solver_placement._frontends.rlinf.component_names import warn_near_misses
from solver_placement._frontends.rlinf.parallel_keys import check_entry_meanings, check_laid_out_entries
from solver_placement._frontends.rlinf.rlinf_cluster import as_cluster
from solver_placement._frontends.rlinf.strategies import FlexiblePlacementStrategy, NodePlacementStrategy, PlacementStrategy
from solver_placement._frontends.rlinf.strategy_table import StrategyTable
from solver_placement._job import Job, load_job
from solver_placement._records import Placement
from solver_placement._solver.solution import Solution
from solver_placement._solver.solve import solve
from solver_placement._specification.placement_spec import PlacementSpec


class RLinfEnum(Enum):
    """An enum whose members equal RLinf's members of the same enum and member name.

    RLinf's workers read a placement's mode and compare it with RLinf's own enum
    (``self.rollout_sync_mode == RolloutSyncMode.COLLOCATED`` in its Megatron actor); with
    identity equality ours would never match and the worker would silently take the wrong
    weight-sync path. The hash is Enum's own (the member name), so both kinds of member also find
    each other as dict keys.
    """

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Enum):
            return type(other).__name__ == type(self).__name__ and other.name == self.name
        return NotImplemented

    def __hash__(self) -> int:
        return hash(self.name)


class PlacementMode(RLinfEnum):
    """How a job's components share GPUs (RLinf's modes)."""

    COLLOCATED = auto()
    DISAGGREGATED = auto()
    HYBRID = auto()
    AUTO = auto()


class RolloutSyncMode(RLinfEnum):
    """How rollout weights are refreshed: CUDA IPC on shared GPUs, or collectives across GPUs."""

    COLLOCATED = auto()
    DISAGGREGATED = auto()


class ComponentPlacement:
    """Parses ``config.cluster.component_placement`` and solves it (RLinf's base class).

    ``config`` is a ``DictConfig``, a mapping or a YAML path holding the whole job config (or just
    its ``cluster:`` section), or a :class:`~solver_placement._job.Job`. ``cluster`` is this project's
    :class:`Cluster` or the one RLinf hands out (see :func:`~solver_placement._frontends.rlinf.rlinf_cluster.as_cluster`);
    without it the cluster is built from the same config. ``solver_options`` go over the config's
    ``cluster.solver`` (``{"time_limit_s": 30}``) for every solve the placement runs.
    """

    def __init__(self, config: ConfigSource | Job, cluster: Any = None, *, solver_options: Mapping[str, Any] | None = None) -> None:
        job = load_job(config).with_solver_options(solver_options or {})
        self._config = job.config
        self._section = job.section
        self._raw = require_mapping(job.component_placement, "cluster.component_placement")
        self._cluster = as_cluster(cluster) if cluster is not None else job.stated_cluster
        check_entry_meanings(self._raw, self._config)
        self._solver_options = job.solver_options
        #: set once by the subclasses that have a mode, before they lay out their components
        self._mode: PlacementMode | None = None
        #: RLinf's ``_placements``: what ``get_strategy`` hands out, writable as RLinf's scripts write it
        self._placements = StrategyTable(self)
        self._use(PlacementSpec.from_component_placement(job.with_cluster(self._cluster)))  # the job's plain values: no second copy
        warn_near_misses(self._spec.names)  # RLinf places a misspelt name as one more component: say so

    def _use(self, spec: PlacementSpec) -> None:
        """Adopt ``spec`` and its solution as what every accessor reports (nothing changes when it
        has none, so a failed layout can still be tried with other sizes)."""
        solution = solve(spec)
        self._spec = spec
        self._solution = solution

    def _lay_out(self, strategies: Mapping[str, PlacementStrategy], relations: Mapping[str, Mapping[str, Any]]) -> None:
        """Re-state the named components as ``strategies`` and solve again; every other component
        keeps its entry as written. ``relations`` (``collocate_with``, ``exclusive_with``, ...) are
        added to the entry of the component they are keyed by, laid out or not.

        This is how the model-parallel subclasses place their layouts: the rule becomes a spec,
        the solver places it, and the strategies are what :meth:`get_strategy` hands out.
        """
        self._use(self._laid_out_spec(strategies, relations))
        for strategy in strategies.values():
            strategy.serve(self._solution)
        self._placements.adopt(strategies)

    def _laid_out_spec(self, strategies: Mapping[str, PlacementStrategy], relations: Mapping[str, Mapping[str, Any]]) -> PlacementSpec:
        """The spec :meth:`_lay_out` solves, built without changing this placement (so a layout
        with other sizes can be tried on it)."""
        entries = {name: self._raw_entry(name) for name in self._spec.names}
        check_laid_out_entries(entries, strategies, type(self).__name__)
        for name, strategy in strategies.items():
            entries[name] = strategy.component_entry()
        for name, extra in relations.items():
            entries[name] = with_relations(entries[name], extra)
        spec = PlacementSpec.build(self._cluster, entries, self._solver_options)
        for strategy in strategies.values():
            strategy.build_spec(self._cluster)  # the strategy's own checks on the cluster
        return spec

    def _raw_entry(self, name: str) -> Any:
        """The ``component_placement`` value ``name`` was given (under its possibly shared key)."""
        return self._raw[self._spec.components[name].key]

    # ------------------------------------------------------------------ RLinf API
    @property
    def placement_mode(self) -> PlacementMode | None:
        return self._mode

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
        """A strategy that reproduces the component's placement (components on one key share it),
        or the one written into ``_placements[component_name]``, as RLinf's scripts do, from then on."""
        if component_name not in self._placements:
            self._known(component_name)  # raises, naming the known components
        return self._placements[component_name]

    def get_placements(self, component_name: str, isolate_accelerator: bool = True) -> list[Placement]:
        """The component's placement records, ordered by rank: those of the solution, or once a
        strategy was written into ``_placements[component_name]``, what that strategy places on
        this placement's cluster (what the workers launched with ``get_strategy`` get)."""
        written = self._placements.written(component_name)
        if written is not None:
            return written.get_placement(self._cluster, isolate_accelerator)
        return self._solution.placements(self._known(component_name), isolate_accelerator)

    # ------------------------------------------------------------------ RLinf's private attributes
    @property
    def _placement_mode(self) -> PlacementMode | None:
        """RLinf's ``_placement_mode`` (read by its Megatron worker and ``main_grpo.py``): :attr:`placement_mode`.
        Read-only: the components were laid out for this mode."""
        return self._mode

    @property
    def _components(self) -> list[str]:
        """RLinf's ``_components`` (read by its dynamic scheduler): :attr:`components`, a fresh list."""
        return self.components

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
            mode = self._mode.name if self._mode else "none"
            raise PlacementConfigError(
                f"component {component_name!r} does not exist in {type(self).__name__} (placement mode {mode}); "
                f"known components: {', '.join(self.components)}"
            )
        return component_name

    def _solved_strategy(self, name: str) -> PlacementStrategy:
        """Flexible (hardware) or Node (node-only) strategy holding the solved per-process ranks,
        served by this placement's solution; a component sharing another's key shares its solved
        strategy (a strategy written over the other's is not shared, as in RLinf's dict)."""
        owner = self._spec.components[name].shares_rule_with
        if owner:
            return self._placements.solved(owner)
        if self._spec.resources_of(name).counts_nodes:
            return NodePlacementStrategy.from_solution(self._solution, name)
        return FlexiblePlacementStrategy.from_solution(self._solution, name)


class HybridComponentPlacement(ComponentPlacement):
    """Components on any sets of GPUs (embodied jobs); the base class in HYBRID mode."""

    def __init__(self, config: ConfigSource | Job, cluster: Any = None, *, solver_options: Mapping[str, Any] | None = None) -> None:
        super().__init__(config, cluster, solver_options=solver_options)
        self._mode = PlacementMode.HYBRID


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
