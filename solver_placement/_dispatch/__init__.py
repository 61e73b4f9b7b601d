"""Calling a group of workers as one: verl's dispatch modes, batches, fused workers.

Not launching: a reservation (``_ray_launch``) starts the actors; this package decides what each
of them receives when the group is called and how their answers come back (``modes``, over the
ranks' coordinates in ``parallel_layout``, splitting ``batch`` values), builds the worker class
that serves every role of a verl pool (``fuse``), and wraps the actors (``worker_group``). Its
failures are :class:`~solver_placement.DispatchError`: the placement is fine, the call is not.
"""
