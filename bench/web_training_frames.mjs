// The browser build's frames while training: fresh pages (1280×720) each train the default model 200 steps
// from a real click on Start, in headless Chromium; the frames' wall-clock intervals are taken from
// requestAnimationFrame in the page, and the harness reads the live layout record once a second only.
//   tests/web/run.sh --node bench/web_training_frames.mjs SITE_DIR [RUNS]   (bench/web_figures.sh runs it)
// Prints a line per run (frames shown and drawn, the median and slowest interval, how many were over 100 ms,
// the page's own work in its slowest frame, the load average) and a JSON summary. Not a test: the machine's
// load moves it (issue 37 asks for no frame over 100 ms while training; docs/web.md "Frames while training").
import { chromium } from 'playwright-core';
import { execSync } from 'node:child_process';
import os from 'node:os';
import { serve, open, centre } from './drive.mjs';

const site = process.argv[2], runs = Number(process.argv[3] || 5), steps = 200;
const browser = await chromium.launch({
  executablePath: execSync('command -v chromium').toString().trim(),
  args: ['--use-angle=swiftshader', '--enable-unsafe-swiftshader', '--ignore-gpu-blocklist'],
});
const server = await serve(site);
const base = `http://127.0.0.1:${server.address().port}`;
const all = [];
let slowestWork = 0, over = 0;
for (let i = 0; i < runs; ++i) {
  const page = await open(browser, base, 'show-training');
  const r = await page.settled((r) => r.widgets && r.widgets['training.start']);
  await page.evaluate(() => {
    window.attnscopeFrames = [];
    let last = performance.now();
    const tick = (t) => { window.attnscopeFrames.push(t - last); last = t; requestAnimationFrame(tick); };
    requestAnimationFrame(tick);
  });
  await page.mouse.click(...centre(r, 'training.start'));
  const done = await page.settled((s) => s.training.runs.length > 0 && s.training.runs[0].step >= steps, r.frame, 300, 1000);
  const frames = await page.evaluate(() => window.attnscopeFrames.slice(1));
  await page.context().close();
  if (done.training.runs[0].error) throw new Error('the run failed: ' + done.training.runs[0].error);
  const sorted = [...frames].sort((a, b) => a - b), n = frames.filter((f) => f > 100).length;
  all.push(...frames);
  over += n;
  slowestWork = Math.max(slowestWork, done.slowest_frame_work_ms);
  console.log(`run ${i + 1}: ${frames.length} frames (${done.frames_drawn - r.frames_drawn} drawn), median ` +
              `${sorted[sorted.length >> 1].toFixed(1)} ms, slowest ${sorted[sorted.length - 1].toFixed(1)} ms, ${n} over 100 ms; ` +
              `the page's own work ${done.slowest_frame_work_ms.toFixed(1)} ms at its slowest; load ${os.loadavg()[0].toFixed(1)}`);
}
server.close();
await browser.close();
const sorted = [...all].sort((a, b) => a - b);
console.log(JSON.stringify({ runs, frames: all.length, median_ms: +sorted[sorted.length >> 1].toFixed(1),
                             slowest_ms: +sorted[sorted.length - 1].toFixed(1), over_100_ms: over,
                             slowest_page_work_ms: +slowestWork.toFixed(1) }));
