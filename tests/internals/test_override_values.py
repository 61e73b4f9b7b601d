"""An override's value is read as Hydra reads it (``_override_values``), not as YAML: the readings
where the two differ, the refusals with the form to write instead, the input bounds, and a
differential against Hydra's own override parser where Hydra is installed."""

from __future__ import annotations

import math
import random
from typing import Any

import pytest
from helpers import needs_hydra

from solver_placement import apply_overrides, limits
from solver_placement._errors import PlacementConfigError
from solver_placement._override_values import override_value

#: Values whose YAML reading differs from Hydra's, with Hydra's (hydra-core 1.3.8's parser).
HYDRA_READINGS: list[tuple[str, Any]] = [
    ("1:2", "1:2"),  # YAML 1.1: 62
    ("yes", "yes"),  # YAML 1.1: True
    ("on", "on"),
    ("0x10", "0x10"),  # YAML 1.1: 16
    ("1e3", 1000.0),  # PyYAML: the string '1e3'
    ("inf", math.inf),
    ("{a:1}", {"a": 1}),  # YAML: {'a:1': None}
    ("a\\,b", "a,b"),  # an escaped comma
    ("@x", "@x"),  # YAML: refused (a reserved indicator)
    ("*x", "*x"),  # YAML: an undefined alias
    ("1_000", 1000),
    ("'it\\'s'", "it's"),
    ("  [ 1 , a b ]", [1, "a b"]),
    ("${x}", "${x}"),
    ("{2: a, true: b}", {2: "a", True: "b"}),
]


@pytest.mark.parametrize(("raw", "expected"), HYDRA_READINGS)
def test_a_value_reads_as_hydra_reads_it(raw: str, expected: Any) -> None:
    assert repr(override_value(f"k={raw}", raw)) == repr(expected)


@pytest.mark.parametrize(
    ("raw", "says"),
    [
        ("0-3,4-7", "Hydra reads '0-3,4-7' as a sweep over 2 values, which only runs with --multirun; for one string, quote it"),
        ("sglang[r]:d4|fsdp[a]:d4", "Hydra's override grammar cannot read the value ('[' at column 7 is not expected there)"),
        ("a#b", "no token starts at column 2 ('#')"),
        ("a=b", "'=' at column 2 is not expected there"),
        ("'a' 'b'", "is not expected there"),
        ("[1,2", "the value ends early"),
        ("choice(1,2)", "choice(...) is a Hydra sweep or cast function, which only Hydra evaluates"),
    ],
)
def test_a_value_hydra_does_not_apply_is_refused_with_what_to_write(raw: str, says: str) -> None:
    with pytest.raises(PlacementConfigError, match="^override ") as refused:
        override_value(f"k={raw}", raw)
    assert says in str(refused.value)


def test_the_refusal_of_a_sweep_offers_the_quoted_form_that_reads_as_one_string() -> None:
    item = "cluster.component_placement.actor=0-3,8-11"
    with pytest.raises(PlacementConfigError) as refused:
        override_value(item, "0-3,8-11")
    offered = "cluster.component_placement.actor='0-3,8-11'"
    assert f'"{offered}" in a shell' in str(refused.value)
    assert override_value(offered, "'0-3,8-11'") == "0-3,8-11"


def test_overrides_apply_hydras_reading_to_the_config() -> None:
    config = apply_overrides({"cluster": {"num_nodes": 1, "note": "x"}}, ["cluster.num_nodes=2", "cluster.note=1:2", "+cluster.flag=yes"])
    assert (config.cluster.num_nodes, config.cluster.note, config.cluster.flag) == (2, "1:2", "yes")


def test_a_value_is_bounded_before_it_is_read() -> None:
    nested = "[" * 40 + "]" * 40
    with limits.override(max_depth=16), pytest.raises(PlacementConfigError, match="max_depth"):
        override_value(f"k={nested}", nested)
    many = "[" + ",".join(["1"] * 200) + "]"
    with limits.override(max_values=100), pytest.raises(PlacementConfigError, match="max_values"):
        override_value(f"k={many}", many)
    with limits.override(max_file_bytes=64), pytest.raises(PlacementConfigError, match="max_file_bytes"):
        override_value("k=" + "a" * 100, "a" * 100)


#: Characters and pieces that matter to Hydra's lexer, drawn into random values.
_ALPHABET = [*"ab1 0._-:,[]{}()'\"\\$=#|@?*%+eEtrufnl\t", "${x}", "true", "null", "inf", "1e3", "\\,", "\\ "]


def test_values_read_as_hydras_own_parser_reads_them() -> None:
    """Differential: seeded random values and the readings above, through Hydra's parser and
    ours: both refuse, both read a sweep, or both give the same value (functions excepted: only
    Hydra evaluates them)."""
    needs_hydra("compares with Hydra's own override parser")
    from hydra.core.override_parser.overrides_parser import OverridesParser

    parser = OverridesParser.create()
    draw = random.Random(20261128)
    values = [raw for raw, _ in HYDRA_READINGS] + ["".join(draw.choice(_ALPHABET) for _ in range(draw.randint(1, 9))) for _ in range(3000)]
    disagreements = []
    for raw in values:
        theirs = _hydra_reading(parser, raw)
        try:
            ours: tuple[Any, ...] = ("value", override_value(f"k={raw}", raw))
        except PlacementConfigError as refused:
            ours = ("sweep",) if "as a sweep" in str(refused) else ("refused",)
        if theirs[0] == "value" and ours == ("refused",) and "(" in raw:
            continue
        if repr(theirs) != repr(ours):
            disagreements.append((raw, theirs, ours))
    assert not disagreements, disagreements[:10]


def _hydra_reading(parser: Any, raw: str) -> tuple[Any, ...]:
    try:
        parsed = parser.parse_override(f"k={raw}")
    except Exception:  # Hydra refuses with its HydraException family
        return ("refused",)
    return ("sweep",) if parsed.is_sweep_override() else ("value", parsed.value())
