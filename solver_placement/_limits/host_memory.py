"""The memory budget: how many bytes a spec's arrays and CP-SAT model may take, and the check.

A spec's size is known from counts (processes, candidate items per process) before any array is
allocated, so a spec that would exhaust the machine is refused with the component that makes it
large and the option that shrinks it, instead of failing with ``MemoryError`` after minutes.
The per-unit costs are measured, rounded up: a flat CP-SAT model of 400,000 one-candidate
processes grew the process by 346 MB (about 0.9 kB per candidate pair, the ``x`` literal with
its constraints and Python's model proto), and the candidate tables hold a few int64 per pair.
"""

from __future__ import annotations

import os
import resource

from solver_placement._errors import PlacementConfigError
from solver_placement._limits import current

#: Bytes of the CP-SAT model per (process, candidate item) pair it offers.
MODEL_BYTES_PER_PAIR = 1_000
#: Bytes of the candidate tables per materialised (process, candidate) pair.
TABLE_BYTES_PER_PAIR = 32
#: Bytes per process outside its candidates (amounts, origins, records).
BYTES_PER_PROCESS = 400
#: Share of the machine's memory (or of the address-space limit) a spec may take by default.
DEFAULT_SHARE = 0.5


def memory_budget() -> int:
    """The budget in bytes: ``memory_budget_bytes`` if set, else half of what this process may use."""
    configured = current().memory_budget_bytes
    if configured is not None:
        return configured
    available = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    soft, _ = resource.getrlimit(resource.RLIMIT_AS)
    if soft != resource.RLIM_INFINITY:
        available = min(available, soft)
    return int(available * DEFAULT_SHARE)


def estimate(processes: int, table_pairs: int, model_pairs: int) -> int:
    """Bytes for ``processes`` with ``table_pairs`` materialised and ``model_pairs`` in the model."""
    return processes * BYTES_PER_PROCESS + table_pairs * TABLE_BYTES_PER_PAIR + model_pairs * MODEL_BYTES_PER_PAIR


def check_host_memory(needed: int, where: str, why: str, shrink: str) -> None:
    """Refuse a spec part needing ``needed`` bytes (``why``: the counts) above the budget.

    ``shrink`` names the option that makes it smaller, in the user's terms.
    """
    budget = memory_budget()
    if needed > budget:
        source = "memory_budget_bytes" if current().memory_budget_bytes is not None else "half of this machine's memory"
        raise PlacementConfigError(
            f"{where}: {why} would need about {_size(needed)} of memory, above the budget of {_size(budget)} "
            f"({source}); {shrink}, or raise the budget with solver_placement.limits.configure(memory_budget_bytes=...)"
        )


def _size(count: int) -> str:
    for unit, scale in (("GiB", 1 << 30), ("MiB", 1 << 20)):
        if count >= scale:
            return f"{count / scale:.1f} {unit}"
    return f"{count / 1024:.1f} KiB"
