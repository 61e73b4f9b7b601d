"""ROLL as the prediction core sees it: read, predict, fix, improve (registered in ``_frontends/__init__.py``)."""

from __future__ import annotations

from solver_placement._cluster.cluster import Cluster
from solver_placement._frontends.roll.checks import roll_findings
from solver_placement._frontends.roll.fixes import fixed_input, with_fixes
from solver_placement._frontends.roll.improve import improve_roll
from solver_placement._frontends.roll.job import RollJob
from solver_placement._frontends.roll.keys import read_roll
from solver_placement._frontends.roll.layout import landed_groups, predicted_ranks
from solver_placement._frontends.roll.reasons import explain_roll
from solver_placement._frontends.roll.releases import COMMITS, MAIN_COMMIT, RELEASES, driver_decides_gpus_per_node
from solver_placement._prediction.frameworks import Framework
from solver_placement._prediction.layout import Prediction


def predict_roll(job: RollJob, cluster: Cluster) -> Prediction:
    """Every worker of ``job`` where ROLL's code puts it on ``cluster``, with its findings and proposed fixes."""
    size, groups = landed_groups(job, cluster)
    ranks = predicted_ranks(job, size, groups)
    findings = roll_findings(job, size, groups, ranks)
    fixed = with_fixes(job, cluster, size, findings, lambda other: _error_count(other, cluster))
    return Prediction("ROLL", job.release, cluster, tuple(ranks), tuple(fixed), _notes(job, size))


def _error_count(job: RollJob, cluster: Cluster) -> int:
    size, groups = landed_groups(job, cluster)
    return sum(finding.is_error for finding in roll_findings(job, size, groups, predicted_ranks(job, size, groups)))


def _notes(job: RollJob, size: int) -> tuple[str, ...]:
    if driver_decides_gpus_per_node(job.release):
        source = f"num_gpus_per_node={size}: the GPUs of node 0, where the driver is taken to run (ROLL {job.release} reads the driver's GPU count"
        source += f"; the config's {job.num_gpus_per_node} is not read)" if job.gpus_per_node_stated and job.num_gpus_per_node != size else ")"
    else:
        source = f"num_gpus_per_node={size} from the config (ROLL {job.release})"
    read = f"rules of ROLL {job.release} (v{job.release} at {COMMITS[job.release][:8]}" + (
        f"; main at {MAIN_COMMIT[:8]} places the same)" if job.release == RELEASES[-1] else ")"
    )
    notes = [
        read,
        source,
        "node ranks follow the order ROLL creates its placement groups (NODE_RANK unset on the nodes); nodes are taken to have equal CPU counts",
    ]
    if any(worker.devices is None for worker in job.workers):
        notes.append("sections without device_mapping run CPU workers: no GPU, one per node rank in turn")
    return tuple(notes)


ROLL = Framework(
    name="roll", title="ROLL", releases=RELEASES, read=read_roll, predict=predict_roll, fixed=fixed_input, improve=improve_roll, explain=explain_roll
)
