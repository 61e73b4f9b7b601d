"""The notebooks are stored executed, and run clean again from top to bottom.

After a change that alters their outputs, refresh the stored copies with
``UPDATE_NOTEBOOKS=1 python -m pytest tests/test_notebooks.py`` (writes the fresh run back).
"""

from __future__ import annotations

import copy
import os
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

pytestmark = pytest.mark.notebook

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))


def outputs(notebook: nbformat.NotebookNode) -> tuple[list[tuple[bool, int]], list[str]]:
    """Per code cell: whether it printed and how many figures it showed; and the errors raised.

    Printed text is not compared: a kernel may split one print into several stream messages, and
    messages of the library may be reworded without making a notebook wrong.
    """
    shape, errors = [], []
    for cell in notebook.cells:
        if cell.cell_type != "code":
            continue
        kinds = [out.output_type for out in cell.outputs]
        images = sum(1 for out in cell.outputs if "image/png" in out.get("data", {}))
        shape.append(("stream" in kinds, images))
        errors += [out.ename for out in cell.outputs if out.output_type == "error"]
    return shape, errors


def test_the_five_notebooks_are_there() -> None:
    assert [path.name for path in NOTEBOOKS] == [
        "01_grammar_tour.ipynb",
        "02_collocated_vs_disaggregated.ipynb",
        "03_heterogeneous_cluster.ipynb",
        "04_explore_layouts.ipynb",
        "one_job_eight_frameworks.ipynb",
    ]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_notebook_is_stored_executed_and_reruns_clean(path: Path) -> None:
    stored = nbformat.read(path, as_version=4)
    code = [cell for cell in stored.cells if cell.cell_type == "code"]
    assert code and all(cell.execution_count is not None for cell in code), "store the notebook executed"
    stored_shape, stored_errors = outputs(stored)
    assert sum(images for _, images in stored_shape) >= 2 and not stored_errors

    fresh = copy.deepcopy(stored)
    resources = {"metadata": {"path": str(path.parent)}}
    NotebookClient(fresh, timeout=120, kernel_name="python3", record_timing=False, resources=resources).execute()
    shape, errors = outputs(fresh)
    assert not errors
    assert shape == stored_shape, "a cell prints or draws something else than the stored notebook: re-execute it"
    if os.environ.get("UPDATE_NOTEBOOKS") == "1":
        for cell in fresh.cells:
            cell.metadata.pop("execution", None)  # timestamps would make every refresh a diff
        nbformat.write(fresh, path)
