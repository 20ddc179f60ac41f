/**
 * The status bar item: target device and server state at a glance; a click picks another device.
 */
import * as vscode from "vscode";

export type ServerState = "starting" | "running" | "stopped" | "failed";

const ICON: Record<ServerState, string> = {
  starting: "$(sync~spin)",
  running: "$(dashboard)",
  stopped: "$(circle-slash)",
  failed: "$(error)",
};

export class StatusBar implements vscode.Disposable {
  private readonly item = vscode.window.createStatusBarItem("clperf.status", vscode.StatusBarAlignment.Left, 50);
  private state: ServerState = "stopped";
  private device = "";
  private detail = "";

  constructor() {
    this.item.name = "clperf";
    this.item.command = "clperf.chooseDevice";
    this.render();
    this.item.show();
  }

  setState(state: ServerState, detail = ""): void {
    this.state = state;
    this.detail = detail;
    this.render();
  }

  setDevice(device: string): void {
    this.device = device;
    this.render();
  }

  private render(): void {
    const device = this.device || "default device";
    this.item.text = `${ICON[this.state]} clperf: ${device}`;
    const tip = new vscode.MarkdownString(undefined, true);
    tip.appendMarkdown(`**clperf server:** ${this.state}${this.detail ? ` — ${this.detail}` : ""}\n\n`);
    tip.appendMarkdown(`**Target device:** ${device}\n\nClick to select the target device.`);
    this.item.tooltip = tip;
    this.item.backgroundColor =
      this.state === "failed" ? new vscode.ThemeColor("statusBarItem.errorBackground") : undefined;
  }

  dispose(): void {
    this.item.dispose();
  }
}
