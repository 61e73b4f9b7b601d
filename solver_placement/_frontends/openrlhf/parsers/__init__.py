"""The option tables of OpenRLHF's ``train_ppo_ray`` parser, one module per release read (written by
``tests/openrlhf_drivers/write_flag_table.py``; ``kinds.py`` says what an entry holds).
"""

from __future__ import annotations

from solver_placement._frontends.openrlhf.parsers import release_0_7_0, release_0_10_1_post2, release_0_11_0, release_0_11_2
from solver_placement._frontends.openrlhf.parsers.kinds import Options

#: release -> (argparse's allow_abbrev, its options)
FLAGS: dict[str, tuple[bool, Options]] = {
    "0.7.0": (release_0_7_0.ALLOW_ABBREV, release_0_7_0.OPTIONS),
    "0.10.1.post2": (release_0_10_1_post2.ALLOW_ABBREV, release_0_10_1_post2.OPTIONS),
    "0.11.0": (release_0_11_0.ALLOW_ABBREV, release_0_11_0.OPTIONS),
    "0.11.2": (release_0_11_2.ALLOW_ABBREV, release_0_11_2.OPTIONS),
}
