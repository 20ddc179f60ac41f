"""``python -m clperf.server [--stdio]``: the language server over stdio.

Start it as ``python -P -m clperf.server``; without ``-P`` it starts itself again with it (``cli``) before
importing anything the working directory could provide.
"""

from __future__ import annotations

from clperf.server.cli import main

raise SystemExit(main())
