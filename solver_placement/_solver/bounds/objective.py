"""Lower bounds on the objective's terms, by counting (no search).

Why: an answer built without search (first fit) that meets these bounds is proven best at once,
and one within a hair of them can be returned with its gap instead of waiting for the search to
prove what it cannot improve. Each bound holds for every placement of the spec:

- ``nodes``: a component needs at least as many nodes as it takes to hold its groups on the
  nodes that hold the most of them (each node's candidates alone, others ignored); a filled
  window uses exactly its nodes; components linked by ``collocate_with`` use the same hardware,
  so the same nodes: each takes the most any of them needs (a strided actor of three GPUs four
  apart fits 12 of a node's 16 GPUs, so the rollout on its GPUs needs its 180 nodes, not the
  135 its own pairs would fill: ``common strides:335:14`` proven at once, declined before);
- ``balance``: some node holds at least one whole group of the widest component, and at least
  the average of all items over the nodes that may hold any;
- ``topology``: per ``prefer`` rule, each unit (a tensor-parallel group, or a pipeline) takes
  at least its items over the most processes one item may hold, and no label value holds more
  of the component's candidates than its fullest one, so a unit wider than that value spans at
  least ``ceil(items / fullest)`` values (a pipeline of 12 nodes in racks of 8: two; the benchmark's
  ``topology overlaps:65536:0``, 4,188 such pipelines, was left unproven with a bound of no
  spans, its answer exactly one span a pipeline above it);
- ``changes``: 0.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

import numpy as np

from solver_placement._solver.bounds.needs import Need, needs_of
from solver_placement._solver.collocated_sets import linked_sets
from solver_placement._solver.labels import label_values
from solver_placement._specification.candidates import ComponentRequest
from solver_placement._specification.placement_spec import PlacementSpec


def objective_lower_bound(spec: PlacementSpec, weights: Mapping[str, int]) -> int:
    """The weighted sum of the term bounds (``contiguity`` left out: a tie-break, bound 0)."""
    needs = {name: need for name, need in needs_of(spec).items() if not spec.requests[name].determined}
    if not needs:
        return 0
    fewest = {name: _fewest_nodes(need) for name, need in needs.items()}
    nodes = sum(len(linked) * max(fewest[name] for name in linked) for linked in _collocated_sets(spec, list(fewest)))
    widest = max(need.width for need in needs.values() if not need.fixed) if any(not n.fixed for n in needs.values()) else 0
    items = sum(need.total for need in needs.values())
    reachable = int(np.count_nonzero(sum(need.items for need in needs.values())))
    balance = max(widest, -(-items // max(reachable, 1)))
    spans = least_spans(spec, (request for request in spec.requests.values() if not request.determined)) if weights.get("topology") else 0
    return int(weights.get("nodes", 0)) * nodes + int(weights.get("balance", 0)) * balance + int(weights.get("topology", 0)) * spans


def least_spans(spec: PlacementSpec, requests: Iterable[ComponentRequest]) -> int:
    """The least ``topology`` term of the ``prefer`` rules of ``requests`` (free ones): per rule,
    its units times the label values each must span beyond its first (``evaluate._topology``
    counts the same units: ``size`` consecutive processes)."""
    spans = 0
    for request in requests:
        rules = spec.components[request.name].constraints
        for rule in rules.topology:
            size = rules.tensor_parallel_size * (rules.pipeline_parallel_size if rule.group == "pipeline_parallel" else 1)
            if rule.required or size <= 1:
                continue
            fullest = int(np.bincount(label_values(spec.cluster, rule.label)[spec.cluster.hw_node[request.window_items]]).max(initial=0))
            share = max(request.max_share, request.fill_share or 1)  # processes one item may hold
            units = request.amount[: request.num_processes // size * size].reshape(-1, size)
            items = np.maximum(-(-units.sum(axis=1) // share), units.max(axis=1, initial=0))  # the fewest distinct items each unit takes
            spans += int((-(-items // max(fullest, 1)) - 1).clip(min=0).sum())
    return spans


def _fewest_nodes(need: Need) -> int:
    """The fewest nodes that hold the need: a filled window's own, else the nodes holding the
    most of its groups taken until they hold all."""
    if need.fixed:
        return int(np.count_nonzero(need.items))
    held = np.sort(need.fits())[::-1]
    enough = np.flatnonzero(np.cumsum(held) >= need.units)
    return int(enough[0]) + 1 if enough.size else 0


def _collocated_sets(spec: PlacementSpec, names: list[str]) -> list[tuple[str, ...]]:
    """The ``names`` (rule owners) in sets linked by ``collocate_with`` either way."""
    targets: dict[str, str] = {}
    for name in names:
        target = spec.components[name].constraints.collocate_with
        owner = spec.owner_of(target) if target is not None else None
        if owner is not None and owner in names and owner != name:
            targets[name] = owner
    return linked_sets(names, targets)
