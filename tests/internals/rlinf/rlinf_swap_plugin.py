"""A pytest plugin that makes RLinf's own tests run on solver_placement's classes.

Loaded with ``-p rlinf_swap_plugin`` (``tests/internals/rlinf`` on ``PYTHONPATH``) before a test file of
RLinf's is collected: RLinf's placement modules are loaded through :mod:`rlinf_shim`, then every
class solver_placement offers under RLinf's name replaces RLinf's in ``rlinf.scheduler`` and
``rlinf.utils.placement``, the two modules RLinf's tests import them from. Everything else the
tests use (``NodeInfo``, ``NodeGroupInfo``, the hardware classes, their ``FakeCluster``) stays
RLinf's own, so our classes get exactly the cluster objects RLinf's tests build.
"""

from __future__ import annotations

import sys

import rlinf_shim

import solver_placement._frontends.rlinf

rlinf_shim.load()
for module_name in ("rlinf.scheduler", "rlinf.utils.placement"):
    module = sys.modules[module_name]
    for name in solver_placement._frontends.rlinf.__all__:
        if hasattr(module, name):
            setattr(module, name, getattr(solver_placement._frontends.rlinf, name))
