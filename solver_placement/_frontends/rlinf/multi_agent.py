"""RLinf's multi-agent placements: several rollout engines inside the actor's GPUs.

A multi-agent job (RLinf's WideSeek-R1) trains one actor on all its GPUs while several engines
generate: the main ``rollout`` plus extra ``rollout_*`` components (a judge, a fixed sub-agent
worker), each on part of the actor's GPUs. :class:`MultiAgentModelParallelComponentPlacement` is
always collocated; the rollout is laid out as in collocated mode (strided inside the actor's TP
groups), and only when it holds exactly the actor's GPUs does it pair with the actor for CUDA IPC
(one engine); otherwise weights travel by collectives. Components other than actor, rollout,
reward and inference must not share GPUs with one another (stated as ``exclusive_with``).

``get_strategy(name, PackedPlacementStrategy)`` hands an extra engine a packed strategy shaped
like the rollout's, over the engine's own GPUs.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from itertools import combinations

from solver_placement._cluster.ranks import format_ranks
from solver_placement._errors import PlacementConfigError, PlacementError
from solver_placement._frontends.rlinf.component_placement import PlacementMode, RolloutSyncMode
from solver_placement._frontends.rlinf.eval_placement import ModelParallelEvalComponentPlacement
from solver_placement._frontends.rlinf.held_gpus import HeldGpus, check_divides, gpus_of, read_held
from solver_placement._frontends.rlinf.keyed_layout import KeyedLayout
from solver_placement._frontends.rlinf.model_parallel import ModelParallelComponentPlacement
from solver_placement._frontends.rlinf.model_parallel_layout import Layout, collocated_layout
from solver_placement._frontends.rlinf.size_keys import ACTOR_TP, ROLLOUT_TP, Sizes, divisor_size, in_user_keys, nearest_fit
from solver_placement._frontends.rlinf.strategies import PackedPlacementStrategy, PlacementStrategy

#: Components that may share GPUs with everything (RLinf's "shared" names); all others are exclusive.
SHARED = ("actor", "rollout", "reward", "inference")


class EngineStrategies(KeyedLayout):
    """RLinf's ``get_strategy(name, placement_strategy)`` of the multi-agent placements."""

    def get_strategy(self, component_name: str, placement_strategy: type | None = None) -> PlacementStrategy:
        """The component's strategy; with ``PackedPlacementStrategy``, an extra engine's packed one.

        The engine gets processes of its section's ``tensor_parallel_size`` GPUs (GPUs per engine);
        when that equals the rollout's engine size, or the section states none, its processes
        are shaped exactly like the rollout's (same GPUs per process and stride), as in RLinf.
        """
        if placement_strategy is None:
            return super().get_strategy(component_name)
        if component_name in SHARED:
            warnings.warn(
                f"get_strategy: {component_name} is laid out by {type(self).__name__}; the strategy class "
                f"{placement_strategy.__name__} is ignored and {component_name}'s own strategy returned",
                stacklevel=2,
            )
            return super().get_strategy(component_name)
        if placement_strategy is not PackedPlacementStrategy:
            raise PlacementConfigError(
                f"get_strategy({component_name!r}, {placement_strategy.__name__}): only PackedPlacementStrategy "
                "is supported as a custom strategy class"
            )
        return self._engine_strategy(component_name)

    def _engine_strategy(self, name: str) -> PackedPlacementStrategy:
        held = read_held(self._solution, self._known(name))
        if not isinstance(self._config.get(name), Mapping):
            raise PlacementConfigError(
                f"{name}: get_strategy(..., PackedPlacementStrategy) sizes the engines from the '{name}:' section "
                "of the job config, which is missing"
            )
        rollout = self._placements["rollout"]  # a strategy written over the rollout's shapes the engines too, as in RLinf
        if not isinstance(rollout, PackedPlacementStrategy):
            raise PlacementConfigError(f"{name}: the rollout has no packed strategy to shape the engines like")
        per_process, stride = rollout.num_hardware_per_process, rollout.stride
        tp = self._config_int(f"{name}.tensor_parallel_size", per_process)
        if tp != per_process:
            per_process, stride = tp, 1  # an engine of another size cannot pair with the actor like the rollout's
        for key in ("pipeline_parallel_size", "dp_size"):
            check_divides(held, self._config_int(f"{name}.{key}", 1), f"{name}.{key}")
        strategy = held.packed(per_process, stride)
        try:
            strategy.get_placement(self._cluster)  # eager: an engine that does not fit fails here, solved once
        except PlacementError as error:
            raise self._engine_in_keys(error, held, tp) from error
        return strategy

    def _engine_in_keys(self, error: PlacementError, held: HeldGpus, tp: int) -> PlacementError:
        """An engine that does not place, said in its section's ``tensor_parallel_size`` with the
        nearest size that places (solved); ``error`` as it is when the section states no size or
        no other size places."""
        key = f"{held.name}.tensor_parallel_size"
        if self._lookup(key) is None:
            return error
        stated = [divisor_size(key, tp, held.name, held.count)]

        def fits(sizes: Sizes) -> bool:
            try:
                held.packed(sizes[key]).solve(self._cluster)
            except PlacementError:  # any refusal of the other size is a "no": the stated size's own error is reported
                return False
            return True

        fix = nearest_fit(stated, fits)
        return error if fix is None else in_user_keys(error, stated, fix, self._cluster_in_keys())


class MultiAgentModelParallelComponentPlacement(EngineStrategies, ModelParallelComponentPlacement):
    """Multi-agent training: always collocated, every ``rollout*`` engine inside the actor's GPUs.

    Rules (RLinf's): actor and reward hold the same GPUs; every component named ``rollout*``
    holds a subset of them; no inference or critic_inference; no AUTO mode; components other
    than actor, rollout, reward and inference hold pairwise disjoint GPUs.
    """

    def _detect_mode(self) -> PlacementMode:
        if self._auto_requested():
            raise PlacementConfigError(
                f"cluster.auto_scheduler: {type(self).__name__} supports only collocated mode (AUTO mode needs actor, "
                "rollout and inference on disjoint GPUs); remove cluster.auto_scheduler"
            )
        self._check_no_inference_when_collocated()
        self._check_actor_holds_engines()
        self._check_exclusive_components()
        return PlacementMode.COLLOCATED

    def _check_actor_holds_engines(self) -> None:
        actor, reward = self._held["actor"], self._held["reward"]
        if actor.physical != reward.physical:
            raise PlacementConfigError(
                f"reward: holds cluster GPUs {format_ranks(reward.physical)} but the actor holds "
                f"{format_ranks(actor.physical)}; in a multi-agent job actor and reward are placed on the same GPUs"
            )
        covered: set[int] = set()
        for name in self._engines():
            gpus = gpus_of(self._solution, name)
            if gpus is None or not gpus <= actor.physical:
                held = "resources that are not GPUs" if gpus is None else f"cluster GPUs {format_ranks(gpus)}"
                raise PlacementConfigError(
                    f"{name}: holds {held}, which must be among the actor's cluster GPUs {format_ranks(actor.physical)}; "
                    "every rollout engine of a multi-agent job runs inside the actor's GPUs"
                )
            covered |= gpus
        if covered != actor.physical:
            warnings.warn(
                f"the rollout engines ({', '.join(self._engines())}) leave the actor's cluster GPUs "
                f"{format_ranks(actor.physical - covered)} without an engine",
                stacklevel=2,
            )

    def _engines(self) -> list[str]:
        """The rollout engines: every component whose name starts with ``rollout`` (config order)."""
        return [name for name in self._spec.names if name.startswith("rollout")]

    def _exclusive_components(self) -> dict[str, frozenset[int]]:
        """Components outside :data:`SHARED` that hold GPUs, with their cluster GPU ids."""
        found = {name: gpus_of(self._solution, name) for name in self._spec.names if name not in SHARED}
        return {name: gpus for name, gpus in found.items() if gpus is not None}

    def _check_exclusive_components(self) -> None:
        for (first, a), (second, b) in combinations(self._exclusive_components().items(), 2):
            if a & b:
                raise PlacementConfigError(
                    f"{first} (cluster GPUs {format_ranks(a)}) and {second} (cluster GPUs {format_ranks(b)}) share "
                    f"cluster GPUs {format_ranks(a & b)}; in a multi-agent job only {', '.join(SHARED)} may share GPUs"
                )

    def _mode_layout(self, sizes: Sizes) -> Layout:
        """Collocated, the rollout paired with the actor only as one engine; the exclusive components disjoint."""
        layout = collocated_layout(self._held, sizes[ACTOR_TP], sizes[ROLLOUT_TP], pair_with_actor=self._single_engine)
        exclusive = list(self._exclusive_components())
        relations = {name: {"exclusive_with": exclusive[position + 1:]} for position, name in enumerate(exclusive[:-1])}
        return Layout(layout.strategies, layout.rollout_gpus, {**layout.relations, **relations})

    @property
    def _single_engine(self) -> bool:
        """One engine: the rollout holds exactly the actor's GPUs, so it pairs with it over CUDA IPC."""
        return self._held["actor"].physical == self._held["rollout"].physical

    @property
    def rollout_sync_mode(self) -> RolloutSyncMode:
        """CUDA IPC with one engine on the actor's GPUs; collectives when engines share them out."""
        return RolloutSyncMode.COLLOCATED if self._single_engine else RolloutSyncMode.DISAGGREGATED


class MultiAgentModelParallelEvalComponentPlacement(EngineStrategies, ModelParallelEvalComponentPlacement):
    """Multi-agent evaluation: the eval placement plus packed strategies for extra engines."""
