"""ROLL's YAML read as ROLL reads it: device_mapping evaluated without eval, ROLL's normalisation of
num_gpus_per_worker and world_size, num_nodes recomputed, per-release rules, and what ROLL would
refuse or silently drop, refused with ROLL's reason."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from solver_placement import PlacementConfigError, limits
from solver_placement._frontends.roll.device_mapping import device_mapping
from solver_placement._frontends.roll.keys import read_roll
from solver_placement._prediction.launch_input import launch_input


def job(config: dict[str, Any], release: str | None = None) -> Any:
    return read_roll(launch_input(config), release)


def section(mapping: str | None = "list(range(0,8))", strategy: str = "megatron_train", **extra: Any) -> dict[str, Any]:
    body: dict[str, Any] = {"strategy_args": {"strategy_name": strategy, "strategy_config": extra.pop("strategy_config", {})}, **extra}
    if mapping is not None:
        body["device_mapping"] = mapping
    return body


@pytest.mark.parametrize(
    ("text", "devices"),
    [
        ("list(range(0,8))", tuple(range(8))),
        ("list(range(12,16))", (12, 13, 14, 15)),
        ("[6, 7]", (6, 7)),
        ("list([0,1,2,3,8,9,10,11])", (0, 1, 2, 3, 8, 9, 10, 11)),
        ("list(range(0,4)) + list(range(8,12))", (0, 1, 2, 3, 8, 9, 10, 11)),
        ("list(range(0, 2*8, 2))", (0, 2, 4, 6, 8, 10, 12, 14)),
        ("range(2,4)", (2, 3)),
        ("[0]*3", (0, 0, 0)),
        ("list(range(0,0))", ()),
    ],
)
def test_device_mapping_evaluates_as_python_would(text: str, devices: tuple[int, ...]) -> None:
    assert device_mapping(text, "actor.device_mapping") == devices == tuple(eval(text))  # noqa: S307 -- the test's own literals


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("__import__('os').system('true')", "is not read"),
        ("list(range(0,10**9))", "'10**9' is not read"),
        ("[1] + range(3)", "TypeError: unsupported operands list + range"),
        ("list(range(0,8", "SyntaxError"),
        ("[-1, 0]", "device number -1 is negative"),
        ("8", "is the number 8"),
        ("list(range(0,8,0))", "range() arg 3 must not be zero"),
        ("[x for x in range(8)]", "is not read"),
    ],
)
def test_device_mapping_refuses_what_it_does_not_compute(text: str, said: str) -> None:
    with pytest.raises(PlacementConfigError, match="actor.device_mapping") as raised:
        device_mapping(text, "actor.device_mapping")
    assert said in str(raised.value)


def test_device_mapping_is_bounded_before_it_is_built() -> None:
    with limits.override(max_hardware_items=1_000), pytest.raises(PlacementConfigError, match="max_hardware_items=1000"):
        device_mapping("list(range(0,5000))", "actor.device_mapping")
    with limits.override(max_rank_text=20), pytest.raises(PlacementConfigError, match="max_rank_text=20"):
        device_mapping("list(range(0,4)) + list(range(4,8))", "actor.device_mapping")


def test_a_yaml_list_is_refused_with_rolls_type_error_and_the_string_to_write() -> None:
    with pytest.raises(PlacementConfigError, match=r"eval\(\) arg 1 must be a string.*device_mapping: 'list\(range\(0,4\)\)'"):
        job({"actor_train": {"device_mapping": [0, 1, 2, 3]}})


def test_num_gpus_per_worker_is_normalised_as_worker_config_does() -> None:
    read = job(
        {
            "actor_train": section(num_gpus_per_worker=4),  # training strategies: forced to 1
            "actor_infer": section(
                "list(range(0,8))", "vllm", num_gpus_per_worker=1, strategy_config={"tensor_parallel_size": 2, "pipeline_parallel_size": 2}
            ),
            "reference": section("list(range(0,8))", "sglang", num_gpus_per_worker=2),
            "critic": section(None, world_size=3),
        }
    )
    workers = {worker.role: worker for worker in read.workers}
    assert (workers["actor_train"].gpus_per_worker, workers["actor_train"].world_size) == (1, 8)
    assert (workers["actor_infer"].gpus_per_worker, workers["actor_infer"].world_size) == (4, 2)
    assert (workers["reference"].gpus_per_worker, workers["reference"].world_size) == (2, 4)
    assert (workers["critic"].devices, workers["critic"].world_size) == (None, 3)


def test_a_mapping_that_does_not_divide_is_refused_with_rolls_assertion() -> None:
    with pytest.raises(PlacementConfigError, match=r"len\(device_mapping\)=6 must be divisible by num_gpus_per_worker=4 \(vLLM"):
        job({"actor_infer": section("list(range(0,6))", "vllm", strategy_config={"tensor_parallel_size": 4})})


def test_num_nodes_is_recomputed_from_the_mappings_but_not_from_rewards() -> None:
    read = job({"num_nodes": 5, "actor_train": section("list(range(0,12))"), "rewards": {"judge": section("list(range(16,20))", "vllm")}})
    assert read.required_nodes(8) == 2 and read.required_nodes(16) == 1
    assert [worker.counts_for_nodes for worker in read.workers] == [True, False]
    assert job({"num_nodes": 3, "rewards": {"math": section(None, world_size=2)}}).required_nodes(8) == 3


def test_strategies_are_checked_per_release() -> None:
    assert job({"actor_train": section(strategy="deepspeed_train")}, "0.1.0").workers[0].strategy == "deepspeed_train"
    with pytest.raises(PlacementConfigError, match="ROLL 0.3.0 has no strategy 'deepspeed_train'"):
        job({"actor_train": section(strategy="deepspeed_train")}, "0.3.0")
    assert job({"actor_train": {"device_mapping": "[0]"}}, "0.1.0").workers[0].strategy == "deepspeed_train"
    assert job({"actor_train": {"device_mapping": "[0]"}}).workers[0].strategy == "fsdp2_train"
    with pytest.raises(PlacementConfigError, match=r"release '0\.9' is not one the library reads \(0\.1\.0, 0\.3\.0\)"):
        job({"actor_train": section()}, "0.9")


def test_a_misspelt_placement_key_is_named_not_dropped_as_dacite_would() -> None:
    with pytest.raises(PlacementConfigError, match="actor_infer.device_maping: .*drops it without a word.*did you mean 'device_mapping'"):
        job({"actor_infer": {"device_maping": "list(range(0,8))", "strategy_args": {"strategy_name": "vllm"}}})


@pytest.mark.parametrize("where", ["top", "worker"])
def test_device_variables_in_system_envs_are_refused(where: str) -> None:
    envs = {"CUDA_VISIBLE_DEVICES": "0,1"}
    config = {"system_envs": envs, "actor_train": section()} if where == "top" else {"actor_train": section(system_envs=envs)}
    with pytest.raises(PlacementConfigError, match="system_envs.CUDA_VISIBLE_DEVICES: set in system_envs it replaces the devices ROLL computes"):
        job(config)


def test_cpu_workers_need_a_world_size() -> None:
    with pytest.raises(PlacementConfigError, match="rewards.math: .*world_size is not set"):
        job({"rewards": {"math": {"strategy_args": {"strategy_name": "hf_infer"}}}})


def test_the_start_scripts_command_line_names_the_yaml(tmp_path: Path) -> None:
    folder = tmp_path / "examples" / "demo"
    folder.mkdir(parents=True)
    (folder / "rlvr.yaml").write_text("actor_train:\n  device_mapping: list(range(0,4))\n")
    script = str(tmp_path / "examples" / "start_rlvr_pipeline.py")
    for words in (
        ["python", script, "--config_path", "demo", "--config_name", "rlvr"],
        ["python", script, "--config_p=demo", "--config_name", "rlvr.yaml"],
    ):
        assert job_from(words).workers[0].devices == (0, 1, 2, 3)
    overridden = job_from(["python", script, "--config_path", "demo", "--config_name", "rlvr", "actor_train.device_mapping='list(range(4,8))'"])
    assert overridden.workers[0].devices == (4, 5, 6, 7)
    with pytest.raises(PlacementConfigError, match=r"Hydra reads list\(...\) as a call of a function it does not have"):
        job_from(["python", script, "--config_path", "demo", "--config_name", "rlvr", "actor_train.device_mapping=list(range(4,8))"])
    with pytest.raises(PlacementConfigError, match="unrecognized arguments: --nodes"):
        job_from(["python", script, "--config_path", "demo", "--config_name", "rlvr", "--nodes", "2"])
    with pytest.raises(PlacementConfigError, match="would find no config 'missing'"):
        job_from(["python", script, "--config_path", "demo", "--config_name", "missing"])


def job_from(words: list[str]) -> Any:
    return read_roll(launch_input(words), None)
