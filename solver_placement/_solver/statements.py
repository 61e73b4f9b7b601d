"""How the model words statements and hardware in messages.

Every statement a rule adds is a :class:`~solver_placement._errors.Statement`: a record of the
component, the config keys and the rule, with a sentence in the user's terms. When a spec is
infeasible these records *are* the error, so their words are built here, in one vocabulary,
rather than phrased anew by each rule. A single process is always named by
:meth:`ComponentRequest.process_where`.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np

from solver_placement._cluster.cluster import Cluster
from solver_placement._constants import ACCELERATOR, NODE
from solver_placement._errors import Statement, counted
from solver_placement._specification.candidates import ComponentRequest, component_noun
from solver_placement._specification.grammar import Declarative, ExplicitRanks

#: The rule family of a process's amount (``rules/per_process.py``, which imports this module).
AMOUNT_RULE = "per_process"
#: The rule of the arithmetic that closes a counting conflict: no config key, the cluster's offer.
COUNTING = "counting"
#: Hardware items named in full in a list before the rest is only counted.
LISTED_HARDWARE = 4


def noun(request: ComponentRequest) -> str:
    """What one item of the component's hardware is called: ``GPU``, ``node`` or ``item``."""
    return component_noun(request.resources)


def hardware_name(cluster: Cluster, hw: int) -> str:
    """A physical item as the user counts it: ``GPU 3 of node 1`` or ``node 1``."""
    kind = cluster.kind_of(hw)
    node = int(cluster.hw_node[hw])
    if kind == NODE:
        return f"node {node}"
    label = "GPU" if kind == ACCELERATOR else kind
    return f"{label} {int(cluster.hw_local[hw])} of node {node}"


def hardware_list(cluster: Cluster, hws: Iterable[int], limit: int = LISTED_HARDWARE) -> str:
    """The first ``limit`` items by name and how many more, so a message stays one line."""
    hws = list(hws)
    names = ", ".join(hardware_name(cluster, hw) for hw in hws[:limit])
    return names + (f" and {len(hws) - limit} more" if len(hws) > limit else "")


def attribute_values(cluster: Cluster, attribute_name: str, values: Sequence[int]) -> str:
    """Values of a shared attribute (node, hardware type, label domain) as the user knows them."""
    if attribute_name == "hardware type":
        return ", ".join(cluster.kinds[v] for v in values)
    return ", ".join(str(v) for v in values)


def shape_keys(request: ComponentRequest) -> tuple[str, ...]:
    """The keys a declarative component's size rests on: ``processes``, and
    ``hardware_per_process`` when the user wrote it (its default of 1 is nothing to change)."""
    form = request.spec.form
    return ("processes", "hardware_per_process") if isinstance(form, Declarative) and form.hardware_per_process is not None else ("processes",)


def amount_statement(request: ComponentRequest, process: int) -> Statement:
    """The statement that fixes how much hardware a process takes.

    Declarative requests state it once for the component (all processes ask the same); rank
    strings fix it per segment, so a conflict quotes the segment the user wrote and covers its
    processes.
    """
    unit = noun(request)
    if not request.determined:
        text = f"{request.name} needs {counted(request.num_processes, 'process', 'processes')} x {counted(int(request.amount[0]), unit)}"
        return Statement(text, request.name, shape_keys(request), AMOUNT_RULE)
    if isinstance(request.spec.form, ExplicitRanks):
        return Statement(f"{request.name}: placement {request.spec.text} fixes its {unit}s", request.name, ("placement",), AMOUNT_RULE)
    segment = np.flatnonzero(request.origin == request.origin[process])
    text = f'{request.name}: segment "{request.origin_text[request.origin[process]]}" fixes its {unit}s'
    return Statement(text, request.name, ("placement",), AMOUNT_RULE, (int(segment[0]), int(segment[-1])))
