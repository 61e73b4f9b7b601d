"""OpenRLHF's flags read as its own parser and ``train()`` read them, release by release."""

from __future__ import annotations

import pytest
from openrlhf_cases import EXAMPLES, MODELS_0_11, MODELS_FLAT, REFUSED_EXAMPLES, example_cases, models

from solver_placement import Cluster, PlacementConfigError, predict
from solver_placement._frontends.openrlhf.job import Engines
from solver_placement._frontends.openrlhf.read import read_job
from solver_placement._prediction.launch_input import launch_input


def _job(arguments: list[str], release: str | None = None):  # type: ignore[no-untyped-def]
    return read_job(launch_input(arguments), release)


def test_dotted_flags_read_with_0_11_and_flat_ones_with_the_last_flat_release() -> None:
    assert _job(["--actor.num_gpus_per_node", "4", *MODELS_0_11]).release == "0.11.2"
    assert _job(["--actor_num_gpus_per_node", "4", *MODELS_FLAT]).release == "0.10.1.post2"
    # 0.11.0's own examples use a flag 0.11.2 renamed: the newest release whose parser takes them all reads them
    assert _job(["--algo.advantage.is_correction_enable", *MODELS_0_11]).release == "0.11.0"
    assert _job(["--algo.advantage.is_correction_level", "token", *MODELS_0_11]).release == "0.11.2"
    assert _job(["--flash_attn", "--vllm_num_engines", "1", *MODELS_FLAT]).release == "0.7.0"  # a flag 0.7.1 dropped


def test_a_release_not_read_is_refused_with_the_ones_that_are() -> None:
    with pytest.raises(
        PlacementConfigError, match=r"OpenRLHF release '0.11.1' is not one .* give --release one of 0.7.0, 0.10.1.post2, 0.11.0, 0.11.2"
    ):
        _job(MODELS_0_11, "0.11.1")
    assert _job(["--vllm_num_engines", "1", *MODELS_FLAT], "0.7.0").release == "0.7.0"


def test_argparse_rules_hold_prefixes_equals_last_occurrence_and_switches() -> None:
    job = _job(
        [
            "--actor.num_gpus",
            "2",
            "--actor.num_gpus_per_node=4",
            "--ref.num_gpus_per_node",
            "4",
            "--vllm.num_eng",
            "2",
            "--train.colocate_actor",
            *MODELS_0_11,
        ]
    )
    assert job.groups[0].num_gpus_per_node == 4  # the last occurrence wins, the prefix stood for the flag
    assert job.engines is not None and job.engines.count == 2
    assert job.colocate_actor_ref and not job.colocate_all


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (["--actor.num_nodes", "two"], "argument --actor.num_nodes: invalid int value: 'two'"),
        (["--actor_num_nodes", "2"], "unrecognized arguments: --actor_num_nodes 2"),
        (["--actor.num", "2"], "ambiguous option: --actor.num could match --actor.num_nodes, --actor.num_gpus_per_node"),
        (["--algo.advantage.estimator", "ppo"], "argument --algo.advantage.estimator: invalid choice: 'ppo'"),
        (["--train.colocate_all", "yes"], "unrecognized arguments: yes"),
    ],
)
def test_flags_the_parser_refuses_are_refused_with_its_message(arguments: list[str], message: str) -> None:
    with pytest.raises(PlacementConfigError, match="OpenRLHF 0.11.2 refuses these flags") as refused:
        _job([*arguments, *MODELS_0_11])
    assert message in str(refused.value)


def test_a_flag_of_another_release_is_named_not_ignored() -> None:
    with pytest.raises(
        PlacementConfigError, match="--actor_num_gpus_per_node is the flat spelling of 0.10.1 and earlier: 0.11.2 reads --actor.num_gpus_per_node"
    ):
        _job(["--actor_num_gpus_per_node", "4", "--train.colocate_all", *MODELS_FLAT])  # one dotted flag: 0.11's parser reads them all
    with pytest.raises(PlacementConfigError, match="unrecognized arguments: --async_train"):
        _job(["--actor_num_gpus_per_node", "4", "--vllm_num_engines", "1", "--async_train", *MODELS_FLAT], "0.7.0")


@pytest.mark.parametrize(
    ("arguments", "release", "rule"),
    [
        ([], "0.11.2", "takes the critic from --reward.model_name_or_path, which is not given"),
        (["--train.colocate_actor_ref", "--ref.num_gpus_per_node", "4", *MODELS_0_11], None, "must be the same when colocate actor and ref"),
        (
            ["--train.colocate_all", "--vllm.num_engines", "3", *MODELS_0_11],
            None,
            "must be equal to vllm_num_engines * vllm_tensor_parallel_size, got 8 and 3",
        ),
        (["--ds.ring_attn_size", "2", *MODELS_0_11], None, "compares --vllm.num_engines with 0, which is not given"),
        (
            ["--train.colocate_all", "--vllm.num_engines", "8", "--critic.num_nodes", "2", *MODELS_0_11],
            None,
            "placement group bundle index 8 is invalid",
        ),
        ([*MODELS_FLAT], "0.7.0", "_validate_args compares --vllm_num_engines with 0"),
        (["--vllm_num_engines", "3", *MODELS_FLAT], "0.7.0", "actor_world_size must be divisible by vllm_num_engines, got 8 and 3"),
        (["--vllm_num_engines", "1", "--pretrain", "m", "--reward_pretrain", "a,b"], "0.7.0", "Only one reward model is supported"),
        (["--actor.num_gpus_per_node", "0", *MODELS_0_11], None, "--actor.num_gpus_per_node is 0, below 1"),
    ],
)
def test_jobs_openrlhf_refuses_are_refused_with_its_reason(arguments: list[str], release: str | None, rule: str) -> None:
    with pytest.raises(PlacementConfigError) as refused:
        _job(arguments, release)
    assert rule in str(refused.value)


def test_roles_follow_openrlhf_rules_for_critic_reference_and_reward() -> None:
    gae = _job(MODELS_0_11)
    assert [group.role for group in gae.groups] == ["actor", "ref", "critic", "reward"]  # gae: the critic is the reward model
    remote = _job(
        ["--reward.remote_url", "http://rm", "--algo.kl.init_coef", "0", "--algo.advantage.estimator", "rloo", "--rollout.n_samples_per_prompt", "4"]
    )
    assert [group.role for group in remote.groups] == ["actor"]
    agent = _job(["--train.agent_func_path", "agent.py", "--algo.advantage.estimator", "reinforce"])
    assert [group.role for group in agent.groups] == ["actor", "ref"]  # the agent counts as a remote reward
    unloaded = _job(["--actor.model_name_or_path", "m", "--algo.advantage.estimator", "reinforce"])
    assert unloaded.group("reward") is not None and not unloaded.group("reward").loaded  # type: ignore[union-attr]


def test_the_script_environment_decides_what_workers_see(tmp_path) -> None:  # type: ignore[no-untyped-def]
    script = tmp_path / "run.sh"
    script.write_text(
        "export RAY_EXPERIMENTAL_NOSET_CUDA_VISIBLE_DEVICES=1\n"
        "ray job submit --address=http://127.0.0.1:8265 -- python3 -m openrlhf.cli.train_ppo_ray \\\n"
        "  --actor.num_gpus_per_node 2 --ref.num_gpus_per_node 2 --critic.num_gpus_per_node 2 --reward.num_gpus_per_node 2 \\\n"
        "  --actor.model_name_or_path m --reward.model_name_or_path rm\n"
    )
    prediction = predict("openrlhf", script, cluster=Cluster(num_nodes=1, num_gpus_per_node=8))
    assert {rank.visible_devices for rank in prediction.ranks} == {tuple(str(gpu) for gpu in range(8))}
    runtime = ["ray", "job", "submit", '--runtime-env-json={"env_vars": {"RAY_EXPERIMENTAL_NOSET_CUDA_VISIBLE_DEVICES": "0"}}', "--",
               "python3", "-m", "openrlhf.cli.train_ppo_ray", "--actor.num_gpus_per_node", "2", *MODELS_0_11]  # fmt: skip
    assert _job(runtime).noset_visible_devices  # "0" is set: OpenRLHF and Ray test the variable for truth as a string


def test_a_script_gathering_flags_in_bash_arrays_reads_as_its_command_line(tmp_path) -> None:  # type: ignore[no-untyped-def]
    script = tmp_path / "train.sh"
    script.write_text(
        'MODEL_PATH="Qwen/Qwen3-4B"\n'
        "CKPT_ARGS=(\n   --actor.model_name_or_path ${MODEL_PATH}\n   # --reward.model_name_or_path ${REWARD_MODEL}\n)\n"
        "ENGINE_ARGS=(--ref.num_gpus_per_node 4 --actor.num_gpus_per_node 4\n   --vllm.num_engines 2 --vllm.tensor_parallel_size 2)\n"
        'ray job submit -- python3 -m openrlhf.cli.train_ppo_ray "${CKPT_ARGS[@]}" "${ENGINE_ARGS[@]}" --reward.remote_url r \\\n'
        "   --algo.advantage.estimator rloo --rollout.n_samples_per_prompt 2\n"
    )
    job = read_job(launch_input(script), None)
    assert job.arguments[:2] == ("--actor.model_name_or_path", "Qwen/Qwen3-4B")
    assert (job.groups[0].num_gpus_per_node, job.engines) == (4, Engines(2, 2))


@pytest.mark.parametrize(
    ("release", "path", "flags"), example_cases(), ids=lambda value: str(value).rsplit("/", 1)[-1] if isinstance(value, str) else None
)
def test_every_example_script_of_each_release_reads(release: str, path: str, flags: list[str]) -> None:
    arguments = [*models(release), *flags]
    if (release, path) in REFUSED_EXAMPLES:  # OpenRLHF refuses it too (the differential test runs it)
        with pytest.raises(PlacementConfigError, match=REFUSED_EXAMPLES[(release, path)]):
            _job(arguments, release)
        return
    job = _job(arguments, release)
    assert job.release == release and job.groups[0].role == "actor"


def test_examples_are_recorded_with_their_commits() -> None:
    assert {release: entry["tag"] for release, entry in EXAMPLES.items()} == {"0.7.0": "v0.7.0", "0.10.1.post2": "v0.10.1.post2", "0.11.0": "v0.11.0"}
    assert all(len(entry["commit"]) == 40 for entry in EXAMPLES.values())
