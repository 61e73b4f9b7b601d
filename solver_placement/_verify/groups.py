"""Model-parallel groups: ``tensor_parallel_size`` consecutive processes form a TP group,
``tensor_parallel_size * pipeline_parallel_size`` a pipeline, and ``topology`` may move the
boundary they must stay inside from "one node" to one value of a node label."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

from solver_placement._cluster.cluster import Cluster
from solver_placement._specification.grammar import Constraints
from solver_placement._verify.columns import Columns
from solver_placement._verify.placed import Placed


def check_groups(placed: Placed) -> Iterator[str]:
    """Each TP group on one node (or inside one value of a required ``tensor_parallel`` label);
    each pipeline inside one value of a required ``pipeline_parallel`` label. ``prefer`` rules
    are objective terms, not rules, so they are not checked."""
    cluster = placed.cluster
    codes: dict[str | None, np.ndarray] = {}  # per label, each node's value code: read once a check, not once a rule
    for name in placed.held:
        for size, label in _boundaries(placed.spec.components[name].constraints):
            if name in placed.columns and _within(placed.columns[name], cluster, size, codes[label] if label in codes else codes.setdefault(label, _node_codes(cluster, label))):
                continue  # every group inside its boundary, tested by arrays
            held = placed.held[name]
            for start in range(0, len(held), size):
                nodes = sorted({int(cluster.hw_node[hw]) for ids in held[start:start + size] for hw in ids})
                values = {_label_value(cluster, n, label) for n in nodes} if label else {(0, str(n)) for n in nodes}
                if len(values) > 1:
                    where = "nodes" if label is None else f"{label!r} values {sorted(text for _, text in values)} on nodes"
                    yield f"{name}: group of ranks {start}-{start + size - 1} spans {where} {nodes}"


def _boundaries(rules: Constraints) -> list[tuple[int, str | None]]:
    """(group size, label whose value the group must keep; None: the node) per hard rule."""
    required = [rule for rule in rules.topology if rule.required]
    tp, pipeline = rules.tensor_parallel_size, rules.tensor_parallel_size * rules.pipeline_parallel_size
    boundaries: list[tuple[int, str | None]] = []
    if not any(rule.group == "tensor_parallel" for rule in required):
        boundaries.append((tp, None))
    boundaries += [(tp if rule.group == "tensor_parallel" else pipeline, rule.label) for rule in required]
    return boundaries


def _node_codes(cluster: Cluster, label: str | None) -> np.ndarray:
    """Per node, a code of its value of ``label`` (its own index for None: the node itself), equal
    for two nodes exactly where :func:`_label_value` is."""
    if label is None:
        return np.arange(cluster.num_nodes)
    codes: dict[tuple[int, str], int] = {}
    return np.array([codes.setdefault(_label_value(cluster, n, label), len(codes)) for n in range(cluster.num_nodes)])


def _within(columns: Columns, cluster: Cluster, size: int, per_node: np.ndarray) -> bool:
    """Whether every group of ``size`` consecutive processes keeps one value of ``per_node`` (a
    code per node: :func:`_node_codes`), tested by arrays: the least and the greatest agree."""
    if not columns.ids.size:
        return True
    value = per_node[cluster.hw_node[columns.ids]]
    group = columns.row // size
    starts = np.flatnonzero(np.concatenate(([True], group[1:] != group[:-1])))
    return bool(np.array_equal(np.minimum.reduceat(value, starts), np.maximum.reduceat(value, starts)))


def _label_value(cluster: Cluster, node: int, label: str) -> tuple[int, str]:
    """The node's value of ``label`` as the rule compares it: an unlabelled node is a value of its
    own, never equal to a label's text (the text ``node 1`` once matched unlabelled node 1, so a
    group over a node labelled so and node 1 passed as one value, which the solver refuses)."""
    labels = cluster.node_labels[node]
    return (0, str(labels[label])) if label in labels else (1, f"node {node}")
