// The browser build's settings change to pixels (issue 37 item 7: "a T = 128 settings change to pixels
// ≤ 100 ms"): the window's own benchmark mode (--bench-json, as bench/frame_time runs the desktop window)
// in headless Chromium. After the first result the page changes a setting every few frames (a new seed of
// the synthetic model's weights, so every head's map changes) and times each change from the edit to the end
// of the frame that draws its heatmaps (glFinish), with the engine working in that same page's thread (the
// page has no worker threads). Cases: (T, H) = (16, 4), (128, 16), (512, 16) on the Heads view.
//   tests/web/run.sh --node bench/web_settings_change.mjs SITE_DIR [CHANGES]   (bench/web_figures.sh runs it)
// Prints one JSON line per case: the changes' latencies (median, 95th percentile, slowest), the engine's
// compute in them and the frames'. Not a test: the machine's load moves it.
import { launch, serve } from './drive.mjs';

const site = process.argv[2], changes = Number(process.argv[3] || 20);
if (!site) {
  console.error('usage: web_settings_change.mjs SITE_DIR [CHANGES]');
  process.exit(2);
}
const vocabulary = ['the', 'cat', 'sat', 'on', 'mat', 'because', 'it', 'was', 'tired', 'and', 'then', 'a', 'dog',
                    'ran', 'past', 'quickly'];
const words = (n) => Array.from({ length: n }, (_, i) => vocabulary[i % vocabulary.length]).join(' ');
const percentile = (v, p) => {
  const s = [...v].sort((a, b) => a - b);
  return s.length ? s[Math.min(s.length - 1, Math.round(p * (s.length - 1)))] : 0;
};
const round = (x) => Math.round(x * 10) / 10;

const browser = await launch();
const server = await serve(site);
const base = `http://127.0.0.1:${server.address().port}`;
const out = '/tmp/bench.json';
let failed = false;
for (const [tokens, heads] of [[16, 4], [128, 16], [512, 16]]) {
  const context = await browser.newContext({ viewport: { width: 1600, height: 900 } });
  const page = await context.newPage();
  const problems = [];
  page.on('pageerror', (e) => problems.push(e.message));
  // --bench-fps 0: the page's frames are paced by the browser (requestAnimationFrame), not by a sleep.
  const params = new URLSearchParams({ heads: String(heads), text: words(tokens), 'bench-json': out,
                                       'bench-changes': String(changes), 'bench-fps': '0' });
  await page.goto(`${base}/?${params}`);
  let timings = null;
  try {
    const handle = await page.waitForFunction((p) => {
      try { return new TextDecoder().decode(Module.FS.readFile(p)); } catch (e) { return false; }
    }, out, { polling: 100, timeout: 600000 });
    timings = JSON.parse(await handle.jsonValue());
  } catch (e) {
    console.log(JSON.stringify({ tokens, heads, error: String(e.message || e).split('\n')[0], problems }));
    failed = true;
    await context.close();
    continue;
  }
  const latency = timings.latency_ms, compute = timings.compute_ms, frame = timings.frame_ms;
  console.log(JSON.stringify({
    tokens, heads, changes: latency.length,
    latency_ms: { median: round(percentile(latency, 0.5)), p95: round(percentile(latency, 0.95)), slowest: round(Math.max(...latency)) },
    compute_ms_median: round(percentile(compute, 0.5)),
    frame_ms: { median: round(percentile(frame, 0.5)), p95: round(percentile(frame, 0.95)) },
  }));
  await context.close();
}
server.close();
await browser.close();
process.exit(failed ? 1 : 0);
