"""Names and defaults shared by every stage, defined once.

The hardware-type and label strings are RLinf's own (``Accelerator`` for GPUs, the reserved
``cluster`` and ``node`` node-group labels); a change here changes what configs mean.
"""

from __future__ import annotations

VERSION = "0.1.0"

#: Hardware type of GPUs (and other accelerators), as RLinf spells it.
ACCELERATOR = "Accelerator"
#: Hardware type of a node used as one resource (CPU-only processes, ``unit: node``).
NODE = "node"
#: Reserved node-group label: every node; its resources are GPUs if any node has some.
CLUSTER_LABEL = "cluster"
#: Reserved node-group label: every node, each node one resource.
NODE_LABEL = "node"
RESERVED_LABELS = (CLUSTER_LABEL, NODE_LABEL)
#: ``accelerator_type`` of a node without GPUs.
NO_ACCELERATOR = "NO_ACCEL"
#: Default ``accelerator_type`` of GPU nodes.
DEFAULT_ACCELERATOR_TYPE = "NV_GPU"

#: Seconds one solve (or auto-placement search) may take unless the config says otherwise.
DEFAULT_TIME_LIMIT_S = 60.0
#: Largest time limit accepted (one day).
MAX_TIME_LIMIT_S = 86_400.0
