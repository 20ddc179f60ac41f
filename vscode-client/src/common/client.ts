/**
 * Starting, stopping and restarting the language client. The server is `python -P -m clperf.server`
 * (python.ts: safe-path mode, outside the workspace); vscode-languageclient appends `--stdio`. The
 * extension runs only in trusted workspaces (package.json `untrustedWorkspaces`). Server commands (clperf.benchmark, clperf.selectDevice) are
 * registered in VS Code by the client itself from the server's executeCommandProvider.
 */
import * as vscode from "vscode";
import {
  ExecuteCommandRequest,
  LanguageClient,
  State,
  TransportKind,
  type LanguageClientOptions,
  type ServerOptions,
} from "vscode-languageclient/node";
import type { Log } from "./logging";
import { showProgressAsNotifications } from "./progress";
import { findInterpreter, installAdvice, SERVER_ARGS, serverCwd, serverEnv, whyNotUsable } from "./python";
import { readSettings, SECTION } from "./settings";
import type { StatusBar } from "./statusBar";
import type { DeviceChoice } from "./commands";

export class ServerManager implements vscode.Disposable {
  private client: LanguageClient | undefined;
  private progress: vscode.Disposable | undefined;
  private starting: Promise<void> | undefined;

  constructor(
    private readonly log: Log,
    private readonly status: StatusBar,
  ) {}

  /** The running client, or an error a person can act on. */
  running(): LanguageClient {
    if (this.client?.state !== State.Running) {
      throw new Error("the clperf server is not running (see 'clperf: Show output')");
    }
    return this.client;
  }

  /** Runs a server command (workspace/executeCommand) and returns its result. */
  async execute<T>(command: string, args: unknown[], token?: vscode.CancellationToken): Promise<T> {
    const client = this.running();
    return (await client.sendRequest(ExecuteCommandRequest.type, { command, arguments: args }, token)) as T;
  }

  start(): Promise<void> {
    this.starting ??= this.doStart().finally(() => (this.starting = undefined));
    return this.starting;
  }

  async restart(): Promise<void> {
    this.log.info("restarting the clperf server");
    await this.stop();
    await this.start();
  }

  async stop(): Promise<void> {
    const client = this.client;
    this.client = undefined;
    this.progress?.dispose();
    this.progress = undefined;
    if (client === undefined) return;
    try {
      await client.dispose(5000);
    } catch (e) {
      this.log.warn(`stopping the server: ${String(e)}`);
    }
    this.status.setState("stopped");
  }

  private async doStart(): Promise<void> {
    const resource = vscode.window.activeTextEditor?.document.uri;
    const settings = readSettings(resource);
    this.status.setDevice(settings.device);
    this.status.setState("starting");
    const python = await findInterpreter(settings.pythonPath, resource);
    this.log.info(`python: ${python.path} (from ${python.source})`);
    const why = await whyNotUsable(python.path);
    if (why !== undefined) {
      const advice = installAdvice(python.path, why);
      this.log.error(advice);
      this.status.setState("failed", why);
      void this.offerFix(advice);
      return;
    }

    const serverOptions: ServerOptions = {
      command: python.path,
      args: SERVER_ARGS,
      transport: TransportKind.stdio,
      options: { cwd: serverCwd(), env: serverEnv() },
    };
    const clientOptions: LanguageClientOptions = {
      documentSelector: [
        { scheme: "file", language: "opencl" },
        { scheme: "untitled", language: "opencl" },
      ],
      synchronize: { configurationSection: SECTION },
      initializationOptions: { [SECTION]: settings },
      outputChannel: this.log,
      traceOutputChannel: this.log,
    };
    const client = new LanguageClient("clperf", "clperf", serverOptions, clientOptions);
    client.onDidChangeState((e) => {
      const state = e.newState === State.Running ? "running" : e.newState === State.Starting ? "starting" : "stopped";
      this.log.info(`server state: ${state}`);
      this.status.setState(state, python.path);
    });
    this.client = client;
    try {
      await client.start();
      this.progress = showProgressAsNotifications(client, this.log);
      const info = client.initializeResult?.serverInfo;
      this.log.info(`server started: ${python.path} ${SERVER_ARGS.join(" ")} --stdio (${info?.name ?? "?"} ${info?.version ?? ""})`);
      void this.showTarget();
    } catch (e) {
      this.log.error(`the clperf server failed to start: ${String(e)}`);
      this.status.setState("failed", String(e));
      void this.offerFix(`The clperf server failed to start: ${String(e)}`);
    }
  }

  /** Asks the server which device estimates are for, so the status bar names it (not "default device"). */
  private async showTarget(): Promise<void> {
    try {
      const choices = await this.execute<DeviceChoice[] | null>("clperf.selectDevice", []);
      const current = choices?.find((c) => c.current);
      if (current !== undefined) this.status.setDevice(current.label);
    } catch (e) {
      this.log.warn(`cannot ask the server for its target device: ${String(e)}`);
    }
  }

  private async offerFix(message: string): Promise<void> {
    const setPath = "Set clperf.pythonPath";
    const output = "Show output";
    const choice = await vscode.window.showErrorMessage(message, setPath, output);
    if (choice === setPath) {
      // the User tab: clperf.pythonPath is a machine setting, which a workspace's settings cannot set
      await vscode.commands.executeCommand("workbench.action.openGlobalSettings", {
        query: `${SECTION}.pythonPath`,
      });
    } else if (choice === output) {
      this.log.show();
    }
  }

  dispose(): void {
    void this.stop();
  }
}
