"""Launching on Ray: a plan from placement records (``plan``, no Ray import), the Ray to use
(``session``), one verified reservation per job (``reserve``), worker groups with verl's dispatch
modes (``worker_group``, ``dispatch``, ``pools``) and the landing check of ``launch --run``.

Nothing is re-exported here, so ``solver_placement.ray_launch.plan`` stays importable without
starting Ray; the public names are at the package top level (``solver_placement.reserve`` ...)."""
