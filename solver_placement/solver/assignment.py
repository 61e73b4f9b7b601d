"""The solver's answer for one component: a compact process x hardware assignment."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


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
