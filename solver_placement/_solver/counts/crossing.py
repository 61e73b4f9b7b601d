"""Two or more preferred domains of one member on labels that cross, their ``topology`` term
stated jointly over cells.

A pipeline that prefers a rack and a zone costs, per pipeline, the racks it spans less one plus
the zones it spans less one (``rules/one_of.py``, one term per rule). ``spanning.py`` states one
such term exactly by the remainders each domain leaves; two terms stated that way each get their
own best order of the member's processes, and one order rarely serves both (racks not inside
zones), so their sum is only a bound. Here both are stated together (the count path does so
where the layout of one rule's order misses that bound, ``counts/__init__.py``).

Each node lies in one *cell*: one value of every label the member prefers (and of every label
it requires its pipelines in): rack x zone. A pipeline is ``parts`` tensor-parallel groups of
the member (``parts``: its stages), each on one node (a tensor-parallel group lies on one node
in the count model, ``followers.py``), so each in one cell; a group of the class holds
``per_group`` of them. A pipeline's cost depends only on its *box*: per label, the values its
cells have (the sum over preferred labels of their number less one; a required label's box
holds one value). The count model counts, per box, the pipelines counted in it and, per cell
of the box, the member's tensor-parallel groups they take there (``taken``; every cell's, the
class's groups there times ``per_group``, taken by some box), and weighs each box's pipelines
by its cost:

- *No layout does better.* Count every pipeline of a layout in its own box: its tensor-parallel
  groups are taken from that box's cells, and the count is the layout's cost exactly. Its box
  is one the listing finds: it grows boxes one cell at a time, up to ``parts`` cells.
- *The layout meets it.* Any pipelines that take, together, ``taken`` tensor-parallel groups
  from the cells of a box, ``parts`` each, lie in the box, so each costs at most the box's
  cost: dealing each box's groups into pipelines one after another (:func:`joint_ranks`) costs
  at most the model's value, which is the least any layout costs. So the model's optimum is the
  spec's, proven by its own bound, for any number of preferred labels, nested or crossing.

Boxes are listed per member, at most :data:`MAX_BOXES` (the model's size follows the labels'
cells and the stages, never the GPU count); past that the count path states the terms one rule
at a time as before (a bound; ``spanning.py``). Measured: 32 cells (8 racks x 4 zones) and
pipelines of 5 stages pass the limit; 24 cells and 3 stages fit it, but CP-SAT finds no answer
to that model in 10 s on 64 nodes (neither does the one-rule model).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

import numpy as np
from ortools.sat.python import cp_model

from solver_placement._errors import InternalError
from solver_placement._solver.counts.domain_levels import JointLevel
from solver_placement._solver.counts.problem import CountClass, CountProblem
from solver_placement._solver.labels import label_values
from solver_placement._specification.candidates import ComponentRequest
from solver_placement._specification.grammar import DomainRule
from solver_placement._specification.placement_spec import PlacementSpec

#: Most boxes listed for one member (an integer variable each, and one per cell of each): pipelines
#: of 5 stages over 3 racks x 3 zones have 49; past a few thousand the terms are stated one rule
#: at a time (a bound only).
MAX_BOXES = 2_000


def joint_level(
    spec: PlacementSpec,
    requests: Mapping[str, ComponentRequest],
    problem: CountProblem,
    c: int,
    owner: str,
    rules: Sequence[DomainRule],
    check: Callable[[str], None],
) -> JointLevel | str | None:
    """``owner``'s preferred ``rules`` (two or more, of class ``c``) stated together, or why
    not (too many boxes); None where they are not all pipeline rules, where the member requires
    a tensor-parallel domain its groups may span, or where its tensor-parallel groups do not
    tile the class's groups (the caller states them one rule at a time)."""
    count_class = problem.classes[c]
    constraints = spec.components[owner].constraints
    amount = int(requests[owner].amount[0])
    part_gpus = constraints.tensor_parallel_size * amount
    required = [rule for rule in constraints.topology if rule.required]
    if any(rule.group != "pipeline_parallel" for rule in (*rules, *required)) or count_class.width % part_gpus:
        return None
    parts = constraints.pipeline_parallel_size
    preferred = [label_values(spec.cluster, rule.label) for rule in rules]
    kept = [label_values(spec.cluster, rule.label) for rule in required]
    cells, key = np.unique(np.stack([*preferred, *kept], axis=1), axis=0, return_inverse=True)
    key = key.reshape(-1).astype(np.int64)
    reachable = np.unique(key[_holding(problem, c, count_class)]).tolist()
    boxes = _boxes(cells, reachable, len(preferred), parts, check)
    if isinstance(boxes, str):
        return boxes
    costs = tuple(sum(np.unique(cells[list(box), i]).size - 1 for i in range(len(preferred))) for box in boxes)
    names = tuple(f"{owner}: topology.{rule.group}.{rule.label}" for rule in rules)
    return JointLevel(owner, key, count_class.width // part_gpus, constraints.tensor_parallel_size, parts, boxes, costs, names)


def _holding(problem: CountProblem, c: int, count_class: CountClass) -> np.ndarray:
    """The nodes where class ``c`` may hold a group (allowed, with room for one)."""
    num_nodes = problem.allowed.shape[1]
    room = np.bincount(problem.hw_node, minlength=num_nodes) - problem.blocked_per_node(c, num_nodes)
    return np.flatnonzero(problem.allowed[c] & (room >= count_class.width))


def _boxes(cells: np.ndarray, reachable: list[int], preferred: int, parts: int, check: Callable[[str], None]) -> tuple[tuple[int, ...], ...] | str:
    """Every box of at most ``parts`` reachable cells (their values per label; the labels after
    the first ``preferred`` required, one value), as the reachable cells it holds, in the order
    found; or why not (more than :data:`MAX_BOXES`). Grown one cell at a time, each box from the
    fewest cells that reach it, so a box of ``k`` cells is grown from one of ``k - 1``."""
    values = [tuple(int(v) for v in cells[cell]) for cell in range(cells.shape[0])]
    found: dict[tuple[frozenset[int], ...], int] = {}  # box (per label, its values) -> fewest cells reaching it
    frontier = []
    for cell in reachable:
        box = tuple(frozenset({v}) for v in values[cell])
        found.setdefault(box, 1)
        frontier.append(box)
    for size in range(2, parts + 1):
        check("listing the boxes a pipeline's cells may span")
        grown = []
        for box in frontier:
            for cell in reachable:
                wider = tuple(held | {v} for held, v in zip(box, values[cell]))
                if wider in found or any(len(held) > 1 for held in wider[preferred:]):
                    continue
                found[wider] = size
                grown.append(wider)
                if len(found) > MAX_BOXES:
                    return f"more than {MAX_BOXES:,} sets of cells its pipelines may span (pipelines of {parts} stages)"
        frontier = grown
    return tuple(tuple(cell for cell in reachable if all(v in held for v, held in zip(values[cell], box))) for box in found)


#: Per member stated jointly (class, joint level): the model's variables, pipelines per box and
#: the member's groups each box takes per cell (the box's cells in order).
JointVariables = dict[tuple[int, int], tuple[list[cp_model.IntVar], list[list[cp_model.IntVar]]]]


def joint_cost(
    model: cp_model.CpModel, problem: CountProblem, in_cell: Mapping[tuple[int, int, int], list[cp_model.LinearExprT]], variables: JointVariables
) -> cp_model.LinearExpr:
    """The ``topology`` term of every joint level, exactly (see the module): per box its
    pipelines and the member's groups they take per cell, every cell's groups taken by some box
    (``in_cell[class, level, cell]``: the class's groups there, the joint levels after its
    required and priced ones), each pipeline weighed by its box's cost. Fills ``variables``."""
    cost: list[cp_model.LinearExprT] = []
    for c, count_class in enumerate(problem.classes):
        base = len(count_class.levels) + len(count_class.priced)
        for j, joint in enumerate(count_class.joint):
            pipelines = joint.per_group * count_class.groups // joint.parts
            units = [model.new_int_var(0, pipelines, "") for _ in joint.boxes]
            taken = [[model.new_int_var(0, joint.parts * pipelines, "") for _ in box] for box in joint.boxes]
            by_cell: dict[int, list[cp_model.IntVar]] = {}
            for box, count, amounts in zip(joint.boxes, units, taken):
                model.add(cp_model.LinearExpr.sum(amounts) == joint.parts * count)
                for cell, amount in zip(box, amounts):
                    by_cell.setdefault(cell, []).append(amount)
            for (owner, level, cell), terms in sorted(in_cell.items()):
                if owner == c and level == base + j:
                    model.add(cp_model.LinearExpr.sum(by_cell.get(cell, [])) == joint.per_group * cp_model.LinearExpr.sum(terms))
            variables[c, j] = (units, taken)
            cost += [weight * count for weight, count in zip(joint.costs, units) if weight]
    return cp_model.LinearExpr.sum(cost)


def joint_values(value: Callable[[cp_model.IntVar], int], variables: JointVariables) -> dict[tuple[int, int], tuple[tuple[int, ...], ...]]:
    """The groups each box takes per cell in an answer (per joint level, per box)."""
    return {key: tuple(tuple(value(amount) for amount in amounts) for amounts in taken) for key, (_, taken) in variables.items()}


def joint_ranks(joint: JointLevel, taken: tuple[tuple[int, ...], ...], nodes: np.ndarray) -> np.ndarray:
    """Per process of ``joint.member`` (``nodes``: each one's node, a node's processes in its
    GPU order), its position in the member's order: box after box, each box's groups taken from
    its cells in order, the groups of a cell in node order, so every pipeline (``parts``
    consecutive groups) lies in one box."""
    by_node = np.argsort(nodes, kind="stable")
    groups = by_node.reshape(-1, joint.part_size)  # a node holds whole tensor-parallel groups
    cell_of = joint.key[nodes[groups[:, 0]]]
    queues = {int(cell): groups[cell_of == cell].tolist() for cell in np.unique(cell_of)}
    sequence: list[int] = []
    for box, amounts in zip(joint.boxes, taken):
        for cell, amount in zip(box, amounts):
            queue = queues.get(cell, [])
            if amount > len(queue):
                raise InternalError(f"{', '.join(joint.rules)}: the count model took more groups from a cell than its layout holds there")
            for group in queue[:amount]:
                sequence.extend(group)
            queues[cell] = queue[amount:]
    if any(queues.values()):
        raise InternalError(f"{', '.join(joint.rules)}: a cell's groups are in none of the count model's boxes")
    position = np.empty(nodes.size, dtype=np.int64)
    position[sequence] = np.arange(nodes.size)
    return position


__all__ = ["MAX_BOXES", "joint_cost", "joint_level", "joint_ranks", "joint_values"]
