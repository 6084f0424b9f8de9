// A PNG reader for the browser tests: 8-bit grey, RGB or RGBA, not interlaced (what attnscope's
// exports are: engine/src/figure/png.cpp through stb). Returns { width, height, rgba } with 4 bytes a pixel.
import zlib from 'node:zlib';

export function readPng(bytes) {
  if (bytes.subarray(1, 4).toString() !== 'PNG') throw new Error('not a PNG');
  let offset = 8, width = 0, height = 0, depth = 0, colour = 0, interlace = 0;
  const data = [];
  while (offset < bytes.length) {
    const length = bytes.readUInt32BE(offset), type = bytes.subarray(offset + 4, offset + 8).toString();
    const body = bytes.subarray(offset + 8, offset + 8 + length);
    if (type === 'IHDR') {
      width = body.readUInt32BE(0), height = body.readUInt32BE(4), depth = body[8], colour = body[9], interlace = body[12];
    } else if (type === 'IDAT') {
      data.push(body);
    } else if (type === 'IEND') {
      break;
    }
    offset += 12 + length;
  }
  const channels = { 0: 1, 2: 3, 6: 4 }[colour];
  if (depth !== 8 || !channels || interlace) throw new Error(`PNG kind not read here: depth ${depth}, colour ${colour}, interlace ${interlace}`);
  const raw = zlib.inflateSync(Buffer.concat(data));
  const stride = width * channels, rows = Buffer.alloc(stride * height);
  for (let y = 0; y < height; ++y) {
    const filter = raw[y * (stride + 1)], line = raw.subarray(y * (stride + 1) + 1, (y + 1) * (stride + 1));
    for (let i = 0; i < stride; ++i) {
      const a = i >= channels ? rows[y * stride + i - channels] : 0;
      const b = y > 0 ? rows[(y - 1) * stride + i] : 0;
      const c = y > 0 && i >= channels ? rows[(y - 1) * stride + i - channels] : 0;
      let v = line[i];
      if (filter === 1) v += a;
      else if (filter === 2) v += b;
      else if (filter === 3) v += (a + b) >> 1;
      else if (filter === 4) {
        const p = a + b - c, pa = Math.abs(p - a), pb = Math.abs(p - b), pc = Math.abs(p - c);
        v += pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
      }
      rows[y * stride + i] = v & 255;
    }
  }
  const rgba = Buffer.alloc(width * height * 4);
  for (let p = 0; p < width * height; ++p) {
    const s = rows.subarray(p * channels, p * channels + channels);
    rgba[p * 4] = s[0];
    rgba[p * 4 + 1] = channels >= 3 ? s[1] : s[0];
    rgba[p * 4 + 2] = channels >= 3 ? s[2] : s[0];
    rgba[p * 4 + 3] = channels === 4 ? s[3] : 255;
  }
  return { width, height, rgba };
}
