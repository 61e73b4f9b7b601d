"""The component_placement grammar: what parses, and every rule with its message."""

import pytest
from helpers import config

from solver_placement import PlacementError, PlacementSpec, solve
from solver_placement._errors import PlacementConfigError, PlacementSyntaxError
from solver_placement._specification.grammar import RankSegments, Segment


def parse(placement: dict, nodes: int = 2, gpus: int | list[int] = 8, **cluster: object) -> PlacementSpec:
    return PlacementSpec.from_config(config(nodes, gpus, placement, **cluster))


def segments_of(placement: dict) -> tuple[Segment, ...]:
    """The segments of component ``a``, which must be a rank string."""
    form = parse(placement).components["a"].form
    assert isinstance(form, RankSegments)
    return form.segments


def test_comma_key_shares_one_rule() -> None:
    spec = parse({" actor , rollout ": "0-7", "reward": "8-15"})
    assert spec.names == ["actor", "rollout", "reward"]
    assert spec.components["rollout"].shares_rule_with == "actor" and spec.components["actor"].shares_rule_with is None


def test_segments_keep_implicit_and_explicit_process_ranks() -> None:
    segments = segments_of({"a": "0-1:0-3,3-5,7-10:7-14"})
    assert [(s.text, str(s.resources), s.processes and str(s.processes)) for s in segments] == [
        ("0-1:0-3", "0-1", "0-3"), ("3-5", "3-5", None), ("7-10:7-14", "7-10", "7-14")]


def test_node_group_forms() -> None:
    groups = [{"label": "a800", "node_ranks": 0}, {"label": "4090", "node_ranks": 1}]
    for value in ("a800,4090", "a800, 4090", ["a800", "4090"]):
        spec = parse({"a": {"node_group": value, "placement": "0-15"}}, node_groups=groups)
        assert spec.components["a"].node_groups == ("a800", "4090")
    assert parse({"a": {"node_group": 4090, "placement": "0"}}, node_groups=groups).components["a"].node_groups == ("4090",)


def test_short_form_int_and_all_any_case() -> None:
    assert parse({"a": 3}).components["a"].text == "3"
    assert segments_of({"a": "ALL"})[0].resources is None


@pytest.mark.parametrize(
    ("placement", "error", "message"),
    [
        ("0-1:0-4", PlacementSyntaxError, 'a: segment "0-1:0-4" has 2 resources and 5 processes; one must be a multiple of the other '
         "(The number of process ranks 5 must be divisible by the number of resource ranks 2"),
        ("0-3:1-4", PlacementSyntaxError, 'a: segment "0-3:1-4": Process ranks must be in ascending order and continuous from 0, and unique; expected this segment to start at process 0'),
        ("0-3:0-3,4-7:5-8", PlacementSyntaxError, 'segment "4-7:5-8": Process ranks must be in ascending order and continuous from 0, and unique; expected this segment to start at process 4'),
        ("0-3:0-3,4-7:2-5", PlacementSyntaxError, "start at process 4"),
        ("4-7,0-3", PlacementSyntaxError, 'a: segment "0-3": Resource ranks must be in ascending order'),
        ("0-3,2-5", PlacementSyntaxError, 'a: segment "2-5": Resource ranks must be unique'),
        ("0-3:all", PlacementSyntaxError, 'a: segment "0-3:all": process ranks cannot be "all"'),
        ("0-3:0-1:2", PlacementSyntaxError, 'a: segment "0-3:0-1:2" has more than one ":"; expected resource_ranks:process_ranks (Invalid rank map string)'),
        (" , ,", PlacementSyntaxError, 'a: placement ", ," names no ranks, only commas'),
        ("all,0-3", PlacementSyntaxError, 'segment "all" selects every resource'),
        ("0-x", PlacementSyntaxError, 'a: segment "0-x": resource ranks "0-x" is not a rank range'),
        ("0-16", PlacementConfigError, 'a: segment "0-16" on node group \'cluster\' (16 GPUs): resource ranks "0-16" is out of range; valid ranks are 0-15'),
        ("0-999999999", PlacementConfigError, "exceeds the largest supported rank"),
        ("all:0-4", PlacementSyntaxError, 'a: segment "all:0-4" has 16 resources and 5 processes'),
    ],
)
def test_grammar_rules(placement: str, error: type, message: str) -> None:
    """Each rule also raises what RLinf raises for it: an AssertionError (ValueError for syntax)."""
    with pytest.raises(error) as caught:
        parse({"a": placement})
    assert message in str(caught.value)
    assert isinstance(caught.value, AssertionError) and isinstance(caught.value, ValueError)


def test_stray_commas_and_blanks_are_accepted_like_rlinf() -> None:
    """RLinf skips empty segments and strips blanks; the meaning is plain, so they are accepted."""
    for text in ("0-3,,4-7", "0-3,4-7,", ",0-3, 4-7", " 0 - 3 , 4-7 "):
        segments = segments_of({"a": text})
        assert [(str(s.resources), s.processes) for s in segments] == [("0-3", None), ("4-7", None)]


@pytest.mark.parametrize(
    ("placement", "message"),
    [
        ({"a": {"node_group": "gpu", "placement": "0"}}, "a: node group 'gpu' not found"),
        ({"a": {"placement": "0", "processes": 2}}, "not both"),
        ({"a": {"node_group": "cluster"}}, "needs a 'placement' rank string or 'processes'"),
        ({"a": {"placement": "0", "colocate_with": "b"}}, "did you mean 'collocate_with'"),
        ({"a": {"placement": None}}, "placement must be a rank string"),
        ({"a": [0, 1]}, "placement must be a rank string"),
        ({"a": "0", "b": {"placement": "1", "exclusive_with": ["c"]}}, "'b': refers to unknown component 'c'"),
        ({"a": {"placement": "0", "collocate_with": "a"}}, "cannot refer to itself"),
        ({"a": "0", "a,b": "1"}, "component 'a' has a placement under two keys"),
        ({"a": "0", "a,b": "1"}, "(Component a has multiple placements defined)"),
        ({"a,": "0"}, "empty component name"),
        ({"a": {"processes": 2, "stride": "auto"}}, "stride: auto needs collocate_with"),
        ({"a": {"processes": 0}}, "processes must be positive"),
        ({"a": {"placement": [[0, 0]]}}, "lists a rank twice"),
        ({"a": {"placement": [[]]}}, "non-empty list"),
        ({"a": {"placement": [[0], [99]]}}, "a: process 1 ranks [99] are out of range"),
        ({"a": {"placement": "0", "unit": "gpu"}}, "unit must be 'node'"),
        ({"a": {"node_group": "node", "placement": "0-1:0"}}, 'a: segment "0-1:0" (process 0) must run on one node'),
        ({"a": {"node_group": "a800,node", "placement": "0"}}, "mixes groups whose resources are nodes"),
        ({}, "empty"),
    ],
)
def test_component_rules(placement: dict, message: str) -> None:
    """Parsing raises most of these; the one-node rule is proven by solve() before any search."""
    with pytest.raises(PlacementError) as caught:
        solve(parse(placement, node_groups=[{"label": "a800", "node_ranks": 0}]))
    assert message in str(caught.value)


def test_config_must_be_a_mapping(tmp_path) -> None:
    path = tmp_path / "list.yaml"
    path.write_text("- 1\n- 2\n")
    with pytest.raises(PlacementConfigError, match="must hold a mapping"):
        PlacementSpec.from_config(str(path))
    path.write_text("cluster: [unclosed\n")
    with pytest.raises(PlacementConfigError, match="not valid YAML"):
        PlacementSpec.from_config(str(path))
    with pytest.raises(PlacementConfigError, match="component_placement is missing"):
        PlacementSpec.from_config({"cluster": {"num_nodes": 1}})
