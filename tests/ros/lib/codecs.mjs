// Pixels in and out of files and messages, written from the formats (not from depthmask's code):
// APC's rotated words, image_transport's compressedDepth (ConfigHeader + PNG / RVL, inverse-depth
// quantisation), RVL (Wilson 2017), float32 TIFF and .npy fixtures.
//
// Float arithmetic: the C++ side (like image_transport) works in `float`. Every float step here is
// wrapped in Math.fround, which makes it the float32 result: for + - * / of two float32 values the
// double result rounded once to float32 equals the float32 operation (double has > 2x24+2 bits), so
// fround(a / b) is C++'s `float / float` exactly. Values that are not float32 results never reach a
// fixture.
import { decode as decodePng, encode as encodePng } from "fast-png";
import jpeg from "jpeg-js";
import fs from "node:fs";

// ---------------------------------------------------------------- reading source images

/** A PNG file → {width, height, channels, depth (bits), data (Uint8Array | Uint16Array)}. */
export function readPng(file) {
  const img = decodePng(fs.readFileSync(file));
  if (img.palette) throw new Error(`${file}: indexed PNGs are not read here`);
  return { width: img.width, height: img.height, channels: img.channels, depth: img.depth, data: img.data };
}

/** APC's 16-bit words are deci-millimetres rotated left by 3 bits: rotate them back. */
export function unrotateApc(words) {
  const out = new Uint16Array(words.length);
  for (let i = 0; i < words.length; i++) {
    const w = words[i];
    out[i] = ((w >>> 3) | (w << 13)) & 0xffff;
  }
  return out;
}

/**
 * Source depth units (metres per unit) → 16UC1 millimetres, rounded half up, clamped to 65535.
 * Deci-millimetres (APC) are converted in integers: mm = floor((v + 5) / 10).
 */
export function toMillimetres(units, metresPerUnit) {
  const out = new Uint16Array(units.length);
  const ratio = metresPerUnit / 0.001;
  for (let i = 0; i < units.length; i++) {
    const v = units[i];
    let mm;
    if (metresPerUnit === 0.001) mm = v;
    else if (metresPerUnit === 0.0001) mm = Math.floor((v + 5) / 10);
    else mm = Math.round(v * ratio);
    out[i] = Math.min(mm, 65535);
  }
  return out;
}

/**
 * Source depth units → 32FC1 metres: float32(v / (1 / metresPerUnit)) when 1/metresPerUnit is an
 * integer (APC: v / 10000, RealSense: v / 1000), else float32(v * metresPerUnit). Unit 0 (no
 * measurement) becomes NaN (REP 118) or 0 with invalid "zero".
 */
export function toMetres(units, metresPerUnit, invalid = "nan") {
  const out = new Float32Array(units.length);
  const inv = Math.round(1 / metresPerUnit);
  const exact = Math.abs(inv * metresPerUnit - 1) < 1e-12;
  for (let i = 0; i < units.length; i++) {
    const v = units[i];
    if (v === 0) out[i] = invalid === "zero" ? 0 : NaN;
    else out[i] = exact ? Math.fround(v / inv) : Math.fround(v * metresPerUnit);
  }
  return out;
}

// ---------------------------------------------------------------- compressedDepth

/** image_transport's defaults (compressed_depth_image_transport): depth_max 10 m, quantisation 100. */
export const DEPTH_MAX = 10;
export const DEPTH_QUANTIZATION = 100;

/** The quantisation parameters as the encoder computes them in float: A = Z0 (Z0 + 1), B = 1 - A / max. */
export function quantParams(depthMax = DEPTH_MAX, z0 = DEPTH_QUANTIZATION) {
  const Z0 = Math.fround(z0);
  const max = Math.fround(depthMax);
  const A = Math.fround(Z0 * Math.fround(Z0 + 1));
  const B = Math.fround(1 - Math.fround(A / max));
  return { A, B, max };
}

/** 12 bytes: int32 format (0 = INV_DEPTH), float depthQuantA, float depthQuantB, little-endian. */
export function configHeader(A = 0, B = 0) {
  const b = Buffer.alloc(12);
  b.writeInt32LE(0, 0);
  b.writeFloatLE(A, 4);
  b.writeFloatLE(B, 8);
  return b;
}

/**
 * float32 metres → the inverse-depth words the encoder stores: q = uint16(A / d + B) for 0 < d <
 * depth_max (truncated, as C++'s float → unsigned short conversion; values past 65535 — depth nearer
 * than A / (65535 - B), 0.154 m with the defaults — are clamped to 65535 here, where C++ leaves it
 * undefined); NaN, 0, negative and d >= depth_max → 0.
 */
export function quantizeInverseDepth(metres, { A, B, max }) {
  const q = new Uint16Array(metres.length);
  for (let i = 0; i < metres.length; i++) {
    const d = metres[i];
    if (!(d > 0) || !(d < max)) continue;
    const v = Math.fround(Math.fround(A / d) + B);
    q[i] = v >= 65535 ? 65535 : Math.trunc(v);
  }
  return q;
}

/** The decoder: d = float(A / (float(q) - B)), q == 0 → NaN. */
export function dequantizeInverseDepth(q, A, B) {
  const out = new Float32Array(q.length);
  for (let i = 0; i < q.length; i++) out[i] = q[i] === 0 ? NaN : Math.fround(A / Math.fround(q[i] - B));
  return out;
}

/** 16UC1 compressedDepth drops depth past depth_max (mm > uint16(depth_max * 1000)) to 0. */
export function clipMillimetres(mm, depthMax = DEPTH_MAX) {
  const limit = Math.trunc(Math.fround(depthMax * 1000));
  return mm.map((v) => (v > limit ? 0 : v));
}

// ---------------------------------------------------------------- RVL (Wilson 2017)

/**
 * RVL: runs of zeros and of non-zeros, each run length and each non-zero value's zigzagged delta from
 * the previous non-zero value written as variable-length nibbles (3 data bits + a continuation bit,
 * most significant nibble of a 32-bit word first); the words are little-endian int32.
 */
export function rvlEncode(words) {
  const out = [];
  let word = 0;
  let nibbles = 0;
  const vle = (value) => {
    do {
      let nibble = value & 7;
      value >>>= 3;
      if (value) nibble |= 8;
      word = ((word << 4) | nibble) >>> 0;
      if (++nibbles === 8) {
        out.push(word);
        word = 0;
        nibbles = 0;
      }
    } while (value);
  };
  let i = 0;
  let previous = 0;
  const n = words.length;
  while (i < n) {
    let zeros = 0;
    while (i < n && words[i] === 0) i++, zeros++;
    vle(zeros);
    let nonzeros = 0;
    while (i + nonzeros < n && words[i + nonzeros] !== 0) nonzeros++;
    vle(nonzeros);
    for (let k = 0; k < nonzeros; k++, i++) {
      const delta = words[i] - previous;
      vle(((delta << 1) ^ (delta >> 31)) >>> 0);
      previous = words[i];
    }
  }
  if (nibbles) out.push((word << (4 * (8 - nibbles))) >>> 0);
  const b = Buffer.alloc(out.length * 4);
  out.forEach((w, k) => b.writeUInt32LE(w, 4 * k));
  return b;
}

export function rvlDecode(buf, count) {
  const out = new Uint16Array(count);
  let pos = 0;
  let word = 0;
  let nibbles = 0;
  const vle = () => {
    let value = 0;
    let shift = 0;
    let nibble;
    do {
      if (!nibbles) {
        if (pos + 4 > buf.length) throw new Error(`RVL stream ends at byte ${pos}`);
        word = buf.readUInt32LE(pos);
        pos += 4;
        nibbles = 8;
      }
      nibble = word >>> 28;
      value |= (nibble & 7) << shift;
      word = (word << 4) >>> 0;
      nibbles--;
      shift += 3;
    } while (nibble & 8);
    return value >>> 0;
  };
  let i = 0;
  let previous = 0;
  while (i < count) {
    const zeros = vle();
    if (i + zeros > count) throw new Error("RVL zero run past the image");
    i += zeros;
    const nonzeros = vle();
    if (i + nonzeros > count) throw new Error("RVL value run past the image");
    for (let k = 0; k < nonzeros; k++) {
      const positive = vle();
      const delta = (positive >>> 1) ^ -(positive & 1);
      previous = (previous + delta) & 0xffff;
      out[i++] = previous;
    }
  }
  return out;
}

/** compressedDepth payload: ConfigHeader + PNG of 16-bit words, or + width, height (uint32) + RVL. */
export function compressedDepthPayload(words, width, height, codec, A = 0, B = 0) {
  let body;
  if (codec === "png") body = Buffer.from(encodePng({ width, height, channels: 1, depth: 16, data: words }));
  else {
    const wh = Buffer.alloc(8);
    wh.writeUInt32LE(width, 0);
    wh.writeUInt32LE(height, 4);
    body = Buffer.concat([wh, rvlEncode(words)]);
  }
  return Buffer.concat([configHeader(A, B), body]);
}

/**
 * A CompressedImage's format and data → {encoding, width, height, pixels}: compressedDepth (16UC1
 * words, or 32FC1 metres dequantised in float), png, jpeg (jpeg-js's decode: other decoders may differ
 * by a level or two).
 */
export function decodeCompressed(format, data) {
  const buf = Buffer.from(data.buffer, data.byteOffset, data.byteLength);
  const semi = format.indexOf(";");
  const encoding = (semi < 0 ? format : format.slice(0, semi)).trim();
  const rest = semi < 0 ? "" : format.slice(semi + 1);
  if (rest.includes("compressedDepth")) {
    if (buf.length <= 12) throw new Error(`compressedDepth payload of ${buf.length} bytes has no image`);
    const A = buf.readFloatLE(4);
    const B = buf.readFloatLE(8);
    const body = buf.subarray(12);
    let words;
    let width;
    let height;
    if (rest.includes("compressedDepth rvl")) {
      width = body.readUInt32LE(0);
      height = body.readUInt32LE(4);
      words = rvlDecode(body.subarray(8), width * height);
    } else {
      const img = decodePng(body);
      if (img.channels !== 1 || img.depth !== 16) throw new Error("compressedDepth PNG is not 16-bit grey");
      ({ width, height } = img);
      words = img.data;
    }
    if (encoding === "32FC1") return { encoding, width, height, pixels: dequantizeInverseDepth(words, A, B), A, B };
    return { encoding: "16UC1", width, height, pixels: words };
  }
  if (/jpe?g/i.test(format)) {
    const img = jpeg.decode(buf, { useTArray: true, formatAsRGBA: false });
    return { encoding: "rgb8", width: img.width, height: img.height, pixels: img.data };
  }
  if (/png/i.test(format)) {
    const img = decodePng(buf);
    const enc = img.channels === 3 ? "rgb8" : img.channels === 1 ? (img.depth === 16 ? "16UC1" : "mono8") : "rgba8";
    return { encoding: enc, width: img.width, height: img.height, pixels: img.data };
  }
  throw new Error(`CompressedImage format '${format}' is not one read here`);
}

// ---------------------------------------------------------------- writing fixtures

export function writePng(file, width, height, channels, pixels) {
  const depth = pixels instanceof Uint16Array ? 16 : 8;
  fs.writeFileSync(file, encodePng({ width, height, channels, depth, data: pixels }));
}

export function encodePngRgb(width, height, rgb) {
  return encodePng({ width, height, channels: 3, depth: 8, data: rgb });
}

export function encodeJpeg(width, height, rgb, quality = 95) {
  const rgba = Buffer.alloc(width * height * 4);
  for (let i = 0, j = 0; i < rgb.length; i += 3, j += 4) {
    rgba[j] = rgb[i];
    rgba[j + 1] = rgb[i + 1];
    rgba[j + 2] = rgb[i + 2];
    rgba[j + 3] = 255;
  }
  return jpeg.encode({ data: rgba, width, height }, quality).data;
}

/** Little-endian bytes of a typed array (a copy: NaN payloads kept bit for bit). */
export function leBytes(arr) {
  return Buffer.from(arr.buffer.slice(arr.byteOffset, arr.byteOffset + arr.byteLength));
}

/**
 * A float32 TIFF (baseline, uncompressed, one strip, little-endian, SampleFormat 3), the float depth
 * file depthmask reads as metres.
 */
export function writeFloatTiff(file, width, height, metres) {
  const entries = [
    [256, 4, 1, width], // ImageWidth
    [257, 4, 1, height], // ImageLength
    [258, 3, 1, 32], // BitsPerSample
    [259, 3, 1, 1], // Compression: none
    [262, 3, 1, 1], // PhotometricInterpretation: BlackIsZero
    [273, 4, 1, 0], // StripOffsets (set below)
    [277, 3, 1, 1], // SamplesPerPixel
    [278, 4, 1, height], // RowsPerStrip
    [279, 4, 1, width * height * 4], // StripByteCounts
    [284, 3, 1, 1], // PlanarConfiguration: contiguous
    [339, 3, 1, 3], // SampleFormat: IEEE float
  ];
  const ifdSize = 2 + entries.length * 12 + 4;
  const pixelsAt = Math.ceil((8 + ifdSize) / 16) * 16;
  entries[5][3] = pixelsAt;
  const head = Buffer.alloc(pixelsAt);
  head.write("II", 0, "latin1");
  head.writeUInt16LE(42, 2);
  head.writeUInt32LE(8, 4);
  head.writeUInt16LE(entries.length, 8);
  entries.forEach(([tag, type, count, value], k) => {
    const e = 10 + 12 * k;
    head.writeUInt16LE(tag, e);
    head.writeUInt16LE(type, e + 2);
    head.writeUInt32LE(count, e + 4);
    if (type === 3) head.writeUInt16LE(value, e + 8);
    else head.writeUInt32LE(value, e + 8);
  });
  fs.writeFileSync(file, Buffer.concat([head, leBytes(metres)]));
}

/**
 * A .npy (format 1.0) of little-endian float32 in C order, its header laid out as depthmask's .npy
 * outputs are ("{'descr': '<f4', 'fortran_order': False, 'shape': (H, W), }" padded with spaces to a
 * 64-byte boundary, then '\n'), so equal pixels give equal files.
 */
export function npyBytes(width, height, f32bytes) {
  let header = `{'descr': '<f4', 'fortran_order': False, 'shape': (${height}, ${width}), }`;
  const unpadded = 10 + header.length + 1;
  header += " ".repeat((64 - (unpadded % 64)) % 64) + "\n";
  const head = Buffer.alloc(10);
  Buffer.from([0x93, 0x4e, 0x55, 0x4d, 0x50, 0x59, 1, 0]).copy(head, 0);
  head.writeUInt16LE(header.length, 8);
  return Buffer.concat([head, Buffer.from(header, "latin1"), f32bytes]);
}

/** A float32 .npy as depthmask writes it (npyBytes' layout): its size and pixels. Throws on another dtype. */
export function readNpy(file) {
  const b = fs.readFileSync(file);
  const headerLen = b.readUInt16LE(8);
  const header = b.subarray(10, 10 + headerLen).toString("latin1");
  if (!header.includes("'<f4'")) throw new Error(`${file}: expected float32, header ${header}`);
  const [h, w] = /\((\d+), (\d+)\)/.exec(header).slice(1).map(Number);
  const px = b.subarray(10 + headerLen);
  return { w, h, depth: new Float32Array(px.buffer.slice(px.byteOffset, px.byteOffset + px.length)) };
}
