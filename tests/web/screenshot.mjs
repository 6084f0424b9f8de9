// A screenshot of the browser build in headless Chromium (the README's picture of it, docs/web.png).
//   tests/web/run.sh --node tests/web/screenshot.mjs SITE_DIR OUT.png [LINK_PARAMETERS] [WIDTHxHEIGHT]
// Waits until the window's frame is settled (drive.mjs), then saves the page as the student sees it.
import { launch, serve, open } from './drive.mjs';

const [site, out, params = '', size = '1280x720'] = process.argv.slice(2);
const [width, height] = size.split('x').map(Number);
const browser = await launch();
const server = await serve(site);
const page = await open(browser, `http://127.0.0.1:${server.address().port}`, params, { width, height });
const r = await page.settled((r) => r.heads && r.heads.length > 0);
if (r.error) throw new Error('the window shows an error: ' + r.error);
await page.screenshot({ path: out });
console.log(`${out}: ${width}×${height}, ?${params}`);
server.close();
await browser.close();
