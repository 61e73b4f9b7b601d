"""The reward-model environment of a GRPO config, as ``grpo.setup`` and the environment size it.

``grpo.setup`` (``nemo_rl/algorithms/grpo.py`` lines 728-729 at 7ea279ab) counts the reward model
only when the data names it: ``extract_necessary_env_names`` (``nemo_rl/data/datasets/utils.py``
lines 291-311) collects ``env_name`` from ``data.train``, ``data.validation`` and ``data.default``
(each a mapping or a list of them). Then ``env.reward_model.resources.{num_nodes,gpus_per_node}``
size the environment's own cluster (``reward_model_environment.py`` lines 149-156) and the nodes
or GPUs taken from the policy (``grpo.py`` lines 764-894); the environment always runs DTensor
(line 139), so its tensor-parallel size is ``env.reward_model.dtensor_cfg.tensor_parallel_size``.
An ``env.reward_model`` the data does not name starts nothing.
"""

from __future__ import annotations

from omegaconf import DictConfig, ListConfig, OmegaConf

from solver_placement._frontends.nemo_rl.config_values import whole
from solver_placement._frontends.nemo_rl.job import RewardModel
from solver_placement._limits import check

#: The environment name that turns the reward model on (``grpo.py`` line 729).
REWARD_MODEL = "reward_model"
#: The data sections whose ``env_name`` NeMo-RL collects.
DATA_SECTIONS = ("train", "validation", "default")


def reward_model(config: DictConfig) -> RewardModel | None:
    """The reward model's sizes when the data uses it, else None."""
    if REWARD_MODEL not in _env_names(config):
        return None
    resources = f"env.{REWARD_MODEL}.resources"
    num_nodes, gpus_per_node = whole(config, f"{resources}.num_nodes", 1), whole(config, f"{resources}.gpus_per_node", 1)
    check("max_processes", num_nodes * gpus_per_node, f"NeMo-RL: {resources}", "num_nodes x gpus_per_node (one reward-model worker a GPU)")
    return RewardModel(num_nodes, gpus_per_node, whole(config, f"env.{REWARD_MODEL}.dtensor_cfg.tensor_parallel_size", 1, default=1))


def _env_names(config: DictConfig) -> set[str]:
    names = set()
    for section in DATA_SECTIONS:
        entries = OmegaConf.select(config, f"data.{section}", default=None)
        for entry in entries if isinstance(entries, ListConfig) else [entries]:
            if isinstance(entry, DictConfig) and isinstance(entry.get("env_name"), str):
                names.add(entry["env_name"])
    return names
