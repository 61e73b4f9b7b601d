"""Hypothesis strategies for the differential tests: clusters in RLinf's own ``cluster:`` form
(node groups with accelerators, robots, ``ignore_hardware`` and ``env_configs``), and either a
``component_placement`` for ``HybridComponentPlacement`` or the arguments of one RLinf strategy.

The cases are *not* filtered for validity: both libraries get the same input and must agree on
success or failure, so most cases are valid (built from the resource counts of the drawn groups)
and a steady minority breaks one rule (a range past the end, a process-rank gap, a resource
count that is no multiple, a wrong label, a node rank past the groups). Counts are computed here
from RLinf's documented rules, independently of both libraries.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from hypothesis import strategies as st

GPU_COUNTS = (0, 1, 2, 4, 8)
#: User group labels; 4090 is written as a YAML int, as in RLinf's docs.
LABELS: tuple[Any, ...] = ("a800", 4090, "cpu", "franka", "edge")
NAMES = ("actor", "rollout", "env", "reward", "agent", "inference", "critic")
ROBOT = "Franka"
ACCELERATOR = "Accelerator"


@dataclass(frozen=True)
class GroupKind:
    """What one drawn group's ranks count: ``Accelerator``, ``Franka`` or None (nodes)."""

    label: str
    nodes: tuple[int, ...]
    hardware_type: str | None


@dataclass(frozen=True)
class Case:
    """One differential case: the ``cluster:`` section, the GPUs of each node, and what to run.

    ``kind`` is ``components`` (``HybridComponentPlacement`` of the section's
    ``component_placement``) or a strategy name with its ``args`` (positional, as RLinf takes them).
    """

    section: dict[str, Any]
    gpus: tuple[int, ...]
    kind: str
    args: tuple[Any, ...]
    isolate: bool


@dataclass(frozen=True)
class ClusterDraw:
    section: dict[str, Any]
    gpus: tuple[int, ...]
    groups: dict[str, GroupKind]
    robots: dict[int, int]

    def count(self, labels: Sequence[str]) -> int:
        """Resources the labels select, one group after the other (nodes if any group counts nodes)."""
        kinds = [self.groups[label] for label in labels]
        if any(group.hardware_type is None for group in kinds):
            return sum(len(group.nodes) for group in kinds)
        return sum(self._items(group) for group in kinds)

    def counts_nodes(self, labels: Sequence[str]) -> bool:
        return any(self.groups[label].hardware_type is None for label in labels)

    def _items(self, group: GroupKind) -> int:
        per_node = self.robots if group.hardware_type == ROBOT else dict(enumerate(self.gpus))
        return sum(per_node.get(node, 0) for node in group.nodes)


def rank_text(draw: st.DrawFn, ranks: Sequence[int], available: int) -> Any:
    """A node rank list as RLinf writes it: "0-1,3", an int, "all", with RLinf-accepted blanks
    and stray commas now and then."""
    runs: list[list[int]] = []
    for rank in sorted(ranks):
        if runs and runs[-1][-1] == rank - 1:
            runs[-1].append(rank)
        else:
            runs.append([rank])
    text = ",".join(str(run[0]) if len(run) == 1 else f"{run[0]}-{run[-1]}" for run in runs)
    forms: list[Any] = [text, f" {text} ,", text.replace(",", " , ")]
    if len(ranks) == 1:
        forms.append(ranks[0])
    if len(ranks) == available:
        forms.append("all")
    return draw(st.sampled_from(forms))


@st.composite
def clusters(draw: st.DrawFn) -> ClusterDraw:
    n = draw(st.integers(1, 4))
    gpus = tuple(draw(st.lists(st.sampled_from(GPU_COUNTS), min_size=n, max_size=n)))
    labels = draw(st.lists(st.sampled_from(LABELS), max_size=3, unique=True))
    section: dict[str, Any] = {"num_nodes": n}
    configs, groups, robots = [], {}, {}
    for position, label in enumerate(labels):
        nodes = tuple(sorted(draw(st.sets(st.integers(0, n - 1), min_size=1))))
        config: dict[str, Any] = {"label": label, "node_ranks": rank_text(draw, nodes, n)}
        mode = draw(st.sampled_from(["auto", "auto", "ignore", "robot", "accelerator"]))
        free = [node for node in nodes if node not in robots]
        if mode == "robot" and free:
            robot_nodes = draw(st.lists(st.sampled_from(free), min_size=1, unique=True))
            items = []
            for node in sorted(robot_nodes):
                robots[node] = draw(st.integers(1, 2))
                items += [{"node_rank": node, "robot_ip": f"10.{position}.{node}.{k + 1}"} for k in range(robots[node])]
            config["hardware"] = {"type": ROBOT, "configs": items}
            kind: str | None = ROBOT
        elif mode == "ignore":
            config["ignore_hardware"] = True
            kind = None
        elif mode == "accelerator":
            config["hardware_type"] = ACCELERATOR
            kind = ACCELERATOR
        else:
            kind = ACCELERATOR if any(gpus[node] for node in nodes) else None
        if draw(st.integers(0, 3)) == 0:
            env_nodes = nodes if draw(st.booleans()) else nodes[:1]
            env_ranks = "all" if env_nodes == nodes and draw(st.booleans()) else rank_text(draw, env_nodes, n)
            config["env_configs"] = [{"node_ranks": env_ranks, "env_vars": [{"GLOO_SOCKET_IFNAME": "eth0"}]}]
        configs.append(config)
        groups[str(label)] = GroupKind(str(label), nodes, kind)
    if configs and draw(st.integers(0, 29)) == 29:
        _break_a_group(draw, configs[-1], n)
    if configs:
        section["node_groups"] = configs
    everything = tuple(range(n))
    groups["cluster"] = GroupKind("cluster", everything, ACCELERATOR if any(gpus) else None)
    groups["node"] = GroupKind("node", everything, None)
    return ClusterDraw(section, gpus, groups, robots)


def _break_a_group(draw: st.DrawFn, config: dict[str, Any], num_nodes: int) -> None:
    """One mistake in a node group (both libraries refuse it), or node_ranks as a YAML list,
    which RLinf's docstring allows but its parser refuses (a documented RLinf bug)."""
    mistake = draw(st.sampled_from(["past the last node", "reserved label", "hardware and ignore", "yaml list"]))
    if mistake == "past the last node":
        config["node_ranks"] = f"0-{num_nodes}"
    elif mistake == "reserved label":
        config["label"] = "node"
    elif mistake == "hardware and ignore" and "hardware" in config:
        config["ignore_hardware"] = True
    else:
        config["node_ranks"] = list(range(num_nodes))


@st.composite
def placement_texts(draw: st.DrawFn, total: int, nodes: bool = False) -> str:
    """A placement string over ``total`` resources; mostly valid, one rule broken now and then.

    Over ``nodes`` a process takes one resource, so segments have at least as many processes as
    resources."""
    if draw(st.integers(0, 9)) == 9:
        per = [k for k in range(1, 2 * total + 1) if k % total == 0 or (total % k == 0 and not nodes)]
        return draw(st.sampled_from(["all", "ALL", f"all:0-{draw(st.sampled_from(per)) - 1}"]))
    cuts = sorted(draw(st.sets(st.integers(0, total), min_size=2, max_size=4)))
    segments, next_process = [], 0
    for first, stop in zip(cuts, cuts[1:]):
        if draw(st.booleans()) and len(segments) < 3:
            length = stop - first
            resources = str(first) if length == 1 else f"{first}-{stop - 1}"
            counts = [k for k in (1, 2, 3, 4, 6, 8) if k % length == 0 or (length % k == 0 and not nodes)]
            count = draw(st.sampled_from(counts or [length]))
            if draw(st.booleans()):
                segments.append(f"{resources}:{next_process}-{next_process + count - 1}")
                next_process += count
            else:
                segments.append(resources)
                next_process += length
    if not segments:
        segments.append(f"0-{total - 1}" if total > 1 else "0")
    return _maybe_broken(draw, segments, total)


def _maybe_broken(draw: st.DrawFn, segments: list[str], total: int) -> str:
    mistake = draw(st.integers(0, 39))  # Hypothesis favours 0: make it the no-mistake case
    if mistake == 35:
        segments.append(str(total))  # one past the last resource
    elif mistake == 36:
        segments[0] = f"{segments[0].split(':')[0]}:1-2"  # processes not from 0
    elif mistake == 37:
        segments.append(segments[-1].split(":")[0])  # the same resources again
    elif mistake == 38:
        segments[0] = f"{segments[0].split(':')[0]}:0-4"  # 5 processes: rarely a multiple
    elif mistake == 39:
        segments.insert(0, "")  # a stray comma (RLinf skips it)
    return draw(st.sampled_from([",".join(segments), " , ".join(segments)]))


@st.composite
def node_group_values(draw: st.DrawFn, cluster: ClusterDraw) -> tuple[Any, tuple[str, ...]] | None:
    """None (the cluster group), one label, or two as ``"a, b"``; now and then an unknown label."""
    choice = draw(st.integers(0, 29))
    if choice < 10:
        return None
    usable = [label for label in cluster.groups if cluster.count((label,))]
    if choice == 29:
        return "h100", ("h100",)
    labels = tuple(draw(st.lists(st.sampled_from(usable), min_size=1, max_size=1 + (choice % 4 == 0), unique=True)))
    raw = [int(label) if label.isdigit() else label for label in labels]
    value = raw[0] if len(raw) == 1 else draw(st.sampled_from([", ".join(map(str, raw)), ",".join(map(str, raw)), raw]))
    return value, labels


@st.composite
def component_sections(draw: st.DrawFn, cluster: ClusterDraw) -> dict[str, Any]:
    names = draw(st.lists(st.sampled_from(NAMES), min_size=1, max_size=4, unique=True))
    placement: dict[str, Any] = {}
    while names:
        shared = names[:draw(st.integers(1, min(2, len(names))))]
        names = names[len(shared):]
        key = draw(st.sampled_from([",".join(shared), " , ".join(shared)]))
        group = draw(node_group_values(cluster))
        labels = group[1] if group else ("cluster",)
        known = all(label in cluster.groups for label in labels)
        total = cluster.count(labels) if known else 4
        text = draw(placement_texts(max(total, 1), known and cluster.counts_nodes(labels)))
        if group is None:
            placement[key] = int(text) if text.isdigit() and draw(st.booleans()) else text
        else:
            placement[key] = {"node_group": group[0], "placement": text}
    return placement


@st.composite
def strategy_args(draw: st.DrawFn, cluster: ClusterDraw, kind: str) -> tuple[Any, ...]:
    group = draw(node_group_values(cluster))
    labels = group[1] if group else ("cluster",)
    known = all(label in cluster.groups for label in labels)
    label_arg = None if group is None else draw(st.sampled_from([list(labels), ",".join(labels) if len(labels) == 1 else list(labels)]))
    if kind == "node":
        nodes = sum(len(cluster.groups[label].nodes) for label in labels) if known else 2
        ranks = draw(st.lists(st.integers(0, nodes - 1), min_size=1, max_size=4))
        if draw(st.integers(0, 7)) == 7:
            ranks.append(nodes)  # one past the groups' nodes
        return (ranks, label_arg)
    total = max(cluster.count(labels) if known else 4, 1)
    if kind == "flexible":
        return (draw(st.lists(_flexible_process(total), min_size=1, max_size=4)), label_arg)
    per_process, stride = draw(st.sampled_from([1, 2, 4])), draw(st.sampled_from([1, 1, 2]))
    block = per_process * stride
    start = draw(st.integers(0, max(total - block, 0)))
    blocks = draw(st.integers(1, max(1, (total - start) // block)))
    end = start + blocks * block - 1 + draw(st.sampled_from([0, 0, 0, 0, 1]))  # sometimes not a multiple
    return (start, end, per_process, stride, label_arg)


def _flexible_process(total: int) -> st.SearchStrategy[list[int]]:
    """Mostly one rank or two neighbours (often on one node), sometimes any ranks."""
    near = st.integers(0, total - 1).flatmap(lambda first: st.sampled_from([[first], [first, min(first + 1, total)], [min(first + 1, total), first]]))
    return near | st.lists(st.integers(0, total), min_size=1, max_size=3)


@st.composite
def cases(draw: st.DrawFn) -> Case:
    cluster = draw(clusters())
    kind = draw(st.sampled_from(["components"] * 5 + ["flexible", "packed", "node"]))
    section = dict(cluster.section)
    if kind == "components":
        section["component_placement"] = draw(component_sections(cluster))
        args: tuple[Any, ...] = ()
    else:
        section["component_placement"] = {}
        args = draw(strategy_args(cluster, kind))
    return Case(section, cluster.gpus, kind, args, isolate=draw(st.sampled_from([True, True, True, False])))
