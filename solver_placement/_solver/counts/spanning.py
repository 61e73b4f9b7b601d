"""A preferred domain no placement keeps, priced in the count model and proven by its bound.

``preferred.py`` counts a preferred domain as required; when that has no placement (pipelines
wider than a domain, or more of them than the domains hold whole) some pipelines must span
domains, and the ``topology`` term counts how many domains each spans beyond its first. That
cost is not a count, but a lower bound of it is. Say a domain ``d`` holds ``k_d`` of a class's
groups and a pipeline is ``P`` of them: at most ``k_d // P`` pipelines lie inside ``d``, its
other ``r_d = k_d % P`` groups belong to pipelines that span; such a pipeline holds at most
``P - 1`` groups of any one domain, so with ``S = sum(r_d) / P`` spanning pipelines the domains
they touch beyond their first are at least ``#{d: r_d > 0} - S``, and at least
``S * (c - 1)`` where ``c`` is the fewest domains a pipeline can touch (no domain holds more
than ``P - 1`` of its groups, nor more than its nodes have room for). The count model states
``k_d = P * i_d + r_d`` per domain and weighs the larger bound, so its optimum is a lower bound of the
spec's. The layout then numbers the class's processes domain by domain: those with no remainder
first, then the others in blocks whose remainders add up to exactly ``P`` where it finds them
(each block then makes pipelines that span only its own domains, one boundary per domain but
the last), which meets the bound whenever such blocks exist. The answer is returned only when
its own ``topology`` term meets the bound, proven; otherwise the count model declines.

Stated for one preferred rule whose pipeline is whole groups of a class with no required
domains; other mixes are declined.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from solver_placement._solver.counts.domain_levels import DomainLevel
from solver_placement._solver.counts.preferred import costly_preferences
from solver_placement._solver.labels import label_values
from solver_placement._specification.candidates import ComponentRequest
from solver_placement._specification.grammar import DomainRule
from solver_placement._specification.placement_spec import PlacementSpec

#: Most domains with a remainder the layout arranges into exact blocks by search (``2**n * n``
#: steps); past it, blocks are formed greedily and the answer is returned only if they meet the bound.
MAX_SEARCHED_DOMAINS = 12


def spanned_rule(spec: PlacementSpec) -> tuple[str, DomainRule] | None:
    """The one preferred rule whose units may span domains (its rule owner and the rule), or None
    when there are several (not stated)."""
    found = costly_preferences(spec)
    return found[0] if len(found) == 1 else None


def priced_level(spec: PlacementSpec, requests: Mapping[str, ComponentRequest], owner: str, rule: DomainRule, width: int) -> DomainLevel | None:
    """``owner``'s preferred ``rule`` as a level of its class (groups of ``width`` GPUs): the
    groups of one pipeline and each node's domain; None when a pipeline is not whole groups."""
    rules = spec.components[owner].constraints
    size = rules.tensor_parallel_size * (rules.pipeline_parallel_size if rule.group == "pipeline_parallel" else 1) * int(requests[owner].amount[0])
    if size % width or size // width < 2:
        return None
    return DomainLevel(size // width, label_values(spec.cluster, rule.label), (f"{owner}: topology.{rule.group}.{rule.label}",))


def spanning_order(level: DomainLevel, groups_per_node: np.ndarray) -> np.ndarray:
    """Per node, its position in the order the class numbers its processes: domains without a
    remainder first, then the others in blocks whose remainders make whole pipelines (each
    domain where its first node is, nodes in rank order inside it)."""
    num_nodes = groups_per_node.size
    held = np.bincount(level.key, weights=groups_per_node, minlength=int(level.key.max()) + 1).astype(np.int64)
    _, first = np.unique(level.key, return_index=True)
    by_first = sorted(range(held.size), key=lambda d: int(first[d]))
    remainder = held % level.multiple
    whole = [d for d in by_first if remainder[d] == 0]
    rest = [d for d in by_first if remainder[d]]
    sequence = whole + _blocks(rest, [int(remainder[d]) for d in rest], level.multiple)
    rank = np.empty(held.size, dtype=np.int64)
    rank[sequence] = np.arange(len(sequence))
    return rank[level.key] * num_nodes + np.arange(num_nodes)


def _blocks(domains: list[int], remainders: list[int], size: int) -> list[int]:
    """``domains`` ordered so consecutive runs of their ``remainders`` add up to exactly ``size``
    (a search over subsets for a few domains, first fit decreasing beyond), else as given."""
    if len(domains) <= MAX_SEARCHED_DOMAINS:
        order = _exact_order(remainders, size)
    else:
        order = _first_fit_order(remainders, size)
    return [domains[i] for i in order] if order is not None else domains


def _exact_order(remainders: list[int], size: int) -> list[int] | None:
    """An order in which every prefix fills blocks of ``size`` without passing one, if any:
    subsets reached by adding one remainder that fits what is left of the current block."""
    count = len(remainders)
    came_from: dict[int, int] = {0: -1}
    frontier = [0]
    while frontier:
        grown = []
        for mask in frontier:
            fill = sum(remainders[i] for i in range(count) if mask >> i & 1) % size
            for i in range(count):
                bigger = mask | 1 << i
                if not mask >> i & 1 and fill + remainders[i] <= size and bigger not in came_from:
                    came_from[bigger] = i
                    grown.append(bigger)
        frontier = grown
    mask = (1 << count) - 1
    if mask not in came_from:
        return None
    order = []
    while mask:
        order.append(came_from[mask])
        mask &= ~(1 << came_from[mask])
    return order[::-1]


def _first_fit_order(remainders: list[int], size: int) -> list[int] | None:
    """Blocks of exactly ``size`` by first fit decreasing, or None when one is left short."""
    blocks: list[tuple[int, list[int]]] = []
    for i in sorted(range(len(remainders)), key=lambda i: -remainders[i]):
        target = next((b for b, (room, _) in enumerate(blocks) if room >= remainders[i]), None)
        if target is None:
            blocks.append((size, []))
            target = len(blocks) - 1
        room, members = blocks[target]
        blocks[target] = (room - remainders[i], [*members, i])
    if any(room for room, _ in blocks):
        return None
    return [i for _, members in blocks for i in members]


__all__ = ["MAX_SEARCHED_DOMAINS", "priced_level", "spanned_rule", "spanning_order"]
