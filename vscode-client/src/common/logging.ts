/**
 * One output channel for the extension and the language client together, so a user who clicks
 * "Show output" sees our messages, the server's stderr and (with clperf.trace.server) the LSP traffic in
 * the order they happened. A LogOutputChannel also lands in VS Code's log folder, which is what the
 * end-to-end test reads to know the server started.
 */
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
