"""A fix in slime's own flags for each finding, chosen by predicting the fixed command line.

For each finding a few changes a slime user would make are tried in order (state the nodes' real
GPU count with ``--num-gpus-per-node``, make ``--rollout-num-gpus`` a whole number of engines or
fit the cluster, a smaller engine, another ``--prefill-num-servers``, ``--colocate``, a smaller
Megatron tensor-parallel size); the
first whose command line, read and predicted again, no longer has the finding and has no error
the original lacked is attached. ``predict.py`` checks it once more the same way. A finding no
candidate clears keeps no fix (an actor larger than the cluster, say).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

from solver_placement._cluster.cluster import Cluster
from solver_placement._errors import PlacementError
from solver_placement._frontends.slime.job import SlimeJob, job_from_arguments
from solver_placement._prediction.findings import Finding, FindingKind, Fix
from solver_placement._prediction.flags import with_flags

#: Candidate fixes tried per finding (each costs one reading and prediction of the job).
MAX_CANDIDATES = 12

#: How a job's findings are computed (``framework.py`` passes the layout and checks).
FindingsOf = Callable[[SlimeJob, Cluster], list[Finding]]


def with_fixes(job: SlimeJob, cluster: Cluster, findings: list[Finding], findings_of: FindingsOf) -> list[Finding]:
    before = {_identity(finding) for finding in findings if finding.is_error}
    chosen: dict[tuple[str, str, bool], Fix] = {}  # findings alike (engine after engine told the wrong host) share one search
    fixed = []
    for finding in findings:
        alike = (*_identity(finding), finding.node is None)
        if alike not in chosen:
            chosen[alike] = next((fix for fix in _candidates(job, cluster, finding) if _clears(job, cluster, fix, finding, before, findings_of)), ())
        fixed.append(finding.with_fix(chosen[alike]))
    return fixed


def _candidates(job: SlimeJob, cluster: Cluster, finding: Finding) -> Iterator[Fix]:
    seen: set[Fix] = set()
    for fix in _ordered(job, cluster, finding):
        if fix not in seen and len(seen) < MAX_CANDIDATES:
            seen.add(fix)
            yield fix


def _ordered(job: SlimeJob, cluster: Cluster, finding: Finding) -> Iterator[Fix]:
    gpus = sorted({int(count) for count in cluster.gpus_per_node if count > 0})
    engine_gpus = min(job.rollout_num_gpus_per_engine, job.num_gpus_per_node)
    if len(gpus) == 1 and gpus[0] != job.num_gpus_per_node:
        yield (("--num-gpus-per-node", str(gpus[0])),)
    if finding.role in ("actor", "critic") and finding.kind == FindingKind.SPLIT_ENGINE:
        yield from ((("--tensor-model-parallel-size", str(size)),) for size in _divisors_below(job.tensor_parallel_size))
        return
    free = int(sum(cluster.gpus_per_node)) - (0 if job.colocate else job.actor_gpus)  # GPUs the rollout may take
    if finding.kind == FindingKind.PENDING and finding.node is None:
        if free >= engine_gpus > 0:
            yield (("--rollout-num-gpus", str(free // engine_gpus * engine_gpus)),)
        if not job.colocate:
            yield (("--colocate", ""),)
        return
    if job.rollout_num_gpus % job.rollout_num_gpus_per_engine:
        whole = job.rollout_num_gpus // job.rollout_num_gpus_per_engine * job.rollout_num_gpus_per_engine
        if whole:
            yield (("--rollout-num-gpus", str(whole)),)
        if whole + job.rollout_num_gpus_per_engine <= free:
            yield (("--rollout-num-gpus", str(whole + job.rollout_num_gpus_per_engine)),)
    yield from ((("--rollout-num-gpus-per-engine", str(size)),) for size in _divisors_below(job.rollout_num_gpus_per_engine) if job.rollout_num_gpus % size == 0)
    if job.prefill_num_servers is not None:  # another split between prefill and decode servers, nearest first
        engines = job.rollout_num_gpus // job.rollout_num_gpus_per_engine
        others = sorted(range(1, engines), key=lambda count: (abs(count - job.prefill_num_servers), count))  # type: ignore[operator]
        yield from ((("--prefill-num-servers", str(count)),) for count in others if count != job.prefill_num_servers)
    if not job.colocate and not job.debug_rollout_only:
        yield (("--colocate", ""),)


def _divisors_below(size: int) -> Iterator[int]:
    """The sizes below ``size`` that divide it, largest first (a smaller group of the same job);
    lazily, as the candidates are tried."""
    return (candidate for candidate in range(size - 1, 0, -1) if size % candidate == 0)


def _clears(job: SlimeJob, cluster: Cluster, fix: Fix, finding: Finding, before: set[tuple[str, str]], findings_of: FindingsOf) -> bool:
    try:
        after = findings_of(job_from_arguments(with_flags(job.arguments, fix)), cluster)
    except PlacementError:
        return False
    new_errors = {_identity(other) for other in after if other.is_error} - before
    return _identity(finding) not in {_identity(other) for other in after} and not new_errors


def _identity(finding: Finding) -> tuple[str, str]:
    return (str(finding.kind), finding.role)
