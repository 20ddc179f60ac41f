"""clperf: OpenCL kernel performance in the editor.

The package is split by what each part does with a kernel:
``clperf.predictor`` reasons about it without running it, ``clperf.benchmark`` runs it,
``clperf.server`` speaks LSP. Shared record types live in ``clperf.core.records``.
"""

__version__ = "0.1.0"
