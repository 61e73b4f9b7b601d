"""The comparison engine of the differential tests: run one case through RLinf 0.3.0's code and
through solver_placement (both given RLinf's own ``Cluster`` object), and account for every
disagreement with one of the named, documented differences in :data:`DIFFERENCES` (a row of the
table of docs/rlinf.md each: what RLinf does, what we do). Used by ``test_differential*.py``.

Importing this module loads RLinf through ``rlinf_shim`` and skips the importing test module
when ``rlinf==0.3.0`` is not installed.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import rlinf_shim
from omegaconf import OmegaConf
from rlinf_builders import FIELDS, Record, records, rlinf_cluster
from rlinf_cases import Case

import solver_placement as ours_api
from solver_placement._frontends.rlinf.rlinf_cluster import as_cluster

rl = rlinf_shim.load()

STRATEGIES = {"flexible": "FlexiblePlacementStrategy", "packed": "PackedPlacementStrategy", "node": "NodePlacementStrategy"}
#: Exception types RLinf's placement code raises for bad input; ours must be catchable as them.
RLINF_ERRORS = (AssertionError, ValueError, IndexError)


@dataclass
class Outcome:
    """What one library did with a case: an error, or per component its world size, hardware
    ranks and placement records (key ``""`` for a lone strategy)."""

    error: BaseException | None = None
    components: list[str] = field(default_factory=list)
    results: dict[str, tuple[Any, Any, list[Record]]] = field(default_factory=dict)


# --------------------------------------------------------------------------------- running
def run(case: Case, api: Any, cluster: Any) -> Outcome:
    """Run the case with ``api`` (RLinf's namespace or ours) on RLinf's cluster object."""
    outcome = Outcome()
    try:
        if case.kind == "components":
            config = OmegaConf.create({"cluster": case.section})
            placement = api.HybridComponentPlacement(config, cluster)
            outcome.components = list(placement.components)
            for name in outcome.components:
                placed = placement.get_strategy(name).get_placement(cluster, case.isolate)
                ranks = list(placement.get_hardware_ranks(name))
                outcome.results[name] = (placement.get_world_size(name), ranks, records(placed))
        else:
            strategy = getattr(api, STRATEGIES[case.kind])(*case.args)
            outcome.results[""] = (None, None, records(strategy.get_placement(cluster, case.isolate)))
    except Exception as error:  # noqa: BLE001 - any failure is an outcome to compare
        outcome.error = error
    return outcome


@contextmanager
def quiet() -> Iterator[None]:
    """RLinf's strategies log every placement at INFO to stderr; keep the run readable and fast."""
    logging.disable(logging.INFO)
    try:
        yield
    finally:
        logging.disable(logging.NOTSET)


# ------------------------------------------------------------------------- differences
@dataclass(frozen=True)
class Difference:
    """A documented way the two libraries differ (a row of the table in docs/rlinf.md).

    ``outcome`` predicates explain a case where one side fails and the other does not;
    ``record`` predicates explain one pair of placements that differ in some fields.
    """

    name: str
    rlinf: str
    here: str
    outcome: Callable[[Case, Outcome, Outcome, Any], bool] | None = None
    record: Callable[[Case, Record, Record, set[str]], bool] | None = None


def _value(record: Record, name: str) -> Any:
    return record.values[FIELDS.index(name)]


def _error_text(outcome: Outcome) -> str:
    return "" if outcome.error is None else str(outcome.error)


def _no_gpu_quirk(case: Case, theirs: Record, mine: Record, fields: set[str]) -> bool:
    """A process holding no GPU (robot or node-only): RLinf reports the node's first GPU."""
    lar = _value(theirs, "local_accelerator_rank")
    return fields == {"local_accelerator_rank"} and lar in (0, "0") and _value(mine, "local_accelerator_rank") == -1


def _isolate_quirk(case: Case, theirs: Record, mine: Record, fields: set[str]) -> bool:
    own = _value(mine, "local_hardware_ranks")
    return (
        not case.isolate and fields == {"local_accelerator_rank"}
        and _value(theirs, "local_accelerator_rank") == 0 and own and _value(mine, "local_accelerator_rank") == own[0]
    )


def _revisit_quirk(case: Case, theirs: Record, mine: Record, fields: set[str]) -> bool:
    return case.kind == "packed" and fields <= {"placement_node_rank", "local_rank", "local_world_size"}


def _bogus_local_ranks(case: Case, theirs: Outcome, mine: Outcome, cluster: Any) -> bool:
    """RLinf placed a process on an item index its node does not have (its Packed fit test is
    off by one, and it numbers a process's items arithmetically from the first one)."""
    if theirs.error is not None or mine.error is None or case.kind != "packed":
        return False
    for _, _, placed in theirs.results.values():
        for record in placed:
            node = cluster.get_node_info(_value(record, "cluster_node_rank"))
            kind = cluster.get_node_group(_value(record, "node_group_label")).hardware_type
            if any(index >= node.get_hw_resource_count(kind) for index in _value(record, "local_hardware_ranks")):
                return True
    return False


def _flexible_over_nodes(case: Case, theirs: Outcome, mine: Outcome, cluster: Any) -> bool:
    return (
        case.kind == "flexible" and isinstance(theirs.error, AttributeError)
        and "'NoneType' object has no attribute 'node_rank'" in str(theirs.error)
    )


DIFFERENCES = (
    Difference(
        "flexible_over_node_groups",
        "FlexiblePlacementStrategy over a group whose resources are nodes (a CPU-only cluster, "
        "ignore_hardware, \"node\") crashes: AttributeError 'NoneType' object has no attribute 'node_rank'",
        "ranks count the groups' nodes, as in the component_placement form (or a PlacementError)",
        outcome=_flexible_over_nodes,
    ),
    Difference(
        "no_gpu_local_accelerator_rank",
        "a process that holds no GPU (a robot process, or NodePlacementStrategy) gets the node's "
        "first GPU as local_accelerator_rank: 0, or the string \"0\" from NodePlacementStrategy",
        "-1 (int): the process holds no GPU; it still sees all of them (visible_accelerators)",
        record=_no_gpu_quirk,
    ),
    Difference(
        "isolate_false_local_accelerator_rank",
        "with isolate_accelerator=False every process gets local_accelerator_rank 0",
        "the process's own first GPU, so LOCAL_RANK-style use still finds its device",
        record=_isolate_quirk,
    ),
    Difference(
        "placements_must_be_sorted_by_node",
        "AssertionError \"Placements must be sorted by node_id.\" when node groups are listed in "
        "descending node order or overlap (node_group: \"b,a\")",
        "placed; ranks run over the groups in the listed order",
        outcome=lambda case, theirs, mine, cluster: mine.error is None
        and _error_text(theirs).startswith("Placements must be sorted by node_id"),
    ),
    Difference(
        "process_ranks_start_anywhere",
        "accepts a first segment whose process ranks do not start at 0 (\"0-1:1-2\") and renumbers",
        "refused: process ranks start at 0 and are continuous (a gap usually hides a typo)",
        outcome=lambda case, theirs, mine, cluster: theirs.error is None
        and "expected this segment to start at process 0" in _error_text(mine),
    ),
    Difference(
        "mixed_node_and_hardware_groups",
        "a component over a node-counting group and a hardware group counts the nodes of both",
        "refused: ranks would silently change meaning from GPUs to nodes",
        outcome=lambda case, theirs, mine, cluster: theirs.error is None
        and "mixes groups whose resources are nodes" in _error_text(mine),
    ),
    Difference(
        "packed_bogus_local_ranks",
        "a packed process reaching past its node's last item is placed with GPU indices the node "
        "does not have (off-by-one fit test)",
        "refused as infeasible: a process never spans two nodes",
        outcome=_bogus_local_ranks,
    ),
    Difference(
        "same_gpu_twice_in_a_process",
        "when the listed node groups overlap, one process may hold the same GPU twice "
        "(local_hardware_ranks [0, 0])",
        "refused as infeasible: a process's hardware must be distinct",
        outcome=lambda case, theirs, mine, cluster: theirs.error is None
        and "twice (the listed node groups overlap)" in _error_text(mine),
    ),
    Difference(
        "node_group_yaml_list",
        "node_group: [a800, 4090] (documented) is an OmegaConf ListConfig, read as the single label "
        "\"['a800', 4090]\": node group not found",
        "a YAML list of labels works like \"a800,4090\"",
        outcome=lambda case, theirs, mine, cluster: mine.error is None
        and "Node group not found" in _error_text(theirs) and "with label \"[" in _error_text(theirs),
    ),
    Difference(
        "node_ranks_yaml_list",
        "node_ranks: [0, 1] (documented as a list) fails: ValueError \"Invalid rank format [0, 1]\"",
        "a YAML list of node ranks works",
    ),
    Difference(
        "packed_revisits_node",
        "Packed numbers placement_node_rank/local_rank per consecutive run of a node, so a node "
        "met again later (overlapping groups) counts as a new node",
        "one placement_node_rank, local_rank and local_world_size per node",
        record=_revisit_quirk,
    ),
)


DIFFERENCE_NAMES = {difference.name for difference in DIFFERENCES}


# ------------------------------------------------------------------------------ comparing
def compare(case: Case, tally: Counter) -> None:
    """Run both sides and account for every disagreement with a named difference (or fail)."""
    tally["configs"] += 1
    tally[f"kind {case.kind}"] += 1
    tally.setdefault("distinct", set()).add(repr(case))  # type: ignore[arg-type]
    with quiet():
        try:
            cluster = rlinf_cluster(rl, case.section, case.gpus)
        except Exception as error:  # noqa: BLE001
            name = _cluster_refused(case, error)
            tally[name] += 1
            if name in DIFFERENCE_NAMES:
                tally["differed"] += 1
            else:
                tally["agreed"] += 1
                tally["both failed"] += 1
            return
        _check_conversion(case, cluster)
        theirs = run(case, rl, cluster)
        mine = run(case, ours_api, cluster)
    found = _explain(case, theirs, mine, cluster)
    for name in found:
        tally[name] += 1
    if found:
        tally["differed"] += 1
    else:
        tally["agreed"] += 1
        tally["both placed" if theirs.error is None else "both failed"] += 1


def _explain(case: Case, theirs: Outcome, mine: Outcome, cluster: Any) -> set[str]:
    unusual = theirs.error is not None and not isinstance(theirs.error, RLINF_ERRORS)
    if (theirs.error is None) != (mine.error is None) or unusual:
        names = {d.name for d in DIFFERENCES if d.outcome is not None and d.outcome(case, theirs, mine, cluster)}
        assert names, f"unexplained: RLinf {theirs.error!r} vs ours {mine.error!r}\ncase: {case}"
        return names
    if theirs.error is not None:
        assert isinstance(theirs.error, RLINF_ERRORS), f"RLinf raised {theirs.error!r}\ncase: {case}"
        assert isinstance(mine.error, type(theirs.error)), (
            f"ours {mine.error!r} is not catchable as RLinf's {type(theirs.error).__name__}: {theirs.error}\ncase: {case}"
        )
        return set()
    assert mine.components == theirs.components, case
    names: set[str] = set()
    for name, (size, ranks, placed) in theirs.results.items():
        my_size, my_ranks, my_placed = mine.results[name]
        assert (my_size, my_ranks) == (size, ranks), f"{name}: world size / hardware ranks {my_size, my_ranks} != {size, ranks}\n{case}"
        assert len(my_placed) == len(placed), f"{name}: {len(my_placed)} placements != {len(placed)}\n{case}"
        for theirs_record, my_record in zip(placed, my_placed):
            fields = theirs_record.differing(my_record)
            if not fields:
                continue
            explained = {d.name for d in DIFFERENCES if d.record is not None and d.record(case, theirs_record, my_record, fields)}
            assert explained, f"{name}: fields {sorted(fields)} differ\nRLinf {theirs_record}\nours  {my_record}\ncase: {case}"
            names |= explained
    return names


def _cluster_refused(case: Case, error: Exception) -> str:
    """RLinf refused the cluster section itself: ours must refuse it too (catchable as RLinf's
    error), unless it is RLinf's YAML-list bug. Returns the tally key."""
    try:
        ours_api.Cluster.from_config({**case.section, "num_gpus_per_node": list(case.gpus)})
    except ours_api.PlacementError as mine:
        assert isinstance(mine, type(error)), f"ours {mine!r} is not catchable as RLinf's {error!r}\ncase: {case}"
        return "cluster refused by both"
    lists = [group["node_ranks"] for group in case.section.get("node_groups", []) if isinstance(group["node_ranks"], list)]
    assert lists and str(error).startswith("Invalid rank format ["), f"only RLinf refused: {error!r}\ncase: {case}"
    return "node_ranks_yaml_list"


def _check_conversion(case: Case, cluster: Any) -> None:
    """``as_cluster`` of RLinf's object equals the cluster built from the same YAML section."""
    converted = as_cluster(cluster)
    written = ours_api.Cluster.from_config({**case.section, "num_gpus_per_node": list(case.gpus)})
    assert converted.accelerator_types == written.accelerator_types
    for label in written.node_groups:
        a, b = converted.resources([label]), written.resources([label])
        assert converted.hw_node[a.physical].tolist() == written.hw_node[b.physical].tolist(), label
        assert converted.hw_local[a.physical].tolist() == written.hw_local[b.physical].tolist(), label
        assert [converted.kind_of(int(h)) for h in a.physical] == [written.kind_of(int(h)) for h in b.physical], label


def summary(tally: Counter) -> str:
    differences = ", ".join(f"{d.name} {tally[d.name]}" for d in DIFFERENCES)
    kinds = ", ".join(f"{kind} {tally['kind ' + kind]}" for kind in ("components", *STRATEGIES))
    return (
        f"{tally['configs']} configs ({len(tally['distinct'])} distinct; {kinds}), {tally['agreed']} agreed ({tally['both placed']} placed identically, "
        f"{tally['both failed']} refused by both, {tally['cluster refused by both']} of them at the cluster section), "
        f"{tally['differed']} differed as documented: {differences}"
    )
