"""Array helpers the stages share, where numpy's general function is the slow path.

``np.unique`` on a flat int array became hash-based in numpy 2.4 and takes ~0.7 s for the
524,288 GPU ids of a 65,536-node cluster, 30 times a sort; the solver's count path and counting
bounds take distinct ids of such arrays several times per solve.
"""

from __future__ import annotations

import numpy as np


def distinct(values: np.ndarray) -> np.ndarray:
    """The distinct values of a flat array, ascending (``np.unique(values)``, by one sort)."""
    ordered = np.sort(values, kind="stable")
    if ordered.size < 2:
        return ordered
    return ordered[np.r_[True, ordered[1:] != ordered[:-1]]]
