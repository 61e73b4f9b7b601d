"""A framework's input before the framework reads it: argument lists, launch scripts, configs."""

from __future__ import annotations

from pathlib import Path

import pytest

from solver_placement import PlacementConfigError, limits
from solver_placement._prediction.flags import with_flags
from solver_placement._prediction.launch_input import launch_input, script_arguments

SCRIPT = """#!/bin/bash
set -x
export NUM_GPUS=8
ENGINES=2 TP=4   # two variables on one line
ray job submit --address="http://127.0.0.1:8265" -- python3 -m openrlhf.cli.train_ppo_ray \\
   --actor.num_gpus_per_node ${NUM_GPUS} \\
   --vllm.num_engines $ENGINES --vllm.tensor_parallel_size=${TP} \\
   --pretrain "a model with spaces" \\
   --unset $NOT_SET   # stays as written, so the reader can name it
"""


def test_a_script_is_cut_at_the_framework_command_with_its_variables_resolved(tmp_path: Path) -> None:
    script = tmp_path / "train.sh"
    script.write_text(SCRIPT)
    given = launch_input(script)
    assert given.variables == {"NUM_GPUS": "8", "ENGINES": "2", "TP": "4"}
    assert script_arguments(given, ["openrlhf.cli.train_ppo_ray"]) == (
        "--actor.num_gpus_per_node", "8", "--vllm.num_engines", "2", "--vllm.tensor_parallel_size=4",
        "--pretrain", "a model with spaces", "--unset", "$NOT_SET",
    )  # fmt: skip


def test_a_script_that_never_runs_the_framework_is_refused(tmp_path: Path) -> None:
    script = tmp_path / "other.sh"
    script.write_text("python train.py --x 1\n")
    with pytest.raises(PlacementConfigError, match="no command runs openrlhf.cli.train_ppo_ray"):
        script_arguments(launch_input(script), ["openrlhf.cli.train_ppo_ray"])


def test_arguments_given_without_the_command_are_taken_whole() -> None:
    assert script_arguments(launch_input(["--a", "1"]), ["train.py"]) == ("--a", "1")
    assert script_arguments(launch_input(["python", "/x/train.py", "--a", "1"]), ["train.py"]) == ("--a", "1")


def test_a_yaml_file_or_mapping_is_a_config(tmp_path: Path) -> None:
    path = tmp_path / "job.yaml"
    path.write_text("num_nodes: 2\nactor_train:\n  world_size: 8\n")
    assert launch_input(path).config == {"num_nodes": 2, "actor_train": {"world_size": 8}}
    assert launch_input({"num_nodes": 1}).config == {"num_nodes": 1}


def test_inputs_are_bounded_and_the_limit_is_named(tmp_path: Path) -> None:
    with limits.override(max_arguments=3), pytest.raises(PlacementConfigError, match="max_arguments=3"):
        launch_input(["--a", "1", "--b", "2"])
    script = tmp_path / "big.sh"
    script.write_text("python train.py " + "--x 1 " * 10 + "\n")
    with limits.override(max_arguments=5), pytest.raises(PlacementConfigError, match="max_arguments=5"):
        launch_input(script)
    with limits.override(max_file_bytes=10), pytest.raises(PlacementConfigError, match="max_file_bytes=10"):
        launch_input(script)


def test_an_unsplittable_line_names_the_file(tmp_path: Path) -> None:
    script = tmp_path / "bad.sh"
    script.write_text("python train.py --name 'unclosed\n")
    with pytest.raises(PlacementConfigError, match="bad.sh: a quotation that is never closed"):
        launch_input(script)


def test_other_inputs_are_refused() -> None:
    with pytest.raises(PlacementConfigError, match="list of arguments, a file or a mapping"):
        launch_input([1, 2])  # type: ignore[list-item]


def test_a_fix_replaces_every_spelling_of_its_flags_and_keeps_the_rest() -> None:
    words = ("--a", "1", "--b=2", "--switch", "--c", "3", "--b", "4")
    assert with_flags(words, (("--b", "9"),)) == ("--a", "1", "--switch", "--c", "3", "--b", "9")
    assert with_flags(words, (("--switch", None), ("--new", ""))) == ("--a", "1", "--b=2", "--c", "3", "--b", "4", "--new")
    assert with_flags(("--switch", "--c", "3"), (("--switch", None),)) == ("--c", "3")
