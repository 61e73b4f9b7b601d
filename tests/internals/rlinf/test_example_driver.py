"""The example RLinf driver of ``docs/rlinf.md`` (``docs/examples/rlinf_main_grpo.py``) plans every worker group
RLinf's scripts launch, with RLinf's placements.

The driver's :func:`plan` runs on RLinf's own example configs (``tests/data/rlinf``) and on
RLinf's own ``Cluster`` object built without Ray (``rlinf_builders.rlinf_cluster``), as the job
would run it. Two things are checked, each against something the driver did not compute:

* the groups: which ones each config gets is written below by hand from RLinf 0.3.0's scripts
  (``main_grpo.py``: rollout, reward, actor, plus inference and the dynamic scheduler in AUTO
  mode; ``train_embodied_agent.py``: actor, rollout, env), with the Ray group names the configs
  give them;
* the placements: each group's records equal, in all 11 RLinf fields, what RLinf's own
  placement class (or, for the scheduler, RLinf's ``NodePlacementStrategy(node_ranks=[0])``)
  gives for the same config and cluster, called as ``WorkerGroup.launch`` calls it; the one
  field allowed to differ is the scheduler's ``local_accelerator_rank``, by the documented
  difference ``no_gpu_local_accelerator_rank`` (RLinf: the string ``"0"``; here ``-1``, the
  process holds no GPU).

The embodied examples carry a Hydra ``defaults:`` list, which the library refuses in a YAML file
(it cannot compose it); the test hands the driver the same DictConfig ``test_real_configs`` reads
(placement reads only ``cluster``), as a Hydra app hands its composed config to RLinf's script.
The command line is run too: ``--dry-run`` on a reasoning config file, with a Hydra override,
the refusal of an embodied file with its ``defaults:`` list, and the command ``docs/rlinf.md``
shows, which must print the lines shown under it (a ``text`` block: the ``console`` blocks of the
README and of ``docs/`` run in a scratch copy of ``models/``, where this file and the data are absent).
"""

from __future__ import annotations

import importlib.util
import re
import shlex
import sys
from types import ModuleType
from typing import Any

import pytest
import rlinf_shim
from helpers import ROOT
from rlinf_builders import Record, records, rlinf_cluster
from test_real_configs import DATA, REAL_CONFIGS, read, rlinf_validate

from solver_placement import Cluster

DRIVER = ROOT / "docs" / "examples" / "rlinf_main_grpo.py"

#: config -> {group key: (Ray group name, component asked for; None: the script's own strategy)}
EXPECTED_GROUPS: dict[str, dict[str, tuple[str, str | None]]] = {
    "qwen2.5-1.5b-grpo-megatron.yaml": {
        "rollout": ("RolloutGroup", "rollout"),
        "reward": ("RewardGroup", "reward"),
        "actor": ("ActorGroup", "actor"),
    },
    "qwen2.5-1.5b-grpo-megatron-dynamic-1node.yaml": {  # AUTO mode, recompute_logprobs: true
        "rollout": ("RolloutGroup", "rollout"),
        "inference": ("InferenceGroup", "inference"),
        "reward": ("RewardGroup", "reward"),
        "actor": ("ActorGroup", "actor"),
        "scheduler": ("DynamicScheduler", None),
    },
    "frankasim_ppo_mlp.yaml": {
        "actor": ("ActorGroup", "actor"),
        "rollout": ("RolloutGroup", "rollout"),
        "env": ("EnvGroup", "env"),
    },
    "realworld_charger_sac_cnn_async.yaml": {
        "actor": ("ActorGroup", "actor"),
        "rollout": ("RolloutGroup", "rollout"),
        "env": ("EnvGroup", "env"),
    },
}


#: Differences (``rlinf_differences.DIFFERENCES``, rows of the table in docs/rlinf.md) a group's records may show.
ALLOWED_DIFFERENCES = ("no_gpu_local_accelerator_rank",)


def assert_rlinfs(mine: list[Record], theirs: list[Record], where: tuple[str, str]) -> None:
    """Equal records, or records that differ only as a named difference in ALLOWED_DIFFERENCES explains."""
    from rlinf_differences import DIFFERENCES  # imports RLinf: only in the tests that compare with it

    allowed = [difference for difference in DIFFERENCES if difference.name in ALLOWED_DIFFERENCES]
    assert len(allowed) == len(ALLOWED_DIFFERENCES)
    assert len(mine) == len(theirs), where
    for own, rlinfs in zip(mine, theirs):
        fields = own.differing(rlinfs)
        explained = any(difference.record(None, rlinfs, own, fields) for difference in allowed if difference.record)
        assert not fields or explained, (where, fields, own, rlinfs)


def load_driver() -> ModuleType:
    """The driver as a module (``docs/examples`` is no package); registered in ``sys.modules``
    first, as an import would, since its dataclasses look their module up there."""
    name = "rlinf_main_grpo_example"
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, DRIVER)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    return sys.modules[name]


@pytest.fixture(scope="module")
def rl() -> Any:
    return rlinf_shim.load()


def test_every_config_here_has_its_groups_written_down() -> None:
    assert set(EXPECTED_GROUPS) == set(REAL_CONFIGS)


@pytest.mark.parametrize("name", sorted(EXPECTED_GROUPS))
def test_the_driver_plans_every_group_as_rlinf_places_it(rl: Any, name: str) -> None:
    kind, gpus, _ = REAL_CONFIGS[name]
    config = rlinf_validate(rl, read(name))
    cluster = rlinf_cluster(rl, config.cluster, gpus)
    planned = load_driver().plan(read(name), cluster)

    assert type(planned.component_placement).__name__ == kind
    assert {key: (group.name, group.component) for key, group in planned.groups.items()} == EXPECTED_GROUPS[name]
    theirs = getattr(rl, kind)(config, cluster)
    for key, group in planned.groups.items():
        if group.component is None:
            strategy = rl.NodePlacementStrategy(node_ranks=[0])
        else:
            strategy = theirs.get_strategy(group.component)
        expected = records(strategy.get_placement(cluster, True))  # WorkerGroup.launch's call (isolate_gpu=True)
        assert expected, (name, key)
        assert_rlinfs(records(group.placements), expected, (name, key))
        assert_rlinfs(records(group.strategy.get_placement(cluster, True)), expected, (name, key))  # what launch would get


def test_the_driver_accepts_the_stand_in_cluster() -> None:
    """Without RLinf or Ray: the same groups on this library's Cluster built from the config."""
    name = "qwen2.5-1.5b-grpo-megatron-dynamic-1node.yaml"
    config = read(name)
    cluster = Cluster(cluster_cfg={**config.cluster, "num_gpus_per_node": 8})
    planned = load_driver().plan(config, cluster)
    assert list(planned.groups) == list(EXPECTED_GROUPS[name])
    assert [p.local_hardware_ranks for p in planned.groups["inference"].placements] == [[6], [7]]


def test_the_dry_run_prints_every_group(capsys: pytest.CaptureFixture[str]) -> None:
    """The command line of the docs, with a Hydra override shrinking the 8-node example to one node."""
    load_driver().main([str(DATA / "qwen2.5-1.5b-grpo-megatron.yaml"), "cluster.num_nodes=1", "--dry-run"])
    assert capsys.readouterr().out.splitlines() == [
        "ModelParallelComponentPlacement, mode COLLOCATED",
        "RolloutGroup (rollout): 8 processes; node 0: 0 1 2 3 4 5 6 7",
        "RewardGroup (reward): 8 processes; node 0: 0 1 2 3 4 5 6 7",
        "ActorGroup (actor): 8 processes; node 0: 0 1 2 3 4 5 6 7",
    ]
    load_driver().main([str(DATA / "qwen2.5-1.5b-grpo-megatron-dynamic-1node.yaml"), "--dry-run"])
    assert capsys.readouterr().out.splitlines()[-1] == "DynamicScheduler (own strategy): 1 process; node 0: -"


def test_the_dry_run_refuses_a_file_it_cannot_compose(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "hydra", None)  # without Hydra; with it, the groups this copy lacks are named
    with pytest.raises(SystemExit, match=r"error: config file .*frankasim_ppo_mlp\.yaml' has a Hydra defaults: list"):
        load_driver().main([str(DATA / "frankasim_ppo_mlp.yaml"), "--dry-run"])


def test_the_rlinf_page_shows_what_the_driver_prints(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    page = (ROOT / "docs" / "rlinf.md").read_text()
    shown = re.findall(r"^```text\n\$ (python docs/examples/rlinf_main_grpo\.py[^\n]*)\n(.*?)^```", page, flags=re.MULTILINE | re.DOTALL)
    assert len(shown) == 1, "docs/rlinf.md shows one run of the example driver"
    command, output = shown[0]
    monkeypatch.chdir(ROOT)  # the page's paths are relative to the repository root
    load_driver().main(shlex.split(command)[2:])
    assert capsys.readouterr().out.splitlines() == output.splitlines()
