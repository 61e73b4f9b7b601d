"""ROLL (``alibaba/ROLL``): its Hydra YAML read as ROLL reads it, where its ``ResourceManager`` and
``Cluster`` put every worker, what that gets wrong node by node, and the solver's layout in ROLL's keys.

* ``releases.py``: the releases read and the one rule that differs (where ``num_gpus_per_node`` comes from);
* ``device_mapping.py``: the ``device_mapping`` expression, evaluated without ``eval``;
* ``keys.py``: the config (or the start script's command line) read into a ``RollJob`` (``job.py``);
* ``resource_manager.py``: ROLL's per-node-rank placement groups and where Ray lands them;
* ``layout.py``: every worker's node, GPUs and ``CUDA_VISIBLE_DEVICES``;
* ``checks.py`` and ``fixes.py``: the node-by-node findings and their fixes in ROLL's keys;
* ``improve.py``: the solver's layout and the ``device_mapping`` values that ask ROLL for it;
* ``framework.py``: the ``Framework`` value the prediction core calls.
"""
