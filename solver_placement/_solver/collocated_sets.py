"""Components linked by ``collocate_with``, either way, as sets: the one grouping the count
model's classes (``counts/followers.py``) and the counting bound's nodes (``bounds/objective.py``)
both read, since linked components hold the same hardware."""

from __future__ import annotations

from collections.abc import Mapping


def linked_sets(names: list[str], targets: Mapping[str, str]) -> list[tuple[str, ...]]:
    """The ``names`` in sets linked by ``targets`` (a name to the name it is collocated with,
    both among ``names``), each set in the order of ``names``, the sets in the order of their
    first member; a name linked to none is a set of its own."""
    parent = {name: name for name in names}

    def top(name: str) -> str:
        while parent[name] != name:
            parent[name] = parent[parent[name]]
            name = parent[name]
        return name

    for name, target in targets.items():
        first, second = sorted((top(name), top(target)), key=names.index)
        parent[second] = first
    sets: dict[str, list[str]] = {}
    for name in names:
        sets.setdefault(top(name), []).append(name)
    return [tuple(members) for members in sets.values()]
