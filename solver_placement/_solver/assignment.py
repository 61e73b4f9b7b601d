"""The solver's answer for one component: a compact process x hardware assignment."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from solver_placement._arrays import distinct


@dataclass(frozen=True)
class Assignment:
    """CSR assignment: process ``p`` holds physical ids ``hardware[indptr[p]:indptr[p+1]]``
    (``ranks`` are the same items as ranks in the component's node groups).

    Dense matrices are only built on request, so 100,000 GPUs never need 10^10 cells.
    """

    indptr: np.ndarray
    hardware: np.ndarray
    ranks: np.ndarray
    num_hardware: int

    @property
    def num_processes(self) -> int:
        return int(self.indptr.size - 1)

    def of(self, process: int) -> np.ndarray:
        return self.hardware[self.indptr[process]:self.indptr[process + 1]]

    def to_dense(self) -> np.ndarray:
        """Boolean matrix (processes x physical hardware ids of the cluster)."""
        dense = np.zeros((self.num_processes, self.num_hardware), dtype=bool)
        dense[np.repeat(np.arange(self.num_processes), np.diff(self.indptr)), self.hardware] = True
        return dense


def window_ranks(cand_hw: np.ndarray, cand_rank: np.ndarray, indptr: np.ndarray, hardware: np.ndarray, stride: int, num_hardware: int) -> np.ndarray:
    """The rank of each held item in the component's window (``cand_hw``/``cand_rank``), for an
    assignment built outside CP-SAT.

    An item the window lists twice (node groups that overlap) has two ranks, and a process of
    several items must report the ranks that make them the stride's progression ``h, h+s, ...``
    (``0-7`` of one group and ``8`` of the other may be one run of ranks over GPUs 5, 6, 7 and 0).
    Each such process gets the first base rank whose progression its items can take, one item
    per rank; every other item keeps its first rank.
    """
    rank_of = np.full(num_hardware, -1, dtype=np.int64)
    rank_of[cand_hw[::-1]] = cand_rank[::-1]  # an item listed twice keeps its first rank
    ranks = rank_of[hardware]
    if distinct(cand_hw).size == cand_hw.size:
        return ranks
    options: dict[int, set[int]] = {}
    for item, rank in zip(cand_hw.tolist(), cand_rank.tolist()):
        options.setdefault(item, set()).add(rank)
    for lo, hi in zip(indptr[:-1].tolist(), indptr[1:].tolist()):
        items = hardware[lo:hi].tolist()
        if len(items) < 2 or all(len(options[item]) == 1 for item in items):
            continue
        for base in sorted(set().union(*(options[item] for item in items))):
            chosen = _progression(items, options, base, stride)
            if chosen is not None:
                ranks[lo:hi] = chosen
                break
    return ranks


def _progression(items: list[int], options: dict[int, set[int]], base: int, stride: int) -> list[int] | None:
    """Ranks ``base, base+stride, ...`` given one to each of ``items`` (in their order), or None."""
    wanted = [base + k * stride for k in range(len(items))]
    given: dict[int, int] = {}
    for rank in wanted:
        holder = next((item for item in items if item not in given and rank in options[item]), None)
        if holder is None:
            return None
        given[holder] = rank
    return [given[item] for item in items]
