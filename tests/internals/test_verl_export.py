"""``export --to verl``: a solved layout as verl's pools and trainer overrides, read back (as verl's
trainer config and as ``resource_pools:``) to the same workers on the same GPUs; what verl cannot
state is refused naming the component and the rule."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from helpers import MODELS, ROOT, cli_runner, config
from internals.specification.test_verl_trainer import RELEASE_CASES, TRIMMED
from omegaconf import OmegaConf

from solver_placement import PlacementConfigError, VerlExportError, export_verl, solve
from solver_placement._cli.app import main
from solver_placement._config import load_config
from solver_placement._frontends.verl import verl_pools
from solver_placement._frontends.verl.export import RULES
from solver_placement._frontends.verl.export_names import roles_of
from solver_placement._frontends.verl.resource_pools import pool_spec_from_config

DATA = ROOT / "tests" / "data" / "verl"
V041, MAIN = DATA / "ppo_trainer_v0.4.1.yaml", DATA / "ppo_trainer_main.yaml"
TRAINER = MODELS / "verl_ppo_trainer_2x8.yaml"
#: verl's tests/special_e2e/run_v1_separate_async.sh with NUM_GPUS=8: 4 GPUs train, 4 serve two standalone replicas of TP 2.
SEPARATE = ("trainer.v1.trainer_mode=separate_async", "algorithm.adv_estimator=grpo", "actor_rollout_ref.rollout.n_gpus_per_node=4",
            "actor_rollout_ref.rollout.nnodes=1", "actor_rollout_ref.rollout.tensor_model_parallel_size=2", "trainer.n_gpus_per_node=4")  # fmt: skip


def verl(path: Path, *overrides: str, cluster: dict[str, Any] | None = None) -> dict[str, Any]:
    """verl's trainer config with Hydra-style overrides (and a cluster: section when given)."""
    plain = load_config(OmegaConf.merge(OmegaConf.load(path), OmegaConf.from_dotlist(list(overrides))))
    return {**plain, "cluster": cluster} if cluster else plain


def pools_placed(source: Any) -> dict[str, list[list[tuple[int, int]]]]:
    """Per pool, each worker group's GPUs in rank order: what verl starts where, whatever the roles are called."""
    spec, groups = pool_spec_from_config(source)
    solution = solve(spec)
    placed: dict[str, list[list[tuple[int, int]]]] = {}
    for name, group in groups.items():
        placed.setdefault(group.pool, []).append([(p.cluster_node_rank, p.local_hardware_ranks[0]) for p in solution.placements(name)])
    return placed


def roles_placed(source: Any) -> dict[str, list[tuple[str, ...]]]:
    """Per pool, verl's roles of each worker group (a fused group's together; a model server replica's
    is its model's, ``rm`` or ``teacher``), in order."""
    groups = pool_spec_from_config(source)[1].values()
    return {pool: sorted(tuple(r for role in group.roles for r in roles_of(role)) for group in groups if group.pool == pool) for pool in pools_placed(source)}


def read_back(exported: Any, base: Path, cluster: dict[str, Any] | None, nodes: list[int]) -> tuple[dict, dict]:
    """The export read back as a resource_pools: section (on the solved ``nodes``) and as verl's
    trainer config with its overrides (on ``cluster``, else the nodes it describes)."""
    as_pools = {"cluster": {"num_nodes": len(nodes), "num_gpus_per_node": nodes}, "resource_pools": exported.resource_pools()}
    as_trainer = verl(base, *exported.overrides, f"verl_version={exported.version}", cluster=cluster)
    assert roles_placed(as_pools) == roles_placed(as_trainer)  # the same roles, fused alike, not only the same GPUs
    return pools_placed(as_pools), pools_placed(as_trainer)


@pytest.mark.parametrize(
    ("source", "base", "cluster"),
    [
        (TRAINER, MAIN, None),  # verl main's own config: its described nodes [8, 8, 4]
        (MODELS / "verl_pools_2x8.yaml", MAIN, {"num_nodes": 3, "num_gpus_per_node": 8}),
        (verl(MAIN, "reward.reward_model.enable=True", "trainer.nnodes=2"), MAIN, None),  # rm beside the trainer: two groups on global_pool
        (verl(V041, "reward_model.enable=True", "trainer.nnodes=2", "verl_version=0.4.1"), V041, None),  # 0.4.1 fuses rm into the trainer's worker
        (verl(MAIN, *("reward.reward_model.enable=True", "reward.reward_model.enable_resource_pool=True", "reward.reward_model.nnodes=1",
                      "reward.reward_model.n_gpus_per_node=4", "distillation.enabled=True", "distillation.nnodes=1",
                      "distillation.n_gpus_per_node=4")), MAIN, None),  # three pools, in the order verl creates them
        (config(2, 8, {"actor,rollout": "0-15"}), MAIN, {"num_nodes": 2, "num_gpus_per_node": 8}),  # RLinf-style, pool-shaped
        (verl(MAIN, *SEPARATE), MAIN, None),  # separate_async: two standalone replicas of 2 GPUs on a rollout node of 4
        (verl(MAIN, *SEPARATE[:3], "trainer.n_gpus_per_node=8", "actor_rollout_ref.rollout.nnodes=2", "actor_rollout_ref.rollout.tensor_model_parallel_size=8",
              "reward.reward_model.enable=True", "reward.reward_model.enable_resource_pool=True", "reward.reward_model.nnodes=1",
              "reward.reward_model.n_gpus_per_node=4"), MAIN, None),  # a standalone replica across two nodes of 4, after a reward pool
        (config(3, 8, {"actor": "0-7", "rollout_standalone_1": "8-15", "rollout_standalone_2": "16-23"}), MAIN, {"num_nodes": 3, "num_gpus_per_node": 8}),
        (verl(MAIN, *SEPARATE, "actor_rollout_ref.hybrid_engine=False", "trainer.n_gpus_per_node=5", "verl_version=0.9.1"), MAIN, None),  # standalone replicas alone
        (config(2, 8, {"actor": "0-4", "rollout_standalone_0": "8-11"}), MAIN, {"num_nodes": 2, "num_gpus_per_node": 8}),
        # replicas named as verl names them: the reward model's beside the trainer, a teacher's on GPUs of their own
        (config(2, 8, {"actor": "0-15", "rollout_reward_colocate_0": "0-7", "rollout_reward_colocate_1": "8-15"}), MAIN, {"num_nodes": 2, "num_gpus_per_node": 8}),
        (config(2, 8, {"actor": "0-7", "rollout_teacher_colocate_0_default": "8-11", "rollout_teacher_colocate_1_default": "12-15"}), MAIN,
         {"num_nodes": 2, "num_gpus_per_node": 8}),
        # several teachers, each keyed, cut in the pool's order: two replicas of 2 for math, one of 4 for code
        (config(2, 8, {"actor": "0-7", "rollout_teacher_colocate_0_math": "8-9", "rollout_teacher_colocate_1_math": "10-11",
                       "rollout_teacher_colocate_0_code": "12-15"}), MAIN, {"num_nodes": 2, "num_gpus_per_node": 8}),
        # RLinf's components: actor and rollout on the same GPUs are verl's actor_rollout, reward its reward model
        (config(2, 8, {"actor,rollout": "0-7", "reward": "8-15"}), MAIN, {"num_nodes": 2, "num_gpus_per_node": 8}),
    ],
)  # fmt: skip
def test_export_reads_back_to_the_same_placement(source: Any, base: Path, cluster: dict[str, Any] | None) -> None:
    exported = export_verl(source)
    solved = solve(source)
    original = pools_placed(source) if not isinstance(source, dict) or "cluster" not in source else None
    as_pools, as_trainer = read_back(exported, base, cluster, solved.cluster.gpus_per_node.tolist())
    assert as_pools == as_trainer
    if original is not None:
        assert as_pools == original
    gpus = {(p.cluster_node_rank, p.local_hardware_ranks[0]) for name in solved.components for p in solved.placements(name)}
    assert {gpu for groups in as_pools.values() for group in groups for gpu in group} == gpus


@pytest.mark.parametrize(("release", "overrides"), [(case[0], case[1]) for case in RELEASE_CASES])
def test_each_release_exports_what_it_reads(release: str, overrides: list[str]) -> None:
    """A layout read by a release's rules exports in that release's keys and reads back, as its
    trainer config and as resource_pools:, to the same roles on the same GPUs."""
    source = verl(TRIMMED[release], *overrides, f"verl_version={release}")
    exported = export_verl(source)
    assert exported.version == release
    solved = solve(source)
    as_pools, as_trainer = read_back(exported, TRIMMED[release], None, solved.cluster.gpus_per_node.tolist())
    assert as_pools == as_trainer == pools_placed(source)
    assert dict(exported.mapping) == dict(verl_pools(source).mapping) and exported.idle == verl_pools(source).idle


def test_the_trainer_models_export_is_verls_keys() -> None:
    exported = export_verl(TRAINER)
    assert exported.version == "main"
    assert exported.resource_pool_spec == {"global_pool": [8, 8], "reward_pool": [4]}
    assert dict(exported.mapping) == {"actor_rollout_ref": "global_pool", "rm": "reward_pool"}
    assert exported.overrides == (
        "trainer.nnodes=2", "trainer.n_gpus_per_node=8", "critic.enable=false", "actor_rollout_ref.actor.use_kl_loss=true", "algorithm.use_kl_in_reward=false",
        "reward.reward_model.enable=true", "reward.reward_model.enable_resource_pool=true",
        "reward.reward_model.nnodes=1", "reward.reward_model.n_gpus_per_node=4", "reward.reward_model.rollout.tensor_model_parallel_size=2",
        "reward.reward_model.rollout.data_parallel_size=1", "reward.reward_model.rollout.pipeline_model_parallel_size=1", "distillation.enabled=false",
    )  # fmt: skip
    assert export_verl(verl(V041, "verl_version=0.4.1")).overrides == (
        "trainer.nnodes=1", "trainer.n_gpus_per_node=8", "algorithm.adv_estimator=gae", "actor_rollout_ref.actor.use_kl_loss=false", "algorithm.use_kl_in_reward=false",
        "reward_model.enable=false",
    )  # fmt: skip
    # the files' keys fit 0.4.1 to 0.6.1, which state the critic by different keys: the version is asked for
    with pytest.raises(PlacementConfigError, match="the config fits verl 0.4.1, 0.5.0, 0.6.1, whose exports of this layout differ"):
        export_verl(verl(V041))
    beside = export_verl(verl(MAIN, "reward.reward_model.enable=True"))
    replicas = {f"rollout_reward_colocate_{rank}": [2 * rank, 2] for rank in range(4)}  # four replicas of 2 slice global_pool's 8 GPUs
    assert beside.resource_pools() == {
        "resource_pool_spec": {"global_pool": {"process_on_nodes": [8], "max_colocate_count": 3, "slices": replicas}},
        "mapping": {"actor_rollout": "global_pool", "critic": "global_pool", **dict.fromkeys(replicas, "global_pool")},
    }
    assert "reward.reward_model.enable_resource_pool=false" in beside.overrides


def test_standalone_replicas_export_as_separate_async() -> None:
    exported = export_verl(verl(MAIN, *SEPARATE))
    assert exported.resource_pool_spec == {"global_pool": [4], "rollout_pool_2": [2], "rollout_pool_3": [2]}
    assert {name: pool.max_colocate_count for name, pool in exported.pools.items()} == {"global_pool": 3, "rollout_pool_2": 2, "rollout_pool_3": 2}
    assert exported.overrides[-6:] == (
        "trainer.v1.trainer_mode=separate_async", "actor_rollout_ref.rollout.nnodes=1", "actor_rollout_ref.rollout.n_gpus_per_node=4",
        "actor_rollout_ref.rollout.tensor_model_parallel_size=2", "actor_rollout_ref.rollout.data_parallel_size=1",
        "actor_rollout_ref.rollout.pipeline_model_parallel_size=1",
    )  # fmt: skip
    assert not any("separate_async" in key for key in export_verl(TRAINER).overrides)


def test_the_cli_prints_the_pools_then_the_overrides(tmp_path: Path) -> None:
    result = cli_runner().invoke(main, ["export", "--to", "verl", str(TRAINER)])
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[0] == "# verl main: resource_pool_spec and mapping, as a resource_pools: section"
    assert lines[-2:] == ["# verl main: trainer overrides", "# " + " ".join(export_verl(TRAINER).overrides)]
    section = tmp_path / "pools.yaml"
    section.write_text("cluster: {num_nodes: 3, num_gpus_per_node: [8, 8, 4]}\n" + result.stdout)
    assert pools_placed(section) == pools_placed(TRAINER)  # the printed section is itself a config that reads back
    data = json.loads(cli_runner().invoke(main, ["export", "--to", "verl", str(TRAINER), "--format", "json"]).stdout)
    assert data["command"] == "export" and data["to"] == "verl" and data["verl_version"] == "main"
    assert data["trainer_overrides"][:2] == ["trainer.nnodes=2", "trainer.n_gpus_per_node=8"]
    refused = cli_runner().invoke(main, ["export", "--to", "verl", str(MODELS / "quickstart.yaml")])
    assert refused.exit_code == 2 and refused.stderr.startswith("error: component 'rollout': process 0 holds 2 GPUs")


@pytest.mark.parametrize(
    ("source", "version", "component", "rule", "words"),
    [
        (MODELS / "quickstart.yaml", None, "rollout", "one worker per GPU", "process 0 holds 2 GPUs; verl starts one worker per GPU"),
        # declarative, RLinf-style: exclusive components are pools, but two of them are not verl's trainer and reward pools
        (config(2, 8, {"actor": {"processes": 8}, "rollout": {"processes": 8, "exclusive_with": ["actor"]}}), None, "rollout", "verl's pools",
         "components 'actor' and 'rollout' hold GPUs of their own"),
        (config(2, 8, {"actor": {"processes": 6}, "rollout": {"processes": 10, "exclusive_with": ["actor"]}}), None, "rollout",
         "equal node entries", "a verl pool's process_on_nodes entries are equal"),
        (config(2, 8, {"actor": "0-7", "rm": "4-11"}), None, "rm", "pools share no GPU", "shares some GPUs of 'actor' but not all"),
        (config(2, 8, {"actor": "8-15"}), None, "actor", "Ray's node order", "verl would start global_pool's workers on node 0 GPUs 0-7"),
        (config(2, 8, {"actor": "0-7", "cpu": {"placement": "1", "unit": "node"}}), None, "cpu", "one worker per GPU", "holds no GPU"),
        (MODELS / "verl_pools_2x8.yaml", "0.4.1", "rm", "verl's pools", "verl 0.4.1 has one pool, global_pool, for every role"),
        (config(2, 8, {"actor": "0-7", "teacher": "0-7"}), None, "teacher", "verl's pools", "verl runs the teacher only on teacher_pool"),
        (config(1, 8, {"rm": "0-7"}), None, "rm", "verl's pools", "no component holds the trainer's GPUs"),
        # Ray gives global_pool's 4 GPUs the freer node 0, and then the reward pool's 8 fit nowhere
        (config(2, [8, 4], {"actor": "8-11", "rm": "0-7"}), None, "rm", "Ray's node order", "verl could not start this layout"),
        # separate_async's standalone rollout replicas: verl sizes them alike, numbers them on from the hybrid ones, each on a pool of its own
        (config(2, 8, {"actor": "0-7", "rollout_standalone_4": "8-9", "rollout_standalone_5": "10-13"}), None, "rollout_standalone_5", "verl's pools",
         "holds [4] GPUs per node and 'rollout_standalone_4' [2]; verl's standalone replicas are all one size"),
        (config(2, 8, {"actor": "0-7", "rollout_standalone_1": "8-11"}), None, "rollout_standalone_1", "verl's pools",
         "on from global_pool's 2 hybrid replicas, rollout_standalone_2 to rollout_standalone_2"),
        (config(2, 8, {"actor": "0-7", "rollout_standalone_0": "8-11"}), "0.9.0", "rollout_standalone_0", "verl's pools",
         "on from global_pool's 2 hybrid replicas"),  # numbered from 0 (no hybrid replicas) only from 0.9.1
        (config(2, 8, {"actor": "0-5", "rollout_standalone_1": "8-11"}), None, "rollout_standalone_1", "verl's pools",
         "is a replica of 4 GPUs, which do not divide global_pool's 6"),
        (config(2, 8, {"actor": "0-7", "rollout_standalone_2": "8-11", "rm": "8-11"}), None, "rollout_standalone_2", "verl's pools",
         "shares its GPUs with 'rm'; verl starts each standalone rollout replica on a pool of its own"),
        (config(2, 8, {"actor": "0-7", "rm": "0-7", "rollout_standalone_2": "8-11", "rollout_standalone_3": "12-15"}), None, "rm", "verl's pools",
         "verl's separate_async asserts the reward model runs on a pool of its own"),
        (config(2, 8, {"actor": "0-7", "rollout_standalone_2": "8-11"}), "0.4.1", "rollout_standalone_2", "verl's pools", "verl 0.4.1 has none"),
        (config(2, 8, {"actor": "0-4", "rollout_standalone_0": "8-11"}), "0.9.0", "rollout_standalone_0", "verl's pools", "which do not divide global_pool's 5"),
        (config(2, 8, {"actor": "0-7", "rollout_standalone_x": "8-11"}), None, "rollout_standalone_x", "verl's pools", "not a standalone replica verl names"),
        # the reward model's and the teacher's replicas: one size, numbered from 0 in the pool's order, one teacher, none in 0.4.1
        (config(2, 8, {"actor": "0-7", "rollout_reward_colocate_0": "8-9", "rollout_reward_colocate_1": "10-13"}), None, "rollout_reward_colocate_1",
         "verl's pools", "holds 4 GPUs and 'rollout_reward_colocate_0' 2; verl's replicas of a model are all one size"),
        (config(2, 8, {"actor": "0-7", "rollout_reward_colocate_1": "8-11"}), None, "rollout_reward_colocate_1", "verl's pools",
         "is replica 1 where verl numbers the replicas of a model 0 to 0"),
        (config(2, 8, {"actor": "0-7", "rollout_reward_colocate_0": "10-11", "rollout_reward_colocate_1": "8-9"}), None, "rollout_reward_colocate_0",
         "Ray's node order", "verl would start reward_pool's workers on node 1 GPUs 0-1"),
        (config(2, 8, {"actor": "0-7", "rollout_reward_colocate_0": "8-11", "rollout_reward_colocate_1": "10-13"}), None, "rollout_reward_colocate_1",
         "pools share no GPU", "shares GPUs with 'rollout_reward_colocate_0'; verl starts each replica of a model on GPUs of its own"),
        (config(2, 8, {"actor": "0-7", "rollout_teacher_colocate_0_code": "8-11"}), "0.7.1", "rollout_teacher_colocate_0_code", "verl's pools",
         "verl 0.7.1 has no teacher_pool (export to 0.8.0 or later)"),
        # RLinf's names: rollout alone has no verl role; a component verl's trainer does not have is named
        (config(1, 8, {"rollout": "0-7"}), None, "rollout", "verl's pools", "serves role 'rollout', which verl has not as a role of its own"),
        (config(1, 8, {"actor,env": "0-7"}), None, "env", "verl's pools", "serves role 'env', which verl main's trainer does not map to global_pool"),
        (config(1, 8, {"actor": "0-7", "critic,ref": "0-7"}), None, "ref", "verl's pools", "serves role 'ref' beside 'actor_rollout'; verl main holds"),
        (config(2, 8, {"actor": "0-7", "rollout_reward_colocate_0": "0-7"}), "0.4.1", "rollout_reward_colocate_0", "verl's pools",
         "verl 0.4.1 fuses its reward model into the trainer's workers"),
        (config(2, 8, {"actor": "0-7", "rollout_reward_colocate_x": "8-11"}), None, "rollout_reward_colocate_x", "verl's pools",
         "is not a replica verl names (rollout_reward_colocate_<rank>, rank 0, 1, ...)"),
        (config(3, 8, {"actor": "0-7", **{f"rollout_teacher_colocate_{rank}_default": gpus for rank, gpus in enumerate(("8-11", "12-13,16-17", "18-21"))}}),
         None, "rollout_teacher_colocate_1_default", "verl's pools", "is a replica of 4 GPUs in a pool of nodes of 6"),  # a teacher's across two nodes
    ],
)  # fmt: skip
def test_what_verl_cannot_state_is_refused(source: Any, version: str | None, component: str, rule: str, words: str) -> None:
    with pytest.raises(VerlExportError) as caught:
        export_verl(source, version=version)
    assert (caught.value.component, caught.value.rule) == (component, rule) and rule in RULES
    assert words in str(caught.value) and repr(component) in str(caught.value)


def test_the_export_states_verls_mapping_with_the_roles_it_never_starts() -> None:
    exported = export_verl(verl(V041, "algorithm.adv_estimator=grpo", "verl_version=0.4.1"))
    assert (dict(exported.mapping), exported.idle) == ({"actor_rollout": "global_pool", "critic": "global_pool"}, {"critic"})
    assert "algorithm.adv_estimator=grpo" in exported.overrides  # the critic stays unstarted when read back
    assert export_verl(verl(MAIN)).idle == {"rm"}  # main maps rm with no reward model
    rlinf = export_verl(config(2, 8, {"actor,rollout": "0-7", "reward": "8-15"}))
    assert dict(rlinf.mapping) == {"actor_rollout": "global_pool", "rm": "reward_pool"} and not rlinf.idle  # main maps no critic it does not start
    assert "reward.reward_model.enable=true" in rlinf.overrides and "reward.reward_model.enable=false" not in rlinf.overrides


def test_a_version_export_does_not_write_is_refused() -> None:
    with pytest.raises(PlacementConfigError, match="verl version '0.6.0' is not one export writes; write one of 0.4.1, 0.5.0, 0.6.1, 0.7.1, 0.8.0, 0.9.0, 0.9.1, main"):
        export_verl(TRAINER, version="0.6.0")
