/**
 * Entry point: wires the pieces in common/ together and nothing else.
 */
import * as vscode from "vscode";
import { ServerManager } from "./common/client";
import { registerCommands } from "./common/commands";
import { createLog } from "./common/logging";
import { needsRestart } from "./common/settings";
import { StatusBar } from "./common/statusBar";

let server: ServerManager | undefined;

export async function activate(context: vscode.ExtensionContext): Promise<void> {
  const log = createLog();
  const status = new StatusBar();
  server = new ServerManager(log, status);
  const manager = server;
  context.subscriptions.push(
    log,
    status,
    manager,
    registerCommands(manager, status, log),
    vscode.workspace.onDidChangeConfiguration((e) => {
      if (needsRestart(e)) void manager.restart();
    }),
  );
  const meta = context.extension.packageJSON as { version?: string };
  log.info(`clperf ${meta.version ?? "?"} activating`);
  await manager.start();
}

export async function deactivate(): Promise<void> {
  await server?.stop();
}
