// The browser build's first frame: milliseconds from the start of navigation until the window has
// drawn its first frame (the live layout record the frame writes exists), in headless Chromium.
//   tests/web/run.sh --node bench/web_first_frame.mjs SITE_DIR [RUNS]   (bench/web_figures.sh runs it)
// Prints one JSON line: every run's figure and their median. Not a test: the machine's load moves it.
import { launch, serve, layoutPath } from './drive.mjs';

const site = process.argv[2], runs = Number(process.argv[3] || 5);
const browser = await launch();
const server = await serve(site);
const base = `http://127.0.0.1:${server.address().port}`;
const times = [];
for (let i = 0; i < runs; ++i) {
  // A fresh context each time: nothing cached from the run before, as a student's first visit.
  const context = await browser.newContext({ viewport: { width: 1280, height: 720 } });
  const page = await context.newPage();
  await page.goto(`${base}/?layout-live&layout-json=${encodeURIComponent(layoutPath)}`);
  const handle = await page.waitForFunction((p) => {
    try { Module.FS.stat(p); return performance.now(); } catch (e) { return false; }
  }, layoutPath, { polling: 10, timeout: 60000 });
  times.push(await handle.jsonValue());
  await context.close();
}
server.close();
await browser.close();
const sorted = [...times].sort((a, b) => a - b);
console.log(JSON.stringify({ first_frame_ms: times.map((t) => Math.round(t)), median_ms: Math.round(sorted[sorted.length >> 1]) }));
