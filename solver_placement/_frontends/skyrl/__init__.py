"""SkyRL's front end: its ``main_base`` Hydra overrides read as SkyRL 0.4.0 reads them, where its
own code puts every worker, what that gets wrong, and the solver's layout in SkyRL's keys.

``keys.py`` reads the input, ``job.py`` types it, ``ray_landing.py`` models where Ray lands
SkyRL's placement groups and actors, ``layout.py`` predicts and checks, ``fixes.py`` writes the
fixes, ``improve.py`` the solver's layout, ``framework.py`` the value ``_frontends`` registers.
"""
