"""AReaL's front end: its allocation strings and launch config read as AReaL 1.0.4 reads them,
the GPUs its local scheduler or local launcher gives every worker, checked node by node, and the
solver's layout in AReaL's keys.

* ``grammar``: the allocation-mode grammar (``sglang:d4t2+fsdp:d8``, ``|`` colocation, names);
* ``keys``: the config (YAML, ``--config`` plus ``key=value`` overrides) and its defaults;
* ``job``: the typed job those keys state;
* ``layout``: the GPUs AReaL's own code gives each worker, rank by rank;
* ``fixes``: each finding's fix in AReaL's keys;
* ``improve``: the solver's layout for the job and the keys that ask AReaL for it;
* ``framework``: the :class:`~solver_placement._prediction.frameworks.Framework` registered.
"""
