"""The parallel sizes RLinf's model-parallel placements report, read from the job config.

Sizes come from the sections RLinf reads (``actor.model.tensor_model_parallel_size``,
``rollout.tensor_parallel_size``, ...), with RLinf's defaults; world sizes are the GPU counts the
components are given as written (RLinf's meaning, kept for its properties). The mixins hold no
layout logic, so the training, eval and multi-agent placements share one reading of the config.

The rollout's GPU count is the one size RLinf's scripts write: WideSeek-R1's eval script gives
half of the rollout's GPUs to a second engine and sets ``component_placement._rollout_num_gpus``
to the other half. It is therefore state under RLinf's name (:attr:`RolloutSizes._rollout_num_gpus`),
and every size derived from it (``rollout_world_size``, ``rollout_dp_size``) reads it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from solver_placement._cluster.cluster import Cluster
from solver_placement._config import positive_int
from solver_placement._frontends.rlinf.held_gpus import HeldGpus


class ConfigReader:
    """Dotted look-ups into the job config (``_config``) and its ``cluster:`` section (``_section``)."""

    _config: dict[str, Any]
    _section: dict[str, Any]

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


class RolloutSizes(ConfigReader):
    """Rollout and reward sizes: everything an eval placement reports."""

    _cluster: Cluster
    _held: dict[str, HeldGpus]
    _rollout_gpu_count: int

    @property
    def _cluster_num_gpus(self) -> int:
        """RLinf's ``_cluster_num_gpus`` (read by its Megatron worker and dynamic scheduler in AUTO
        mode, where the actor spans them all): the cluster's accelerator count."""
        return self._cluster.num_accelerators

    def _gpus(self, role: str) -> int:
        return self._held[role].count if role in self._held else 0

    @property
    def rollout_tp_size(self) -> int:
        """GPUs of one rollout engine's tensor-parallel group (``rollout.tensor_parallel_size``)."""
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
        return self._rollout_num_gpus

    @property
    def _rollout_num_gpus(self) -> int:
        """RLinf's name for the rollout GPU count behind ``rollout_world_size`` and ``rollout_dp_size``.

        Writable, as RLinf's scripts write it: a count written here is what both report from
        then on. It is not checked against the rollout's strategy (RLinf's scripts write the
        two separately); ``get_world_size("rollout")`` keeps the configured process count.
        """
        return self._rollout_gpu_count

    @_rollout_num_gpus.setter
    def _rollout_num_gpus(self, count: int) -> None:
        self._rollout_gpu_count = positive_int(count, "_rollout_num_gpus (the rollout's GPU count)")

    @property
    def reward_world_size(self) -> int:
        return self._gpus("reward")


class ModelParallelSizes(RolloutSizes):
    """Actor, inference, critic and critic-inference sizes of a training job."""

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

    def _inference_section(self) -> str | None:
        """``inference`` or ``actor_inference``: the section RLinf reads the inference sizes from."""
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
