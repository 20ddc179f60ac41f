/**
 * Which Python runs the server: the `clperf.pythonPath` setting, else the Python extension's active
 * interpreter, else `python3`. Before starting we check that `clperf.server` imports there, because a
 * language client that dies on start shows only "server crashed" — useless to someone who has not yet
 * installed clperf into that interpreter.
 */
import { execFile } from "node:child_process";
import * as vscode from "vscode";
import { lastLine } from "./logging";
import { expandPath } from "./settings";

export interface Interpreter {
  path: string;
  source: "setting" | "python extension" | "default";
}

/** The part of ms-python.python's exported API we use (declared here: it ships no types package). */
interface PythonApi {
  environments?: {
    getActiveEnvironmentPath(resource?: vscode.Uri): { path: string };
    resolveEnvironment(path: string): Promise<{ executable?: { uri?: vscode.Uri } } | undefined>;
  };
}

async function fromPythonExtension(resource?: vscode.Uri): Promise<string | undefined> {
  const ext = vscode.extensions.getExtension<PythonApi>("ms-python.python");
  if (!ext) return undefined;
  const api = ext.isActive ? ext.exports : await ext.activate();
  const envs = api.environments;
  if (!envs) return undefined;
  const active = envs.getActiveEnvironmentPath(resource);
  const resolved = await envs.resolveEnvironment(active.path);
  return resolved?.executable?.uri?.fsPath ?? active.path;
}

export async function findInterpreter(configured: string, resource?: vscode.Uri): Promise<Interpreter> {
  if (configured) return { path: expandPath(configured), source: "setting" };
  try {
    const path = await fromPythonExtension(resource);
    if (path) return { path, source: "python extension" };
  } catch {
    // The Python extension failing must not keep clperf from starting: fall back to python3.
  }
  return { path: "python3", source: "default" };
}

/**
 * How the server is started: `python -P -m clperf.server`. `-P` (and `PYTHONSAFEPATH`, which the
 * interpreters the server starts in turn inherit) keeps the working directory off `sys.path`, so a
 * `clperf/`, `pygls/` or `numpy/` folder in an opened project is never imported in place of the
 * installed packages. vscode-languageclient appends `--stdio`.
 */
export const SERVER_ARGS = ["-P", "-m", "clperf.server"];

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
