"""Node labels as the solver's stages compare them: one integer per distinct value.

A topology rule keeps a group inside one value of a label; the model, the counting bounds, the
count model and first fit all ask "which value does this node have", so the answer is computed
one way, here (a leaf module every stage may import without importing the rules).
"""

from __future__ import annotations

import numpy as np

from solver_placement._cluster.cluster import Cluster


def label_values(cluster: Cluster, label: str) -> np.ndarray:
    """Per node, an index of its value of ``label``; unlabelled nodes are each their own value."""
    names = [cluster.node_labels[n].get(label, f"\0node {n}") for n in range(cluster.num_nodes)]
    index = {name: i for i, name in enumerate(dict.fromkeys(names))}
    return np.array([index[name] for name in names], dtype=np.int64)
