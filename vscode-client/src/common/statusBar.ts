/**
 * The status bar item: the device the server estimates for and the server's state at a glance; a click
 * picks another device. The device shown is always the one the server reported as current (devices.ts);
 * a `clperf.device` that matches nothing is a warning here, since every estimate then falls back.
 */
import * as vscode from "vscode";
import type { Target } from "./devices";

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
  private detail = "";
  private target: Target | undefined;

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

  /** The server's answer; undefined while it is not known (the server not asked yet, or restarting). */
  setTarget(target: Target | undefined): void {
    this.target = target;
    this.render();
  }

  private render(): void {
    const problem = this.target?.problem;
    const waiting = this.state === "starting" || this.state === "running";
    const device = this.target?.device ?? (problem !== undefined ? "no device" : waiting ? "…" : "not running");
    const failed = this.state === "failed";
    const icon = !failed && this.state === "running" && problem !== undefined ? "$(warning)" : ICON[this.state];
    this.item.text = `${icon} clperf: ${device}`;
    const tip = new vscode.MarkdownString(undefined, true);
    tip.appendMarkdown(`**clperf server:** ${this.state}${this.detail ? ` — ${this.detail}` : ""}\n\n`);
    tip.appendText(problem !== undefined ? `Target device: none — ${problem}` : `Target device: ${device}`);
    tip.appendMarkdown("\n\nClick to select the target device.");
    this.item.tooltip = tip;
    this.item.backgroundColor = failed
      ? new vscode.ThemeColor("statusBarItem.errorBackground")
      : problem !== undefined
        ? new vscode.ThemeColor("statusBarItem.warningBackground")
        : undefined;
  }

  dispose(): void {
    this.item.dispose();
  }
}
