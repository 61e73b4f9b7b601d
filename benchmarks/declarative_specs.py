"""Seeded random declarative specs for ``benchmarks/declarative.py``, one generator per family.

Every spec is a ``cluster:`` section as a job config states it (``solve`` parses it inside the
timed call, as a user's job does). A case is named by ``family:nodes:seed`` and rebuilt from
that alone (``random.Random`` seeded with a string is stable across runs and machines).

The feasible families are feasible *by construction*, not by filtering (a filter would keep
only what is easy): demands are drawn under a capacity the generator can prove, so a spec
neither side places is a finding, not noise:

* TP groups and process sizes are powers of two that divide the nodes' GPU counts, so any
  set of them whose total fits a node group packs it (first-fit decreasing is exact then);
* ``heterogeneous`` chains exclusivity (each component exclusive with the previous one), so
  components alternate between two "colours" that may share GPUs within a colour; each
  component asks at most ``fill`` of half its node group's GPUs (its colour's half of every
  node), and at most two components of a colour carry ``memory_gb`` (<= 40 GB each, on 80 GB
  nodes only), so stacking a colour on its half fits memory too;
* ``memory`` keeps components over 40 GB (and a collocated pair over 40 GB together) within
  ``fill`` of the 80 GB nodes' GPUs and all components within ``fill`` of all GPUs: the heavy
  ones pack the 80 GB nodes alone (one partial node at most) and the light ones the rest;
* ``topology`` sizes pipelines to fit a rack of 8 nodes and asks at most ``fill`` of the
  pipelines the racks hold.
* ``ring`` puts 4-6 components on a cycle of exclusions (each exclusive with the next, the last
  with the first: an exclusivity graph that is not chordal); an even ring alternates two colours
  on two halves of every node, an odd one needs a third colour for its last component (three
  colours on a quarter of every node each), and each component asks at most ``fill`` of its
  colour's GPUs.
* ``limits`` gives every component ``max_processes_per_hardware`` of 2 or 3 and puts the
  components in two layers (alternately); each layer asks at most ``fill`` of all GPUs, so a
  layer packs the GPUs alone and the two layers stacked put at most 2 processes on any GPU (the
  planted layout). Exclusivity is drawn only within a layer, where the planted layout keeps
  the components on different GPUs anyway.
* ``tp domains`` is ``disaggregated`` (TP groups of 2-8 with 1-2 GPUs per process, no wider
  than a node, all exclusive) with every component requiring its TP groups inside one rack of
  8 nodes: the groups packed node by node (the planted layout) keep that rule.
* ``windows`` fills 1-2 ``resources`` windows of even length from even GPUs (their items are
  the planted layout's, every one used) and gives the rest to components of 1-2 GPUs per group,
  exclusive with the windows, asking at most ``fill`` of the GPUs the windows leave: every node
  leaves an even number of GPUs, which groups of 1 and 2 pack.
* ``uneven rank strings`` writes a rank string over the first 25-75% of the GPUs (ending part
  way through a node, at an even GPU) and gives it partners that avoid it unevenly: ``critic``
  shares its GPUs (exclusive only with ``actor``), ``actor`` and maybe ``reward`` are exclusive
  with the rank string and each other. ``critic`` asks at most ``fill`` of the rank string's
  GPUs and the others at most ``fill`` of the GPUs it leaves (the planted layout: each side
  packs its own GPUs, an even number on every node, in groups of 1 or 2).
* ``contiguity`` is ``disaggregated``, ``collocated`` or ``ring`` (feasible as they are) with
  ``contiguity`` weighed in ``solver.objective`` (1 or 5 per rank, ``nodes`` at 10,000 or 1), so
  ranks trade against nodes: the planted layout of its base bounds the nodes, not the objective.
* ``balance`` is ``ring`` with six components (two colours on two halves of every node, the
  planted layout) and ``balance`` weighed in ``solver.objective`` (1 or 1,000 per GPU of the
  fullest node, ``nodes`` at 10,000 or 1): six components on a cycle of exclusions have tens of
  thousands of whole-node patterns, which ``balance`` needs.
* ``previous`` is ``replan``'s spec solved again with ``previous=`` the first answer on the
  cluster without the lost nodes (``solve``'s own re-planning, ``changes`` a term of the count
  model), where ``replan`` times the public function (kept in place first).
* ``resized`` is ``replan``'s spec solved again with ``previous=`` the first answer on the same
  cluster, one component (not a collocated one) a TP group smaller (one with two or more; when
  none has, one larger, in the room its fill leaves), a rollout collocated with it resized with
  it: the previous nodes' contents no longer fit the patterns as they were.
* ``topology overlaps`` labels racks of 8 nodes inside zones of 4 racks and draws one of three
  mixes: an actor (TP 4 or 8) in pipelines of 2 groups required in a rack with a rollout on its
  GPUs in pipelines of 3 groups required in a rack or a zone (units that overlap: the planted
  layout puts blocks of 6 groups rack by rack, at most ``fill`` of the blocks the racks hold);
  an actor of whole-node groups in pipelines of 3-16 nodes preferring a rack (pipelines that
  span racks, whose racks' remainders close whole pipelines only in sets); or the same with a
  rollout on its GPUs in pipelines of 2 or 4 nodes preferring a zone (two members' terms). Other
  components, exclusive with all, ask at most ``fill`` of the GPUs left; the actor packs whole
  nodes, so the planted layout packs them too.
* ``other hardware`` is ``disaggregated`` on the GPUs beside 0, 2 or 4 robots per node: robot
  components of 1 or 2 robots a process (a power of two dividing every node's robots, so any
  set of them whose total fits packs) ask at most ``fill`` of the robots a rank string on the
  first robots leaves, exclusive with each other and the rank string; an ``agent`` of whole
  nodes (``unit: node``) asks at most ``fill`` of the nodes. Robots and nodes share no item with
  GPUs, so each kind's planted layout is the whole spec's. Half of the cases add a rank string
  over the last robots and the first GPUs and a component over both kinds kept off it
  (``spanning``: neither meets the others, so its planted layout is any set of the leftovers).
* ``rank strings`` writes the actor as a rank string over whole nodes and collocates a
  declarative rollout with it (exactly its GPUs, one process per GPU or per two); the other
  components are exclusive with the rollout and ask at most ``fill`` of the nodes the actor
  leaves (a 1-node cluster has only the actor and its rollout).
* ``topology mixes`` labels racks of 8 nodes inside zones of 4 racks and mixes every topology
  rule: maybe a rank string over the first whole nodes (at most one per rack) with a shadow
  collocated with it (TP 2, pipelines of 2 preferring or requiring a rack: each pipeline of 4
  GPUs fits a node of the rank string); an actor exclusive with them, TP 2-8 and pipelines of
  1-8 stages no wider than a rack's free GPUs, with a TP rule (rack required, rack or zone
  preferred, or none) and a pipeline rule (rack or zone required, rack preferred, or zone
  required with rack preferred), asking at most ``fill`` of the pipelines the racks' free GPUs
  hold, or (a quarter of the time, with two racks' GPUs free) pipelines of TP 8 x 16 stages (two
  racks) preferring one rack, which every pipeline spans; maybe a rollout of one GPU per process collocated with it whose pipelines (TP 1-2,
  1-2 stages, dividing the actor's pipeline) must stay in a rack; 1-2 components exclusive with
  all asking at most ``fill`` of what the actor leaves, in groups of 1-2 GPUs; ``balance``
  weighed (1) a quarter of the time. The planted layout: the actor's pipelines packed rack by
  rack into the free GPUs (the two-rack ones over consecutive free nodes) (each in one rack, so one zone, its TP groups on one node: TP sizes
  divide 8 and the free GPUs start on node boundaries), the rollout's pipelines inside the
  actor's, the others on the even number of GPUs each node has left.

* ``fixed loads`` writes a rank-string actor over the first 25-75% of the GPUs (an even count)
  with ``memory_gb`` 30 on 80 GB GPUs and a process limit of 2 half the time (3 or none
  otherwise), and a ``rollout`` (30 GB) and a ``reward`` (30 GB, or 20 with the limit of 2) that
  each fit beside the actor, and beside each other, but not all three on one GPU (by memory, or
  by the limit). The planted layout splits the actor's GPUs at an even id, the rollout asking at most
  ``fill`` of the first part and the reward of the second; without the limit of 2, a second
  rank string ``env`` (5 GB) may sit on the actor's first GPUs (each mix still fits 80 GB and a
  limit of 3). After the actor, now and then a filled window ``judge`` (30 GB, even length),
  and a ``critic`` (40 GB, exclusive with the actor, groups of 1-2 GPUs) asking at most
  ``fill`` of the GPUs the actor leaves, which it packs beside the judge (40 + 30 GB fit).
* ``collocation chains`` is a chain or tree of collocated components of other shapes than their
  targets (see :func:`collocation_chains`): every TP group width and process size a power of two
  dividing 8, so the class's least common multiple of groups is one of them and divides a node;
  the planted layout packs the class's GPUs from node 0 (each member in GPU order: a nested
  process inside its target's group, a spanning one over whole groups) and the others,
  exclusive with all, on the GPUs it leaves (an even number per node, groups of 1-2).
* ``strides`` gives an ``actor`` processes of 2-4 GPUs ``stride`` 2-4 apart (a span a node
  holds) in TP groups of 1-3 that are not a multiple of the stride, so a process leaves holes
  between its GPUs (``counts/strided.py``). The planted layout puts the same number of groups
  on every node (at most the progressions a node holds, as blocks of ``amount * stride`` GPUs
  each hold ``stride`` interleaved ones), the actor asking at most ``fill`` of them; half the
  time a ``ref`` of one GPU a process is on exactly its GPUs. A ``reward`` exclusive with both,
  and half the time a ``critic`` with ``max_processes_per_hardware`` 2 and no exclusivity, each
  ask at most ``fill`` of the GPUs the planted actor leaves (holes included): each packs them
  alone (one GPU a process), and stacked they put two processes on a GPU (the critic's limit).
  A quarter of the cases weigh ``contiguity`` (1 per rank), priced in progressions too.
* ``strided followers`` collocates a strided component (as in ``strides``, TP below its stride)
  with one of another shape: half the time a ``ref`` of ``amount * stride`` consecutive GPUs a
  process (the planted layout puts the actor's processes in blocks of ``amount * stride`` GPUs,
  whole TP groups per node, so each block is one ref process), else a one-GPU ``actor`` of TP
  ``amount`` whose groups are the ``rollout``'s strided processes (planted as progressions, at
  most as many as a node holds). A ``reward`` exclusive with both asks at most ``fill`` of the GPUs
  the planted class leaves (one GPU a process).
* ``common strides`` collocates a strided ``actor`` whose TP groups its stride does not divide
  (holes between its progressions) with a ``rollout`` of another strided shape: neither's
  processes tile the other's, but both tile progressions of their strides' common factor
  (``counts/strided.py``, ``common_progression``: 2 GPUs 4 apart beside 2 GPUs 2 apart make
  progressions of 4 GPUs 2 apart, one actor group each), on nodes of 12 or 16 GPUs. The
  planted layout fills each node with as many of those progressions as it holds, the actor
  asking at most ``fill`` of them; a ``reward`` exclusive with both asks at most ``fill`` of the
  GPUs the actor leaves (one GPU a process).
* ``drained strides`` is re-planned: an ``actor`` of 2-3 GPUs a process, stride 2-3, TP the
  stride (each group a block of ``amount * stride`` GPUs), is first placed kept off one GPU of
  each of the first half of the nodes (a rank string ``drained``: GPUs out for maintenance), so
  its processes there are progressions around it, not blocks; then solved again with
  ``previous=`` that answer, the GPUs back. Half the time a ``ref`` of one GPU a process is on
  its GPUs, and a ``critic`` exclusive with it asks at most ``fill`` of the GPUs the planted
  actor leaves. The planted layout: one block per drained node (its last ``amount * stride``
  GPUs, after the drained one), whole blocks on the others, the actor asking at most ``fill`` of
  them; it holds before and after, so a re-plan keeping every process meets it. A quarter of
  the cases weigh ``contiguity`` (1 per rank), so ranks trade against moves.
* ``mixed kinds contiguity`` weighs ``contiguity`` (1 or 5, against ``nodes`` 1 or 10,000,
  ``balance`` 10 a quarter of the time) over windows that mix GPUs and robots (8 GPUs and 0, 2
  or 4 robots a node, alike over 1-3 blocks of consecutive nodes): a ``scout`` over both kinds in either order (1 or 2 items a process, or
  TP groups of 2 that may hold both kinds), a ``probe`` over both kinds and an ``actor`` of GPUs,
  all pairwise exclusive. The planted layout splits every node: the scout its first 4 GPUs and
  first half of its robots, the probe 2 GPUs and the other robots, the actor the last 2 GPUs;
  each asks at most ``fill`` of its share in whole processes (and groups) per node and kind.
``fill`` (the share of the GPUs asked for) is 1.0 for a quarter of the cases (the hard edge)
and uniform in [0.5, 1.0) otherwise. The ``infeasible`` family draws one of six reasons, each
impossible at every size (see :data:`INFEASIBLE_KINDS`).
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

GPUS = 8
#: Nodes per rack in the ``topology`` family (the ``rack`` node label).
RACK_NODES = 8
#: Component names, in the order generators hand them out.
NAMES = (
    "actor", "critic", "reward", "ref", "judge", "teacher", "student", "scorer",
    "verifier", "planner", "sampler", "replay", "agent", "inference", "embed", "router",
)  # fmt: skip

Section = dict[str, Any]


@dataclass(frozen=True)
class Case:
    """One generated spec. ``losses`` > 0 (``replan`` only): after the first solve, that many
    of the nodes it uses are lost and the job is re-planned. ``kind``: why an ``infeasible``
    spec is impossible (empty for the other families)."""

    family: str
    nodes: int
    seed: int
    section: Section
    losses: int = 0
    kind: str = ""

    @property
    def key(self) -> str:
        return f"{self.family}:{self.nodes}:{self.seed}"


# ------------------------------------------------------------------------ shared pieces
def draw_fill(rng: random.Random, ceiling: float = 1.0) -> float:
    """The share of the GPUs a spec asks for: ``ceiling`` a quarter of the time, else [0.5, ceiling)."""
    return ceiling if rng.random() < 0.25 else rng.uniform(0.5, ceiling)


def allocate(rng: random.Random, budget: int, widths: list[int]) -> list[int]:
    """Groups per component of the given group widths (GPUs per group), totalling at most
    ``budget`` GPUs: one group each, the rest split in random proportions, then topped up with
    whole groups while any fits, so a full budget is met exactly when the widths allow."""
    groups = [1] * len(widths)
    left = budget - sum(widths)
    if left < 0:
        raise ValueError(f"{len(widths)} groups of {widths} GPUs exceed a budget of {budget}")
    weights = [rng.random() + 0.05 for _ in widths]
    for i, width in enumerate(widths):
        groups[i] += int(left * weights[i] / sum(weights)) // width
    left = budget - sum(g * w for g, w in zip(groups, widths))
    for i in rng.sample(range(len(widths)), len(widths)):
        extra = left // widths[i]
        groups[i] += extra
        left -= extra * widths[i]
    return groups


def shapes(rng: random.Random, count: int, budget: int, options: tuple[tuple[int, int], ...]) -> list[tuple[int, int]]:
    """``count`` (tp, hardware_per_process) shapes whose single groups fit ``budget`` together;
    fewer components when even the smallest groups would not."""
    count = max(1, min(count, budget // min(tp * hpp for tp, hpp in options)))
    fitting = [(tp, hpp) for tp, hpp in options if tp * hpp <= budget // count]
    return [rng.choice(fitting) for _ in range(count)]


def body(tp: int, hpp: int, groups: int, **rules: Any) -> dict[str, Any]:
    """A declarative component of ``groups`` TP groups (keys left out when they are 1)."""
    component: dict[str, Any] = {"processes": groups * tp}
    if hpp > 1:
        component["hardware_per_process"] = hpp
    if tp > 1:
        component["tensor_parallel_size"] = tp
    return {**component, **rules}


def section(nodes: int, gpus: int | list[int], placement: dict[str, Any], **cluster: Any) -> Section:
    return {"num_nodes": nodes, "num_gpus_per_node": gpus, **cluster, "component_placement": placement}


# ------------------------------------------------------------------------ feasible families
TP_SHAPES = ((1, 1), (2, 1), (4, 1), (8, 1), (1, 2), (2, 2), (4, 2))


def disaggregated(rng: random.Random, nodes: int, fill: float) -> Section:
    """2-4 components, TP groups of 1-8 (powers of two), 1-2 GPUs per process, all pairwise exclusive."""
    budget = int(fill * nodes * GPUS)
    chosen = shapes(rng, rng.randint(2, 4), budget, TP_SHAPES)
    groups = allocate(rng, budget, [tp * hpp for tp, hpp in chosen])
    return section(nodes, GPUS, {
        NAMES[i]: body(tp, hpp, g, exclusive_with="all") for i, ((tp, hpp), g) in enumerate(zip(chosen, groups))
    })  # fmt: skip


def collocated(rng: random.Random, nodes: int, fill: float) -> Section:
    """An actor in TP groups of 2-8, a rollout on exactly its GPUs (1-4 GPUs per process,
    ``stride: auto``) and a reward exclusive with both."""
    budget = int(fill * nodes * GPUS)
    reward_hpp = rng.choice((1, 2))
    tp = rng.choice([t for t in (2, 4, 8) if t + reward_hpp <= budget])
    actor_groups, reward_groups = allocate(rng, budget, [tp, reward_hpp])
    actor = body(tp, 1, actor_groups)
    return section(nodes, GPUS, {
        "actor": actor,
        "rollout": collocation(actor, "actor", rng.choice([h for h in (1, 2, 4) if h <= tp])),
        "reward": body(1, reward_hpp, reward_groups, exclusive_with="all"),
    })  # fmt: skip


def collocation(target: dict[str, Any], name: str, hpp: int, **rules: Any) -> dict[str, Any]:
    """A component on exactly ``target``'s GPUs (``name``), ``hpp`` GPUs per process spread
    over the target's TP group by ``stride: auto``."""
    gpus = target["processes"] * target.get("hardware_per_process", 1)
    return {"processes": gpus // hpp, "hardware_per_process": hpp, "stride": "auto", "collocate_with": name, **rules}


def heterogeneous(rng: random.Random, nodes: int, fill: float) -> Section:
    """8-GPU 80 GB nodes (group ``big``) and 4-GPU 40 GB nodes (``small``); 8-16 components in
    TP groups of 2 or 4 (4 on ``big`` only), each exclusive with the previous one, on ``big``,
    ``small`` or every node; 1-3 of them with a rollout collocated (see the module docstring)."""
    big = min(nodes - 1, max(1, round(nodes * rng.uniform(0.3, 0.7))))
    capacity = {"big": big * GPUS, "small": (nodes - big) * GPUS // 2, None: big * GPUS + (nodes - big) * GPUS // 2}
    count = rng.randint(8, 16)
    rollouts = rng.randint(1, 3)
    placement: dict[str, Any] = {}
    with_memory = [0, 0]
    for i, name in enumerate(NAMES[: count - rollouts]):
        group = rng.choice(("big", "small", None))
        tp = rng.choice((2, 4)) if group == "big" else 2
        groups = max(1, round(fill * capacity[group] / 2 / tp))
        rules: dict[str, Any] = {} if group is None else {"node_group": group}
        if i:
            rules["exclusive_with"] = [NAMES[i - 1]]
        if group == "big" and with_memory[i % 2] < 2 and rng.random() < 0.5:
            with_memory[i % 2] += 1
            rules["memory_gb"] = rng.choice((20, 30, 40))
        placement[name] = body(tp, 1, groups, **rules)
    for target in rng.sample(list(placement), rollouts):
        placement[f"{target}_rollout"] = collocation(placement[target], target, 2)
    return section(
        nodes, [GPUS] * big + [GPUS // 2] * (nodes - big), placement,
        gpu_memory_gb=[80] * big + [40] * (nodes - big),
        node_groups=[{"label": "big", "node_ranks": f"0-{big - 1}"}, {"label": "small", "node_ranks": f"{big}-{nodes - 1}"}],
    )  # fmt: skip


def ring(rng: random.Random, nodes: int, fill: float, count: int = 0) -> Section:
    """4-6 components (``count`` when given) in TP groups of 1-4 on a cycle of exclusions (see
    the module docstring)."""
    count = count or rng.randint(4, 6)
    width = GPUS // 2 if count % 2 == 0 else GPUS // 4
    placement: dict[str, Any] = {}
    for i in range(count):
        tp = rng.choice([t for t in (1, 2, 4) if t <= width])
        placement[NAMES[i]] = body(tp, 1, max(1, int(fill * nodes * width) // tp), exclusive_with=[NAMES[(i + 1) % count]])
    return section(nodes, GPUS, placement)


def limits(rng: random.Random, nodes: int, fill: float) -> Section:
    """3-6 components in TP groups of 1-8 (1-2 GPUs per process), each with
    ``max_processes_per_hardware`` 2 or 3, some exclusive with the one before them in their layer
    (see the module docstring)."""
    count = rng.randint(3, 6)
    layers = [i % 2 for i in range(count)]
    budget = int(fill * nodes * GPUS)
    placement: dict[str, Any] = {}
    for layer in (0, 1):
        members = [i for i in range(count) if layers[i] == layer]
        chosen = shapes(rng, len(members), budget, TP_SHAPES)
        for i, (tp, hpp), groups in zip(members, chosen, allocate(rng, budget, [tp * hpp for tp, hpp in chosen])):
            rules: dict[str, Any] = {"max_processes_per_hardware": rng.choice((2, 3))}
            before = [j for j in members if j < i]
            if before and rng.random() < 0.5:
                rules["exclusive_with"] = [NAMES[before[-1]]]
            placement[NAMES[i]] = body(tp, hpp, groups, **rules)
    return section(nodes, GPUS, {name: placement[name] for name in NAMES[:count] if name in placement})


def rank_strings(rng: random.Random, nodes: int, fill: float) -> Section:
    """A rank-string actor on the first 25-75% of the nodes, a declarative rollout collocated
    with it (1 or 2 GPUs per process), and 1-3 declarative components
    exclusive with the rollout (see the module docstring)."""
    held = min(nodes - 1, max(1, round(nodes * rng.uniform(0.25, 0.75)))) if nodes > 1 else 1
    placement: dict[str, Any] = {"actor": f"0-{held * GPUS - 1}"}
    hpp = rng.choice((1, 2))
    placement["rollout"] = {"processes": held * GPUS // hpp, "hardware_per_process": hpp, "collocate_with": "actor"}
    budget = int(fill * (nodes - held) * GPUS)
    if budget:
        chosen = shapes(rng, rng.randint(1, 3), budget, TP_SHAPES)
        for i, ((tp, width), groups) in enumerate(zip(chosen, allocate(rng, budget, [tp * hpp for tp, hpp in chosen]))):
            placement[NAMES[2 + i]] = body(tp, width, groups, exclusive_with=["rollout"])
    return section(nodes, GPUS, placement)


def uneven_rank_strings(rng: random.Random, nodes: int, fill: float) -> Section:
    """A rank string over the first 25-75% of the GPUs (an even count), a ``critic`` that may
    share its GPUs, and ``actor`` (maybe ``reward``) exclusive with it and with each other, in
    groups of 1-2 GPUs (see the module docstring)."""
    total = nodes * GPUS
    held = 2 * max(1, round(total * rng.uniform(0.25, 0.75) / 2))
    placement: dict[str, Any] = {"fixed": f"0-{held - 1}"}
    options = ((1, 1), (2, 1), (1, 2))
    own = int(fill * held)
    if own:
        (tp, hpp), = shapes(rng, 1, own, options)
        placement["critic"] = body(tp, hpp, allocate(rng, own, [tp * hpp])[0], exclusive_with=["actor"])
    left = int(fill * (total - held))
    if left:
        chosen = shapes(rng, rng.randint(1, 2), left, options)
        names = ["actor", "reward"][: len(chosen)]
        for name, (tp, hpp), groups in zip(names, chosen, allocate(rng, left, [t * h for t, h in chosen])):
            placement[name] = body(tp, hpp, groups, exclusive_with=["fixed", *(n for n in names if n != name)])
    if "actor" not in placement and "critic" in placement:
        placement["critic"].pop("exclusive_with")
    return section(nodes, GPUS, placement)


def fixed_loads(rng: random.Random, nodes: int, fill: float) -> Section:
    """A rank-string actor with memory (often a process limit) over the first 25-75% of the GPUs
    (an even count; one whole node on a 1-node cluster), a rollout and a reward that each fit
    beside it but not both, a second rank string or a filled window now and then, and a critic
    exclusive with the actor (see the module docstring)."""
    total = nodes * GPUS
    held = 2 * max(1, round(total * rng.uniform(0.25, 0.75) / 2)) if nodes > 1 else GPUS
    by_limit = rng.random() < 0.5
    actor: dict[str, Any] = {"placement": f"0-{held - 1}", "memory_gb": 30}
    if by_limit or rng.random() < 0.5:
        actor["max_processes_per_hardware"] = 2 if by_limit else 3
    placement: dict[str, Any] = {"actor": actor}
    if not by_limit and rng.random() < 0.5:
        placement["env"] = {"placement": f"0-{min(held, 4) - 1}", "memory_gb": 5}
    split = 2 * round(held * rng.uniform(0.3, 0.7) / 2)
    options = ((1, 1), (2, 1))
    for name, share, gigabytes in (("rollout", split, 30), ("reward", held - split, 20 if by_limit else 30)):
        budget = int(fill * share)
        if budget:
            (tp, hpp), = shapes(rng, 1, budget, options)
            placement[name] = body(tp, hpp, allocate(rng, budget, [tp * hpp])[0], memory_gb=gigabytes)
    left = total - held
    if left >= 2 and rng.random() < 0.5:
        length = 2 * rng.randint(1, max(1, left // 4))
        placement["judge"] = {"resources": f"{held}-{held + length - 1}", "memory_gb": 30}
    budget = int(fill * left)
    if budget:
        (tp, hpp), = shapes(rng, 1, budget, ((1, 1), (2, 1), (1, 2)))
        placement["critic"] = body(tp, hpp, allocate(rng, budget, [tp * hpp])[0], memory_gb=20, exclusive_with=["actor"])
    return section(nodes, GPUS, placement, gpu_memory_gb=80)


MEMORY_SHAPES = ((1, 1), (2, 1), (4, 1))


def memory(rng: random.Random, nodes: int, fill: float) -> Section:
    """8-GPU nodes, the first 30-70% with 80 GB GPUs and the rest 40 GB; 2-5 components with
    ``memory_gb`` 10-60 and no exclusivity (memory alone decides which may share a GPU), half
    the time an actor and a rollout collocated that fit 80 GB GPUs only together."""
    large = min(nodes - 1, max(1, round(nodes * rng.uniform(0.3, 0.7))))
    heavy_budget, budget = int(fill * large * GPUS), int(fill * nodes * GPUS)
    placement: dict[str, Any] = {}
    if rng.random() < 0.5:
        tp = rng.choice((2, 4))
        actor = body(tp, 1, max(1, int(heavy_budget * rng.uniform(0.3, 0.7)) // tp), memory_gb=rng.choice((40, 50)))
        placement = {"actor": actor, "rollout": collocation(actor, "actor", 2, memory_gb=rng.choice((20, 30)))}
        heavy_budget -= actor["processes"]
        budget -= actor["processes"]
    gigabytes = [rng.choice((10, 20, 30, 40, 50, 60)) for _ in range(rng.randint(2, 5) - len(placement))]
    budget -= with_memory(rng, placement, [gb for gb in gigabytes if gb > 40], heavy_budget)
    with_memory(rng, placement, [gb for gb in gigabytes if gb <= 40], budget)
    return section(nodes, GPUS, placement, gpu_memory_gb=[80] * large + [40] * (nodes - large))


def with_memory(rng: random.Random, placement: dict[str, Any], gigabytes: list[int], budget: int) -> int:
    """Add up to one component per ``memory_gb`` value given, in TP groups of 1-4 within
    ``budget`` GPUs (fewer when the budget is short); returns the GPUs they ask for."""
    if not gigabytes or budget < 1:
        return 0
    widths = [tp for tp, _ in shapes(rng, len(gigabytes), budget, MEMORY_SHAPES)]
    groups = allocate(rng, budget, widths)
    names = (name for name in NAMES if name not in placement)
    for gb, tp, count, name in zip(gigabytes, widths, groups, names):
        placement[name] = body(tp, 1, count, memory_gb=gb)
    return sum(tp * count for tp, count in zip(widths, groups))


def topology(rng: random.Random, nodes: int, fill: float) -> Section:
    """Racks of 8 nodes (``rack`` label); an actor whose pipelines (or TP groups when it has no
    pipeline stages) ``require`` or ``prefer`` one rack, and up to 2 exclusive components."""
    racks = [min(RACK_NODES, nodes - start) for start in range(0, nodes, RACK_NODES)]
    tp = rng.choice((2, 4, 8))
    pp = rng.choice([p for p in (1, 2, 4, 8) if tp * p <= GPUS * racks[0]])
    held = sum(GPUS * rack // (tp * pp) for rack in racks)
    pipelines = max(1, int(fill * held * rng.uniform(0.5, 1.0)))
    rule = {"pipeline_parallel" if pp > 1 else "tensor_parallel": {"rack": rng.choice(("require", "prefer"))}}
    placement = {"actor": body(tp, 1, pipelines * pp, exclusive_with="all", topology=rule)}
    if pp > 1:
        placement["actor"]["pipeline_parallel_size"] = pp
    budget = int(fill * nodes * GPUS) - pipelines * tp * pp
    if budget >= 2:
        others = shapes(rng, rng.randint(1, 2), budget, ((1, 1), (2, 1)))
        for name, (other_tp, hpp), groups in zip(NAMES[1:], others, allocate(rng, budget, [t * h for t, h in others])):
            placement[name] = body(other_tp, hpp, groups, exclusive_with="all")
    return section(nodes, GPUS, placement, node_labels=[{"rack": f"r{node // RACK_NODES}"} for node in range(nodes)])


def tensor_domains(rng: random.Random, nodes: int, fill: float) -> Section:
    """Racks of 8 nodes; 2-4 components in TP groups of 2-8 (1-2 GPUs per process), all
    exclusive, each requiring its TP groups inside one rack (see the module docstring)."""
    budget = int(fill * nodes * GPUS)
    chosen = shapes(rng, rng.randint(2, 4), budget, tuple((tp, hpp) for tp, hpp in TP_SHAPES if tp > 1))
    rule = {"tensor_parallel": {"rack": "require"}}
    placement = {
        NAMES[i]: body(tp, hpp, g, exclusive_with="all", topology=rule) for i, ((tp, hpp), g) in enumerate(zip(chosen, allocate(rng, budget, [t * h for t, h in chosen])))
    }
    return section(nodes, GPUS, placement, node_labels=[{"rack": f"r{node // RACK_NODES}"} for node in range(nodes)])


def windows(rng: random.Random, nodes: int, fill: float) -> Section:
    """1-2 filled ``resources`` windows of even length starting on even GPUs (one or two GPUs
    per process), and 1-3 components of TP groups of 1-2 exclusive with every window (see the
    module docstring)."""
    total = nodes * GPUS
    placement: dict[str, Any] = {}
    start = 0
    for i in range(rng.randint(1, 2)):
        length = 2 * rng.randint(1, max(1, (total - start) // 8))
        if start + length > total:
            break
        hpp = rng.choice((1, 2))
        placement[f"window{i}"] = {"resources": f"{start}-{start + length - 1}"} | ({"hardware_per_process": hpp} if hpp > 1 else {})
        start += length + 2 * rng.randint(0, 4)
    used = sum(int(w["resources"].split("-")[1]) - int(w["resources"].split("-")[0]) + 1 for w in placement.values())
    budget = int(fill * (total - used))
    if budget >= 2:
        chosen = shapes(rng, rng.randint(1, 3), budget, ((1, 1), (2, 1), (1, 2)))
        for i, ((tp, hpp), groups) in enumerate(zip(chosen, allocate(rng, budget, [t * h for t, h in chosen]))):
            placement[NAMES[i]] = body(tp, hpp, groups, exclusive_with=[name for name in placement if name.startswith("window")])
    return section(nodes, GPUS, placement)


def contiguity(rng: random.Random, nodes: int, fill: float) -> Section:
    """A ``disaggregated``, ``collocated`` or ``ring`` spec with ``contiguity`` weighed."""
    spec = rng.choice((disaggregated, collocated, ring))(rng, nodes, fill)
    return {**spec, "solver": {"objective": {"contiguity": rng.choice((1, 5)), "nodes": rng.choice((1, 10_000))}}}


def balance(rng: random.Random, nodes: int, fill: float) -> Section:
    """A ``ring`` spec of six components (TP groups of 1-4) with ``balance`` weighed."""
    spec = ring(rng, nodes, fill, count=6)
    return {**spec, "solver": {"objective": {"balance": rng.choice((1, 1_000)), "nodes": rng.choice((1, 10_000))}}}


def one_per_node(rng: random.Random, nodes: int, fill: float) -> Section:
    """2-4 components of one 8-GPU process per node, all pairwise exclusive (the huge sizes)."""
    budget = int(fill * nodes)
    count = min(rng.randint(2, 4), budget)
    groups = allocate(rng, budget, [1] * count)
    return section(nodes, GPUS, {NAMES[i]: body(1, GPUS, g, exclusive_with="all") for i, g in enumerate(groups)})


#: Racks per zone in the ``topology mixes`` family (the ``zone`` node label).
ZONE_RACKS = 4


def topology_mixes(rng: random.Random, nodes: int, fill: float) -> Section:
    """Racks of 8 nodes in zones of 4 racks; maybe a rank string on the first nodes with a
    shadow collocated with it (pipelines of 2 x 2 preferring or requiring a rack); an actor
    exclusive with those, whose pipelines fit a rack's free GPUs, with TP and pipeline rules over both labels,
    required or preferred; maybe a rollout collocated with it whose pipelines nest in the
    actor's and must stay in a rack; 1-2 components exclusive with all; ``balance`` weighed a
    quarter of the time (see the module docstring)."""
    placement: dict[str, Any] = {}
    held = 0
    if nodes > 1 and rng.random() < 0.5:
        held = rng.randint(1, max(1, nodes // RACK_NODES))
        placement["fixed"] = f"0-{held * GPUS - 1}"
        placement["shadow"] = {"processes": held * GPUS, "tensor_parallel_size": 2, "pipeline_parallel_size": 2, "collocate_with": "fixed",
                               "topology": {"pipeline_parallel": {"rack": rng.choice(("require", "prefer"))}}}  # fmt: skip
    free = [GPUS * sum(1 for n in range(start, min(nodes, start + RACK_NODES)) if n >= held) for start in range(0, nodes, RACK_NODES)]
    topology: dict[str, dict[str, str]] = {}
    if sum(free) >= 2 * RACK_NODES * GPUS and rng.random() < 0.25:  # pipelines of two racks preferring one: some must span
        tp, pp = GPUS, 2 * RACK_NODES
        pipelines = max(1, int(fill * (sum(free) // (tp * pp)) * rng.uniform(0.5, 1.0)))
        topology["pipeline_parallel"] = {"rack": "prefer"}
        tensor = None
    else:
        tp = rng.choice((2, 4, 8))
        pp = rng.choice([p for p in (1, 2, 4, 8) if tp * p <= max(free)])
        pipelines = max(1, int(fill * sum(room // (tp * pp) for room in free) * rng.uniform(0.5, 1.0)))
        tensor = rng.choice((None, ("rack", "require"), ("rack", "prefer"), ("zone", "prefer")))
        if tensor:
            topology["tensor_parallel"] = {tensor[0]: tensor[1]}
        if pp > 1:
            topology["pipeline_parallel"] = rng.choice(({"rack": "require"}, {"rack": "prefer"}, {"zone": "require"}, {"zone": "require", "rack": "prefer"}))
    rules: dict[str, Any] = {"topology": topology} if topology else {}
    if held:
        rules["exclusive_with"] = ["fixed", "shadow"]  # not "all": its rollout shares its GPUs
    actor = body(tp, 1, pipelines * pp, **rules)
    if pp > 1:
        actor["pipeline_parallel_size"] = pp
    placement["actor"] = actor
    if rng.random() < 0.5:
        spanning = tensor == ("rack", "require")  # the actor's groups may span nodes: the rollout's may not be wider than a process
        rollout_tp = 1 if spanning else rng.choice([t for t in (1, 2) if t <= tp])
        rollout_pp = rng.choice([p for p in (1, 2) if (tp * pp) % (rollout_tp * p) == 0])
        rollout: dict[str, Any] = {"processes": pipelines * tp * pp, "collocate_with": "actor", "tensor_parallel_size": rollout_tp}
        if rollout_pp > 1:
            rollout |= {"pipeline_parallel_size": rollout_pp, "topology": {"pipeline_parallel": {"rack": "require"}}}
        placement["rollout"] = rollout
    budget = int(fill * (sum(free) - pipelines * tp * pp))
    return _racked_with_rest(rng, nodes, placement, budget)


def topology_overlaps(rng: random.Random, nodes: int, fill: float) -> Section:
    """Racks of 8 nodes in zones of 4 racks, and one of three mixes of topology rules the count
    model once declined (see the module docstring); 1-2 components exclusive with all on what is
    left; ``balance`` weighed a quarter of the time."""
    racks = [min(RACK_NODES, nodes - start) for start in range(0, nodes, RACK_NODES)]
    tp = rng.choice((4, 8))
    blocks = sum(rack * (GPUS // tp) // 6 for rack in racks)  # 6 groups: whole pipelines of 2 and of 3 groups
    mix = rng.choice(("overlap", "spanning", "two members"))
    if mix == "overlap" and blocks:
        chosen = max(1, int(fill * blocks * rng.uniform(0.5, 1.0)))
        actor = body(tp, 1, 6 * chosen, pipeline_parallel_size=2, topology={"pipeline_parallel": {"rack": "require"}})
        rollout = {"processes": 6 * chosen * tp, "collocate_with": "actor", "tensor_parallel_size": tp, "pipeline_parallel_size": 3,
                   "topology": {"pipeline_parallel": {rng.choice(("rack", "zone")): "require"}}}  # fmt: skip
        placement: dict[str, Any] = {"actor": actor, "rollout": rollout}
    else:
        pp = rng.choice([p for p in (3, 5, 6, 12, 16) if p <= nodes] or [2])
        pipelines = max(1, int(fill * (nodes // pp) * rng.uniform(0.5, 1.0)))
        actor = body(GPUS, 1, pipelines * pp, pipeline_parallel_size=pp, topology={"pipeline_parallel": {"rack": "prefer"}})
        placement = {"actor": actor}
        if mix == "two members":
            stages = rng.choice([p for p in (2, 4) if (pipelines * pp) % p == 0] or [1])
            placement["rollout"] = {"processes": pipelines * pp * GPUS, "collocate_with": "actor", "tensor_parallel_size": GPUS,
                                    "pipeline_parallel_size": stages, "topology": {"pipeline_parallel": {"zone": "prefer"}}}  # fmt: skip
    budget = int(fill * (nodes * GPUS - placement["actor"]["processes"]))  # the rollout shares the actor's GPUs
    return _racked_with_rest(rng, nodes, placement, budget)


def _racked_with_rest(rng: random.Random, nodes: int, placement: dict[str, Any], budget: int) -> Section:
    """``placement`` and 1-2 components exclusive with all asking ``budget`` GPUs (groups of 1-2),
    on racks of 8 nodes in zones of 4 racks; ``balance`` weighed a quarter of the time."""
    if budget >= 2:
        others = shapes(rng, rng.randint(1, 2), budget, ((1, 1), (2, 1)))
        names = (name for name in NAMES[1:] if name not in placement)
        for name, (other_tp, hpp), groups in zip(names, others, allocate(rng, budget, [t * h for t, h in others])):
            placement[name] = body(other_tp, hpp, groups, exclusive_with="all")
    labels = [{"rack": f"r{n // RACK_NODES}", "zone": f"z{n // (RACK_NODES * ZONE_RACKS)}"} for n in range(nodes)]
    spec = section(nodes, GPUS, placement, node_labels=labels)
    return {**spec, "solver": {"objective": {"balance": 1}}} if rng.random() < 0.25 else spec


def other_hardware(rng: random.Random, nodes: int, fill: float) -> Section:
    """GPU components as ``disaggregated`` beside robots (0, 2 or 4 on each node, node group
    ``robots``): 1-2 robot components of 1 or 2 robots a process, exclusive with each other and
    with a rank string on the first robots when there is one, maybe an ``agent`` of whole nodes
    (``unit: node``); ``balance`` weighed in a quarter of the cases (see the module docstring)."""
    spec = disaggregated(rng, nodes, fill)
    robots = [rng.choice((0, 2, 4)) for _ in range(nodes)]
    if not any(robots):
        robots[rng.randrange(nodes)] = 2
    configs = [{"node_rank": node, "robot_ip": f"10.{node // 256}.{node % 256}.{r}"} for node, count in enumerate(robots) for r in range(count)]
    placement = spec["component_placement"]
    fixed = 2 * rng.randint(0, sum(robots) // 8)
    if fixed:
        placement["sim"] = {"node_group": "robots", "placement": f"0-{fixed - 1}"}
    budget = int(fill * (sum(robots) - fixed))
    if budget >= 2:
        chosen = shapes(rng, rng.randint(1, 2), budget, ((1, 1), (1, 2)))
        names = ("env", "camera")[: len(chosen)]
        for name, (_, hpp), groups in zip(names, chosen, allocate(rng, budget, [h for _, h in chosen])):
            others = [other for other in (*names, "sim") if other != name and other in (*names, *placement)]
            placement[name] = body(1, hpp, groups, node_group="robots", **({"exclusive_with": others} if others else {}))
    if rng.random() < 0.5:
        placement["agent"] = {"unit": "node", "processes": max(1, int(fill * nodes))}
    if rng.random() < 0.25:
        spec["solver"] = {"objective": {"balance": 10}}
    if rng.random() < 0.5:
        spanning(rng, placement, nodes, robots, fill)
    return {**spec, "node_groups": [{"label": "robots", "node_ranks": f"0-{nodes - 1}", "hardware": {"type": "robot", "configs": configs}}]}


def spanning(rng: random.Random, placement: dict[str, Any], nodes: int, robots: list[int], fill: float) -> None:
    """Add to an ``other hardware`` spec a rank string ``bridge`` over the last robots and the
    first GPUs (node groups ``robots, cluster``: one item a process) and a ``scout`` over both
    kinds (1 or 2 items a process, of one kind each), exclusive with the bridge, asking at most
    ``fill`` of the items the bridge leaves (counted per node and kind in whole processes). The
    other components' ``exclusive_with: all`` is written out as the names they had, so neither
    new one meets them: every planted layout stays one, and the scout's is any set of the
    bridge's leftovers."""
    names = list(placement)
    for name in names:
        if isinstance(placement[name], dict) and placement[name].get("exclusive_with") == "all":
            placement[name]["exclusive_with"] = [other for other in names if other != name]
    robot_items = sum(robots)
    width = rng.randint(2, 4)
    start = robot_items - rng.randint(1, min(width - 1, robot_items))  # the last robots, then the first GPUs
    placement["bridge"] = {"node_group": "robots, cluster", "placement": f"{start}-{start + width - 1}"}
    held_robots = set(range(start, robot_items))
    held_gpus = set(range(0, start + width - robot_items))
    per_process = rng.choice((1, 2))
    room, robot = 0, 0
    for node, count in enumerate(robots):
        free_robots = sum(1 for r in range(robot, robot + count) if r not in held_robots)
        free_gpus = sum(1 for g in range(node * GPUS, (node + 1) * GPUS) if g not in held_gpus)
        room += free_robots // per_process + free_gpus // per_process
        robot += count
    processes = max(1, int(fill * room))
    placement["scout"] = {"node_group": ["robots", "cluster"], "processes": processes, "hardware_per_process": per_process, "exclusive_with": ["bridge"]}


def strides(rng: random.Random, nodes: int, fill: float) -> Section:
    """An ``actor`` of 2-4 GPUs a process, stride 2-4, in TP groups of 1-3 that are not a
    multiple of the stride (its blocks do not tile a group), maybe a ``ref`` of one GPU a process
    on exactly its GPUs, a ``reward`` exclusive with them and a ``critic`` of process limit 2
    beside all; ``contiguity`` weighed (1) a quarter of the time (see the module docstring)."""
    amount, stride = rng.choice([(a, s) for a in (2, 3, 4) for s in (2, 3, 4) if (a - 1) * s < GPUS])
    held = GPUS // (amount * stride) * stride + max(0, GPUS % (amount * stride) - (amount - 1) * stride)  # progressions a node holds
    tp = rng.choice([t for t in (1, 2, 3) if t % stride and t <= held])
    groups = rng.randint(1, held // tp)  # per node in the planted layout
    placement: dict[str, Any] = {"actor": body(tp, amount, max(1, int(fill * nodes * groups)), stride=stride)}
    if rng.random() < 0.5:
        placement["ref"] = {"processes": placement["actor"]["processes"] * amount, "collocate_with": "actor"}
    free = nodes * (GPUS - groups * tp * amount)  # the planted layout's GPUs beside the actor
    if int(fill * free):
        placement["reward"] = body(1, 1, int(fill * free), exclusive_with=[name for name in ("actor", "ref") if name in placement])
    if int(fill * free) and rng.random() < 0.5:
        placement["critic"] = body(1, 1, int(fill * free), max_processes_per_hardware=2)
    spec = section(nodes, GPUS, placement)
    return {**spec, "solver": {"objective": {"contiguity": 1}}} if rng.random() < 0.25 else spec

def strided_followers(rng: random.Random, nodes: int, fill: float) -> Section:
    """A strided component of 2-4 GPUs a process, stride 2-4, TP 1 to the stride less one, and a
    collocated one of another shape: half the time (where a node holds whole blocks of its TP
    groups) an ``actor`` with a ``ref`` of ``amount * stride`` consecutive GPUs a process (its
    blocks, ``stride`` of the actor's processes each), else a one-GPU ``actor`` of TP ``amount``
    with the strided one as a ``rollout`` collocated with it (a block does not tile its groups);
    a ``reward`` exclusive with both (see the module docstring)."""
    amount, stride = rng.choice([(a, s) for a in (2, 3, 4) for s in (2, 3, 4) if a * s <= GPUS])
    tp = rng.randint(1, stride - 1)
    blocks = rng.random() < 0.5 and stride * (GPUS // (amount * stride)) >= math.lcm(tp, stride)
    per = math.lcm(tp, stride) // tp if blocks else 1  # groups per node come in whole blocks
    most = (stride * (GPUS // (amount * stride)) if blocks else GPUS // (amount * stride) * stride + max(0, GPUS % (amount * stride) - (amount - 1) * stride)) // tp
    groups = rng.randint(1, most // per) * per  # per node in the planted layout
    total = max(per, int(fill * nodes * groups) // per * per)
    strided = body(tp, amount, total, stride=stride)
    if blocks:
        placement: dict[str, Any] = {"actor": strided, "ref": {"processes": total * tp // stride, "hardware_per_process": amount * stride, "collocate_with": "actor"}}
    else:
        placement = {"actor": body(amount, 1, total * tp), "rollout": {**strided, "collocate_with": "actor"}}
    free = nodes * (GPUS - groups * tp * amount)  # the planted layout's GPUs beside the class
    if int(fill * free):
        placement["reward"] = body(1, 1, int(fill * free), exclusive_with=[name for name in placement if name != "actor"] + ["actor"])
    return section(nodes, GPUS, placement)


#: ``common strides``: (GPUs a node, actor amount, stride, TP, rollout amount, stride), each a
#: class whose actor group is one progression of the strides' common factor.
COMMON_STRIDES = ((16, 2, 4, 2, 2, 2), (12, 3, 4, 2, 2, 2), (12, 2, 6, 2, 2, 3), (16, 3, 4, 2, 2, 2))


def common_strides(rng: random.Random, nodes: int, fill: float) -> Section:
    """A holey strided ``actor`` and a ``rollout`` of another strided shape on its GPUs, both
    tiling progressions of their strides' common factor, and a ``reward`` exclusive with both
    (see the module docstring)."""
    gpus, amount, stride, tp, each, apart = rng.choice(COMMON_STRIDES)
    step = math.gcd(stride, apart)
    length = math.lcm(amount * stride // step, each * apart // step)  # one actor group: tp * amount GPUs
    per_node = step * (gpus // step // length)  # the progressions a node holds, one residue's chain at a time
    groups = max(1, int(fill * nodes * per_node))
    placement: dict[str, Any] = {"actor": body(tp, amount, groups, stride=stride)}
    placement["rollout"] = {"processes": groups * tp * amount // each, "hardware_per_process": each, "stride": apart, "collocate_with": "actor"}
    free = nodes * gpus - groups * tp * amount
    if int(fill * free):
        placement["reward"] = body(1, 1, int(fill * free), exclusive_with=["actor", "rollout"])
    return section(nodes, gpus, placement)


def drained_strides(rng: random.Random, nodes: int, fill: float) -> Section:
    """A strided ``actor`` (blocks of ``amount * stride`` GPUs a group) kept off one GPU of each
    of the first half of the nodes by the rank string ``drained``, maybe a one-GPU ``ref`` on its
    GPUs, a ``critic`` exclusive with it; :func:`undrained` is the re-planned spec (see the
    module docstring)."""
    amount, stride = rng.choice([(2, 2), (2, 3), (3, 2)])
    block, drained_nodes = amount * stride, max(1, nodes // 2)
    local = rng.randint(1, max(1, GPUS - block - 1))  # before the node's last block: the planted layout keeps one there
    planted = drained_nodes + (nodes - drained_nodes) * (GPUS // block)
    groups = max(1, int(fill * planted))
    placement: dict[str, Any] = {
        "drained": ",".join(str(node * GPUS + local) for node in range(drained_nodes)),
        "actor": body(stride, amount, groups, stride=stride, exclusive_with=["drained"]),
    }
    if rng.random() < 0.5:
        placement["ref"] = {"processes": groups * stride * amount, "collocate_with": "actor"}
    free = nodes * GPUS - groups * block  # the planted layout's GPUs beside the actor
    if int(fill * free):
        placement["critic"] = body(1, 1, int(fill * free), exclusive_with=["actor"])
    spec = section(nodes, GPUS, placement)
    return {**spec, "solver": {"objective": {"contiguity": 1}}} if rng.random() < 0.25 else spec


def undrained(case: Case) -> Section:
    """A ``drained strides`` case's section with the drained GPUs back: no ``drained`` rank
    string, the actor no longer kept off it."""
    placement = {name: component for name, component in case.section["component_placement"].items() if name != "drained"}
    placement["actor"] = {key: value for key, value in placement["actor"].items() if key != "exclusive_with"}
    return {**case.section, "component_placement": placement}


# ------------------------------------------------------------------------ impossible specs
def overfull(rng: random.Random, nodes: int) -> Section:
    """Exclusive components asking 100-130% of the GPUs, at least one GPU too many."""
    gpus = nodes * GPUS
    chosen = shapes(rng, rng.randint(2, 4), gpus, TP_SHAPES)
    widths = [tp * hpp for tp, hpp in chosen]
    groups = allocate(rng, gpus, widths)
    grown = rng.randrange(len(widths))
    missing = max(gpus + 1, int(gpus * rng.uniform(1.0, 1.3))) - sum(g * w for g, w in zip(groups, widths))
    groups[grown] += -(-missing // widths[grown])
    return section(nodes, GPUS, {
        NAMES[i]: body(tp, hpp, g, exclusive_with="all") for i, ((tp, hpp), g) in enumerate(zip(chosen, groups))
    })  # fmt: skip


def fragmented(rng: random.Random, nodes: int) -> Section:
    """TP groups of 4 on 6-GPU nodes: one per node, one group more than nodes."""
    return section(nodes, 6, {"actor": body(4, 1, nodes + 1)})


def granularity(rng: random.Random, nodes: int) -> Section:
    """Whole-node TP groups of 8 and exclusive 5-GPU processes (two never share a node):
    one block more than nodes, while the GPUs suffice by counting (>= 3 five-GPU processes)."""
    reward = rng.randint(3, nodes)
    return section(nodes, GPUS, {
        "actor": body(8, 1, nodes + 1 - reward),
        "reward": body(1, 5, reward, exclusive_with=["actor"]),
    })  # fmt: skip


def gpu_memory(rng: random.Random, nodes: int) -> Section:
    """A 60 GB actor and a 40 GB rollout collocated on 80 GB GPUs."""
    actor = body(1, 1, nodes * GPUS * rng.choice((1, 2)) // 2, memory_gb=60)
    return section(nodes, GPUS, {"actor": actor, "rollout": collocation(actor, "actor", 1, memory_gb=40)}, gpu_memory_gb=80)


def rack(rng: random.Random, nodes: int) -> Section:
    """Pipelines of 32 GPUs required inside racks of 2 nodes (16 GPUs)."""
    actor = body(8, 1, 4 * rng.randint(1, max(1, nodes // 4)), pipeline_parallel_size=4, topology={"pipeline_parallel": {"rack": "require"}})
    return section(nodes, GPUS, {"actor": actor}, node_labels=[{"rack": f"r{node // 2}"} for node in range(nodes)])


def wide_groups(rng: random.Random, nodes: int) -> Section:
    """TP groups of 8 on a node group of 4-GPU nodes, beside 8-GPU nodes that would hold them."""
    big = max(1, nodes // 4)
    return section(nodes, [GPUS] * big + [4] * (nodes - big), {"actor": body(8, 1, big, node_group="small")}, node_groups=[
        {"label": "small", "node_ranks": f"{big}-{nodes - 1}"},
    ])  # fmt: skip


#: Reason -> generator, and the fewest nodes the reason needs.
INFEASIBLE_KINDS: dict[str, tuple[Callable[[random.Random, int], Section], int]] = {
    "over 100% fill": (overfull, 2),
    "TP groups fragmented": (fragmented, 2),
    "granularity under exclusivity": (granularity, 3),
    "GPU memory": (gpu_memory, 2),
    "pipeline larger than a rack": (rack, 2),
    "TP group wider than its nodes": (wide_groups, 2),
}


# ------------------------------------------------------------------------ the cases
FEASIBLE: dict[str, Callable[[random.Random, int, float], Section]] = {
    "disaggregated": disaggregated,
    "collocated": collocated,
    "heterogeneous": heterogeneous,
    "memory": memory,
    "topology": topology,
    "ring": ring,
    "limits": limits,
    "rank strings": rank_strings,
    "uneven rank strings": uneven_rank_strings,
    "tp domains": tensor_domains,
    "windows": windows,
    "contiguity": contiguity,
    "topology mixes": topology_mixes,
    "other hardware": other_hardware,
    "fixed loads": fixed_loads,
    "balance": balance,
    "collocation chains": lambda rng, nodes, fill: collocation_chains(rng, nodes, fill),
    "topology overlaps": topology_overlaps,
    "strides": strides,
    "kinds memory": lambda rng, nodes, fill: kinds_memory(rng, nodes, fill),
    "wide strides": lambda rng, nodes, fill: wide_strides(rng, nodes, fill),
    "strided followers": strided_followers,
    "common strides": common_strides,
    "mixed kinds contiguity": lambda rng, nodes, fill: mixed_kinds_contiguity(rng, nodes, fill),
}
#: Families re-planned after a first solve: ``replan`` times :func:`replan`, ``previous`` times
#: ``solve(..., previous=)`` on the surviving cluster, ``resized`` with a demand changed.
REPLANS = ("replan", "previous", "resized")
#: Re-planned families with a first spec of their own: the re-planned spec is a function of it.
CHANGED: dict[str, Callable[[random.Random, int, float], Section]] = {"drained strides": drained_strides}
FAMILIES = (*FEASIBLE, *REPLANS, *CHANGED, "infeasible")
#: The family of the huge sizes (``--big``).
BIG_FAMILY = "one per node"


def make_case(family: str, nodes: int, seed: int) -> Case:
    """The case ``family:nodes:seed``."""
    rng = random.Random(f"{family}:{nodes}:{seed}")
    if family in FEASIBLE:
        return Case(family, nodes, seed, FEASIBLE[family](rng, nodes, draw_fill(rng)))
    if family in CHANGED:
        return Case(family, nodes, seed, CHANGED[family](rng, nodes, draw_fill(rng)))
    if family == BIG_FAMILY:
        return Case(family, nodes, seed, one_per_node(rng, nodes, draw_fill(rng)))
    if family in REPLANS:
        losses = rng.choice((1, 2)) if nodes >= 8 else 1
        base = rng.choice((disaggregated, collocated))
        return Case(family, nodes, seed, base(rng, nodes, draw_fill(rng, (nodes - losses) / nodes)), losses=0 if family == "resized" else losses)
    if family == "infeasible":
        kind = rng.choice([name for name, (_, fewest) in INFEASIBLE_KINDS.items() if nodes >= fewest])
        return Case(family, nodes, seed, INFEASIBLE_KINDS[kind][0](rng, nodes), kind=kind)
    raise ValueError(f"unknown family {family!r}")


def resized(case: Case) -> Section:
    """A ``resized`` case's section with its demand changed (drawn from its key): one component
    that collocates with none a TP group smaller (larger when none has two), and its collocated
    rollout with it."""
    rng = random.Random(f"{case.key}:resized")
    placement = case.section["component_placement"]
    free = sorted(n for n, c in placement.items() if "collocate_with" not in c)
    shrinking = [n for n in free if placement[n]["processes"] >= 2 * placement[n].get("tensor_parallel_size", 1)]
    name = rng.choice(shrinking or free)
    target = dict(placement[name])
    tp = target.get("tensor_parallel_size", 1)
    target["processes"] += -tp if shrinking else tp
    changed = {**placement, name: target}
    for other, component in placement.items():
        if component.get("collocate_with") == name:
            changed[other] = collocation(target, name, component.get("hardware_per_process", 1))
    return {**case.section, "component_placement": changed}


def draw_nodes(family: str, seed: int, low: int, high: int) -> int:
    """A node count in ``[low, high]``, log-uniform (as many small clusters as large ones);
    re-planning needs 4 or more so that losing nodes leaves a job worth re-planning."""
    low = max(low, 4) if family in REPLANS else low
    rng = random.Random(f"{family}:{seed}:nodes")
    return min(high, max(low, round(math.exp(rng.uniform(math.log(low), math.log(high))))))


# ------------------------------------------------------------------------ collocation chains
def collocation_chains(rng: random.Random, nodes: int, fill: float) -> Section:
    """An ``actor`` (TP 2-8, 1-2 GPUs a process) and 2-3 components each collocated with an
    earlier one (a chain half the time, else a tree): each holds the actor's GPUs in processes
    nested in its target's TP groups (1 GPU up to the group, ``stride: auto`` or 1) or spanning
    2-4 of them, in TP groups of 1-4 no wider than a node, one of them now and then confined to a
    node group ``front`` of the nodes the class's planted layout uses; then 1-2 components
    exclusive with all on what the class leaves (module docstring: the planted layout)."""
    budget = int(fill * nodes * GPUS)
    tp, hpp = rng.choice([(t, h) for t, h in ((2, 1), (4, 1), (8, 1), (2, 2), (4, 2)) if t * h <= budget])
    shapes_of = {"actor": (tp, hpp)}
    rules: dict[str, dict[str, Any]] = {"actor": {}}
    for name in ("rollout", "ref", "reward")[: rng.randint(2, 3)]:
        target = list(shapes_of)[-1] if rng.random() < 0.5 else rng.choice(list(shapes_of))
        width = math.prod(shapes_of[target])
        whole = "stride" not in rules[target]  # a strided target's groups interleave: only single GPUs nest in them
        each = rng.choice([h for h in (1, 2, 4, 8) if h <= GPUS and (h == 1 or (width % h == 0 and whole) or (h > width and h % width == 0))])
        follower_tp = rng.choice([t for t in (1, 2, 4) if t * each <= GPUS])
        shapes_of[name] = (follower_tp, each)
        rules[name] = {"collocate_with": target}
        if each > 1 and width % each == 0 and width > each and rng.random() < 0.5:
            rules[name]["stride"] = "auto"  # blocks of the target's group, interleaved
    unit = max(math.prod(shape) for shape in shapes_of.values())
    groups = max(1, budget // unit // 2) if rng.random() < 0.5 else max(1, budget // unit)
    held = groups * unit
    placement = {name: body(t, h, held // (t * h), **rules[name]) for name, (t, h) in shapes_of.items()}
    used = -(-held // GPUS)
    if rng.random() < 0.3:
        placement[rng.choice(list(shapes_of)[1:])]["node_group"] = "front"
    left = budget - held
    if left >= 2:
        chosen = shapes(rng, rng.randint(1, 2), left, ((1, 1), (2, 1), (1, 2)))
        for name, (t, h), g in zip(("critic", "judge"), chosen, allocate(rng, left, [t * h for t, h in chosen])):
            placement[name] = body(t, h, g, exclusive_with="all")
    return section(nodes, GPUS, placement, node_groups=[{"label": "front", "node_ranks": f"0-{used - 1}"}])


# ------------------------------------------------------------------------ kinds memory, wide strides
def kinds_memory(rng: random.Random, nodes: int, fill: float) -> Section:
    """8-GPU nodes of 40 or 80 GB beside 0, 2 or 4 robots (node group ``robots``): a ``scout``
    over both kinds (either order) with ``memory_gb`` 50-70 (more than a 40 GB GPU holds: there
    it may take robots only), a ``probe`` over both kinds with 20-40 GB (too much to share a GPU
    with the scout, free to share its robots) and an ``actor`` of GPUs alone with 30 GB. The
    planted layout gives each its own items, no sharing: the scout at most ``fill`` of the first
    half of every node's robots and of the 80 GB nodes' GPUs, the probe of the rest of the robots
    and 80 GB GPUs and half of the 40 GB ones, the actor of the other half; a quarter of the
    cases weigh ``balance`` (10)."""
    large = [rng.random() < 0.5 for _ in range(nodes)]
    robots = [rng.choice((0, 2, 4)) for _ in range(nodes)]
    if not any(robots):
        robots[rng.randrange(nodes)] = 2
    configs = [{"node_rank": node, "robot_ip": f"10.{node // 256}.{node % 256}.{r}"} for node, count in enumerate(robots) for r in range(count)]
    big = GPUS * sum(large)
    small = GPUS * (nodes - sum(large))
    scout_room = sum(robots) // 2 + big // 2
    probe_room = sum(robots) - sum(robots) // 2 + big - big // 2 + small // 2
    placement: dict[str, Any] = {
        "scout": {"node_group": rng.choice((["cluster", "robots"], ["robots", "cluster"])), "processes": max(1, int(fill * scout_room)),
                  "memory_gb": rng.choice((50, 60, 70))},
        "probe": {"node_group": rng.choice((["robots", "cluster"], "robots, cluster")), "processes": max(1, int(fill * probe_room)),
                  "memory_gb": rng.choice((20, 30, 40))},
    }  # fmt: skip
    if int(fill * (small - small // 2)):
        placement["actor"] = {"processes": int(fill * (small - small // 2)), "memory_gb": 30}
    spec = section(nodes, GPUS, placement, gpu_memory_gb=[80 if node else 40 for node in large])
    if rng.random() < 0.25:
        spec["solver"] = {"objective": {"balance": 10}}
    return {**spec, "node_groups": [{"label": "robots", "node_ranks": f"0-{nodes - 1}", "hardware": {"type": "robot", "configs": configs}}]}


#: GPUs per node of the ``wide strides`` family (a rack-scale node).
WIDE_GPUS = 72


def wide_strides(rng: random.Random, nodes: int, fill: float) -> Section:
    """72-GPU nodes: an ``actor`` of 3 or 5 GPUs a process, stride 2 or 3 (one process a group,
    so its progressions leave holes), a ``ref`` exclusive with it and a ``reward`` beside both
    (exclusive with the ref half the time), one GPU a process. The planted layout puts the same
    progressions on every node, at most ``fill`` of those a node holds but one, the ref at most ``fill``
    of the GPUs the actor leaves and the reward the same again (with the ref when not exclusive
    with it, else on the actor's GPUs)."""
    amount, stride = rng.choice(((3, 2), (5, 2), (3, 3), (5, 3)))
    held = sum(((WIDE_GPUS - residue + stride - 1) // stride) // amount for residue in range(stride))
    per_node = max(1, int(fill * (held - 1)))  # one progression's GPUs left at least, for the ref
    free = nodes * (WIDE_GPUS - per_node * amount)
    placement: dict[str, Any] = {"actor": {"processes": per_node * nodes, "hardware_per_process": amount, "stride": stride}}
    apart = rng.random() < 0.5
    placement["ref"] = {"processes": max(1, int(fill * free)), "exclusive_with": ["actor"]}
    reward_room = nodes * per_node * amount if apart else free
    placement["reward"] = {"processes": max(1, int(fill * reward_room)), **({"exclusive_with": ["ref"]} if apart else {})}
    return section(nodes, WIDE_GPUS, placement)



# ------------------------------------------------------------------------ mixed kinds contiguity
#: A window over both kinds, in each way a config writes it: GPUs first, robots first, one string.
BOTH_KINDS: tuple[Any, ...] = (["cluster", "robots"], ["robots", "cluster"], "robots, cluster")


def mixed_kinds_contiguity(rng: random.Random, nodes: int, fill: float) -> Section:
    """8-GPU nodes beside 0, 2 or 4 robots (node group ``robots``; alike over 1-3 blocks of
    consecutive nodes, as robots are wired to racks), ``contiguity`` weighed over
    windows of both kinds (see the module docstring): a ``scout`` (1 or 2 items a process, or TP
    2), a ``probe`` and a GPU ``actor``, pairwise exclusive, each asking at most ``fill`` of its
    planted share of every node in whole processes (and TP groups) of one kind each."""
    cuts = sorted(rng.sample(range(1, nodes), min(nodes - 1, rng.randint(0, 2))))
    robots = [count for low, high in zip([0, *cuts], [*cuts, nodes]) for count in [rng.choice((0, 2, 4))] * (high - low)]
    if not any(robots):
        robots = [2] * nodes
    configs = [{"node_rank": node, "robot_ip": f"10.{node // 256}.{node % 256}.{r}"} for node, count in enumerate(robots) for r in range(count)]
    per_process, tp = rng.choice(((1, 1), (2, 1), (1, 2)))
    scout_room = sum((count // 2 // per_process + 4 // per_process) // tp * tp for count in robots)  # processes a node's share holds
    probe_room = sum(count - count // 2 + 2 for count in robots)
    scout: dict[str, Any] = {"node_group": rng.choice(BOTH_KINDS), "processes": max(tp, int(fill * scout_room) // tp * tp)}
    if per_process > 1:
        scout["hardware_per_process"] = per_process
    if tp > 1:
        scout["tensor_parallel_size"] = tp
    placement: dict[str, Any] = {
        "scout": {**scout, "exclusive_with": ["probe", "actor"]},
        "probe": {"node_group": rng.choice(BOTH_KINDS), "processes": max(1, int(fill * probe_room)), "exclusive_with": ["actor"]},
        "actor": {"processes": max(1, int(fill * 2 * nodes))},
    }
    objective: dict[str, int] = {"contiguity": rng.choice((1, 5)), "nodes": rng.choice((1, 10_000))}
    if rng.random() < 0.25:
        objective["balance"] = 10
    spec = section(nodes, GPUS, placement, node_groups=[{"label": "robots", "node_ranks": f"0-{nodes - 1}", "hardware": {"type": "robot", "configs": configs}}])
    return {**spec, "solver": {"objective": objective}}
