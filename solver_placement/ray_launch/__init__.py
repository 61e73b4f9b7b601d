"""Launching on Ray: a plan from placement records (``plan``, no Ray import) checked against the
live nodes (``model_check``), the Ray to use (``connect``: an attached cluster; ``session``: or
the embedded one), one verified reservation per job (``reserve``, ``probe``, ``gpu_match``),
worker groups with verl's dispatch modes (``worker_group``, ``dispatch``, ``pools``) and the
landing check of ``launch --run``. Ray's names come from ``ray_api`` (Ray is an optional extra).

Nothing is re-exported here, so ``solver_placement.ray_launch.plan`` stays importable without
Ray; the public names are at the package top level (``solver_placement.reserve`` ...)."""
