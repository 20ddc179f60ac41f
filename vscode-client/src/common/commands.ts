/**
 * The client-side commands. Benchmarks go to the server's own `clperf.benchmark` (docs/server.md), with
 * what only the editor knows: where the cursor is. Device choice is devices.ts. Progress and cancellation
 * come from the server's work-done progress (progress.ts).
 */
import * as vscode from "vscode";
import type { ServerManager } from "./client";
import { chooseDevice } from "./devices";
import type { Log } from "./logging";

/** One kernel's outcome from `clperf.benchmark`. */
interface Outcome {
  kernel: string;
  status: string;
  error?: string | null;
  median_ms?: number | null;
  repetitions?: number | null;
  device?: string | null;
  estimate_ms?: number | null;
  not_stored?: string | null;
  summary?: string; // the server's line, with its unit formatter (20.6 µs, as the lenses write it)
}

function openclEditor(): vscode.TextEditor {
  const editor = vscode.window.activeTextEditor;
  if (editor?.document.languageId !== "opencl") {
    throw new Error("open an OpenCL (.cl) file first");
  }
  return editor;
}

function describe(o: Outcome): string {
  if (o.summary) return o.summary;
  if (o.status !== "ok" || o.median_ms == null) return `${o.kernel}: ${o.status}${o.error ? ` (${o.error})` : ""}`;
  const est = o.estimate_ms != null ? `, est. ${o.estimate_ms.toPrecision(3)} ms` : "";
  const kept = o.not_stored ? ` — measurement not stored: ${o.not_stored}` : "";
  return `${o.kernel}: ${o.median_ms.toPrecision(3)} ms (median of ${o.repetitions ?? "?"}${est}) on ${o.device ?? "?"}${kept}`;
}

type Target = { uri: string; kernel?: string; line?: number };

async function benchmark(server: ServerManager, log: Log, target: Target): Promise<void> {
  // The server benchmarks the text it has; saving first keeps what was measured equal to what is on disk.
  const doc = vscode.workspace.textDocuments.find((d) => d.uri.toString() === target.uri);
  if (doc?.isDirty) await doc.save();
  log.info(`benchmark ${JSON.stringify(target)}`);
  const result = await server.execute<Outcome[] | { error: string }>("clperf.benchmark", [target]);
  if (!Array.isArray(result)) throw new Error(result.error);
  const lines = result.map(describe);
  lines.forEach((l) => log.info(`benchmark ${l}`));
  const failed = result.filter((o) => o.status !== "ok" || o.not_stored);
  const show = failed.length ? vscode.window.showWarningMessage : vscode.window.showInformationMessage;
  void show(`clperf benchmark — ${lines.join("; ")}`);
}

/** Wraps a command so that a failure is shown to the user and logged, not swallowed by VS Code. */
function guarded(log: Log, name: string, run: () => Promise<void>): () => Promise<void> {
  return async () => {
    try {
      await run();
    } catch (e) {
      const message = e instanceof Error ? e.message : String(e);
      log.error(`${name}: ${message}`);
      void vscode.window.showErrorMessage(`clperf ${name}: ${message}`);
    }
  };
}

export function registerCommands(server: ServerManager, log: Log): vscode.Disposable {
  const reg = (id: string, run: () => Promise<void>): vscode.Disposable =>
    vscode.commands.registerCommand(`clperf.${id}`, guarded(log, id, run));
  return vscode.Disposable.from(
    reg("benchmarkKernel", () => {
      const e = openclEditor();
      return benchmark(server, log, { uri: e.document.uri.toString(), line: e.selection.active.line });
    }),
    reg("benchmarkFile", () => benchmark(server, log, { uri: openclEditor().document.uri.toString() })),
    reg("chooseDevice", async () => {
      await server.start(); // run from the palette before any OpenCL file was opened
      await chooseDevice(server, log);
    }),
    reg("restartServer", () => server.restart("asked for", true)),
    reg("showOutput", () => Promise.resolve(log.show())),
  );
}
