"""The node-level model at scale: how many tensor-parallel groups of each free component each
node holds, when the count model declines the spec.

A declarative process may take any GPU of its node groups, so the flat model has processes x
GPUs candidates (4096 x 8192 at 1,024 nodes) and identical GPUs make the search symmetric.
GPUs of one node are interchangeable for everything but the exact ids, so this model decides
only the integer groups per (component, node), under the node-level form of the rules (counts,
per-node capacity, collocation as equal GPU counts, exclusivity as shared capacity) and the
flat model's objective terms (nodes, balance, lowest nodes first). Unlike the count model it
keeps one variable per node, so it states partial-node windows, per-GPU rules left to the exact
model per node (``narrowing.py``: memory beside rank strings, strides that do not tile a group)
and rank strings its components' partners are not exclusive with. The count model now states
process limits, filled windows, collocation with a rank string, required tensor-parallel
domains, a weighed ``contiguity`` and rank strings' memory and limits on their GPUs itself
(``stacks.py``, ``preset.py``, ``tensor_domains.py``, ``weighed.py``, ``fixed_loads.py``), so
those no longer come here. It also names the statements behind an
infeasibility, where it relaxes the spec (:func:`node_level_conflicts`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

import numpy as np
from ortools.sat.python import cp_model

from solver_placement._cluster.cluster import Cluster
from solver_placement._constants import ACCELERATOR
from solver_placement._errors import Statement, counted
from solver_placement._solver.bounds.core import Guarded, minimal_core
from solver_placement._solver.bounds.needs import is_free, needs_of, tensor_group_on_node
from solver_placement._solver.counts.problem import window_per_node
from solver_placement._solver.options import Budget
from solver_placement._solver.rules.collocation import collocation_statement
from solver_placement._solver.rules.exclusivity import exclusive_statement
from solver_placement._solver.statements import COUNTING
from solver_placement._specification.candidates import ComponentRequest
from solver_placement._specification.placement_spec import PlacementSpec

#: Enforcement literals of a statement, by component name (its own need) or the statement.
Guard = Callable[[str | Statement], list[cp_model.IntVar]]


def _unguarded(key: str | Statement) -> list[cp_model.IntVar]:
    """No enforcement literal: the search states every constraint unconditionally."""
    return []


@dataclass
class NodeLevel:
    """The node-level model: per free component and node, how many of its TP groups go there.

    ``guard(statement)`` gives the enforcement literals of a statement's constraints: none for
    the search (the model narrows the exact model's candidates, ``narrowing.py``), one literal
    per statement when the model names the statements behind an infeasibility (see
    :func:`node_level_conflicts`).
    """

    model: cp_model.CpModel
    free: dict[str, ComponentRequest]
    count: dict[tuple[str, int], cp_model.IntVar]
    unit: dict[str, int]
    width: dict[str, int]

    @classmethod
    def build(
        cls, spec: PlacementSpec, requests: Mapping[str, ComponentRequest], guard: Guard = _unguarded, model: cp_model.CpModel | None = None
    ) -> NodeLevel:
        """The model's variables, each free component's process count and the relations between
        components, node by node (into ``model`` when given, its statements guarded by ``guard``)."""
        cluster = spec.cluster
        free = {name: r for name, r in requests.items() if is_free(r)}
        model = cp_model.CpModel() if model is None else model
        gpus_on = {name: window_per_node(cluster, r) for name, r in free.items()}
        unit = {name: spec.components[name].constraints.tensor_parallel_size for name in free}
        width = {name: unit[name] * int(r.amount[0]) for name, r in free.items()}  # GPUs per TP group
        count = {
            (name, n): model.new_int_var(0, int(gpus_on[name][n]) // width[name], f"{name} groups on node {n}")
            for name in free
            for n in np.flatnonzero(gpus_on[name] >= width[name]).tolist()
        }
        stage = cls(model, free, count, unit, width)
        for name, request in free.items():
            nodes = [n for (c, n) in count if c == name]
            model.add(sum(count[name, n] for n in nodes) * unit[name] == request.num_processes).only_enforce_if(guard(name))
        _fixed_relations(stage, spec, requests, guard)
        return stage

    def minimize(self, weights: Mapping[str, int], cluster: Cluster) -> None:
        """The flat model's node and balance terms, and lowest nodes first for contiguity."""
        model, free, count, width = self.model, self.free, self.count, self.width
        terms = []
        load: dict[int, list[cp_model.LinearExprT]] = {}
        for (name, node), var in count.items():
            on = model.new_bool_var("")
            model.add(var <= int(cluster.gpus_per_node[node]) * on)
            terms.append(weights.get("nodes", 0) * on)
            load.setdefault(node, []).append(var * width[name])
            terms.append(weights.get("contiguity", 0) * int(cluster.gpus_per_node[:node].sum()) * width[name] * var)
        if weights.get("balance", 0) and load:
            peak = model.new_int_var(0, int(cluster.gpus_per_node.max()) * len(free), "peak")
            for items in load.values():
                model.add(sum(items) <= peak)
            terms.append(weights["balance"] * peak)
        model.minimize(sum(terms))


def node_level_conflicts(spec: PlacementSpec, requests: Mapping[str, ComponentRequest], budget: Budget) -> list[Statement]:
    """The statements the node-level model cannot satisfy together, when it is a relaxation of
    the spec (so its infeasibility is the spec's); [] otherwise or when it finds none in time.

    The node-level model relaxes the spec when every item involved is a GPU (exclusivity is counted against
    a node's GPUs) and every free component's TP groups must each sit on one node.
    """
    if not _relaxes(spec, requests):
        return []
    needs = needs_of(spec)
    model = cp_model.CpModel()
    literal: dict[Statement, cp_model.IntVar] = {}

    def guard(key: str | Statement) -> list[cp_model.IntVar]:
        """One assumption literal per statement, made the first time it is asked for."""
        statement = key if isinstance(key, Statement) else needs[key].statement
        if statement not in literal:
            literal[statement] = model.new_bool_var(statement.text)
        return [literal[statement]]

    NodeLevel.build(spec, requests, guard, model)
    own = [need.statement for need in needs.values() if need.statement in literal]
    core = minimal_core(Guarded(model, literal, own, [[s] for s in own]), budget)
    if not core:
        return []
    line = f"counting node by node: no split of their groups over the {counted(spec.cluster.num_nodes, 'node')} satisfies these"
    return [*core, Statement(line, rule=COUNTING, others=tuple(dict.fromkeys(n for s in core for n in s.named)))]


def _relaxes(spec: PlacementSpec, requests: Mapping[str, ComponentRequest]) -> bool:
    """Whether every item involved is a GPU and every free component's TP groups must each sit
    on one node: then any placement of the spec gives the node-level model a solution."""
    cluster = spec.cluster
    gpu = cluster.kinds.index(ACCELERATOR)
    for name, request in requests.items():
        if (cluster.hw_kind[np.unique(request.cand_hw)] != gpu).any():
            return False
        if is_free(request) and tensor_group_on_node(spec, request) != spec.components[name].constraints.tensor_parallel_size:
            return False
    return True


def _fixed_relations(stage: NodeLevel, spec: PlacementSpec, requests: Mapping[str, ComponentRequest], guard: Guard) -> None:
    """Collocation as equal GPU counts per node; exclusivity as shared node capacity. A
    relation with a rank-string component also holds only with that component's placement."""
    cluster, model, free, count, width = spec.cluster, stage.model, stage.free, stage.count, stage.width

    def fixed(name: str) -> list[cp_model.IntVar]:
        """A rank-string component's own statement (its placement), none for a free one."""
        owner = spec.owner_of(name)
        return [] if owner in free else guard(owner)

    def used(name: str, node: int) -> cp_model.LinearExpr | int:
        """The GPUs ``name`` takes on ``node``: its groups there, or its rank strings' count."""
        owner = spec.owner_of(name)
        if owner in free:
            return count[owner, node] * width[owner] if (owner, node) in count else 0
        held = requests[owner].cand_hw
        return int(np.count_nonzero(cluster.hw_node[np.unique(held)] == node))

    for component in spec.components.values():
        rules = component.constraints
        if component.name not in free:
            continue
        if rules.collocate_with is not None:
            together = [*guard(collocation_statement(component.name, rules.collocate_with)), *fixed(rules.collocate_with)]
        for node in range(cluster.num_nodes):
            if rules.collocate_with is not None:
                model.add(used(component.name, node) == used(rules.collocate_with, node)).only_enforce_if(together)
            for other in rules.exclusive_with:
                apart = [*guard(exclusive_statement(component.name, other)), *fixed(other)]
                model.add(used(component.name, node) + used(other, node) <= int(cluster.gpus_per_node[node])).only_enforce_if(apart)


