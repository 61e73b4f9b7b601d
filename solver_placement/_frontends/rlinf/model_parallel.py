"""RLinf's ``ModelParallelComponentPlacement``: reasoning jobs (Megatron actor, SGLang/vLLM rollout).

The mode (collocated, disaggregated, auto) is decided from the GPUs each component holds as
written, compared as physical GPUs so ``node_group`` is honoured (RLinf compares group-local
ranks as if they were cluster ranks and places on the wrong node). The mode's layout
(``model_parallel_layout.py``) is then solved as a spec.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from solver_placement._cluster.ranks import format_ranks
from solver_placement._config import ConfigSource
from solver_placement._errors import InfeasiblePlacementError, PlacementConfigError, PlacementError
from solver_placement._frontends.rlinf.component_placement import ComponentPlacement, PlacementMode, RolloutSyncMode
from solver_placement._frontends.rlinf.held_gpus import HeldGpus, check_disjoint, check_tp_fits, read_held
from solver_placement._frontends.rlinf.model_parallel_layout import DISJOINT_PAIRS, Layout, auto_layout, collocated_layout, disaggregated_layout
from solver_placement._frontends.rlinf.model_parallel_sizes import ModelParallelSizes
from solver_placement._frontends.rlinf.size_keys import ACTOR_TP, ROLLOUT_PP, ROLLOUT_TP, Sizes, divisor_size, in_user_keys, nearest_fit
from solver_placement._frontends.rlinf.weight_sync import weight_sync_map
from solver_placement._job import Job
from solver_placement._solver.solve import solve

REQUIRED = ("actor", "rollout", "reward")
OPTIONAL = ("critic", "critic_inference")


class ModelParallelComponentPlacement(ModelParallelSizes, ComponentPlacement):
    """Model-parallel reasoning jobs, RLinf's modes.

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

    def __init__(self, config: ConfigSource | Job, cluster: Any = None, *, solver_options: Mapping[str, Any] | None = None) -> None:
        super().__init__(config, cluster, solver_options=solver_options)
        self._held = self._read_held()
        self._rollout_num_gpus = self._held["rollout"].count
        self._mode = self._detect_mode()
        sizes = {ACTOR_TP: self.actor_tp_size, ROLLOUT_TP: self.rollout_tp_size, ROLLOUT_PP: self.rollout_pp_size}
        try:
            check_tp_fits(self._held["actor"], sizes[ACTOR_TP], ACTOR_TP, "Actor")
            check_tp_fits(self._held["rollout"], sizes[ROLLOUT_TP], ROLLOUT_TP, "Rollout")
            layout = self._layout(sizes)
            self._lay_out(layout.strategies, layout.relations)
        except (PlacementConfigError, InfeasiblePlacementError) as error:
            raise self._in_user_keys(error, sizes) from error
        self._rollout_num_gpus = layout.rollout_gpus

    # ------------------------------------------------------------------ reading the config
    def _inference_component(self) -> str | None:
        """``inference`` or, failing that, ``actor_inference`` (None if neither is placed)."""
        names = [name for name in ("inference", "actor_inference") if name in self._spec.components]
        if len(names) > 1:
            raise PlacementConfigError(
                "component_placement places both 'inference' and 'actor_inference'; "
                f"{type(self).__name__} needs one dedicated inference component"
            )
        return names[0] if names else None

    def _read_held(self) -> dict[str, HeldGpus]:
        """GPUs of every managed component as written; checks presence, GPUs and contiguity."""
        roles: dict[str, str | None] = {role: role for role in (*REQUIRED, *OPTIONAL)}
        roles["inference"] = self._inference_component()
        held: dict[str, HeldGpus] = {}
        for role, name in roles.items():
            if name is None or name not in self._spec.components:
                if role in REQUIRED:
                    raise PlacementConfigError(
                        f"component_placement has no '{role}' component; {type(self).__name__} needs actor, rollout and reward "
                        f"({role.capitalize()} GPUs must be specified in the component_placement config.)"
                    )
                continue
            held[role] = read_held(self._solution, name)
        return held

    # ------------------------------------------------------------------ mode
    def _detect_mode(self) -> PlacementMode:
        """RLinf's order: AUTO when asked for (and no critic), collocated when actor and rollout hold
        the same GPUs, disaggregated when RLinf's pairs are disjoint, else an error."""
        if self._auto_requested():
            check_disjoint(self._held, DISJOINT_PAIRS, "cluster.auto_scheduler: AUTO mode is disaggregated mode with an order")
            self._check_auto_order()
            return PlacementMode.AUTO
        if self._held["actor"].physical == self._held["rollout"].physical:
            self._check_no_inference_when_collocated()
            return PlacementMode.COLLOCATED
        check_disjoint(
            self._held, DISJOINT_PAIRS, "the placement is neither collocated (actor and rollout on exactly the same GPUs) nor disaggregated"
        )
        self._check_dedicated_inference()
        return PlacementMode.DISAGGREGATED

    def _auto_requested(self) -> bool:
        """``cluster.auto_scheduler`` selects AUTO, except with a critic (RLinf ignores it then)."""
        return self._cluster_flag("auto_scheduler") and "critic" not in self._held

    def _check_no_inference_when_collocated(self) -> None:
        for role in ("inference", "critic_inference"):
            if role in self._held:
                raise PlacementConfigError(
                    f"{self._held[role].name}: must not be placed in collocated mode (actor and rollout share their GPUs "
                    "and the actor computes log-probabilities itself)"
                )

    def _check_auto_order(self) -> None:
        total = self._cluster.num_accelerators
        order = [self._held[role] for role in ("actor", "rollout", "inference") if role in self._held]
        laid_out = [gpu for held in order for gpu in sorted(held.physical)]
        if laid_out != list(range(total)):
            described = ", ".join(f"{held.name} {format_ranks(held.physical)}" for held in order)
            raise PlacementConfigError(
                f"cluster.auto_scheduler: AUTO mode requires components placed in the order actor -> rollout -> "
                f"inference covering all {total} cluster GPUs 0-{total - 1}, but they hold cluster GPUs {described}"
            )

    def _check_dedicated_inference(self) -> None:
        if "inference" in self._held:
            inference = self._held["inference"]
            section = self._inference_section()
            key = (
                f"{section}.model.tensor_model_parallel_size" if section
                else "actor.model.tensor_model_parallel_size, used as the config has no inference section"
            )
            check_tp_fits(inference, self.inference_tp_size, key, "Inference")
            recompute = self._lookup("algorithm.recompute_logprobs")
            if not recompute:
                state = "is missing" if recompute is None else "is false"
                raise PlacementConfigError(
                    f"{inference.name}: algorithm.recompute_logprobs {state}, which disables inference; "
                    f"set it to true or remove the {inference.name} GPUs {format_ranks(inference.ranks)}"
                )
        if "critic_inference" in self._held:
            check_tp_fits(
                self._held["critic_inference"],
                self.critic_inference_tp_size,
                "critic_inference.model.tensor_model_parallel_size",
                "Inference",  # RLinf words the critic inference's check as the inference's
            )

    # ------------------------------------------------------------------ layout
    def _layout(self, sizes: Sizes) -> Layout:
        """The mode's layout with ``sizes`` (the model-parallel sizes by config key)."""
        if self.is_collocated:
            return collocated_layout(self._held, sizes[ACTOR_TP], sizes[ROLLOUT_TP])
        if self.is_auto:
            total = self._cluster.num_accelerators
            pre_process = self._cluster_flag("use_pre_process_policy")
            return auto_layout(self._held, sizes[ROLLOUT_TP], sizes[ROLLOUT_PP], total, pre_process)
        return disaggregated_layout(self._held, sizes[ROLLOUT_TP], sizes[ROLLOUT_PP])

    def _in_user_keys(self, error: PlacementError, sizes: Sizes) -> PlacementError:
        """``error`` in the keys the config states, with the nearest sizes that place; unchanged
        when the config states none of the sizes the mode's layout reads, or no change of them places."""
        used = (ACTOR_TP, ROLLOUT_TP) if self.is_collocated else (ROLLOUT_TP, ROLLOUT_PP)
        role = {ACTOR_TP: "actor", ROLLOUT_TP: "rollout", ROLLOUT_PP: "rollout"}
        stated = [
            divisor_size(key, sizes[key], self._held[role[key]].name, self._held[role[key]].count)
            for key in used
            if self._lookup(key) is not None
        ]
        fix = nearest_fit(stated, lambda changed: self._places({**sizes, **changed})) if stated else None
        return error if fix is None else in_user_keys(error, stated, fix, self._cluster.describe())

    def _places(self, sizes: Sizes) -> bool:
        """Whether the mode's layout with ``sizes`` has a placement (solved, this placement unchanged)."""
        try:
            layout = self._layout(sizes)
            solve(self._laid_out_spec(layout.strategies, layout.relations))
        except PlacementError:  # every refusal of a layout is a "no" here: the caller reports the stated sizes' own error
            return False
        return True

    def weight_sync_map(self) -> dict[int, list[int]]:
        """Per rollout rank, the actor rank on each of its GPUs (in GPU order): the CUDA IPC pairing.

        The actor rank listed at position ``i`` shares its GPU with the rollout process's ``i``-th
        GPU and hands its weights over without a copy; only meaningful when weights are synced
        over CUDA IPC (:attr:`rollout_sync_mode` COLLOCATED). The map pairs the solved placement, so
        it is refused once the actor's or rollout's strategy was replaced through ``_placements``.
        """
        names = (self._held["actor"].name, self._held["rollout"].name)
        replaced = [name for name in names if self._placements.written(name) is not None]
        if replaced:
            raise PlacementConfigError(
                f"weight_sync_map: the strategy of {' and '.join(replaced)} was replaced through _placements, so the "
                "solved placement this map pairs is no longer what get_strategy hands out"
            )
        if self.rollout_sync_mode is not RolloutSyncMode.COLLOCATED:
            mode = self._mode.name if self._mode else "none"
            raise PlacementConfigError(
                "weight_sync_map: rollout weights are synced over CUDA IPC only when actor and rollout hold the same GPUs "
                f"(rollout sync mode COLLOCATED); here the placement mode is {mode} and the rollout sync mode "
                f"{self.rollout_sync_mode.name}"
            )
        return weight_sync_map(self._solution)

    # ------------------------------------------------------------------ modes
    @property
    def rollout_sync_mode(self) -> RolloutSyncMode:
        """CUDA IPC (COLLOCATED) on shared GPUs, collectives (DISAGGREGATED) otherwise."""
        return RolloutSyncMode.COLLOCATED if self.is_collocated else RolloutSyncMode.DISAGGREGATED

    @property
    def _rollout_sync_mode(self) -> RolloutSyncMode:
        """RLinf's ``_rollout_sync_mode`` (read by its Megatron worker, SGLang scheduler and rank
        mapper): :attr:`rollout_sync_mode`, which the multi-agent placement decides differently."""
        return self.rollout_sync_mode

    @property
    def is_collocated(self) -> bool:
        return self._mode == PlacementMode.COLLOCATED

    @property
    def is_disaggregated(self) -> bool:
        return self._mode == PlacementMode.DISAGGREGATED

    @property
    def is_auto(self) -> bool:
        return self._mode == PlacementMode.AUTO

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

    def has_dedicated_inference_for_role(self, role: str) -> bool:
        """RLinf's per-role question: does ``actor`` or ``critic`` have its own inference GPUs?"""
        if role == "actor":
            return self.has_dedicated_actor_inference
        if role == "critic":
            return self.has_dedicated_critic_inference
        raise PlacementConfigError(f"has_dedicated_inference_for_role: unknown role {role!r}; expected 'actor' or 'critic'")
