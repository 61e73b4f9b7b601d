"""RLinf's ``ModelParallelEvalComponentPlacement``: evaluating a reasoning model (no training).

Only the rollout and the reward are laid out: the rollout as engines of
``rollout.tensor_parallel_size`` consecutive GPUs (RLinf's ``Packed(n=rollout_tp, stride=1)``;
there is no actor to pair with, so no stride), the reward one process per GPU. The mode is
always collocated. Every other component (an ``actor`` left in the config, a judge engine)
keeps the placement it was given.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from solver_placement._config import ConfigSource
from solver_placement._errors import PlacementConfigError
from solver_placement._frontends.rlinf.component_names import stands_for
from solver_placement._frontends.rlinf.component_placement import PlacementMode
from solver_placement._frontends.rlinf.held_gpus import HeldGpus, check_divides, check_tp_fits, read_held
from solver_placement._frontends.rlinf.keyed_layout import KeyedLayout
from solver_placement._frontends.rlinf.model_parallel_layout import Layout
from solver_placement._frontends.rlinf.model_parallel_sizes import RolloutSizes
from solver_placement._frontends.rlinf.size_keys import ROLLOUT_TP, Sizes
from solver_placement._job import Job

#: The components an eval placement lays out, both required (as in RLinf).
EVAL_ROLES = ("rollout", "reward")


class ModelParallelEvalComponentPlacement(RolloutSizes, KeyedLayout):
    """Rollout engines and reward for evaluation, always in collocated mode."""

    def __init__(self, config: ConfigSource | Job, cluster: Any = None, *, solver_options: Mapping[str, Any] | None = None) -> None:
        super().__init__(config, cluster, solver_options=solver_options)
        self._held = self._read_held()
        self._rollout_num_gpus = self._held["rollout"].count
        self._mode = PlacementMode.COLLOCATED
        self._lay_out_sizes({ROLLOUT_TP: self.rollout_tp_size})

    def _layout(self, sizes: Sizes) -> Layout:
        """Rollout engines of ``rollout.tensor_parallel_size`` consecutive GPUs, reward one process
        per GPU, after RLinf's check that an engine fits the rollout's GPUs."""
        rollout, reward, tp = self._held["rollout"], self._held["reward"], sizes[ROLLOUT_TP]
        check_tp_fits(rollout, tp, ROLLOUT_TP, "Rollout")
        check_divides(rollout, tp, ROLLOUT_TP)
        return Layout({rollout.name: rollout.packed(tp), reward.name: reward.packed()}, rollout.count)

    def _size_keys(self) -> tuple[str, ...]:
        """The eval layout reads only the rollout's TP size (RLinf packs no pipeline stages here)."""
        return (ROLLOUT_TP,)

    def _read_held(self) -> dict[str, HeldGpus]:
        held: dict[str, HeldGpus] = {}
        for role in EVAL_ROLES:
            if role not in self._spec.components:
                raise PlacementConfigError(
                    f"component_placement has no '{role}' component; {type(self).__name__} needs rollout and reward "
                    f"({role.capitalize()} GPUs must be specified in the component_placement config.){stands_for(role, self._spec.names)}"
                )
            held[role] = read_held(self._solution, role)
        return held

    @property
    def is_collocated(self) -> bool:
        return True

    @property
    def is_disaggregated(self) -> bool:
        return False

    @property
    def is_auto(self) -> bool:
        return False

    @property
    def is_pipeline(self) -> bool:
        return False

    @property
    def has_dedicated_inference(self) -> bool:
        return False
