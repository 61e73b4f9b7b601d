"""Hypothesis strategies: small clusters, VALID ``component_placement`` specs built for them, and
broken configs derived from valid ones.

Valid specs are *constructed* from the cluster, never filtered: a random rank string almost never
keeps every process on one node, and a random declarative component is rarely feasible, so a
filter would reject nearly everything and test nothing. Each generated component carries an
independent description of what was written (segment ranges and counts, explicit rank lists, the
declarative shape and its constraints) so the properties can recompute the expected layout from
the rules (RLinf's even split) instead of trusting the library. Declarative sizes are bounded by a
capacity computed here (disjoint stride patterns per run of free, consecutive items on one node),
which is a lower bound of what any correct solver can place, so every valid spec is feasible.

Broken configs start from a valid spec and apply ONE mutation that is invalid whatever the rest
of the spec is; they record the component the broken thing belongs to, so the properties can
check that the error message names it.
"""

from __future__ import annotations

import copy
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from hypothesis import strategies as st

ACCEL, ROBOT, NODE = "Accelerator", "robot", "node"
#: Group labels; "4090" is also written as a YAML int, as in RLinf's docs.
LABEL_POOL = ("a800", "4090", "h100", "cpu", "edge", "train_pool")
#: Component names, chosen so that none is a substring of the library's own message words.
NAME_POOL = (
    "actor", "rollout", "reward", "critic", "agent", "inference", "judge", "planner", "sampler", "策略",
    "teacher", "student", "scorer", "verifier", "replay", "ref_model",
)  # 16: more than the 15 one spec can take
#: Largest process count of one generated segment or declarative component (keeps solves fast).
MAX_PROCESSES = 12


# --------------------------------------------------------------------------------------- cluster
@dataclass(frozen=True)
class Item:
    """One physical resource: a GPU, a robot or a whole node (``local`` 0 for nodes)."""

    node: int
    kind: str
    local: int


@dataclass(frozen=True)
class GroupCase:
    """A node group as generated: its nodes and what its ranks count."""

    label: str
    nodes: tuple[int, ...]
    kind: str


@dataclass(frozen=True)
class ClusterCase:
    """A generated ``cluster:`` section (without ``component_placement``) and its resource tables,
    derived here from the rules of docs/guide.md, independently of ``solver_placement._cluster.cluster``."""

    config: dict[str, Any]
    gpus: tuple[int, ...]
    robots: tuple[int, ...]
    groups: dict[str, GroupCase]

    @property
    def num_nodes(self) -> int:
        return len(self.gpus)

    def items(self, labels: Sequence[str]) -> tuple[Item, ...]:
        """Resources of the labels, ranked group after group (docs/guide.md: "one group after the other")."""
        out: list[Item] = []
        for label in labels:
            group = self.groups[label]
            for node in group.nodes:
                if group.kind == ACCEL:
                    out.extend(Item(node, ACCEL, g) for g in range(self.gpus[node]))
                elif group.kind == ROBOT:
                    out.extend(Item(node, ROBOT, r) for r in range(self.robots[node]))
                else:
                    out.append(Item(node, NODE, 0))
        return tuple(out)

    def selections(self) -> list[tuple[str, ...]]:
        """Label tuples a component may name: every non-empty group, and ordered pairs that count
        the same kind of resource (nodes with nodes, hardware with hardware)."""
        usable = [label for label in self.groups if self.items((label,))]
        pairs = [
            (a, b)
            for a in usable
            for b in usable
            if a != b and (self.groups[a].kind == NODE) == (self.groups[b].kind == NODE)
        ]
        return [(label,) for label in usable] + pairs


def _compress(ranks: Sequence[int]) -> list[tuple[int, int]]:
    """Sorted ranks as inclusive (first, last) runs."""
    runs: list[tuple[int, int]] = []
    for rank in sorted(ranks):
        if runs and runs[-1][1] == rank - 1:
            runs[-1] = (runs[-1][0], rank)
        else:
            runs.append((rank, rank))
    return runs


def _run_text(first: int, last: int) -> str:
    return str(first) if first == last else f"{first}-{last}"


@st.composite
def rank_list_values(draw: st.DrawFn, ranks: Sequence[int], available: int) -> Any:
    """A node rank list in one of the spellings of docs/guide.md: "0-3,5", an int, a YAML list, all."""
    runs = _compress(ranks)
    forms: list[Any] = [",".join(_run_text(*run) for run in runs), sorted(ranks), [_run_text(*run) for run in runs]]
    if len(ranks) == 1:
        forms.append(ranks[0])
    if len(ranks) == available:
        forms.append(draw(st.sampled_from(["all", "ALL"])))
    return draw(st.sampled_from(forms))


@st.composite
def clusters(draw: st.DrawFn, max_nodes: int = 6) -> ClusterCase:
    """1-``max_nodes`` nodes with per-node GPU counts (0 = CPU-only), up to three labelled groups,
    one of which may carry robots (``hardware: {type: robot, configs: [...]}``)."""
    n = draw(st.integers(1, max_nodes))
    gpus = tuple(draw(st.lists(st.sampled_from([0, 1, 2, 3, 4, 8]), min_size=n, max_size=n)))
    config: dict[str, Any] = {"num_nodes": n}
    if len(set(gpus)) == 1 and draw(st.booleans()):
        if gpus[0] != 8 or draw(st.booleans()):  # 8 is the default
            config["num_gpus_per_node"] = gpus[0]
    else:
        config["num_gpus_per_node"] = list(gpus)
    if draw(st.booleans()):
        config["accelerator_model"] = [draw(st.sampled_from(["A800", "H100", None])) for _ in range(n)]
    labels = draw(st.lists(st.sampled_from(LABEL_POOL), unique=True, max_size=3))
    robot_label = draw(st.sampled_from([None, *labels]))
    robots = [0] * n
    groups: dict[str, GroupCase] = {}
    group_configs: list[dict[str, Any]] = []
    for label in labels:
        nodes = tuple(sorted(draw(st.lists(st.integers(0, n - 1), unique=True, min_size=1))))
        entry: dict[str, Any] = {
            "label": int(label) if label.isdigit() and draw(st.booleans()) else label,
            "node_ranks": draw(rank_list_values(nodes, n)),
        }
        if label == robot_label:
            counts = [draw(st.integers(0, 3)) for _ in nodes]
            counts[0] = max(counts[0], 1)
            configs = [
                {"node_rank": node, "robot_ip": f"10.0.{node}.{i}"} for node, count in zip(nodes, counts) for i in range(count)
            ]
            # local robot indices follow config order per node, so interleaving nodes is harmless
            entry["hardware"] = {"type": ROBOT, "configs": draw(st.permutations(configs))}
            for node, count in zip(nodes, counts):
                robots[node] = count
            kind = ROBOT
        elif draw(st.integers(0, 4)) == 0:
            entry["ignore_hardware"] = True
            kind = NODE
        else:
            kind = ACCEL if any(gpus[node] for node in nodes) else NODE
        groups[label] = GroupCase(label, nodes, kind)
        group_configs.append(entry)
    if group_configs:
        config["node_groups"] = group_configs
    all_nodes = tuple(range(n))
    groups["cluster"] = GroupCase("cluster", all_nodes, ACCEL if any(gpus) else NODE)
    groups["node"] = GroupCase("node", all_nodes, NODE)
    return ClusterCase(config, gpus, tuple(robots), groups)


# --------------------------------------------------------------------------------------- components
@dataclass(frozen=True)
class SegmentCase:
    """One written segment: resource ranks ``first..last`` and its number of processes."""

    first: int
    last: int
    processes: int


@dataclass(frozen=True)
class DeclCase:
    """What a declarative component asks for (after defaults), as generated."""

    processes: int
    per_process: int
    stride: int
    window: tuple[int, int] | None = None
    share: int = 1


@dataclass(frozen=True)
class ComponentCase:
    """One ``component_placement`` entry and its generated meaning.

    Exactly one of ``segments``, ``explicit`` and ``decl`` is set. ``reach`` holds the physical
    items the component can ever use (its used items if rank-based) and ``load`` an upper bound of
    its processes per item, shared-rule copies included: both feed the feasibility bounds of the
    components generated after it.
    """

    key: str
    names: tuple[str, ...]
    value: Any
    labels: tuple[str, ...]
    items: tuple[Item, ...]
    segments: tuple[SegmentCase, ...] | None = None
    explicit: tuple[tuple[int, ...], ...] | None = None
    decl: DeclCase | None = None
    tp: int = 1
    collocate_with: str | None = None
    exclusive_with: tuple[str, ...] = ()
    cap: int | None = None
    reach: frozenset[Item] = frozenset()
    load: Counter = field(default_factory=Counter)

    @property
    def name(self) -> str:
        return self.names[0]


@dataclass(frozen=True)
class SpecCase:
    """A full valid config: the cluster plus components in config order."""

    cluster: ClusterCase
    components: tuple[ComponentCase, ...]
    nested: bool
    solver: dict[str, Any] | None

    def config(self) -> dict[str, Any]:
        """A fresh deep copy (mutations and the library never share state between examples)."""
        section = copy.deepcopy(self.cluster.config)
        section["component_placement"] = {c.key: copy.deepcopy(c.value) for c in self.components}
        if self.solver is not None:
            section["solver"] = dict(self.solver)
        return {"cluster": section} if self.nested else section

    def component(self, name: str) -> ComponentCase:
        return next(c for c in self.components if name in c.names)


def even_split(segments: Sequence[SegmentCase]) -> list[list[int]]:
    """RLinf's even split: process i of a segment with |R| >= |P| gets R[i*k:(i+1)*k] (k = |R|/|P|);
    with |R| < |P| resource i is shared by processes i*m..(i+1)*m-1 (m = |P|/|R|)."""
    layout: list[list[int]] = []
    for seg in segments:
        ranks = list(range(seg.first, seg.last + 1))
        if len(ranks) >= seg.processes:
            k = len(ranks) // seg.processes
            layout.extend(ranks[i * k:(i + 1) * k] for i in range(seg.processes))
        else:
            m = seg.processes // len(ranks)
            layout.extend([ranks[j // m]] for j in range(seg.processes))
    return layout


def explicit_layout(explicit: Sequence[Sequence[int]]) -> list[list[int]]:
    """docs/guide.md/RLinf: ranks sorted within a process, processes ordered (stably) by their first rank."""
    return sorted((sorted(ranks) for ranks in explicit), key=lambda ranks: ranks[0])


def expected_ranks(component: ComponentCase) -> list[list[int]]:
    """Per process, the selection ranks a rank-based component must hold."""
    if component.segments is not None:
        return even_split(component.segments)
    assert component.explicit is not None
    return explicit_layout(component.explicit)


def one_place(items: Sequence[Item], ranks: Sequence[int]) -> bool:
    """A process may hold these ranks: one node, one kind, no physical item twice."""
    chosen = [items[r] for r in ranks]
    return len({(i.node, i.kind) for i in chosen}) == 1 and len(set(chosen)) == len(chosen)


def _splits(items: Sequence[Item], first: int, length: int) -> list[tuple[str, int]]:
    """Ways to share ``length`` resources from ``first`` evenly: ("k", k) = k consecutive
    resources per process (every chunk in one place), ("m", m) = m processes per resource."""
    options = [
        ("k", k)
        for k in range(1, length + 1)
        if length % k == 0 and all(one_place(items, range(first + i, first + i + k)) for i in range(0, length, k))
    ]
    options += [("m", m) for m in (2, 3) if length * m <= MAX_PROCESSES]
    return options


def _process_count(length: int, split: tuple[str, int]) -> int:
    return length // split[1] if split[0] == "k" else length * split[1]


def _load_of(layout: Sequence[Sequence[int]], items: Sequence[Item], copies: int) -> Counter:
    load: Counter = Counter()
    for ranks in layout:
        for r in ranks:
            load[items[r]] += copies
    return load


@st.composite
def rank_strings(draw: st.DrawFn, items: Sequence[Item]) -> tuple[str, tuple[SegmentCase, ...]]:
    """A valid rank string for ``items``: "all" (any case), "all:P", or 1-4 ascending segments with
    gaps, written explicitly (R:P) or implicitly (R, continuing the process ranks)."""
    n = len(items)
    spaced = draw(st.integers(0, 3)) == 0
    colon, comma = (" : ", " , ") if spaced else (":", draw(st.sampled_from([",", ", "])))
    if draw(st.integers(0, 4)) == 0:
        word = draw(st.sampled_from(["all", "ALL", "All"]))
        split = draw(st.sampled_from([None, *_splits(items, 0, n)]))
        if split is None:
            return word, (SegmentCase(0, n - 1, n),)
        count = _process_count(n, split)
        return f"{word}{colon}{_run_text(0, count - 1)}", (SegmentCase(0, n - 1, count),)
    texts: list[str] = []
    segments: list[SegmentCase] = []
    position, next_process = 0, 0
    for _ in range(draw(st.integers(1, 4))):
        if position >= n:
            break
        first = position + draw(st.integers(0, min(2, n - position - 1)))
        length = draw(st.integers(1, min(n - first, MAX_PROCESSES)))
        split = draw(st.sampled_from(_splits(items, first, length)))
        count = _process_count(length, split)
        resources = _run_text(first, first + length - 1) if draw(st.booleans()) else f"{first}-{first + length - 1}"
        if split == ("k", 1) and draw(st.booleans()):
            texts.append(resources)  # implicit: one process per resource, ranks continue
        else:
            texts.append(f"{resources}{colon}{_run_text(next_process, next_process + count - 1)}")
        segments.append(SegmentCase(first, first + length - 1, count))
        position, next_process = first + length, next_process + count
    return comma.join(texts), tuple(segments)


@st.composite
def explicit_lists(draw: st.DrawFn, items: Sequence[Item]) -> list[Any]:
    """``placement: [[0, 1], [2], 3]``: 1-4 processes, each a few ranks on one node and one kind,
    in any order (the library sorts them); processes may share ranks."""
    processes: list[Any] = []
    for _ in range(draw(st.integers(1, 4))):
        anchor = items[draw(st.integers(0, len(items) - 1))]
        peers: dict[Item, list[int]] = {}
        for rank, item in enumerate(items):
            if (item.node, item.kind) == (anchor.node, anchor.kind):
                peers.setdefault(item, []).append(rank)
        chosen = draw(st.lists(st.sampled_from(sorted(peers, key=lambda i: i.local)), unique=True, min_size=1, max_size=3))
        ranks = [draw(st.sampled_from(peers[item])) for item in chosen]
        processes.append(ranks[0] if len(ranks) == 1 and draw(st.booleans()) else ranks)
    return processes


def _tp_options(layout: Sequence[Sequence[int]], items: Sequence[Item]) -> list[int]:
    """TP sizes that split the processes into whole groups, each staying on one node."""
    nodes = [items[ranks[0]].node for ranks in layout]
    return [1] + [
        t for t in (2, 3, 4)
        if t <= len(nodes) and len(nodes) % t == 0 and all(len(set(nodes[i:i + t])) == 1 for i in range(0, len(nodes), t))
    ]


@st.composite
def node_group_values(draw: st.DrawFn, labels: tuple[str, ...]) -> Any:
    """``node_group`` in one of its spellings: a label (or YAML int), a comma string, a YAML list;
    ``None`` means "leave the key out" (default: the whole cluster)."""
    if labels == ("cluster",) and draw(st.booleans()):
        return None
    if len(labels) == 1:
        label = labels[0]
        return draw(st.sampled_from([label, [label], *([int(label)] if label.isdigit() else [])]))
    return draw(st.sampled_from([",".join(labels), ", ".join(labels), list(labels)]))


def _as_body(value: Any) -> dict[str, Any]:
    """A component's value in mapping form (the short form ``name: "0-3"`` is ``placement: "0-3"``)."""
    return dict(value) if isinstance(value, dict) else {"placement": value}


def _body(node_group: Any, **keys: Any) -> dict[str, Any]:
    body = {} if node_group is None else {"node_group": node_group}
    body.update({key: value for key, value in keys.items() if value is not None})
    return body


@st.composite
def component_keys(draw: st.DrawFn, names: list[str], allow_shared: bool = True) -> tuple[str, tuple[str, ...]]:
    """Take 1 (or 2, sharing one rule: ``actor,rollout``) unused names."""
    count = 2 if allow_shared and len(names) > 1 and draw(st.integers(0, 3)) == 0 else 1
    taken = tuple(names.pop(0) for _ in range(count))
    return draw(st.sampled_from([",".join(taken), ", ".join(taken)])), taken


@st.composite
def rank_components(draw: st.DrawFn, cluster: ClusterCase, names: list[str]) -> ComponentCase:
    """A rank-based component: a rank string (short form or mapping) or explicit per-process lists."""
    labels = draw(st.sampled_from(cluster.selections()))
    items = cluster.items(labels)
    key, taken = draw(component_keys(names))
    node_group = draw(node_group_values(labels))
    if draw(st.integers(0, 4)) == 0:
        explicit = draw(explicit_lists(items))
        case = ComponentCase(key, taken, _body(node_group, placement=explicit), labels, items, explicit=tuple(
            tuple(p) if isinstance(p, list) else (p,) for p in explicit))
    else:
        text, segments = draw(rank_strings(items))
        case = ComponentCase(key, taken, None, labels, items, segments=segments)
        written: Any = int(text) if text.isdigit() and draw(st.booleans()) else text
        short = labels == ("cluster",) and draw(st.booleans())
        case = replace(case, value=written if short else _body(node_group, placement=written))
    layout = expected_ranks(case)
    tp = draw(st.sampled_from(_tp_options(layout, items)))
    if tp > 1:
        case = replace(case, value={**_as_body(case.value), "tensor_parallel_size": tp}, tp=tp)
    used = frozenset(items[r] for ranks in layout for r in ranks)
    return replace(case, reach=used, load=_load_of(layout, items, len(taken)))


# --------------------------------------------------------------------------------------- declarative
def pattern_capacity(length: int, per_process: int, stride: int) -> int:
    """Disjoint patterns {x, x+s, ..., x+(h-1)s} that fit in ``length`` consecutive slots: each
    block of h*s slots holds s of them, and a remainder r holds r-(h-1)s (exact for stride 1)."""
    full, rest = divmod(length, per_process * stride)
    return full * stride + max(0, rest - (per_process - 1) * stride)


def free_runs(items: Sequence[Item], blocked: frozenset[Item] | set[Item]) -> list[int]:
    """Lengths of maximal runs of consecutive ranks on one node and kind that a declarative
    component may fill: a blocked item or a repeated physical item (dropped by the library's
    de-duplication) ends a run."""
    runs: list[int] = []
    seen: set[Item] = set()
    current, previous = 0, None
    for item in items:
        fresh = item not in seen
        seen.add(item)
        if not fresh or item in blocked:
            runs.append(current)
            current, previous = 0, None
            continue
        if previous is not None and (previous.node, previous.kind) == (item.node, item.kind):
            current += 1
        else:
            runs.append(current)
            current = 1
        previous = item
    runs.append(current)
    return [run for run in runs if run]


def declarative_capacity(items: Sequence[Item], blocked: frozenset[Item] | set[Item], per_process: int, stride: int, tp: int) -> int:
    """Processes that surely fit: per run, whole TP groups of patterns (every TP group inside one
    run keeps it on one node whatever order the solver sorts processes in)."""
    return sum(pattern_capacity(run, per_process, stride) // tp * tp for run in free_runs(items, blocked))


def _per_process_keys(draw: st.DrawFn, per_process: int) -> dict[str, int]:
    if per_process == 1 and draw(st.booleans()):
        return {}
    return {draw(st.sampled_from(["hardware_per_process", "gpus_per_process"])): per_process}


def _stride_keys(draw: st.DrawFn, stride: int) -> dict[str, int]:
    return {} if stride == 1 and draw(st.booleans()) else {"stride": stride}


@st.composite
def collocation_pairs(draw: st.DrawFn, cluster: ClusterCase, names: list[str]) -> tuple[ComponentCase, ComponentCase]:
    """A rank-based target in TP groups (k items per process, t processes per group, every group
    on one node) and a component collocated with it that fills exactly its items, each process
    inside one TP group: declarative (h | k*t, stride s with h*s | k*t, or ``auto``) or rank-based."""
    labels = draw(st.sampled_from(cluster.selections()))
    items = cluster.items(labels)
    n = len(items)

    def blocks_from(first: int, size: int) -> int:
        count = 0
        while first + (count + 1) * size <= n and one_place(items, range(first + count * size, first + (count + 1) * size)):
            count += 1
        # processes of the target never share an item: no physical repeats in the whole range
        while count and len(set(items[first:first + count * size])) != count * size:
            count -= 1
        return count

    shapes = [(k, t) for k in (1, 2, 4) for t in (1, 2, 4) if any(blocks_from(a, k * t) for a in range(n))]
    k, t = draw(st.sampled_from(shapes))
    group = k * t
    first = draw(st.sampled_from([a for a in range(n) if blocks_from(a, group)]))
    blocks = draw(st.integers(1, min(blocks_from(first, group), max(1, MAX_PROCESSES // t))))
    last = first + blocks * group - 1
    count = blocks * t
    segment = SegmentCase(first, last, count)
    target_key, target_names = draw(component_keys(names))
    text = f"{first}-{last}:0-{count - 1}" if (first, last) != (0, n - 1) or draw(st.booleans()) else f"all:0-{count - 1}"
    if k == 1 and draw(st.booleans()):
        text = f"{first}-{last}" if (first, last) != (0, n - 1) else "all"
    node_group = draw(node_group_values(labels))
    target_value = _body(node_group, placement=text, tensor_parallel_size=t if t > 1 or draw(st.booleans()) else None)
    layout = even_split([segment])
    used = frozenset(items[first:last + 1])
    target = ComponentCase(
        target_key, target_names, target_value, labels, items, segments=(segment,), tp=t,
        reach=used, load=_load_of(layout, items, len(target_names)),
    )
    ref = draw(st.sampled_from(target_names))
    key, taken = draw(component_keys(names, allow_shared=False))
    if draw(st.booleans()):  # rank-based collocator: k_b | group from the same first rank, or sharing
        split = draw(st.sampled_from([("k", kb) for kb in (1, 2, 4) if group % kb == 0] + [("m", 2)]))
        own = SegmentCase(first, last, _process_count(last - first + 1, split))
        value = _body(node_group, placement=f"{first}-{last}:0-{own.processes - 1}", collocate_with=ref)
        mate = ComponentCase(key, taken, value, labels, items, segments=(own,), collocate_with=ref,
                             reach=used, load=_load_of(even_split([own]), items, 1))
        return target, mate
    per_process = draw(st.sampled_from([h for h in (1, 2, 4) if group % h == 0]))
    stride = draw(st.sampled_from([s for s in range(1, group // per_process + 1) if group % (per_process * s) == 0]))
    stride_value: Any = stride
    if stride == group // per_process and draw(st.booleans()):
        stride_value = draw(st.sampled_from(["auto", "AUTO"]))
    processes = (last - first + 1) // per_process
    keys = {"processes": processes, **_per_process_keys(draw, per_process), "collocate_with": ref}
    if stride_value != 1 or draw(st.booleans()):
        keys["stride"] = stride_value
    mate = ComponentCase(
        key, taken, _body(node_group, **keys), labels, items, decl=DeclCase(processes, per_process, stride),
        collocate_with=ref, reach=used, load=Counter(dict.fromkeys(used, 1)),
    )
    return target, mate


def _portions(items: Sequence[Item]) -> list[tuple[int, int]]:
    """Maximal (first, last) rank runs on one node and kind without a repeated physical item."""
    portions: list[tuple[int, int]] = []
    for rank, item in enumerate(items):
        if portions:
            first, last = portions[-1]
            previous = items[last]
            if (previous.node, previous.kind) == (item.node, item.kind) and item not in items[first:last + 1]:
                portions[-1] = (first, rank)
                continue
        portions.append((rank, rank))
    return portions


@st.composite
def window_components(draw: st.DrawFn, cluster: ClusterCase, names: list[str]) -> ComponentCase:
    """A declarative component with a ``resources`` window that it must fill evenly: either m
    processes per item, or blocks of k items (stride s) inside one run of one node."""
    labels = draw(st.sampled_from(cluster.selections()))
    items = cluster.items(labels)
    key, taken = draw(component_keys(names))
    node_group = draw(node_group_values(labels))
    portions = _portions(items)
    blocks = [(k, s) for k in (2, 3, 4) for s in (1, 2) if any(b - a + 1 >= k * s for a, b in portions)]
    if blocks and draw(st.booleans()):
        per_process, stride = draw(st.sampled_from(blocks))
        size = per_process * stride
        a, b = draw(st.sampled_from([(a, b) for a, b in portions if b - a + 1 >= size]))
        length = size * draw(st.integers(1, (b - a + 1) // size))
        first = draw(st.integers(a, b + 1 - length))
        window, share, processes = (first, first + length - 1), 1, length // per_process
        keys: dict[str, Any] = {"processes": processes} if draw(st.booleans()) else {}
        keys.update(_per_process_keys(draw, per_process) if keys else {"hardware_per_process": per_process})
        keys.update(_stride_keys(draw, stride))
    else:  # one item per process, every item shared by the same number of processes
        first = draw(st.integers(0, len(items) - 1))
        last = first
        while last + 1 < len(items) and items[last + 1] not in items[first:last + 1] and last - first < 5:
            last += 1
        last = draw(st.integers(first, last))
        share = draw(st.integers(1, 3))
        per_process, stride, processes = 1, 1, (last - first + 1) * share
        window = (first, last)
        keys = {"processes": processes} if share > 1 or draw(st.booleans()) else {}
    spellings = [_run_text(*window), f"{window[0]}-{window[1]}", *(["all", "ALL"] if window == (0, len(items) - 1) else [])]
    keys["resources"] = draw(st.sampled_from(spellings))
    used = frozenset(items[window[0]:window[1] + 1])
    return ComponentCase(
        key, taken, _body(node_group, **keys), labels, items,
        decl=DeclCase(processes, per_process, stride, window, share),
        reach=used, load=Counter(dict.fromkeys(used, share * len(taken))),
    )


@st.composite
def free_components(
    draw: st.DrawFn, cluster: ClusterCase, names: list[str], earlier: Sequence[ComponentCase], count: int
) -> list[ComponentCase]:
    """Declarative components without a window: ``processes``, ``hardware_per_process``, stride,
    TP, ``exclusive_with`` (earlier components) and ``max_processes_per_hardware``.

    Drawn in two passes so that every component's capacity bound knows the worst-case load of all
    the others (a cap limits the processes of *all* components on the items its owner uses).
    """
    drafts = []
    for _ in range(count):
        labels = draw(st.sampled_from(cluster.selections()))
        key, taken = draw(component_keys(names))
        drafts.append((labels, key, taken, frozenset(cluster.items(labels))))
    fixed = Counter()
    for component in earlier:
        fixed.update(component.load)
    for _labels, _, taken, reach in drafts:
        fixed.update(dict.fromkeys(reach, len(taken)))
    made: list[ComponentCase] = []
    for labels, key, taken, reach in drafts:
        items = cluster.items(labels)
        others = fixed.copy()
        others.subtract(dict.fromkeys(reach, len(taken)))
        before = [*earlier, *made]
        excluded = draw(st.lists(st.sampled_from(before), unique_by=lambda c: c.key, max_size=2)) if before else []
        blocked = set().union(*(c.reach for c in excluded)) if excluded else set()
        cap = None
        if draw(st.integers(0, 3)) == 0:
            cap = draw(st.integers(len(taken), len(taken) + 3))
            blocked |= {item for item in reach if others[item] + len(taken) > cap}
        shapes = [
            (h, s, t) for h in (1, 2, 3, 4) for s in ((1, 2) if h > 1 else (1,)) for t in (1, 2)
            if declarative_capacity(items, blocked, h, s, t) > 0
        ]
        if not shapes:  # everything blocked: keep the component, drop its constraints
            excluded, cap, blocked = [], None, set()
            shapes = [(1, 1, 1)]
        per_process, stride, tp = draw(st.sampled_from(shapes))
        processes = tp * draw(st.integers(1, min(MAX_PROCESSES, declarative_capacity(items, blocked, per_process, stride, tp)) // tp))
        keys: dict[str, Any] = {"processes": processes, **_per_process_keys(draw, per_process)}
        keys.update(_stride_keys(draw, stride) if per_process > 1 else {})
        if tp > 1 or draw(st.integers(0, 3)) == 0:
            keys["tensor_parallel_size"] = tp
        refs = [draw(st.sampled_from(c.names)) for c in excluded]
        if refs:
            keys["exclusive_with"] = refs if len(refs) > 1 or draw(st.booleans()) else refs[0]
        if cap is not None:
            keys["max_processes_per_hardware"] = cap
        made.append(ComponentCase(
            key, taken, _body(draw(node_group_values(labels)), **keys), labels, items,
            decl=DeclCase(processes, per_process, stride), tp=tp, exclusive_with=tuple(refs), cap=cap,
            reach=reach, load=Counter(dict.fromkeys(reach, len(taken))),
        ))
    return made


def _with_rank_rules(draw: st.DrawFn, component: ComponentCase, load: Counter, ranked: Sequence[ComponentCase]) -> ComponentCase:
    """Maybe give a rank-based component the tightest cap that holds in the worst case (all
    declarative components at their bounds), and exclusivity with rank-based components it does
    not touch."""
    body = _as_body(component.value)
    cap, refs = None, ()
    if draw(st.integers(0, 4)) == 0:
        cap = max(load[item] for item in component.reach)
        body["max_processes_per_hardware"] = cap
    disjoint = [other for other in ranked if not other.reach & component.reach]
    if disjoint and draw(st.integers(0, 3)) == 0:
        refs = tuple(draw(st.sampled_from(other.names)) for other in disjoint[:2])
        body["exclusive_with"] = list(refs)
    if cap is None and not refs:
        return component
    return replace(component, value=body, cap=cap, exclusive_with=refs)


@st.composite
def valid_specs(draw: st.DrawFn, max_nodes: int = 6, declarative: bool = True) -> SpecCase:
    """A valid config: 0-3 rank-based components, optionally a collocation pair, a window
    component and 1-2 free declarative components (at least one component in all)."""
    cluster = draw(clusters(max_nodes))
    names = list(draw(st.permutations(NAME_POOL)))
    components: list[ComponentCase] = [draw(rank_components(cluster, names)) for _ in range(draw(st.integers(0, 3)))]
    if declarative:
        if draw(st.booleans()):
            components.extend(draw(collocation_pairs(cluster, names)))
        if draw(st.integers(0, 2)) == 0:
            components.append(draw(window_components(cluster, names)))
        components.extend(draw(free_components(cluster, names, tuple(components), draw(st.integers(0, 2)))))
    if not components:
        components.append(draw(rank_components(cluster, names)))
    load: Counter = Counter()
    for component in components:
        load.update(component.load)
    ranked = [c for c in components if c.decl is None]
    components = [c if c.decl is not None else _with_rank_rules(draw, c, load, ranked) for c in components]
    solver = draw(st.sampled_from([None, {"time_limit_s": 30}, {"num_workers": 1, "seed": 0}]))
    return SpecCase(cluster, tuple(components), nested=draw(st.integers(0, 4)) > 0, solver=solver)


# --------------------------------------------------------------------------------------- broken
@dataclass(frozen=True)
class BrokenCase:
    """A config that must raise a ``PlacementError``: ``component`` is the name the message must
    contain (None when the broken thing is not a component's), ``what`` names the mutation."""

    config: Any
    component: str | None
    what: str


def _section(config: dict[str, Any]) -> dict[str, Any]:
    """The ``cluster:`` section of a generated config, wherever it is nested."""
    return config["cluster"] if "cluster" in config else config


def _placements(config: dict[str, Any]) -> dict[str, Any]:
    return _section(config)["component_placement"]


def _replace_value(case: SpecCase, component: ComponentCase, value: Any) -> dict[str, Any]:
    config = case.config()
    _placements(config)[component.key] = value
    return config


def _add_component(case: SpecCase, key: str, value: Any) -> dict[str, Any]:
    config = case.config()
    _placements(config)[key] = value
    return config


def _unused_name(case: SpecCase) -> str:
    used = {name for c in case.components for name in c.names}
    return next(name for name in (*NAME_POOL, "extra") if name not in used)


#: Control characters that ``str.isspace`` (hence ``strip`` and the grammar) treats as blanks.
SPACE_CONTROLS = "\t\n\x0b\x0c\r\x1c\x1d\x1e\x1f\x85"


@st.composite
def broken_rank_texts(draw: st.DrawFn, items: Sequence[Item]) -> tuple[str, str]:
    """A rank string that is wrong for ``items`` whatever else the spec says: bad syntax, broken
    segment rules, out-of-range or huge ranks, unicode garbage, a process spanning two places."""
    n = len(items)
    a = draw(st.integers(0, n - 1))
    options: list[tuple[str, str]] = [
        ("0--3", "double dash"), ("a-b", "letters"), (f"{a + 1}-{a}", "reversed range"), ("1:2:3", "two colons"),
        ("", "empty"), ("   ", "blank"), (f":0-{n - 1}", "empty resource ranks"), (f"0-{n - 1}:", "empty process ranks"),
        ("-1", "negative"), (f"{a}-", "open range"), ("0x3", "hex"), ("1.5", "float text"), ("0 1", "space inside"),
        ("0-3;4-7", "semicolon"), ("0\u20133", "en dash"), ("\u0660-\u0663", "arabic-indic digits"),
        ("\uff10-\uff13", "fullwidth digits"), ("+1", "plus sign"), ("1e3", "exponent"), ("all,0", "all with a segment"),
        ("0,all", "segment with all"), ("0:all", "process ranks all"), ("all:all", "all:all"), ("[0, 1]", "list text"),
        ("al l", "split all"), ("None", "None text"), ("true", "bool text"),
        (f"0-{n}", "resource rank out of range"), (f"{n}", "resource rank out of range"), (f"{n}:0-1", "out of range, shared"),
        ("0-999999999", "huge range"), (str(10**20), "huge rank"), ("0:0-999999999", "huge process range"),
        ("10000001", "above MAX_RANK"), (f"0:{draw(st.integers(1, 5))}", "process ranks not from 0"),
    ]
    if n >= 2:
        b = draw(st.integers(1, n - 1))
        r, q = draw(st.sampled_from([(r, q) for r, q in ((2, 3), (3, 2), (4, 6), (6, 4), (2, 5), (3, 4), (4, 3)) if r <= n]))
        options += [
            (f"0-{r - 1}:0-{q - 1}", "not a multiple"), ("0:0,1:2", "process rank gap"), ("0:0-1,1:1-2", "process ranks overlap"),
            (f"{b},{b - 1}", "descending resource ranks"), (f"{b},{b}", "duplicate resource rank"),
            (f"0-{b},{b}-{n - 1}", "overlapping resource ranks"),
        ]
        if r + 1 <= n:
            options.append((f"0:0,1-{r}:1-{q}", "not a multiple in the second segment"))
    if n >= 3:
        options.append(("0-1,2:3", "implicit segment then a gap"))
    spans = [r for r in range(n - 1) if (items[r].node, items[r].kind) != (items[r + 1].node, items[r + 1].kind)]
    if spans:
        r = draw(st.sampled_from(spans))
        options.append((f"{r}-{r + 1}:0", "process spans two nodes or kinds"))
    text, what = draw(st.sampled_from(options))
    if draw(st.integers(0, 5)) == 0:  # unicode garbage inside an otherwise valid text
        base = draw(st.sampled_from(["0", f"0-{n - 1}", "all", f"0-{n - 1}:0-{n - 1}"]))
        # no blank (strip() would remove it), digit or separator: any other character breaks the text
        char = draw(st.characters(exclude_categories=("Cs", "Zs", "Zl", "Zp", "Nd"), exclude_characters=SPACE_CONTROLS + "-,:"))
        cut = draw(st.integers(0, len(base)))
        text, what = base[:cut] + char + base[cut:], f"garbage {char!r} inserted"
    return text, what


def _mutate_rank_text(draw: st.DrawFn, case: SpecCase) -> BrokenCase:
    component = draw(st.sampled_from(case.components))
    text, what = draw(broken_rank_texts(component.items))
    # only the node group is kept: a collocated component's stride: auto reads this one's TP size,
    # and must not turn the broken text into some other component's error
    body = {k: v for k, v in _as_body(component.value).items() if k == "node_group"}
    return BrokenCase(_replace_value(case, component, {**body, "placement": text}), component.name, f"rank string: {what}")


def _mutate_short_form(draw: st.DrawFn, case: SpecCase) -> BrokenCase:
    component = draw(st.sampled_from(case.components))
    value, what = draw(st.sampled_from([
        (1.5, "float"), (None, "None"), (True, "bool"), (False, "bool"), ([], "empty list"), ([1, 2], "list"), ({}, "empty mapping"),
        (-1, "negative int"), (10**20, "huge int"), (b"0-3", "bytes"), (1.0, "float"),
    ]))
    return BrokenCase(_replace_value(case, component, value), component.name, f"short form value: {what}")


def _hardware_labels(case: SpecCase) -> list[str]:
    return [label for label, g in case.cluster.groups.items() if g.kind != NODE and case.cluster.items((label,))]


#: Values that are wrong for a component key whatever the rest of the spec (10**30: huge numbers).
BODY_VALUES: dict[str, tuple[Any, ...]] = {
    "placement": (1.5, None, True, {"a": 1}, [], [[]], [[0.5]], [[-1]], [[True]], ["0-1"], [[0, 0]], [None], 10**30, -1),
    "node_group": ("nosuch", "cluster,nosuch", ["nosuch"], "", " ", "cluster,,node", [], True, 1.5, [None], {"a": 1}, [["cluster"]], "cluster,cluster"),
    "processes": (0, -1, 1.5, "4", True, [4], {}, 10**30),
    "hardware_per_process": (0, -2, 2.5, "2", False, 10**30),
    "gpus_per_process": (0, 1.5, "1", True),
    "stride": (0, -1, 1.5, "2", True, None, "sideways", [1], 10**30),
    "resources": ("3-1", "a", "0-999999999", [0, 1], True, 1.5, "", "0-1:0-1", "0,1", str(10**30)),
    "tensor_parallel_size": (0, -1, 1.5, "2", True, None, 10**30),
    "max_processes_per_hardware": (0, -1, 1.5, "2", True, 2**63, 10**30),
    "collocate_with": ("ghost", 5, True, {"a": 1}),
    "exclusive_with": (5, "ghost", {"a": 1}, True, ["ghost"], [None]),
    "unit": ("gpu", 1, True),
    **{key: (1,) for key in ("placment", "proceses", "nodegroup", "hardware", "tp", "Placement", "node_groups", "策略")},
}


def _mutate_body(draw: st.DrawFn, case: SpecCase) -> BrokenCase:
    """One key of a component's mapping set to a wrong value (or an unknown key added)."""
    component = draw(st.sampled_from(case.components))
    body = _as_body(component.value)
    others = [c.name for c in case.components if c is not component]
    key = draw(st.sampled_from([*BODY_VALUES, "self reference", "both aliases", "out-of-range window",
                                *(["mixed node group"] if _hardware_labels(case) else []),
                                *(["stride auto alone"] if component.decl and not component.collocate_with else []),
                                *(["collocated and exclusive"] if others else [])]))
    if key == "self reference":
        field_name = draw(st.sampled_from(["collocate_with", "exclusive_with"]))
        body[field_name] = draw(st.sampled_from([component.name, [component.name]]))
    elif key == "both aliases":
        body.update(hardware_per_process=1, gpus_per_process=1)
    elif key == "out-of-range window":
        body["resources"] = f"0-{len(component.items)}"
    elif key == "mixed node group":
        body["node_group"] = f"{draw(st.sampled_from(_hardware_labels(case)))},node"
    elif key == "stride auto alone":
        body["stride"] = "auto"
    elif key == "collocated and exclusive":
        other = draw(st.sampled_from(others))
        body.update(collocate_with=other, exclusive_with=[other])
    else:
        body[key] = draw(st.sampled_from(BODY_VALUES[key]))
        key = f"{key}: {body[key]!r}"
    return BrokenCase(_replace_value(case, component, body), component.name, key)


def _mutate_key(draw: st.DrawFn, case: SpecCase) -> BrokenCase:
    component = draw(st.sampled_from(case.components))
    name = component.name
    key, expected, what = draw(st.sampled_from([
        (f"{name},", name, "trailing comma in key"), (f",{name}", name, "leading comma in key"),
        (f"{name},,{_unused_name(case)}", name, "empty name in key"), (f"{name},{name}", name, "name twice in key"),
        ("", None, "empty key"), (" ", None, "blank key"),
    ]))
    config = case.config()
    placements = _placements(config)
    _section(config)["component_placement"] = {(key if k == component.key else k): v for k, v in placements.items()}
    return BrokenCase(config, expected, what)


def _mutate_duplicate_name(draw: st.DrawFn, case: SpecCase) -> BrokenCase:
    """A second key naming an existing component (`` actor`` strips to ``actor``)."""
    component = draw(st.sampled_from(case.components))
    key = draw(st.sampled_from([f" {component.name}", f"{_unused_name(case)},{component.name}"]))
    return BrokenCase(_add_component(case, key, "0"), component.name, "component under two keys")


def _group_values(n: int, existing: Sequence[str]) -> dict[str, tuple[Any, ...]]:
    """Wrong values for the fields of a node group of an ``n``-node cluster."""
    return {
        "label": ("cluster", "node", "", "  ", "a,b", None, True, ["a"], {"a": 1}, *existing),
        # not "0,0": a node named twice is one node, for RLinf (a set of ranks) as here
        "node_ranks": ("", n, f"0-{n}", "1-0", -1, 1.5, True, None, "abc", [-1], {}, "all,0", [], 10**30),
        "ignore_hardware": ("yes", 1, None, 0),
        "hardware": (
            "robot", {"type": ACCEL}, {"type": NODE}, {"type": ""}, {"configs": []}, {"type": "arm", "configs": "x"},
            {"type": "arm", "configs": [{"node_rank": n}]}, {"type": "arm", "configs": [{"node_rank": "0"}]},
            {"type": "arm", "configs": [{"node_rank": True}]}, {"type": "arm", "configs": [{"node_rank": 0}, {"node_rank": 0}]},
            {"type": "arm", "confs": []}, {"type": "arm", "configs": [5]}, {"type": None}, {"type": ["arm"]},
        ),
        "hardware_type": (None, True, ["arm"]),
        "env_configs": ("x", [{"node_ranks": n}], [{"env_vars": {}}], [{"node_ranks": 0, "env_vars": 5}], [{"node_ranks": 0, "python": "x"}]),
        **{key: (1,) for key in ("labels", "node_rank", "hardware_types")},
    }


def _mutate_group(draw: st.DrawFn, case: SpecCase) -> BrokenCase:
    """A node group (appended to the cluster's) with one invalid field, a missing key, a
    contradiction, or robots that another group already declared."""
    n = case.cluster.num_nodes
    values = _group_values(n, [label for label in case.cluster.groups if label not in ("cluster", "node")])
    group: dict[str, Any] = {"label": "spare", "node_ranks": 0}
    robot_nodes = [node for node, count in enumerate(case.cluster.robots) if count]
    field_name = draw(st.sampled_from([*values, "-label", "-node_ranks", "hardware+ignore_hardware",
                                       "hardware+hardware_type", *(["robots twice"] if robot_nodes else [])]))
    if field_name.startswith("-"):
        del group[field_name[1:]]
    elif field_name == "hardware+ignore_hardware":
        group.update(hardware={"type": "arm", "configs": []}, ignore_hardware=True)
    elif field_name == "hardware+hardware_type":
        group.update(hardware={"type": "arm", "configs": []}, hardware_type="arm")
    elif field_name == "robots twice":
        node = draw(st.sampled_from(robot_nodes))
        group = {"label": "spare", "node_ranks": node, "hardware": {"type": ROBOT, "configs": [{"node_rank": node}]}}
    else:
        group[field_name] = draw(st.sampled_from(values[field_name]))
        field_name = f"{field_name}: {group[field_name]!r}"
    config = case.config()
    section = _section(config)
    section["node_groups"] = [*section.get("node_groups", []), group]
    return BrokenCase(config, None, f"node group {field_name}")


def _mutate_cluster(draw: st.DrawFn, case: SpecCase) -> BrokenCase:
    """A wrong value (or unknown / missing key) in the ``cluster:`` section itself."""
    n = case.cluster.num_nodes
    # wrong-typed names are only checked on GPU nodes: CPU-only clusters are the xfail test
    # test_wrong_types_on_cpu_only_nodes_are_rejected of test_properties.py
    wrong_names = (True, {"a": 1}, [["NV_GPU"]] * n) if any(case.cluster.gpus) else ()
    values: dict[str, tuple[Any, ...]] = {
        "num_nodes": (0, -1, 1.5, "2", True, None, [n], {}, 10**30),
        "num_gpus_per_node": (-1, 1.5, "8", True, None, [8] * (n + 1), [True] * n, {}, [-1] * n, [10**30] * n),
        "accelerator_type": (["NV_GPU"] * (n + 1), *wrong_names),
        "accelerator_model": ([None] * (n + 1), *wrong_names),
        "node_groups": ("a800", {"label": "x", "node_ranks": 0}, [5], [None], [[]], 5),
        "component_placement": ([], {}, "actor: 0-3", None, 5),
        "solver": (
            "fast", 5, {"time_limit": 1}, {"time_limit_s": 0}, {"time_limit_s": -1}, {"time_limit_s": True},
            {"time_limit_s": "60"}, {"num_workers": 0}, {"num_workers": 1.5}, {"seed": -1}, {"seed": "0"},
            {"seed": 2**31}, {"time_limit_s": 10**400}, {"time_limit_s": float("nan")},
        ),
        **{key: (1,) for key in ("num_gpu_per_node", "nodes", "component_placements", "strategy", "node_group")},
    }
    config = case.config()
    section = _section(config)
    key = draw(st.sampled_from([*values, "-num_nodes", "-component_placement"]))
    if key.startswith("-"):
        del section[key[1:]]
        return BrokenCase(config, None, f"cluster without {key[1:]}")
    section[key] = draw(st.sampled_from(values[key]))
    return BrokenCase(config, None, f"cluster {key}: {section[key]!r}")


def _mutate_top_level(draw: st.DrawFn, case: SpecCase) -> BrokenCase:
    config = case.config()
    section = _section(config)
    value, what = draw(st.sampled_from([
        ([config], "a list"), (5, "an int"), (None, "None"), ("no/such/config.yaml", "a missing file"),
        (b"cluster: {}", "bytes"), (1.5, "a float"), ({"cluster": None}, "cluster: None"), ({"cluster": [section]}, "cluster: a list"),
        ({"cluster": "x"}, "cluster: a string"), ({}, "an empty mapping"),
    ]))
    return BrokenCase(value, None, f"top level: {what}")


def _mutate_infeasible(draw: st.DrawFn, case: SpecCase) -> BrokenCase:
    """Rank-based statements that cannot hold: a process or TP group over two nodes, exclusive
    components sharing items, a cap below the load, collocation with a different hardware set."""
    ranked = [c for c in case.components if c.decl is None]
    new = _unused_name(case)
    options: list[tuple[str, Callable[[], BrokenCase]]] = []
    targets = {name for c in case.components if c.collocate_with for name in case.component(c.collocate_with).names}
    for component in ranked:
        layout = expected_ranks(component)
        nodes = [component.items[ranks[0]].node for ranks in layout]
        body = _as_body(component.value)
        if len(set(nodes)) > 1 and not targets & set(component.names):  # a target's TP size shapes its mates
            spread = {**body, "tensor_parallel_size": len(nodes)}
            options.append(("tp group over nodes", lambda c=component, b=spread: BrokenCase(_replace_value(case, c, b), c.name, "TP group over nodes")))
        twin = {k: v for k, v in body.items() if k in ("node_group", "placement")}
        options.append(("exclusive twin", lambda c=component, t=twin: BrokenCase(
            _add_component(case, new, {**t, "exclusive_with": c.name}), new, "exclusive with an identical component")))
        ng = {k: v for k, v in body.items() if k == "node_group"}
        if component.reach != {component.items[0]}:
            options.append(("collocation mismatch", lambda c=component, g=ng: BrokenCase(
                _add_component(case, new, {**g, "placement": "0", "collocate_with": c.name}), new, "collocated, other set")))
        spans = [r for r in range(len(component.items) - 1) if component.items[r].node != component.items[r + 1].node]
        if spans:
            r = draw(st.sampled_from(spans))
            options.append(("explicit over nodes", lambda c=component, g=ng, r=r: BrokenCase(
                _replace_value(case, c, {**g, "placement": [[r, r + 1]]}), c.name, "explicit process over nodes")))
    cap = draw(st.integers(1, 3))
    options.append(("cap", lambda: BrokenCase(
        _add_component(case, new, {"placement": f"0:0-{cap}", "max_processes_per_hardware": cap}), new, "cap below load")))
    _, make = draw(st.sampled_from(options))
    return make()


MUTATIONS: tuple[Callable[[st.DrawFn, SpecCase], BrokenCase], ...] = (
    _mutate_rank_text, _mutate_rank_text, _mutate_short_form, _mutate_body, _mutate_body, _mutate_key,
    _mutate_duplicate_name, _mutate_cluster, _mutate_group, _mutate_top_level, _mutate_infeasible,
)


@st.composite
def broken_configs(draw: st.DrawFn, max_nodes: int = 6) -> BrokenCase:
    """One mutation of a valid spec; every mutation is invalid whatever the rest of the spec is."""
    case = draw(valid_specs(max_nodes))
    mutate = draw(st.sampled_from(MUTATIONS))
    return mutate(draw, case)


@st.composite
def infeasible_specs(draw: st.DrawFn) -> BrokenCase:
    """Declarative specs that pass every arithmetic pre-check (enough items in total, a process
    fits on the largest node) yet have no placement, so only the solver can refuse them."""
    name, other = draw(st.permutations(NAME_POOL))[:2]
    kind = draw(st.sampled_from(["fragmented", "exclusive", "capacity", "collocation", "tp"]))
    if kind == "fragmented":  # h-item blocks leave g mod h GPUs idle per node; one more block than fits
        g = draw(st.sampled_from([3, 5, 6, 7]))
        h = draw(st.sampled_from([x for x in range(2, g) if g % x]))
        least = -(-h // (g % h))
        n = draw(st.integers(least, max(least, 6)))
        placements = {name: {"processes": n * (g // h) + 1, "hardware_per_process": h}}
        return BrokenCase({"cluster": {"num_nodes": n, "num_gpus_per_node": g, "component_placement": placements}}, name, kind)
    if kind == "tp":  # a TP group of t processes needs t GPUs on one node; nodes have g < t
        g = draw(st.integers(1, 4))
        t = draw(st.integers(g + 1, g + 2))
        n = draw(st.integers(-(-t // g), 4))
        placements = {name: {"processes": t, "tensor_parallel_size": t}}
        return BrokenCase({"cluster": {"num_nodes": n, "num_gpus_per_node": g, "component_placement": placements}}, name, kind)
    n = draw(st.integers(1, 3))
    g = draw(st.integers(2, 4))
    total = n * g
    used = draw(st.integers(1, total - 1))
    if kind == "exclusive":  # the other component leaves total - used items; one more is needed
        spec = {"processes": total - used + 1, "exclusive_with": other}
        placements = {other: f"0-{used - 1}", name: spec}
    elif kind == "capacity":  # every item is needed, but item 0 already holds `cap` processes
        cap = draw(st.integers(1, 3))
        placements = {other: f"0:0-{cap - 1}", name: {"processes": total, "max_processes_per_hardware": cap}}
    else:  # the collocated component cannot cover exactly the other's `used` items
        processes = draw(st.sampled_from([q for q in range(1, total + 1) if q != used]))
        placements = {other: f"0-{used - 1}", name: {"processes": processes, "collocate_with": other}}
    return BrokenCase({"cluster": {"num_nodes": n, "num_gpus_per_node": g, "component_placement": placements}}, name, kind)
