"""The clperf language server (import name ``clperf.server``).

Protocol glue only: ``wiring`` registers every LSP handler with pygls; each feature (diagnostics, lenses,
inlay hints, hover, code actions, commands) is a small module of plain logic returning the records in
``views``; ``convert`` turns those records into lsprotocol types. Start it with ``python -m clperf.server``.
"""
