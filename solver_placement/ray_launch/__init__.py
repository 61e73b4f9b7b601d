"""Launching on Ray: a plan from placement records (``plan``, no Ray import; Ray nodes in ``nodes``) checked against the
live nodes (``model_check``), the Ray to use (``session``: an attached cluster or the embedded
one), the cluster model of a running Ray (``live_cluster``), one verified reservation per job
(``reserve``, ``probe``), worker groups with verl's dispatch modes (``worker_group``,
``dispatch``, ``pools``) and the landing check of ``launch --run``.

Nothing is re-exported here, so ``solver_placement.ray_launch.plan`` stays importable without
starting Ray; the public names are at the package top level (``solver_placement.reserve`` ...)."""
