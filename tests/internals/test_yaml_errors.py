"""A YAML file the loader refuses is named with the problem, its line and column (from 1, as
editors count) and the key, whatever the path to the loader: a file, YAML text, the command line.
A file with a Hydra defaults list that composes other files is refused, not read in part.

The problem is in the loader's words, which depend on the omegaconf version: 2.4 loads with
libyaml where PyYAML has it, 2.2 and 2.3 with PyYAML's pure-Python parser. Where the two word a
problem differently, a case lists both (libyaml's first) and the message must be one of them."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from helpers import cli_runner

from solver_placement import PlacementConfigError, solve
from solver_placement._cli import main
from solver_placement._config import YamlText, load_config, load_yaml

DATA = Path(__file__).resolve().parents[1] / "data" / "rlinf"


@pytest.mark.parametrize(
    ("text", "messages"),
    [
        pytest.param(
            "cluster:\n  num_nodes: 2\n  num_nodes: 3\n",
            ("found duplicate key num_nodes at line 3, column 3, while constructing a mapping at line 2, column 3 (key 'cluster.num_nodes')",),
            id="duplicate-key",
        ),
        pytest.param(
            "cluster:\n  node_groups:\n    - {label: a, node_ranks: 0}\n    - label: b\n      label: c\n",
            ("found duplicate key label at line 5, column 7, while constructing a mapping at line 4, column 7 (key 'cluster.node_groups[1].label')",),
            id="duplicate-key-in-a-list",
        ),
        pytest.param(
            "cluster:\n  num_nodes: [2\n",
            tuple(
                f"{problem} at line 3, column 1, while parsing a flow sequence at line 2, column 14 (the last key read: 'cluster.num_nodes')"
                for problem in ("did not find expected ',' or ']'", "expected ',' or ']', but got '<stream end>'")
            ),
            id="unclosed-flow-list",
        ),
        pytest.param(
            "cluster:\n  num_nodes: 1\n  component_placement: actor: 0-7\n",
            tuple(
                f"mapping values are not allowed {where} at line 3, column 29 (the last key read: 'cluster.component_placement')"
                for where in ("in this context", "here")
            ),
            id="two-colons",
        ),
        pytest.param(
            "cluster:\n  num_nodes: *nodes\n",
            tuple(f"found undefined alias{name} at line 2, column 14 (key 'cluster.num_nodes')" for name in ("", " 'nodes'")),
            id="undefined-alias",
        ),
    ],
)  # fmt: skip
def test_the_message_keeps_the_problem_its_place_and_the_key(text: str, messages: tuple[str, ...], tmp_path: Path) -> None:
    path = tmp_path / "model.yaml"
    path.write_text(text)
    with pytest.raises(PlacementConfigError) as from_file:
        solve(path)
    prefix = f"config file {str(path)!r} is not valid YAML: "
    assert str(from_file.value) in [prefix + message for message in messages]
    message = str(from_file.value).removeprefix(prefix)
    with pytest.raises(PlacementConfigError, match="^config file '<yaml text>' is not valid YAML: ") as from_text:
        load_config(YamlText(text))
    assert str(from_text.value).endswith(message)
    result = cli_runner().invoke(main, ["solve", "-"], input=text)
    assert result.exit_code == 2 and result.stderr == f"error: config file '<stdin>' is not valid YAML: {message}\n"


def test_the_message_stays_one_bounded_line_for_a_huge_or_odd_key() -> None:
    key = "k" * 1_000  # YAML caps a plain key at 1,024 characters
    with pytest.raises(PlacementConfigError) as refused:
        load_yaml(YamlText(f"{key}: 1\n{key}: 2\n"), "big")
    message = str(refused.value)
    assert len(message) < 500 and "\n" not in message and "at line 2, column 1" in message and "(key 'kkk" in message
    with pytest.raises(PlacementConfigError) as odd:
        load_yaml(YamlText('"a\\e[31m": 1\n"a\\e[31m": 2\n'), "odd")  # YAML's escape for the terminal's ESC
    assert "\x1b" not in str(odd.value) and "\\x1b" in str(odd.value)


@pytest.mark.parametrize("name", ["frankasim_ppo_mlp.yaml", "realworld_charger_sac_cnn_async.yaml"])
def test_rlinf_files_composed_by_hydra_are_refused_naming_defaults(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Without Hydra (the core install) a defaults: list cannot be composed; with it, see tests/internals/test_compose.py."""
    monkeypatch.setitem(sys.modules, "hydra", None)
    with pytest.raises(PlacementConfigError, match=r"has a Hydra defaults: list, which composes other files into it \('env/\S+@env\.train' and 3 more\)"):
        load_config(DATA / name)


def test_defaults_that_only_set_hydras_own_settings_are_read() -> None:
    """RLinf's reasoning examples list only ``override hydra/job_logging: stdout``: nothing to compose."""
    assert load_config(DATA / "qwen2.5-1.5b-grpo-megatron.yaml")["cluster"]["num_nodes"] == 8
    assert load_config(YamlText("defaults: [_self_, {override hydra/launcher: basic}]\ncluster: {num_nodes: 1}\n"))["cluster"] == {"num_nodes": 1}
    with pytest.raises(PlacementConfigError, match=r"composes other files into it \('base'\)"):
        load_config(YamlText("defaults: [_self_, base]\ncluster: {num_nodes: 1}\n"))
