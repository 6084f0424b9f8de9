// Drives the browser build in Debian's chromium, headless (playwright-core from npm, installed by
// tests/web/run.sh outside the repository, with executablePath set to Debian's chromium).
// A small harness: open(url) loads the page and returns a Page whose record() reads the window's live
// layout record (--layout-live, written in the page's virtual file system), as the desktop GUI tests
// read theirs, so that clicks aim at controls and checks read what the window drew.
import { chromium } from 'playwright-core';
import { execSync } from 'node:child_process';
import http from 'node:http';
import fs from 'node:fs';
import path from 'node:path';

const types = { '.html': 'text/html', '.js': 'text/javascript', '.wasm': 'application/wasm', '.data': 'application/octet-stream' };

// A plain static server on 127.0.0.1 (no special headers, as a file host would serve the site).
// `mounts`: further folders by URL prefix, e.g. { '/model/': dir } (a checkpoint the page fetches).
export function serve(dir, mounts = {}) {
  const server = http.createServer((req, res) => {
    const url = new URL(req.url, 'http://x');
    let root = dir, rest = url.pathname === '/' ? 'index.html' : decodeURIComponent(url.pathname);
    for (const [prefix, folder] of Object.entries(mounts))
      if (url.pathname.startsWith(prefix)) root = folder, rest = decodeURIComponent(url.pathname.slice(prefix.length));
    const file = path.join(root, rest);
    if (!file.startsWith(root) || !fs.existsSync(file) || !fs.statSync(file).isFile()) {
      res.writeHead(404);
      res.end();
      return;
    }
    res.writeHead(200, { 'Content-Type': types[path.extname(file)] || 'application/octet-stream' });
    fs.createReadStream(file).pipe(res);
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

export const layoutPath = '/tmp/layout.json';

// Debian's chromium, headless, with WebGL 2 without a GPU: ANGLE over SwiftShader.
export function launch() {
  return chromium.launch({
    executablePath: execSync('command -v chromium').toString().trim(),
    args: ['--use-angle=swiftshader', '--enable-unsafe-swiftshader', '--ignore-gpu-blocklist'],
  });
}

// Opens the site with the link's parameters (plus the live layout record) and waits for the first
// settled record. Console errors and page errors are collected in page.problems.
// `scale`: the screen's device pixels per CSS pixel; `permissions`: e.g. the clipboard's.
export async function open(browser, base, params = '', { width = 1280, height = 720, scale = 1, permissions = [] } = {}) {
  const context = await browser.newContext({ viewport: { width, height }, deviceScaleFactor: scale, acceptDownloads: true });
  if (permissions.length) await context.grantPermissions(permissions, { origin: base });
  const page = await context.newPage();
  page.problems = [];
  page.on('console', (m) => { if (m.type() === 'error') page.problems.push('console: ' + m.text()); });
  page.on('pageerror', (e) => page.problems.push('page error: ' + e.message));
  const sep = params ? '&' : '';
  await page.goto(`${base}/?${params}${sep}layout-live&layout-json=${encodeURIComponent(layoutPath)}`);
  page.record = async () =>
    page.evaluate((p) => {
      try { return JSON.parse(new TextDecoder().decode(Module.FS.readFile(p))); } catch (e) { return null; }
    }, layoutPath);
  // Waits until a record drawn after `frame` is settled and `ready(record)` holds, reading the record every
  // `pollMs` (each read parses the whole record in the page's own thread, between its frames: a check that
  // times the frames reads it seldom).
  page.settled = async (ready = () => true, frame = -1, seconds = 60, pollMs = 50) => {
    const until = Date.now() + seconds * 1000;
    let last = null;
    while (Date.now() < until) {
      const r = await page.record();
      if (r) last = r;
      if (r && r.frame > frame + 1 && r.settled && ready(r)) return r;
      await page.waitForTimeout(pollMs);
    }
    throw new Error('the page did not settle: ' + JSON.stringify(last && { frame: last.frame, error: last.error, settled: last.settled }) +
                    '\n' + page.problems.join('\n'));
  };
  return page;
}

// The centre of a control of the record, in CSS pixels (the canvas is in device pixels).
export function centre(record, id, ratio = 1) {
  const w = record.widgets[id];
  if (!w) throw new Error('no control ' + id + ' in the record');
  return [(w.x + w.w / 2) / ratio, (w.y + w.h / 2) / ratio];
}

// Training while the frames are timed (a page opened with `show-training`): a real click on Start, then waits
// for `steps` steps, reading the live record once a second (each read parses the whole record in the page's
// own thread, between its frames: read often, the harness itself made frames slow). Returns the record before
// the click, the record after the steps, and the frames' wall-clock intervals (requestAnimationFrame, ms).
export async function trainTimingFrames(page, steps = 200, seconds = 180) {
  const before = await page.settled((r) => r.widgets && r.widgets['training.start']);
  await page.evaluate(() => {
    window.attnscopeFrames = [];
    let last = performance.now();
    const tick = (t) => { window.attnscopeFrames.push(t - last); last = t; requestAnimationFrame(tick); };
    requestAnimationFrame(tick);
  });
  await page.mouse.click(...centre(before, 'training.start'));
  const after = await page.settled((s) => s.training.runs.length > 0 && s.training.runs[0].step >= steps, before.frame,
                                   seconds, 1000);
  const frames = await page.evaluate(() => window.attnscopeFrames.slice(1));
  return { before, after, frames };
}

// The frames' figures: the median and slowest interval (ms) and how many were over 100 ms.
export function frameFigures(frames) {
  const sorted = [...frames].sort((a, b) => a - b);
  return { median: sorted[sorted.length >> 1], slowest: sorted[sorted.length - 1], over100: frames.filter((f) => f > 100).length };
}
