// dashboard_driver.mjs - drives Debian's headless Chromium with playwright-core
// for test_dashboard.py: one JSON command per stdin line, one JSON answer per
// stdout line ({"ok": true, ...} or {"ok": false, "error": "..."}).
//
//   {"op": "goto", "url": U}                  {"op": "fill", "sel": S, "text": T}
//   {"op": "click", "sel": S}                 {"op": "press", "sel": S, "key": K}
//   {"op": "wait", "sel": S, "timeout": MS}   {"op": "gone", "sel": S, "timeout": MS}
//   {"op": "text", "sel": S}                  {"op": "texts", "sel": S}
//   {"op": "count", "sel": S}                 {"op": "screenshot", "path": P, "full": B}
//   {"op": "eval", "js": EXPR}                {"op": "errors"}   {"op": "requests"}
//   {"op": "failed"} (responses >= 400)  {"op": "clear"} (forgets errors, requests, failures)
//
// Usage: node dashboard_driver.mjs PLAYWRIGHT_CORE_DIR CHROMIUM_PATH
import { createRequire } from "node:module";
import readline from "node:readline";
import path from "node:path";

const [coreDir, chromiumPath] = process.argv.slice(2);
const require = createRequire(path.join(coreDir, "package.json"));
const { chromium } = require(coreDir);

const browser = await chromium.launch({
  executablePath: chromiumPath,
  headless: true,
  args: ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"],
});
const page = await browser.newPage({ viewport: { width: 1360, height: 900 } });
const errors = [];
const requests = [];
page.on("pageerror", (e) => errors.push(String(e)));
// Failed fetches are listed with their URLs in `failed` (the console's own
// "Failed to load resource" line names none, so it is left out of errors).
const failed = [];
page.on("console", (m) => {
  if (m.type() === "error" && !m.text().startsWith("Failed to load resource")) errors.push(m.text());
});
page.on("request", (r) => requests.push(r.url()));
page.on("response", (r) => { if (r.status() >= 400) failed.push(r.status() + " " + r.request().method() + " " + r.url()); });

async function run(c) {
  const t = c.timeout ?? 5000;
  switch (c.op) {
    case "goto": await page.goto(c.url, { waitUntil: "load" }); return {};
    case "fill": await page.fill(c.sel, c.text, { timeout: t }); return {};
    case "click": await page.click(c.sel, { timeout: t }); return {};
    case "press": await page.press(c.sel, c.key, { timeout: t }); return {};
    case "wait": {
      const t0 = Date.now();
      await page.waitForSelector(c.sel, { timeout: t, state: c.state ?? "visible" });
      return { ms: Date.now() - t0 };
    }
    case "gone": {
      const t0 = Date.now();
      await page.waitForSelector(c.sel, { timeout: t, state: "detached" });
      return { ms: Date.now() - t0 };
    }
    case "text": return { text: await page.textContent(c.sel, { timeout: t }) };
    case "texts": return { texts: await page.$$eval(c.sel, (es) => es.map((e) => e.textContent)) };
    case "count": return { count: (await page.$$(c.sel)).length };
    case "screenshot": await page.screenshot({ path: c.path, fullPage: !!c.full }); return {};
    case "eval": return { value: await page.evaluate(c.js) };
    case "errors": return { errors };
    case "failed": return { failed };
    case "clear": errors.length = 0; requests.length = 0; failed.length = 0; return {};
    case "requests": return { requests };
    case "quit": await browser.close(); process.exit(0);
    default: throw new Error("unknown op " + c.op);
  }
}

const rl = readline.createInterface({ input: process.stdin });
process.stdout.write(JSON.stringify({ ok: true, ready: true }) + "\n");
for await (const line of rl) {
  let out;
  try {
    out = { ok: true, ...(await run(JSON.parse(line))) };
  } catch (e) {
    out = { ok: false, error: String(e && e.message || e) };
  }
  process.stdout.write(JSON.stringify(out) + "\n");
}
await browser.close();
