"""What goes wrong, node by node, with the layout slime's code gives a job (see ``layout.py``).

slime checks none of this before it starts: the placement group's size against the cluster, a
tensor-parallel engine's bundles against node borders, the GPUs an SGLang server drives against
the bundles reserved for it (it counts from ``base_gpu_id`` on), the host it tells a server
against where the server runs (it groups engines by ``--num-gpus-per-node``, which it never
measures), or rollout GPUs that no engine takes (``--rollout-num-gpus`` not a multiple of the
engine size). The findings here carry no fix; ``fixes.py`` adds them. (A server never drives a
train rank's GPU: the sorted bundles put the train ranks first, and a server counts upward from
its own first bundle.)
"""

from __future__ import annotations

from collections import defaultdict

from solver_placement._errors import agreeing, counted
from solver_placement._frontends.slime.bundles import Slot
from solver_placement._frontends.slime.layout import EngineActor, SlimeLayout
from solver_placement._prediction.checks import shared_gpus, split_engines
from solver_placement._prediction.findings import Finding, FindingKind


def layout_findings(layout: SlimeLayout) -> list[Finding]:
    """Every failed check of ``layout``, errors first in slime's order of starting things."""
    if layout.slots is None:
        return [_pending_group(layout)]
    findings = _incomplete_engines(layout.engines)
    findings += split_engines(rank for rank in layout.ranks if rank.role != "rollout")
    findings += [_split(actor) for actor in layout.engines if len({slot.node for slot in actor.reserved}) > 1]
    findings += [finding for actor in layout.engines for finding in _wrong_devices(layout, actor)]
    findings += shared_gpus(layout.ranks)  # engines driving past their bundles into the next engine's
    findings += _idle(layout, layout.slots)
    return findings


def _pending_group(layout: SlimeLayout) -> Finding:
    total = int(sum(layout.cluster.gpus_per_node))
    role = "actor" if layout.job.actor_gpus > total else "rollout"
    return Finding(
        FindingKind.PENDING, role, None, layout.size,
        f"slime's placement group asks {layout.size} GPUs (actor {layout.job.actor_gpus}, rollout {layout.job.rollout_num_gpus}"
        f"{', colocated' if layout.job.colocate else ''}) and the cluster has {total}: pg.ready() waits forever",
    )  # fmt: skip


def _incomplete_engines(actors: list[EngineActor]) -> list[Finding]:
    """Multi-node engines missing a node part (SGLang's node 0 waits for it forever)."""
    parts: dict[int, list[int]] = defaultdict(list)
    first: dict[int, EngineActor] = {}
    for actor in actors:
        parts[actor.engine].append(actor.node_rank)
        first.setdefault(actor.engine, actor)
    findings = []
    for engine, ranks in sorted(parts.items()):
        nnodes, node = first[engine].nnodes, first[engine].node
        if sorted(ranks) != list(range(nnodes)):
            findings.append(
                Finding(
                    FindingKind.PENDING, "rollout", node, nnodes - len(set(ranks)) or 1,
                    f"engine {engine} spans {nnodes} nodes but slime starts its node {agreeing(len(ranks), 'part')} {sorted(ranks)} only: "
                    "the rollout GPUs do not divide into whole engines, and SGLang waits for the missing part forever",
                )
            )  # fmt: skip
    return findings


def _split(actor: EngineActor) -> Finding:
    nodes = sorted({slot.node for slot in actor.reserved})
    return Finding(
        FindingKind.SPLIT_ENGINE, "rollout", nodes[0], len(actor.reserved),
        f"engine {actor.engine}'s {len(actor.reserved)} GPUs are reserved on nodes {', '.join(map(str, nodes))}; "
        f"slime starts its server on node {actor.node} from GPU {actor.base_gpu}",
    )  # fmt: skip


def _wrong_devices(layout: SlimeLayout, actor: EngineActor) -> list[Finding]:
    """GPUs a server drives that are not the bundles reserved for it, and a host that is not its node."""
    findings: list[Finding] = []
    if actor.node is None:
        return findings
    node_gpus = int(layout.cluster.gpus_per_node[actor.node])
    reserved = {(slot.node, slot.gpu) for slot in actor.reserved}
    wrong = [gpu for gpu in actor.driven if (actor.node, gpu) not in reserved]
    if wrong:
        missing = [gpu for gpu in wrong if gpu >= node_gpus]
        absent = f" (node {actor.node} has no GPU {', '.join(map(str, missing))})" if missing else ""
        held = ", ".join(f"{slot.node}:{slot.gpu}" for slot in actor.reserved)
        findings.append(
            Finding(
                FindingKind.WRONG_DEVICE, "rollout", actor.node, len(wrong),
                f"engine {actor.engine} (slime rank {actor.rank}) is told base_gpu_id {actor.base_gpu} and drives {agreeing(len(actor.driven), 'GPU')} "
                f"{', '.join(map(str, actor.driven))} of node {actor.node}{absent}, but Ray reserved node:GPU {held} for it",
            )
        )  # fmt: skip
    if actor.told_host is not None and actor.told_host != actor.node:
        findings.append(
            Finding(
                FindingKind.WRONG_DEVICE, "rollout", actor.node, 1,
                f"engine {actor.engine} (slime rank {actor.rank}) runs on node {actor.node} but is told node {actor.told_host}'s "
                f"address as its host (slime groups {max(1, layout.job.num_gpus_per_node // layout.job.rollout_num_gpus_per_engine)} "
                f"engines per node from --num-gpus-per-node {layout.job.num_gpus_per_node})",
            )
        )  # fmt: skip
    return findings


def _idle(layout: SlimeLayout, slots: list[Slot]) -> list[Finding]:
    """Bundles of the placement group that no rank uses, per role and node."""
    used = {(rank.node, gpu) for rank in layout.ranks for gpu in rank.gpus}
    idle: dict[tuple[str, int], list[int]] = defaultdict(list)
    for index, slot in enumerate(slots):
        if (slot.node, slot.gpu) not in used:
            idle[(_owner(layout, index), slot.node)].append(slot.gpu)
    return [
        Finding(FindingKind.IDLE_GPUS, role, node, len(gpus), f"{agreeing(len(gpus), 'GPU')} {', '.join(map(str, gpus))} {agreeing(len(gpus), 'is', 'are')} reserved for {role} and no rank uses {agreeing(len(gpus), 'it', 'them')}")
        for (role, node), gpus in sorted(idle.items())
    ]


def _owner(layout: SlimeLayout, index: int) -> str:
    """The role a bundle of the group was asked for."""
    if layout.rollout_offset:
        return "actor" if index < layout.rollout_offset else "rollout"
    return "actor" if index < layout.job.actor_gpus and not layout.job.debug_rollout_only else "rollout"


def affinity_notes(layout: SlimeLayout) -> tuple[str, ...]:
    """Train ranks whose CPU affinity slime sets for another GPU than the one they drive.

    ``TrainRayActor.init`` binds a rank to the NUMA node of GPU ``RANK % --num-gpus-per-node``
    (``slime/ray/train_actor.py:83-86``); the rank drives the GPU of its bundle. The job runs (the
    binding only slows it), so this is a note, not a finding.
    """
    per_node = layout.job.num_gpus_per_node
    off = [rank for rank in layout.ranks if rank.role == "actor" and rank.gpus and rank.gpus[0] != rank.rank % per_node]
    if not off:
        return ()
    first = off[0]
    return (
        f"{counted(len(off), 'train rank')} {agreeing(len(off), 'gets', 'get')} the CPU affinity of another GPU than the one they drive (slime binds RANK % "
        f"--num-gpus-per-node {per_node}); e.g. actor rank {first.rank} drives GPU {first.gpus[0]} of node {first.node}, "
        f"bound for GPU {first.rank % per_node}",
    )
