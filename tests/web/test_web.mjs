// The browser build in Debian's chromium, headless, as a student opens it from a link.
//   node test_web.mjs SITE_DIR
// Each check prints "ok - …" or "not ok - …"; the exit code is the number of failures.
import { chromium } from 'playwright-core';
import { execSync } from 'node:child_process';
import { serve, open, centre } from './drive.mjs';

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
async function check(name, body) {
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

server.close();
await browser.close();
console.log(failures ? `${failures} failed` : 'all passed');
process.exit(failures);
