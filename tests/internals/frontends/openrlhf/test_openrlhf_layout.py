"""OpenRLHF's own layout, rank by rank: shared groups, PACK landing, vLLM bundles, lone ranks."""

from __future__ import annotations

from openrlhf_cases import MODELS_0_11, MODELS_FLAT, groups

from solver_placement import Cluster, predict

HYBRID = ["--vllm.num_engines", "4", "--vllm.tensor_parallel_size", "2", "--train.colocate_all", *MODELS_0_11]


def _where(prediction, role):  # type: ignore[no-untyped-def]
    return [(rank.node, rank.gpus, rank.gpu_share, rank.engine, rank.bundle) for rank in prediction.of_role(role)]


def test_colocate_all_shares_one_bundle_per_gpu_at_a_fifth_each() -> None:
    prediction = predict("openrlhf", HYBRID, cluster=Cluster(num_nodes=1, num_gpus_per_node=8))
    assert prediction.roles == ["vllm", "actor", "ref", "critic", "reward"]
    for role in prediction.roles:
        assert [(rank.node, rank.gpus, rank.gpu_share) for rank in prediction.of_role(role)] == [(0, (gpu,), 0.2) for gpu in range(8)]
    assert [rank.engine for rank in prediction.of_role("vllm")] == [0, 0, 1, 1, 2, 2, 3, 3]
    assert prediction.of_role("vllm")[2].visible_devices == ("2", "3")  # vLLM's executor shows a worker its engine's GPUs
    assert prediction.findings == ()


def test_separate_groups_land_in_creation_order_each_on_the_freest_nodes() -> None:
    flags = [
        "--vllm.num_engines",
        "2",
        "--vllm.tensor_parallel_size",
        "2",
        *groups(("actor", 4), ("ref", 2), ("critic", 2), ("reward", 2)),
        *MODELS_0_11,
    ]
    prediction = predict("openrlhf", flags, cluster=Cluster(num_nodes=2, num_gpus_per_node=[4, 8]))
    assert _where(prediction, "vllm") == [(1, (0,), 1.0, 0, 0), (1, (1,), 1.0, 0, 1), (1, (2,), 1.0, 1, 2), (1, (3,), 1.0, 1, 3)]
    assert [(rank.node, rank.gpus) for rank in prediction.of_role("actor")] == [
        (0, (0,)),
        (0, (1,)),
        (0, (2,)),
        (0, (3,)),
    ]  # 4 free on both: fewer CPUs reserved on node 0
    assert [(rank.node, rank.gpus) for rank in prediction.of_role("ref")] == [(1, (4,)), (1, (5,))]
    assert [(rank.node, rank.gpus) for rank in prediction.of_role("critic")] == [(1, (6,)), (1, (7,))]
    assert [rank.node for rank in prediction.of_role("reward")] == [None, None]
    assert [(finding.kind.name, finding.role) for finding in prediction.errors] == [("PENDING", "reward")]


def test_one_pack_group_spans_nodes_whatever_num_nodes_says() -> None:
    prediction = predict("openrlhf", ["--actor.num_nodes", "2", *groups(("actor", 4)), "--reward.remote_url", "r", "--algo.kl.init_coef", "0",
                                      "--algo.advantage.estimator", "rloo", "--rollout.n_samples_per_prompt", "2"], cluster=Cluster(num_nodes=2, num_gpus_per_node=8))  # fmt: skip
    assert {rank.node for rank in prediction.of_role("actor")} == {0}
    assert any("--actor.num_nodes 2 only sizes its group (8 bundles); Ray put them on 1 node" in note for note in prediction.notes)


def test_engines_take_bundles_by_node_from_0_7_1_and_consecutive_ones_in_0_7_0() -> None:
    flags = [
        "--vllm_num_engines",
        "2",
        "--vllm_tensor_parallel_size",
        "2",
        *groups(("actor", 4), ("ref", 4), ("critic", 4), ("reward", 4), dotted=False),
    ]
    cluster = Cluster(num_nodes=3, num_gpus_per_node=[3, 8, 1])  # the engines' group of 4 fits on the freest node, 1
    for release in ("0.7.0", "0.10.1.post2"):
        prediction = predict("openrlhf", [*flags, "--colocate_actor_ref", "--colocate_critic_reward", *MODELS_FLAT], cluster=cluster, release=release)
        assert {rank.node for rank in prediction.of_role("vllm")} == {1}
    flat = Cluster(num_nodes=2, num_gpus_per_node=[3, 3])
    for release in ("0.7.0", "0.10.1.post2"):
        prediction = predict("openrlhf", ["--vllm_num_engines", "2", "--vllm_tensor_parallel_size", "2", *groups(("actor", 1), dotted=False),
                                          "--remote_rm_url", "r", "--init_kl_coef", "0", "--advantage_estimator", "rloo", "--n_samples_per_prompt", "2",
                                          "--pretrain", "m", "--rollout_batch_size", "2"], cluster=flat, release=release)  # fmt: skip
        engine_nodes = [sorted({rank.node for rank in prediction.of_role("vllm") if rank.engine == engine}) for engine in (0, 1)]
        assert engine_nodes == [[0], [0, 1]]  # 3 bundles on node 0, 1 on node 1: no order keeps engine 1 whole


def test_one_gpu_per_node_starts_lone_ranks_with_no_placement_group() -> None:
    flags = ["--vllm_num_engines", "2", *groups(("actor", 4), ("ref", 1), ("reward", 1), dotted=False), "--advantage_estimator", "group_norm",
             "--n_samples_per_prompt", "2", *MODELS_FLAT]  # fmt: skip
    prediction = predict("openrlhf", flags, cluster=Cluster(num_nodes=1, num_gpus_per_node=8), release="0.7.0")
    assert [(role, [rank.gpus for rank in prediction.of_role(role)]) for role in prediction.roles] == [
        ("vllm", [(0,), (1,)]), ("actor", [(2,), (3,), (4,), (5,)]), ("ref", [(6,)]), ("reward", [(7,)])
    ]  # fmt: skip
    assert [rank.bundle for rank in prediction.of_role("ref")] == [None]
    assert any("ref: one GPU per node, so OpenRLHF asks no placement group" in note for note in prediction.notes)


def test_more_than_sixteen_bundles_are_noted() -> None:
    three_nodes = [f"--{role}.num_nodes" if word == "" else word for role in ("actor", "ref", "critic", "reward") for word in ("", "3")]
    prediction = predict("openrlhf", [*three_nodes, "--vllm.num_engines", "12", "--vllm.tensor_parallel_size", "2", "--train.colocate_all", *MODELS_0_11],
                         cluster=Cluster(num_nodes=3, num_gpus_per_node=8))  # fmt: skip
    assert any("beyond 16 Ray orders bundles over nodes unstably" in note for note in prediction.notes)
    assert prediction.errors == ()  # 0.11 regroups the engines' bundles by node: every engine is whole
