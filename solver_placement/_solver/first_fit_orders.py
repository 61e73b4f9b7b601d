"""The orders first fit places free components in, tried one after another.

A greedy order can strand a component another order places, and each try costs milliseconds, so
first fit (``first_fit.py``) tries a few and keeps the best. Every order keeps each collocated
component right after the one it collocates with, since it takes exactly that one's GPUs.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from solver_placement._solver.bounds.needs import tensor_group_on_node
from solver_placement._solver.rules.exclusivity import exclusive_owners
from solver_placement._specification.candidates import ComponentRequest
from solver_placement._specification.placement_spec import PlacementSpec


def followers(spec: PlacementSpec, requests: Mapping[str, ComponentRequest], name: str) -> list[str]:
    """The free requests collocated with ``name`` (directly or through a chain): they will hold
    its GPUs too, so its GPUs must have room for them (memory, per-GPU limits)."""
    found: list[str] = []
    frontier = [name]
    while frontier:  # a collocation cycle ends when it comes back round (the search reports it)
        frontier = [
            other for other, request in requests.items()
            if not request.determined and other != name and other not in found
            and (t := spec.components[other].constraints.collocate_with) is not None and spec.owner_of(t) in frontier
        ]
        found.extend(frontier)
    return found


#: One step of a first-fit order: a free request, and whether it fills from the high ranks down.
Step = tuple[str, bool]


def placing_orders(spec: PlacementSpec, requests: Mapping[str, ComponentRequest]) -> list[list[Step]]:
    """The orders first fit tries, each a complete order of the free requests with every
    collocated one right after its target (a chain in chain order): widest groups first, config
    order among equals; widest first, most GPUs among equals; config order; the component with
    the fewest candidate GPUs first; and, when the
    exclusivity graph is two-colourable (a chain, a star), widest first with one colour filling
    from the low ranks and the other from the high ranks (and the other way round), so exclusive
    neighbours grow towards each other instead of colliding. A greedy order can strand a component that another order
    places, and each try costs milliseconds. No order (an empty list) for a collocation cycle."""
    free = [name for name, request in requests.items() if not request.determined]
    target_of = {name: spec.owner_of(t) for name in free if (t := spec.components[name].constraints.collocate_with) is not None}
    roots = [name for name in free if name not in target_of or target_of[name] not in free]

    def width(name: str) -> int:
        request = requests[name]
        return tensor_group_on_node(spec, request) * int(request.amount.max(initial=1))

    def size(name: str) -> int:
        return int(requests[name].amount.sum())

    def room(name: str) -> int:
        return int(requests[name].window_items.size)

    keys: list[Callable[[str], tuple[int, ...]]] = [
        lambda name: (-width(name), free.index(name)),
        lambda name: (-width(name), -size(name), free.index(name)),
        lambda name: (free.index(name),),
        lambda name: (room(name), -width(name), free.index(name)),  # the most confined first
    ]
    high = _high_side(spec, roots, requests)
    low = dict.fromkeys(roots, False)
    tries = [(key, low) for key in keys]
    if high:
        flipped = {root: not up for root, up in high.items()}
        tries += [(key, side) for key in (keys[0], keys[3]) for side in (high, flipped)]
    orders: list[list[Step]] = []
    for key, side in tries:
        order = [(member, side[root]) for root in sorted(roots, key=key) for member in (root, *followers(spec, requests, root))]
        if len(order) != len(free):
            return []  # a collocation cycle: the search reports it
        if order not in orders:
            orders.append(order)
    return orders


def _high_side(spec: PlacementSpec, roots: list[str], requests: Mapping[str, ComponentRequest]) -> dict[str, bool] | None:
    """A two-colouring of the exclusivity graph between the roots (a collocated component counts
    as its root), True for the side that fills from the high ranks; None when there is no edge or
    the graph has an odd cycle."""
    root_of = {root: root for root in roots}
    for root in roots:
        root_of.update(dict.fromkeys(followers(spec, requests, root), root))
    neighbours: dict[str, set[str]] = {root: set() for root in roots}
    for first, second in exclusive_owners(spec):
        mine, theirs = root_of.get(first), root_of.get(second)
        if mine is not None and theirs is not None and mine != theirs:
            neighbours[mine].add(theirs)
            neighbours[theirs].add(mine)
    if not any(neighbours.values()):
        return None
    side: dict[str, bool] = {}
    for start in roots:
        if start in side:
            continue
        side[start] = False
        frontier = [start]
        while frontier:
            current = frontier.pop()
            for other in sorted(neighbours[current]):
                if other not in side:
                    side[other] = not side[current]
                    frontier.append(other)
                elif side[other] == side[current]:
                    return None
    return side
