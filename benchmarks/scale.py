"""Scale benchmark: RLinf's placement path on 1,024 to 400,000 GPUs, against the plain-record floor and RLinf 0.3.0.

Run ``python benchmarks/scale.py`` (1,024 / 8,192 / 100,000 / 400,000 GPUs) or ``--quick`` (1,024
and 8,192). Two fully specified specs on ``G/8`` nodes x 8 GPUs, each measured on its own:

* ``actor,rollout: 0-(G-1)``: two components on one key, one process per GPU (2G records);
* ``env: 0-(G-1):0-(2G-1)``: one component, two processes per GPU (2G records).

Every (size, spec) runs in a fresh interpreter, so its timings and its peak RSS are its own:

* **ours**: the RLinf-compatible path end to end -- ``Cluster.from_config`` ->
  ``HybridComponentPlacement(cfg, cluster)`` -> ``get_strategy(c).get_placement(cluster)`` for every
  component. ``solve`` is the first two steps (parse, model, CP-SAT, read-out, and the
  independent verifier on the answer, which reads the arrays the records are made from without
  making them), ``records`` the third (the records made from those arrays, once, and handed out).
  ``verify s`` is the verifier's checks within ``ours``, ``verify %`` their share of ``ours``.
* **floor**: building the same number of plain Python records with RLinf's 11 fields (a small
  ``@dataclass``, the shape of RLinf's ``Placement``) from numpy arrays of the expected layout,
  in the same process: what any code handing out one Python object per process pays. ``floor
  gc-off`` is the same loop with the cyclic garbage collector paused, as the library pauses it
  while it builds records; both are shown so the ratio is not flattered either way.
* **RLinf**: RLinf 0.3.0's own ``HybridComponentPlacement`` and strategies on RLinf's own
  ``Cluster`` object (built without Ray, as ``tests/internals/rlinf/rlinf_builders.py`` does; its log
  output is discarded), in its own child process, given ``RLINF_LIMIT_S``; sizes its time at a
  smaller size already rules out (RLinf is at least linear) are not run.

Both libraries' records are checked against the expected layout on RLinf's 11 fields, outside
the timed parts, so the table never reports the speed of a wrong answer. Every time is the best
of ``REPEATS`` runs (the previous run's records released untimed). ``records`` counts the
records handed out; ``objects`` the distinct ones (``actor,rollout`` share one key, so rollout is
handed actor's records, as before this benchmark existed). Timings on a shared machine are noisy:
compare ratios.
"""

from __future__ import annotations

import argparse
import gc
import json
import resource
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from omegaconf import OmegaConf
from tabulate import tabulate

from solver_placement import Cluster, HybridComponentPlacement
from solver_placement._solver import loop

SIZES = (1_024, 8_192, 100_000, 400_000)
QUICK_SIZES = (1_024, 8_192)
GPUS_PER_NODE = 8
SPECS = ("actor,rollout", "env x2")
RLINF_LIMIT_S = 60
#: Every size reports its best of this many runs, so all of them run with warm allocators.
REPEATS = 3
#: RLinf's record fields, the ones both libraries are checked on.
FIELDS = (
    "rank", "cluster_node_rank", "placement_node_rank", "local_accelerator_rank", "accelerator_type", "local_rank",
    "local_world_size", "visible_accelerators", "isolate_accelerator", "local_hardware_ranks", "node_group_label",
)  # fmt: skip
TESTS_RLINF = Path(__file__).resolve().parents[1] / "tests" / "rlinf"


def job_config(spec: str, gpus: int) -> Any:
    """The job config RLinf would hand over (a DictConfig) for one spec and size."""
    placement = {"actor,rollout": f"0-{gpus - 1}"} if spec == "actor,rollout" else {"env": f"0-{gpus - 1}:0-{2 * gpus - 1}"}
    nodes = gpus // GPUS_PER_NODE
    return OmegaConf.create({"cluster": {"num_nodes": nodes, "num_gpus_per_node": GPUS_PER_NODE, "component_placement": placement}})


# ------------------------------------------------------------------------ the expected layout
def expected_layout(spec: str, gpus: int) -> dict[str, dict[str, np.ndarray]]:
    """Per component, RLinf's even split as numpy columns: process p on GPU p (or p // 2)."""
    per_gpu = 1 if spec == "actor,rollout" else 2
    process = np.arange(gpus * per_gpu)
    gpu = process // per_gpu
    per_node = GPUS_PER_NODE * per_gpu
    columns = {
        "rank": process,
        "node": gpu // GPUS_PER_NODE,
        "local_gpu": gpu % GPUS_PER_NODE,
        "local_rank": process % per_node,
        "local_world_size": np.full(process.size, per_node),
    }
    names = ("actor", "rollout") if spec == "actor,rollout" else ("env",)
    return {name: columns for name in names}


@dataclass
class PlainRecord:
    """RLinf's ``Placement`` fields in a plain dataclass: the floor's object."""

    rank: int
    cluster_node_rank: int
    placement_node_rank: int
    local_accelerator_rank: int
    accelerator_type: str
    local_rank: int
    local_world_size: int
    visible_accelerators: list[str]
    isolate_accelerator: bool
    local_hardware_ranks: list[int]
    node_group_label: str


def floor_records(layout: dict[str, dict[str, np.ndarray]]) -> dict[str, list[PlainRecord]]:
    """Plain records from the layout's numpy columns: one ``tolist`` per column, one loop."""
    records = {}
    for name, c in layout.items():
        columns = zip(c["rank"].tolist(), c["node"].tolist(), c["local_gpu"].tolist(), c["local_rank"].tolist(), c["local_world_size"].tolist())
        records[name] = [
            PlainRecord(rank, node, node, gpu, "NV_GPU", local, world, [str(gpu)], True, [gpu], "cluster")
            for rank, node, gpu, local, world in columns
        ]
    return records


def matches(records: dict[str, list[Any]], reference: dict[str, list[PlainRecord]]) -> bool:
    """Same components, and per record the same 11 RLinf fields."""
    if sorted(records) != sorted(reference):
        return False
    return all(
        len(records[name]) == len(expected)
        and all(tuple(getattr(r, f) for f in FIELDS) == tuple(getattr(e, f) for f in FIELDS) for r, e in zip(records[name], expected))
        for name, expected in reference.items()
    )


# ------------------------------------------------------------------------ timed runs
def best_of(repeats: int, run: Callable[[], Any]) -> tuple[float, Any]:
    """Fastest wall time of ``repeats`` runs and the last result (released between runs)."""
    best, result = float("inf"), None
    for _ in range(repeats):
        result = None
        started = time.perf_counter()
        result = run()
        best = min(best, time.perf_counter() - started)
    return best, result


def timing_verify(seconds: list[float]) -> None:
    """Time every call of the answer loop's verifier into ``seconds`` (its checks, on the arrays
    the records are made from; ``get_placement`` makes the records afterwards, once)."""
    verify = loop.verify

    def timed(spec: Any, placements: Any) -> None:
        started = time.perf_counter()
        try:
            verify(spec, placements)
        finally:
            seconds.append(time.perf_counter() - started)

    loop.verify = timed


def ours_once(cfg: Any) -> tuple[dict[str, list[Any]], float]:
    """Our end-to-end path; returns the records and the seconds spent before ``get_strategy``."""
    started = time.perf_counter()
    cluster = Cluster.from_config(cfg.cluster)
    placement = HybridComponentPlacement(cfg, cluster)
    solved = time.perf_counter() - started
    return {name: placement.get_strategy(name).get_placement(cluster) for name in placement.components}, solved


def with_collector_paused(run: Callable[[], Any]) -> Callable[[], Any]:
    def paused() -> Any:
        gc.disable()
        try:
            return run()
        finally:
            gc.enable()

    return paused


def measure_ours(spec: str, gpus: int) -> dict[str, Any]:
    """Ours, then the floor, in this process; peak RSS read before the floor runs."""
    cfg = job_config(spec, gpus)
    base_mib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    total, solved, verified = float("inf"), 0.0, 0.0
    verify_s: list[float] = []
    timing_verify(verify_s)
    for _ in range(REPEATS):
        records: dict[str, list[Any]] = {}  # the previous run's records are released untimed
        gc.collect()  # and collected: RLinf's placement objects hold them in reference cycles
        verify_s.clear()
        started = time.perf_counter()
        records, solved_s = ours_once(cfg)
        if time.perf_counter() - started < total:
            total, solved, verified = time.perf_counter() - started, solved_s, sum(verify_s)
    peak_mib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # Linux reports KiB
    layout = expected_layout(spec, gpus)
    floor_s, reference = best_of(REPEATS, lambda: floor_records(layout))
    floor_gc_off_s, _ = best_of(REPEATS, with_collector_paused(lambda: floor_records(layout)))
    return {
        "records": sum(len(r) for r in records.values()), "objects": len({id(p) for r in records.values() for p in r}), "ours": total, "solve": solved, "records_s": total - solved, "verify_s": verified,
        "floor": floor_s, "floor_gc_off": floor_gc_off_s, "peak_mib": peak_mib, "base_mib": base_mib,
        "matches": matches(records, reference),
    }  # fmt: skip


def measure_rlinf(spec: str, gpus: int) -> dict[str, Any]:
    """RLinf 0.3.0 on its own Cluster object (built untimed), and whether it gives the layout."""
    sys.path.insert(0, str(TESTS_RLINF))
    import rlinf_shim  # a test helper, importable once its folder is on the path
    from rlinf_builders import rlinf_cluster

    rl = rlinf_shim.load()
    cfg = job_config(spec, gpus)
    cluster = rlinf_cluster(rl, cfg.cluster, [GPUS_PER_NODE] * (gpus // GPUS_PER_NODE))
    started = time.perf_counter()
    placement = rl.HybridComponentPlacement(cfg, cluster)
    records = {name: placement.get_strategy(name).get_placement(cluster) for name in placement._components}
    seconds = time.perf_counter() - started
    return {"rlinf": seconds, "matches": matches(records, floor_records(expected_layout(spec, gpus)))}


# ------------------------------------------------------------------------ children and table
def run_child(kind: str, spec: str, gpus: int, timeout: float | None = None) -> dict[str, Any] | None:
    """One measurement in a fresh interpreter (None when it ran past ``timeout``)."""
    command = [sys.executable, __file__, "--child", kind, spec, str(gpus)]
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=timeout, check=False)
    except subprocess.TimeoutExpired:
        return None
    if done.returncode:
        raise SystemExit(f"the {kind} run of {spec} on {gpus} GPUs failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def rlinf_result(spec: str, gpus: int, smaller: tuple[int, float | None] | None) -> dict[str, Any] | str:
    """RLinf's run, or why there is none: past the limit, or ruled out by a smaller size."""
    if smaller is not None:
        smaller_gpus, seconds = smaller
        if seconds is None or seconds * gpus / smaller_gpus > RLINF_LIMIT_S:
            return f"> {RLINF_LIMIT_S} s (skipped)"
    found = run_child("rlinf", spec, gpus, timeout=RLINF_LIMIT_S + 30)
    if found is None or found["rlinf"] > RLINF_LIMIT_S:
        return f"> {RLINF_LIMIT_S} s"
    return found


def row(gpus: int, spec: str, ours: dict[str, Any], rlinf: dict[str, Any] | str, per_record_8k: float | None) -> list[str]:
    def g(value: float) -> str:
        return f"{value:.3g}"

    per_record = ours["ours"] / ours["records"] * 1e6
    if isinstance(rlinf, str):
        rlinf_cells = [rlinf, "", ""]
    else:
        rlinf_cells = [g(rlinf["rlinf"]), f"{rlinf['rlinf'] / ours['ours']:,.0f}", "yes" if rlinf["matches"] else "NO"]
    return [
        f"{gpus:,}", spec, f"{ours['records']:,}", f"{ours['objects']:,}", g(ours["ours"]), g(ours["solve"]), g(ours["records_s"]),
        g(ours["verify_s"]), f"{ours['verify_s'] / ours['ours']:.0%}",
        g(ours["floor"]), f"{ours['ours'] / ours['floor']:.2f}", g(ours["floor_gc_off"]), f"{ours['ours'] / ours['floor_gc_off']:.2f}",
        *rlinf_cells[:2], g(per_record), "" if per_record_8k is None else f"{per_record / per_record_8k:.2f}",
        f"{ours['peak_mib']:.0f}", f"{ours['peak_mib'] - ours['base_mib']:.0f}", "yes" if ours["matches"] else "NO", rlinf_cells[2],
    ]  # fmt: skip


HEADERS = [
    "GPUs", "spec", "records", "objects", "ours s", "solve s", "records s", "verify s", "verify %", "floor s", "ours/floor", "floor gc-off s", "ours/gc-off",
    "RLinf s", "RLinf/ours", "µs/record", "µs/record vs 8,192", "peak RSS MiB", "RSS over imports MiB", "ours = layout", "RLinf = layout",
]  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="only 1,024 and 8,192 GPUs")
    parser.add_argument("--no-rlinf", action="store_true", help="skip RLinf's runs (they take ~1.5 minutes at 8,192 GPUs)")
    parser.add_argument("--child", nargs=3, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        kind, spec, gpus = args.child
        measure = measure_ours if kind == "ours" else measure_rlinf
        print(json.dumps(measure(spec, int(gpus))))
        return
    rows = []
    for spec in SPECS:
        smaller: tuple[int, float | None] | None = None
        per_record_8k = None
        for gpus in QUICK_SIZES if args.quick else SIZES:
            ours = run_child("ours", spec, gpus)
            if ours is None:  # cannot happen: ours runs without a timeout
                raise SystemExit(f"the run of {spec} on {gpus} GPUs gave no result")
            rlinf = "not run" if args.no_rlinf else rlinf_result(spec, gpus, smaller)
            smaller = (gpus, rlinf["rlinf"] if isinstance(rlinf, dict) else None)
            rows.append(row(gpus, spec, ours, rlinf, per_record_8k))
            if gpus == 8_192:
                per_record_8k = ours["ours"] / ours["records"] * 1e6
            print(f"  done: {spec} on {gpus:,} GPUs", file=sys.stderr)
    print(tabulate(rows, headers=HEADERS, disable_numparse=True, colalign=("right",) * len(HEADERS)))
    print(
        "ours = Cluster.from_config + HybridComponentPlacement + get_strategy(c).get_placement for every component; "
        "floor = plain 11-field records from numpy arrays (gc-off: collector paused, as the library pauses it); "
        f"RLinf = rlinf 0.3.0, limit {RLINF_LIMIT_S} s; peak RSS: of the child that ran ours, read before the floor ran"
    )


if __name__ == "__main__":
    main()
