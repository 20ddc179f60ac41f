// Drives a real VS Code (code-server) in Chromium through the clperf user story: open a kernel, see the
// server start, a finding, an estimate lens, the hover breakdown, apply the unroll quick fix, benchmark the
// kernel on the local OpenCL device and see the measured time. Called by test_vscode.py, which starts
// code-server and Chromium in their own process groups and kills them afterwards.
//
// usage: node drive.mjs CONFIG.json   (keys: playwright, cdp, url, file, fileName, userDataDir, artifacts,
//                                      kernelLine, kernelColumn, benchmarkMs, checks?: the names to run)
// Writes ARTIFACTS/results.json: {checks: {name: {ok, detail, screenshot}}, timings, log}.
import { createRequire } from "node:module";
import fs from "node:fs";
import path from "node:path";

const cfg = JSON.parse(fs.readFileSync(process.argv[2], "utf8"));
const { chromium } = createRequire(cfg.playwright)("playwright-core");
const started = Date.now();
const results = { checks: {}, timings: {}, notes: [] };
const shot = (page, name) => page.screenshot({ path: path.join(cfg.artifacts, name) }).then(() => name);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const save = () => fs.writeFileSync(path.join(cfg.artifacts, "results.json"), JSON.stringify(results, null, 2));

/** Polls `fn` until it returns a truthy value or `ms` pass; returns the value or throws `what`. */
async function until(what, ms, fn) {
  const end = Date.now() + ms;
  let last;
  while (Date.now() < end) {
    try {
      last = await fn();
      if (last) return last;
    } catch (e) {
      last = e;
    }
    await sleep(250);
  }
  throw new Error(`timed out after ${ms} ms waiting for ${what}${last ? ` (last: ${String(last).slice(0, 300)})` : ""}`);
}

async function check(name, page, run) {
  if (cfg.checks && !cfg.checks.includes(name)) return; // a run that asks for some checks only
  const t0 = Date.now();
  try {
    const { detail, screenshot } = await run();
    results.checks[name] = { ok: true, detail, screenshot };
  } catch (e) {
    let screenshot;
    try {
      screenshot = await shot(page, `fail-${name}.png`);
    } catch {
      screenshot = undefined;
    }
    results.checks[name] = { ok: false, detail: String(e?.stack ?? e).slice(0, 2000), screenshot };
  }
  results.timings[name] = Date.now() - t0;
  save();
}

/** Text of every file under `dir` whose path mentions clperf: the extension's log channel. */
function clperfLog(dir) {
  const out = [];
  const walk = (d) => {
    for (const e of fs.existsSync(d) ? fs.readdirSync(d, { withFileTypes: true }) : []) {
      const p = path.join(d, e.name);
      if (e.isDirectory()) walk(p);
      else if (/clperf/i.test(p) && p.endsWith(".log")) out.push(fs.readFileSync(p, "utf8"));
    }
  };
  walk(path.join(dir, "logs"));
  return out.join("\n");
}

/** Runs a command from the palette by its exact title (fuzzy matching may rank another one first). */
async function palette(page, title) {
  await page.keyboard.press("Escape");
  await page.keyboard.press("F1");
  const input = page.locator(".quick-input-widget input.input");
  await input.waitFor({ state: "visible", timeout: 10_000 });
  await input.fill(`>${title}`);
  const rows = page.locator(".quick-input-list .monaco-list-row");
  const labels = await until(`'${title}' in the command palette`, 10_000, async () => {
    const all = await rows.evaluateAll((els) => els.map((e) => e.querySelector(".label-name")?.textContent?.trim() ?? ""));
    return all.includes(title) ? all : undefined;
  });
  for (let i = 0; i < labels.indexOf(title); i++) await page.keyboard.press("ArrowDown");
  await page.keyboard.press("Enter");
}

async function goTo(page, line, column) {
  await page.keyboard.press("Escape");
  await page.keyboard.press("Control+G");
  const input = page.locator(".quick-input-widget input.input");
  await input.waitFor({ state: "visible", timeout: 10_000 });
  await input.fill(`:${line}:${column}`);
  await page.keyboard.press("Enter");
  await sleep(300);
}

/** Every code lens title on screen (one decoration per line holds that line's lenses, joined by " | " with
 * non-breaking spaces). */
const lensTexts = async (page) =>
  (await page.locator(".codelens-decoration").allTextContents())
    .flatMap((t) => t.replace(/\u00a0/g, " ").split(" | ")).map((t) => t.trim());

/** The device the status bar names (``clperf: NAME`` or ``clperf: NAME (profile)``). */
async function statusDevice(page) {
  const t = (await page.locator(".statusbar-item").filter({ hasText: "clperf:" }).first().textContent()) ?? "";
  return t.replace(/^\s*clperf:\s*/, "").replace(/\s*\(profile\)\s*$/, "").trim();
}

/** Whether `text` names `device`: in full, or cut to its first characters with "…" as lenses cut it. */
const names = (text, device) => text.includes(device) || text.includes(device.slice(0, 12));

/** Each kernel's lens line: its text, its length and whether it ends inside the editor's visible width. */
async function lensLines(page) {
  return page.locator(".codelens-decoration").evaluateAll((els) => els.map((e) => {
    const guard = e.closest(".overflow-guard")?.getBoundingClientRect();
    const scrollbar = e.closest(".monaco-editor")?.querySelector(".scrollbar.vertical")?.getBoundingClientRect();
    const limit = Math.min(guard?.right ?? Infinity, scrollbar?.left ?? Infinity);
    const spans = [...e.querySelectorAll("a, span")].map((a) => a.getBoundingClientRect().right);
    const right = Math.max(e.getBoundingClientRect().left, ...spans);
    return { text: e.textContent ?? "", chars: (e.textContent ?? "").length, right, limit, fits: right <= limit };
  }));
}

/** The visible hover's content height and width against its scrollable box: > box means a scrollbar. */
async function hoverOverflow(page) {
  return page.locator(".monaco-hover-content").filter({ visible: true }).first().evaluate((el) => {
    const box = el.closest(".monaco-scrollable-element") ?? el.parentElement;
    return { contentHeight: el.scrollHeight, boxHeight: box.clientHeight, contentWidth: el.scrollWidth,
             boxWidth: box.clientWidth };
  });
}

async function main() {
  const browser = await chromium.connectOverCDP(cfg.cdp);
  const context = browser.contexts()[0] ?? (await browser.newContext());
  const page = await context.newPage();
  await page.setViewportSize({ width: 1360, height: 900 });
  page.setDefaultTimeout(15_000);

  await check("activation", page, async () => {
    await page.goto(cfg.url, { waitUntil: "domcontentloaded", timeout: 60_000 });
    await page.locator(".monaco-workbench").waitFor({ timeout: 60_000 });
    await until("the explorer", 60_000, () => page.locator(".explorer-folders-view, .explorer-viewlet").count());
    await page.keyboard.press("Control+P");
    const input = page.locator(".quick-input-widget input.input");
    await input.waitFor({ state: "visible" });
    await input.fill(cfg.fileName);
    await page.locator(".quick-input-list .monaco-list-row").filter({ hasText: cfg.fileName }).first().waitFor();
    await page.keyboard.press("Enter");
    await page.locator(".monaco-editor .view-lines").first().waitFor();
    const log = await until("'server started' in the clperf log", 90_000, () => {
      const text = clperfLog(cfg.userDataDir);
      return /server started:/.test(text) ? text : undefined;
    });
    // the extension asks the server for its device: by default the machine's own (PoCL's CPU device here)
    const status = await until("the status bar to name the server's current device", 30_000, async () => {
      const t = await page.locator(".statusbar-item").filter({ hasText: "clperf:" }).first().textContent();
      return t && /pthread/i.test(t) ? t.trim() : undefined;
    });
    const line = log.split("\n").find((l) => l.includes("server started:"));
    return { detail: `${line?.trim()} | status bar: ${status}`, screenshot: await shot(page, "01-activated.png") };
  });

  await check("finding", page, async () => {
    await page.keyboard.press("Escape");
    await page.keyboard.press("Control+Shift+M");
    const rows = page.locator(".markers-panel .monaco-list-row");
    const texts = await until("a clperf finding in the Problems panel", 90_000, async () => {
      const all = await rows.allTextContents();
      return all.some((t) => /unroll/i.test(t)) ? all : undefined;
    });
    return { detail: texts.join(" | "), screenshot: await shot(page, "02-problems.png") };
  });

  await check("code_lens", page, async () => {
    const lenses = await until("an estimate code lens", 60_000, async () => {
      const all = await lensTexts(page);
      return all.some((t) => /≈\s*[\d.]+\s*(ns|µs|us|ms|s)\b/.test(t)) ? all : undefined;
    });
    // one device everywhere: the estimate lenses name the device the status bar shows
    const device = await statusDevice(page);
    const estimates = lenses.filter((t) => t.startsWith("≈"));
    const other = estimates.filter((t) => !names(t, device));
    if (other.length) throw new Error(`estimate lenses not for the status bar's '${device}': ${other.join(" | ")}`);
    // a lens that fits: each kernel's line within 90 characters and inside the editor, Benchmark included
    const lines = await lensLines(page);
    const over = lines.filter((l) => l.chars > 90 || !l.fits || !/Benchmark/.test(l.text));
    if (over.length) throw new Error(`lens lines that do not fit: ${JSON.stringify(over)}`);
    return {
      detail: `${lenses.join(" | ")} || device: ${device} || line lengths: ${lines.map((l) => l.chars).join(", ")} ` +
        `(right edge ${lines.map((l) => Math.round(l.right)).join(", ")} of ${Math.round(lines[0].limit)} px)`,
      screenshot: await shot(page, "03-codelens.png"),
    };
  });

  await check("hover", page, async () => {
    await palette(page, "View: Hide Panel"); // room for the whole breakdown
    await page.locator(".monaco-editor .view-lines").first().click();
    await goTo(page, cfg.kernelLine, cfg.kernelColumn);
    const text = await until("a hover with the estimate breakdown", 30_000, async () => {
      await palette(page, "Show or Focus Hover");
      const hover = page.locator(".monaco-hover-content").filter({ visible: true }).first();
      await hover.waitFor({ timeout: 5_000 });
      const t = (await hover.innerText()).trim();
      return /bound/i.test(t) && /ms|µs/.test(t) ? t : undefined;
    });
    await sleep(300); // the hover's size settles after its content
    const size = await hoverOverflow(page);
    const screenshot = await shot(page, "04-hover.png");
    await page.keyboard.press("Escape");
    if (size.contentHeight > size.boxHeight + 1 || size.contentWidth > size.boxWidth + 1) {
      throw new Error(`the hover needs scrolling: ${JSON.stringify(size)}`);
    }
    return { detail: `${text.replace(/\s+/g, " ").slice(0, 600)} || size: ${JSON.stringify(size)}`, screenshot };
  });

  await check("quick_fix", page, async () => {
    await page.keyboard.press("Escape");
    await page.keyboard.press("Control+Shift+M");
    await page.locator(".markers-panel .monaco-list-row").filter({ hasText: /unroll/i }).first().click();
    await sleep(500);
    const title = await until("an 'unroll' code action", 30_000, async () => {
      await palette(page, "Quick Fix...");
      const rows = page.locator(".action-widget .monaco-list-row.action");
      await rows.first().waitFor({ timeout: 5_000 });
      const texts = await rows.allTextContents();
      return texts.find((t) => /#pragma unroll/i.test(t));
    });
    const menu = await shot(page, "05-quickfix-menu.png");
    const device = await statusDevice(page);
    if (!/predicted .*faster on /.test(title) || !names(title, device)) {
      throw new Error(`the unroll fix's predicted speedup is not for the status bar's '${device}': ${title}`);
    }
    // The action list is driven with the keyboard (a pointer-blocking overlay catches synthetic clicks).
    const rows = page.locator(".action-widget .monaco-list-row.action");
    const texts = await rows.allTextContents();
    const classes = await rows.evaluateAll((els) => els.map((e) => e.className));
    const target = texts.findIndex((t) => /#pragma unroll/i.test(t));
    let focused = classes.findIndex((c) => /\bfocused\b/.test(c));
    if (focused < 0) focused = 0;
    for (let i = focused; i < target; i++) await page.keyboard.press("ArrowDown");
    for (let i = focused; i > target; i--) await page.keyboard.press("ArrowUp");
    await page.keyboard.press("Enter");
    const before = fs.readFileSync(cfg.file, "utf8");
    await until("the editor to show #pragma unroll", 30_000, async () =>
      /#pragma\s*unroll/.test((await page.locator(".monaco-editor .view-lines").first().innerText()).replace(/\u00a0/g, " ")),
    );
    await page.keyboard.press("Control+S");
    const after = await until("the fix saved to disk", 20_000, () => {
      const t = fs.readFileSync(cfg.file, "utf8");
      return t !== before && /#pragma\s+unroll/.test(t) ? t : undefined;
    });
    const added = after.split("\n").filter((l) => /#pragma\s+unroll/.test(l));
    const screenshot = await shot(page, "06-quickfix-applied.png");
    results.notes.push(`quick fix menu: ${menu}`);
    return { detail: `applied '${title.trim()}': ${added.join(" / ").trim()}`, screenshot };
  });

  await check("benchmark", page, async () => {
    await page.keyboard.press("Escape");
    await page.locator(".monaco-editor .view-lines").first().click();
    await goTo(page, cfg.kernelLine + 1, 10); // the fix added a line above the loop, not above the kernel
    const before = (await lensTexts(page)).filter((t) => /measured/.test(t));
    if (before.length) throw new Error(`a measured lens before benchmarking: ${before.join(" | ")}`);
    const device = await statusDevice(page);
    const firstEstimate = async () => (await lensTexts(page)).find((t) => t.startsWith("≈"));
    const estimateBefore = await firstEstimate();
    await palette(page, "clperf: Benchmark kernel");
    let progress;
    try {
      const toast = page.locator(".notification-toast").filter({ hasText: /clperf benchmark/i }).first();
      await toast.waitFor({ timeout: 30_000 });
      // a quick benchmark ends within a second: read the toast while it is still the progress one
      const buttons = toast.locator(".monaco-button, a.monaco-button").filter({ hasText: "Cancel" });
      let cancel = 0;
      let text = "";
      for (const end = Date.now() + 5_000; Date.now() < end && !cancel; await sleep(50)) {
        text = (await toast.innerText()).replace(/\s+/g, " ").trim();
        if (/clperf benchmark —/.test(text)) break; // already the result
        cancel = await buttons.count();
      }
      progress = `${text} [cancel buttons: ${cancel}]`;
      await shot(page, "07-benchmark-progress.png");
    } catch {
      progress = undefined;
    }
    const lenses = await until("a 'measured' code lens", cfg.benchmarkMs, async () => {
      const all = await lensTexts(page);
      return all.some((t) => /measured\s*[\d.]+\s*(ns|µs|us|ms|s)\b/.test(t)) ? all : undefined;
    });
    if (!progress) throw new Error(`no cancellable 'clperf benchmark' notification was shown (lenses: ${lenses.join(" | ")})`);
    const result = await until("the benchmark's result notification", 30_000, async () => {
      const toast = page.locator(".notification-toast").filter({ hasText: /clperf benchmark —/ }).first();
      return (await toast.count()) ? (await toast.innerText()).replace(/\s+/g, " ").trim() : undefined;
    });
    if (!names(result, device)) throw new Error(`the benchmark result does not name '${device}': ${result}`);
    // the stored measurement calibrates the device's estimates: the lens changes with no restart
    const estimateAfter = await until("the estimate lens to take the measurement in", 60_000, async () => {
      const t = await firstEstimate();
      return t && t !== estimateBefore ? t : undefined;
    });
    await sleep(500);
    return {
      detail: `progress: ${progress} || result: ${result} || estimate: ${estimateBefore} -> ${estimateAfter} ` +
        `|| lenses: ${(await lensTexts(page)).join(" | ")}`,
      screenshot: await shot(page, "08-benchmark-measured.png"),
    };
  });

  await check("select_device", page, async () => {
    await palette(page, "clperf: Select target device");
    const rows = page.locator(".quick-input-list .monaco-list-row");
    await rows.first().waitFor({ timeout: 30_000 });
    await sleep(300);
    const labels = await rows.allTextContents();
    const screenshot = await shot(page, "10-select-device.png"); // the current device marked, local ones first
    const input = page.locator(".quick-input-widget input.input");
    await input.fill("H200"); // the shipped profile: estimates for a device this machine does not have
    await page.locator(".quick-input-list .monaco-list-row").filter({ hasText: /H200/ }).first().waitFor();
    await page.keyboard.press("Enter");
    const status = await until("the status bar to name the H200 profile", 30_000, async () => {
      const t = await page.locator(".statusbar-item").filter({ hasText: "clperf:" }).first().textContent();
      return /H200/.test(t ?? "") ? t.trim() : undefined;
    });
    const lenses = await until("estimates for the H200", 60_000, async () => {
      const all = await lensTexts(page);
      return all.some((t) => /^≈.*on NVIDIA H200/.test(t)) ? all : undefined;
    });
    return { detail: `choices: ${labels.join(" | ")} || status: ${status} || lenses: ${lenses.join(" | ")}`, screenshot };
  });

  await check("select_local_device", page, async () => {
    // back from the profile to this machine's device: estimates at once (its peaks were measured in the
    // background on first use, with no terminal step; 01-activated.png shows that progress)
    await palette(page, "clperf: Select target device");
    const rows = page.locator(".quick-input-list .monaco-list-row");
    await rows.first().waitFor({ timeout: 30_000 });
    await sleep(300);
    // the first row that is not a profile: the local devices come first
    const texts = await rows.allTextContents();
    const classes = await rows.evaluateAll((els) => els.map((e) => e.className));
    const target = texts.findIndex((t) => !/Profile:/.test(t));
    if (target < 0) throw new Error(`no local device among the choices: ${texts.join(" | ")}`);
    let focused = classes.findIndex((c) => /\bfocused\b/.test(c));
    if (focused < 0) focused = 0;
    for (let i = focused; i < target; i++) await page.keyboard.press("ArrowDown");
    for (let i = focused; i > target; i--) await page.keyboard.press("ArrowUp");
    await page.keyboard.press("Enter");
    const status = await until("the status bar to name the local device", 30_000, async () => {
      const t = await statusDevice(page);
      return /pthread/i.test(t) ? t : undefined;
    });
    const lenses = await until("estimates for the local device", 60_000, async () => {
      const all = await lensTexts(page);
      const est = all.filter((t) => t.startsWith("≈"));
      return est.length >= 2 && est.every((t) => names(t, status)) ? all : undefined;
    });
    return { detail: `status: ${status} || lenses: ${lenses.join(" | ")}`,
             screenshot: await shot(page, "11-local-device.png") };
  });

  await check("missing_clperf", page, async () => {
    // Point clperf.pythonPath at an interpreter without clperf: the extension restarts and must say how
    // to install it rather than fail silently.
    const settings = JSON.parse(fs.readFileSync(cfg.settingsFile, "utf8"));
    settings["clperf.pythonPath"] = cfg.pythonWithoutClperf;
    fs.writeFileSync(cfg.settingsFile, JSON.stringify(settings, null, 2));
    const toast = page.locator(".notification-toast").filter({ hasText: /clperf cannot start/ }).first();
    await toast.waitFor({ timeout: 60_000 });
    await sleep(1000);
    const text = (await toast.innerText()).replace(/\s+/g, " ").trim();
    const status = await page.locator(".statusbar-item").filter({ hasText: "clperf:" }).first().innerHTML();
    return {
      detail: `${text} || status bar shows an error: ${/codicon-error/.test(status)}`,
      screenshot: await shot(page, "09-missing-clperf.png"),
    };
  });

  results.log = clperfLog(cfg.userDataDir).slice(-20_000);
  results.timings.total = Date.now() - started;
  save();
  await browser.close();
}

main().catch((e) => {
  results.fatal = String(e?.stack ?? e);
  save();
  process.exit(1);
});
