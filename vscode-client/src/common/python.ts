/**
 * Which Python runs the server: the `clperf.pythonPath` setting, else the Python extension's active
 * interpreter (through `@vscode/python-extension`, as vscode-python-tools-extension-template does), else
 * `python3`. Before starting we check that `clperf.server` imports there, because a language client that
 * dies on start shows only "server crashed" — useless to someone who has not yet installed clperf into
 * that interpreter.
 *
 * A workspace cannot choose the interpreter through `clperf.pythonPath` (a machine setting); the Python
 * extension's choice may come from the workspace, which is why the extension runs only in trusted
 * workspaces (package.json `untrustedWorkspaces`).
 */
import { execFile } from "node:child_process";
import { PVSC_EXTENSION_ID, PythonExtension } from "@vscode/python-extension";
import * as vscode from "vscode";
import { lastLine } from "./logging";
import { expandPath } from "./settings";

export interface Interpreter {
  path: string;
  source: "setting" | "python extension" | "default";
  version?: string;
}

/** The Python extension's API, or undefined when it is not installed (or disabled). */
async function pythonExtension(): Promise<PythonExtension | undefined> {
  if (vscode.extensions.getExtension(PVSC_EXTENSION_ID) === undefined) return undefined;
  return PythonExtension.api();
}

async function fromPythonExtension(resource?: vscode.Uri): Promise<Omit<Interpreter, "source"> | undefined> {
  const envs = (await pythonExtension())?.environments;
  if (envs === undefined) return undefined;
  const active = envs.getActiveEnvironmentPath(resource);
  const resolved = await envs.resolveEnvironment(active);
  const path = resolved?.executable.uri?.fsPath ?? active.path;
  const v = resolved?.version;
  return { path, version: v ? `${v.major}.${v.minor}.${v.micro}` : undefined };
}

export async function findInterpreter(configured: string, resource?: vscode.Uri): Promise<Interpreter> {
  if (configured) return { path: expandPath(configured), source: "setting" };
  try {
    const found = await fromPythonExtension(resource);
    if (found?.path) return { ...found, source: "python extension" };
  } catch {
    // The Python extension failing must not keep clperf from starting: fall back to python3.
  }
  return { path: "python3", source: "default" };
}

/**
 * Calls `listener` when the user picks another interpreter in the Python extension. Without the
 * extension there is nothing to watch: `clperf.pythonPath` changes arrive as configuration changes.
 */
export async function onDidChangeInterpreter(listener: () => void): Promise<vscode.Disposable> {
  try {
    const envs = (await pythonExtension())?.environments;
    if (envs !== undefined) return envs.onDidChangeActiveEnvironmentPath(() => listener());
  } catch {
    // as in findInterpreter: no Python extension API, no event
  }
  return new vscode.Disposable(() => undefined);
}

/**
 * How the server is started: `python -P -m clperf.server`. `-P` (and `PYTHONSAFEPATH`, which the
 * interpreters the server starts in turn inherit) keeps the working directory off `sys.path`, so a
 * `clperf/`, `pygls/` or `numpy/` folder in an opened project is never imported in place of the
 * installed packages. vscode-languageclient appends `--stdio`.
 */
export const SERVER_ARGS = ["-P", "-m", "clperf.server"];

/** The server's own log level (`--log-level`), from the output channel's: the channel shows no more. */
export function serverArgs(level: vscode.LogLevel): string[] {
  const name =
    level === vscode.LogLevel.Trace || level === vscode.LogLevel.Debug
      ? "DEBUG"
      : level === vscode.LogLevel.Info
        ? "INFO"
        : level === vscode.LogLevel.Warning
          ? "WARNING"
          : "ERROR";
  return [...SERVER_ARGS, "--log-level", name];
}

/** The server's (and the import check's) environment: the editor's, in safe-path mode. */
export function serverEnv(): NodeJS.ProcessEnv {
  return { ...process.env, PYTHONSAFEPATH: "1", PYTHONUNBUFFERED: "1" };
}

/**
 * Where the server runs (and the import check, so both see the same `sys.path`): the extension's own
 * folder, which holds no Python code, never the workspace (a second guard beside `-P`). The server
 * resolves documents by URI, so it needs no particular working directory.
 */
export function serverCwd(): string {
  return __dirname;
}

/** Undefined when `import clperf.server` works with `python`, else why not, in one line. */
export function whyNotUsable(python: string): Promise<string | undefined> {
  return new Promise((resolve) => {
    const options = { timeout: 60_000, cwd: serverCwd(), env: serverEnv() };
    execFile(python, ["-P", "-c", "import clperf.server"], options, (error, _stdout, stderr) => {
      if (!error) return resolve(undefined);
      const code = (error as NodeJS.ErrnoException).code;
      if (code === "ENOENT") return resolve(`the interpreter '${python}' was not found`);
      if (stderr.includes("Unknown option: -P")) return resolve(`'${python}' is older than Python 3.11`);
      resolve(lastLine(stderr) || error.message);
    });
  });
}

/** What to tell a user whose interpreter cannot import clperf: the exact commands that fix it. */
export function installAdvice(python: string, why: string): string {
  return (
    `clperf cannot start: ${why}. Install clperf into that interpreter: ` +
    `'${python} -m pip install -e <path to the clperf checkout>' (or run 'scripts/setup.sh' in the checkout ` +
    `and set clperf.pythonPath to its '.venv/bin/python').`
  );
}
