"""Bounded loading (issue 14) and "did you mean" (issue 12): each named limit refuses before the
work it bounds, with a message naming the limit; one input contract; one close-match hint."""

from __future__ import annotations

import gc
from pathlib import Path
from typing import Any

import pytest
import yaml
from helpers import config
from omegaconf import OmegaConf

from solver_placement import PlacementConfigError, solve
from solver_placement import limits as limits_module
from solver_placement._config import YamlText, load_config, load_yaml
from solver_placement._config_copy import Unresolved
from solver_placement._limits import Limits, current, override
from solver_placement._limits import yaml_scan as limits_yaml_scan
from solver_placement._limits.host_memory import memory_budget

HEAD = "cluster:\n  num_nodes: 1\n  num_gpus_per_node: 4\n  component_placement:\n    actor: 0-3\n"


def test_yaml_text_is_passed_as_yaml_text_and_a_str_is_always_a_path() -> None:
    assert [p.local_hardware_ranks for p in solve(YamlText(HEAD)).placements("actor")] == [[0], [1], [2], [3]]
    with pytest.raises(PlacementConfigError, match=r"does not exist; YAML text is passed as YamlText\(text\)"):
        solve(HEAD)
    with pytest.raises(PlacementConfigError, match="is not a usable path"):
        solve(HEAD * 1000)  # a name too long for the OS: an OSError before


@pytest.mark.parametrize(("text", "limit"), [
    pytest.param(HEAD + "x: " + "[" * 100_000 + "]" * 100_000, "max_depth=64", id="flow-list-100000-deep"),
    pytest.param(HEAD + "x: " + "{a: " * 65 + "1" + "}" * 65, "max_depth=64", id="flow-map-65-deep"),
    pytest.param("s: &s " + "a" * 500_000 + "\n" + HEAD + "    x: [" + ", ".join(["*s"] * 20) + "]", "max_text_chars", id="string-alias-bomb"),
    pytest.param("l0: &l0 [1, 1, 1, 1, 1, 1, 1, 1, 1, 1]\n" + "\n".join(
        f"l{i}: &l{i} [{', '.join([f'*l{i - 1}'] * 10)}]" for i in range(1, 9)) + "\n" + HEAD, "max_values", id="billion-laughs"),
    pytest.param(HEAD + "#" * (2 << 20), "max_file_bytes", id="oversized-file"),
    pytest.param(HEAD.replace("num_nodes: 1", "num_nodes: '" + "${oc.select:" * 40 + "x" + "}" * 40 + "'"), "max_interpolation_depth", id="nested-interpolation"),
])
def test_yaml_limits_name_themselves(tmp_path: Path, text: str, limit: str) -> None:
    path = tmp_path / "hostile.yaml"
    path.write_text(text)
    with pytest.raises(PlacementConfigError, match=limit) as info:
        solve(path)
    assert "solver_placement.limits.configure(" in str(info.value) or "max_file_bytes" in limit


@pytest.mark.parametrize("data", [b"\xff\xfe\x00\x00garbage", b"\x00" * 10, b"cluster: \xc3\x28", b"42", b"- 1\n"])
def test_binary_and_non_mapping_files_are_placement_errors(tmp_path: Path, data: bytes) -> None:
    path = tmp_path / "bad.yaml"
    path.write_bytes(data)
    with pytest.raises(PlacementConfigError):
        solve(path)


@pytest.mark.parametrize("where", ["num_nodes", "solver.time_limit_s"])
def test_a_5000_digit_int_names_its_key_and_the_limit(tmp_path: Path, where: str) -> None:
    path = tmp_path / "big.yaml"
    text = HEAD + "  solver:\n    time_limit_s: 10\n"
    path.write_text(text.replace(f"{where.split('.')[-1]}: 1" + ("0" if "." in where else ""), f"{where.split('.')[-1]}: " + "9" * 5000))
    with pytest.raises(PlacementConfigError, match=rf"cluster\.{where} is an integer of 5000 digits, above Python's limit of 4300"):
        solve(path)


def test_a_huge_int_from_python_is_shown_by_its_size_not_a_value_error() -> None:
    section = config(1, 4, {"actor": "0-3"})
    section["cluster"]["solver"] = {"time_limit_s": 10**5000}
    with pytest.raises(PlacementConfigError, match=r"time_limit_s must be a number of seconds in \(0, 86400.0\], not <an integer of about 5001 digits>"):
        solve(section)


class _ShallowParser(yaml.SafeLoader):
    """PyYAML's parser with a nesting limit of 10 levels of its own, as libyaml builds have one
    (1,000 in PyYAML 6.0.4): the depth limit must be reported as ours whatever the parser's is."""

    def parse_node(self, block: bool = False, indentless_sequence: bool = False) -> yaml.Event:
        if len(self.states) > 10:
            raise yaml.parser.ParserError(None, None, "too deep for this parser", self.peek_token().start_mark)
        return super().parse_node(block, indentless_sequence)


DEEP = {
    "flow": HEAD + "x: " + "[" * 2_000 + "]" * 2_000,
    "flow-map": HEAD + "x: " + "{a: " * 2_000 + "1" + "}" * 2_000,
    # past libyaml's 1,000 levels, within max_file_bytes
    "block-map": HEAD + "x:\n" + "".join(" " * level + "a:\n" for level in range(1, 1_100)) + " " * 1_100 + "b: 1\n",
    "block-list": HEAD + "x:\n" + "".join(" " * level + "-\n" for level in range(1, 1_100)) + " " * 1_100 + "1\n",
}


@pytest.mark.parametrize("parsers", [
    pytest.param(limits_yaml_scan.PARSERS, id="installed"),
    pytest.param((yaml.SafeLoader,), id="pure-python"),
    pytest.param((_ShallowParser, yaml.SafeLoader), id="parser-with-its-own-limit"),
])
@pytest.mark.parametrize("kind", DEEP)
def test_depth_is_refused_as_max_depth_whatever_the_parser(monkeypatch: pytest.MonkeyPatch, parsers: tuple[type, ...], kind: str) -> None:
    monkeypatch.setattr(limits_yaml_scan, "PARSERS", parsers)
    with pytest.raises(PlacementConfigError, match=r"the nesting at x[.a]* is more than 64 levels, above the limit max_depth=64"):
        load_yaml(YamlText(DEEP[kind]), "deep")
    with override(max_depth=8), pytest.raises(PlacementConfigError, match="max_depth=8"):
        load_yaml(YamlText(HEAD + "x: " + "[" * 9 + "]" * 9), "deep")
    assert load_yaml(YamlText(HEAD + "x: " + "[" * 63 + "]" * 63), "deep")["x"] is not None  # 64 levels with the top mapping


def test_a_syntax_error_within_the_limits_is_the_loaders_message() -> None:
    with pytest.raises(PlacementConfigError, match=r"is not valid YAML: .*flow"):
        load_yaml(YamlText(HEAD + "x: [1, 2"), "broken")


def _doubling(steps: int) -> dict[str, Any]:
    return {"a0": "xxxxxxxx", **{f"a{i}": f"${{a{i - 1}}}${{a{i - 1}}}" for i in range(1, steps)}}


def test_an_interpolation_bomb_is_harmless_unread_and_named_when_read() -> None:
    plain = load_config(OmegaConf.create({**_doubling(40), **config(1, 4, {"actor": "0-3"})}))
    assert isinstance(plain["a39"], Unresolved) and "max_interpolation" in plain["a39"].reason
    assert plain["a2"] == "x" * 32  # small ones still resolve
    with pytest.raises(PlacementConfigError, match="max_interpolation"):
        solve(OmegaConf.create({**_doubling(40), **config(1, 4, {"actor": "${a39}"})}))


def test_interpolation_cycles_and_chains_are_refused_not_recursed() -> None:
    chain = {"p0": 1, **{f"p{i}": f"${{p{i - 1}}}" for i in range(1, 200)}}
    with pytest.raises(PlacementConfigError, match="max_interpolation_depth"):
        solve(OmegaConf.create({**chain, **config("${p199}", 4, {"actor": "0"})}))  # type: ignore[arg-type]
    with pytest.raises(PlacementConfigError, match="cycle"):
        solve(OmegaConf.create({"a": "${b}", "b": "${a}", **config("${a}", 4, {"actor": "0"})}))  # type: ignore[arg-type]


class _Unprintable(str):
    def __str__(self) -> str:
        raise RuntimeError("str")

    def __repr__(self) -> str:
        raise RuntimeError("repr")


#: An odd Python value, and what it must give: the layout of ``actor`` (local GPU ids per process)
#: or the error naming the key and the rule.
ODD_VALUES = [
    pytest.param(config(1, 4, {"actor": [[[0]]] * 2}) | {"x": None}, r"component 'actor': placement must be a rank string", id="plain"),
    pytest.param({"cluster": {"num_nodes": 1, "component_placement": {_Unprintable("actor"): "0"}}}, [[0]],
                 id="str-subclass-key"),
    pytest.param({"cluster": {"num_nodes": 1, "component_placement": {(1, 2): "0"}}}, "a key must be a string or a number, not a tuple",
                 id="tuple-key"),
    pytest.param({"cluster": {"num_nodes": 1, "component_placement": {10**5000: "0"}}},
                 r"key <an integer of about 5001 digits> is not a name", id="huge-int-key"),
    pytest.param(config(1, 4, {"actor": _Unprintable("0-3")}), [[0], [1], [2], [3]], id="str-subclass-value"),
    pytest.param(config(1, 4, {"actor": "0"}, accelerator_type=10**5000),
                 r"cluster.accelerator_type\[0\] must be a string, not <an integer of about 5001 digits>", id="huge-int-name"),
    pytest.param(config(1, 4, {"actor": {"processes": 1, "memory_gb": float("nan")}}, gpu_memory_gb=80),
                 "component 'actor': memory_gb must be a non-negative number of GB, not nan", id="nan-memory"),
]  # fmt: skip


@pytest.mark.parametrize(("source", "expected"), ODD_VALUES)
def test_odd_python_values_are_placed_or_refused_by_name(source: dict[str, Any], expected: str | list[list[int]]) -> None:
    if isinstance(expected, str):
        with pytest.raises(PlacementConfigError, match=expected):
            solve(source)
    else:
        assert [p.local_hardware_ranks for p in solve(source).placements("actor")] == expected


def test_a_mapping_that_holds_itself_is_refused() -> None:
    source = config(1, 4, {"actor": "0"})
    source["cluster"]["profiling"] = source
    with pytest.raises(PlacementConfigError, match="contains itself"):
        solve(source)


@pytest.mark.parametrize(("source", "limit"), [
    pytest.param(config(10_000_000, 8, {"a": "0"}), "max_nodes", id="nodes"),
    pytest.param(config(1000, 1_000_000, {"a": "0"}), "max_items_per_node", id="gpus-per-node"),
    pytest.param(config(1, 8, {"a": "0:0-1999999"}), "max_processes", id="processes"),
    pytest.param(config(1, 8, {"a": "0," * 60_000}), "max_rank_text", id="rank-text"),
    pytest.param(config(1, 8, {"a": {"placement": [[0]] * 1_000_001}}), "max_processes", id="explicit"),
])
def test_size_limits_name_themselves(source: dict[str, Any], limit: str) -> None:
    with pytest.raises(PlacementConfigError, match=limit):
        solve(source)


def test_the_memory_budget_names_the_component_and_what_shrinks_it() -> None:
    with override(memory_budget_bytes=1 << 20):
        assert memory_budget() == 1 << 20
        with pytest.raises(PlacementConfigError, match=r"component 'big'.*narrow its 'resources' window.*memory_budget_bytes"):
            solve(config(8, 8, {"big": {"processes": 64}}))
    assert current() == Limits() and memory_budget() > 1 << 20


def test_shared_lists_are_counted_as_copies_and_refused_before_they_are_copied() -> None:
    """The Python counterpart of an alias bomb: 40 kB of lists shared by reference copy as 200 M
    values (found by the mutated-config suite: 24 s and 1.8 GB before the config was refused)."""
    ranks = [0] * 10_000
    groups = [{"label": f"g{i}", "node_ranks": ranks} for i in range(20_000)]
    with pytest.raises(PlacementConfigError, match="max_copied_values"):
        solve(config(1, 4, {"actor": "0"}, node_groups=groups))
    with pytest.raises(PlacementConfigError, match="max_copied_values"):
        solve(config(1, 4, {"actor": {"placement": [ranks] * 1_000}}))
    with override(max_copied_values=10):
        with pytest.raises(PlacementConfigError, match="max_copied_values=10"):
            load_config({"x": [[1, 2, 3]] * 3, "y": 1})


def test_the_fast_copies_keep_exact_types_and_copy_everything() -> None:
    """Flat lists and leaf mappings are copied at C speed: still new containers, plain lists."""
    inner = {"rack": "r0", "gpus": 8}
    source = {"labels": [inner], "ranks": [(0, 1), [2], 3], "mixed": [[0], {"a": 1}], "odd": {1: "int key"}}
    plain = load_config(source)
    assert plain == {"labels": [inner], "ranks": [[0, 1], [2], 3], "mixed": [[0], {"a": 1}], "odd": {1: "int key"}}
    assert plain["labels"][0] is not inner and plain["ranks"] is not source["ranks"]
    assert gc.isenabled()  # the collector paused during the copy is running again


def test_lists_of_flat_mappings_are_copied_counted_and_refused_where_they_pass_the_limit() -> None:
    """A list of flat mappings (robots' hardware configs) is copied as one new mapping per place,
    a mapping shared by reference counted at each; past ``max_copied_values`` the copy is refused
    naming the first mapping over it."""
    robot = {"node_rank": 0, "robot_ip": "10.0.0.1"}
    plain = load_config({"hw": [robot, robot, None]})
    assert plain == {"hw": [robot, robot, None]} and plain["hw"][0] is not robot and plain["hw"][0] is not plain["hw"][1]
    with override(max_copied_values=10):  # the section, the list and three mappings of two: 1 + 3 + 6 values
        assert load_config({"hw": [robot] * 3}) == {"hw": [robot] * 3}
    with override(max_copied_values=9), pytest.raises(PlacementConfigError, match=r"hw\[2\]: .*max_copied_values=9"):
        load_config({"hw": [robot] * 3})


def test_a_list_of_mappings_holding_more_than_scalars_is_copied_one_by_one() -> None:
    """The C-speed copy takes mappings of text to scalars only; a value that is a list (or a key
    that is not text) sends the list to the copy one by one, which copies and counts inner values."""
    nested = {"node_rank": 0, "ports": [1, 2]}
    plain = load_config({"hw": [nested, {"node_rank": 1}], "ids": [{1: "a"}]})
    assert plain == {"hw": [nested, {"node_rank": 1}], "ids": [{1: "a"}]} and plain["hw"][0]["ports"] is not nested["ports"]
    with override(max_copied_values=6), pytest.raises(PlacementConfigError, match=r"hw\[0\]\.ports: .*max_copied_values=6"):
        load_config({"hw": [nested, {"node_rank": 1}]})  # the section, the list, the mapping, then its list's two values


def test_hardware_configs_beyond_the_items_of_a_node_are_refused_before_they_are_read() -> None:
    configs = [{"node_rank": 0, "id": i} for i in range(5_000)]
    group = {"label": "arms", "node_ranks": 0, "hardware": {"type": "robot", "configs": configs}}
    with pytest.raises(PlacementConfigError, match=r"at least 5000 \(5000 configs on 1 node\), above the limit max_items_per_node=4096"):
        solve(config(1, 4, {"actor": "0"}, node_groups=[group]))


def test_limits_are_checked_when_changed() -> None:
    with pytest.raises(PlacementConfigError, match="unknown limit 'max_nodez'; known limits"):
        limits_module.configure(max_nodez=1)
    with pytest.raises(PlacementConfigError, match="positive integer"):
        limits_module.configure(max_nodes=0)
    with override(max_nodes=2):
        with pytest.raises(PlacementConfigError, match="max_nodes=2"):
            solve(config(3, 1, {"a": "0"}))
    assert current().max_nodes == Limits().max_nodes


# ------------------------------------------------------------------------------ did you mean
@pytest.mark.parametrize(("placement", "hint"), [
    pytest.param({"actor": "0-1", "rollout": {"processes": 1, "collocate_with": "acter"}}, "did you mean 'actor'?", id="collocate_with"),
    pytest.param({"actor": "0-1", "rollout": {"processes": 1, "exclusive_with": ["rolout", "actr"]}}, "did you mean 'rollout'?", id="exclusive_with"),
    pytest.param({"actor": {"placement": "0-1", "tensor_paralel_size": 2}}, "did you mean 'tensor_parallel_size'?", id="key"),
])
def test_unknown_names_suggest_the_closest(placement: dict[str, Any], hint: str) -> None:
    with pytest.raises(PlacementConfigError, match=hint):
        solve(config(1, 4, placement))


def test_solution_and_plot_suggest_the_closest_component() -> None:
    solution = solve(config(1, 4, {"actor": "0-1", "rollout": "2-3"}))
    with pytest.raises(PlacementConfigError, match="unknown component 'acter'; did you mean 'actor'"):
        solution.placements("acter")
    with pytest.raises(PlacementConfigError, match="known components: actor, rollout"):
        solution.placements("zzz")


def test_exclusive_with_all_means_every_component_of_another_key() -> None:
    solution = solve(config(1, 4, {"actor": {"processes": 2}, "ref,critic": {"processes": 1, "exclusive_with": "all"}}))
    assert solution.spec.components["ref"].constraints.exclusive_with == ("actor",)
    actor = {r for p in solution.placements("actor") for r in p.hardware_ranks}
    assert not actor & {r for p in solution.placements("ref") for r in p.hardware_ranks}
    named_all = solve(config(1, 4, {"all": "0", "b": {"processes": 1, "exclusive_with": "all"}}))
    assert named_all.spec.components["b"].constraints.exclusive_with == ("all",)


def test_yaml_dump_of_the_contract_round_trips() -> None:
    """YamlText and a path give the same placements."""
    assert solve(YamlText(yaml.safe_dump(config(1, 4, {"actor": "0-3"})))).placements_by_component() == solve(
        config(1, 4, {"actor": "0-3"})).placements_by_component()
