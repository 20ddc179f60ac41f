/**
 * One output channel, "clperf", for the extension and the language client together, so a user who clicks
 * "Show output" sees our messages, the server's log and (with `clperf.trace.server`) the LSP traffic in
 * the order they happened. A LogOutputChannel also lands in VS Code's log folder, which is what the
 * end-to-end test reads to know the server started.
 *
 * The server's log reaches the channel two ways, each with its level: `window/logMessage` (handled by
 * vscode-languageclient) and stderr, whose lines are Python logging records
 * (`<date> <time>,<ms> LEVEL name: message`) that `pipeServerStderr` files under their own level instead of
 * vscode-languageclient's default, which writes every stderr line as an error.
 */
import * as readline from "node:readline";
import type { Readable } from "node:stream";
import * as vscode from "vscode";

export type Log = vscode.LogOutputChannel;

export function createLog(): Log {
  return vscode.window.createOutputChannel("clperf", { log: true });
}

/** Last non-empty line of a process's stderr: usually the exception, which is what a person needs. */
export function lastLine(text: string): string {
  const lines = text.split(/\r?\n/).map((l) => l.trim()).filter((l) => l.length > 0);
  return lines[lines.length - 1] ?? "";
}

type Level = "debug" | "info" | "warn" | "error";

const PYTHON_LEVELS: Record<string, Level> = {
  DEBUG: "debug",
  INFO: "info",
  WARNING: "warn",
  ERROR: "error",
  CRITICAL: "error",
};

/** The format server/cli.py gives Python logging: `%(asctime)s %(levelname)s %(name)s: %(message)s`. */
const RECORD = /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3} (DEBUG|INFO|WARNING|ERROR|CRITICAL) (.*)$/;

/**
 * The level and text of one stderr line. A record's continuation lines (a multi-line message, the
 * traceback of `exc_info`) keep its level; an uncaught exception's traceback, or output before the first
 * record (the interpreter failing to start), is an error. The channel adds its own time stamp.
 */
export function classify(line: string, previous: Level): [Level, string] {
  const m = RECORD.exec(line);
  if (m) return [PYTHON_LEVELS[m[1] ?? ""] ?? "error", m[2] ?? ""];
  if (line.startsWith("Traceback (most recent call last):")) return ["error", line];
  return [previous, line];
}

/** vscode-languageclient's `stdioOptions.stderr`: the server's stderr, line by line, at its own level. */
export function pipeServerStderr(input: Readable, log: Log): void {
  let level: Level = "error";
  const lines = readline.createInterface({ input, crlfDelay: Infinity, terminal: false, historySize: 0 });
  lines.on("line", (line) => {
    const [lvl, text] = classify(line, level);
    level = lvl;
    log[lvl](text);
  });
}

const TRACE_SETTING = "clperf.trace.server";

/**
 * The language client's `traceOutputChannel`: the clperf channel, with the log level the client reads to
 * decide whether to trace. vscode-languageclient traces only when that channel's level is Trace (and then
 * at least "messages", whatever `clperf.trace.server` says), and writes with `trace()`, which the channel
 * hides below level Trace. So `clperf.trace.server` alone would show nothing; here it is what turns the
 * trace on (setting the channel's level to Trace does too), and its lines are written where they show.
 */
export class TraceChannel implements vscode.LogOutputChannel {
  private readonly changed = new vscode.EventEmitter<vscode.LogLevel>();
  readonly onDidChangeLogLevel = this.changed.event;
  private readonly subscriptions: vscode.Disposable[];

  constructor(private readonly log: Log) {
    this.subscriptions = [
      this.changed,
      log.onDidChangeLogLevel(() => this.changed.fire(this.logLevel)),
      vscode.workspace.onDidChangeConfiguration((e) => {
        if (e.affectsConfiguration(TRACE_SETTING)) this.changed.fire(this.logLevel);
      }),
    ];
  }

  private static requested(): boolean {
    return vscode.workspace.getConfiguration().get<string>(TRACE_SETTING, "off") !== "off";
  }

  get logLevel(): vscode.LogLevel {
    return TraceChannel.requested() ? vscode.LogLevel.Trace : this.log.logLevel;
  }

  get name(): string {
    return this.log.name;
  }

  trace(message: string, ...args: unknown[]): void {
    // below level Trace the channel hides trace(): write where the user who asked for it sees it
    if (this.log.logLevel === vscode.LogLevel.Trace) this.log.trace(message, ...args);
    else if (TraceChannel.requested()) this.log.info(message, ...args);
  }

  debug(message: string, ...args: unknown[]): void {
    this.log.debug(message, ...args);
  }

  info(message: string, ...args: unknown[]): void {
    this.log.info(message, ...args);
  }

  warn(message: string, ...args: unknown[]): void {
    this.log.warn(message, ...args);
  }

  error(error: string | Error, ...args: unknown[]): void {
    this.log.error(error, ...args);
  }

  append(value: string): void {
    this.log.append(value);
  }

  appendLine(value: string): void {
    this.log.appendLine(value);
  }

  replace(value: string): void {
    this.log.replace(value);
  }

  clear(): void {
    this.log.clear();
  }

  show(columnOrPreserveFocus?: vscode.ViewColumn | boolean, preserveFocus?: boolean): void {
    if (typeof columnOrPreserveFocus === "boolean") this.log.show(columnOrPreserveFocus);
    else this.log.show(columnOrPreserveFocus, preserveFocus);
  }

  hide(): void {
    this.log.hide();
  }

  /** Stops listening; the clperf channel itself belongs to the extension. */
  dispose(): void {
    for (const s of this.subscriptions) s.dispose();
  }
}
