/**
 * Starting, stopping and restarting the language client. The server is `python -P -m clperf.server`
 * (python.ts: safe-path mode, outside the workspace); vscode-languageclient appends `--stdio`. The
 * extension runs only in trusted workspaces (package.json `untrustedWorkspaces`). Server commands
 * (clperf.benchmark, clperf.selectDevice) are registered in VS Code by the client itself from the
 * server's executeCommandProvider.
 *
 * Starts, stops and restarts run one after another (a restart asked for while the server is starting
 * waits for that start), so a burst of setting or interpreter changes cannot leave two servers running.
 */
import * as readline from "node:readline";
import * as vscode from "vscode";
import {
  ExecuteCommandRequest,
  LanguageClient,
  State,
  TransportKind,
  type LanguageClientOptions,
  type ServerOptions,
} from "vscode-languageclient/node";
import { currentTarget } from "./devices";
import { pipeServerStderr, TraceChannel, type Log } from "./logging";
import { showProgressAsNotifications } from "./progress";
import { findInterpreter, installAdvice, serverArgs, serverCwd, serverEnv, whyNotUsable } from "./python";
import { openPythonPathSetting, readSettings, SECTION } from "./settings";
import type { StatusBar } from "./statusBar";

export class ServerManager implements vscode.Disposable {
  private client: LanguageClient | undefined;
  private python: string | undefined; // the interpreter of the last start, usable or not
  private progress: vscode.Disposable | undefined;
  private queue: Promise<void> = Promise.resolve();
  private wanted = false; // start() was called: restarts apply from then on
  private replacing = false; // a restart is queued: the client being replaced is sent nothing more
  private refreshing = false;
  private refreshAgain = false;
  private shownTarget = ""; // the last target logged, so each change is logged once
  private readonly trace: TraceChannel;

  constructor(
    private readonly log: Log,
    private readonly status: StatusBar,
  ) {
    this.trace = new TraceChannel(log);
  }

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

  /** Starts the server unless it was started already (a failed start counts: restart() retries). */
  start(): Promise<void> {
    if (this.wanted) return this.queue;
    this.wanted = true;
    return this.serially(() => this.doStart());
  }

  /** Restarts a started server; `evenIfNotStarted` (the user's command) starts one that was not. */
  restart(why: string, evenIfNotStarted = false): Promise<void> {
    if (!this.wanted && !evenIfNotStarted) return Promise.resolve(); // the first start reads everything anew
    this.wanted = true;
    this.replacing = true;
    return this.serially(async () => {
      this.log.info(`restarting the clperf server: ${why}`);
      try {
        await this.doStop();
      } finally {
        this.replacing = false;
      }
      await this.doStart();
    });
  }

  stop(): Promise<void> {
    return this.serially(() => this.doStop());
  }

  /** Restarts when the Python extension's active interpreter, which the server runs on, is another now. */
  async interpreterChanged(): Promise<void> {
    const resource = vscode.window.activeTextEditor?.document.uri;
    if (!this.wanted || readSettings(resource).pythonPath) return; // clperf.pythonPath outranks it
    const python = await findInterpreter("", resource);
    if (python.path !== this.python) await this.restart(`the Python extension's interpreter is now ${python.path}`);
  }

  /**
   * Asks the server for its current device and shows it. Called after a start and whenever the server
   * has fetched its settings (so after every `clperf.device` change); calls that overlap run once more
   * after the running one rather than in parallel.
   */
  refreshTarget(): void {
    if (this.refreshing) {
      this.refreshAgain = true;
      return;
    }
    this.refreshing = true;
    void (async () => {
      try {
        do {
          this.refreshAgain = false;
          await this.showTarget();
        } while (this.refreshAgain);
      } finally {
        this.refreshing = false;
      }
    })();
  }

  private async showTarget(): Promise<void> {
    const client = this.client;
    if (client?.state !== State.Running) return;
    try {
      const target = await currentTarget(this);
      if (this.client !== client) return; // restarted meanwhile: that server answers for itself
      this.status.setTarget(target);
      const line = target.problem ?? `target device: ${target.device}`;
      if (line !== this.shownTarget) {
        if (target.problem !== undefined) this.log.warn(line);
        else this.log.info(line);
      }
      this.shownTarget = line;
    } catch (e) {
      this.log.warn(`cannot ask the server for its target device: ${String(e)}`);
    }
  }

  private serially(task: () => Promise<void>): Promise<void> {
    const run = this.queue.then(task);
    this.queue = run.catch((e: unknown) => this.log.error(String(e)));
    return run;
  }

  private async doStop(): Promise<void> {
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
    this.status.setTarget(undefined);
    this.status.setState("starting");
    const python = await findInterpreter(settings.pythonPath, resource);
    this.python = python.path;
    const version = python.version ? `, Python ${python.version}` : "";
    this.log.info(`python: ${python.path} (from ${python.source}${version})`);
    const why = await whyNotUsable(python.path);
    if (why !== undefined) {
      const advice = installAdvice(python.path, why);
      this.log.error(advice);
      this.status.setState("failed", why);
      void this.offerFix(advice);
      return;
    }

    const args = serverArgs(this.log.logLevel);
    const serverOptions: ServerOptions = {
      command: python.path,
      args,
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
      traceOutputChannel: this.trace,
      stdioOptions: {
        stdout: (input, log) => {
          readline.createInterface({ input, crlfDelay: Infinity, terminal: false }).on("line", (l) => log.info(l));
        },
        stderr: (input) => pipeServerStderr(input, this.log),
      },
      middleware: {
        workspace: {
          // The setting change that restarts the server would reach a client that is being stopped (an
          // error in the log): the new server reads every setting when it starts.
          didChangeConfiguration: (sections, next) => (this.replacing ? Promise.resolve() : next(sections)),
          configuration: async (params, token, next) => {
            const result = await next(params, token);
            // The server asks for its settings at start and after each change; once it has taken them
            // (after this answer), its current device may be another one.
            setTimeout(() => this.refreshTarget(), 0);
            return result;
          },
        },
      },
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
      this.log.info(`server started: ${python.path} ${args.join(" ")} --stdio (${info?.name ?? "?"} ${info?.version ?? ""})`);
      this.refreshTarget();
    } catch (e) {
      this.log.error(`the clperf server failed to start: ${String(e)}`);
      this.status.setState("failed", String(e));
      void this.offerFix(`The clperf server failed to start: ${String(e)}`);
    }
  }

  private async offerFix(message: string): Promise<void> {
    const setPath = "Set clperf.pythonPath";
    const output = "Show output";
    const choice = await vscode.window.showErrorMessage(message, setPath, output);
    if (choice === setPath) await openPythonPathSetting();
    else if (choice === output) this.log.show();
  }

  dispose(): void {
    void this.stop();
    this.trace.dispose();
  }
}
