// The browser build in Debian's chromium, headless, as a student opens it from a link.
//   node test_web.mjs SITE_DIR
// Each check prints "ok - …" or "not ok - …"; the exit code is the number of failures.
import { chromium } from 'playwright-core';
import { execSync } from 'node:child_process';
import { serve, open, centre, layoutPath } from './drive.mjs';

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

// ---- links, the clipboard, full screen and HiDPI (issue 37: ?scene=, Copy link, Clipboard API) -------

// Screenshots to look at when ATTNSCOPE_WEB_SHOTS names a folder.
const shots = process.env.ATTNSCOPE_WEB_SHOTS;
async function shot(page, name) {
  if (shots) await page.screenshot({ path: `${shots}/${name}.png` });
}
const clipboard = ['clipboard-read', 'clipboard-write'];
// Opens a menu of the bar and clicks one of its items (both by their layout record names).
async function clickMenuItem(page, menu, item) {
  let r = await page.settled((r) => r.widgets && r.widgets[menu]);
  await page.mouse.click(...centre(r, menu));
  r = await page.settled((s) => s.widgets[item], r.frame);
  await page.mouse.click(...centre(r, item));
  return r;
}

await check('Copy link puts a ?scene= link on the clipboard that opens exactly that scene', async () => {
  const page = await open(browser, base, 'kind=gqa&heads=8&groups=2&causal&text=' + encodeURIComponent('我喜欢 the cat & dog?'),
                          { permissions: clipboard });
  const r = await page.settled((r) => r.heads.length === 8);
  await clickMenuItem(page, 'menu.file', 'menu.file.copy_link');
  const copied = await page.settled((s) => s.status.startsWith('Link copied'), r.frame);
  const link = await page.evaluate(() => navigator.clipboard.readText());
  expect(link.startsWith(base + '/?scene='), 'clipboard: ' + link);
  expect(copied.status.includes(`(${link.length} characters)`), 'status line: ' + copied.status);
  expect(/^[A-Za-z0-9_-]+$/.test(link.slice(link.indexOf('=') + 1)), 'not base64url: ' + link);
  const opened = await open(browser, base, link.slice(link.indexOf('?') + 1));
  const o = await opened.settled((s) => s.heads.length > 0);
  expect(JSON.stringify(o.scene) === JSON.stringify(r.scene),
         'scene differs:\n' + JSON.stringify(o.scene) + '\n' + JSON.stringify(r.scene));
  expect(o.heads.length === 8 && o.lesson === 0, `heads ${o.heads.length}, lesson ${o.lesson}`);
  expect(o.status.includes('Opened the scene of the link'), 'status line: ' + o.status);
  expect(page.problems.length === 0 && opened.problems.length === 0, page.problems.concat(opened.problems).join('\n'));
  await opened.context().close();
  await page.context().close();
});

// The default scene, once: a page whose one parameter opens a window (the KV-cache calculator), so that it
// does not open as a first visit does (on lesson 1) and names no scene setting.
let defaultRecord = null;
async function defaultScene() {
  if (!defaultRecord) {
    const page = await open(browser, base, 'show-kv-cache');
    const r = await page.settled((r) => r.heads.length > 0);
    expect(r.lesson === 0, 'lesson ' + r.lesson);
    defaultRecord = r;
    await page.context().close();
  }
  return defaultRecord;
}

for (const lang of ['en', 'zh']) {
  await check(`a malformed ?scene= (${lang}) opens the default scene and says why in the status line`, async () => {
    const page = await open(browser, base, `lang=${lang}&scene=eJyrVsrJT0wpVrKqVs%21broken`);
    const r = await page.settled((r) => r.heads.length > 0);
    const said = lang === 'en' ? "The link's scene could not be opened" : '无法打开链接中的场景';
    expect(r.status.includes(said) && r.status.includes('base64url'), 'status line: ' + r.status);
    expect(JSON.stringify(r.scene) === JSON.stringify((await defaultScene()).scene), 'not the default scene');
    await shot(page, `bad-link-${lang}`);
    await page.context().close();
  });
}
await check('Ctrl+C puts the figure on the clipboard as an image/png of the size the status line says', async () => {
  const page = await open(browser, base, 'heads=4', { permissions: clipboard });
  const r = await page.settled((r) => r.heads.length === 4);
  await page.keyboard.press('Control+c');
  const copied = await page.settled((s) => s.status.startsWith('Figure copied') || s.status.includes('not copied'), r.frame);
  const m = /\((\d+)×(\d+) PNG\)/.exec(copied.status);
  expect(m, 'status line: ' + copied.status);
  const png = await page.evaluate(async () => {
    for (const item of await navigator.clipboard.read()) {
      if (!item.types.includes('image/png')) continue;
      const bytes = new Uint8Array(await (await item.getType('image/png')).arrayBuffer());
      const view = new DataView(bytes.buffer);
      return { png: String.fromCharCode(...bytes.slice(1, 4)), width: view.getUint32(16), height: view.getUint32(20) };
    }
    return null;
  });
  expect(png && png.png === 'PNG', 'no image/png on the clipboard: ' + JSON.stringify(png));
  expect(png.width === Number(m[1]) && png.height === Number(m[2]), `clipboard ${png.width}×${png.height}, status ${m[0]}`);
  await page.context().close();
});

await check('a page that may not use the clipboard says so in the status line', async () => {
  const page = await open(browser, base, 'heads=4');
  const r = await page.settled((r) => r.heads.length === 4);
  await page.evaluate(() => {  // as on a plain http:// address: no Clipboard API
    Object.defineProperty(navigator, 'clipboard', { value: undefined });
  });
  await page.keyboard.press('Control+c');
  const after = await page.settled((s) => s.status.includes('not copied'), r.frame);
  expect(after.status.includes('https://'), 'status line: ' + after.status);
  await page.context().close();
});

await check('F11 presents in the browser\'s full screen; Esc, or the browser leaving it, ends presenting', async () => {
  const page = await open(browser, base, 'lesson=1&step=2');
  let r = await page.settled((r) => r.lesson === 1);
  await page.keyboard.press('F11');
  await page.waitForFunction(() => document.fullscreenElement !== null, null, { timeout: 10000 });
  r = await page.settled((s) => s.presenting, r.frame);
  await page.keyboard.press('Escape');
  await page.waitForFunction(() => document.fullscreenElement === null, null, { timeout: 10000 });
  r = await page.settled((s) => !s.presenting, r.frame);
  // The browser's own way out (its Esc, its controls): presenting follows.
  await page.keyboard.press('F11');
  await page.waitForFunction(() => document.fullscreenElement !== null, null, { timeout: 10000 });
  r = await page.settled((s) => s.presenting, r.frame);
  await page.evaluate(() => document.exitFullscreen());
  r = await page.settled((s) => !s.presenting, r.frame);
  expect(r.error === '', r.error);
  await page.context().close();
});

await check('HiDPI: at devicePixelRatio 2 the canvas has twice the pixels, the UI twice the scale, and clicks land', async () => {
  const records = {};
  for (const scale of [1, 2]) {
    const page = await open(browser, base, 'heads=8&lang=zh', { scale });
    const r = await page.settled((r) => r.widgets && r.widgets['model.kind.mqa']);
    records[scale] = r;
    await shot(page, `dpr${scale}-zh`);
    if (scale === 2) {
      await page.mouse.click(...centre(r, 'model.kind.mqa', 2));
      await page.settled((s) => s.heads.length > 0 && s.heads.every((h) => h.kv_group === 0), r.frame);
    }
    await page.context().close();
  }
  expect(records[2].width === 2 * records[1].width && records[2].height === 2 * records[1].height,
         `canvas ${records[1].width}×${records[1].height} and ${records[2].width}×${records[2].height}`);
  expect(Math.abs(records[2].ui_scale - 2 * records[1].ui_scale) < 0.051, `UI scale ${records[1].ui_scale} and ${records[2].ui_scale}`);
});

await check('a reload keeps what the teacher set (the UI scale, the scene), as the desktop keeps its config folder', async () => {
  const page = await open(browser, base, 'heads=4');
  const r = await page.settled((r) => r.heads.length === 4);
  await page.keyboard.press('Control+Equal');
  const larger = await page.settled((s) => s.ui_scale > r.ui_scale + 0.05, r.frame);
  // Saved at most every 2 s and handed to IndexedDB (index.html: keepSettings).
  await page.waitForTimeout(2500);
  await page.waitForFunction(() => { const s = window.attnscopeStorage; return s.written > 0 && !s.writing && !s.again; },
                             null, { timeout: 15000 });
  // The same address without its parameters: the kept scene (4 heads), not the first start's lesson.
  await page.goto(base + '/?layout-live&layout-json=' + encodeURIComponent(layoutPath));
  const again = await page.settled((s) => s.heads.length > 0);
  expect(Math.abs(again.ui_scale - larger.ui_scale) < 1e-4, `UI scale ${again.ui_scale}, set ${larger.ui_scale}`);
  expect(again.heads.length === 4 && again.lesson === 0, `heads ${again.heads.length}, lesson ${again.lesson}`);
  expect(page.problems.length === 0, page.problems.join('\n'));
  await page.context().close();
});

server.close();
await browser.close();
console.log(failures ? `${failures} failed` : 'all passed');
process.exit(failures);
