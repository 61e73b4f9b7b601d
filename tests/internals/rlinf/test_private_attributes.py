"""RLinf's private attributes on our placements and strategies, compared with RLinf 0.3.0's own.

RLinf's workers, schedulers and example scripts reach into placement objects. Every access
outside the placement classes themselves, found by searching RLinf's released package and its
repository (examples, toolkits) for ``._name`` on a placement or strategy, is listed in
:data:`READERS`. Each test builds RLinf's class and ours from the same config with RLinf's own
``Cluster`` and compares every one of those attributes: equal values, and for ``_placements``
the same keys in the same order with strategies of the same class placing the same records.
The last tests make RLinf's two writes (WideSeek-R1's eval script) on both sides and check they
take effect in the calls that read them.
"""

from __future__ import annotations

import pickle
from typing import Any

import pytest
import rlinf_shim
from omegaconf import DictConfig, OmegaConf
from rlinf_builders import records, rlinf_cluster
from test_real_configs import read, rlinf_validate

import solver_placement
from solver_placement import PlacementConfigError
from solver_placement._frontends.rlinf import MultiAgentModelParallelComponentPlacement

#: attribute -> where RLinf reads (r) or writes (w) it on a placement or strategy it did not make itself
READERS = {
    "_placement_mode": "r rlinf/workers/megatron_worker.py:150; examples/reasoning/main_grpo.py:126",
    "_rollout_sync_mode": "r rlinf/workers/megatron_worker.py:151; rlinf/hybrid_engines/sglang/common/sgl_scheduler.py:248; "
    "rlinf/workers/rollout/utils.py:98,112",
    "_cluster_num_gpus": "r rlinf/workers/megatron_worker.py:975,982,990; rlinf/scheduler/dynamic_scheduler/manager.py:135; "
    "rlinf/scheduler/dynamic_scheduler/scheduler_worker.py:82; toolkits/auto_placement/util.py:32",
    "_components": "r rlinf/scheduler/dynamic_scheduler/manager.py:81; toolkits/auto_placement/util.py:42,55,81",
    "_placements": "w examples/agent/wideseek_r1/eval.py:90; r (rollout's n, stride) rlinf/utils/placement.py:866,967",
    "_rollout_num_gpus": "w examples/agent/wideseek_r1/eval.py:91; r rollout_world_size, rollout_dp_size",
    "_node_ranks": "r examples/agent/{searchr1/train.py,searchr1/eval.py,rstar2/main_rstar2.py}:65-66; wideseek_r1/train.py:93; "
    "wideseek_r1/eval.py:150",
    "_start_hw_rank": "r examples/agent/wideseek_r1/eval.py:60,79-85; rlinf/utils/placement.py:814,915",
    "_end_hw_rank": "r examples/agent/wideseek_r1/eval.py:59,86; rlinf/utils/placement.py:814,915",
    "_num_hardware_per_process": "r examples/agent/wideseek_r1/eval.py:81,87; rlinf/utils/placement.py:866,967",
    "_stride": "r examples/agent/wideseek_r1/eval.py:82,88; rlinf/utils/placement.py:867,968",
}
PLACEMENT_ATTRIBUTES = ("_placement_mode", "_rollout_sync_mode", "_cluster_num_gpus", "_components", "_rollout_num_gpus")
STRATEGY_ATTRIBUTES = ("_node_ranks", "_start_hw_rank", "_end_hw_rank", "_num_hardware_per_process", "_stride")


@pytest.fixture(scope="module")
def rl() -> Any:
    return rlinf_shim.load()


def job(placement: dict[str, Any], actor_tp: int = 1, rollout_tp: int = 1, nodes: int = 1, **sections: Any) -> DictConfig:
    """A reasoning job config in RLinf's form (no GPU count: RLinf's cluster object gives it)."""
    config = {
        "cluster": {"num_nodes": nodes, "component_placement": placement},
        "actor": {"model": {"tensor_model_parallel_size": actor_tp, "context_parallel_size": 1, "pipeline_model_parallel_size": 1}},
        "rollout": {"tensor_parallel_size": rollout_tp, "pipeline_parallel_size": 1},
        "algorithm": {"recompute_logprobs": True},
        **sections,
    }
    return OmegaConf.create(config)


def inference(tp: int) -> dict[str, Any]:
    return {"model": {"tensor_model_parallel_size": tp, "pipeline_model_parallel_size": 1}}


#: id -> (RLinf's class, config, GPUs per node)
CONFIGS: dict[str, tuple[str, Any, list[int]]] = {
    "collocated-real-8x8": ("ModelParallelComponentPlacement", "qwen2.5-1.5b-grpo-megatron.yaml", [8] * 8),
    "auto-pre-process-real-1x8": ("ModelParallelComponentPlacement", "qwen2.5-1.5b-grpo-megatron-dynamic-1node.yaml", [8]),
    "collocated-tp4-tp2-strided": ("ModelParallelComponentPlacement", job({"actor,rollout,reward": "0-7"}, 4, 2), [8]),
    # RLinf's megatron-pipeline example: rollout 0-15, inference 16-23, actor 24-63 on 8 nodes
    "disaggregated-pipeline-8x8": (
        "ModelParallelComponentPlacement",
        job({"rollout": "0-15", "inference": "16-23", "actor": "24-63", "reward": "0-15"}, 2, 2, 8, inference=inference(2)),
        [8] * 8,
    ),
    "disaggregated-critic": (
        "ModelParallelComponentPlacement",
        job({"actor": "0-1", "critic": "2-3", "rollout": "4-5", "inference": "6-7", "reward": "4-5"}, 2, 2, inference=inference(2),
            critic={"model": {"tensor_model_parallel_size": 2}}),
        [8],
    ),
    "eval-rollout-tp2": ("ModelParallelEvalComponentPlacement", job({"rollout": "0-7", "reward": "0-7"}, rollout_tp=2), [8]),
    "hybrid-real-frankasim": ("HybridComponentPlacement", "frankasim_ppo_mlp.yaml", [1]),
    "hybrid-shared-key-and-nodes": (
        "HybridComponentPlacement",
        job({"actor,rollout": "0-3", "env": {"node_group": "node", "placement": "0-1:0-3"}, "reward": "4-7:0-1"}, nodes=2),
        [4, 4],
    ),
}


def build(rl: Any, case: str) -> tuple[Any, Any, Any]:
    """RLinf's placement, ours and RLinf's cluster object for one of :data:`CONFIGS`."""
    kind, source, gpus = CONFIGS[case]
    theirs_config = rlinf_validate(rl, read(source)) if isinstance(source, str) else source
    ours_config = read(source) if isinstance(source, str) else source
    cluster = rlinf_cluster(rl, theirs_config.cluster, gpus)
    return getattr(rl, kind)(theirs_config, cluster), getattr(solver_placement, kind)(ours_config, cluster), cluster


def assert_same_strategy(ours: Any, theirs: Any, cluster: Any) -> None:
    """Same class name, same RLinf private attributes, same placement records."""
    assert type(ours).__name__ == type(theirs).__name__
    present = [name for name in STRATEGY_ATTRIBUTES if hasattr(theirs, name)]
    assert {name: getattr(ours, name) for name in present} == {name: getattr(theirs, name) for name in present}
    expected = records(theirs.get_placement(cluster))
    if type(theirs).__name__ == "NodePlacementStrategy":  # documented difference: RLinf's "0", our -1 (no own GPU)
        expected = [type(record)(record.values[:3] + (-1,) + record.values[4:]) for record in expected]
    assert records(ours.get_placement(cluster)) == expected


@pytest.mark.parametrize("case", sorted(CONFIGS))
def test_placement_private_attributes_are_rlinfs(rl: Any, case: str) -> None:
    theirs, ours, cluster = build(rl, case)
    for name in PLACEMENT_ATTRIBUTES:
        assert hasattr(ours, name) == hasattr(theirs, name), name  # RLinf's eval class has no _rollout_sync_mode
        if hasattr(theirs, name):
            mine, expected = getattr(ours, name), getattr(theirs, name)
            # both directions: RLinf's code compares what it reads with its own enum members
            assert mine == expected and expected == mine, (name, mine, expected)
    assert list(ours._placements) == list(theirs._placements) and len(ours._placements) == len(theirs._placements)
    for component in theirs._placements:
        assert_same_strategy(ours._placements[component], theirs._placements[component], cluster)
        assert ours.get_strategy(component) is ours._placements[component]
    shared = [(a, b) for a in theirs._placements for b in theirs._placements if a < b]
    assert [ours._placements[a] is ours._placements[b] for a, b in shared] == [
        theirs._placements[a] is theirs._placements[b] for a, b in shared
    ]  # components on one key share one strategy object, in both


#: (strategy class, args, kwargs, RLinf attributes it has, GPUs per node)
STRATEGIES = [
    ("PackedPlacementStrategy", (0, 7), {"num_hardware_per_process": 2, "stride": 2}, STRATEGY_ATTRIBUTES[1:], [8]),
    ("PackedPlacementStrategy", (4, 11), {"num_hardware_per_process": 4, "node_group": "cluster"}, STRATEGY_ATTRIBUTES[1:], [8, 8]),
    ("NodePlacementStrategy", ([1, 0, 1],), {}, ("_node_ranks",), [4, 4]),
    ("NodePlacementStrategy", ([2, 0],), {"node_group_label": "node"}, ("_node_ranks",), [0, 2, 2]),
    ("FlexiblePlacementStrategy", ([[3, 1], [0]],), {}, (), [4]),
]


@pytest.mark.parametrize(("kind", "args", "kwargs", "attributes", "gpus"), STRATEGIES)
def test_strategy_private_attributes_are_rlinfs(rl: Any, kind: str, args: tuple, kwargs: dict, attributes: tuple, gpus: list[int]) -> None:
    cluster = rlinf_cluster(rl, {"num_nodes": len(gpus), "component_placement": {}}, gpus)
    theirs, ours = getattr(rl, kind)(*args, **kwargs), getattr(solver_placement, kind)(*args, **kwargs)
    assert tuple(name for name in STRATEGY_ATTRIBUTES if hasattr(theirs, name)) == attributes  # which ones RLinf's class has
    assert_same_strategy(ours, theirs, cluster)


def test_read_only_attributes_cannot_be_written(rl: Any) -> None:
    """RLinf only reads these: they are views of our own state, not copies that could drift."""
    _, ours, _ = build(rl, "collocated-tp4-tp2-strided")
    for name in ("_placement_mode", "_rollout_sync_mode", "_cluster_num_gpus", "_components"):
        with pytest.raises(AttributeError):
            setattr(ours, name, None)
    ours._components.append("bogus")  # a fresh list each time
    assert "bogus" not in ours.components
    packed, node = solver_placement.PackedPlacementStrategy(0, 7, 2, 2), solver_placement.NodePlacementStrategy([1, 0])
    for strategy, names in ((packed, STRATEGY_ATTRIBUTES[1:]), (node, STRATEGY_ATTRIBUTES[:1])):
        for name in names:
            with pytest.raises(AttributeError):
                setattr(strategy, name, 1)
    packed.stride = 1  # the public attribute is the state the view shows
    assert packed._stride == 1 and node._node_ranks is node.node_ranks


def test_mode_enums_equal_rlinfs_members(rl: Any) -> None:
    """RLinf's workers compare with ``==``, ``in [...]`` and dict look-ups against their own enums."""
    ours, theirs = solver_placement.PlacementMode, rl.PlacementMode
    for member in ours:
        assert member == theirs[member.name] and theirs[member.name] == member and hash(member) == hash(theirs[member.name])
    assert ours.AUTO in [theirs.DISAGGREGATED, theirs.AUTO] and ours.COLLOCATED not in [theirs.DISAGGREGATED, theirs.AUTO]
    assert {rl.RolloutSyncMode.COLLOCATED: "ipc"}[solver_placement.RolloutSyncMode.COLLOCATED] == "ipc"
    assert solver_placement.RolloutSyncMode.COLLOCATED != theirs.COLLOCATED  # another enum, same member name
    assert ours.COLLOCATED != "COLLOCATED" and ours.COLLOCATED is not ours.HYBRID


# ------------------------------------------------------------------------------ RLinf's writes
def split_rollout(side: Any, placement: Any) -> Any:
    """WideSeek-R1 eval's ``use_fixed_worker`` step: the first half of the rollout's GPUs becomes
    the planner's rollout, written into ``_placements`` and ``_rollout_num_gpus``."""
    rollout = placement.get_strategy("rollout")
    half = (rollout._end_hw_rank - rollout._start_hw_rank + 1) // 2
    planner = side.PackedPlacementStrategy(
        rollout._start_hw_rank,
        rollout._start_hw_rank + half - 1,
        num_hardware_per_process=rollout._num_hardware_per_process,
        stride=rollout._stride,
    )
    placement._placements["rollout"] = planner
    placement._rollout_num_gpus = half
    return planner


@pytest.mark.parametrize("case", ["eval-rollout-tp2", "collocated-tp4-tp2-strided"])
def test_written_rollout_takes_effect_as_in_rlinf(rl: Any, case: str) -> None:
    theirs, ours, cluster = build(rl, case)
    world_sizes = (ours.get_world_size("rollout"), theirs.get_world_size("rollout"))
    planners = split_rollout(rl, theirs), split_rollout(solver_placement, ours)
    assert theirs.get_strategy("rollout") is planners[0] and ours.get_strategy("rollout") is planners[1]
    assert ours._placements["rollout"] is planners[1] and list(ours._placements) == list(theirs._placements)
    assert records(planners[1].get_placement(cluster)) == records(planners[0].get_placement(cluster))
    assert ours.get_placements("rollout") == planners[1].get_placement(ours.cluster)  # our extra follows the strategy
    for name in ("_rollout_num_gpus", "rollout_world_size", "rollout_dp_size"):
        assert getattr(ours, name) == getattr(theirs, name) == {"rollout_dp_size": 2}.get(name, 4), name
    assert (ours.get_world_size("rollout"), theirs.get_world_size("rollout")) == world_sizes  # the configured count, in both


def test_a_placement_reaches_rlinfs_workers_with_its_attributes_and_writes(rl: Any) -> None:
    """RLinf hands the placement to ``create_group``, so Ray pickles it into every worker, where
    ``_rollout_sync_mode`` and friends are read: they (and what was written) survive the trip."""
    theirs, ours, _ = build(rl, "collocated-tp4-tp2-strided")
    planner = split_rollout(solver_placement, ours)
    copy = pickle.loads(pickle.dumps(ours))
    for name in PLACEMENT_ATTRIBUTES:
        assert getattr(copy, name) == getattr(ours, name), name
    assert copy._rollout_sync_mode == theirs._rollout_sync_mode and copy._rollout_num_gpus == 4
    assert repr(copy.get_strategy("rollout")) == repr(planner) and list(copy._placements) == list(ours._placements)


def test_weight_sync_map_refuses_a_replaced_rollout(rl: Any) -> None:
    _, ours, _ = build(rl, "collocated-tp4-tp2-strided")
    assert ours.weight_sync_map()[0] == [0, 2]
    split_rollout(solver_placement, ours)
    with pytest.raises(PlacementConfigError, match="rollout was replaced through _placements"):
        ours.weight_sync_map()


def test_engines_are_shaped_like_the_written_rollout() -> None:
    """RLinf's multi-agent ``get_strategy(name, PackedPlacementStrategy)`` reads the rollout's
    ``_num_hardware_per_process`` and ``_stride`` from ``_placements`` (RLinf's class imports torch,
    so this side is ours alone)."""
    config = OmegaConf.to_container(job({"actor,reward": "0-7", "rollout": "0-3", "rollout_judge": "4-7"}, 4, 2, rollout_judge={}))
    assert isinstance(config, dict)
    config["cluster"]["num_gpus_per_node"] = 8
    placement = MultiAgentModelParallelComponentPlacement(config)
    judge = placement.get_strategy("rollout_judge", solver_placement.PackedPlacementStrategy)
    assert (judge._num_hardware_per_process, judge._stride) == (2, 2)
    placement._placements["rollout"] = solver_placement.PackedPlacementStrategy(0, 3)
    judge = placement.get_strategy("rollout_judge", solver_placement.PackedPlacementStrategy)
    assert (judge._start_hw_rank, judge._end_hw_rank, judge._num_hardware_per_process, judge._stride) == (4, 7, 1, 1)


def test_writes_rlinf_does_not_make_are_refused(rl: Any) -> None:
    _, ours, _ = build(rl, "eval-rollout-tp2")
    with pytest.raises(PlacementConfigError, match="not a solver_placement strategy") as caught:
        ours._placements["rollout"] = rl.PackedPlacementStrategy(0, 3)
    assert isinstance(caught.value, AssertionError)
    for count in (0, 2.0, "4"):
        with pytest.raises(PlacementConfigError, match="_rollout_num_gpus"):
            ours._rollout_num_gpus = count
    with pytest.raises(PlacementConfigError, match="cannot be deleted"):
        del ours._placements["rollout"]
    with pytest.raises(KeyError):
        ours._placements["judge"]
    assert "judge" not in ours._placements and ours._placements.get("judge") is None
    judge = solver_placement.PackedPlacementStrategy(0, 1)
    ours._placements["judge"] = judge  # RLinf's dict takes a new name; get_strategy then hands it out
    assert ours.get_strategy("judge") is judge and list(ours._placements) == ["rollout", "reward", "judge"]
    assert ours.rollout_world_size == 8 and ours.get_strategy("rollout")._num_hardware_per_process == 2
