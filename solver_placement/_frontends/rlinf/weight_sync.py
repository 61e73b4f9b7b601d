"""The CUDA IPC weight-sync pairing of a collocated actor and rollout, read from a solution.

In RLinf's collocated mode every actor rank hands its weights to the rollout process on its own
GPU without a copy. Which actor rank feeds which rollout GPU follows from where the solver put
both components, so the map is read back from the solution, never computed from rank arithmetic.
"""

from __future__ import annotations

import numpy as np

from solver_placement._solver.solution import Solution


def weight_sync_map(solution: Solution, actor: str = "actor", rollout: str = "rollout") -> dict[int, list[int]]:
    """Per rollout rank, the actor rank on each of its GPUs, in the rollout process's GPU order.

    The actor rank listed at position ``i`` shares its GPU with the rollout process's ``i``-th
    GPU. Every rollout GPU must hold exactly one actor process (the collocated layouts ensure it).
    """
    actor_assignment = solution.assignment(actor)
    actor_rank = np.repeat(np.arange(actor_assignment.num_processes), np.diff(actor_assignment.indptr))
    rank_of_gpu = dict(zip(actor_assignment.hardware.tolist(), actor_rank.tolist(), strict=True))
    rollout_assignment = solution.assignment(rollout)
    return {
        process: [rank_of_gpu[gpu] for gpu in rollout_assignment.of(process).tolist()]
        for process in range(rollout_assignment.num_processes)
    }
