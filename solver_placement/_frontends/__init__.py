"""Front ends: one folder (or module) per framework, each translating that framework's own input
into the job the core places, and the answer back into the framework's terms.

* ``verl/``: verl's trainer config as verl's driver reads it, ``resource_pools:`` in verl's words,
  where Ray lands the pools, and ``export --to verl``;
* ``rlinf/``: RLinf's placement API (component placements, strategies, the class a job's
  ``runner.task_type`` asks for), which RLinf code calls as it calls its own;
* ``component_placement``: ``cluster.component_placement`` (RLinf's rank strings and the
  declarative components), the default.

Frameworks whose own code decides the layout (``predict FRAMEWORK``) register a
:class:`~solver_placement._prediction.frameworks.Framework` with the prediction core instead:

* ``areal/``: AReaL's allocation strings and launch config, the GPUs its local scheduler and
  launcher give every worker;
* ``nemo_rl/``: NeMo-RL's GRPO YAML (``defaults:`` inheritance, overrides), its virtual clusters rank by rank;
* ``openrlhf/``: OpenRLHF's ``train_ppo_ray`` flags, both spellings, read with each release's parser;
* ``roll/``: ROLL's YAML as ROLL reads it and where its own code puts every worker;
* ``skyrl/``: SkyRL's ``main_base`` Hydra overrides, its placement groups and engines rank by rank;
* ``slime/``: slime's ``train.py`` command line, its own layout predicted rank by rank.

The core (``_job`` and everything below ``_frontends`` in the layers) never imports a front end:
each registers a :class:`~solver_placement._job.Frontend` here, on import of the package, and
``load_job`` asks them in this order which one reads a config. A new framework is a new folder
plus one line below.
"""

from solver_placement._frontends.areal.framework import AREAL
from solver_placement._frontends.component_placement import COMPONENT_PLACEMENT
from solver_placement._frontends.nemo_rl.framework import NEMO_RL
from solver_placement._frontends.openrlhf.framework import OPENRLHF
from solver_placement._frontends.roll.framework import ROLL
from solver_placement._frontends.skyrl.framework import SKYRL
from solver_placement._frontends.slime.framework import SLIME
from solver_placement._frontends.verl.frontends import RESOURCE_POOLS, TRAINER
from solver_placement._job import register_frontend
from solver_placement._prediction.frameworks import register_framework

for _frontend in (TRAINER, RESOURCE_POOLS, COMPONENT_PLACEMENT):
    register_frontend(_frontend)
for _framework in (AREAL, NEMO_RL, OPENRLHF, ROLL, SKYRL, SLIME):
    register_framework(_framework)
