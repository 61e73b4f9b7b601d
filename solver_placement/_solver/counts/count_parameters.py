"""The CP-SAT parameters of the count model's runs, each with the measurement that chose it.

Why a module of its own: every run of the count model (``model.py``, and the models built on it:
``level_model.py``, ``maximal.py``, ``peak_levels.py``) sets the same few parameters, and each
setting is a trade measured on the benchmark's families; kept together they are read (and
changed) as one.
"""

from __future__ import annotations

from ortools.sat.python import cp_model

#: CP-SAT parameters of the count model. Its presolve spends most of a run (0.4 s of 0.41 on a
#: model of 1,500 patterns) on a model that is already small and tight: off, the same optimum
#: is proven in milliseconds. So does its probing (at the root, each 0/1 variable tried both
#: ways) where node shapes of one node make their counts 0/1: ``fixed loads:21:1`` (rank
#: strings' loads make nodes distinct, 489 such counts) spent 0.026 of the low-ranks run's 0.045
#: deterministic work probing; off, both runs take 0.38 of the CPU (0.195 -> 0.074 s), some
#: ``kinds memory`` and ``topology overlaps`` specs 0.4-0.7, and the other families as before
#: (54 specs of 0.08 s or more, interleaved best of 3).
COUNT_PARAMETERS = {"cp_model_presolve": False, "cp_model_probing_level": 0}
#: Parameters where a class's members number their processes by required domains of their own
#: (units that overlap, ``domain_levels.py``): there the search without presolve may find no
#: first answer (558 nodes in 70 racks and 18 zones with ``balance``: none in 15 s), and
#: presolve proves the optimum (about 2 s). Elsewhere presolve only costs time (priced
#: remainders, ``spanning.py``: 1.2 s instead of 0.7 on 241 nodes of ``topology mixes``).
OWN_ORDER_PARAMETERS: dict[str, bool] = {}
#: CP-SAT's deterministic time (its own measure of work, the same on any machine) for the run
#: that moves GPUs to low ranks (:func:`solve_counts`' second run,
#: ``level_model.LevelModel.low_ranks``), a tie-break among answers already proven best. Bounded
#: by wall time alone it took most of a solve and ended where the machine's speed left it:
#: ``kinds memory`` on 624 nodes (2,431 patterns) needed 0.47 of it, 3.4 s on a loaded machine;
#: on 5 nodes (2,650 patterns) it ran out of time after 0.53, so that answer's tie-break
#: depended on the machine's load (and on 331 nodes of 14,852 patterns, ``other hardware``, the
#: level model's ran past the time limit, where the answer was lost). The best run so far is kept
#: when it ends (the first answer when it found none better), so the answer stays deterministic.
LOW_RANKS_WORK = 0.05
#: CP-SAT's deterministic time for the one run that weighs the weighted terms and low ranks
#: together where domains are counted (:func:`_ranked_together`), with presolve off even where
#: a class numbers its processes by its own domains (``OWN_ORDER_PARAMETERS``): the low-ranks
#: term leads the search to an answer there too (``topology overlaps:558:11``: 0.041 instead of
#: 0.094 with presolve). Every topology spec of the benchmark proves both terms within half of
#: it (``topology:258:2``: 0.048); a run that reaches it unproven is kept when the weighted terms
#: are proven (the low-ranks sum as far as it got, as the second run's), else the two runs.
TOGETHER_WORK = 0.1
#: CP-SAT's parameters for that run: every linear row in its relaxation from the start, not as
#: its solutions break them (CP-SAT's default). The domains' rows and the low-ranks sum bound it
#: at the root: ``topology:258:2`` 0.18 -> 0.07 s CPU (1,153 branches, not 5,570); the
#: ``topology``, ``topology mixes`` and ``topology overlaps`` families at seeds 0, 60 and 240
#: (60 cases each, best of two): 2.28, 4.52 and 3.34 s CPU in all, 2.06, 4.34 and 2.91 so (a few
#: cases slower, ``topology mixes:465:65`` 0.26 -> 0.41 s).
TOGETHER_PARAMETERS = {**COUNT_PARAMETERS, "add_lp_constraints_lazily": False}
#: CP-SAT's parameters for the weighted terms' own run where that run of both together ended
#: unproven (``TOGETHER_WORK``): its search branches as the linear relaxation leads (CP-SAT's
#: LP search), not in its default order. Such specs are the hard ones, and the default order
#: wandered there: ``topology overlaps:1020:137`` (pipelines no rack holds, 4,208 counts) was
#: proven after 2.4 s, past the count path's share of a 5 s limit (3% above its bound); its
#: run takes 0.1 s so (the whole solve 0.7 s). The ``topology``, ``topology mixes`` and
#: ``topology overlaps`` families at seeds 0-999 (3,000 specs, s CPU in all): 53.75 -> 53.38,
#: specs over 1 s 4 -> 2, no other answer moved; LB-tree search there 58.1, every row in
#: from the start 55.6.
AFTER_TOGETHER = {"search_branching": cp_model.SatParameters.SearchBranching.LP_SEARCH}
#: Most variables of a count model that CP-SAT presolves all the same: a few counts over tens of
#: thousands of nodes each (their domains that wide) are a knapsack its search without presolve
#: branches through, where presolve settles it: ``rank strings:16384:3``, 10 variables and 6
#: rows, 154,227 branches and 0.88 s -> 0.085 s for the whole solve. Not with a further term
#: (``contiguity``'s chords): there presolve cost 0.07-0.15 s on models it ran in milliseconds
#: (``contiguity:111:19``, ``271:71``).
PRESOLVED_MOST = 32
PRESOLVED = {"cp_model_presolve": True}


__all__ = ["AFTER_TOGETHER", "COUNT_PARAMETERS", "LOW_RANKS_WORK", "OWN_ORDER_PARAMETERS", "PRESOLVED", "PRESOLVED_MOST", "TOGETHER_PARAMETERS", "TOGETHER_WORK"]
