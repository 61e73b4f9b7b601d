"""A YAML config reads the same under every omegaconf the package supports (2.2.1 up to 2.5,
pre-releases included: an RLinf environment holds 2.3 under Hydra 1.3, or 2.4.0.dev4 under its
agentic extras). The versions differ where aliases are concerned: from 2.4.0's release
candidates OmegaConf bounds them itself (10,000 expanded nodes, 100 times the nodes written) and
refuses a recursive one, while earlier versions have no bound and recurse into a recursive alias
until the stack runs out. The input scan is the one bound on every version, so these behave the
same under each; ``.ci/run`` runs them at the lowest version (lowest-versions job) and the newest.
"""

from __future__ import annotations

import pytest
from helpers import MODELS, cli_runner

from solver_placement import PlacementConfigError, limits
from solver_placement._cli import main
from solver_placement._config import YamlText, load_config


@pytest.mark.parametrize(
    ("text", "path"),
    [("a: &a [*a]\n", "a"), ("a: &a {b: *a}\n", "a.b"), ("a: &a {<<: *a}\n", "a.<<"), ("a: &a [1, [2, *a]]\n", "a")],
)
def test_a_recursive_alias_is_refused_in_our_words(text: str, path: str) -> None:
    with pytest.raises(PlacementConfigError) as refused:
        load_config(YamlText(text))
    assert str(refused.value) == (
        f"config file '<yaml text>': {path} is the alias '*a' of a mapping or list that holds it "
        "(a mapping or list that holds itself cannot be a config)"
    )


def test_a_yaml_alias_in_an_override_is_refused_as_hydras_grammar_refuses_it() -> None:
    """An override's value is Hydra's grammar, which has no aliases (``_override_values``), so
    OmegaConf never loads a recursive one from the command line."""
    result = cli_runner().invoke(main, ["solve", str(MODELS / "quickstart.yaml"), "++junk=&a [*a]"])
    assert result.exit_code == 2 and "Hydra's override grammar cannot read the value (no token starts at column 1 ('&'))" in result.stderr, result.output


def test_aliases_within_max_values_load_however_far_they_expand() -> None:
    """105 nodes written expand to 12,225: past OmegaConf 2.4's own bounds, within ``max_values``."""
    text = "l: &l [" + ", ".join(["x"] * 100) + "]\nm: [" + ", ".join(["*l"] * 120) + "]\n"
    assert load_config(YamlText(text))["m"] == [["x"] * 100] * 120
    with limits.override(max_values=12_000), pytest.raises(PlacementConfigError, match="above the limit max_values=12000"):
        load_config(YamlText(text))
