// The served page's decoder (lib/live_serve/src/page.html, between "decoder: begin" and "decoder: end")
// checked in Node against independent implementations: PNGs written here with every filter type and
// by fast-png, the project's sample PNGs decoded by fast-png; CDR written by Foxglove's
// @foxglove/rosmsg2-serialization; the Foxglove message-data framing; and the reason legend against
// lib/codecs/include/depthmask/reason.h. Exit 0 when every check passes, 1 with the failures listed.
//   node tests/ros/page/decoder.test.mjs
import { decode as fastDecode, encode as fastEncode } from "fast-png";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import zlib from "node:zlib";

import { serialize } from "../lib/msgs.mjs";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../..");

/** The page's decoder functions, evaluated from its own text. */
export function loadDecoder(file = path.join(root, "lib/live_serve/src/page.html")) {
  const html = fs.readFileSync(file, "utf8");
  const m = html.match(/\/\/ --- decoder: begin[^\n]*\n([\s\S]*?)\/\/ --- decoder: end ---/);
  if (!m) throw new Error(file + ": no '// --- decoder: begin' ... '// --- decoder: end ---' block");
  const names = ["REASONS", "SCALE", "scaleColor", "parseBinary", "CdrReader", "readCompressedImage", "readImage",
                 "imageFloats", "inflateZlib", "unfilter", "decodePng"];
  return new Function(`"use strict";\n${m[1]}\nreturn { ${names.join(", ")} };`)();
}

const D = loadDecoder();
const failures = [];
let checks = 0;
async function check(name, fn) {
  ++checks;
  try {
    await fn();
  } catch (e) {
    failures.push(`${name}: ${e.message}`);
  }
}

// --- PNGs written here: each row with its own filter (the encoding direction, from the spec) ---

function crc32(bytes) {
  let c = ~0;
  for (const b of bytes) {
    c ^= b;
    for (let k = 0; k < 8; ++k) c = (c >>> 1) ^ (0xedb88320 & -(c & 1));
  }
  return ~c >>> 0;
}

function chunk(type, body) {
  const out = Buffer.alloc(12 + body.length);
  out.writeUInt32BE(body.length, 0);
  out.write(type, 4, "latin1");
  Buffer.from(body).copy(out, 8);
  out.writeUInt32BE(crc32(out.subarray(4, 8 + body.length)), 8 + body.length);
  return out;
}

function paeth(a, b, c) {
  const p = a + b - c, pa = Math.abs(p - a), pb = Math.abs(p - b), pc = Math.abs(p - c);
  return pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
}

/** A PNG of raw big-endian sample bytes `rows` (height rows of rowBytes), row y filtered with
 * filters[y % filters.length], its zlib stream split into `idats` IDAT chunks. */
function writePng({ width, height, bitDepth, colorType, channels }, rows, filters, idats = 1) {
  const bpp = Math.max(1, (channels * bitDepth) / 8), rowBytes = (width * channels * bitDepth) / 8;
  const raw = Buffer.alloc(height * (rowBytes + 1));
  for (let y = 0; y < height; ++y) {
    const f = filters[y % filters.length];
    raw[y * (rowBytes + 1)] = f;
    for (let i = 0; i < rowBytes; ++i) {
      const x = rows[y * rowBytes + i], a = i >= bpp ? rows[y * rowBytes + i - bpp] : 0;
      const b = y > 0 ? rows[(y - 1) * rowBytes + i] : 0, c = i >= bpp && y > 0 ? rows[(y - 1) * rowBytes + i - bpp] : 0;
      const pred = [0, a, b, (a + b) >> 1, paeth(a, b, c)][f];
      raw[y * (rowBytes + 1) + 1 + i] = (x - pred) & 255;
    }
  }
  const z = zlib.deflateSync(raw);
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0);
  ihdr.writeUInt32BE(height, 4);
  ihdr[8] = bitDepth;
  ihdr[9] = colorType;
  const parts = [Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), chunk("IHDR", ihdr)];
  const step = Math.ceil(z.length / idats);
  for (let at = 0; at < z.length; at += step) parts.push(chunk("IDAT", z.subarray(at, at + step)));
  parts.push(chunk("IEND", Buffer.alloc(0)));
  return new Uint8Array(Buffer.concat(parts));
}

function randomSamples(n, bits, seed) {
  let s = seed >>> 0;
  const next = () => ((s = (Math.imul(s, 1664525) + 1013904223) >>> 0) >>> (32 - bits));
  return bits === 16 ? Uint16Array.from({ length: n }, next) : Uint8Array.from({ length: n }, next);
}

function bigEndianBytes(samples16) {
  const out = new Uint8Array(samples16.length * 2);
  samples16.forEach((v, i) => { out[2 * i] = v >> 8; out[2 * i + 1] = v & 255; });
  return out;
}

const sizes = [[1, 1], [13, 1], [1, 13], [33, 31], [64, 48]];
const filterSets = [[0], [1], [2], [3], [4], [0, 1, 2, 3, 4]];

for (const [width, height] of sizes) {
  for (const filters of filterSets) {
    const tag = `${width}x${height} filters ${filters.join("")}`;
    await check(`16-bit grey ${tag}`, async () => {
      const px = randomSamples(width * height, 16, width * 7 + height);
      const png = writePng({ width, height, bitDepth: 16, colorType: 0, channels: 1 }, bigEndianBytes(px), filters, 3);
      const got = await D.decodePng(png);
      assert.equal(got.bitDepth, 16);
      assert.deepEqual([got.width, got.height, got.channels], [width, height, 1]);
      assert.deepEqual(got.data, px);
      assert.deepEqual(Uint16Array.from(fastDecode(png).data), px, "fast-png reads the test's PNG alike");
    });
    await check(`8-bit grey ${tag}`, async () => {
      const px = randomSamples(width * height, 8, width + 11 * height);
      const got = await D.decodePng(writePng({ width, height, bitDepth: 8, colorType: 0, channels: 1 }, px, filters));
      assert.deepEqual(got.data, px);
    });
    await check(`8-bit RGB ${tag}`, async () => {
      const px = randomSamples(width * height * 3, 8, width * height + 5);
      const got = await D.decodePng(writePng({ width, height, bitDepth: 8, colorType: 2, channels: 3 }, px, filters));
      assert.equal(got.channels, 3);
      assert.deepEqual(got.data, px);
    });
  }
}

await check("fast-png's own 16-bit and 8-bit PNGs", async () => {
  const depth = randomSamples(97 * 61, 16, 3);
  let got = await D.decodePng(fastEncode({ width: 97, height: 61, data: depth, depth: 16, channels: 1 }));
  assert.deepEqual(got.data, depth);
  const mask = Uint8Array.from({ length: 97 * 61 }, (_, i) => ((i % 97) > 40 ? 255 : 0));
  got = await D.decodePng(fastEncode({ width: 97, height: 61, data: mask, depth: 8, channels: 1 }));
  assert.deepEqual(got.data, mask);
});

// The committed sample: 16-bit depth and 8-bit masks written by libpng (adaptive filters).
const sample = path.join(root, "data/sample");
for (const dir of ["depth", "mask", "color"]) {
  const files = fs.readdirSync(path.join(sample, dir)).filter((f) => f.endsWith(".png")).slice(0, 3);
  for (const f of files)
    await check(`data/sample/${dir}/${f} as fast-png reads it`, async () => {
      const bytes = new Uint8Array(fs.readFileSync(path.join(sample, dir, f)));
      const want = fastDecode(bytes), got = await D.decodePng(bytes);
      assert.deepEqual([got.width, got.height, got.bitDepth, got.channels],
                       [want.width, want.height, want.depth, want.channels]);
      assert.deepEqual(Array.from(got.data), Array.from(want.data));
    });
}

await check("broken PNGs are refused with a message", async () => {
  const good = writePng({ width: 4, height: 3, bitDepth: 8, colorType: 0, channels: 1 }, new Uint8Array(12), [0]);
  await assert.rejects(D.decodePng(new Uint8Array([1, 2, 3])), /not a PNG/);
  await assert.rejects(D.decodePng(good.subarray(0, 40)), /runs past the end|without IHDR/);
  const badFilter = writePng({ width: 4, height: 3, bitDepth: 8, colorType: 0, channels: 1 }, new Uint8Array(12), [0]);
  // Rewrite the filter byte of row 1 to 7 and the stream after it (zlib of the edited rows).
  const raw = Buffer.alloc(15);
  raw[5] = 7;
  const edited = writePngFromRaw(badFilter, raw);
  await assert.rejects(D.decodePng(edited), /filter type 7/);
  const palette = writePng({ width: 4, height: 3, bitDepth: 8, colorType: 3, channels: 1 }, new Uint8Array(12), [0]);
  await assert.rejects(D.decodePng(palette), /not palette/);
});

/** `png` with its IDAT replaced by zlib(raw). */
function writePngFromRaw(png, raw) {
  const ihdr = png.subarray(8, 8 + 25);
  return new Uint8Array(Buffer.concat([Buffer.from(png.subarray(0, 8)), Buffer.from(ihdr),
    chunk("IDAT", zlib.deflateSync(raw)), chunk("IEND", Buffer.alloc(0))]));
}

// --- CDR, as Foxglove's serializer writes it ---

for (const frameId of ["", "c", "cam", "camera", "depthmask_camera"]) {
  await check(`CompressedImage, frame_id '${frameId}'`, () => {
    const data = Uint8Array.from({ length: 37 }, (_, i) => (i * 29) & 255);
    const msg = { header: { stamp: { sec: 1733362800, nanosec: 123456789 }, frame_id: frameId }, format: "png", data };
    const got = D.readCompressedImage(serialize("sensor_msgs/msg/CompressedImage", msg));
    assert.deepEqual(got.header, msg.header);
    assert.equal(got.format, "png");
    assert.deepEqual(Array.from(got.data), Array.from(data));
  });
  await check(`Image 32FC1, frame_id '${frameId}'`, () => {
    const width = 5, height = 3, step = 24;  // 4 bytes of padding a row
    const values = [0.5, NaN, 1.25, 3.75, 0, -1, 2.5, NaN, 9.75, 0.001, 1, 2, 3, 4, 5];
    const bytes = new Uint8Array(step * height);
    const dv = new DataView(bytes.buffer);
    values.forEach((v, i) => dv.setFloat32(Math.floor(i / width) * step + 4 * (i % width), v, true));
    const msg = { header: { stamp: { sec: -2, nanosec: 7 }, frame_id: frameId }, height, width, encoding: "32FC1",
                  is_bigendian: 0, step, data: bytes };
    const img = D.readImage(serialize("sensor_msgs/msg/Image", msg));
    assert.deepEqual([img.height, img.width, img.encoding, img.is_bigendian, img.step], [height, width, "32FC1", 0, step]);
    assert.deepEqual(img.header, msg.header);
    assert.deepEqual(Array.from(D.imageFloats(img)), values.map((v) => Math.fround(v)));
  });
}

await check("big-endian 32FC1 and truncated CDR", () => {
  const bytes = new Uint8Array(8);
  new DataView(bytes.buffer).setFloat32(0, 1.5, false);
  new DataView(bytes.buffer).setFloat32(4, NaN, false);
  const msg = { header: { stamp: { sec: 0, nanosec: 0 }, frame_id: "x" }, height: 1, width: 2, encoding: "32FC1",
                is_bigendian: 1, step: 8, data: bytes };
  const cdr = serialize("sensor_msgs/msg/Image", msg);
  const floats = D.imageFloats(D.readImage(cdr));
  assert.equal(floats[0], 1.5);
  assert.ok(Number.isNaN(floats[1]));
  assert.throws(() => D.readImage(cdr.subarray(0, cdr.length - 3)), /runs past/);
  assert.throws(() => D.readImage(new Uint8Array([1, 1, 0, 0])), /encapsulation/);
  assert.throws(() => D.imageFloats({ ...D.readImage(cdr), encoding: "16UC1" }), /expected 32FC1/);
});

await check("message data framing", () => {
  const payload = [9, 8, 7];
  const buf = new Uint8Array(13 + payload.length);
  const dv = new DataView(buf.buffer);
  buf[0] = 1;
  dv.setUint32(1, 42, true);
  dv.setBigUint64(5, 1733362800123456789n, true);
  buf.set(payload, 13);
  const m = D.parseBinary(buf.buffer);
  assert.equal(m.op, 1);
  assert.equal(m.subscriptionId, 42);
  assert.equal(m.timestamp, 1733362800123456789n);
  assert.deepEqual(Array.from(m.payload), payload);
  assert.throws(() => D.parseBinary(new Uint8Array([1, 0, 0]).buffer), /at least 13/);
  assert.equal(D.parseBinary(new Uint8Array([2, 1, 0, 0, 0, 0, 0, 0, 0]).buffer).timestamp, 1n);
});

await check("the reason legend is reason.h's kReasonStyles", () => {
  const h = fs.readFileSync(path.join(root, "lib/codecs/include/depthmask/reason.h"), "utf8");
  const rows = [...h.matchAll(/\{"([^"]+)", (\d+), (\d+), (\d+)\}/g)].map((m) => [m[1], +m[2], +m[3], +m[4]]);
  assert.ok(rows.length >= 9, "reason.h lists " + rows.length + " styles");
  assert.deepEqual(D.REASONS, rows);
});

await check("the colour scale's ends and clamping", () => {
  assert.deepEqual(D.scaleColor(0), D.SCALE[0]);
  assert.deepEqual(D.scaleColor(1), D.SCALE[D.SCALE.length - 1]);
  assert.deepEqual(D.scaleColor(-3), D.SCALE[0]);
  assert.deepEqual(D.scaleColor(7), D.SCALE[D.SCALE.length - 1]);
});

if (failures.length) {
  console.log(`page decoder: ${failures.length} of ${checks} checks FAILED:\n  ` + failures.join("\n  "));
  process.exit(1);
}
console.log(`page decoder: ${checks} checks passed`);
