"""RLinf's ``examples/reasoning/main_grpo.py`` with solver_placement's placement classes, up to
the point where it launches its worker groups.

Why it exists: to show what changes in an RLinf job (one import, marked ``# swapped``) and that
the rest keeps working. RLinf keeps its ``Cluster`` (nodes probed through Ray), its workers and
``WorkerGroup.launch``, which calls ``strategy.get_placement(cluster, isolate_gpu)`` on the
strategy it is handed; ours take RLinf's ``Cluster`` and return records with RLinf's fields.

For every worker group RLinf 0.3.0's script launches, :func:`plan` gets the strategy it asks for
and the placements that strategy gives ``launch``: rollout; critic and actor inference in
DISAGGREGATED or AUTO mode when the job uses them; reward; actor; critic for PPO; the dynamic
scheduler on node 0 in AUTO mode. Embodied jobs get ``train_embodied_agent.py``'s groups (actor,
rollout, env, reward with an in-job reward model), whose import swaps the same way.

``python docs/examples/rlinf_main_grpo.py CONFIG [KEY=VALUE]... --dry-run`` prints them. CONFIG is
the composed config (RLinf's script is a Hydra app; ``--cfg job`` prints it) and the overrides are
Hydra's forms. ``--dry-run`` needs no Ray: the cluster comes from the config, with
``--gpus-per-node`` GPUs per node (RLinf asks the hardware). Without it RLinf's ``validate_cfg`` and
``Cluster`` join Ray (RLinf's runtime, torch included, must be installed). Launching would follow as
in RLinf's script, per group: ``worker_cls.create_group(cfg, component_placement).launch(cluster,
name=group.name, placement_strategy=group.strategy)``.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from omegaconf import DictConfig, OmegaConf, open_dict
from omegaconf.errors import OmegaConfBaseException

# RLinf's main_grpo.py imports
#   from rlinf.scheduler import Cluster, NodePlacementStrategy
#   from rlinf.utils.placement import ModelParallelComponentPlacement, PlacementMode
# (train_embodied_agent.py: HybridComponentPlacement). Cluster stays RLinf's; it is imported in
# main() only because RLinf's package needs torch, which a dry run does without.
# what this file itself needs: types for its hints, and reading a config with its Hydra overrides
from solver_placement import (  # swapped
    ComponentPlacement,
    HybridComponentPlacement,
    ModelParallelComponentPlacement,
    NodePlacementStrategy,
    Placement,
    PlacementError,
    PlacementMode,
    PlacementStrategy,
    apply_overrides,
)

#: RLinf's WorkerGroup.launch default: each worker sees only its own GPUs.
ISOLATE_GPU = True


@dataclass(frozen=True)
class Group:
    """One worker group RLinf's script launches: the Ray name it gets, the ``component_placement``
    entry its strategy comes from (None for the scheduler, whose strategy the script makes
    itself), the strategy handed to ``launch`` and the placements ``launch`` would ask it for."""

    name: str
    component: str | None
    strategy: PlacementStrategy
    placements: list[Placement]


@dataclass(frozen=True)
class Plan:
    """The component placement the script builds and its worker groups, in launch order."""

    component_placement: ComponentPlacement
    groups: dict[str, Group]


def plan(cfg: DictConfig, cluster: Any) -> Plan:
    """Build the component placement as RLinf's script for ``cfg`` does and every worker group's
    placements on ``cluster`` (RLinf's ``Cluster``, ours, or a look-alike), stopping before launch.

    The class follows ``runner.task_type`` as RLinf's two scripts split it: embodied jobs use
    ``HybridComponentPlacement``, reasoning jobs ``ModelParallelComponentPlacement``.
    """
    embodied = OmegaConf.select(cfg, "runner.task_type") == "embodied"
    placement_cls = HybridComponentPlacement if embodied else ModelParallelComponentPlacement
    component_placement = placement_cls(cfg, cluster)
    wanted = _embodied_groups(cfg) if embodied else _grpo_groups(cfg, component_placement)
    groups = {}
    for key, (name, component) in wanted.items():
        if component is None:  # the script's own strategy: the dynamic scheduler on node 0
            strategy: PlacementStrategy = NodePlacementStrategy(node_ranks=[0])
        else:
            strategy = component_placement.get_strategy(component)
        groups[key] = Group(name, component, strategy, strategy.get_placement(cluster, ISOLATE_GPU))
    return Plan(component_placement, groups)


def _grpo_groups(cfg: DictConfig, placement: ComponentPlacement) -> dict[str, tuple[str, str | None]]:
    """main_grpo.py's groups: key -> (Ray group name, component asked for), in launch order."""
    separate = placement.placement_mode in (PlacementMode.DISAGGREGATED, PlacementMode.AUTO)
    critic = bool(OmegaConf.select(cfg, "critic.use_critic_model", default=False))
    # RLinf's validate_cfg folds importance_sampling_fix into recompute_logprobs; a dry run skips
    # validate_cfg (it needs torch), so both are read.
    recompute = bool(cfg.algorithm.recompute_logprobs or cfg.algorithm.get("importance_sampling_fix", False))
    groups: dict[str, tuple[str, str | None]] = {"rollout": (cfg.rollout.group_name, "rollout")}
    if separate and critic:
        groups["critic_inference"] = (cfg.critic_inference.group_name, "critic_inference")
    if separate and recompute:
        groups["inference"] = (cfg.inference.group_name, "actor_inference" if critic else "inference")
    groups["reward"] = (cfg.reward.group_name, "reward")
    groups["actor"] = (cfg.actor.group_name, "actor")
    if critic:
        groups["critic"] = (cfg.critic.group_name, "critic")
    if placement.placement_mode == PlacementMode.AUTO:
        groups["scheduler"] = ("DynamicScheduler", None)
    return groups


def _embodied_groups(cfg: DictConfig) -> dict[str, tuple[str, str | None]]:
    """train_embodied_agent.py's groups: key -> (Ray group name, component asked for)."""
    groups: dict[str, tuple[str, str | None]] = {key: (cfg[key].group_name, key) for key in ("actor", "rollout", "env")}
    reward = cfg.get("reward") or {}
    if reward.get("use_reward_model", False) and not reward.get("standalone_realworld", False):
        groups["reward"] = (cfg.reward.group_name, "reward")
    return groups


def describe(planned: Plan) -> list[str]:
    """One line per group: name, component, process count and what each process holds per node
    (GPU ids, robot indices, ``-`` for none, ``0+1`` for two GPUs); consecutive nodes holding the
    same are shown once (``nodes 0-7: 0 1 2 3 4 5 6 7 each``), so a 64-GPU job fits a line."""
    placement = planned.component_placement
    mode = placement.placement_mode.name if placement.placement_mode is not None else "none"
    lines = [f"{type(placement).__name__}, mode {mode}"]
    for group in planned.groups.values():
        by_node: dict[int, list[str]] = {}
        for p in group.placements:
            by_node.setdefault(p.cluster_node_rank, []).append("+".join(map(str, p.local_hardware_ranks)) or "-")
        runs: list[list[Any]] = []  # [first node, last node, what each holds]
        for node, held in by_node.items():
            if runs and runs[-1][1] == node - 1 and runs[-1][2] == held:
                runs[-1][1] = node
            else:
                runs.append([node, node, held])
        where = "; ".join(
            f"node {first}: {' '.join(held)}" if first == last else f"nodes {first}-{last}: {' '.join(held)} each" for first, last, held in runs
        )
        count = len(group.placements)
        lines.append(f"{group.name} ({group.component or 'own strategy'}): {count} process{'' if count == 1 else 'es'}; {where}")
    return lines


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="Plan the worker groups of an RLinf job, as its entry script would launch them.")
    parser.add_argument("config", type=Path, help="the job's composed config (YAML)")
    parser.add_argument("overrides", nargs="*", metavar="KEY=VALUE", help="Hydra overrides: key=v, +key=v, ++key=v, ~key")
    parser.add_argument("--dry-run", action="store_true", help="no Ray: describe the cluster from the config")
    parser.add_argument("--gpus-per-node", type=int, default=8, help="GPUs on each node for --dry-run (default 8)")
    args = parser.parse_intermixed_args(argv)
    try:
        cfg = apply_overrides(args.config, args.overrides)  # a defaults: list is composed by Hydra from its folder
        if args.dry_run:
            from solver_placement import Cluster  # the stand-in: RLinf's constructor, no Ray

            with open_dict(cfg):
                cfg.cluster.setdefault("num_gpus_per_node", args.gpus_per_node)
            cluster = Cluster(cluster_cfg=cfg.cluster)
        else:
            try:
                from rlinf.config import validate_cfg  # RLinf's, unchanged
                from rlinf.scheduler import Cluster  # stays RLinf's: starts or joins Ray
            except ImportError as error:
                sys.exit(f"error: planning on Ray needs RLinf's runtime ({error}); --dry-run plans without it")
            cfg = validate_cfg(cfg)
            cluster = Cluster(cluster_cfg=cfg.cluster)
        print("\n".join(describe(plan(cfg, cluster))))
    except (PlacementError, OmegaConfBaseException) as error:  # a bad config, not a bug: no traceback
        sys.exit(f"error: {error}")


if __name__ == "__main__":
    main()
