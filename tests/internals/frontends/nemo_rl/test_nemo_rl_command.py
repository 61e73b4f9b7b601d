"""``solver-placement predict NeMo-RL``: the example of ``docs/frameworks/nemo_rl.md`` prints what
the page shows and exits 3 on its error; ``--better`` answers in NeMo-RL's keys or says why not."""

from __future__ import annotations

import os

from helpers import ROOT, cli_runner

from solver_placement._cli import main

PAGE = ROOT / "docs" / "frameworks" / "nemo_rl.md"
EXAMPLE = ["--cluster", "cluster_2x4.yaml", "--", "--config", "nemo_rl_grpo.yaml", "cluster.num_nodes=1", "cluster.gpus_per_node=6", "policy.generation.vllm_cfg.tensor_parallel_size=3"]


def _in_docs(arguments: list[str]) -> tuple[int, str]:
    before = os.getcwd()
    os.chdir(PAGE.parent)
    try:
        result = cli_runner().invoke(main, ["predict", "NeMo-RL", *arguments])
    finally:
        os.chdir(before)
    return result.exit_code, result.output


def test_the_page_s_example_is_the_command_s_real_output() -> None:
    code, output = _in_docs(EXAMPLE)
    assert code == 3
    page = PAGE.read_text()
    shown = page[page.index("$ solver-placement predict NeMo-RL") :].split("\n", 1)[1]
    assert shown.startswith(output)
    assert "fix: cluster.num_nodes=2 cluster.gpus_per_node=3" in output


def test_better_offers_sized_keys_when_the_solver_places_it() -> None:
    code, output = _in_docs(["--better", *EXAMPLE[:-2], "policy.generation.vllm_cfg.tensor_parallel_size=2"])  # 8 GPUs asked
    assert code == 0, output
    assert "--config nemo_rl_grpo.yaml" in output and "cluster.gpus_per_node=4" in output
