"""slime's command line read as slime's parsers and its ``slime_validate_args`` read it."""

from __future__ import annotations

from pathlib import Path

import pytest

from solver_placement._errors import PlacementConfigError
from solver_placement._frontends.slime.job import RELEASE, job_from_arguments, read_job
from solver_placement._frontends.slime.known_flags import SLIME_FLAGS
from solver_placement._prediction.launch_input import launch_input
from solver_placement._prediction.predict import predict


def job(flags: str):  # type: ignore[no-untyped-def]
    return job_from_arguments(flags.split())


def test_defaults_are_slimes() -> None:
    read = job("--colocate")
    assert (read.actor_num_nodes, read.actor_num_gpus_per_node, read.num_gpus_per_node, read.rollout_num_gpus_per_engine) == (1, 8, 8, 1)
    assert read.release == RELEASE


def test_colocate_gives_the_rollout_the_actors_gpus() -> None:
    assert job("--actor-num-nodes 2 --actor-num-gpus-per-node 4 --colocate").rollout_num_gpus == 8
    assert job("--actor-num-gpus-per-node 4 --colocate --rollout-num-gpus 2").rollout_num_gpus == 2


def test_debug_rollout_only_resizes_the_actor_and_drops_colocation() -> None:
    read = job("--debug-rollout-only --rollout-num-gpus 12 --colocate")
    assert (read.actor_num_nodes, read.actor_num_gpus_per_node, read.colocate) == (1, 8, False)
    assert job("--debug-rollout-only --rollout-num-gpus 4").actor_gpus == 4


def test_loading_debug_rollout_data_means_train_only() -> None:
    assert job("--load-debug-rollout-data /x/{rollout_id}.pt --actor-num-gpus-per-node 2").debug_train_only


def test_ppo_starts_a_critic_unless_no_rollout() -> None:
    assert job("--colocate --advantage-estimator ppo").use_critic
    assert not job("--colocate --advantage-estimator ppo --num-rollout 0").use_critic
    assert not job("--colocate --advantage-estimator gspo").use_critic


def test_argparse_rules() -> None:
    """``--flag=value``, the last occurrence wins, a switch drops the word after it."""
    assert job("--actor-num-gpus-per-node=2 --colocate --actor-num-gpus-per-node 4").actor_gpus == 4
    assert job("--colocate false --actor-num-gpus-per-node 4").colocate
    assert job("--actor-num-gpus-per-node 4 --colocate -- --actor-num-gpus-per-node 2").actor_gpus == 4


@pytest.mark.parametrize(
    ("flags", "said"),
    [
        ("--colocate=true", "ignored explicit argument 'true'"),
        ("--rollout-num-gpus four", "invalid int value: 'four'"),
        ("--rollout-num-gpus", "expected one argument"),
        ("--rollout-num-gpus --colocate", "expected one argument"),
        ("--colocate --advantage-estimator dpo", "invalid choice: 'dpo'"),
        ("--actor-num-gpus-per-node 4", "--rollout-num-gpus is not given and --colocate is off"),
        ("--debug-rollout-only --debug-train-only --rollout-num-gpus 2", "cannot be set at the same time"),
        ("--debug-rollout-only", "without --rollout-num-gpus"),
        ("--colocate --rollout-num-gpus-per-engine 4 --sglang-pp-size 3", "must be divisible by sglang_pipeline_parallel_size"),
        ("--colocate --rollout-num-gpus-per-engine 4 --prefill-num-servers 2", "No decode GPUs: total 8, prefill 8"),
        ("--colocate --actor-num-gpus-per-node 6 --tensor-model-parallel-size 4", "world size"),
        ("--colocate --rollout-num-gpus-per-engine 0", "at least 1"),
        ("--actor-num-nodes 0 --colocate", "at least one train rank"),
        ("--actor-num-nodes -1 --colocate", "negative"),
        ("--colocate --rollout-external-engine-addrs 10.0.0.1:30000", "does not model external engines"),
        ("--colocate --sglang-config groups.yaml", "does not read"),
        ("--colocate --prefill-num 1", "abbreviations"),
        ("--colocate --rollout-num-gpu 4", "did you mean '--rollout-num-gpus'"),
        ("--colocate --actor-num-node 2", "did you mean '--actor-num-nodes'"),
    ],
)
def test_refused_with_slimes_reason(flags: str, said: str) -> None:
    with pytest.raises(PlacementConfigError, match=said.replace("(", r"\(").replace(")", r"\)")):
        job(flags)


def test_unknown_flags_of_megatron_and_sglang_pass() -> None:
    """slime keeps unknown flags for Megatron and SGLang; only a near miss of a placement flag is refused."""
    read = job("--colocate --num-layers 36 --sglang-mem-fraction-static 0.7 --router-policy cache_aware --lr 1e-6")
    assert read.colocate
    assert "--rollout-num-gpus" in SLIME_FLAGS and "--num-layers" not in SLIME_FLAGS


def test_a_script_is_read_from_its_train_command(tmp_path: Path) -> None:
    script = tmp_path / "run.sh"
    script.write_text("GPUS=4\nARGS=(\n  --rollout-num-gpus-per-engine 2\n)\nray job submit -- python3 train.py --actor-num-gpus-per-node ${GPUS} --colocate ${ARGS[@]}\n")
    read = read_job(launch_input(script), None)
    assert (read.actor_gpus, read.rollout_num_gpus_per_engine, read.colocate) == (4, 2, True)


def test_a_script_without_train_py_is_named(tmp_path: Path) -> None:
    script = tmp_path / "run.sh"
    script.write_text("python other.py --colocate\n")
    with pytest.raises(PlacementConfigError, match="train.py or train_async.py"):
        read_job(launch_input(script), None)


def test_a_release_it_does_not_read_is_refused() -> None:
    with pytest.raises(PlacementConfigError, match="commit"):
        read_job(launch_input(["--colocate"]), "0.1.0")


def test_arrays_from_sourced_files_are_noted(tmp_path: Path) -> None:
    script = tmp_path / "run.sh"
    script.write_text('source "${SCRIPT_DIR}/models/qwen3-4B.sh"\npython3 train.py --colocate ${MODEL_ARGS[@]}\n')
    notes = predict("slime", script).notes
    assert any("${MODEL_ARGS[@]}" in note and "not read" in note for note in notes)


def test_async_training_refuses_colocation(tmp_path: Path) -> None:
    script = tmp_path / "run.sh"
    script.write_text("python3 train_async.py --colocate --actor-num-gpus-per-node 4\n")
    with pytest.raises(PlacementConfigError, match="Colocation is not supported for async training"):
        read_job(launch_input(script), None)
    script.write_text("python3 train_async.py --rollout-num-gpus 4 --actor-num-gpus-per-node 4\n")
    assert not read_job(launch_input(script), None).colocate
