"""OpenRLHF's PPO trainer (``python -m openrlhf.cli.train_ppo_ray``): its flags read as its parser
and ``train()`` read them (``arguments.py`` with each release's option table in ``parsers/``,
``read.py``; the releases in ``releases.py``), where its code and Ray put every rank
(``layout.py``, ``ray_landing.py``), fixes in its flags (``fixes.py``), the solver's layout for
the same job (``improve.py``), and the registered value (``framework.py``).
"""
