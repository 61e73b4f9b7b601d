"""Preferred domains no placement keeps, their ``topology`` term stated by counts.

``preferred.py`` counts a preferred domain as required; when that has no placement (pipelines
wider than a domain, or more of them than the domains hold whole) some units must span domains,
and the ``topology`` term counts, per unit, the domains it touches beyond its first
(``rules/one_of.py``). Its least value is a function of how many of the class's GPUs each
domain holds, which the count model already counts: cut a unit of ``s`` GPUs into ``modulus``
slots of ``g = gcd(s, width)`` GPUs (a group of ``width`` GPUs is ``scale`` slots), and say a
domain ``d`` holds ``k_d`` groups, so ``scale * k_d = modulus * q_d + r_d``. Then the least
``topology`` term is ``#{d: r_d > 0}`` less the most sets the nonzero remainders split into
that each add up to a multiple of ``modulus``.

- *No layout does better.* Join each unit to the domains it touches: the term is the edges
  less the units, and each connected piece of that graph has at least its units plus its
  domains less one edges, so the term is at least the domains less the pieces; a piece's
  domains hold whole units, so their remainders add up to a multiple of ``modulus``.
- *The layout meets it.* Number the member's processes domain by domain: the domains with no
  remainder first, then each set of a best split, its domains one after another. A set starts
  where a unit starts; a minimal set (no part of it adds up to a multiple) has no unit boundary
  between two of its domains, so its units touch its domains ``len(set) - 1`` times beyond
  their first.

So the count model chooses, per domain, its remainder (one boolean per value it can leave) and
how many of each minimal set to use (``zero_sums.py``), and weighs ``len(set) - 1`` per set:
its optimum is the spec's, proven by its own bound. Each member numbers its own processes, so
rules of several members (of one class or of several) add their terms. A member follows a
preferred domain when its required domains lie inside it and hold units that divide its unit
(its order then keeps them: the preferred domain's sets on the outside, the required levels
inside). A member's second such rule, or one its required domains do not fit inside, is priced
as if it had an order of its own: a bound of its term, not the term, so the model's optimum
bounds the spec's and the answer is returned only when its layout meets it. Where it misses,
the caller states the member's pipeline rules on all their labels together, over the labels'
cells (``crossing.py``: exact, whether the labels nest or cross), and only where that does not
apply (rules on tensor-parallel groups, or too many sets of cells) tries each rule's order first
and declines, naming both costs.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from math import gcd

import numpy as np

from solver_placement._errors import InternalError
from solver_placement._solver.counts.crossing import joint_level
from solver_placement._solver.counts.domain_levels import JointLevel, PricedLevel, domain_levels, member_levels, node_order
from solver_placement._solver.counts.preferred import costly_preferences
from solver_placement._solver.counts.problem import CountClass, CountProblem
from solver_placement._solver.counts.zero_sums import MAX_GROUPINGS, TooManyGroupings, minimal_zero_sums
from solver_placement._solver.labels import label_values
from solver_placement._specification.candidates import ComponentRequest
from solver_placement._specification.grammar import DomainRule
from solver_placement._specification.placement_spec import PlacementSpec


def spanned_rules(spec: PlacementSpec) -> list[tuple[str, DomainRule]]:
    """The preferred rules whose units may span domains, with their rule owners."""
    return costly_preferences(spec)


def rule_orders(rules: Sequence[tuple[str, DomainRule]]) -> list[tuple[tuple[str, DomainRule], ...]]:
    """The orders the count path prices ``rules`` in: as the spec lists them, then each rotation.
    A member follows the first of its rules that fits (:func:`with_priced`) and the others are a
    bound, so a layout that misses the bound under one order may meet it under another (every
    order states the same bound: the model's terms do not depend on which rule is followed);
    the rotations are tried only where the rules cannot be stated together (``crossing.py``)."""
    return [(*rules[i:], *rules[:i]) for i in range(len(rules))]


def joins_labels(spec: PlacementSpec, rules: Sequence[tuple[str, DomainRule]]) -> bool:
    """Whether a member's preferred domains and the domains it requires are on two labels or more
    (then its rules may be stated together, :func:`with_priced` with ``joint``)."""
    return any(len(_labels(spec, owner, [rule for named, rule in rules if named == owner])) > 1 for owner, _ in rules)


def _labels(spec: PlacementSpec, owner: str, preferred: Sequence[DomainRule]) -> set[str]:
    """The labels of ``owner``'s ``preferred`` rules and of the rules it requires."""
    return {rule.label for rule in (*preferred, *(r for r in spec.components[owner].constraints.topology if r.required))}


def with_priced(
    problem: CountProblem,
    spec: PlacementSpec,
    requests: Mapping[str, ComponentRequest],
    rules: Sequence[tuple[str, DomainRule]],
    check: Callable[[str], None],
    joint: bool = False,
) -> CountProblem | str:
    """``problem`` with each preferred rule priced in its member's class, or why not. A member
    follows the first of its rules its required levels fit inside (``ordered``); the others are
    priced as if each had an order of its own (a bound, met or not by the layout). With
    ``joint``, a member's rules on several labels are stated together where they can be
    (``crossing.py``: exact), the rest as above."""
    classes = list(problem.classes)
    together = _joint_levels(problem, spec, requests, rules, check) if joint else {}
    if isinstance(together, str):
        return together
    if joint and not together:
        return "no member's preferred rules can be stated together (rules on tensor-parallel groups, or groups its tensor-parallel groups do not tile)"
    for held, stated in together.values():
        classes[held] = replace(classes[held], joint=(*classes[held].joint, stated))
    for owner, rule in rules:
        c = next((i for i, found in enumerate(classes) if owner in found.members), None)
        name = f"{owner}: topology ({rule.group}.{rule.label}: prefer)"
        if c is None:
            return f"{name}, which no placement keeps, on a component the count model does not count"
        count_class = replace(classes[c], levels=domain_levels(spec, requests, classes[c].members, classes[c].width, own=True))
        if owner in together:
            classes[c] = count_class
            continue
        level = _priced_level(spec, requests, problem, c, count_class, owner, rule, check)
        if isinstance(level, str):
            return f"{name}, which no placement keeps: {level}"
        if level is not None and level.ordered and any(other.member == owner and other.ordered for other in count_class.priced):
            level = replace(level, ordered=False)
        classes[c] = replace(count_class, priced=(*count_class.priced, level)) if level is not None else count_class
    return replace(problem, classes=tuple(classes))


def _joint_levels(
    problem: CountProblem,
    spec: PlacementSpec,
    requests: Mapping[str, ComponentRequest],
    rules: Sequence[tuple[str, DomainRule]],
    check: Callable[[str], None],
) -> dict[str, tuple[int, JointLevel]] | str:
    """Per member whose preferred and required rules are on two labels or more, its class and
    its preferred rules stated together with the required ones (``crossing.py``), where they
    can be; or why not (too many boxes)."""
    by_owner: dict[str, list[DomainRule]] = {}
    for owner, rule in rules:
        by_owner.setdefault(owner, []).append(rule)
    found: dict[str, tuple[int, JointLevel]] = {}
    for owner, own in by_owner.items():
        c = next((i for i, count_class in enumerate(problem.classes) if owner in count_class.members), None)
        if c is None or len(_labels(spec, owner, own)) < 2:
            continue
        level = joint_level(spec, requests, problem, c, owner, own, check)
        if isinstance(level, str):
            return f"{owner}: preferred domains on {len(_labels(spec, owner, own))} labels with the domains it requires, which no placement keeps: {level}"
        if level is not None:
            found[owner] = (c, level)
    return found


def _priced_level(
    spec: PlacementSpec,
    requests: Mapping[str, ComponentRequest],
    problem: CountProblem,
    c: int,
    count_class: CountClass,
    owner: str,
    rule: DomainRule,
    check: Callable[[str], None],
) -> PricedLevel | str | None:
    """``owner``'s preferred ``rule`` as a priced level of its class; None when its units lie
    inside one group (they cost nothing), or why it is not stated. It can be ``ordered`` when
    the member's required domains lie inside its domains and hold units that divide its unit."""
    rules = spec.components[owner].constraints
    amount = int(requests[owner].amount[0])
    size = rules.tensor_parallel_size * (rules.pipeline_parallel_size if rule.group == "pipeline_parallel" else 1) * amount
    slot = gcd(size, count_class.width)
    if size <= slot:
        return None
    key = label_values(spec.cluster, rule.label)
    inside = member_levels(count_class.levels, owner)
    dividing = all(size % (rules.tensor_parallel_size * (rules.pipeline_parallel_size if other.group == "pipeline_parallel" else 1) * amount) == 0
                   for other in rules.topology if other.required)  # fmt: skip
    nested = all(np.unique(np.stack([level.key, key], axis=1), axis=0).shape[0] == np.unique(level.key).size for level in inside)
    scale, modulus = count_class.width // slot, size // slot
    step = max((level.multiple for level in inside), default=1) if nested else 1  # a domain of whole required domains
    reach = _reach(problem, c, count_class, key, scale, modulus, step)
    available: dict[int, int] = {}
    for values in reach:
        for v in values:
            available[v] = available.get(v, 0) + 1
    try:
        groupings = minimal_zero_sums(modulus, available, sum(1 for values in reach if len(values) > 1), check)
    except TooManyGroupings:
        return f"more than {MAX_GROUPINGS:,} ways its domains' remainders close whole units (units of {modulus} slots)"
    return PricedLevel(owner, scale, modulus, key, reach, tuple(groupings), f"{owner}: topology.{rule.group}.{rule.label}", dividing and nested)


def _reach(problem: CountProblem, c: int, count_class: CountClass, key: np.ndarray, scale: int, modulus: int, step: int) -> tuple[tuple[int, ...], ...]:
    """Per domain of ``key``, the remainders (0 first) its groups of the class may leave: a
    multiple of ``step`` groups (the domain is whole domains of the member's required levels,
    each a multiple of its level's groups, the coarsest a multiple of the others), at most the
    groups its allowed nodes have room for (their GPUs less those the class is kept off), and no
    more than the class has."""
    num_nodes = problem.allowed.shape[1]
    room = np.bincount(problem.hw_node, minlength=num_nodes) - problem.blocked_per_node(c, num_nodes)
    per_node = np.where(problem.allowed[c], room // count_class.width, 0)
    most = np.minimum(np.bincount(key, weights=per_node, minlength=int(key.max()) + 1).astype(np.int64), count_class.groups)
    return tuple(tuple(sorted({scale * k % modulus for k in range(0, int(held) + 1, step)})) for held in most.tolist())


def spanning_order(member: str, count_class: CountClass, priced: PricedLevel, groups_per_node: np.ndarray, uses: Sequence[int]) -> np.ndarray:
    """Per node, its position in the order ``member`` numbers its processes: domains without a
    remainder first, then the domains of each set the count model chose (``uses``: how many of
    each grouping), one after another; inside a domain, the member's required levels' order
    (nodes in rank order without any)."""
    num_nodes = groups_per_node.size
    held = np.bincount(priced.key, weights=groups_per_node, minlength=int(priced.key.max()) + 1).astype(np.int64)
    _, first = np.unique(priced.key, return_index=True)
    by_first = sorted(range(held.size), key=lambda d: int(first[d]))
    remainder = priced.scale * held % priced.modulus
    sequence = [d for d in by_first if remainder[d] == 0]
    left: dict[int, list[int]] = {}
    for d in by_first:
        if remainder[d]:
            left.setdefault(int(remainder[d]), []).append(d)
    for grouping, count in zip(priced.groupings, uses):
        for _ in range(count):
            for v in grouping:
                if not left.get(v):
                    raise InternalError(f"{priced.rule}: the count model's sets of remainders do not match its domains'")
                sequence.append(left[v].pop(0))
    if any(left.values()):
        raise InternalError(f"{priced.rule}: a domain's remainder is in none of the count model's sets")
    rank = np.empty(held.size, dtype=np.int64)
    rank[sequence] = np.arange(len(sequence))
    inside = node_order(member_levels(count_class.levels, member), num_nodes)
    return rank[priced.key] * num_nodes + inside


__all__ = ["joins_labels", "rule_orders", "spanned_rules", "spanning_order", "with_priced"]
