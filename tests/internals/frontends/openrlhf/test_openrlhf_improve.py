"""The solver's layout for an OpenRLHF job, in OpenRLHF's role names, and the flags that ask for it."""

from __future__ import annotations

from openrlhf_cases import MODELS_0_11, groups

from solver_placement import Cluster, improve
from solver_placement._frontends.openrlhf.improve import components
from solver_placement._frontends.openrlhf.read import read_job
from solver_placement._prediction.launch_input import launch_input

HYBRID = ["--vllm.num_engines", "4", "--vllm.tensor_parallel_size", "2", "--train.colocate_all", *MODELS_0_11]
SPLIT = ["--vllm.num_engines", "3", "--vllm.tensor_parallel_size", "4", *groups(("actor", 4)), "--reward.remote_url", "r", "--algo.kl.init_coef", "0",
         "--algo.advantage.estimator", "rloo", "--rollout.n_samples_per_prompt", "2", "--actor.model_name_or_path", "m"]  # fmt: skip


def test_colocated_roles_collocate_with_the_group_they_share_and_others_share_nothing() -> None:
    spec = components(read_job(launch_input([*HYBRID[:4], "--train.colocate_actor_ref", "--train.colocate_critic_reward", *MODELS_0_11]), None))
    assert spec["ref"]["collocate_with"] == "actor" and spec["reward"]["collocate_with"] == "critic"
    assert spec["vllm"] == {"processes": 8, "tensor_parallel_size": 2, "exclusive_with": ["actor", "ref", "critic", "reward"]}
    assert spec["critic"]["exclusive_with"] == ["vllm", "actor", "ref"]


def test_when_openrlhf_already_places_as_the_solver_its_own_flags_are_offered() -> None:
    better = improve("openrlhf", HYBRID, cluster=Cluster(num_nodes=1, num_gpus_per_node=8))
    assert better.arguments == tuple(HYBRID) and better.cannot_express == ()
    assert set(better.solution.components) == {"vllm", "actor", "ref", "critic", "reward"}


def test_a_split_engine_gets_whole_engines_from_the_solver_and_a_plain_statement_of_what_flags_cannot_do() -> None:
    better = improve("openrlhf", SPLIT, cluster=Cluster(num_nodes=3, num_gpus_per_node=6))
    assert better.arguments is None
    assert "no flag asks for this layout" in better.cannot_express[0]
    assert any("engine split across nodes" in reason for reason in better.cannot_express)
    engines = [better.solution.placements("vllm")[start : start + 4] for start in range(0, 12, 4)]
    assert all(len({process.cluster_node_rank for process in engine}) == 1 for engine in engines)
