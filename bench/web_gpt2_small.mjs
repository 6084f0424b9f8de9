// The browser build with a GPT-2 small-sized checkpoint (issue 37: "GPT-2 small must" fit the page's 32-bit
// memory): bench/make_gpt2_small.py's folder (the real config and tokenizer, random float32 weights, 498 MB)
// dropped onto the page as files, as a student drops a downloaded folder, in headless Chromium.
//   tests/web/run.sh --node bench/web_gpt2_small.mjs SITE_DIR MODEL_DIR   (bench/web_gpt2_small.sh runs it)
// Prints one JSON line: seconds from the drop to the model's heads on screen, the page's WebAssembly memory
// then, the tokens of the default sentence; then a sentence of about 128 tokens typed into the Input
// window key by key (the seconds of typing, then from the last key until its heads are drawn) and a change
// of the Heads view's layer (seconds to pixels);
// the slowest frame's own work. Not a test: the machine's load moves the times.
import fs from 'node:fs';
import { launch, serve, open, centre } from './drive.mjs';

const [site, model] = process.argv.slice(2);
if (!site || !model) throw new Error('usage: web_gpt2_small.mjs SITE_DIR MODEL_DIR');
const browser = await launch();
const server = await serve(site, { '/model/': model });
const base = `http://127.0.0.1:${server.address().port}`;
const page = await open(browser, base, 'heads=4');  // a scene, not the first visit's lesson: the Input window is open
const first = await page.settled();
const names = fs.readdirSync(model).sort();
const bytes = names.reduce((n, f) => n + fs.statSync(`${model}/${f}`).size, 0);
// The files fetched into the page first (not timed: a student's disk), then dropped onto the canvas.
await page.evaluate(async (names) => {
  window.gpt2Files = [];
  for (const n of names) window.gpt2Files.push(new File([await (await fetch('/model/' + n)).blob()], n));
}, names);
const t0 = Date.now();
await page.evaluate(() => {
  const dt = new DataTransfer();
  for (const f of window.gpt2Files) dt.items.add(f);
  const canvas = document.getElementById('canvas');
  for (const type of ['dragenter', 'dragover', 'drop'])
    canvas.dispatchEvent(new DragEvent(type, { dataTransfer: dt, bubbles: true, cancelable: true }));
  window.gpt2Files = null;
});
const opened = await page.settled((r) => r.checkpoint_error !== '' || (r.checkpoint !== '' && r.heads.length === 12), first.frame, 600);
if (opened.checkpoint_error) throw new Error('the page refused the folder: ' + opened.checkpoint_error);
const open_s = (Date.now() - t0) / 1000;
const memory = await page.evaluate(() => Module.HEAPU8.length);
console.log(JSON.stringify({ folder_mb: +(bytes / 1e6).toFixed(0), open_s: +open_s.toFixed(2),
                             wasm_memory_mb: +(memory / 1048576).toFixed(0), heads: opened.heads.length }));
// The window's error after opening (e.g. a tokenizer the page could not load): said, and the run stops.
if (opened.error) {
  console.log(JSON.stringify({ error_after_open: opened.error }));
  server.close();
  await browser.close();
  process.exit(1);
}
// A sentence of about 128 GPT-2 tokens typed into the Input window.
const sentence = ('The quick brown fox jumps over the lazy dog while the teacher explains how every head of the ' +
  'model attends to the words before it. ').repeat(4).trim();
await page.mouse.click(...centre(opened, 'input.sentence'));
await page.keyboard.press('Control+a');
const t_type = Date.now();
// Typed key by key: the canvas reads keys and characters (GLFW's callbacks), not the input events that
// keyboard.insertText sends; those never reach the window.
await page.keyboard.type(sentence);
const t1 = Date.now();
const typing_s = (t1 - t_type) / 1000;  // the keys' own time: with a forward per key, minutes
const typed = await page.settled((r) => r.error !== '' || (r.heads.length === 12 && r.heads[0].tokens > opened.heads[0].tokens),
                                 opened.frame, 600).catch(async (e) => {
  const r = await page.record();  // what the window shows instead: its input and the heads' tokens
  const chips = r ? Object.keys(r.widgets).filter((id) => id.startsWith('input.token.')).length : 0;
  throw new Error(e.message + '\ntoken chips: ' + chips + ', heads[0].tokens: ' + JSON.stringify(r && r.heads[0] && r.heads[0].tokens) +
                  ', status: ' + JSON.stringify(r && r.status));
});
if (typed.error) {  // e.g. a tokenizer the page could not load: said, and the run stops
  console.log(JSON.stringify({ error_after_typing: typed.error }));
  server.close();
  await browser.close();
  process.exit(1);
}
const typed_s = (Date.now() - t1) / 1000;
// The Heads view's layer slider, clicked near its right end (a later layer).
const [x, y] = centre(typed, 'heads.layer');
const w = typed.widgets['heads.layer'].w;
const t2 = Date.now();
await page.mouse.click(x + w * 0.4, y);
const moved = await page.settled((r) => r.frame > typed.frame + 2, typed.frame, 600);
const layer_s = (Date.now() - t2) / 1000;
console.log(JSON.stringify({
  folder_mb: +(bytes / 1e6).toFixed(0), open_s: +open_s.toFixed(2), wasm_memory_mb: +(memory / 1048576).toFixed(0),
  default_tokens: opened.heads[0].tokens, typed_tokens: typed.heads[0].tokens, typing_s: +typing_s.toFixed(2), typed_to_heads_s: +typed_s.toFixed(2),
  layer_change_s: +layer_s.toFixed(2), slowest_frame_work_ms: moved.slowest_frame_work_ms, problems: page.problems,
}));
server.close();
await browser.close();
