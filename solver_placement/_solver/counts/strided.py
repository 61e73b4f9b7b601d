"""Strides whose blocks do not tile a tensor-parallel group: classes laid out in progressions.

A process of ``amount`` GPUs with stride ``s`` takes local ids ``h, h + s, ..., h + (amount -
1) s`` of one node (``rules/stride.py``; ranks follow GPU ids on a node, ``windows.py``). Where a
group's ``tp * amount`` GPUs are whole blocks of ``amount * s`` consecutive ids (``tp`` a multiple
of ``s``), the count model lays them out in such blocks (``CountClass.run``). Where they are not
(``processes: 1, hardware_per_process: 3, stride: 2``: GPUs ``h, h + 2, h + 4``), a process
leaves holes that other components, or another process of its own, may fill, so what a node
holds is not stated by sums of GPUs: two such processes fit six GPUs, not five, and one never
fits four.

What states it exactly: the GPUs a class uses on a node are a disjoint union of progressions,
and a group is any ``tp`` of them (a group only has to share a node). Along one residue of the
ids modulo ``s`` a progression is ``amount`` consecutive members of the chain, so a set of GPUs
holds as many progressions as its chains' maximal runs hold whole ``amount``-long pieces, cut
greedily from their start (:func:`progressions_of`), and the walk GPU by GPU that decides
patterns for runs of consecutive GPUs (``runs.RunsCovers``) decides these too, with one open
run per residue. So such a class is a class of ``run = amount`` GPUs ``step = s`` apart
(``CountClass.step``); every node it may use is checked GPU by GPU (``typed.needs_types``),
whatever shares it: exclusive or memory-bound classes, stacks in a hole, GPUs kept off, loads.

Collocated followers: one of one GPU a process takes any GPU of the class; one of the root's
own amount and stride takes exactly the root's progressions (a set of GPUs splits into whole
progressions in one way only), so both nest in the root's groups. Where one member's processes
are tiled by every other's (:func:`tiles`: a progression of ``b`` ids ``u`` apart is ``s / u``
interleaved chains, each cut into runs of ``a``), the class's GPUs on a node are exactly that
member's processes, whichever member it is (:func:`progression_shape`): a root of three GPUs two
apart inside a follower's blocks of six, or a follower of two GPUs two apart, the one strided
member, inside a one-GPU target's groups of two. The class is counted in that member's
progressions and the others are dealt inside each (``followers.tile``). Where no member's are
(two consecutive GPUs beside three GPUs three apart: ``{0, 1, 3, 4, 6, 7}`` holds both, as
do whole blocks of 18), the class is counted in whole progressions every member's tile
(:func:`common_progression`: two GPUs four apart beside two GPUs two apart make progressions of
four GPUs two apart), or where the strides share no factor in whole blocks of every member's,
and proven against the class without blocks (``followers.Loose``), and declined where that misses.
"""

from __future__ import annotations

from collections.abc import Mapping
from math import gcd, lcm

import numpy as np

from solver_placement._solver.bounds.needs import tensor_group_on_node
from solver_placement._specification.candidates import ComponentRequest
from solver_placement._specification.placement_spec import PlacementSpec


def shape_of(request: ComponentRequest) -> tuple[int, int]:
    """A request's GPUs per process and stride (1 when it has none)."""
    return int(request.amount[0]), int(request.stride or 1)


def holey(spec: PlacementSpec, request: ComponentRequest) -> bool:
    """Whether a root's progressions leave holes in its tensor-parallel groups: several GPUs a
    process, a stride above 1, and a group of processes on one node that is not a multiple of
    the stride (its GPUs are then not whole blocks of ``amount * stride``)."""
    amount, step = shape_of(request)
    return amount > 1 and step > 1 and tensor_group_on_node(spec, request) % step != 0


def class_layout(spec: PlacementSpec, free: Mapping[str, ComponentRequest], members: tuple[str, ...], spread: bool = False) -> tuple[int, int] | str:
    """The ``(run, step)`` a class's GPUs on a node are made of (``CountClass``): a root's
    progressions (its amount, its stride) where they leave holes in its groups (or a follower's
    that the root's tile, :func:`progression_shape`), or where blocks would not be exact
    (``spread``): the class is kept off some GPUs (a rank string it avoids, a
    window's edge: ``0, 2`` and ``5, 7`` make a group of two around GPUs 3 and 6 that no block of
    four avoids), or its local ids are priced (a weighed ``contiguity``); else the longest
    member block of ``amount * stride`` consecutive GPUs (step 1; 1 GPU when no member takes
    several), which packs a node any progressions pack where every GPU is free to it. Or
    why the count model cannot state the class (a follower of several GPUs with progressions of
    its own inside a holey root's groups, where no member's processes tile every other's)."""
    root = free[members[0]]
    amount, step = shape_of(root)
    blocks = max(a * s if a > 1 else 1 for a, s in (shape_of(free[m]) for m in members)), 1
    own = all(shape_of(free[m])[0] == 1 or shape_of(free[m]) == (amount, step) for m in members[1:])
    if not holey(spec, root):  # (a follower's progressions are chosen when the class is formed, its nesting checked there)
        return (amount, step) if spread and amount > 1 and step > 1 and own else blocks
    if own:
        return amount, step
    shape = progression_shape(free, members)
    if shape is not None:  # a member whose processes the root's (and every other's) tile
        return shape
    if spread:  # formed in whole blocks of every member's, proven against the class without them (``followers.Loose``)
        return blocks
    follower = next(m for m in members[1:] if shape_of(free[m])[0] > 1 and not tiles(shape_of(free[m]), (amount, step)))
    return (
        f"{follower}: processes of {shape_of(free[follower])[0]} GPUs at stride {shape_of(free[follower])[1]} collocated with {root.name}, whose "
        "stride leaves holes in its tensor-parallel groups, and no member's processes are tiled by every other's"
    )


def progression_shape(free: Mapping[str, ComponentRequest], members: tuple[str, ...]) -> tuple[int, int] | None:
    """The ``(amount, stride)`` of a class's member of several GPUs a process whose every
    process is tiled by whole processes of each other member (:func:`tiles`), else None (also
    when every member takes one GPU a process). The class's GPUs on a node are exactly a
    disjoint union of that member's processes, progressions of ``amount`` ids ``stride`` apart
    (the members hold the same GPUs, each once, ``followers.py``), and every such union holds
    every other member's processes: counted as a class of those progressions, every layout is
    one of its counts, and its layout deals the others inside them (``followers.tile``)."""
    shapes = sorted({shape_of(free[m]) for m in members if shape_of(free[m])[0] > 1})
    return next((shape for shape in shapes if all(tiles(other, shape) for other in shapes)), None)


def common_progression(free: Mapping[str, ComponentRequest], members: tuple[str, ...]) -> tuple[int, int] | None:
    """The least ``(amount, stride)`` progression every member of several GPUs a process tiles
    (:func:`tiles`): its stride the members' strides' greatest common divisor, its length the
    least common multiple of each member's ``amount * stride / step``; None when that step is 1
    (whole blocks of consecutive GPUs then) or no member takes several GPUs. A union of such
    progressions holds every member's processes, so the class counted in them is a restriction
    (every count a layout), never more than the rule asks: a class whose processes are not tiled
    by one member's is counted so and proven against the class without them."""
    shapes = sorted({shape_of(free[m]) for m in members if shape_of(free[m])[0] > 1})
    step = gcd(*(stride for _, stride in shapes))
    if not shapes or step == 1:
        return None
    return lcm(*(amount * stride // step for amount, stride in shapes)), step


def tiles(inner: tuple[int, int], outer: tuple[int, int]) -> bool:
    """Whether a progression of the ``outer`` shape (amount, stride) is a disjoint union of
    progressions of the ``inner`` shape: its ids ``h + j * u`` (``j < b``) split by ``j`` modulo
    ``k = s / u`` into ``k`` chains of ``b / k``, each cut into runs of ``a``; so ``u`` divides
    ``s`` and ``a * k`` divides ``b`` (one GPU a process always tiles)."""
    (a, s), (b, u) = inner, outer
    return a == 1 or (s % u == 0 and b % (a * (s // u)) == 0)


def progressions_of(ids: np.ndarray, length: int, step: int, need: int) -> np.ndarray | None:
    """``need`` GPUs of the local ``ids`` as whole progressions of ``length`` ids ``step``
    apart, lowest first, each progression's ids consecutive in the result (so a reshape to
    ``(-1, length)`` gives one per row); None when the ids hold fewer. Along each residue modulo
    ``step``, every maximal run of the chain is cut into pieces from its start: the most
    progressions the ids hold, and the only split when the ids are exactly such a union."""
    found = []
    ordered = np.unique(ids)
    for residue in range(step):
        chain = ordered[ordered % step == residue]
        for piece in np.split(chain, np.flatnonzero(np.diff(chain) != step) + 1):
            whole = piece.size // length * length
            found += list(piece[:whole].reshape(-1, length))
    if len(found) * length < need:
        return None
    found.sort(key=lambda progression: int(progression[0]))
    chosen = found[: need // length]
    return np.concatenate(chosen).astype(np.int64) if chosen else ordered[:0].astype(np.int64)


__all__ = ["class_layout", "common_progression", "holey", "progression_shape", "progressions_of", "shape_of", "tiles"]
