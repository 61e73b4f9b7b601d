"""slime's front end: its ``train.py`` command line read as slime reads it (``flags.py``,
``job.py``), where its code puts every rank (``bundles.py``, ``layout.py``), what goes wrong node
by node (``checks.py``) and the flags that fix it (``fixes.py``), the solver's layout in slime's
flags (``improve.py``), and the :class:`Framework` value the prediction core calls
(``framework.py``). The rules are slime's at the commit in ``known_flags.py``.
"""
