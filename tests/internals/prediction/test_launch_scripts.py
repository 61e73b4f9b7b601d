"""Launch scripts read as the shell would run them: bash arrays, defaults, multi-line quotes,
and a command's arguments ending with its line."""

from __future__ import annotations

from pathlib import Path

import pytest

from solver_placement._errors import PlacementConfigError
from solver_placement._prediction.launch_input import launch_input, script_arguments

SCRIPT = """\
#!/bin/bash
NUM_GPUS=${NUM_GPUS:-4}
MODEL_ARGS=(
   --num-layers 36   # a comment inside the array
   --hidden-size 2560
)
PERF_ARGS=(--tensor-model-parallel-size 2)
PERF_ARGS+=(
   --sequence-parallel
)
RUNTIME_ENV_JSON="{
  \\"env_vars\\": {\\"PYTHONPATH\\": \\"/root/Megatron-LM/\\"}
}"
ray job submit --runtime-env-json="${RUNTIME_ENV_JSON}" \\
   -- python3 train.py \\
   --actor-num-gpus-per-node ${NUM_GPUS} \\
   "${MODEL_ARGS[@]}" \\
   ${PERF_ARGS[@]} \\
   ${SOURCED_ARGS[@]}
echo done --colocate
"""


@pytest.fixture
def script(tmp_path: Path) -> Path:
    path = tmp_path / "run.sh"
    path.write_text(SCRIPT)
    return path


def test_arrays_are_spliced_where_the_command_expands_them(script: Path) -> None:
    assert script_arguments(launch_input(script), ("train.py",)) == (
        "--actor-num-gpus-per-node", "4",
        "--num-layers", "36", "--hidden-size", "2560",
        "--tensor-model-parallel-size", "2", "--sequence-parallel",
        "${SOURCED_ARGS[@]}",
    )  # fmt: skip


def test_a_command_ends_with_its_line(script: Path) -> None:
    """``echo done --colocate`` after the launch is not one of train.py's arguments."""
    assert "--colocate" not in script_arguments(launch_input(script), ("train.py",))


def test_a_set_variable_beats_its_default(tmp_path: Path) -> None:
    path = tmp_path / "run.sh"
    path.write_text("N=2\npython train.py --actor-num-nodes ${N:-8} --x ${M:-${N:-5}} --y ${E:-}\n")
    assert script_arguments(launch_input(path), ("train.py",)) == ("--actor-num-nodes", "2", "--x", "2", "--y")


def test_a_quotation_never_closed_is_named(tmp_path: Path) -> None:
    path = tmp_path / "run.sh"
    path.write_text('python train.py --x "open\n--y 1\n')
    with pytest.raises(PlacementConfigError, match="never closed"):
        launch_input(path)


def test_arrays_count_against_the_argument_limit(tmp_path: Path) -> None:
    from solver_placement import limits

    path = tmp_path / "run.sh"
    path.write_text("A=(\n" + "--x 1\n" * 30 + ")\npython train.py ${A[@]}\n")
    with limits.override(max_arguments=20), pytest.raises(PlacementConfigError, match="max_arguments"):
        launch_input(path)


def test_a_long_open_quotation_is_read_in_one_pass(tmp_path: Path) -> None:
    """An open quotation over many lines (each with the other quote) is found open once, not
    re-split line after line (a script at the size limit would take hours so)."""
    import time

    path = tmp_path / "run.sh"
    path.write_text('X="\n' + "it's\n" * 20_000 + '"\npython train.py --a 1\n')
    started = time.perf_counter()
    assert script_arguments(launch_input(path), ("train.py",)) == ("--a", "1")
    assert time.perf_counter() - started < 10


def test_defaults_nested_too_deep_are_refused(tmp_path: Path) -> None:
    path = tmp_path / "run.sh"
    path.write_text("python train.py --x " + "${A:-" * 40 + "1" + "}" * 40 + "\n")
    with pytest.raises(PlacementConfigError, match="deeper than 16"):
        launch_input(path)
