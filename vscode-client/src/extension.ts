/**
 * Entry point: wires the pieces in common/ together and nothing else. The extension activates for OpenCL
 * documents (package.json); the server starts once one is open, or when a command needs it.
 */
import * as vscode from "vscode";
import { ServerManager } from "./common/client";
import { registerCommands } from "./common/commands";
import { createLog } from "./common/logging";
import { onDidChangeInterpreter } from "./common/python";
import { needsRestart } from "./common/settings";
import { StatusBar } from "./common/statusBar";

let server: ServerManager | undefined;

const isOpencl = (d: vscode.TextDocument): boolean => d.languageId === "opencl";

export async function activate(context: vscode.ExtensionContext): Promise<void> {
  const log = createLog();
  const status = new StatusBar();
  server = new ServerManager(log, status);
  const manager = server;
  const meta = context.extension.packageJSON as { version?: string };
  log.info(`clperf ${meta.version ?? "?"} activating`);
  context.subscriptions.push(
    log,
    status,
    manager,
    registerCommands(manager, log),
    vscode.workspace.onDidChangeConfiguration((e) => {
      const why = needsRestart(e);
      if (why !== undefined) void manager.restart(`${why} changed`);
    }),
  );
  // not awaited: activating the Python extension must not hold up clperf's own start
  void onDidChangeInterpreter(() => void manager.interpreterChanged()).then((d) => context.subscriptions.push(d));
  if (vscode.workspace.textDocuments.some(isOpencl)) {
    await manager.start();
  } else {
    // activated by a command: start with the first OpenCL document (or when that command needs it)
    const opened = vscode.workspace.onDidOpenTextDocument((d) => {
      if (!isOpencl(d)) return;
      opened.dispose();
      void manager.start();
    });
    context.subscriptions.push(opened);
  }
}

export async function deactivate(): Promise<void> {
  await server?.stop();
}
