// The browser build in Debian's chromium, headless, as a student opens it from a link.
//   node test_web.mjs SITE_DIR        (tests/web/run.sh installs playwright-core and runs it)
// ATTNSCOPE_DESKTOP: the desktop CLI whose export the page's heatmap must equal (run.sh sets it).
// Each check prints "ok - …" or "not ok - …"; the exit code is the number of failures.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { launch, serve, open, centre, layoutPath, trainTimingFrames, frameFigures } from './drive.mjs';
import { readPng } from './png.mjs';

const site = process.argv[2];
const browser = await launch();
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

// The page draws a frame only when its picture changed (app/core/picture_change.h): each frame drawn costs the
// browser a composite of the whole canvas. Left alone it draws none; a click draws what it changed; and the
// picture left on screen is the one a fresh drawing gives (a resize and back makes the page draw again).
await check('a page left alone builds ten frames a second and draws none; a click draws the change; the picture kept equals one drawn afresh', async () => {
  const page = await open(browser, base, 'heads=8');
  const r = await page.settled((r) => r.widgets && r.widgets['model.kind.mqa']);
  // Waits until a second goes by with frames shown and none drawn. Left alone the page builds about ten frames a
  // second (FrameDue in window_main.cpp), not one per animation frame (sixty).
  const idle = async (since) => {
    for (let tries = 0; tries < 10; ++tries) {
      const a = await page.record();
      await page.waitForTimeout(1000);
      const b = await page.record();
      if (b.frame > since && b.frame - a.frame >= 3 && b.frames_drawn === a.frames_drawn) {
        expect(b.frame - a.frame <= 20, `a page left alone built ${b.frame - a.frame} frames in a second`);
        return b;
      }
    }
    const last = await page.record();
    throw new Error(`the page went on drawing: frame ${last.frame}, ${last.frames_drawn} drawn`);
  };
  const still = await idle(r.frame);
  const shot = async () => page.screenshot();
  const before = await shot();
  await page.mouse.click(...centre(still, 'model.kind.mqa'));
  const after = await page.settled((s) => s.heads.length > 0 && s.heads.every((h) => h.kv_group === 0), still.frame);
  expect(after.frames_drawn > still.frames_drawn, `the click drew no frame (${after.frames_drawn} drawn)`);
  const changed = await idle(after.frame);
  const kept = await shot();
  expect(!kept.equals(before), 'the canvas still shows the picture from before the click');
  // A pixel narrower and back: two frames drawn afresh, at the same size as before.
  await page.setViewportSize({ width: 1279, height: 720 });
  await page.settled((s) => s.width === 1279 && s.frames_drawn > changed.frames_drawn, changed.frame);
  await page.setViewportSize({ width: 1280, height: 720 });
  const back = await page.settled((s) => s.width === 1280, changed.frame);
  const redrawn = await idle(back.frame);
  expect(redrawn.frames_drawn > changed.frames_drawn + 1, `the resize drew ${redrawn.frames_drawn - changed.frames_drawn} frames`);
  const fresh = await shot();
  expect(fresh.equals(kept), 'the picture kept on screen differs from the one drawn afresh');
  expect(page.problems.length === 0, page.problems.join('\n'));
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

// ---- checkpoints from the student's disk (app/web/checkpoint_picker.js, app/core/platform_open.h) ----
// A fixture checkpoint of the desktop's model tests, picked through the window's own button (the page's
// file chooser) or dropped onto the canvas as files, is copied into the page's memory and opened by the
// desktop's loader; a broken one gives the loader's error; a folder over the limit is refused before
// anything is copied. SOURCE_DIR: the repository (default: two folders above the site, build-web/site).
const sourceDir = process.env.ATTNSCOPE_SOURCE_DIR || path.resolve(site, '..', '..');
const fixture = (name) => path.join(sourceDir, 'tests', 'fixtures', 'models', name);
// The files of a folder as { name, b64 } (what the page makes File objects of).
function folderPayload(dir, keep = () => true) {
  return fs.readdirSync(dir).filter(keep).sort()
    .map((name) => ({ name, b64: fs.readFileSync(path.join(dir, name)).toString('base64') }));
}
// Drops files onto the canvas as a browser does (a DragEvent whose DataTransfer carries File objects).
async function dropFiles(page, files) {
  await page.evaluate((files) => {
    const dt = new DataTransfer();
    for (const f of files) dt.items.add(new File([Uint8Array.from(atob(f.b64), (c) => c.charCodeAt(0))], f.name));
    const canvas = document.getElementById('canvas');
    for (const type of ['dragenter', 'dragover', 'drop'])
      canvas.dispatchEvent(new DragEvent(type, { dataTransfer: dt, bubbles: true, cancelable: true }));
  }, files);
}
// The Checkpoint window's texts as one string without white space (its lines wrap anywhere).
const checkpointTexts = (r) => r.texts.filter((t) => t.window.includes('###checkpoint')).map((t) => t.text).join('').replace(/\s+/g, '');
const says = (r, ...parts) => parts.every((p) => checkpointTexts(r).includes(p.replace(/\s+/g, '')));
const memfsModels = (page) => page.evaluate(() => {
  const out = [];
  try {
    for (const d of Module.FS.readdir('/models')) if (d !== '.' && d !== '..')
      for (const f of Module.FS.readdir('/models/' + d)) if (f !== '.' && f !== '..') out.push(d + '/' + f);
  } catch (e) { /* no /models yet */ }
  return out;
});

await check('a broken folder dropped onto the page gives the loader\'s error on screen; the page keeps running', async () => {
  const page = await open(browser, base, 'heads=4');
  const r = await page.settled((r) => r.heads.length > 0);
  // config.json alone: no weights.
  await dropFiles(page, folderPayload(fixture('gpt2_prefix_f32'), (n) => n === 'config.json'));
  const none = await page.settled((s) => s.checkpoint_error !== '', r.frame);
  expect(/safetensors/.test(none.checkpoint_error), 'error: ' + none.checkpoint_error);
  expect(says(none, 'Error:', 'safetensors'), 'the error is not in the Checkpoint window: ' + checkpointTexts(none));
  // A truncated model.safetensors: the header says more bytes than the file has.
  const files = folderPayload(fixture('gpt2_prefix_f32'), (n) => n === 'config.json' || n === 'model.safetensors');
  const whole = Buffer.from(files[1].b64, 'base64');
  files[1].b64 = whole.subarray(0, Math.floor(whole.length / 2)).toString('base64');
  await dropFiles(page, files);
  const cut = await page.settled((s) => s.checkpoint_error !== '' && s.checkpoint_error !== none.checkpoint_error, none.frame);
  expect(cut.checkpoint_error.includes('model.safetensors'), 'error: ' + cut.checkpoint_error);
  // A lying header: the word embedding's shape says twice the bytes its offsets give (same header length).
  const lying = Buffer.from(whole);
  const at = lying.indexOf('"shape":[64,16]');
  expect(at > 0 && at < 8 + Number(lying.readBigUInt64LE(0)), 'the fixture changed: no [64,16] in its header');
  lying.write('"shape":[64,32]', at);
  files[1].b64 = lying.toString('base64');
  await dropFiles(page, files);
  const lie = await page.settled((s) => s.checkpoint_error !== '' && s.checkpoint_error !== cut.checkpoint_error, cut.frame);
  expect(lie.checkpoint_error.includes('transformer.wte.weight'), 'error: ' + lie.checkpoint_error);
  expect(says(lie, 'transformer.wte.weight'), 'the error is not in the Checkpoint window: ' + checkpointTexts(lie));
  // Still running: a real click on a control still changes the scene.
  await page.mouse.click(...centre(lie, 'checkpoint.close'));
  const closed = await page.settled((s) => s.checkpoint_error === '' && !s.checkpoint_current && s.heads.length === 4, lie.frame);
  expect(closed.error === '', closed.error);
  expect(page.problems.length === 0, page.problems.join('\n'));
  await page.context().close();
});

// ---- training: the loss falls, the page keeps drawing -----------------------------------------------
// Start in the Training window (a real click) and run 200 steps: the loss must fall; the frames' wall-clock
// intervals (requestAnimationFrame) and the page's own work in its slowest frame are printed.
await check('200 training steps lower the loss; the frame times and the frames drawn are printed', async () => {
  const page = await open(browser, base, 'show-training');
  const { before: r, after: done, frames } = await trainTimingFrames(page, 200);
  const run = done.training.runs[0];
  const drawn = done.frames_drawn - r.frames_drawn, shown = done.frame - r.frame;
  expect(run.error === '', 'run error: ' + run.error);
  const losses = run.losses, mean = (a) => a.reduce((s, v) => s + v, 0) / a.length;
  expect(losses.length >= 20, `${losses.length} losses recorded`);
  const first = mean(losses.slice(0, 10)), last = mean(losses.slice(-10));
  const f = frameFigures(frames);
  console.log(`  ${run.step} steps, loss ${first.toFixed(3)} → ${last.toFixed(3)}; ${frames.length} frames, ` +
              `median ${f.median.toFixed(1)} ms, slowest ${f.slowest.toFixed(1)} ms, ${f.over100} over 100 ms; ` +
              `${drawn} of the page's ${shown} frames drawn`);
  expect(last < first, `the loss did not fall: ${first} → ${last}`);
  // Frame times are figures, not pass/fail (the brief: speed is shown by measurements, never by timed
  // tests): the wall-clock intervals above, and what the page itself does in its slowest frame (events,
  // the training's slice, drawing: the live record's slowest_frame_work_ms), with the machine's load.
  expect(done.slowest_frame_work_ms > 0, 'no frame work recorded');
  console.log(`  the page's own work: slowest frame ${done.slowest_frame_work_ms.toFixed(1)} ms (load average ` +
              `${os.loadavg()[0].toFixed(1)} on ${os.cpus().length} cores)`);
  expect(page.problems.length === 0, page.problems.join('\n'));
  await page.context().close();
});

await check("the window's own button opens the page's folder picker; a sharded checkpoint picked there opens as on the desktop", async () => {
  const page = await open(browser, base, 'heads=4');
  const r = await page.settled((r) => r.heads.length > 0);
  await dropFiles(page, folderPayload(fixture('gpt2_prefix_f32'), (n) => n === 'config.json'));  // opens the window
  const shown = await page.settled((s) => s.widgets['checkpoint.pick'] && s.checkpoint_error !== '', r.frame);
  const [chooser] = await Promise.all([page.waitForEvent('filechooser', { timeout: 30000 }),
                                       page.mouse.click(...centre(shown, 'checkpoint.pick'))]);
  expect(chooser.isMultiple(), 'the picker takes one file only');
  const dir = fixture('llama_gqa_bf16_sharded');
  await chooser.setFiles(dir);  // the folder itself, as the student picks it
  const opened = await page.settled((s) => s.checkpoint !== '' && s.heads.length > 0, shown.frame);
  const config = JSON.parse(fs.readFileSync(path.join(dir, 'config.json')));
  expect(opened.checkpoint === '/models/llama_gqa_bf16_sharded', 'opened ' + opened.checkpoint);
  expect(opened.checkpoint_error === '', opened.checkpoint_error);
  expect(opened.heads.length === config.num_attention_heads, `${opened.heads.length} heads, config says ${config.num_attention_heads}`);
  const groups = new Set(opened.heads.map((h) => h.kv_group));
  expect(groups.size === config.num_key_value_heads, `${groups.size} K/V groups, config says ${config.num_key_value_heads}`);
  const copied = await memfsModels(page);
  expect(copied.some((f) => f.endsWith('model-00003-of-00003.safetensors')) && copied.some((f) => f.endsWith('tokenizer.json')),
         'copied: ' + copied.join(', '));
  expect(page.problems.length === 0, page.problems.join('\n'));
  await page.context().close();
});

await check('a folder over the limit is refused before anything is copied, with its size and the limit', async () => {
  const page = await open(browser, base, 'heads=4');
  const r = await page.settled((r) => r.heads.length > 0);
  // The real limit (2 GiB) with a file of 2.1 GiB made of one 1 MiB block repeated (a Blob of Blobs
  // holds no copy of them): refused from the sizes alone.
  await page.evaluate(() => {
    const block = new Blob([new Uint8Array(1 << 20)]);
    const big = new File(Array(2150).fill(block), 'model.safetensors');
    const config = new File(['{"model_type": "gpt2"}'], 'config.json');
    return Module.attnscopePicker.copyFolder('huge', [config, big]);
  });
  const refused = await page.settled((s) => s.checkpoint_picker_refused, r.frame);
  expect(says(refused, 'huge', '2.10 GiB', '2.00 GiB', 'Nothing was copied'), 'window: ' + checkpointTexts(refused));
  expect(!refused.checkpoint_current && refused.heads.length === 4, 'the synthetic scene changed');
  expect((await memfsModels(page)).length === 0, 'files were copied');
  // A lowered limit (tests only) against a real fixture dropped as files: the same refusal.
  const limit = 20000;
  await page.evaluate((b) => Module._attnscope_web_set_folder_limit(b), limit);
  const files = folderPayload(fixture('gpt2_prefix_f32'));
  await dropFiles(page, files);
  const total = files.filter((f) => /\.(json|safetensors)$/.test(f.name)).reduce((n, f) => n + Buffer.from(f.b64, 'base64').length, 0);
  const again = await page.settled((s) => s.checkpoint_picker_refused && says(s, `${(total / 1024).toFixed(1)} KiB`), refused.frame);
  expect(says(again, `${(limit / 1024).toFixed(1)} KiB`), 'limit not said: ' + checkpointTexts(again));
  expect((await memfsModels(page)).length === 0, 'files were copied');
  expect(page.problems.length === 0, page.problems.join('\n'));
  if (process.env.ATTNSCOPE_WEB_SHOTS) await page.screenshot({ path: path.join(process.env.ATTNSCOPE_WEB_SHOTS, 'refused-en.png') });
  await page.context().close();
});

await check('in Chinese the picker and the refusal are in Chinese', async () => {
  const page = await open(browser, base, 'heads=4&lang=zh');
  const r = await page.settled((r) => r.heads.length > 0);
  await page.evaluate(() => Module._attnscope_web_set_folder_limit(20000));
  await dropFiles(page, folderPayload(fixture('gpt2_prefix_f32')));
  const refused = await page.settled((s) => s.checkpoint_picker_refused, r.frame);
  expect(says(refused, '没有复制任何文件', '32 位 WebAssembly', '19.5 KiB'), 'window: ' + checkpointTexts(refused));
  expect(refused.untranslated.length === 0, 'untranslated: ' + refused.untranslated.join(' | '));
  if (process.env.ATTNSCOPE_WEB_SHOTS) await page.screenshot({ path: path.join(process.env.ATTNSCOPE_WEB_SHOTS, 'refused-zh.png') });
  await page.context().close();
});

// ---- Save checkpoint in the browser: the saved folder as one zip download (app/core/zip_folder.h) ----
await check('Save checkpoint in the Training window gives one download: a zip of the saved folder', async () => {
  const page = await open(browser, base, 'show-training&train-settings=layers=1,d_model=16,heads=2,seq_len=12,batch=2,steps=4,snapshot_every=2');
  const form = await page.settled((s) => s.widgets['training.start']);
  await page.mouse.click(...centre(form, 'training.start'));
  const done = await page.settled((s) => s.training.runs.length === 1 && s.training.runs[0].state === 'finished' &&
                                         s.widgets['training.save'], form.frame, 120);
  const [download] = await Promise.all([page.waitForEvent('download', { timeout: 30000 }),
                                        page.mouse.click(...centre(done, 'training.save'))]);
  const name = download.suggestedFilename();
  expect(name.endsWith('.zip'), 'file ' + name);
  const zip = fs.readFileSync(await download.path());
  // The zip's central directory: its entries' names (APPNOTE: end record → directory → names).
  const end = zip.length - 22;
  expect(zip.readUInt32LE(end) === 0x06054b50, 'no end of central directory');
  const names = [];
  for (let at = zip.readUInt32LE(end + 16), i = 0; i < zip.readUInt16LE(end + 10); ++i) {
    const n = zip.readUInt16LE(at + 28);
    names.push(zip.subarray(at + 46, at + 46 + n).toString());
    at += 46 + n + zip.readUInt16LE(at + 30) + zip.readUInt16LE(at + 32);
  }
  const folder = name.replace(/\.zip$/, '');
  for (const f of ['config.json', 'model.safetensors', 'vocab.json', 'loss.csv'])
    expect(names.includes(folder + '/' + f), `${f} not in ${names.join(', ')}`);
  const after = await page.settled((s) => s.training.save_download !== '', done.frame);
  expect(after.training.save_download === name && after.training.save_download_error === '', JSON.stringify(after.training.save_download_error));
  expect(page.problems.length === 0, page.problems.join('\n'));
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
