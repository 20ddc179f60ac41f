"""``python -m clperf.server [--stdio]``: the language server over stdio."""

from __future__ import annotations

from clperf.server.cli import main

raise SystemExit(main())
