"""All pygls wiring in one place: the server object, its state, and every LSP handler (the commands' in
``commands``).

Handlers are thin: find the document, call a feature module's plain logic, convert with ``convert``.
Each one runs through ``guarded`` so a bug in one feature is logged and answered with an empty result
instead of killing the server, and ``AnsweringProtocol`` answers requests pygls cannot even decode.
Nothing here compiles or runs a kernel on the event loop: analyses go to the ``Scheduler``'s light and
heavy lanes, code actions to their own pool (so a slow file never delays another file's diagnostics, nor
a quick fix), device questions to theirs, benchmarks (``commands``) to a separate one-thread pool, and a
local device's missing peaks (``peaks``) are measured on one more. Only the ``clperf.benchmark`` command
runs a kernel of the user's; the peak measurement runs clperf's own. ``exit`` and the end of stdin end
the process at once, whatever the workers are doing: ``exit_now`` kills clang and every other child,
then ``os._exit``.
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from typing import Any, BinaryIO, NoReturn

from lsprotocol import types
from pygls.lsp.server import LanguageServer
from pygls.uris import to_fs_path

from clperf import __version__
from clperf.core.buildopts import workspace_root
from clperf.core.children import terminate_all
from clperf.core.errors import ClperfError
from clperf.core.records import Device
from clperf.server import actions, commands, convert, engine, hints, hover, lenses, logs, peaks
from clperf.server.documents import MAX_PARSED_CHARS, Documents
from clperf.server.guard import AnsweringProtocol, guarded
from clperf.server.progress import Progress
from clperf.server.scheduler import Scheduler
from clperf.server.settings import SECTION, Settings, parse_settings
from clperf.server.targets import Targets
from clperf.server.views import Action, Problem, Span

log = logging.getLogger("clperf.server")
CONFIG_TIMEOUT_S = 2.0  # a client that never answers workspace/configuration gets the defaults
# while PoCL's code of a kernel is costed (the local PoCL device's estimate, 1-3 s a kernel), the document
# is analysed again every REFINE_S, at most REFINE_TRIES times per version
REFINE_S = 1.0
REFINE_TRIES = 30
# a file with more kernels than this (about a second of estimates each) or more characters goes to the
# analysis's heavy lane: two such files never take both light threads from every other file
HEAVY_KERNELS = 8
HEAVY_CHARS = 100_000


class ClperfServer(LanguageServer):
    def __init__(self) -> None:
        super().__init__("clperf", __version__, protocol_cls=AnsweringProtocol,
                         text_document_sync_kind=types.TextDocumentSyncKind.Incremental)
        self.settings = Settings()
        self.docs = Documents()
        self.targets = Targets()
        self.pool = ThreadPoolExecutor(max_workers=2, thread_name_prefix="clperf-analysis")
        self.heavy_pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="clperf-analysis-heavy")
        self.action_pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="clperf-actions")
        self.bench_pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="clperf-benchmark")
        self.device_pool = ThreadPoolExecutor(max_workers=2, thread_name_prefix="clperf-devices")
        self.peaks_pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="clperf-peaks")
        self.peaks = peaks.Peaks(on_measured=self.peaks_measured)
        self.loop: asyncio.AbstractEventLoop | None = None  # the event loop, once ``initialize`` came
        self.scheduler = Scheduler(self.pool, self.snapshot, self.run_job, self.deliver,
                                   heavy_pool=self.heavy_pool, heavy=self.heavy)
        self.caps: types.ClientCapabilities | None = None
        self.pending_problems: list[str] = []
        self._parse_timers: dict[str, asyncio.TimerHandle] = {}
        self._refines: dict[str, tuple[int | None, int]] = {}  # uri -> (version, re-analyses so far)
        self.configured = False  # analyses wait for the client's settings (see ``analyze``)
        self._configured = asyncio.Event()  # ... and so do the device commands (``settled``)
        self.shutdown_requested = False  # ``exit`` then ends with 0, otherwise 1 (the LSP's rule)

    # --- the end of the process ---------------------------------------------------------------------
    def start_io(self, stdin: BinaryIO | None = None, stdout: BinaryIO | None = None) -> None:
        try:
            super().start_io(stdin, stdout)
        finally:  # stdin ended (the editor is gone) or the loop stopped: no waiting for the workers
            self.exit_now()

    def exit_now(self) -> NoReturn:
        """End the process now. pygls's own exit raises SystemExit, and the interpreter then joins the
        worker threads: minutes in a long analysis. Children (clang, benchmark workers) are ended first,
        as ``os._exit`` skips the atexit hooks that would."""
        code = 0 if self.shutdown_requested else 1
        try:
            logs.disconnect()  # stdout may be gone already: the last words go to stderr
            log.info("exiting (code %d)", code)
            terminate_all()
            for handler in logging.getLogger().handlers:
                handler.flush()
        finally:
            os._exit(code)

    # --- capabilities and settings ------------------------------------------------------------------
    def hover_style(self) -> hover.Style:
        """A table for clients that name their Markdown parser, a list for other Markdown ones, else text."""
        document = self.caps.text_document if self.caps is not None else None
        hover_caps = document.hover if document is not None else None
        formats = hover_caps.content_format if hover_caps is not None else None
        return hover.hover_style(formats, self.supports("general", "markdown"))

    def supports(self, *path: str) -> bool:
        node: Any = self.caps
        for name in path:
            node = getattr(node, name, None)
            if node is None:
                return False
        return bool(node)

    def apply_settings(self, raw: Any) -> bool:
        """Take new settings; report unusable options. True when anything changed."""
        settings, problems = parse_settings(raw)
        for p in problems:
            log.warning("settings: %s", p)
            self.window_show_message(types.ShowMessageParams(types.MessageType.Warning, f"clperf: {p}"))
        changed = settings != self.settings
        if settings.device != self.settings.device:  # one source of truth: the setting, once it changes
            self.targets.override = None
        self.use(settings)
        return changed

    def use(self, settings: Settings) -> None:
        self.settings = settings
        if settings.cache_directory:  # clperf.core.paths.state_dir() reads it: measurements, peaks, caches
            os.environ["CLPERF_HOME"] = os.path.expanduser(settings.cache_directory)

    async def fetch_settings(self) -> None:
        if not self.supports("workspace", "configuration"):
            return
        try:
            request = types.ConfigurationParams(items=[types.ConfigurationItem(section=SECTION)])
            result = await asyncio.wait_for(self.workspace_configuration_async(request), CONFIG_TIMEOUT_S)
        except Exception:
            log.warning("the client did not answer workspace/configuration", exc_info=True)
            return
        if self.apply_settings(result[0] if result else None):
            self.reanalyze_all()

    def reanalyze_all(self) -> None:
        for uri in self.docs.uris():
            self.analyze(uri)

    def analyze(self, uri: str) -> None:
        """Ask for an analysis; before the first settings arrived it waits for them (the device and
        scenario settings change every number, and a first answer on the wrong device would flash)."""
        self.docs.state(uri)
        if self.configured:
            self.scheduler.request(uri)

    def settings_arrived(self) -> None:
        if not self.configured:
            self.configured = True
            self._configured.set()
            # discovery reads cached peaks from the state folder, which clperf.cacheDirectory moves
            self.targets.start_discovery()
            self.reanalyze_all()

    async def settled(self) -> None:
        """Until the first settings arrived (at most a little longer than the client has to answer): a
        device asked for before them would be the default's, not the ``clperf.device`` one's."""
        try:
            await asyncio.wait_for(self._configured.wait(), 2 * CONFIG_TIMEOUT_S)
        except TimeoutError:
            pass

    # --- background analysis ------------------------------------------------------------------------
    def snapshot(self, uri: str) -> engine.Job | None:
        doc = self.workspace.text_documents.get(uri)
        if doc is None:
            return None
        path = to_fs_path(uri) or ""
        version = doc.version

        def superseded() -> bool:  # from the worker, between kernels: a dict lookup, no lock needed
            now = self.workspace.text_documents.get(uri)
            return now is not doc or now.version != version

        return engine.Job(uri, version, path, doc.source, self.settings, None, root=self.root_for(path),
                          cancelled=superseded)

    def root_for(self, path: str) -> str:
        """The workspace folder holding ``path``: clperf.toml is looked up no higher."""
        folders = [to_fs_path(f.uri) or "" for f in self.workspace.folders.values()]
        return workspace_root(path, folders or [self.workspace.root_path or ""])

    def heavy(self, job: engine.Job) -> bool:
        """Whether the job goes to the heavy lane: many kernels (by the cheap parse) or a large text."""
        return len(job.text) > HEAVY_CHARS or len(self.docs.state(job.uri).kernels) > HEAVY_KERNELS

    def run_job(self, job: engine.Job) -> engine.Analysis:
        """In a worker thread: pick the current device (may wait for discovery), start the measurement of
        its peaks where it has none, then analyse."""
        try:
            device = self.targets.target(job.settings.device)
        except ClperfError as e:
            return engine.analyze(replace(job, device_problem=str(e),
                                          bench_device=self.targets.bench_device(None)))
        problem = None
        if peaks.missing(device):
            if self.loop is not None and job.settings.measure_peaks and self.peaks.claim(device):
                asyncio.run_coroutine_threadsafe(self.measure_peaks(device), self.loop)
            problem = self.peaks.problem(device, job.settings.measure_peaks)
        return engine.analyze(replace(job, device=device, peaks_problem=problem,
                                      peaks_pending=self.peaks.status(device) == "measuring",
                                      bench_device=self.targets.bench_device(device)))

    @guarded("measuring device peaks")
    async def measure_peaks(self, device: Device) -> None:
        """The background measurement of a local device's peaks, with cancellable progress."""
        progress = Progress(self, "peaks", "clperf: measuring device peaks")
        await progress.begin(f"{device.name} (once, a few seconds)")
        loop = asyncio.get_running_loop()
        measured = None
        try:
            measured = await loop.run_in_executor(self.peaks_pool, self.peaks.run, device, progress.cancel)
        finally:
            if progress.cancel.is_set():
                progress.end("cancelled")
            elif measured is None:
                progress.end("failed: see the log")
            else:
                progress.end(f"{measured.peak_bandwidth_gbs:g} GB/s, {measured.peak_gflops:g} GFLOP/s")
        if measured is None:
            self.reanalyze_all()  # the views say why there is no estimate, and what measures the peaks

    def peaks_measured(self, device: Device) -> None:
        """In the measuring thread (a background measurement or a benchmark's): every later target carries
        the peaks, and the open documents are analysed again with them."""
        self.targets.update(device)
        if self.loop is not None:
            self.loop.call_soon_threadsafe(self.reanalyze_all)

    def deliver(self, analysis: engine.Analysis) -> None:
        """On the event loop: keep and publish the result unless the document moved on or closed."""
        doc = self.workspace.text_documents.get(analysis.uri)
        if doc is None or doc.version != analysis.version:
            log.debug("dropping the analysis of %s v%s (now %s)", analysis.uri, analysis.version,
                      doc.version if doc else "closed")
            return
        self.docs.state(analysis.uri).analysis = analysis
        self.publish(analysis.uri, doc.version)
        self.refresh_views()
        tries = self._refines.get(analysis.uri, (None, 0))
        tries = tries if tries[0] == analysis.version else (analysis.version, 0)
        if analysis.refine and tries[1] < REFINE_TRIES:  # PoCL's code is being costed: ask again soon
            self._refines[analysis.uri] = (analysis.version, tries[1] + 1)
            asyncio.get_running_loop().call_later(REFINE_S, self._refine, analysis.uri)

    def _refine(self, uri: str) -> None:
        if uri in self.workspace.text_documents:  # not for a document closed meanwhile
            self.analyze(uri)

    def publish(self, uri: str, version: int | None) -> None:
        analysis = self.docs.state(uri).analysis
        problems = analysis.problems if analysis is not None and self.settings.features.diagnostics else ()
        doc = self.document(uri)
        units = convert.Units.of(doc) if doc is not None else None
        notes = (large_file_notes(len(doc.source), problems)
                 if doc is not None and self.settings.features.diagnostics else [])
        self.text_document_publish_diagnostics(types.PublishDiagnosticsParams(
            uri=uri, version=version, diagnostics=convert.diagnostics([*problems, *notes], units)))

    def refresh_views(self) -> None:
        if self.supports("workspace", "code_lens", "refresh_support"):
            self.workspace_code_lens_refresh(None)
        if self.supports("workspace", "inlay_hint", "refresh_support"):
            self.workspace_inlay_hint_refresh(None)

    def document(self, uri: str) -> Any | None:
        return self.workspace.text_documents.get(uri)

    def kernels(self, doc: Any) -> list[Any]:
        return self.docs.kernels(doc.uri, doc.source, doc.version)

    def parse_soon(self, uri: str, delay_s: float = 0.05) -> None:
        """Re-parse after a burst of keystrokes settles (views parse on demand if they come first)."""
        timer = self._parse_timers.pop(uri, None)
        if timer is not None:
            timer.cancel()

        def parse() -> None:
            self._parse_timers.pop(uri, None)
            doc = self.document(uri)
            if doc is not None:
                self.kernels(doc)

        self._parse_timers[uri] = asyncio.get_running_loop().call_later(delay_s, parse)


def large_file_notes(size: int, problems: Sequence[Problem]) -> list[Problem]:
    """What a file past the cheap parse's limit lacks: lenses, inlay hints and hovers need that parse.
    Past the analysis's own limit its "file-too-large" notice stands alone (nothing at all is shown)."""
    if size <= MAX_PARSED_CHARS or any(p.code == "file-too-large" for p in problems):
        return []
    return [Problem(Span.at(1, 1, 1), "information",
                    f"clperf shows no code lenses, inlay hints or hovers for files over "
                    f"{MAX_PARSED_CHARS // 1000} k characters (this one has {size // 1000} k); "
                    f"diagnostics and quick fixes still work", code="views-off")]


def build_server() -> ClperfServer:
    server = ClperfServer()
    _register_documents(server)
    _register_views(server)
    commands.register(server)
    return server


def _register_documents(server: ClperfServer) -> None:
    @server.feature(types.INITIALIZE)
    @guarded("initialize")
    def initialize(ls: ClperfServer, params: types.InitializeParams) -> None:
        ls.caps = params.capabilities
        ls.loop = asyncio.get_running_loop()
        logs.connect(lambda level, text: ls.window_log_message(
            types.LogMessageParams(type=types.MessageType(level), message=text)), ls.loop)
        opts = params.initialization_options
        if isinstance(opts, dict) and SECTION in opts:
            opts = opts[SECTION]
        if opts is not None:
            settings, ls.pending_problems = parse_settings(opts)
            ls.use(settings)

    @server.feature(types.SHUTDOWN)
    @guarded("shutdown")
    def shutdown(ls: ClperfServer, params: None) -> None:
        ls.shutdown_requested = True

    @server.feature(types.EXIT)
    def exit_(ls: ClperfServer, params: None) -> None:
        ls.exit_now()

    @server.feature(types.INITIALIZED)
    @guarded("initialized")
    async def initialized(ls: ClperfServer, params: types.InitializedParams) -> None:
        ls.action_pool.submit(engine.warm_up)
        for p in ls.pending_problems:
            ls.window_show_message(types.ShowMessageParams(types.MessageType.Warning, f"clperf: {p}"))
        try:
            await ls.fetch_settings()
        finally:
            ls.settings_arrived()

    @server.feature(types.WORKSPACE_DID_CHANGE_CONFIGURATION)
    @guarded("didChangeConfiguration")
    async def changed_configuration(ls: ClperfServer, params: types.DidChangeConfigurationParams) -> None:
        if ls.supports("workspace", "configuration"):
            await ls.fetch_settings()
        elif isinstance(params.settings, dict) and ls.apply_settings(params.settings.get(SECTION)):
            ls.reanalyze_all()

    @server.feature(types.TEXT_DOCUMENT_DID_OPEN)
    @guarded("didOpen")
    def did_open(ls: ClperfServer, params: types.DidOpenTextDocumentParams) -> None:
        doc = ls.document(params.text_document.uri)
        if doc is not None:
            ls.kernels(doc)
            ls.analyze(doc.uri)

    @server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
    @guarded("didChange")
    def did_change(ls: ClperfServer, params: types.DidChangeTextDocumentParams) -> None:
        ls.parse_soon(params.text_document.uri)  # the cheap parse: views follow the text between saves

    @server.feature(types.TEXT_DOCUMENT_DID_SAVE, types.SaveOptions(include_text=False))
    @guarded("didSave")
    def did_save(ls: ClperfServer, params: types.DidSaveTextDocumentParams) -> None:
        ls.analyze(params.text_document.uri)

    @server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
    @guarded("didClose")
    def did_close(ls: ClperfServer, params: types.DidCloseTextDocumentParams) -> None:
        uri = params.text_document.uri
        ls.scheduler.forget(uri)
        ls.docs.drop(uri)
        ls._refines.pop(uri, None)
        ls.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri=uri, diagnostics=[]))


def _register_views(server: ClperfServer) -> None:
    @server.feature(types.TEXT_DOCUMENT_CODE_LENS)
    @guarded("codeLens", [])
    def code_lens(ls: ClperfServer, params: types.CodeLensParams) -> list[types.CodeLens]:
        doc = ls.document(params.text_document.uri)
        if doc is None or not ls.settings.features.code_lens:
            return []
        st = ls.docs.state(doc.uri)
        return [convert.code_lens(x) for x in lenses.kernel_lenses(doc.uri, ls.kernels(doc), st.analysis,
                                                                  st.measured, doc.lines)]

    @server.feature(types.TEXT_DOCUMENT_INLAY_HINT)
    @guarded("inlayHint", [])
    def inlay_hint(ls: ClperfServer, params: types.InlayHintParams) -> list[types.InlayHint]:
        doc = ls.document(params.text_document.uri)
        if doc is None or not ls.settings.features.inlay_hints:
            return []
        first, last = params.range.start.line + 1, params.range.end.line + 1
        found = hints.kernel_hints(ls.kernels(doc), ls.docs.state(doc.uri).analysis, doc.lines)
        units = convert.Units.of(doc)
        return [convert.inlay_hint(h, units) for h in found if first <= h.line <= last]

    @server.feature(types.TEXT_DOCUMENT_HOVER)
    @guarded("hover")
    def on_hover(ls: ClperfServer, params: types.HoverParams) -> types.Hover | None:
        doc = ls.document(params.text_document.uri)
        if doc is None or not ls.settings.features.hover:
            return None
        st = ls.docs.state(doc.uri)
        pos, units = params.position, convert.Units.of(doc)
        found = hover.hover_at(ls.kernels(doc), st.analysis, st.measured, doc.lines, pos.line + 1,
                               convert.column(pos, units))
        return convert.hover(found, units, ls.hover_style()) if found is not None else None

    @server.feature(types.TEXT_DOCUMENT_CODE_ACTION,
                    types.CodeActionOptions(code_action_kinds=[types.CodeActionKind.QuickFix]))
    @guarded("codeAction", [])
    async def code_action(ls: ClperfServer, params: types.CodeActionParams) -> list[types.CodeAction]:
        doc = ls.document(params.text_document.uri)
        if doc is None:
            return []
        uri, text, path = doc.uri, doc.source, to_fs_path(doc.uri) or ""
        units = convert.Units.of(doc)  # the lines the actions' character columns refer to
        problems = [convert.problem(d, units) for d in params.context.diagnostics]
        kernels, analysis = ls.kernels(doc), ls.docs.state(uri).analysis

        scenarios = {n: r.scenario for n, r in analysis.kernels.items() if r.scenario} if analysis else {}
        device = analysis.device if analysis is not None else None
        with_disabled = ls.supports("text_document", "code_action", "disabled_support")

        def build() -> list[Action]:
            ws = engine.workspace(ls.settings, ls.root_for(path))
            try:  # the current device (the analysis may be of the one before a change), with its peaks
                now = ls.targets.target(ls.settings.device)
            except ClperfError:
                now = device
            found = actions.rewrite_actions(problems, text, path, ws, now, scenarios, with_disabled)
            return found + actions.directive_actions(kernels, analysis, params.range.start.line + 1,
                                                     params.range.end.line + 1)

        found = await asyncio.get_running_loop().run_in_executor(ls.action_pool, build)
        return [convert.code_action(a, uri, units) for a in found]
