/**
 * The current device: the one `clperf.device` names, as the server resolves it. One source of truth: the
 * quick pick writes the setting (settings.ts), the server re-reads it through workspace/configuration,
 * and the status bar shows what the server then reports as current — never a name the client guessed.
 *
 * The server lists devices with `clperf.selectDevice` called without arguments (docs/server.md): local
 * OpenCL devices (`source: "discovered"`) and shipped profiles, the current target marked. With an
 * argument that command sets a server-side override that would outrank the setting; the client never
 * sends one.
 */
import * as vscode from "vscode";
import type { ServerManager } from "./client";
import type { Log } from "./logging";
import { deviceSetting, writeDeviceSetting } from "./settings";

/** One of `clperf.selectDevice`'s choices; `text` is what selects it. */
export interface DeviceChoice {
  label: string;
  text: string;
  type?: string;
  source?: string;
  platform?: string;
  current?: boolean;
}

/** What the status bar shows: the current device, or why there is none. */
export type Target = { device: string; problem?: undefined } | { device?: undefined; problem: string };

export async function listDevices(server: ServerManager): Promise<DeviceChoice[]> {
  return (await server.execute<DeviceChoice[] | null>("clperf.selectDevice", [])) ?? [];
}

/** The server's current device, or, when none is current, what is wrong (an unknown `clperf.device`). */
export async function currentTarget(server: ServerManager): Promise<Target> {
  const choices = await listDevices(server);
  const current = choices.find((c) => c.current);
  if (current !== undefined) return { device: current.label };
  const setting = deviceSetting();
  if (setting) return { problem: `clperf.device "${setting}" matches no device` };
  return { problem: "no OpenCL device and no device profile found" };
}

interface Item extends vscode.QuickPickItem {
  /** the setting's new value; undefined on separators; "" clears it (the server's default) */
  value?: string;
}

function item(c: DeviceChoice): Item {
  // A filter hides the separators and sorts by label, names that start with what was typed first: a
  // profile's label starts with "Profile:", so typing "pthread" puts the local PoCL device above a
  // shipped profile of the same name, and the filtered list still says which is which.
  const name = c.source === "profile" ? `Profile: ${c.text}` : c.label;
  return {
    label: `${c.current ? "$(check)" : "$(blank)"} ${name}`,
    description: [c.current ? "current" : "", c.type, c.platform].filter(Boolean).join(" · "),
    value: c.text,
  };
}

/** The quick pick: local devices, then shipped profiles, each group under its separator. */
export function pickItems(choices: DeviceChoice[], setting: string): Item[] {
  const local = choices.filter((c) => c.source !== "profile");
  const profiles = choices.filter((c) => c.source === "profile");
  const items: Item[] = [];
  if (local.length) {
    items.push({ label: "local devices", kind: vscode.QuickPickItemKind.Separator });
    items.push(...local.map(item));
  }
  if (profiles.length) {
    items.push({ label: "profiles: estimates only", kind: vscode.QuickPickItemKind.Separator });
    items.push(...profiles.map(item));
  }
  if (setting) {
    items.push({ label: "", kind: vscode.QuickPickItemKind.Separator });
    items.push({ label: "$(discard) Server default", description: `clear clperf.device ("${setting}")`, value: "" });
  }
  return items;
}

export async function chooseDevice(server: ServerManager, log: Log): Promise<void> {
  const choices = await listDevices(server);
  if (!choices.length) throw new Error("the server found no OpenCL device or device profile");
  const setting = deviceSetting();
  const pick = await vscode.window.showQuickPick(pickItems(choices, setting), {
    title: "clperf: target device",
    placeHolder: "Estimates use this device; benchmarks run on the matching local device",
    matchOnDescription: true,
  });
  if (pick?.value === undefined) return;
  const value = pick.value || undefined;
  if ((value ?? "") === setting) {
    server.refreshTarget(); // nothing changes, so no configuration round trip will refresh it
    return;
  }
  const target = await writeDeviceSetting(value);
  const where = target === vscode.ConfigurationTarget.Workspace ? "workspace" : "user";
  log.info(value ? `clperf.device = "${value}" (${where} settings)` : `clperf.device cleared (${where} settings)`);
  const now = deviceSetting();
  if (now !== (value ?? "")) {
    // cleared in the workspace while the user's settings still name a device: that one applies
    void vscode.window.showWarningMessage(`clperf.device is still "${now}": it is set in your user settings too.`);
  }
}
