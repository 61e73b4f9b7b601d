"""docs/config.md names every key the code accepts, so the reference cannot fall behind the parsers.

Each key list is the one the parser checks input against (``check_keys``), imported, not copied:
a key added to the code without a line in the reference fails here.
"""

from __future__ import annotations

import re

import pytest
from helpers import ROOT
from internals.specification.test_verl_trainer import CASES, config

from solver_placement._auto.section import _EMBODIED_KEYS, _REASONING_KEYS
from solver_placement._cluster.schema import CLUSTER_KEYS, ENV_KEYS, GROUP_KEYS, RLINF_IGNORED_KEYS
from solver_placement._cluster.topology import TOPOLOGY_KEYS
from solver_placement._frontends.verl import VERSION_KEY, verl_pools
from solver_placement._frontends.verl.keys import VerlKeys
from solver_placement._frontends.verl.resource_pools import POOL_KEYS, SECTION, SECTION_KEYS
from solver_placement._solver_settings import DEFAULT_WEIGHTS, OBJECTIVE_KEY, OPTION_KEYS
from solver_placement._specification.grammar import ALIASES, COMPONENT_KEYS, MEMORY_PARTS, TOPOLOGY_GROUPS

DOC = (ROOT / "docs" / "config.md").read_text()
#: Every name written as inline code in the reference (``key``, fenced examples left out), split
#: at the dots, commas and brackets of compound names (``hardware.configs``, ``node_groups[]``).
DOCUMENTED = {
    part for code in re.findall(r"`([^`\n]+)`", re.sub(r"```.*?```", "", DOC, flags=re.DOTALL))
    for part in re.split(r"[.,\s\[\]{}:]+", code) if part
}  # fmt: skip

ACCEPTED = {
    "cluster": CLUSTER_KEYS,
    "cluster (RLinf's, ignored)": tuple(RLINF_IGNORED_KEYS),
    "cluster.node_groups[]": GROUP_KEYS,
    "node group hardware": ("type", "configs", "node_rank"),
    "node group env_configs[]": ENV_KEYS,
    "cluster.gpu_topology": TOPOLOGY_KEYS,
    "component": COMPONENT_KEYS,
    "component aliases": (*ALIASES, *ALIASES.values()),
    "component memory_gb": MEMORY_PARTS,
    "component topology": (*TOPOLOGY_GROUPS, "require", "prefer"),
    "cluster.solver": (*OPTION_KEYS, OBJECTIVE_KEY),
    "cluster.solver.objective": tuple(DEFAULT_WEIGHTS),
    "top level": (SECTION, "auto_placement", "cluster"),
    "resource_pools": SECTION_KEYS,
    "resource pool": POOL_KEYS,
    "auto_placement": (*_REASONING_KEYS, *_EMBODIED_KEYS),
}


@pytest.mark.parametrize("section", ACCEPTED)
def test_every_accepted_key_is_in_the_reference(section: str) -> None:
    missing = [key for key in ACCEPTED[section] if key not in DOCUMENTED]
    assert not missing, f"docs/config.md does not document these {section} keys: {missing}"


def test_the_reference_documents_no_key_twice_in_one_table() -> None:
    for table in re.split(r"\n#+ ", DOC):
        first_cells = re.findall(r"^\| `([^`]+)`", table, flags=re.MULTILINE)
        assert len(first_cells) == len(set(first_cells)), first_cells


def test_every_verl_key_read_is_in_the_reference(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every verl key the reader looks at, over verl's example configs, is named whole in the reference."""
    read: set[str] = {VERSION_KEY}
    look_up = VerlKeys._raw
    monkeypatch.setattr(VerlKeys, "_raw", lambda keys, key: read.add(key) or look_up(keys, key))
    for path, overrides, *_ in CASES:
        verl_pools(config(path, *overrides))
    missing = sorted(key for key in read if f"`{key}`" not in DOC)
    assert len(read) > 30 and not missing, f"docs/config.md does not document these verl keys: {missing}"
