"""Many topology domains: the count model with the domains dropped first, proven when its layout keeps them.

The count model states a required or preferred domain per value of its label
(``domain_levels.py``, ``spanning.py``): the nodes of each value are shapes of their own, so the
model grows with the domains, not with the node shapes. On 4,096 nodes in 512 racks
(``topology:4096:0``) that is 512 runs of some 30 whole-node patterns, past what the model holds
(``patterns.MAX_PATTERNS``): the count path declined and first fit answered; on 16,384 nodes it
ran out of its share of the time limit.

Dropping every domain rule of the counted components is a relaxation: a required pipeline rule
dropped allows more placements (a required tensor-parallel one lets groups span nodes: specs
with one are counted as stated), a preferred one dropped leaves out its ``topology`` term (never
negative), every other term is the same. So the dropped spec's bound is a bound of the spec
itself, and its answer is the spec's optimum when that placement keeps every required domain
and its value under the spec's own objective (preferred domains priced) meets that bound. The
count model's layout numbers each class's processes node by node, in node order, so where
domains are runs of alike nodes (racks, zones) holding whole units it often keeps them
(``topology:4096:0``: 0.07 s, proven). Where it does not (units cut at a domain's edge, or a
``topology`` term above the bound), its node contents are moved between alike nodes so each
domain holds whole units (``alike_domains.py``: ``topology overlaps:4096:0``, ``topology
mixes:16384:1``, proven); where that does not apply either, the spec is counted as stated,
as before, and the better answer kept (the dropped spec's bound may prove it); where the stated
model runs out of time, the dropped spec's answer, when it keeps every required domain, is the count path's, unproven.

Only past ``DROPPED_FIRST_PAST`` domain values is the dropped spec tried first: below it the
stated model answers in time, and the answers there stay the ones it gives.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from dataclasses import replace

import numpy as np

from solver_placement._arrays import distinct_pairs
from solver_placement._errors import SolverTimeoutError
from solver_placement._solver.answer import Answer, Declined, through
from solver_placement._solver.assignment import Assignment
from solver_placement._solver.counts.alike_domains import arranged
from solver_placement._solver.counts.preferred import counted_components, forced_spans
from solver_placement._solver.evaluate import objective_value
from solver_placement._solver.labels import label_values
from solver_placement._solver.options import SolveStatus
from solver_placement._specification.placement_spec import PlacementSpec

#: Values of the domain labels (summed over the counted rules' distinct labels) past which the
#: count model is tried with the domains dropped first. The stated model makes one run of alike
#: nodes per value: the benchmark's topology families answer in time up to 256 racks (2,048
#: nodes: 0.3 s) and decline or run out of time from 512 racks (4,096 nodes).
DROPPED_FIRST_PAST = 256

log = logging.getLogger(__name__)


def many_domains(spec: PlacementSpec) -> bool:
    """Whether the counted components' domain rules name more than ``DROPPED_FIRST_PAST`` label
    values in all (each distinct label counted once), none of them a required tensor-parallel
    domain: that one lets a group span the nodes of its domain (``tensor_domains.py``), so
    dropping it would forbid placements, not allow more (no relaxation)."""
    rules = [rule for c in counted_components(spec).values() for rule in c.constraints.topology]
    if any(rule.required and rule.group == "tensor_parallel" for rule in rules):
        return False
    labels = sorted({rule.label for rule in rules})
    return sum(int(np.unique(label_values(spec.cluster, label)).size) for label in labels) > DROPPED_FIRST_PAST


def dropped_domains(spec: PlacementSpec) -> PlacementSpec:
    """The spec with every domain rule of the counted components dropped (a relaxation)."""
    dropped = {
        name: replace(component, constraints=replace(component.constraints, topology=()))
        for name, component in counted_components(spec).items()
        if component.constraints.topology
    }
    return spec.with_rules({**spec.components, **dropped})


def dropped_first(
    spec: PlacementSpec,
    weights: Mapping[str, int],
    count: Callable[[PlacementSpec], Answer | Declined],
    as_stated: Callable[[], Answer | Declined],
) -> Answer | Declined:
    """The spec counted with its domains dropped first (``count`` counts a view): that answer,
    or its contents moved to keep the domains (``alike_domains.py``), where it is proven for the
    spec itself, else the spec counted as stated (``as_stated``),
    the better of the two where the dropped answer keeps every required domain. The dropped
    spec's bound is the spec's too, so it may prove the stated answer; and where the stated
    model runs out of its share of the time (16,384 nodes whose contents no move keeps whole), the
    dropped answer is the count path's, unproven, rather than none."""
    dropped = count(dropped_domains(spec))
    moved = arranged(spec, dropped) if isinstance(dropped, Answer) and _cut(spec, weights, dropped) else None  # its nodes moved to keep the domains (``alike_domains.py``)
    kept = None if moved is None else _kept(spec, weights, moved, "its nodes' contents then moved to keep every domain")
    if kept is None or kept.status != SolveStatus.OPTIMAL:  # (read once: 0.2 s of 16,384 nodes)
        kept = _better(_kept(spec, weights, dropped, "its layout keeps every required domain"), kept)
    if kept is not None and kept.status == SolveStatus.OPTIMAL:
        return kept
    try:
        stated = as_stated()
    except SolverTimeoutError:
        if kept is None:
            raise
        log.debug("the spec as stated ran out of time: the answer with the domains dropped, unproven")
        return kept
    if kept is None or isinstance(stated, Declined):
        return stated if kept is None else kept
    bound = max(kept.known("bound"), stated.known("bound"))
    best = min((stated, kept), key=lambda answer: answer.known("objective"))  # the stated one on a tie
    status = SolveStatus.OPTIMAL if best.known("objective") <= bound else SolveStatus.FEASIBLE
    return replace(best, status=status, bound=min(bound, best.known("objective")))


def _cut(spec: PlacementSpec, weights: Mapping[str, int], answer: Answer) -> bool:
    """Whether the dropped spec's layout cuts a unit at a domain's edge where that is what keeps
    it from the bound: a required domain's, or a preferred one's with ``topology`` weighed (a
    layout that cuts none stays as it is, proven or not)."""
    return answer.assignments is not None and any(required_spans(spec, answer.assignments, preferred=bool(weights.get("topology", 0))).values())


def _better(first: Answer | None, second: Answer | None) -> Answer | None:
    """The one of lower value (``first`` on a tie), either where the other is None."""
    if first is None or second is None:
        return first if second is None else second
    return second if second.known("objective") < first.known("objective") else first


def _kept(spec: PlacementSpec, weights: Mapping[str, int], answer: Answer | Declined, how: str) -> Answer | None:
    """The dropped spec's answer as the spec's (its value under the spec's own objective, its
    bound the dropped spec's plus the spans its preferred domains force on every layout,
    ``least_spans``; proven where that meets the bound), or None where it has none or breaks a
    required domain; ``how`` it keeps them, for the notes."""
    if not isinstance(answer, Answer) or answer.assignments is None or answer.bound is None:
        return None
    if any(spans for spans in required_spans(spec, answer.assignments).values()):
        return None
    value = objective_value(spec, spec.requests, answer.assignments, weights, {})
    bound = answer.bound + (int(weights.get("topology", 0)) * forced_spans(spec) if weights.get("topology") else 0)  # the spans no layout avoids
    proven = answer.status == SolveStatus.OPTIMAL and value <= bound
    kept = replace(answer, status=SolveStatus.OPTIMAL if proven else SolveStatus.FEASIBLE, objective=value, bound=min(bound, value), primary=value)
    return through(kept, f"domains too many to count one by one: the spec counted with them dropped (a bound for the spec), {how}")


def required_spans(spec: PlacementSpec, taken: Mapping[str, Assignment], preferred: bool = False) -> dict[str, int]:
    """Per counted component with required domain rules (and preferred ones with ``preferred``),
    the label values its units (tensor-parallel groups, or pipelines, of consecutive ranks)
    span beyond their first: 0 where every unit keeps its domain."""
    found = {}
    for name, component in counted_components(spec).items():
        rules = component.constraints
        if name not in taken or component.rule_owner != name:
            continue
        assignment = taken[name]
        unit_of = np.repeat(np.arange(assignment.num_processes), np.diff(assignment.indptr))
        spans = 0
        for rule in rules.topology:
            size = rules.tensor_parallel_size * (rules.pipeline_parallel_size if rule.group == "pipeline_parallel" else 1)
            if not (rule.required or preferred) or size <= 1:
                continue
            held = label_values(spec.cluster, rule.label)[spec.cluster.hw_node[assignment.hardware]]
            units = unit_of // size  # ascending: the processes in rank order
            spans += distinct_pairs(units, held) - (int(np.count_nonzero(np.diff(units))) + 1 if units.size else 0)  # (unit, label value) pairs less the units
        found[name] = spans
    return found


__all__ = ["DROPPED_FIRST_PAST", "dropped_domains", "many_domains", "dropped_first", "required_spans"]
