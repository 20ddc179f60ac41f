/**
 * Typed view of the `clperf.*` settings. The names mirror the server's (docs/server.md); the server reads
 * them itself through workspace/configuration, the client only needs the interpreter and the device.
 * `pythonPath`, `cacheDirectory` and `poclCode` are machine settings (package.json): VS Code returns only
 * the user's (or remote) value, never one from a workspace's settings.
 *
 * The server asks for the `clperf` section with no scope URI, so what it reads is the window's value
 * (workspace over user), never a folder's: `clperf.device` is a window setting (package.json), read and
 * written at that level here.
 */
import * as vscode from "vscode";

export const SECTION = "clperf";

export interface Features {
  codeLens: boolean;
  inlayHints: boolean;
  diagnostics: boolean;
  hover: boolean;
}

export interface Settings {
  pythonPath: string;
  device: string;
  buildOptions: string;
  defaultScenario: string;
  cacheDirectory: string;
  docsBaseUrl: string;
  benchmarkPolicy: string;
  benchmarkTimeout: number;
  poclCode: boolean;
  features: Features;
}

export function readSettings(scope?: vscode.ConfigurationScope): Settings {
  const c = vscode.workspace.getConfiguration(SECTION, scope);
  return {
    pythonPath: c.get<string>("pythonPath", "").trim(),
    device: c.get<string>("device", "").trim(),
    buildOptions: c.get<string>("buildOptions", ""),
    defaultScenario: c.get<string>("defaultScenario", ""),
    cacheDirectory: c.get<string>("cacheDirectory", "").trim(),
    docsBaseUrl: c.get<string>("docsBaseUrl", "").trim(),
    benchmarkPolicy: c.get<string>("benchmarkPolicy", "interactive"),
    benchmarkTimeout: c.get<number>("benchmarkTimeout", 60),
    poclCode: c.get<boolean>("poclCode", false),
    features: {
      codeLens: c.get<boolean>("features.codeLens", true),
      inlayHints: c.get<boolean>("features.inlayHints", true),
      diagnostics: c.get<boolean>("features.diagnostics", true),
      hover: c.get<boolean>("features.hover", true),
    },
  };
}

/**
 * The setting whose change needs a restart, if any: those that decide which process runs and what it
 * writes; the server picks up the others itself.
 */
export function needsRestart(e: vscode.ConfigurationChangeEvent): string | undefined {
  return [`${SECTION}.pythonPath`, `${SECTION}.cacheDirectory`].find((name) => e.affectsConfiguration(name));
}

/** `clperf.device` as the server reads it (the window's value, see above). */
export function deviceSetting(): string {
  return vscode.workspace.getConfiguration(SECTION).get<string>("device", "").trim();
}

/**
 * Makes `device` the current device (undefined: the server's default) by writing `clperf.device`, the one
 * place the server takes it from: in the workspace's settings when a folder or workspace is open (a
 * choice per project), else in the user's.
 */
export async function writeDeviceSetting(device: string | undefined): Promise<vscode.ConfigurationTarget> {
  const target =
    vscode.workspace.workspaceFolders?.length ? vscode.ConfigurationTarget.Workspace : vscode.ConfigurationTarget.Global;
  await vscode.workspace.getConfiguration(SECTION).update("device", device, target);
  return target;
}

/** `${workspaceFolder}` and `~` in a path setting, as users write them in settings.json. */
export function expandPath(value: string): string {
  const folder = vscode.workspace.workspaceFolders?.[0]?.uri.fsPath ?? "";
  const home = process.env["HOME"] ?? "";
  return value.replace(/\$\{workspaceFolder\}/g, folder).replace(/^~(?=\/|$)/, home);
}

/**
 * Opens the Settings editor on `clperf.pythonPath`, in the tab where a machine setting can be edited: the
 * User tab in a local window, the Remote tab in a remote one (SSH, WSL, containers, code-server), whose
 * User tab leaves machine settings out and would show "No Settings Found".
 */
export async function openPythonPathSetting(): Promise<void> {
  const query = `@id:${SECTION}.pythonPath`;
  const command =
    vscode.env.remoteName !== undefined ? "workbench.action.openRemoteSettings" : "workbench.action.openGlobalSettings";
  await vscode.commands.executeCommand(command, { query });
}
