"""Node labels as the solver's stages compare them: one integer per distinct value.

A topology rule keeps a group inside one value of a label; the model, the counting bounds, the
count model and first fit all ask "which value does this node have", so the answer is computed
one way, here (a leaf module every stage may import without importing the rules).
"""

from __future__ import annotations

from weakref import WeakKeyDictionary

import numpy as np

from solver_placement._cluster.cluster import Cluster

#: Per cluster (held weakly: a cluster's tables go with it), each label's values read so far.
_READ: WeakKeyDictionary[Cluster, dict[str, np.ndarray]] = WeakKeyDictionary()


def label_values(cluster: Cluster, label: str) -> np.ndarray:
    """Per node, an index of its value of ``label``; unlabelled nodes are each their own value.
    Read once per cluster and label (read-only): the stages of one solve ask it several times,
    each a pass over every node (65,536 nodes: seven reads, 0.15 s)."""
    read = _READ.setdefault(cluster, {})
    if label not in read:
        names = [cluster.node_labels[n].get(label, f"\0node {n}") for n in range(cluster.num_nodes)]
        index = {name: i for i, name in enumerate(dict.fromkeys(names))}
        values = np.array([index[name] for name in names], dtype=np.int64)
        values.flags.writeable = False
        read[label] = values
    return read[label]
