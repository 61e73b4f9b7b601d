"""The ways a preferred domain's remainders can close whole units: minimal zero-sum multisets.

A unit of ``modulus`` slots (``spanning.py``) that spans domains takes the slots some domains
have left over (their remainders, ``1 .. modulus - 1``); the domains whose remainders a run of
units takes together add up to a multiple of ``modulus``. The least the ``topology`` term can
cost splits the remainders into as many such sets as possible, and every set of a best split
is *minimal* (no part of it adds up to a multiple of ``modulus``, else splitting it in two is
better). So the count model chooses how many of each minimal multiset to use, and this module
lists them: a depth-first walk over multisets in ascending order, cut where a part already adds
up to a multiple (every extension holds that part). A multiset that adds up is minimal when
leaving out any one of its values leaves none that does (Davenport's constant bounds its
length by ``modulus``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

#: Most minimal multisets listed (one integer variable each in the count model): pipelines of 16
#: groups over domains holding up to 15 have 2,134; past a few thousand the count path gives way.
MAX_GROUPINGS = 4_000
#: Multisets walked between two budget checks.
STEPS_PER_CHECK = 4_096


class TooManyGroupings(Exception):
    """The listing passed :data:`MAX_GROUPINGS`."""


def minimal_zero_sums(modulus: int, available: Mapping[int, int], longest: int, check: Callable[[str], None]) -> list[tuple[int, ...]]:
    """Every minimal multiset (values ascending) of remainders in ``1 .. modulus - 1`` adding up
    to a multiple of ``modulus``, using each value ``v`` at most ``available[v]`` times (how many
    domains may leave it) and at most ``longest`` values (how many domains may leave any);
    raises :class:`TooManyGroupings` past :data:`MAX_GROUPINGS`."""
    values = sorted(v for v, count in available.items() if 0 < v < modulus and count > 0)
    full = (1 << modulus) - 1
    found: list[tuple[int, ...]] = []
    steps = 0

    def shifted(sums: int, v: int) -> int:
        """The residues ``sums`` (a bit per residue) each plus ``v``, modulo ``modulus``."""
        return ((sums << v) | (sums >> (modulus - v))) & full

    def walk(start: int, chosen: list[int], sums: int, total: int) -> None:
        nonlocal steps
        steps += 1
        if steps % STEPS_PER_CHECK == 0:
            check("listing the ways remainders close whole units")
        for i in range(start, len(values)):
            v = values[i]
            if chosen.count(v) >= available[v]:
                continue
            if (total + v) % modulus == 0:
                if _minimal(chosen, v, modulus):
                    found.append((*chosen, v))
                    if len(found) > MAX_GROUPINGS:
                        raise TooManyGroupings
                continue
            grown = sums | shifted(sums, v) | (1 << v)
            if not grown & 1 and len(chosen) + 2 <= longest:
                walk(i, [*chosen, v], grown, total + v)

    walk(0, [], 0, 0)
    return found


def _minimal(chosen: list[int], last: int, modulus: int) -> bool:
    """Whether ``chosen`` (no part of it adds up to a multiple) plus ``last``, which together add
    up to one, has no smaller part that does: for each distinct value left out, no part of the
    rest reaches ``-last``."""
    need = (-last) % modulus
    for left_out in set(chosen):
        rest = list(chosen)
        rest.remove(left_out)
        reach = 1  # the empty part
        for v in rest:
            reach |= ((reach << v) | (reach >> (modulus - v))) & ((1 << modulus) - 1)
        if reach >> need & 1:
            return False
    return True


__all__ = ["MAX_GROUPINGS", "TooManyGroupings", "minimal_zero_sums"]
