/**
 * Server work-done progress as cancellable notifications. vscode-languageclient shows server progress in
 * the status bar, where it cannot be cancelled; a benchmark runs for seconds to minutes, so the user must
 * see it and be able to stop it. We take over `window/workDoneProgress/create` and render each token with
 * `window.withProgress` in the notification area; Cancel sends `window/workDoneProgress/cancel`.
 */
import * as vscode from "vscode";
import {
  WorkDoneProgress,
  WorkDoneProgressCancelNotification,
  WorkDoneProgressCreateRequest,
  type LanguageClient,
  type ProgressToken,
  type WorkDoneProgressBegin,
  type WorkDoneProgressEnd,
  type WorkDoneProgressReport,
} from "vscode-languageclient/node";
import type { Log } from "./logging";

type Value = WorkDoneProgressBegin | WorkDoneProgressReport | WorkDoneProgressEnd;

/** One server progress token shown as one notification, from `begin` to `end`. */
class Notification {
  private report: ((v: { message?: string; increment?: number }) => void) | undefined;
  private done: (() => void) | undefined;
  private last = 0;
  private title = "clperf";

  constructor(
    private readonly client: LanguageClient,
    private readonly token: ProgressToken,
    private readonly log: Log,
  ) {}

  on(v: Value): void {
    if (v.kind === "begin") this.begin(v);
    else if (v.kind === "report") this.step(v);
    else this.end(v);
  }

  private begin(v: WorkDoneProgressBegin): void {
    this.title = v.title;
    const options = { location: vscode.ProgressLocation.Notification, title: v.title, cancellable: v.cancellable ?? false };
    void vscode.window.withProgress(options, (progress, cancel) => {
      this.report = (r) => progress.report(r);
      this.step(v);
      cancel.onCancellationRequested(() => {
        this.log.info(`${this.title}: cancelled by the user`);
        void this.client.sendNotification(WorkDoneProgressCancelNotification.type, { token: this.token });
      });
      return new Promise<void>((resolve) => (this.done = resolve));
    });
  }

  private step(v: WorkDoneProgressBegin | WorkDoneProgressReport): void {
    const increment = v.percentage !== undefined ? v.percentage - this.last : undefined;
    if (v.percentage !== undefined) this.last = v.percentage;
    this.report?.({ message: v.message, increment });
  }

  private end(v: WorkDoneProgressEnd): void {
    if (v.message) this.log.info(`${this.title}: ${v.message}`);
    this.done?.();
  }
}

export function showProgressAsNotifications(client: LanguageClient, log: Log): vscode.Disposable {
  return client.onRequest(WorkDoneProgressCreateRequest.type, ({ token }) => {
    const note = new Notification(client, token, log);
    const sub = client.onProgress(WorkDoneProgress.type, token, (v: Value) => {
      note.on(v);
      if (v.kind === "end") sub.dispose();
    });
  });
}
