// The browser build in Debian's chromium, headless, as a student opens it from a link.
//   node test_web.mjs SITE_DIR        (tests/web/run.sh installs playwright-core and runs it)
// ATTNSCOPE_DESKTOP: the desktop CLI whose export the page's heatmap must equal (run.sh sets it).
// Each check prints "ok - …" or "not ok - …"; the exit code is the number of failures.
import { chromium } from 'playwright-core';
import { execSync, execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { serve, open, centre } from './drive.mjs';
import { readPng } from './png.mjs';

const site = process.argv[2];
const executablePath = execSync('command -v chromium').toString().trim();
const browser = await chromium.launch({
  executablePath,
  // WebGL 2 without a GPU: ANGLE over SwiftShader.
  args: ['--use-angle=swiftshader', '--enable-unsafe-swiftshader', '--ignore-gpu-blocklist'],
});
const server = await serve(site);
const base = `http://127.0.0.1:${server.address().port}`;
let failures = 0;
// ATTNSCOPE_WEB_ONLY=TEXT runs only the checks whose name holds TEXT (a quicker loop by hand).
async function check(name, body) {
  if (process.env.ATTNSCOPE_WEB_ONLY && !name.includes(process.env.ATTNSCOPE_WEB_ONLY)) return;
  try {
    await body();
    console.log('ok - ' + name);
  } catch (e) {
    ++failures;
    console.log('not ok - ' + name + '\n  ' + String(e.stack || e).split('\n').join('\n  '));
  }
}
function expect(condition, what) {
  if (!condition) throw new Error(what);
}

await check("a first visit opens as the desktop's first start: lesson 1, its single head, no console error", async () => {
  const page = await open(browser, base);
  const r = await page.settled((r) => r.heads && r.heads.length > 0);
  expect(r.error === '', 'error line: ' + r.error);
  expect(r.lesson === 1 && r.lesson_step === 1, 'lesson ' + r.lesson + ' step ' + r.lesson_step);
  expect(r.heads.length === 1, 'heads drawn: ' + r.heads.length);
  expect(page.problems.length === 0, page.problems.join('\n'));
  await page.context().close();
});

await check('?lesson=4&step=2&lang=zh opens that step in Chinese', async () => {
  const page = await open(browser, base, 'lesson=4&step=2&lang=zh');
  const r = await page.settled((r) => r.lesson === 4);
  expect(r.lesson_step === 2, 'step ' + r.lesson_step);
  expect(r.language === 'zh', 'language ' + r.language);
  expect(page.problems.length === 0, page.problems.join('\n'));
  await page.context().close();
});

await check('a parameter that does not parse opens the default scene and says why', async () => {
  const page = await open(browser, base, 'heads=many');
  const r = await page.settled();
  expect(r.status.includes('--heads') && r.status.includes('default scene'), 'status line: ' + r.status);
  expect(r.heads.length > 0, 'no heads drawn');
  await page.context().close();
});

await check('a real click on a control changes the scene as on the desktop', async () => {
  const page = await open(browser, base, 'heads=8');
  const r = await page.settled((r) => r.widgets && r.widgets['model.kind.mqa']);
  const [x, y] = centre(r, 'model.kind.mqa');
  await page.mouse.click(x, y);
  const after = await page.settled((s) => s.heads.length > 0 && s.heads.every((h) => h.kv_group === 0), r.frame);
  expect(after.error === '', after.error);
  await page.context().close();
});

await check('real keys: PageDown moves a lesson on, Ctrl+Z takes a change back', async () => {
  const page = await open(browser, base, 'lesson=1&step=1');
  const r = await page.settled((r) => r.lesson === 1);
  await page.keyboard.press('PageDown');
  const next = await page.settled((s) => s.lesson_step === 2, r.frame);
  await page.keyboard.press('Control+z');
  await page.settled((s) => s.lesson_step === 1 || s.frame > next.frame + 30, next.frame);
  await page.context().close();
});

await check('Export gives a browser download: a valid PNG of the size the panel says', async () => {
  const page = await open(browser, base, 'heads=4&show-export');
  const r = await page.settled((r) => r.widgets && r.widgets['export.button']);
  const [x, y] = centre(r, 'export.button');
  const [download] = await Promise.all([page.waitForEvent('download', { timeout: 30000 }), page.mouse.click(x, y)]);
  expect(download.suggestedFilename().endsWith('.png'), 'file ' + download.suggestedFilename());
  const file = await download.path();
  const bytes = (await import('node:fs')).readFileSync(file);
  expect(bytes.subarray(1, 4).toString() === 'PNG', 'not a PNG');
  const width = bytes.readUInt32BE(16), height = bytes.readUInt32BE(20);
  const after = await page.settled((s) => s.export_message !== '', r.frame);
  expect(after.export_message.includes(download.suggestedFilename()), 'panel: ' + after.export_message);
  expect(width > 100 && height > 100, `size ${width}×${height}`);
  await page.context().close();
});

// ---- the heatmap against the desktop's export ------------------------------------------------------
// A fixed scene exported in the page (Export → the download) and by the desktop CLI (`attnscope export`,
// same scene options): the figure has the same size and every heatmap cell's pixel the same grey, within
// one step of the grayscale map (256 greys on the fixed 0–1 scale: a probability within 1/255). The
// cells are found on the desktop's side: the pixels that change when only the colormap changes. The
// Export panel's scale starts at 2× (app_state.h), so the desktop exports at --scale 2.
const fixedScene = ['--kind', 'gqa', '--heads', '4', '--groups', '2', '--causal', '--seed', '7', '--scale-mode', 'fixed'];
function desktopExport(colormap) {
  const desktop = process.env.ATTNSCOPE_DESKTOP;
  expect(desktop && fs.existsSync(desktop), 'ATTNSCOPE_DESKTOP must name the desktop attnscope (tests/web/run.sh sets it): ' + desktop);
  const out = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'attnscope-web-')), `desktop-${colormap}.png`);
  execFileSync(desktop, ['export', '--what', 'heads', '--format', 'png', '--scale', '2', ...fixedScene, '--colormap', colormap, '--out', out]);
  return readPng(fs.readFileSync(out));
}

await check("a fixed scene's heatmap in the page has the desktop export's pixels (grayscale, within 1/255)", async () => {
  const grey = desktopExport('grayscale'), viridis = desktopExport('viridis');
  const params = [];
  for (let i = 0; i < fixedScene.length; ++i) {
    const key = fixedScene[i].slice(2), next = fixedScene[i + 1];
    if (next === undefined || next.startsWith('--')) params.push(key);
    else params.push(`${key}=${encodeURIComponent(next)}`), ++i;
  }
  const page = await open(browser, base, params.join('&') + '&colormap=grayscale&show-export');
  const r = await page.settled((r) => r.widgets && r.widgets['export.button'] && r.heads && r.heads.length === 4);
  const [x, y] = centre(r, 'export.button');
  const [download] = await Promise.all([page.waitForEvent('download', { timeout: 30000 }), page.mouse.click(x, y)]);
  const web = readPng(fs.readFileSync(await download.path()));
  expect(web.width === grey.width && web.height === grey.height,
         `page ${web.width}×${web.height}, desktop ${grey.width}×${grey.height}`);
  let cells = 0, equal = 0, worst = 0, where = '';
  for (let p = 0; p < grey.width * grey.height; ++p) {
    const i = p * 4;
    const cell = grey.rgba[i] !== viridis.rgba[i] || grey.rgba[i + 1] !== viridis.rgba[i + 1] || grey.rgba[i + 2] !== viridis.rgba[i + 2];
    if (!cell) continue;
    ++cells;
    const d = Math.max(Math.abs(web.rgba[i] - grey.rgba[i]), Math.abs(web.rgba[i + 1] - grey.rgba[i + 1]), Math.abs(web.rgba[i + 2] - grey.rgba[i + 2]));
    if (d === 0) ++equal;
    if (d > worst) worst = d, where = `(${p % grey.width}, ${Math.floor(p / grey.width)})`;
  }
  // 4 heads of T ≥ 5 tokens, each cell at least a few pixels wide: thousands of cell pixels.
  expect(cells > 4 * 25 * 16 * 4, `only ${cells} heatmap pixels found`);
  expect(worst <= 1, `a heatmap pixel differs by ${worst} greys at ${where} (${equal} of ${cells} equal)`);
  expect(page.problems.length === 0, page.problems.join('\n'));
  await page.context().close();
});

// ---- training: the loss falls, the page keeps drawing -----------------------------------------------
// Start in the Training window (a real click), then measure every frame (requestAnimationFrame's
// timestamps) until the run has made 200 steps: the loss must fall and no frame may take over 100 ms.
await check('200 training steps lower the loss and no frame takes over 100 ms', async () => {
  const page = await open(browser, base, 'show-training');
  const r = await page.settled((r) => r.widgets && r.widgets['training.start']);
  await page.evaluate(() => {
    window.attnscopeFrames = [];
    let last = performance.now();
    const tick = (t) => { window.attnscopeFrames.push(t - last); last = t; requestAnimationFrame(tick); };
    requestAnimationFrame(tick);
  });
  const [x, y] = centre(r, 'training.start');
  await page.mouse.click(x, y);
  const done = await page.settled((s) => s.training.runs.length > 0 && s.training.runs[0].step >= 200, r.frame, 180);
  const frames = await page.evaluate(() => window.attnscopeFrames.slice(1));
  const run = done.training.runs[0];
  expect(run.error === '', 'run error: ' + run.error);
  const losses = run.losses, mean = (a) => a.reduce((s, v) => s + v, 0) / a.length;
  expect(losses.length >= 20, `${losses.length} losses recorded`);
  const first = mean(losses.slice(0, 10)), last = mean(losses.slice(-10));
  const sorted = [...frames].sort((a, b) => a - b);
  console.log(`  ${run.step} steps, loss ${first.toFixed(3)} → ${last.toFixed(3)}; ${frames.length} frames, ` +
              `median ${sorted[sorted.length >> 1].toFixed(1)} ms, slowest ${sorted[sorted.length - 1].toFixed(1)} ms`);
  expect(last < first, `the loss did not fall: ${first} → ${last}`);
  const slow = frames.filter((f) => f > 100);
  // The load average goes with a failure: wall-clock frames are only meaningful on a machine to itself.
  expect(slow.length === 0, `${slow.length} frames over 100 ms (load average ${os.loadavg()[0].toFixed(1)} on ` +
         `${os.cpus().length} cores): ${slow.map((f) => f.toFixed(0)).join(', ')} ms`);
  expect(page.problems.length === 0, page.problems.join('\n'));
  await page.context().close();
});

server.close();
await browser.close();
console.log(failures ? `${failures} failed` : 'all passed');
process.exit(failures);
