/**
 * Typed view of the `clperf.*` settings. The names mirror the server's (docs/server.md); the server reads
 * them itself through workspace/configuration, the client only needs the interpreter and the device.
 * `pythonPath`, `cacheDirectory` and `poclCode` are machine settings (package.json): VS Code returns only
 * the user's (or remote) value, never one from a workspace's settings.
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

/** Settings that decide which process runs; a change needs a restart, the others the server picks up. */
export function needsRestart(e: vscode.ConfigurationChangeEvent): boolean {
  return e.affectsConfiguration(`${SECTION}.pythonPath`) || e.affectsConfiguration(`${SECTION}.cacheDirectory`);
}

/** `${workspaceFolder}` and `~` in a path setting, as users write them in settings.json. */
export function expandPath(value: string): string {
  const folder = vscode.workspace.workspaceFolders?.[0]?.uri.fsPath ?? "";
  const home = process.env["HOME"] ?? "";
  return value.replace(/\$\{workspaceFolder\}/g, folder).replace(/^~(?=\/|$)/, home);
}
