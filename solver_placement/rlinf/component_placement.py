"""RLinf's ``ComponentPlacement`` family, solved by the CP-SAT model.

:class:`ComponentPlacement` parses ``cluster.component_placement`` into a spec and solves it once,
eagerly, so every error surfaces when the object is built. :class:`ModelParallelComponentPlacement`
reads the model-parallel sizes of the job, decides the mode (collocated, disaggregated, auto) from
the GPUs each component holds *as written*, then states RLinf's packed and strided layouts, plus
the relations between components (collocation, exclusivity, tensor-parallel groups), as a second
spec and solves that. Placements, strategies, world sizes and hardware ranks all come from the
solved spec; nothing here walks ranks to compute a layout.

Components are compared by the physical GPUs they hold, so ``node_group`` is honoured (RLinf
compares group-local ranks as if they were cluster ranks and places on the wrong node).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from enum import Enum, auto
from typing import Any

import numpy as np

from solver_placement.cluster.cluster import Cluster
from solver_placement.config import ConfigSource, load_config, positive_int, require_mapping
from solver_placement.errors import PlacementConfigError
from solver_placement.cluster.schema import cluster_section
from solver_placement.records import Placement
from solver_placement.solver.solution import Solution
from solver_placement.solver.solve import solve
from solver_placement.spec.placement_spec import PlacementSpec
from solver_placement.rlinf.strategies import FlexiblePlacementStrategy, NodePlacementStrategy, PackedPlacementStrategy, PlacementStrategy


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


def ranges_text(ranks: Iterable[int]) -> str:
    """``[0, 1, 2, 5]`` -> ``"0-2,5"``: ranks as the user would write them."""
    values = sorted(set(ranks))
    if not values:
        return "none"
    breaks = [i + 1 for i, (a, b) in enumerate(zip(values, values[1:])) if b != a + 1]
    runs = [values[lo:hi] for lo, hi in zip([0, *breaks], [*breaks, len(values)])]
    return ",".join(str(run[0]) if len(run) == 1 else f"{run[0]}-{run[-1]}" for run in runs)


class ComponentPlacement:
    """Parses ``config.cluster.component_placement`` and solves it (RLinf's base class).

    ``config`` is a ``DictConfig``, a mapping or a YAML path holding the whole job config (or just
    its ``cluster:`` section). Without ``cluster`` the cluster is built from the same config.
    """

    def __init__(self, config: ConfigSource, cluster: Cluster | None = None) -> None:
        self._config = load_config(config)
        self._section = cluster_section(self._config)
        if "component_placement" not in self._section:
            raise PlacementConfigError("cluster.component_placement is missing: nothing to place")
        self._cluster = cluster if cluster is not None else Cluster.from_config(self._section)
        self._raw = require_mapping(self._section["component_placement"], "cluster.component_placement")
        self._placement_mode: PlacementMode | None = None
        self._strategies: dict[str, PlacementStrategy] = {}
        self._use(PlacementSpec.build(self._cluster, self._raw, self._section.get("solver")))

    def _use(self, spec: PlacementSpec) -> None:
        """Adopt ``spec`` and its solution as what every accessor reports."""
        self._spec = spec
        self._solution = solve(spec)

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
        """Flexible (hardware) or Node (node-only) strategy holding the solved per-process ranks."""
        assignment = self._solution.assignment(name)
        resources = self._spec.resources_of(name)
        per_process = np.split(assignment.ranks, assignment.indptr[1:-1])
        if resources.counts_nodes:
            return NodePlacementStrategy([int(ranks[0]) for ranks in per_process], list(resources.labels), name=name)
        return FlexiblePlacementStrategy([ranks.tolist() for ranks in per_process], list(resources.labels), name=name)


class HybridComponentPlacement(ComponentPlacement):
    """Components on any sets of GPUs (embodied jobs); the base class in HYBRID mode."""

    def __init__(self, config: ConfigSource, cluster: Cluster | None = None) -> None:
        super().__init__(config, cluster)
        self._placement_mode = PlacementMode.HYBRID


@dataclass(frozen=True)
class _Held:
    """GPUs one component holds as written: its node groups, group ranks and cluster GPU ids."""

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


#: Pairs that must hold disjoint GPUs in disaggregated mode (RLinf's list; reward is free).
DISJOINT_PAIRS = (
    ("actor", "rollout"),
    ("actor", "inference"),
    ("rollout", "inference"),
    ("critic", "actor"),
    ("critic", "rollout"),
    ("critic", "critic_inference"),
    ("rollout", "critic_inference"),
)
REQUIRED = ("actor", "rollout", "reward")
OPTIONAL = ("critic", "critic_inference")


class ModelParallelComponentPlacement(ComponentPlacement):
    """Model-parallel reasoning jobs (Megatron actor, SGLang/vLLM rollout), RLinf's modes.

    * collocated (actor and rollout on the same GPUs): rollout engines of ``rollout_tp`` GPUs with
      stride ``actor_tp // rollout_tp`` inside each actor TP group, stated as ``collocate_with:
      actor`` plus a stride constraint, so every actor rank shares its GPU with the rollout rank it
      hands weights to (see :meth:`weight_sync_map`);
    * disaggregated (disjoint GPUs, stated as ``exclusive_with``): rollout processes of
      ``rollout_tp * rollout_pp`` GPUs, every other component one process per GPU;
    * auto (``cluster.auto_scheduler``): disaggregated, ordered actor -> rollout -> inference over
      the whole cluster; the actor then spans every GPU, and with
      ``cluster.use_pre_process_policy`` the rollout also spans the actor's GPUs.

    Components: actor, rollout, reward (required); inference or actor_inference, critic,
    critic_inference (optional); any other component keeps its own placement.
    """

    def __init__(self, config: ConfigSource, cluster: Cluster | None = None) -> None:
        super().__init__(config, cluster)
        self._held = self._read_held()
        self._rollout_gpus = self._held["rollout"].count
        self._placement_mode = self._detect_mode()
        self._check_tp_fits("actor", self.actor_tp_size, "actor.model.tensor_model_parallel_size")
        self._check_tp_fits("rollout", self.rollout_tp_size, "rollout.tensor_parallel_size")
        strategies, relations = self._layout()
        entries = {name: self._raw_entry(name) for name in self._spec.names}
        for name, strategy in strategies.items():
            entries[name] = {**strategy.component_entry(), **relations.get(name, {})}
        spec = PlacementSpec.build(self._cluster, entries, self._section.get("solver"))
        for strategy in strategies.values():
            strategy.check_resources(spec)
        self._use(spec)
        self._strategies = dict(strategies)

    # ------------------------------------------------------------------ reading the config
    def _inference_component(self) -> str | None:
        """``inference`` or, failing that, ``actor_inference`` (None if neither is placed)."""
        names = [name for name in ("inference", "actor_inference") if name in self._spec.components]
        if len(names) > 1:
            raise PlacementConfigError(
                "component_placement places both 'inference' and 'actor_inference'; "
                "ModelParallelComponentPlacement needs one dedicated inference component"
            )
        return names[0] if names else None

    def _raw_entry(self, name: str) -> Any:
        return self._raw[self._spec.components[name].key]

    def _lookup(self, path: str, root: Mapping[str, Any] | None = None) -> Any:
        """The value at dotted ``path`` of the job config (or of ``root``); None when absent."""
        node: Any = self._config if root is None else root
        for key in path.split("."):
            if not isinstance(node, Mapping) or key not in node:
                return None
            node = node[key]
        return node

    def _config_int(self, path: str, default: int) -> int:
        """A positive int at dotted ``path`` of the job config, ``default`` when absent."""
        value = self._lookup(path)
        return default if value is None else positive_int(value, path)

    def _cluster_flag(self, key: str) -> bool:
        """A switch of the ``cluster:`` section (``auto_scheduler``, ``use_pre_process_policy``)."""
        return bool(self._lookup(key, self._section))

    def _read_held(self) -> dict[str, _Held]:
        """GPUs of every managed component as written; checks presence, GPUs and contiguity."""
        roles = {role: role for role in (*REQUIRED, *OPTIONAL)}
        roles["inference"] = self._inference_component()
        held: dict[str, _Held] = {}
        for role, name in roles.items():
            if name is None or name not in self._spec.components:
                if role in REQUIRED:
                    raise PlacementConfigError(
                        f"component_placement has no '{role}' component; ModelParallelComponentPlacement needs "
                        "actor, rollout and reward"
                    )
                continue
            held[role] = self._held_of(name)
        return held

    def _held_of(self, name: str) -> _Held:
        resources = self._spec.resources_of(name)
        text = self._spec.components[name].text
        if resources.counts_nodes:
            raise PlacementConfigError(
                f"{name}: placement \"{text}\" is on {resources.describe()}, whose resources are nodes; "
                "model-parallel components need GPUs"
            )
        assignment = self._solution.assignment(name)
        ranks = tuple(np.unique(assignment.ranks).tolist())
        if ranks != tuple(range(ranks[0], ranks[-1] + 1)):
            raise PlacementConfigError(
                f"{name}: placement \"{text}\" uses GPUs {ranges_text(ranks)}, which must be continuous "
                "(one a-b range): each model-parallel component is placed as one packed range"
            )
        physical = frozenset(np.unique(assignment.hardware).tolist())
        return _Held(name, resources.labels, ranks, physical)

    # ------------------------------------------------------------------ mode
    def _detect_mode(self) -> PlacementMode:
        held = self._held
        if self._cluster_flag("auto_scheduler") and "critic" not in held:
            self._check_disjoint("cluster.auto_scheduler: AUTO mode is disaggregated mode with an order")
            self._check_auto_order()
            return PlacementMode.AUTO
        if held["actor"].physical == held["rollout"].physical:
            for role in ("inference", "critic_inference"):
                if role in held:
                    raise PlacementConfigError(
                        f"{held[role].name}: must not be placed in collocated mode (actor and rollout share their GPUs "
                        "and the actor computes log-probabilities itself)"
                    )
            return PlacementMode.COLLOCATED
        self._check_disjoint("the placement is neither collocated (actor and rollout on exactly the same GPUs) nor disaggregated")
        self._check_dedicated_inference()
        return PlacementMode.DISAGGREGATED

    def _check_disjoint(self, context: str) -> None:
        for first, second in DISJOINT_PAIRS:
            if first not in self._held or second not in self._held:
                continue
            a, b = self._held[first], self._held[second]
            shared = a.physical & b.physical
            if shared:
                raise PlacementConfigError(
                    f"{context}: {a.name} (cluster GPUs {ranges_text(a.physical)}) and {b.name} (cluster GPUs "
                    f"{ranges_text(b.physical)}) share cluster GPUs {ranges_text(shared)}; in disaggregated mode actor, "
                    "rollout, inference, critic and critic_inference hold disjoint GPUs"
                )

    def _check_auto_order(self) -> None:
        total = self._cluster.num_accelerators
        order = [self._held[role] for role in ("actor", "rollout", "inference") if role in self._held]
        laid_out = [gpu for held in order for gpu in sorted(held.physical)]
        if laid_out != list(range(total)):
            described = ", ".join(f"{held.name} {ranges_text(held.physical)}" for held in order)
            raise PlacementConfigError(
                f"cluster.auto_scheduler: AUTO mode requires components placed in the order actor -> rollout -> "
                f"inference covering all {total} cluster GPUs 0-{total - 1}, but they hold cluster GPUs {described}"
            )

    def _check_dedicated_inference(self) -> None:
        if "inference" in self._held:
            name = self._held["inference"].name
            section = self._inference_section()
            key = (
                f"{section}.model.tensor_model_parallel_size" if section
                else "actor.model.tensor_model_parallel_size, used as the config has no inference section"
            )
            self._check_tp_fits("inference", self.inference_tp_size, key)
            recompute = self._lookup("algorithm.recompute_logprobs")
            if not recompute:
                state = "is missing" if recompute is None else "is false"
                raise PlacementConfigError(
                    f"{name}: algorithm.recompute_logprobs {state}, which disables inference; "
                    f"set it to true or remove the {name} GPUs {ranges_text(self._held['inference'].ranks)}"
                )
        if "critic_inference" in self._held:
            self._check_tp_fits(
                "critic_inference", self.critic_inference_tp_size, "critic_inference.model.tensor_model_parallel_size"
            )

    def _check_tp_fits(self, role: str, tp: int, key: str) -> None:
        held = self._held[role]
        if tp > held.count:
            raise PlacementConfigError(f"{held.name}: TP size {tp} ({key}) must be less than or equal to its {held.count} GPUs")

    # ------------------------------------------------------------------ layout
    def _packed(self, role: str, per_process: int = 1, stride: int = 1) -> PackedPlacementStrategy:
        held = self._held[role]
        return PackedPlacementStrategy(held.first, held.last, per_process, stride, list(held.labels), name=held.name)

    def _layout(self) -> tuple[dict[str, PackedPlacementStrategy], dict[str, dict[str, Any]]]:
        """Strategies of the managed components (by name) and the relations between them."""
        relations: dict[str, dict[str, Any]] = {}
        packed = [self._packed(role) for role in self._held if role not in ("actor", "rollout")]
        if self.is_collocated:
            packed += [self._packed("actor"), self._collocated_rollout(relations)]
        elif self.is_auto:
            packed += [PackedPlacementStrategy(0, self._cluster.num_accelerators - 1, name="actor"), self._auto_rollout()]
        else:
            rollout = self._held["rollout"]
            packed += [self._packed("actor"), self._pipelined_rollout(rollout.first, rollout.last, rollout.labels)]
        if not self.is_collocated:
            self._add_exclusions(relations, include_actor=self.is_disaggregated)
        return {strategy.name: strategy for strategy in packed}, relations

    def _collocated_rollout(self, relations: dict[str, dict[str, Any]]) -> PackedPlacementStrategy:
        """Rollout engines strided inside each actor TP group, collocated with the actor."""
        actor_tp, rollout_tp = self.actor_tp_size, self.rollout_tp_size
        stride = 1
        if actor_tp > rollout_tp:
            if actor_tp % rollout_tp:
                raise PlacementConfigError(
                    f"rollout: actor TP size {actor_tp} (actor.model.tensor_model_parallel_size) must be divisible by "
                    f"rollout TP size {rollout_tp} (rollout.tensor_parallel_size) in collocated mode"
                )
            stride = actor_tp // rollout_tp
        relations["rollout"] = {"collocate_with": "actor"}
        if 1 < rollout_tp <= actor_tp:
            relations["actor"] = {"tensor_parallel_size": actor_tp}
        return self._packed("rollout", rollout_tp, stride)

    def _auto_rollout(self) -> PackedPlacementStrategy:
        """AUTO: with the pre-process policy the rollout also runs on the actor's GPUs."""
        rollout = self._held["rollout"]
        if not self._cluster_flag("use_pre_process_policy"):
            return self._pipelined_rollout(rollout.first, rollout.last, rollout.labels)
        actor = self._held["actor"].count
        if actor % self.rollout_tp_size:
            raise PlacementConfigError(
                f"cluster.use_pre_process_policy: the actor's {actor} GPUs must be divisible by rollout TP size "
                f"{self.rollout_tp_size} (rollout.tensor_parallel_size), since rollout engines also run on them"
            )
        last = max(rollout.physical)
        self._rollout_gpus = last + 1
        return self._pipelined_rollout(0, last, None)

    def _pipelined_rollout(self, first: int, last: int, labels: tuple[str, ...] | None) -> PackedPlacementStrategy:
        """Rollout processes of ``tp * pp`` GPUs each (data-parallel replicas) over ranks first..last."""
        per_process = self.rollout_tp_size * self.rollout_pp_size
        gpus = last - first + 1
        sizes = f"rollout TP size {self.rollout_tp_size} x PP size {self.rollout_pp_size} = {per_process}"
        if per_process > gpus:
            raise PlacementConfigError(f"rollout: {sizes} GPUs per process exceeds the rollout's {gpus} GPUs ({first}-{last})")
        if gpus % per_process:
            raise PlacementConfigError(
                f"rollout: its {gpus} GPUs ({first}-{last}) are not divisible by {sizes} GPUs per process; "
                "every rollout replica needs a full set"
            )
        return PackedPlacementStrategy(first, last, per_process, 1, None if labels is None else list(labels), name="rollout")

    def _add_exclusions(self, relations: dict[str, dict[str, Any]], include_actor: bool) -> None:
        """Disjointness as ``exclusive_with`` (the AUTO actor spans every GPU, so it is exempt)."""
        for first, second in DISJOINT_PAIRS:
            if first not in self._held or second not in self._held or (not include_actor and "actor" in (first, second)):
                continue
            entry = relations.setdefault(self._held[first].name, {})
            entry.setdefault("exclusive_with", []).append(self._held[second].name)

    # ------------------------------------------------------------------ weight sync
    def weight_sync_map(self) -> dict[int, list[int]]:
        """Collocated mode: per rollout rank, the actor rank on each of its GPUs (in GPU order).

        This is the CUDA IPC pairing: the actor rank listed at position ``i`` shares its GPU with
        the rollout process's ``i``-th GPU and hands its weights over without a copy.
        """
        if not self.is_collocated:
            raise PlacementConfigError(
                f"weight_sync_map: rollout weights are synced over CUDA IPC only in collocated mode, not {self._placement_mode.name}"
            )
        actor = self._solution.assignment("actor")
        actor_rank = np.repeat(np.arange(actor.num_processes), np.diff(actor.indptr))
        rank_of_gpu = dict(zip(actor.hardware.tolist(), actor_rank.tolist()))
        rollout = self._solution.assignment("rollout")
        return {p: [rank_of_gpu[gpu] for gpu in rollout.of(p).tolist()] for p in range(rollout.num_processes)}

    # ------------------------------------------------------------------ modes
    @property
    def rollout_sync_mode(self) -> RolloutSyncMode:
        return RolloutSyncMode.COLLOCATED if self.is_collocated else RolloutSyncMode.DISAGGREGATED

    @property
    def is_collocated(self) -> bool:
        return self._placement_mode == PlacementMode.COLLOCATED

    @property
    def is_disaggregated(self) -> bool:
        return self._placement_mode == PlacementMode.DISAGGREGATED

    @property
    def is_auto(self) -> bool:
        return self._placement_mode == PlacementMode.AUTO

    @property
    def is_pipeline(self) -> bool:
        return self.is_disaggregated or self.is_auto

    @property
    def has_dedicated_inference(self) -> bool:
        return self.is_pipeline and "inference" in self._held

    @property
    def has_dedicated_actor_inference(self) -> bool:
        return self.has_dedicated_inference

    @property
    def has_dedicated_critic_inference(self) -> bool:
        return self.is_pipeline and "critic_inference" in self._held

    # ------------------------------------------------------------------ sizes
    def _gpus(self, role: str) -> int:
        return self._held[role].count if role in self._held else 0

    @property
    def actor_tp_size(self) -> int:
        return self._config_int("actor.model.tensor_model_parallel_size", 1)

    @property
    def actor_pp_size(self) -> int:
        return self._config_int("actor.model.pipeline_model_parallel_size", 1)

    @property
    def actor_cp_size(self) -> int:
        return self._config_int("actor.model.context_parallel_size", 1)

    @property
    def actor_dp_size(self) -> int:
        return self.actor_world_size // (self.actor_tp_size * self.actor_cp_size * self.actor_pp_size)

    @property
    def actor_world_size(self) -> int:
        """GPUs the actor is configured with (RLinf's meaning; the AUTO actor spans more)."""
        return self._gpus("actor")

    @property
    def rollout_tp_size(self) -> int:
        return self._config_int("rollout.tensor_parallel_size", 1)

    @property
    def rollout_pp_size(self) -> int:
        return self._config_int("rollout.pipeline_parallel_size", 1)

    @property
    def rollout_dp_size(self) -> int:
        return self.rollout_world_size // (self.rollout_tp_size * self.rollout_pp_size)

    @property
    def rollout_world_size(self) -> int:
        """Rollout GPUs (with AUTO's pre-process policy, the actor's GPUs included)."""
        return self._rollout_gpus

    def _inference_section(self) -> str | None:
        return next((name for name in ("inference", "actor_inference") if name in self._config), None)

    @property
    def inference_tp_size(self) -> int:
        section = self._inference_section()
        if section is None:
            return self.actor_tp_size
        return self._config_int(f"{section}.model.tensor_model_parallel_size", 1)

    @property
    def inference_pp_size(self) -> int:
        section = self._inference_section()
        if section is None:
            return self.actor_pp_size
        return self._config_int(f"{section}.model.pipeline_model_parallel_size", self.actor_pp_size)

    @property
    def inference_dp_size(self) -> int:
        return self.inference_world_size // (self.inference_tp_size * self.inference_pp_size)

    @property
    def inference_world_size(self) -> int:
        return self._gpus("inference")

    @property
    def critic_tp_size(self) -> int:
        return self._config_int("critic.model.tensor_model_parallel_size", 1)

    @property
    def critic_pp_size(self) -> int:
        return self._config_int("critic.model.pipeline_model_parallel_size", 1)

    @property
    def critic_cp_size(self) -> int:
        return self._config_int("critic.model.context_parallel_size", 1)

    @property
    def critic_dp_size(self) -> int:
        return self.critic_world_size // (self.critic_tp_size * self.critic_cp_size * self.critic_pp_size)

    @property
    def critic_world_size(self) -> int:
        return self._gpus("critic")

    @property
    def critic_inference_tp_size(self) -> int:
        return self._config_int("critic_inference.model.tensor_model_parallel_size", self.critic_tp_size)

    @property
    def critic_inference_pp_size(self) -> int:
        return self._config_int("critic_inference.model.pipeline_model_parallel_size", self.critic_pp_size)

    @property
    def critic_inference_dp_size(self) -> int:
        return self.critic_inference_world_size // (self.critic_inference_tp_size * self.critic_inference_pp_size)

    @property
    def critic_inference_world_size(self) -> int:
        return self._gpus("critic_inference")

    @property
    def reward_world_size(self) -> int:
        return self._gpus("reward")
