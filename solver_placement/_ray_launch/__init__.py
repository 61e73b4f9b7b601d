"""Launching on Ray: a plan from placement records (``plan``, no Ray import) checked against the
live nodes (``model_check``), bundles placed by node labels or the resource fallback (``labels``)
and inside required topology domains (``domains``, with Ray's ``topology_strategy`` where
``features`` finds it), the Ray to use (``connect``: an attached cluster; ``session``: or the
embedded one), one verified reservation per job (``reserve``, ``placement_groups``, ``probe``,
``gpu_match``, ``free_gpus``), worker groups with verl's dispatch modes (``worker_group``,
``dispatch``, ``pools``) and the landing check of ``launch --run``. Ray's names come from ``ray_api`` (Ray is an optional extra).

Nothing is re-exported here, so ``solver_placement._ray_launch.launch_plan`` stays importable without
Ray; the public names are at the package top level (``solver_placement.reserve`` ...)."""
