/**
 * Which Python runs the server: the `clperf.pythonPath` setting, else the Python extension's active
 * interpreter, else `python3`. Before starting we check that `clperf.server` imports there, because a
 * language client that dies on start shows only "server crashed" — useless to someone who has not yet
 * installed clperf into that interpreter.
 */
import { execFile } from "node:child_process";
import { homedir } from "node:os";
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
 * Where the server runs (and the import check, so both see the same `sys.path`): the first workspace
 * folder, else the home folder. Never the editor's own working directory, where a `clperf/` source folder
 * could shadow or fake the installed package.
 */
export function serverCwd(): string {
  return vscode.workspace.workspaceFolders?.[0]?.uri.fsPath ?? homedir();
}

/** Undefined when `import clperf.server` works with `python`, else why not, in one line. */
export function whyNotUsable(python: string): Promise<string | undefined> {
  return new Promise((resolve) => {
    const options = { timeout: 60_000, cwd: serverCwd() };
    execFile(python, ["-c", "import clperf.server"], options, (error, _stdout, stderr) => {
      if (!error) return resolve(undefined);
      const code = (error as NodeJS.ErrnoException).code;
      if (code === "ENOENT") return resolve(`the interpreter '${python}' was not found`);
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
