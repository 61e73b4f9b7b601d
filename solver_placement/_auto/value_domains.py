"""What the search's CP-SAT model is built from: the GPU counts worth a variable value and the
integer time unit.

Both are sound reductions computed before the model exists, so that an 8,192-GPU problem stays a
small model and every modelled time fits CP-SAT's 64-bit integers.
"""

from __future__ import annotations

from collections.abc import Sequence

from solver_placement._auto.problem import MAX_UNITS, AutoProblem

#: CP-SAT works on integers: every per-batch time and every collocated total is rounded to this
#: many seconds (1 ns; coarser only if the slowest modelled time would not fit in ``MAX_UNITS``).
#: See ``docs/cost_model.md`` for the resulting error bound.
TIME_UNIT_S = 1e-9
#: Head room between the slowest modelled time and ``MAX_UNITS`` (sums of a few such terms).
UNIT_HEADROOM = 4


def fillable_counts(problem: AutoProblem) -> dict[str, list[int]]:
    """Per pipelined component, its allowed counts ``g`` for which the other components can take
    exactly the remaining ``G - g`` GPUs (one allowed count each).

    A sound domain filter, computed on bitsets of reachable sums (bit ``s`` set: some choice of
    counts adds up to ``s``) from both ends of the pipeline. No split is lost, and the big tables
    shrink to what can actually occur: 8192 GPUs with three Megatron stages of power-of-two
    counts leave about 300 of the rollout's 8189 counts. That keeps the CP-SAT model small.
    """
    total = problem.num_gpus
    mask = (1 << (total + 1)) - 1
    allowed = [[g for g in problem.tables[name].allowed() if g <= total] for name in problem.pipeline]

    def add(bits: int, counts: Sequence[int]) -> int:
        """Every sum reachable in ``bits`` plus one of ``counts``, up to ``total``."""
        out = 0
        for g in counts:
            out |= bits << g
        return out & mask

    prefix = [1]
    for counts in allowed:
        prefix.append(add(prefix[-1], counts))
    suffix = [1]
    for counts in reversed(allowed):
        suffix.append(add(suffix[-1], counts))
    suffix.reverse()
    kept: dict[str, list[int]] = {}
    for i, name in enumerate(problem.pipeline):
        before, after = prefix[i], suffix[i + 1]
        if before.bit_count() > after.bit_count():
            before, after = after, before
        others = add(after, [s for s in range(total + 1) if before >> s & 1])
        kept[name] = [g for g in allowed[i] if others >> (total - g) & 1]
    return kept


def time_unit(problem: AutoProblem) -> float:
    """Seconds per CP-SAT time unit: 1 ns, or the smallest power of ten above it that keeps the
    largest modelled time (every stage at its slowest) within ``MAX_UNITS``."""
    slowest = [max(problem.tables[name].batch_time(g) or 0.0 for g in problem.tables[name].allowed()) for name in problem.pipeline]
    worst = sum(slowest) + max(slowest, default=0.0) * problem.pipeline_batches
    worst += sum(max(problem.tables[name].times.values()) for name in problem.components())
    unit = TIME_UNIT_S
    while worst / unit > MAX_UNITS / UNIT_HEADROOM:
        unit *= 10
    return unit
