"""Ray's record of the last ``ray start`` on this machine, kept as it was while the embedded Ray starts.

``ray start`` writes its head's address to ``ray_current_cluster`` in Ray's temp dir
(``ray/scripts/scripts.py``, ``write_ray_address``), and ``ray.init()``, ``address="auto"`` and
:mod:`connect` read it to find the user's cluster. Ray's test cluster, which the embedded Ray is
built on, writes its head there too ("for convenience in unit testing",
``ray/cluster_utils.py:261``, ``Cluster.add_node``; Ray 2.60.0, commit b7f4259) and deletes the
file in its ``shutdown`` (``ray/cluster_utils.py:427``), whoever wrote it. So the embedded Ray used to hide the user's own ``ray start`` cluster while it ran,
delete its record at the end, and, when Ctrl-C or a kill cut the shutdown short, leave a record
naming a dead head that made the next command fail (issue 35 item 10).

:class:`RecordKeeper` reads the record before the head starts and puts it back right after Ray
wrote it, before anything else happens; the session never calls the test cluster's ``shutdown``,
so nothing deletes it later. The embedded Ray thus never leaves its address as the machine's
current cluster, however the process ends after its head is up.
"""

from __future__ import annotations

import os
from contextlib import suppress


class RecordKeeper:
    """The record as it was when made; :meth:`put_back` restores it once a head overwrote it."""

    def __init__(self) -> None:
        from ray._common.utils import get_ray_address_file

        #: The file Ray writes: ``ray_current_cluster`` in Ray's temp dir (``RAY_TMPDIR``, else
        #: ``TMPDIR``, else ``/tmp``, then ``ray/``), read once so the restore writes where Ray wrote.
        self.path = get_ray_address_file(None)
        self.before = self._read()

    def _read(self) -> str | None:
        try:
            with open(self.path, encoding="utf-8") as record:
                return record.read().strip() or None
        except FileNotFoundError:
            return None

    def put_back(self, head: str | None) -> None:
        """Undo Ray's write of ``head`` (the embedded head's address; None: it never started).

        Only a record naming ``head`` is ours to undo: one naming another address was written
        since by someone else (a ``ray start`` meanwhile) and stays."""
        if head is None or self._read() != head:
            return
        if self.before is None:
            with suppress(FileNotFoundError):  # removed meanwhile (a `ray stop`): just as well
                os.remove(self.path)
            return
        with open(self.path, "w", encoding="utf-8") as record:  # in place, as Ray writes it (the file keeps its mode)
            record.write(self.before)
