"""What each component needs, counted: items per node it may use, and the blocks it must fit.

A counting bound never looks at *which* item a process takes, only at how many items of each
node it could take and in what blocks: a tensor-parallel group must sit on one node, so a node
with ``free`` candidate GPUs holds at most ``free // (tp * gpus_per_process)`` groups. Rank
strings and filled ``resources`` windows use a fixed set of items, so they are counted as
constants. Every number comes with the user statement it follows from.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

import numpy as np

from solver_placement._errors import Statement, agreeing, counted
from solver_placement._solver.labels import label_values
from solver_placement._solver.statements import AMOUNT_RULE, COUNTING, noun, shape_keys
from solver_placement._specification.candidates import ComponentRequest
from solver_placement._specification.grammar import Declarative
from solver_placement._specification.placement_spec import PlacementSpec


@dataclass(frozen=True)
class Need:
    """One rule-owning component, as counting sees it.

    ``hardware``: its distinct candidate items (physical ids; for a fixed component, the items it
    uses), ``items[n]`` how many of them node ``n`` has. A free component needs ``units`` blocks of ``width`` items, each block on one node.
    """

    name: str
    statement: Statement
    hardware: np.ndarray
    items: np.ndarray
    fixed: bool
    units: int = 0
    width: int = 1
    copies: int = 1
    #: what one unit is called, singular and plural (a process, or a tensor-parallel group)
    block: tuple[str, str] = ("process", "processes")

    @property
    def total(self) -> int:
        """Items the component occupies in every layout."""
        return int(self.items.sum()) if self.fixed else self.units * self.width

    def fits(self) -> np.ndarray:
        """Per node, how many of its blocks the node's candidates hold on their own."""
        return self.items // self.width if not self.fixed else np.zeros_like(self.items)


def is_free(request: ComponentRequest) -> bool:
    """A declarative component whose processes may take any of its candidates (no filled window)."""
    amount = request.amount  # one size for every process (compared, not ``np.unique``: its hash path took 0.02-0.1 s a call)
    return not request.determined and request.fill_share is None and amount.size > 0 and bool((amount == amount[0]).all())




def needs_of(spec: PlacementSpec) -> dict[str, Need]:
    """Every rule-owning component's need, in config order (the components sharing each one's rule
    counted in one pass: a scan of all components per component took 37 s for 8,000)."""
    sharing = Counter(component.shares_rule_with for component in spec.components.values())
    return {name: _need(spec, request, 1 + sharing[name]) for name, request in spec.requests.items()}


def _need(spec: PlacementSpec, request: ComponentRequest, copies: int) -> Need:
    hardware = request.window_items
    items = np.bincount(spec.cluster.hw_node[hardware], minlength=spec.cluster.num_nodes).astype(np.int64)
    unit = noun(request)
    if not is_free(request):
        used = int(items.sum())
        form = request.spec.form
        where, written = (f'resources "{form.resources or "all"}"', "resources") if isinstance(form, Declarative) else (f'placement "{request.spec.text}"', "placement")
        statement = Statement(f"{request.name}: {where} uses {counted(used, unit)}", request.name, (written,), AMOUNT_RULE)
        return Need(request.name, statement, hardware, items, fixed=True, copies=copies)
    amount, processes = int(request.amount[0]), request.num_processes
    tp = tensor_group_on_node(spec, request)
    text = f"{request.name} needs {counted(processes, 'process', 'processes')} x {counted(amount, unit)}"
    keys = shape_keys(request)
    if tp > 1:
        text += f" in tensor-parallel groups of {tp} ({counted(processes // tp, 'group')} of {counted(amount * tp, unit)}, each on one node)"
        statement = Statement(text, request.name, (*keys, "tensor_parallel_size"), AMOUNT_RULE)
        return Need(request.name, statement, hardware, items, fixed=False, units=processes // tp, width=amount * tp, copies=copies, block=("group", "groups"))
    return Need(request.name, Statement(text, request.name, keys, AMOUNT_RULE), hardware, items, fixed=False, units=processes, width=amount, copies=copies)


def tensor_group_on_node(spec: PlacementSpec, request: ComponentRequest) -> int:
    """The tensor-parallel size whose groups must each sit on one node (1 when they need not,
    or when the processes do not split into whole groups)."""
    rules = spec.components[request.name].constraints
    tp = rules.tensor_parallel_size
    domain = any(rule.group == "tensor_parallel" and rule.required for rule in rules.topology)
    return tp if tp > 1 and not domain and request.num_processes % tp == 0 else 1


def domain_conflicts(spec: PlacementSpec, needs: dict[str, Need]) -> list[list[Statement]]:
    """Required ``topology`` domains too small for one component's groups, each a conflict.

    A group (or pipeline) of ``g`` processes required inside one value of a label needs that
    many blocks in one domain; the domains of the component's candidates hold
    ``sum(free // width)`` of them.
    """
    conflicts = []
    for name, need in needs.items():
        request = spec.requests[name]
        if need.fixed:
            continue
        rules = spec.components[name].constraints
        amount = int(request.amount[0])
        for rule in rules.topology:
            size = rules.tensor_parallel_size * (rules.pipeline_parallel_size if rule.group == "pipeline_parallel" else 1)
            if not rule.required or size <= 1 or request.num_processes % size:
                continue
            domain = label_values(spec.cluster, rule.label)
            per_domain = np.bincount(domain, weights=need.items, minlength=int(domain.max()) + 1).astype(np.int64)
            room = int((per_domain // (amount * size)).sum())
            if room < request.num_processes // size:
                unit = "pipeline" if rule.group == "pipeline_parallel" else "tensor-parallel group"
                item = noun(request)
                offer = f"counting: the largest {rule.label!r} domain offers {counted(int(per_domain.max()), item)}, room for {room} such {agreeing(room, unit)}"
                conflicts.append([
                    Statement(f"{name} needs {counted(request.num_processes // size, unit)} of {counted(amount * size, item)}", name,
                              (*shape_keys(request), "tensor_parallel_size", "pipeline_parallel_size"), AMOUNT_RULE),
                    Statement(f"{name}: topology.{rule.group}.{rule.label}: require (each {unit} inside one {rule.label!r} domain)", name,
                              ("topology",), "domains"),
                    Statement(offer, rule=COUNTING, others=(name,)),
                ])  # fmt: skip
    return conflicts

