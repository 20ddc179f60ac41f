/**
 * The client-side commands. Benchmarks and device selection go to the server's own commands
 * (`clperf.benchmark`, `clperf.selectDevice`); these add what only the editor knows: which kernel the
 * cursor is in, and a quick pick of devices.
 */
import * as vscode from "vscode";
import type { ServerManager } from "./client";
import { kernelAt, kernelsIn } from "./kernels";
import type { Log } from "./logging";
import type { StatusBar } from "./statusBar";

interface DeviceChoice {
  name: string;
  platform?: string;
}

function openclEditor(): vscode.TextEditor {
  const editor = vscode.window.activeTextEditor;
  if (editor?.document.languageId !== "opencl") {
    throw new Error("open an OpenCL (.cl) file first");
  }
  return editor;
}

/** A one-line summary of whatever the server's benchmark command returned. */
function summary(result: unknown): string | undefined {
  if (typeof result === "string") return result;
  if (result && typeof result === "object" && "message" in result && typeof result.message === "string") {
    return result.message;
  }
  return undefined;
}

async function benchmark(server: ServerManager, log: Log, uri: vscode.Uri, kernel?: string): Promise<void> {
  const what = kernel ?? "all kernels";
  log.info(`benchmark ${what} in ${uri.toString()}`);
  const args: unknown[] = kernel ? [uri.toString(), kernel] : [uri.toString()];
  const result = await server.execute<unknown>("clperf.benchmark", args);
  const text = summary(result);
  log.info(`benchmark ${what}: ${text ?? JSON.stringify(result)}`);
  if (text) void vscode.window.showInformationMessage(`clperf: ${text}`);
}

async function benchmarkKernel(server: ServerManager, log: Log): Promise<void> {
  const editor = openclEditor();
  const text = editor.document.getText();
  let kernel = kernelAt(text, editor.selection.active.line)?.name;
  if (kernel === undefined) {
    const names = kernelsIn(text).map((k) => k.name);
    if (names.length === 0) throw new Error("no __kernel function in this file");
    kernel = await vscode.window.showQuickPick(names, { title: "Benchmark which kernel?" });
    if (kernel === undefined) return;
  }
  await benchmark(server, log, editor.document.uri, kernel);
}

async function chooseDevice(server: ServerManager, status: StatusBar, log: Log): Promise<void> {
  const devices = await server.execute<DeviceChoice[] | null>("clperf.selectDevice", []);
  if (!devices?.length) throw new Error("the server found no OpenCL device or device profile");
  const items = devices.map((d) => ({ label: d.name, description: d.platform ?? "", device: d }));
  const pick = await vscode.window.showQuickPick(items, {
    title: "clperf: target device",
    placeHolder: "Estimates and benchmarks will use this device",
    matchOnDescription: true,
  });
  if (pick === undefined) return;
  await server.execute<unknown>("clperf.selectDevice", [pick.device.name]);
  status.setDevice(pick.device.name);
  log.info(`target device: ${pick.device.name} (${pick.device.platform ?? "?"})`);
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

export function registerCommands(server: ServerManager, status: StatusBar, log: Log): vscode.Disposable {
  const reg = (id: string, run: () => Promise<void>): vscode.Disposable =>
    vscode.commands.registerCommand(`clperf.${id}`, guarded(log, id, run));
  return vscode.Disposable.from(
    reg("benchmarkKernel", () => benchmarkKernel(server, log)),
    reg("benchmarkFile", () => benchmark(server, log, openclEditor().document.uri)),
    reg("chooseDevice", () => chooseDevice(server, status, log)),
    reg("restartServer", () => server.restart()),
    reg("showOutput", () => Promise.resolve(log.show())),
  );
}
