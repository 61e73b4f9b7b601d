"""Hostile and oversized configs, generated deterministically, by class.

A case is ``(klass, name, make)``: ``make()`` returns what is handed to ``solve`` (a Path to a
file it wrote, a :class:`YamlText`, a mapping or a DictConfig). Cases are built inside the
worker process that runs them, so objects that cannot be pickled (a dict that holds itself, a
key whose ``str()`` raises) need no transport. ``mutated(i)`` is the ``i``-th corrupted valid
config (drop, duplicate, retype, inflate), seeded by ``i``.
"""

from __future__ import annotations

import copy
import functools
import itertools
import random
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import yaml
from machine_surfaces import machine_surfaces
from omegaconf import OmegaConf
from prediction_surfaces import prediction_surfaces
from surfaces import newest_surfaces

from solver_placement import YamlText

Case = tuple[str, str, Callable[[], Any]]
ROOT = Path(__file__).resolve().parents[2]
HEAD = "cluster:\n  num_nodes: 2\n  num_gpus_per_node: 4\n  component_placement:\n    actor: 0-7\n"


def base(**cluster: Any) -> dict[str, Any]:
    """A small valid config with ``cluster`` keys replaced."""
    section = {"num_nodes": 2, "num_gpus_per_node": 4, "component_placement": {"actor": "0-7"}}
    return {"cluster": {**section, **cluster}}


def placed(value: Any) -> dict[str, Any]:
    return base(component_placement={"actor": value})


def as_file(data: bytes | str) -> Callable[[], Path]:
    def make() -> Path:
        handle = tempfile.NamedTemporaryFile("wb", suffix=".yaml", delete=False)
        handle.write(data.encode("utf-8") if isinstance(data, str) else data)
        handle.close()
        return Path(handle.name)

    return make


def nested_list(depth: int, leaf: Any = 0) -> list[Any]:
    value: Any = leaf
    for _ in range(depth):
        value = [value]
    return value


def nested_dict(depth: int) -> dict[str, Any]:
    value: Any = 0
    for _ in range(depth):
        value = {"a": value}
    return value


class Evil:
    """An object every conversion of which raises."""

    def __str__(self) -> str:
        raise RuntimeError("str")

    def __repr__(self) -> str:
        raise RuntimeError("repr")

    def __format__(self, spec: str) -> str:
        raise RuntimeError("format")


class EvilStr(str):
    def __str__(self) -> str:
        raise RuntimeError("str")

    def __repr__(self) -> str:
        raise RuntimeError("repr")

    def strip(self, chars: Any = None) -> str:
        raise RuntimeError("strip")


class EvilInt(int):
    def __str__(self) -> str:
        raise RuntimeError("str")

    def __repr__(self) -> str:
        raise RuntimeError("repr")


class EvilHash:
    """Hashes like ``accelerator_type`` and raises when compared, so a lookup of that key raises."""

    def __hash__(self) -> int:
        return hash("accelerator_type")

    def __eq__(self, other: object) -> bool:
        raise RuntimeError("eq")


def self_holding_dict() -> dict[str, Any]:
    config = base()
    config["cluster"]["component_placement"]["actor"] = {"placement": "0-7", "me": config}
    return config


def self_holding_list() -> dict[str, Any]:
    ranks: list[Any] = [0]
    ranks.append(ranks)
    return base(node_groups=[{"label": "g", "node_ranks": ranks}])


def deep_nesting() -> Iterator[Case]:
    for depth in (65, 100, 1_000, 10_000, 100_000, 300_000):
        yield "deep nesting", f"flow list {depth}", as_file(HEAD + "    x: " + "[" * depth + "]" * depth + "\n")
        yield "deep nesting", f"flow map {depth}", as_file(HEAD + "junk: " + "{a: " * depth + "1" + "}" * depth + "\n")
        yield "deep nesting", f"python list {depth}", lambda d=depth: placed(nested_list(d))
        yield "deep nesting", f"python dict {depth}", lambda d=depth: base(profiling=nested_dict(d))
        yield "deep nesting", f"dictconfig-free ranks {depth}", lambda d=depth: base(node_groups=[{"label": "g", "node_ranks": nested_list(d)}])
    for depth in (65, 200, 1_000):
        block = "".join("  " * i + "- \n" for i in range(depth))
        yield "deep nesting", f"block list {depth}", as_file(HEAD + "junk:\n" + block)
        yield "deep nesting", f"block map {depth}", as_file(HEAD + "junk:\n" + "".join("  " * (i + 1) + "a:\n" for i in range(depth)))
    for depth in (8, 20, 100, 1_000, 5_000):
        nested = "${oc.select:" * depth + "cluster.num_nodes" + ",1}" * depth
        yield "deep nesting", f"nested interpolation {depth}", as_file(HEAD.replace("num_nodes: 2", f"num_nodes: '{nested}'"))
        if depth <= 100:  # deeper, OmegaConf itself cannot create it
            yield "deep nesting", f"nested interpolation dictconfig {depth}", lambda n=nested: OmegaConf.create(base(num_nodes=n))
    yield "deep nesting", "dict holding itself", self_holding_dict
    yield "deep nesting", "list holding itself", self_holding_list


def alias_bombs() -> Iterator[Case]:
    for levels, fanout in ((9, 10), (20, 4), (30, 2), (6, 40), (4, 100)):
        lines = [f"l0: &l0 [{', '.join(['x'] * fanout)}]"]
        lines += [f"l{i}: &l{i} [{', '.join([f'*l{i - 1}'] * fanout)}]" for i in range(1, levels)]
        yield "alias bombs", f"laughs {levels}x{fanout}", as_file("\n".join(lines) + f"\n{HEAD}    junk: {{placement: *l{levels - 1}}}\n")
    for size, copies in ((900_000, 990), (100_000, 100), (10_000, 1_000), (1_000_000, 2)):
        text = f"s: &s {'a' * size}\n{HEAD}    junk: [{', '.join(['*s'] * copies)}]\n"
        yield "alias bombs", f"string {size}x{copies}", as_file(text)
    for levels in (10, 30):
        lines = ["m0: &m0 {a: 1, b: 2}"] + [f"m{i}: &m{i} {{x: *m{i - 1}, y: *m{i - 1}}}" for i in range(1, levels)]
        yield "alias bombs", f"mapping laughs {levels}", as_file("\n".join(lines) + "\n" + HEAD)
        merges = ["k0: &k0 {a: 1}"] + [f"k{i}: &k{i} {{<<: *k{i - 1}, b{i}: *k{i - 1}}}" for i in range(1, levels)]
        yield "alias bombs", f"merge keys {levels}", as_file("\n".join(merges) + "\n" + HEAD)
    yield "alias bombs", "undefined alias", as_file(HEAD + "    junk: *nowhere\n")
    yield "alias bombs", "alias as top level", as_file("*a\n")
    yield "alias bombs", "recursive anchor", as_file("a: &a [*a]\n" + HEAD)


def _doubling(steps: int, seed: str = "xxxxxxxxxxxxxxxx") -> dict[str, Any]:
    values: dict[str, Any] = {"a0": seed}
    for i in range(1, steps):
        values[f"a{i}"] = f"${{a{i - 1}}}${{a{i - 1}}}"
    return values


def interpolation_bombs() -> Iterator[Case]:
    for steps in (10, 20, 27, 40, 64):
        yield "interpolation bombs", f"doubling {steps} unread", as_file(yaml.safe_dump(_doubling(steps)) + HEAD)
        yield "interpolation bombs", f"doubling {steps} read", as_file(yaml.safe_dump(_doubling(steps)) + HEAD.replace("0-7", f"${{a{steps - 1}}}"))
        yield "interpolation bombs", f"doubling {steps} dictconfig", lambda s=steps: OmegaConf.create({**_doubling(s), **placed(f"${{a{s - 1}}}")})
        empty = yaml.safe_dump(_doubling(steps, ""))
        yield "interpolation bombs", f"empty doubling {steps}", as_file(empty + HEAD.replace("num_nodes: 2", f"num_nodes: ${{a{steps - 1}}}"))
    for length in (10, 40, 100, 1_000, 10_000):
        chain = {"c0": "2", **{f"c{i}": f"${{oc.select:c{i - 1},${{c{i - 1}}}}}" for i in range(1, length)}}
        yield "interpolation bombs", f"oc.select chain {length}", as_file(yaml.safe_dump(chain) + HEAD.replace("num_nodes: 2", f"num_nodes: ${{c{length - 1}}}"))
        plain = {"p0": 2, **{f"p{i}": f"${{p{i - 1}}}" for i in range(1, length)}}
        yield "interpolation bombs", f"plain chain {length}", as_file(yaml.safe_dump(plain) + HEAD.replace("num_nodes: 2", f"num_nodes: ${{p{length - 1}}}"))
    yield "interpolation bombs", "cycle", as_file("a: ${b}\nb: ${a}\n" + HEAD.replace("num_nodes: 2", "num_nodes: ${a}"))
    yield "interpolation bombs", "self reference", as_file(HEAD.replace("num_nodes: 2", "num_nodes: ${cluster.num_nodes}"))
    yield "interpolation bombs", "container holds itself", as_file(HEAD + "    junk: ${cluster}\n")
    yield "interpolation bombs", "relative self", as_file(HEAD + "    junk: ${..component_placement}\n")
    yield "interpolation bombs", "dynamic key", as_file("k: a\na: 2\n" + HEAD.replace("num_nodes: 2", "num_nodes: ${${k}}"))
    yield "interpolation bombs", "unknown resolver", as_file(HEAD.replace("num_nodes: 2", "num_nodes: ${nope:1}"))
    yield "interpolation bombs", "oc.decode bomb", as_file(HEAD.replace("num_nodes: 2", "num_nodes: \"${oc.decode:'[[[[[[[[1]]]]]]]]'}\""))
    yield "interpolation bombs", "oc.env", as_file(HEAD.replace("num_nodes: 2", "num_nodes: ${oc.env:PATH}"))
    yield "interpolation bombs", "missing value", as_file(HEAD.replace("num_nodes: 2", "num_nodes: ???"))
    yield "interpolation bombs", "escaped", as_file(HEAD.replace("0-7", "\\${x}"))
    yield "interpolation bombs", "unclosed", as_file(HEAD.replace("0-7", "${cluster.num_nodes"))
    wide = {f"w{i}": "${cluster.component_placement}" for i in range(5_000)}
    yield "interpolation bombs", "wide references", as_file(yaml.safe_dump(wide) + HEAD)


HUGE = 10**5000


def _label(value: Any) -> str:
    """A case name for a number (a 5,000-digit int cannot be printed)."""
    if isinstance(value, EvilInt):
        return "evil int"
    if isinstance(value, int) and value.bit_length() > 200:
        return f"{'-' if value < 0 else ''}huge"
    return repr(value)


def huge_ints() -> Iterator[Case]:
    digits = "9" * 5_000
    for field in ("num_nodes", "num_gpus_per_node", "gpu_memory_gb"):
        yield "huge ints", f"yaml {field} 5000 digits", as_file(HEAD.replace("num_nodes: 2", f"num_nodes: 2\n  {field}: {digits}") if field != "num_nodes" else HEAD.replace("2", digits, 1))
        for value in (HUGE, -HUGE, 10**30, 2**63, -1, float("inf"), float("nan"), 1e308, EvilInt(3)):
            yield "huge ints", f"dict {field} {_label(value)}", lambda f=field, v=value: base(**{f: v})
    for key in ("processes", "hardware_per_process", "tensor_parallel_size", "pipeline_parallel_size", "max_processes_per_hardware", "stride", "memory_gb"):
        for value in (HUGE, 10**30, -HUGE, float("nan"), float("-inf")):
            yield "huge ints", f"{key} {_label(value)}", lambda k=key, v=value: placed({"processes": 2, k: v} if k != "processes" else {k: v})
    yield "huge ints", "rank 5000 digits", as_file(HEAD.replace("0-7", digits))
    yield "huge ints", "range to 5000 digits", as_file(HEAD.replace("0-7", f"0-{digits}"))
    yield "huge ints", "explicit rank huge", lambda: placed({"placement": [[0, HUGE]]})
    yield "huge ints", "node_ranks huge", lambda: base(node_groups=[{"label": "g", "node_ranks": HUGE}])
    yield "huge ints", "solver seed huge", lambda: base(solver={"seed": HUGE})
    yield "huge ints", "time limit huge", lambda: base(solver={"time_limit_s": HUGE})
    yield "huge ints", "component key huge int", lambda: base(component_placement={HUGE: "0-7"})
    yield "huge ints", "env var huge int", lambda: base(node_groups=[{"label": "g", "node_ranks": 0, "env_configs": [{"node_ranks": 0, "env_vars": {"X": HUGE}}]}])


def huge_strings() -> Iterator[Case]:
    for size in (1_000, 100_000, 1_000_000, 10_000_000):
        yield "huge strings", f"rank commas {size}", lambda n=size: placed("0," * (n // 2))
        yield "huge strings", f"rank digits {size}", lambda n=size: placed("1" * n)
        yield "huge strings", f"segments {size}", lambda n=size: placed(",".join(f"{i}:{i}" for i in range(n // 8)))
        yield "huge strings", f"component name {size}", lambda n=size: base(component_placement={"a" * n: "0-7"})
        yield "huge strings", f"comma key {size}", lambda n=size: base(component_placement={",".join(f"c{i}" for i in range(n // 6)): "0"})
        yield "huge strings", f"label {size}", lambda n=size: base(node_groups=[{"label": "g" * n, "node_ranks": 0}])
        yield "huge strings", f"accelerator type {size}", lambda n=size: base(accelerator_type="x" * n)
    yield "huge strings", "yaml rank string near byte limit", as_file(HEAD.replace("0-7", "0-7" + ",0" * 450_000))
    yield "huge strings", "yaml file over byte limit", as_file(HEAD + "#" * 2_000_000 + "\n")
    yield "huge strings", "yaml long key", as_file(HEAD + "    " + "k" * 900_000 + ": 0\n")
    yield "huge strings", "yaml text str passed as path", lambda: HEAD
    yield "huge strings", "yaml text huge str as path", lambda: HEAD * 10_000
    yield "huge strings", "YamlText over limit", lambda: YamlText(HEAD + "#" * 2_000_000)
    yield "huge strings", "many small values", as_file(HEAD + "junk: [" + ",".join(["1"] * 300_000) + "]\n")
    yield "huge strings", "explicit million processes", lambda: placed({"placement": [[0]] * 1_000_000})
    yield "huge strings", "exclusive_with huge", lambda: placed({"processes": 1, "exclusive_with": ["x"] * 1_000_000})


def encodings() -> Iterator[Case]:
    rng = random.Random(14)
    for size in (1, 16, 1_000, 100_000, 1_000_000, 2_000_000):
        yield "binary and encodings", f"random bytes {size}", as_file(rng.randbytes(size))
    yield "binary and encodings", "nul bytes", as_file(b"\x00" * 1000)
    yield "binary and encodings", "utf-16 with bom", as_file(HEAD.encode("utf-16"))
    yield "binary and encodings", "utf-16-le without bom", as_file(HEAD.encode("utf-16-le"))
    yield "binary and encodings", "utf-32", as_file(HEAD.encode("utf-32"))
    yield "binary and encodings", "latin-1", as_file((HEAD + "    \xe9t\xe9: 0\n").encode("latin-1"))
    yield "binary and encodings", "bad continuation", as_file(HEAD.encode() + b"    a: \xc3\x28\n")
    yield "binary and encodings", "utf-8 bom", as_file(b"\xef\xbb\xbf" + HEAD.encode())
    yield "binary and encodings", "control characters", as_file(HEAD + "    a: \x07\x1b\n")
    yield "binary and encodings", "empty file", as_file(b"")
    yield "binary and encodings", "whitespace only", as_file(b"   \n\n\t\n")
    yield "binary and encodings", "surrogates in text", lambda: YamlText(HEAD + "    a: \ud800\n")
    yield "binary and encodings", "gzip magic", as_file(b"\x1f\x8b\x08\x00" + rng.randbytes(500))
    yield "binary and encodings", "char device", lambda: Path("/dev/zero")
    yield "binary and encodings", "directory", lambda: Path(tempfile.gettempdir())
    yield "binary and encodings", "missing path", lambda: Path("/nonexistent/x.yaml")
    yield "binary and encodings", "nul in path", lambda: "a\x00b.yaml"
    yield "binary and encodings", "path too long", lambda: "x" * 10_000
    yield "binary and encodings", "bytes source", lambda: HEAD.encode()
    yield "binary and encodings", "None source", lambda: None
    yield "binary and encodings", "top-level scalar", as_file("42\n")
    yield "binary and encodings", "top-level list", as_file("- 1\n- 2\n")
    yield "binary and encodings", "top-level string", as_file("hello\n")
    yield "binary and encodings", "YamlText of bytes", lambda: YamlText(HEAD.encode())  # type: ignore[arg-type]


def yaml_tags() -> Iterator[Case]:
    tags = [
        "!!python/object/apply:os.system ['true']", "!!python/name:os.system", "!!python/object/new:dict []",
        "!!binary aGVsbG8=", "!!timestamp 2001-12-14t21:59:43.10-05:00", "!!set {a, b}", "!!omap [a: 1]",
        "!!pairs [a: 1]", "!foo bar", "!!str 5", "!!float nan", "!!float .inf", "!!int 0x1F", "!!bool yes",
        "!!null ''", "!<tag:yaml.org,2002:python/tuple> [1]", "!!map {}", "!!seq []", "!!merge <<", "!local 1",
    ]
    for index, tag in enumerate(tags):
        yield "odd yaml tags", f"num_nodes {index}", as_file(HEAD.replace("num_nodes: 2", f"num_nodes: {tag}"))
        yield "odd yaml tags", f"placement {index}", as_file(HEAD.replace("0-7", tag))
    yield "odd yaml tags", "two documents", as_file(HEAD + "---\n" + HEAD)
    yield "odd yaml tags", "yaml directive", as_file("%YAML 1.1\n---\n" + HEAD)
    yield "odd yaml tags", "tag directive", as_file("%TAG ! tag:evil.com,2000:\n---\n" + HEAD)
    yield "odd yaml tags", "tag on key", as_file(HEAD + "    !!python/name:os.system : 0-1\n")


def odd_keys() -> Iterator[Case]:
    for key in ("1", "1.5", "null", "true", "[a, b]", "{a: 1}", "~", "''", "-1", "0x10", ".inf"):
        yield "non-string keys", f"yaml component key {key}", as_file(HEAD.replace("actor: 0-7", f"{key}: 0-7" if not key.startswith(("[", "{")) else f"? {key}\n    : 0-7"))
        yield "non-string keys", f"yaml cluster key {key}", as_file(HEAD + f"  {key}: 1\n" if not key.startswith(("[", "{")) else HEAD + f"  ? {key}\n  : 1\n")
    yield "non-string keys", "duplicate keys", as_file(HEAD + "    actor: 0-3\n")
    for key in (1, 1.5, None, True, (1, 2), frozenset({1}), b"actor", Evil(), EvilStr("actor"), EvilInt(1), EvilHash()):
        label = type(key).__name__
        yield "non-string keys", f"dict component key {label}", lambda k=key: base(component_placement={k: "0-7"})
        yield "non-string keys", f"dict cluster key {label}", lambda k=key: {"cluster": {**base()["cluster"], k: 1}}
        yield "non-string keys", f"dict top key {label}", lambda k=key: {k: 1, **base()}


def evil_objects() -> Iterator[Case]:
    makers: dict[str, Callable[[], Any]] = {
        "Evil": Evil, "EvilStr": lambda: EvilStr("0-7"), "EvilInt": lambda: EvilInt(2), "EvilHash": EvilHash,
        "object": object, "list of Evil": lambda: [Evil()], "dict of Evil": lambda: {"a": Evil()},
    }
    for name, maker in makers.items():
        yield "evil objects", f"placement {name}", lambda m=maker: placed(m())
        yield "evil objects", f"num_nodes {name}", lambda m=maker: base(num_nodes=m())
        yield "evil objects", f"label {name}", lambda m=maker: base(node_groups=[{"label": m(), "node_ranks": 0}])
        yield "evil objects", f"exclusive_with {name}", lambda m=maker: placed({"processes": 1, "exclusive_with": [m()]})
        yield "evil objects", f"solver option {name}", lambda m=maker: base(solver={"time_limit_s": m()})


def oversized() -> Iterator[Case]:
    yield "oversized specs", "nodes 10^7", lambda: base(num_nodes=10_000_000)
    yield "oversized specs", "nodes 10^6 x gpus list", lambda: base(num_nodes=1_000_000)
    yield "oversized specs", "gpus 10^6 on 1000 nodes", lambda: base(num_nodes=1_000, num_gpus_per_node=1_000_000)
    yield "oversized specs", "2M processes on one GPU", lambda: placed("0:0-1999999")
    yield "oversized specs", "1M processes declarative", lambda: placed({"processes": 1_000_000, "max_processes_per_hardware": 1_000_000})
    yield "oversized specs", "window x processes", lambda: base(num_nodes=10_000, num_gpus_per_node=8, component_placement={"a": {"processes": 40_000, "resources": "0-79999"}})
    yield "oversized specs", "free window x processes", lambda: base(num_nodes=5_000, num_gpus_per_node=8, component_placement={"a": {"processes": 30_000}})
    yield "oversized specs", "many components", lambda: base(num_nodes=100, num_gpus_per_node=8, component_placement={f"c{i}": {"processes": 1} for i in range(20_000)})
    yield "oversized specs", "node labels per node", lambda: base(num_nodes=100_000, num_gpus_per_node=0, node_labels=[{"rack": str(i)} for i in range(100_000)])
    yield "oversized specs", "hardware configs", lambda: base(node_groups=[{"label": "r", "node_ranks": 0, "hardware": {"type": "robot", "configs": [{"node_rank": 0, "id": i} for i in range(100_000)]}}])


def shared_references() -> Iterator[Case]:
    """The Python form of an alias bomb: few objects, each reachable from many places."""
    yield "shared references", "node groups sharing ranks", lambda: base(node_groups=[{"label": "g", "node_ranks": [0] * 10_000}] * 20_000)
    yield "shared references", "placement lists sharing ranks", lambda: placed({"placement": [[0] * 10_000] * 10_000})
    yield "shared references", "one mapping 2M times", lambda: base(profiling=[{"a": [0]}] * 2_000_000)
    yield "shared references", "1M distinct mappings", lambda: base(profiling=[{"a": [i]} for i in range(1_000_000)])
    yield "shared references", "lists of shared lists", lambda: base(profiling=[[[[0] * 20] * 20] * 20] * 400)
    yield "shared references", "labels 4M times", lambda: base(node_labels=[{"rack": "r"}] * 4_000_000)
    yield "shared references", "just under the service's copy limit", lambda: base(profiling=[{"a": [i]} for i in range(80_000)])


def hostile_cases() -> list[Case]:
    """Every hostile case, in a fixed order."""
    makers = (deep_nesting, alias_bombs, interpolation_bombs, huge_ints, huge_strings, encodings, yaml_tags, odd_keys, evil_objects, oversized, shared_references)
    return [case for maker in makers for case in maker()] + newest_surfaces() + machine_surfaces() + prediction_surfaces()


# ------------------------------------------------------------------------------ mutated valid configs
@functools.cache
def valid_bases() -> list[dict[str, Any]]:
    """The valid models of ``models/`` that hold a ``component_placement``, as plain dicts."""
    found = []
    for path in sorted((ROOT / "models").glob("*.yaml")):
        config = yaml.safe_load(path.read_text())
        if isinstance(config, dict) and "component_placement" in (config.get("cluster") or {}):
            found.append(config)
    return found


_RETYPES: tuple[Any, ...] = (None, True, 0, -1, 1.5, float("nan"), "", "all", "0-3", "x" * 1000, [], [1, [2]], {}, {"a": 1}, 10**30, 2**63, [0] * 10_000)


def mutate(config: Any, rng: random.Random, rounds: int) -> Any:
    """``config`` corrupted ``rounds`` times: a value dropped, duplicated, retyped or inflated."""
    for _ in range(rounds):
        containers = list(_containers(config))
        if not containers:
            break
        parent, key = rng.choice(containers)
        action = rng.choice(("drop", "duplicate", "retype", "inflate", "inflate", "retype"))
        value = parent[key]
        if action == "drop":
            del parent[key]
        elif action == "duplicate" and isinstance(parent, dict):
            parent[f"{key},{key}x" if rng.random() < 0.5 else f"{key}_copy"] = _copy(value)
        elif action == "duplicate":
            parent.insert(key, _copy(value))
        elif action == "retype":
            parent[key] = copy.deepcopy(rng.choice(_RETYPES))  # shared, a later round could change it
        else:
            parent[key] = _inflated(value, rng)
    return config


#: Largest string or list an inflation starts from, so repeated rounds stay within the byte limit.
_INFLATABLE = 1_000


def _inflated(value: Any, rng: random.Random) -> Any:
    if isinstance(value, (str, list, dict)) and len(value) > _INFLATABLE:
        return value
    if isinstance(value, bool) or value is None:
        return [value] * 1000
    if isinstance(value, int):
        return value * rng.choice((10, 1000, 10**6, 10**12, -1))
    if isinstance(value, float):
        return value * 1e300
    if isinstance(value, str):
        return ",".join([value] * rng.choice((10, 1000, 30_000)))
    if isinstance(value, list):
        return value * rng.choice((2, 100, 10_000))
    return {**value, **{f"{k}_{i}": v for i in range(rng.choice((2, 50))) for k, v in list(value.items())[:3]}}


#: Entries of one container, and of a whole config, a mutation round chooses from: inflation
#: repeats lists by reference, so a few rounds make a tree of 200^k paths through shared lists.
_ENTRIES_PER_CONTAINER, _ENTRIES = 200, 5_000


def _containers(value: Any) -> Iterator[tuple[Any, Any]]:
    """(parent, key) of the entries of a config, depth first, each shared container visited once."""
    stack, seen, count = [value], set(), 0
    while stack and count < _ENTRIES:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        entries = node.items() if isinstance(node, dict) else enumerate(node) if isinstance(node, list) else iter(())
        for key, child in itertools.islice(entries, _ENTRIES_PER_CONTAINER):
            yield node, key
            stack.append(child)
            count += 1


def _copy(value: Any) -> Any:
    if isinstance(value, dict):
        return {key: _copy(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_copy(item) for item in value[:200]]
    return value


def mutated(index: int) -> Any:
    """The ``index``-th mutated config: a valid base, corrupted 1-4 times with seed ``index``."""
    rng = random.Random(index)
    bases = valid_bases()
    return mutate(_copy(bases[index % len(bases)]), rng, rng.randint(1, 4))
