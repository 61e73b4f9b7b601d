"""Real RLinf example configs load unchanged and give RLinf's placements.

The YAML files in ``tests/data/rlinf`` are copied from RLinf's ``examples/`` folder (origin and
commit in each file's header). Each goes, as an OmegaConf config, through RLinf 0.3.0's own
``HybridComponentPlacement`` / ``ModelParallelComponentPlacement`` and through ours, both given
RLinf's own ``Cluster`` object, and every component's placements must agree in all 11 fields.

RLinf's ``validate_cfg`` cannot run here: it starts RLinf's Ray cluster and managers
(``Cluster(cluster_cfg=...)``) and imports torch, transformers and ``rlinf.envs``. The closest
we can do is :func:`rlinf_validate`: what ``validate_cfg`` does to the parts placement reads
(struct mode, ``cluster.profiling.output_dir``, the ``cluster:`` section parsed by RLinf's own
``ClusterConfig.from_dict_cfg`` as ``Cluster(cluster_cfg=...)`` does, and for reasoning jobs
``algorithm.recompute_logprobs |= importance_sampling_fix``).

The configs hold values this environment cannot resolve (``${subtract:...}`` and ``${not:...}``
are resolvers RLinf registers on import, ``${oc.env:EMBODIED_PATH}``, ``${actor.model...}`` of
an uncomposed ``defaults`` entry); placement never reads them, so they must not stop the load.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
import rlinf_shim
from omegaconf import DictConfig, OmegaConf, open_dict
from rlinf_builders import records, rlinf_cluster

import solver_placement
from solver_placement import Cluster, PlacementConfigError
from solver_placement._config import load_config
from solver_placement._config_copy import Unresolved

DATA = Path(__file__).resolve().parents[2] / "data" / "rlinf"

#: file -> (placement class, GPUs per node, text substitutions a user makes before running it)
REAL_CONFIGS = {
    "frankasim_ppo_mlp.yaml": ("HybridComponentPlacement", [1], {}),
    "realworld_charger_sac_cnn_async.yaml": ("HybridComponentPlacement", [8, 0], {"ROBOT_IP": "10.10.10.1"}),
    "qwen2.5-1.5b-grpo-megatron.yaml": ("ModelParallelComponentPlacement", [8] * 8, {}),
    "qwen2.5-1.5b-grpo-megatron-dynamic-1node.yaml": ("ModelParallelComponentPlacement", [8], {}),
}


def read(name: str) -> DictConfig:
    text = (DATA / name).read_text()
    for old, new in REAL_CONFIGS[name][2].items():
        text = text.replace(old, new)
    config = OmegaConf.create(text)
    assert isinstance(config, DictConfig)
    return config


def rlinf_validate(rl: Any, config: DictConfig) -> DictConfig:
    """The part of RLinf's ``validate_cfg`` that touches what placement reads (see the module docstring)."""
    OmegaConf.set_struct(config, True)
    with open_dict(config):
        profiling = config.cluster.get("profiling", None)
        if profiling is not None and bool(profiling.get("enabled", True)) and not profiling.get("output_dir", None):
            config.cluster.profiling.output_dir = os.path.abspath("profiling")
        rl.ClusterConfig.from_dict_cfg(config.cluster)
        if config.runner.task_type == "reasoning":
            algorithm = config.algorithm
            algorithm.recompute_logprobs = algorithm.recompute_logprobs or algorithm.get("importance_sampling_fix", False)
    return config


@pytest.mark.parametrize("name", sorted(REAL_CONFIGS))
def test_real_config_loads_unchanged(name: str) -> None:
    """The whole file loads (no RLinf needed); what cannot be resolved stays unresolved."""
    plain = load_config(read(name))
    section = plain["cluster"]
    cluster = Cluster.from_config({**section, "num_gpus_per_node": REAL_CONFIGS[name][1]})
    assert cluster.num_nodes == section["num_nodes"]
    unresolved = [value for value in _leaves(plain) if isinstance(value, Unresolved)]
    assert unresolved, "each example holds values only RLinf (or Hydra) can resolve"


@pytest.mark.parametrize("name", sorted(REAL_CONFIGS))
def test_real_config_gives_rlinfs_placements(name: str) -> None:
    rl = rlinf_shim.load()
    kind, gpus, _ = REAL_CONFIGS[name]
    config = rlinf_validate(rl, read(name))
    cluster = rlinf_cluster(rl, config.cluster, gpus)
    theirs = getattr(rl, kind)(config, cluster)
    ours = getattr(solver_placement, kind)(read(name), cluster)
    assert ours.components == theirs.components
    assert getattr(ours.placement_mode, "name", None) == getattr(theirs.placement_mode, "name", None)
    for component in theirs.components:
        expected = records(theirs.get_strategy(component).get_placement(cluster))
        assert records(ours.get_strategy(component).get_placement(cluster)) == expected, component
        sizes = (ours.get_world_size(component), list(ours.get_hardware_ranks(component)))
        if sizes != (theirs.get_world_size(component), list(theirs.get_hardware_ranks(component))):
            # Documented difference "sizes_of_placed_processes": in AUTO mode RLinf reports the
            # ranks written in component_placement, not the processes its strategies place.
            assert getattr(theirs.placement_mode, "name", None) == "AUTO" and sizes[0] == len(expected), component


def test_a_value_placement_reads_must_resolve() -> None:
    """Unresolved values are harmless until placement reads one; then the error names it."""
    config = OmegaConf.create({"cluster": {"num_nodes": "${oops}", "component_placement": {"actor": "0"}}})
    with pytest.raises(PlacementConfigError, match=r"cluster\.num_nodes.*oops"):
        Cluster.from_config(config)
    flag = OmegaConf.create({"cluster": {"num_nodes": 1, "auto_scheduler": "${not:${x}}"}, "x": True})
    section = load_config(flag)["cluster"]
    with pytest.raises(PlacementConfigError, match=r"cluster\.auto_scheduler: cannot resolve '\$\{not:\$\{x\}\}'"):
        bool(section["auto_scheduler"])


def _leaves(value: Any) -> list[Any]:
    if isinstance(value, dict):
        return [leaf for item in value.values() for leaf in _leaves(item)]
    if isinstance(value, list):
        return [leaf for item in value for leaf in _leaves(item)]
    return [value]
