"""verl's own trainer config is read as verl's driver reads it: the pools, the role mapping and the
started roles, for every release read (0.4.1, 0.5.0, 0.6.1, 0.7.1, 0.8.0, 0.9.x and main, each by its
own rules), then placed like ``resource_pools:``.

The expected values are what verl itself builds for the same config and overrides:
``test_verl_differential.py`` runs verl's driver on them when verl is at hand; the overrides are
those of verl's example scripts named in each case.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from helpers import ROOT
from omegaconf import OmegaConf

from solver_placement import InfeasiblePlacementError, PlacementConfigError, solve, verify
from solver_placement._config import load_config
from solver_placement._frontends.verl import is_verl_trainer_config, verl_pools
from solver_placement._frontends.verl.pool_order import PoolRequest, land_pools
from solver_placement._frontends.verl.resource_pools import pool_spec_from_config

DATA = ROOT / "tests" / "data" / "verl"
V041, MAIN = DATA / "ppo_trainer_v0.4.1.yaml", DATA / "ppo_trainer_main.yaml"
V071, V080 = DATA / "ppo_trainer_v0.7.1.yaml", DATA / "ppo_trainer_v0.8.0.yaml"
#: The trimmed file each release in between is read from (0.5.0 and 0.6.1 compose the keys 0.4.1's file holds).
TRIMMED = {"0.5.0": V041, "0.6.1": V041, "0.7.1": V071, "0.8.0": V080}
#: verl's examples/grpo_trainer/run_qwen2-7b.sh at v0.4.1 (the keys that decide pools).
GRPO_041 = ["algorithm.adv_estimator=grpo", "actor_rollout_ref.actor.use_kl_loss=True", "actor_rollout_ref.rollout.tensor_model_parallel_size=2",
            "algorithm.use_kl_in_reward=False", "trainer.n_gpus_per_node=8", "trainer.nnodes=1"]  # fmt: skip
#: verl's examples/ppo_trainer/run_qwen2-7b_rm.sh at v0.4.1.
RM_041 = ["algorithm.adv_estimator=gae", "actor_rollout_ref.actor.use_kl_loss=False", "actor_rollout_ref.rollout.tensor_model_parallel_size=1",
          "reward_model.enable=True", "algorithm.use_kl_in_reward=False", "trainer.n_gpus_per_node=8", "trainer.nnodes=1"]  # fmt: skip
#: verl's examples/grpo_trainer/run_qwen3_8b_fsdp.sh on main (GPU defaults: 8 GPUs per node, rollout TP 2).
GRPO_MAIN = ["algorithm.adv_estimator=grpo", "algorithm.use_kl_in_reward=False", "actor_rollout_ref.actor.use_kl_loss=True",
             "actor_rollout_ref.rollout.tensor_model_parallel_size=2", "trainer.n_gpus_per_node=8", "trainer.nnodes=1"]  # fmt: skip
#: verl's tests/special_e2e/run_v1_separate_async.sh on main with NUM_GPUS=8 (4 to train, 4 to roll out).
SEPARATE_MAIN = ["trainer.v1.trainer_mode=separate_async", "algorithm.adv_estimator=grpo", "actor_rollout_ref.actor.use_kl_loss=False",
                 "actor_rollout_ref.rollout.nnodes=1", "actor_rollout_ref.rollout.n_gpus_per_node=4",
                 "actor_rollout_ref.rollout.tensor_model_parallel_size=2", "trainer.nnodes=1", "trainer.n_gpus_per_node=4"]  # fmt: skip
#: A reward model on GPUs of its own, a teacher, and the reference policy (main).
POOLS_MAIN = ["reward.reward_model.enable=True", "reward.reward_model.enable_resource_pool=True", "reward.reward_model.nnodes=1",
              "reward.reward_model.n_gpus_per_node=4", "actor_rollout_ref.actor.use_kl_loss=True", "distillation.enabled=True", "distillation.nnodes=1",
              "distillation.teacher_models.teacher_model.model_path=teacher"]  # fmt: skip


def replicas(name: str, count: int) -> list[str]:
    """verl's names of ``count`` replicas' worker groups (``name`` with ``{}`` for the rank)."""
    return [name.format(rank) for rank in range(count)]


def config(path: Path, *overrides: str) -> dict[str, Any]:
    """The file with Hydra-style overrides merged in, as plain values."""
    return load_config(OmegaConf.merge(OmegaConf.load(path), OmegaConf.from_dotlist(list(overrides))))


CASES = [
    (V041, [], {"global_pool": [8]}, {"actor_rollout": "global_pool", "critic": "global_pool"}, ["actor_rollout", "critic"]),
    (V041, GRPO_041, {"global_pool": [8]}, {"actor_rollout": "global_pool", "critic": "global_pool", "ref": "global_pool"}, ["actor_rollout", "ref"]),
    (V041, [*RM_041, "trainer.nnodes=2"], {"global_pool": [8, 8]}, {"actor_rollout": "global_pool", "critic": "global_pool", "rm": "global_pool"},
     ["actor_rollout", "critic", "rm"]),
    (MAIN, [], {"global_pool": [8]}, {"actor_rollout": "global_pool", "critic": "global_pool", "rm": "global_pool"}, ["actor_rollout", "critic"]),
    (MAIN, GRPO_MAIN, {"global_pool": [8]}, {"actor_rollout_ref": "global_pool", "rm": "global_pool"}, ["actor_rollout_ref"]),
    (MAIN, SEPARATE_MAIN, {"global_pool": [4], "rollout_pool_2": [2], "rollout_pool_3": [2]}, {"actor_rollout": "global_pool", "rm": "global_pool"},
     ["actor_rollout", "rollout_standalone_2", "rollout_standalone_3"]),
    # 0.9.1's separate_async without hybrid replicas: rollout on the standalone ones alone, numbered from 0; actor and ref fused
    (MAIN, [*SEPARATE_MAIN, "actor_rollout_ref.hybrid_engine=False", "actor_rollout_ref.actor.use_kl_loss=True", "verl_version=0.9.1"],
     {"global_pool": [4], "rollout_pool_0": [2], "rollout_pool_1": [2]}, {"actor": "global_pool", "ref": "global_pool", "rm": "global_pool"},
     ["actor", "ref", "rollout_standalone_0", "rollout_standalone_1"]),
    (MAIN, POOLS_MAIN, {"global_pool": [8], "reward_pool": [4], "teacher_pool": [8]},
     {"actor_rollout_ref": "global_pool", "critic": "global_pool", "rm": "reward_pool", "teacher": "teacher_pool"},
     ["actor_rollout_ref", "critic", *replicas("rollout_reward_colocate_{}", 2), *replicas("rollout_teacher_colocate_{}_default", 4)]),
    (MAIN, ["actor_rollout_ref.actor.use_kl_loss=True", "actor_rollout_ref.model.lora.rank=8"], {"global_pool": [8]},
     {"actor_rollout": "global_pool", "critic": "global_pool", "rm": "global_pool"}, ["actor_rollout", "critic"]),
]  # fmt: skip


#: Reward pools of verl's keys up to 0.6.1 (migrated to reward.reward_model by 0.7.1 and 0.8.0).
LEGACY_REWARD_POOL = ["reward_model.enable=True", "reward_model.enable_resource_pool=True", "reward_model.nnodes=1", "reward_model.n_gpus_per_node=4"]
ROLES = {"actor_rollout": "global_pool", "critic": "global_pool"}
#: The releases between 0.4.1 and 0.9.0: (release, overrides, pools, mapping, workers), each read
#: from ``TRIMMED[release]`` with ``verl_version`` stated, and by the differential test from the
#: release's own composed config (whose keys tell the release) with verl's own driver.
RELEASE_CASES = [
    ("0.5.0", [], {"global_pool": [8]}, ROLES, ["actor_rollout", "critic"]),
    ("0.5.0", ["algorithm.adv_estimator=gpg", "actor_rollout_ref.actor.use_kl_loss=True"], {"global_pool": [8]}, {**ROLES, "ref": "global_pool"},
     ["actor_rollout", "ref"]),
    ("0.5.0", [*RM_041, "trainer.nnodes=2"], {"global_pool": [8, 8]}, {**ROLES, "rm": "global_pool"}, ["actor_rollout", "critic", "rm"]),
    ("0.6.1", [], {"global_pool": [8]}, ROLES, ["actor_rollout", "critic"]),
    ("0.6.1", LEGACY_REWARD_POOL, {"global_pool": [8], "reward_pool": [4]}, {**ROLES, "rm": "reward_pool"}, ["actor_rollout", "critic", "rm"]),
    ("0.6.1", ["algorithm.adv_estimator=grpo", "actor_rollout_ref.actor.use_kl_loss=True", "critic.enable=True"], {"global_pool": [8]},
     {**ROLES, "ref": "global_pool"}, ["actor_rollout", "critic", "ref"]),
    ("0.7.1", [], {"global_pool": [8]}, ROLES, ["actor_rollout", "critic"]),
    ("0.7.1", GRPO_MAIN, {"global_pool": [8]}, {**ROLES, "ref": "global_pool"}, ["actor_rollout", "ref"]),  # legacy workers: ref beside the actor
    ("0.7.1", [*GRPO_MAIN, "trainer.use_legacy_worker_impl=disable"], {"global_pool": [8]}, {"actor_rollout_ref": "global_pool", "critic": "global_pool"},
     ["actor_rollout_ref"]),
    # the reward pool with the reward model off: made, counted, never used (0.6.1 fails on it)
    ("0.7.1", ["reward.reward_model.enable_resource_pool=True", "reward.reward_model.nnodes=1", "reward.reward_model.n_gpus_per_node=4"],
     {"global_pool": [8], "reward_pool": [4]}, ROLES, ["actor_rollout", "critic"]),
    ("0.7.1", LEGACY_REWARD_POOL, {"global_pool": [8], "reward_pool": [4]}, {**ROLES, "rm": "reward_pool"},
     ["actor_rollout", "critic", *replicas("rollout_reward_colocate_{}", 2)]),  # the old keys, migrated
    ("0.8.0", [], {"global_pool": [8]}, ROLES, ["actor_rollout", "critic"]),
    ("0.8.0", GRPO_MAIN, {"global_pool": [8]}, {"actor_rollout_ref": "global_pool", "critic": "global_pool"}, ["actor_rollout_ref"]),
    ("0.8.0", [*POOLS_MAIN, "distillation.n_gpus_per_node=4"], {"global_pool": [8], "reward_pool": [4], "teacher_pool": [4]},
     {"actor_rollout_ref": "global_pool", "critic": "global_pool", "rm": "reward_pool", "teacher": "teacher_pool"},
     ["actor_rollout_ref", "critic", *replicas("rollout_reward_colocate_{}", 2), *replicas("rollout_teacher_colocate_{}_default", 2)]),
    ("0.8.0", ["reward.reward_model.enable=True", "trainer.nnodes=2"], {"global_pool": [8, 8]}, {**ROLES, "rm": "global_pool"},
     ["actor_rollout", "critic", *replicas("rollout_reward_colocate_{}", 8)]),
]  # fmt: skip


@pytest.mark.parametrize(("release", "overrides", "pools", "mapping", "workers"), RELEASE_CASES)
def test_each_release_builds_its_own_pools(release: str, overrides: list[str], pools: dict, mapping: dict, workers: list[str]) -> None:
    built = verl_pools(config(TRIMMED[release], *overrides, f"verl_version={release}"))
    assert (built.version, built.resource_pool_spec, dict(built.mapping), list(built.workers)) == (release, pools, mapping, workers)
    solve(config(TRIMMED[release], *overrides, f"verl_version={release}"))  # and it places


@pytest.mark.parametrize(("path", "overrides", "pools", "mapping", "workers"), CASES)
def test_pools_and_mapping_are_verls(path: Path, overrides: list[str], pools: dict, mapping: dict, workers: list[str]) -> None:
    built = verl_pools(config(path, *overrides))
    assert built.resource_pool_spec == pools
    assert dict(built.mapping) == mapping
    assert list(built.workers) == workers


def test_max_colocate_count_is_verls() -> None:
    assert {p.max_colocate_count for p in verl_pools(config(V041)).pools.values()} == {1}
    built = verl_pools(config(MAIN, *SEPARATE_MAIN))
    assert {name: p.max_colocate_count for name, p in built.pools.items()} == {"global_pool": 3, "rollout_pool_2": 2, "rollout_pool_3": 2}


def test_the_version_is_stated_or_shown_by_the_keys() -> None:
    # reward_model.strategy is composed by 0.4.1 to 0.6.1 only, trainer.use_v1 by 0.9.0 and later; each set reads these files alike
    assert verl_pools(config(V041)).versions == ("0.4.1", "0.5.0", "0.6.1")
    assert verl_pools(config(V041, "verl_version=0.4.1")).versions == ("0.4.1",)
    assert (verl_pools(config(MAIN)).version, verl_pools(config(MAIN)).versions) == ("main", ("0.9.0", "0.9.1", "main"))
    assert verl_pools(config(MAIN, "verl_version=0.9.0")).version == "0.9.0"
    assert verl_pools(config(MAIN, "verl_version=0.9.1")).version == "0.9.1"
    # 0.9.1 composes the hybrid rollout switch, 0.9.0 does not: 0.9.1's own file reads hybrid_engine=false with no verl_version
    switch = ["trainer.v1.separate_async.hybrid_rollout.enable_switch=False", *SEPARATE_MAIN, "actor_rollout_ref.hybrid_engine=False"]
    assert verl_pools(config(MAIN, *switch)).versions == ("0.9.1", "main")
    with pytest.raises(PlacementConfigError, match=r"trainer.use_v1=True is ignored by verl 0.4.1"):
        verl_pools(config(MAIN, "verl_version=0.4.1"))
    with pytest.raises(PlacementConfigError, match="verl_version: '0.6.0' is not a verl version solver-placement reads"):
        verl_pools(config(MAIN, "verl_version=0.6.0"))
    with pytest.raises(PlacementConfigError, match="write one of 0.4.1, 0.5.0, 0.6.1, 0.7.1, 0.8.0, 0.9.0, 0.9.1, main as text"):
        verl_pools(config(MAIN, "verl_version=0.9"))


def test_a_config_the_releases_read_differently_asks_for_its_version() -> None:
    # an 0.6-to-0.8 key: 0.6.1 makes reward_pool from it, 0.7.1 and 0.8.0 migrate it, 0.9 no longer reads it
    legacy = {"trainer": {"nnodes": 1}, "actor_rollout_ref": {}, "reward_model": {"enable": True, "enable_resource_pool": True, "nnodes": 1, "n_gpus_per_node": 4}}
    with pytest.raises(PlacementConfigError) as caught:
        verl_pools(legacy)
    message = str(caught.value)
    assert "its keys fit verl 0.6.1, 0.7.1, 0.8.0, 0.9.0, 0.9.1 or main" in message
    assert "state verl_version: one of 0.6.1, 0.7.1, 0.8.0, 0.9.0, 0.9.1, main" in message
    assert "verl 0.9.0, 0.9.1 or main refuse it (reward_model.enable=True is ignored" in message
    assert "verl 0.6.1 builds global_pool [8] (max_colocate_count 1), reward_pool [4] (max_colocate_count 1), maps actor_rollout, critic, rm" in message
    # stated, each release answers by its own rules: a fused rm on reward_pool (0.6.1), two replicas of 2 there (0.8.0)
    assert dict(verl_pools({**legacy, "verl_version": "0.6.1"}).workers) == {"actor_rollout": "global_pool", "critic": "global_pool", "rm": "reward_pool"}
    assert list(verl_pools({**legacy, "verl_version": "0.8.0"}).slices) == ["rollout_reward_colocate_0", "rollout_reward_colocate_1"]
    # no marker at all: every release is a candidate, and 0.9 maps rm where the others do not
    with pytest.raises(PlacementConfigError, match="its keys fit verl 0.4.1, 0.5.0, 0.6.1, 0.7.1, 0.8.0, 0.9.0, 0.9.1 or main"):
        verl_pools({"trainer": {"nnodes": 1}, "actor_rollout_ref": {}})
    with pytest.raises(PlacementConfigError, match=r"no verl release composes all of its keys trainer.use_v1 \(0.9.0 to main\), .*ray_init \(0.4.1 to 0.5.0\)"):
        verl_pools(config(MAIN, "ray_init.num_cpus=1"))


def test_the_roles_verl_maps_but_never_starts_are_marked() -> None:
    assert verl_pools(config(V041, *GRPO_041)).idle == {"critic"}  # 0.4.1 maps the critic for every estimator
    assert verl_pools(config(MAIN)).idle == {"rm"}  # 0.9 maps rm with no reward model
    # a reward pool with the reward model off: verl makes the pool (counted against the cluster) and starts nothing on it
    off = verl_pools(config(MAIN, "reward.reward_model.enable_resource_pool=True", "reward.reward_model.nnodes=1", "reward.reward_model.n_gpus_per_node=4"))
    assert (off.resource_pool_spec, off.mapping["rm"], off.idle) == ({"global_pool": [8], "reward_pool": [4]}, "reward_pool", {"rm"})
    solution = solve(config(MAIN, "reward.reward_model.enable_resource_pool=True", "reward.reward_model.nnodes=1", "reward.reward_model.n_gpus_per_node=4"))
    assert solution.components == ["actor_rollout+critic"] and solution.cluster.gpus_per_node.tolist() == [8, 4]


def test_an_ascend_run_is_refused_naming_trainer_device() -> None:
    with pytest.raises(PlacementConfigError, match=r"trainer.device='npu': verl then asks Ray for NPU devices, not GPUs.*set trainer.device=cuda"):
        verl_pools(config(MAIN, "trainer.device=npu"))


def test_the_one_predicate_tells_verls_config_from_others() -> None:
    assert is_verl_trainer_config(config(V041)) and is_verl_trainer_config(config(MAIN))
    assert not is_verl_trainer_config(load_config(ROOT / "models" / "verl_pools_2x8.yaml"))
    assert not is_verl_trainer_config({"cluster": {"num_nodes": 1}, "trainer": {"nnodes": 1}})


@pytest.mark.parametrize(
    ("path", "overrides", "words"),
    [
        (V041, ["reward_model.enable_resource_pool=True", "verl_version=0.4.1"], "reward_model.enable_resource_pool=True is ignored by verl 0.4.1: it runs the reward model on global_pool"),
        (V041, ["critic.enable=True", "verl_version=0.4.1"], "critic.enable=True is ignored by verl 0.4.1: it starts a critic exactly when algorithm.adv_estimator is gae"),
        (V041, ["actor_rollout_ref.rollout.pipeline_model_parallel_size=2"], "pipeline_model_parallel_size=2 is ignored by verl 0.4.1"),
        (V041, ["actor_rollout_ref.rollout.tensor_model_parallel_size=3"], "every verl release its keys fit (0.4.1, 0.5.0 or 0.6.1) refuses it (verl 0.4.1 or 0.5.0: actor_rollout_ref"),
        (V041, ["actor_rollout_ref.rollout.tensor_model_parallel_size=3", "verl_version=0.6.1"], "(x data_parallel_size=1 x pipeline_model_parallel_size=1: 3 GPUs) does not divide global_pool's 8 GPUs"),
        (V041, ["actor_rollout_ref.rollout.tensor_model_parallel_size=3", "verl_version=0.4.1"], "tensor_model_parallel_size=3 does not divide global_pool's 8 GPUs"),
        (V041, ["critic.strategy=megatron", "verl_version=0.4.1"], "needs both megatron or both fsdp/fsdp2"),
        (V041, [*LEGACY_REWARD_POOL[1:], "verl_version=0.6.1"], "reward_model.enable_resource_pool=true with reward_model.enable=false: verl 0.6.1 makes"),
        (V071, ["distillation.enabled=True", "verl_version=0.7.1"], "distillation.enabled=True is ignored by verl 0.7.1"),
        (V071, ["reward_model.enable=True", "reward_model.rollout.data_parallel_size=2", "verl_version=0.7.1"],
         "reward_model.rollout.data_parallel_size=2: verl 0.7.1's RewardModelManager cuts global_pool into replicas of tensor_model_parallel_size"),
        (V071, ["actor_rollout_ref.actor.strategy=veomni", "verl_version=0.7.1"], "needs trainer.use_legacy_worker_impl=disable in verl 0.7.1"),
        (V080, ["actor_rollout_ref.rollout.nnodes=1"], "actor_rollout_ref.rollout.nnodes=1 is ignored by verl 0.8.0: main_ppo's rollout"),
        (V041, ["algorithm.adv_estimator=gpg", "verl_version=0.4.1"], "algorithm.adv_estimator must be one of gae, grpo"),
        (V041, ["actor_rollout_ref.hybrid_engine=False"], "supports only the hybrid engine"),
        (MAIN, ["reward_model.enable=True"], "reward_model.enable=True is ignored by verl 0.9.0, 0.9.1 or main: main_ppo no longer migrates the top-level reward_model"),
        (MAIN, ["reward.reward_model.nnodes=2"], "reward.reward_model.nnodes=2 is ignored by verl 0.9.0, 0.9.1 or main: with reward.reward_model.enable_resource_pool=false"),
        (MAIN, ["reward.reward_model.enable=True", "reward.reward_model.enable_resource_pool=True"], "needs reward.reward_model.nnodes and"),
        (MAIN, ["reward.reward_model.enable=True", "reward.reward_model.rollout.tensor_model_parallel_size=3"], "global_pool has 8 GPUs, which replicas of 3"),
        (MAIN, ["distillation.nnodes=1"], "distillation.nnodes=1 is ignored by verl 0.9.0, 0.9.1 or main: verl makes teacher_pool only when distillation.enabled=true"),
        (MAIN, ["actor_rollout_ref.rollout.nnodes=1"], "only trainer.v1.trainer_mode=separate_async starts rollout replicas"),
        (MAIN, ["trainer.v1.trainer_mode=separate_async"], "verl asserts both are above 0 (e.g. actor_rollout_ref.rollout.nnodes=1)"),
        (MAIN, [*SEPARATE_MAIN, "reward.reward_model.enable=True"], "separate_async needs a standalone reward model"),
        (MAIN, ["actor_rollout_ref.rollout.tensor_model_parallel_size=12"], "a replica of 12 GPUs"),
        (MAIN, ["trainer.use_v1=False"], "legacy trainer (main_ppo_v0.py)"),
        (MAIN, ["actor_rollout_ref.hybrid_engine=False", "verl_version=main"],
         "hybrid_engine=false is ignored by verl main: only trainer.v1.trainer_mode=separate_async reads it (from verl 0.9.1 on), and trainer_mode=sync starts"),
        # every 0.9 release alike outside separate_async: one answer, no question about the version
        (MAIN, ["actor_rollout_ref.hybrid_engine=False", "trainer.v1.trainer_mode=colocate_async"], "hybrid_engine=false is ignored by verl 0.9.0, 0.9.1 or main: only"),
        (MAIN, [*SEPARATE_MAIN, "actor_rollout_ref.hybrid_engine=False", "verl_version=0.9.0"],
         "hybrid_engine=false is ignored by verl 0.9.0: its separate_async trainer starts rollout replicas inside the actor's workers too"),
        (MAIN, ["actor_rollout_ref.rollout.disaggregation.enabled=True"], "not modelled"),
        (MAIN, ["trainer.v1.trainer_mode=fully_async"], "trainer.v1.trainer_mode must be one of sync, colocate_async, separate_async"),
        (MAIN, ["trainer.nnodes=1000000"], "above the limit max_nodes=100000"),
        (MAIN, ["trainer.n_gpus_per_node=0"], "trainer.n_gpus_per_node must be a positive integer, not 0"),
        (MAIN, ["critic.enable=3"], "critic.enable must be true, false or null"),
    ],
)  # fmt: skip
def test_refusals_name_the_key_and_the_rule(path: Path, overrides: list[str], words: str) -> None:
    with pytest.raises(PlacementConfigError, match=None) as caught:
        verl_pools(config(path, *overrides))
    assert words in str(caught.value)


def test_without_a_cluster_the_pools_are_placed_on_the_nodes_the_config_describes() -> None:
    # nodes [8, 4, 8]: Ray gives reward_pool's 4 GPUs the freest node, the teacher's 8-GPU one, so
    # on exactly these nodes verl would wait for teacher_pool forever
    with pytest.raises(InfeasiblePlacementError, match="resource pool 'teacher_pool': placement group 0 needs 8 GPUs on one node") as caught:
        pool_spec_from_config(config(MAIN, *POOLS_MAIN))
    assert "reward_pool took node 2" in str(caught.value)
    # said in the user's keys, with the nearest size that places (shrunk only: the described nodes are the hardware)
    assert str(caught.value).endswith("distillation.n_gpus_per_node=8: with distillation.n_gpus_per_node=4 it places (checked by solving with it)")
    spec, groups = pool_spec_from_config(config(MAIN, *POOLS_MAIN, "distillation.n_gpus_per_node=4"))
    assert spec.cluster.gpus_per_node.tolist() == [8, 4, 4]
    servers = [*replicas("rollout_reward_colocate_{}", 2), *replicas("rollout_teacher_colocate_{}_default", 2)]
    assert {name: (group.pool, group.roles) for name, group in groups.items()} == {
        "actor_rollout_ref+critic": ("global_pool", ("actor_rollout_ref", "critic")),
        **{name: ("reward_pool" if "reward" in name else "teacher_pool", (name,)) for name in servers},
    }  # fmt: skip
    solution = solve(spec)
    verify(solution.spec, solution.placements_by_component())
    gpus = {name: [(p.cluster_node_rank, *p.local_hardware_ranks) for p in solution.placements(name)] for name in solution.components}
    assert gpus["actor_rollout_ref+critic"] == [(0, gpu) for gpu in range(8)]
    assert [gpus[name] for name in servers] == [[(1, 0), (1, 1)], [(1, 2), (1, 3)], [(2, 0), (2, 1)], [(2, 2), (2, 3)]]  # each replica a slice, ranks from 0


@pytest.mark.parametrize(
    ("path", "overrides", "processes"),
    [
        (V041, [*RM_041, "trainer.nnodes=2"], {"actor_rollout+critic+rm": 16}),  # 0.4.1 fuses every role: one worker per GPU
        # 0.9: each reward model replica (tensor parallel 2) a group of its own on a slice of global_pool
        (MAIN, ["reward.reward_model.enable=True", "trainer.nnodes=2"], {"actor_rollout+critic": 16, **dict.fromkeys(replicas("rollout_reward_colocate_{}", 8), 2)}),
        (MAIN, SEPARATE_MAIN, {"actor_rollout": 4, "rollout_standalone_2": 2, "rollout_standalone_3": 2}),
        (MAIN, [*SEPARATE_MAIN, "actor_rollout_ref.hybrid_engine=False", "actor_rollout_ref.actor.use_kl_loss=True", "trainer.n_gpus_per_node=5", "verl_version=main"],
         {"actor+ref": 5, "rollout_standalone_0": 2, "rollout_standalone_1": 2}),  # no hybrid replica has to divide global_pool
    ],
)
def test_processes_are_the_workers_verl_starts(path: Path, overrides: list[str], processes: dict[str, int]) -> None:
    solution = solve(config(path, *overrides))
    assert {name: len(solution.placements(name)) for name in solution.components} == processes


def test_a_given_cluster_is_checked_node_by_node_with_nodes_of_other_sizes() -> None:
    mixed = {"cluster": {"num_nodes": 3, "num_gpus_per_node": [8, 4, 8]}}
    solution = solve({**config(MAIN, *POOLS_MAIN[:5]), **mixed})
    gpus = {name: {(p.cluster_node_rank, g) for p in solution.placements(name) for g in p.local_hardware_ranks} for name in solution.components}
    reward = gpus["rollout_reward_colocate_0"] | gpus["rollout_reward_colocate_1"]
    assert len(reward) == 4 and not reward & gpus["actor_rollout_ref+critic"]
    # a pool the cluster cannot hold is infeasible (exit status 3), said in the user's keys with a fix found by solving
    with pytest.raises(InfeasiblePlacementError) as caught:
        solve({**config(MAIN, "trainer.nnodes=2"), "cluster": {"num_nodes": 2, "num_gpus_per_node": [8, 4]}})
    assert "global_pool needs 2 placement groups of 8 GPUs, each on one node (trainer.nnodes, trainer.n_gpus_per_node: 2 x 8)" in str(caught.value)
    assert "has room for 1; lower trainer.nnodes" in str(caught.value)
    assert str(caught.value).endswith("trainer.nnodes=2: with trainer.nnodes=1 it places (checked by solving with it)")
    assert [statement.keys for statement in caught.value.statements] == [("trainer.nnodes",)]
    with pytest.raises(InfeasiblePlacementError, match=r"no node has 16 GPUs \(the largest has 8\): lower trainer.n_gpus_per_node.*trainer.n_gpus_per_node=16: with trainer.n_gpus_per_node=8 it places"):
        solve({**config(V041, "trainer.n_gpus_per_node=16", "verl_version=0.4.1"), "cluster": {"num_nodes": 2, "num_gpus_per_node": 8}})
    # no size of the pools places: the error stands without a fix
    with pytest.raises(InfeasiblePlacementError) as caught:
        solve({**config(MAIN), "cluster": {"num_nodes": 1, "num_gpus_per_node": 1}})  # rollout TP 2 needs 2 GPUs, the cluster has 1
    assert "it places" not in str(caught.value)


def test_reward_pool_nodes_missing_from_the_cluster_are_named_in_verls_keys() -> None:
    reward = ["reward.reward_model.enable=True", "reward.reward_model.enable_resource_pool=True", "reward.reward_model.nnodes=1", "trainer.nnodes=2"]
    with pytest.raises(InfeasiblePlacementError) as caught:
        solve({**config(MAIN, *reward), "cluster": {"num_nodes": 2, "num_gpus_per_node": 8}})
    message = str(caught.value)
    # no size of reward_pool fits beside global_pool's 16 GPUs; a smaller global_pool does, and is checked by solving
    assert message.endswith("trainer.nnodes=2: with trainer.nnodes=1 it places (checked by solving with it)")
    assert "reward_pool needs 8 GPUs (reward.reward_model.nnodes, reward.reward_model.n_gpus_per_node: 1 x 8) beyond the 16 of global_pool" in message
    assert "reward_pool's nodes are not in the cluster. Add 1 node of 8 GPUs to the cluster" in message
    assert "or make room: global_pool takes every GPU, so lower trainer.nnodes or trainer.n_gpus_per_node, or set reward.reward_model.enable_resource_pool=false" in message
    assert "lower reward.reward_model" not in message  # a smaller reward_pool cannot help: global_pool leaves it no GPU


@pytest.mark.parametrize(
    ("overrides", "cluster", "advice"),
    [
        # 8 GPUs left beside global_pool: 2 groups of 8 need 16, one fits
        (["trainer.nnodes=1", "reward.reward_model.nnodes=2", "reward.reward_model.n_gpus_per_node=8"], {"num_nodes": 2, "num_gpus_per_node": 8},
         "or lower reward.reward_model.nnodes, or set"),
        # 2 GPUs left on a node of 10 beside global_pool's 8: groups of 4 fit only if smaller
        (["trainer.nnodes=1", "reward.reward_model.nnodes=1", "reward.reward_model.n_gpus_per_node=4"], {"num_nodes": 1, "num_gpus_per_node": 10},
         "or lower reward.reward_model.n_gpus_per_node to at most 2, or reward.reward_model.nnodes, or set"),
    ],
)  # fmt: skip
def test_a_pool_past_the_cluster_is_told_which_size_can_make_it_fit(overrides: list[str], cluster: dict, advice: str) -> None:
    reward = ["reward.reward_model.enable=True", "reward.reward_model.enable_resource_pool=True", *overrides]
    with pytest.raises(InfeasiblePlacementError) as caught:
        solve({**config(MAIN, *reward), "cluster": cluster})
    assert advice in str(caught.value)


def test_a_verl_file_solves_as_is_and_refuses_a_second_statement_of_its_pools(tmp_path: Path) -> None:
    solution = solve(str(V041))
    assert solution.components == ["actor_rollout+critic"] and len(solution.placements("actor_rollout+critic")) == 8
    both = tmp_path / "both.yaml"
    both.write_text(V041.read_text() + "resource_pools: {resource_pool_spec: {p: [8]}, mapping: {a: p}}\n")
    with pytest.raises(PlacementConfigError, match="has a resource_pools: section too"):
        solve(str(both))
    with pytest.raises(PlacementConfigError, match="has cluster.component_placement"):
        solve({**config(V041), "cluster": {"num_nodes": 1, "component_placement": {"a": "all"}}})


def test_ray_gives_a_tie_in_free_gpus_to_the_node_with_fewer_cpus_reserved() -> None:
    # nodes of 8 and 4 GPUs: global_pool's 4 GPUs take the 8-GPU node (the freest), leaving both with
    # 4 free; Ray's score counts the 3 CPUs verl's bundles ask per GPU, so reward_pool gets node 1
    four = ["trainer.n_gpus_per_node=4", "reward.reward_model.enable=True", "reward.reward_model.enable_resource_pool=True",
            "reward.reward_model.nnodes=1", "reward.reward_model.n_gpus_per_node=4"]  # fmt: skip
    solution = solve({**config(MAIN, *four), "cluster": {"num_nodes": 2, "num_gpus_per_node": [8, 4]}})
    nodes = {name: sorted({p.cluster_node_rank for p in solution.placements(name)}) for name in solution.components}
    assert nodes == {"actor_rollout+critic": [0], "rollout_reward_colocate_0": [1], "rollout_reward_colocate_1": [1]}
    requests = [PoolRequest("global_pool", (4,), (0, 1), "a", 3), PoolRequest("reward_pool", (4,), (0, 1), "b", 3)]
    assert [group.node for groups in land_pools([8, 4], requests).values() for group in groups] == [0, 1]
    # equal CPUs reserved as well: Ray's node map decides, here the lowest rank
    assert [group.node for groups in land_pools([4, 4], requests).values() for group in groups] == [0, 1]
    assert [group.node for groups in land_pools([8, 8], [*requests, PoolRequest("teacher_pool", (4,), (0, 1), "c", 3)]).values() for group in groups] == [0, 1, 0]


#: Two teachers on a teacher pool of 2 nodes of 4 GPUs: two replicas of 2, then one of 4 (verl cuts in entry order).
TEACHERS = ["distillation.enabled=True", "distillation.nnodes=2", "distillation.n_gpus_per_node=4",
            "distillation.teacher_models.a.key=math/gsm8k", "distillation.teacher_models.a.num_replicas=2",
            "distillation.teacher_models.a.inference.tensor_model_parallel_size=2", "distillation.teacher_models.b.key=code",
            "distillation.teacher_models.b.num_replicas=1", "distillation.teacher_models.b.inference.tensor_model_parallel_size=4"]  # fmt: skip


def test_each_teacher_replica_is_a_worker_group_on_its_slice_named_by_its_key() -> None:
    built = verl_pools(config(MAIN, *TEACHERS))
    assert dict(built.slices) == {"rollout_teacher_colocate_0_math_gsm8k": (0, 2), "rollout_teacher_colocate_1_math_gsm8k": (2, 2), "rollout_teacher_colocate_0_code": (4, 4)}
    solution = solve(config(MAIN, *TEACHERS))
    nodes = {name: [(p.rank, p.cluster_node_rank) for p in solution.placements(name)] for name in built.slices}
    assert nodes["rollout_teacher_colocate_0_code"] == [(0, 2), (1, 2), (2, 2), (3, 2)]  # ranks from 0 on the teacher pool's second node


@pytest.mark.parametrize(
    ("overrides", "words"),
    [
        ([*TEACHERS, "distillation.teacher_models.b.key=math/gsm8k"], "teacher key 'math/gsm8k' is given twice"),
        ([*TEACHERS, "distillation.teacher_models.b.num_replicas=2"], "the teachers take 12 GPUs"),
        ([*TEACHERS, "distillation.teacher_models.a.num_replicas=1", "distillation.teacher_models.b.num_replicas=1",
          "distillation.teacher_models.c.key=x", "distillation.teacher_models.c.num_replicas=1",
          "distillation.teacher_models.c.inference.tensor_model_parallel_size=2"],
         "teacher 'code' replica 0 takes GPUs 2 to 5 of teacher_pool, across 2 nodes of 4, where a replica of 4 needs 1"),
        ([*TEACHERS, "distillation.teacher_models.teacher_model.model_path=m"], "teacher_model.model_path='m' is ignored by verl 0.9.0, 0.9.1 or main: with several"),
        ([*TEACHERS, "distillation.teacher_models.b.key=null"], "distillation.teacher_models.b.key is not set"),
        ([*TEACHERS, "distillation.teacher_models.b.num_replicas=0"], "distillation.teacher_models.b.num_replicas must be a positive integer, not 0"),
        (POOLS_MAIN + ["distillation.teacher_models.teacher_model.num_replicas=2"], "num_replicas=2 is ignored by verl 0.9.0, 0.9.1 or main: a lone teacher fills teacher_pool, so verl sets it to 4"),
        (POOLS_MAIN + ["distillation.teacher_models.teacher_model.inference.tensor_model_parallel_size=3"], "teacher_pool has 8 GPUs, which replicas of 3"),
        (POOLS_MAIN + ["reward.reward_model.rollout.tensor_model_parallel_size=8"], "reward_pool has 4 GPUs, which replicas of 8"),
    ],
)  # fmt: skip
def test_replicas_verl_would_not_start_are_refused(overrides: list[str], words: str) -> None:
    with pytest.raises(PlacementConfigError) as caught:
        verl_pools(config(MAIN, *overrides))
    assert words in str(caught.value)


def test_reward_pool_is_cut_in_the_order_its_groups_were_created() -> None:
    # nodes of 8, 6 and 8: global_pool takes node 0, reward_pool's first group node 2 (the freest), its second node 1;
    # its first user is verl's split, which gets the groups unsorted: replica 0 on node 2 (the differential test runs verl on this)
    reward = ["reward.reward_model.enable=True", "reward.reward_model.enable_resource_pool=True", "reward.reward_model.nnodes=2",
              "reward.reward_model.n_gpus_per_node=4", "trainer.nnodes=1"]  # fmt: skip
    solution = solve({**config(MAIN, *reward), "cluster": {"num_nodes": 3, "num_gpus_per_node": [8, 6, 8]}})
    nodes = [sorted({p.cluster_node_rank for p in solution.placements(f"rollout_reward_colocate_{rank}")}) for rank in range(4)]
    assert nodes == [[2], [2], [1], [1]]


@pytest.mark.parametrize(
    ("path", "overrides", "words", "fix"),
    [
        (MAIN, ["actor_rollout_ref.rollout.tensor_model_parallel_size=3"], "(actor_rollout_ref.rollout.tensor_model_parallel_size=3 x data x pipeline",
         "actor_rollout_ref.rollout.tensor_model_parallel_size=4"),
        (V041, ["actor_rollout_ref.rollout.tensor_model_parallel_size=3", "verl_version=0.4.1"], "tensor_model_parallel_size=3 does not divide",
         "actor_rollout_ref.rollout.tensor_model_parallel_size=4"),
        (V041, ["actor_rollout_ref.rollout.tensor_model_parallel_size=3", "verl_version=0.6.1"], "tensor_model_parallel_size=3 (x data_parallel_size=1",
         "actor_rollout_ref.rollout.tensor_model_parallel_size=4"),
        (MAIN, ["actor_rollout_ref.rollout.tensor_model_parallel_size=12", "trainer.nnodes=3"], "a replica of 12 GPUs", "actor_rollout_ref.rollout.tensor_model_parallel_size=8"),
        (MAIN, [*POOLS_MAIN[:5], "reward.reward_model.rollout.tensor_model_parallel_size=8"], "reward_pool has 4 GPUs, which replicas of 8",
         "reward.reward_model.rollout.tensor_model_parallel_size=4"),
    ],
)  # fmt: skip
def test_a_parallel_size_verl_refuses_is_named_with_the_nearest_that_places(path: Path, overrides: list[str], words: str, fix: str) -> None:
    """Issue 31 item 4: the user's key and value, and a value that fits, checked by solving with it."""
    with pytest.raises(PlacementConfigError) as caught:
        solve(config(path, *overrides))
    assert words in str(caught.value) and str(caught.value).endswith(f"; with {fix} it places (checked by solving with it)")
    solve(config(path, *overrides, fix))  # the fix, as offered
