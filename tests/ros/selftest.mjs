#!/usr/bin/env node
// selftest.mjs: the checker checked on its own, with no depthmask: make_bag.mjs → read_bag.mjs for
// every option, the dumped pixels equal to the fixtures, the codecs against hand-worked cases, and
// read_bag refusing broken bags. With the real APC captures (../shared/data beside the repository,
// or --data DIR) it also bags them and checks the dataset README's reference counts.
// Exit 0: all passed; 1: a check failed. Run by ctest as ros_js_selftest.
import { decode as decodePng } from "fast-png";
import jpeg from "jpeg-js";
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

import * as C from "./lib/codecs.mjs";

const here = path.dirname(fileURLToPath(import.meta.url));
const args = process.argv.slice(2);
const keep = args.includes("--keep");
const dataArg = args.indexOf("--data");
const dataRoot = dataArg >= 0 ? args[dataArg + 1] : path.resolve(here, "../../../shared/data");
const work = fs.mkdtempSync(path.join(os.tmpdir(), "ros-selftest-"));
let failures = 0;
let passes = 0;

function ok(cond, what) {
  if (cond) passes++;
  else {
    failures++;
    console.error(`FAIL: ${what}`);
  }
  return cond;
}

function node(script, argv, expectFail = false) {
  try {
    const out = execFileSync(process.execPath, [path.join(here, script), ...argv], { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"], maxBuffer: 1 << 28 });
    if (expectFail) return { ok: false, err: "it succeeded" };
    return { ok: true, out };
  } catch (e) {
    if (expectFail) return { ok: true, err: String(e.stderr) };
    throw new Error(`${script} ${argv.join(" ")} failed:\n${e.stderr}`);
  }
}

// ---------------------------------------------------------------- codecs by hand

function codecCases() {
  // RVL of [0, 0, 5]: zeros 2 → nibble 2; nonzeros 1 → nibble 1; delta 5 zigzagged to 10 → nibbles
  // 2|8 then 1: the word 0x21A1 shifted up to the top, 0x21A10000, stored little-endian.
  const rvl = C.rvlEncode(new Uint16Array([0, 0, 5]));
  ok(rvl.equals(Buffer.from([0x00, 0x00, 0xa1, 0x21])), `RVL of [0,0,5] is ${rvl.toString("hex")}, expected 0000a121`);
  let seed = 7;
  const rand = () => ((seed = (seed * 1103515245 + 12345) >>> 0) >>> 8) / (1 << 24);
  const words = Uint16Array.from({ length: 5000 }, () => (rand() < 0.3 ? 0 : Math.floor(rand() * 65536)));
  ok(Buffer.from(C.rvlDecode(C.rvlEncode(words), words.length).buffer).equals(Buffer.from(words.buffer)), "RVL round trip of 5000 random words");
  // compressedDepth's quantisation parameters with image_transport's defaults: A = 100 x 101,
  // B = 1 - 10100 / 10.
  const q = C.quantParams();
  ok(q.A === 10100 && q.B === -1009, `quantParams A ${q.A} B ${q.B}, expected 10100, -1009`);
  // 1 m: q = trunc(10100 / 1 - 1009) = 9091; back: 10100 / (9091 + 1009) = 1 exactly.
  const w = C.quantizeInverseDepth(new Float32Array([1, NaN, 0, 10, 0.1, 0.5]), q);
  ok(Array.from(w).join() === "9091,0,0,0,65535,19191", `quantised [1, NaN, 0, 10, 0.1, 0.5] is ${Array.from(w)}`);
  const d = C.dequantizeInverseDepth(w, q.A, q.B);
  ok(d[0] === 1 && Number.isNaN(d[1]) && d[5] === Math.fround(10100 / 20200), `dequantised ${Array.from(d)}`);
  // APC: 1234 deci-mm rotated left by 3 is 9872; back to 1234, to mm 123 (half up: 1235 → 124).
  ok(C.unrotateApc(new Uint16Array([9872]))[0] === 1234, "APC un-rotation of 9872");
  ok(Array.from(C.toMillimetres(new Uint16Array([1234, 1235, 0]), 0.0001)).join() === "123,124,0", "deci-mm → mm rounding");
  const m = C.toMetres(new Uint16Array([1234, 0]), 0.0001);
  ok(m[0] === Math.fround(0.1234) && Number.isNaN(m[1]), "deci-mm → metres (float32, 0 → NaN)");
}

// ---------------------------------------------------------------- synthetic frames

/** Three frames of an awkward size (33x31) with holes: frames 0 and 1 APC-rotated deci-millimetres
 * (0.09..6.5 m), frame 2 plain millimetres up to 12 m (past compressedDepth's 10 m); a label mask;
 * RGB colour. */
function syntheticSpec(dir) {
  const W = 33;
  const H = 31;
  const frames = [];
  for (let f = 0; f < 3; f++) {
    const apc = f < 2;
    const words = new Uint16Array(W * H);
    const mask = new Uint8Array(W * H);
    const rgb = new Uint8Array(W * H * 3);
    for (let y = 0; y < H; y++)
      for (let x = 0; x < W; x++) {
        const i = y * W + x;
        const hole = (x + y + f) % 7 === 0;
        const v = hole ? 0 : apc ? 900 + ((x * 3617 + y * 977 + f * 131) % 64000) : 90 + ((x * 397 + y * 211) % 11910);
        words[i] = apc ? ((v << 3) | (v >>> 13)) & 0xffff : v;
        mask[i] = x > 10 && y > 8 ? 48 * (1 + ((x + f) % 3)) : 0;
        rgb.set([(x * 7 + f) & 255, (y * 9) & 255, (x * y) & 255], 3 * i);
      }
    const p = (n) => path.join(dir, `${n}-${f}.png`);
    C.writePng(p("depth"), W, H, 1, words);
    C.writePng(p("mask"), W, H, 1, mask);
    C.writePng(p("color"), W, H, 3, rgb);
    frames.push({ depth: `depth-${f}.png`, apc, mask: `mask-${f}.png`, color: `color-${f}.png` });
  }
  const spec = { intrinsics: { fx: 30.5, fy: 30.25, cx: 16.5, cy: 15.0 }, frames };
  fs.writeFileSync(path.join(dir, "spec.json"), JSON.stringify(spec));
  return path.join(dir, "spec.json");
}

function pngPixels(file) {
  const img = decodePng(fs.readFileSync(file));
  return { width: img.width, height: img.height, channels: img.channels, bytes: Buffer.from(img.data.buffer, img.data.byteOffset, img.data.byteLength) };
}

/** Pixels of a fixture file or a dump file, as bytes to compare. */
function filePixels(file) {
  const b = fs.readFileSync(file);
  if (file.endsWith(".npy")) return { bytes: b.subarray(10 + b.readUInt16LE(8)) };
  if (file.endsWith(".tiff")) return { bytes: b.subarray(b.readUInt32LE(8 + 2 + 5 * 12 + 8)) }; // StripOffsets, the 6th entry
  if (file.endsWith(".jpg")) {
    const img = jpeg.decode(b, { useTArray: true, formatAsRGBA: false });
    return { bytes: Buffer.from(img.data) };
  }
  return pngPixels(file);
}

/** make_bag with `opts`, read_bag over it; every dumped image equal to its fixture. */
function roundTrip(spec, name, opts, expect) {
  const out = path.join(work, name);
  node("make_bag.mjs", [spec, out, ...opts]);
  const manifest = JSON.parse(fs.readFileSync(path.join(out, "manifest.json"), "utf8"));
  const dump = path.join(out, "dump");
  node("read_bag.mjs", [path.join(out, manifest.bag), "--dump", dump, "--out", path.join(out, "summary.json")]);
  const s = JSON.parse(fs.readFileSync(path.join(out, "summary.json"), "utf8"));
  const what = `[${name}: ${opts.join(" ")}]`;
  ok(s.metadata?.checked && s.metadata.version === 5, `${what} metadata.yaml v5 checked`);
  ok(s.files.length === (expect.files ?? 1), `${what} ${s.files.length} storage files`);
  for (const f of s.files) {
    if (f.storage !== "mcap") continue;
    ok(f.profile === "ros2", `${what} profile`);
    if (expect.indexed !== undefined) ok(f.indexed === expect.indexed, `${what} indexed ${f.indexed}`);
    if (expect.chunks !== undefined) ok((f.chunks > 0) === expect.chunks, `${what} chunks ${f.chunks}`);
    if (expect.compression) ok(f.chunk_compression.join() === expect.compression, `${what} chunk compression ${f.chunk_compression}`);
    ok(f.data_section_crc === "checked", `${what} data section CRC checked`);
  }
  const T = manifest.topics;
  for (const t of s.topics) ok(t.offered_qos_profiles, `${what} ${t.name} has offered_qos_profiles`);
  ok(s.topics.length === Object.keys(T).length, `${what} ${s.topics.length} topics`);
  const byTopic = (role) => s.messages.filter((m) => m.topic === T[role].name);
  const frames = manifest.frames;
  for (const role of ["depth", "mask", "color"]) {
    if (!T[role]) continue;
    const msgs = byTopic(role);
    ok(msgs.length === frames.length, `${what} ${msgs.length} ${role} messages`);
    msgs.forEach((m, i) => {
      const fr = frames.find((f) => f[`${role}_stamp_ns`] === m.stamp_ns);
      if (!ok(fr, `${what} ${role} message ${i} stamp ${m.stamp_ns} is a frame's`)) return;
      if (expect.encoding && role === "depth") ok(m.encoding === expect.encoding, `${what} depth decodes as ${m.encoding}`);
      const a = filePixels(path.join(out, "fixture", fr[role]));
      const b = filePixels(path.join(dump, m.dump));
      ok(a.bytes.equals(b.bytes), `${what} ${role} ${fr.id}: the bag's pixels equal the fixture's`);
      if (expect.jitter_ms && role !== "depth") ok(Math.abs(Number(BigInt(m.stamp_ns) - BigInt(fr.depth_stamp_ns))) <= expect.jitter_ms * 1e6, `${what} ${role} jitter within ${expect.jitter_ms} ms`);
    });
  }
  const info = byTopic("camera_info");
  ok(info.length === frames.length && info.every((m, i) => m.stamp_ns === byTopic("depth")[i].stamp_ns), `${what} one camera_info per depth frame, same stamps`);
  return { out, manifest, summary: s };
}

function matrix(spec) {
  const runs = [
    ["u16-zstd", [], { indexed: true, chunks: true, compression: "zstd", encoding: "16UC1" }],
    ["f32-lz4", ["--depth", "32FC1", "--compression", "lz4"], { compression: "lz4", encoding: "32FC1" }],
    ["f32-zero-none", ["--depth", "32FC1", "--float-invalid", "zero", "--compression", "none"], { compression: "none" }],
    ["mono16-jpeg", ["--depth", "mono16", "--color", "jpeg"], { encoding: "mono16" }],
    ["cd-png", ["--depth", "compressedDepth-png", "--color", "png"], { encoding: "16UC1" }],
    ["cd-png-f32", ["--depth", "compressedDepth-png-32FC1"], { encoding: "32FC1" }],
    ["cd-rvl", ["--depth", "compressedDepth-rvl", "--color", "bgr8"], { encoding: "16UC1" }],
    ["cd-rvl-f32", ["--depth", "compressedDepth-rvl-32FC1", "--mask", "16UC1"], { encoding: "32FC1" }],
    ["no-index", ["--no-index"], { indexed: false, chunks: true }],
    ["no-chunks", ["--no-chunks"], { indexed: false, chunks: false }],
    ["no-chunks-no-index", ["--no-chunks", "--no-index", "--depth", "32FC1"], { indexed: false, chunks: false }],
    ["split2-jitter", ["--split", "2", "--jitter-ms", "7", "--seed", "3"], { files: 2, jitter_ms: 7 }],
    ["bigendian-padded", ["--bigendian", "--step-padding", "6", "--depth", "32FC1", "--mask", "mono16"], {}],
    ["msg-zstd", ["--message-compression", "zstd", "--compression", "none"], {}],
    ["sqlite3", ["--storage", "sqlite3"], {}],
    ["sqlite4-split", ["--storage", "sqlite3", "--sqlite-schema", "4", "--split", "2", "--depth", "compressedDepth-png-32FC1", "--color", "jpeg"], { files: 2 }],
  ];
  const results = {};
  for (const [name, opts, expect] of runs) results[name] = roundTrip(spec, name, opts, expect);
  // The step padding and byte order reached the messages.
  const be = results["bigendian-padded"].summary.messages.find((m) => m.encoding === "32FC1");
  ok(be.is_bigendian === 1 && be.step === 33 * 4 + 6, `big-endian padded depth: is_bigendian ${be.is_bigendian}, step ${be.step}`);
  // 16UC1 holds rounded millimetres of the APC words; compressedDepth 16UC1 drops depth past 10 m.
  const mm = filePixels(path.join(results["u16-zstd"].out, "fixture", results["u16-zstd"].manifest.frames[2].depth)).bytes;
  const cd = filePixels(path.join(results["cd-png"].out, "fixture", results["cd-png"].manifest.frames[2].depth)).bytes;
  let far = 0;
  let agree = true;
  for (let i = 0; i < mm.length; i += 2) {
    const a = mm.readUInt16LE(i);
    const b = cd.readUInt16LE(i);
    if (a > 10000) far += b === 0 ? 1 : 0;
    else agree &&= a === b;
  }
  ok(far > 0 && agree, `compressedDepth 16UC1: ${far} pixels past 10 m dropped, the rest kept`);
  // compressedDepth 32FC1 is within one quantisation step (d^2 / A) of the float depth.
  let worst = 0;
  for (let k = 0; k < 3; k++) {
    const f32 = filePixels(path.join(results["f32-lz4"].out, "fixture", results["f32-lz4"].manifest.frames[k].depth)).bytes;
    const q32 = filePixels(path.join(results["cd-png-f32"].out, "fixture", results["cd-png-f32"].manifest.frames[k].depth)).bytes;
    for (let i = 0; i < f32.length; i += 4) {
    const d = f32.readFloatLE(i);
    const e = q32.readFloatLE(i);
      if (d > 0.155 && d < 10) worst = Math.max(worst, Math.abs(e - d) / ((d * d) / 10100));
    }
  }
  ok(worst > 0 && worst <= 1.001, `compressedDepth 32FC1 error ≤ one step (worst ${worst.toFixed(3)} steps)`);
  return results;
}

// ---------------------------------------------------------------- read_bag refuses broken bags

function refusals(base, flat) {
  const cases = [];
  const variant = (name, mutate, expectMsg, from = base) => {
    const bag = path.join(from.out, from.manifest.bag);
    const file = path.join(from.out, from.manifest.files[0]);
    const bytes = fs.readFileSync(file);
    const dir = path.join(work, `bad-${name}`);
    fs.cpSync(bag, dir, { recursive: true });
    mutate(dir, path.join(dir, path.basename(file)), bytes);
    cases.push([name, dir, expectMsg]);
  };
  // A byte inside the first chunk's compressed records (past the Header record).
  variant("flipped-byte", (d, f, bytes) => {
    const b = Buffer.from(bytes);
    b[Math.floor(b.length / 3)] ^= 0x55;
    fs.writeFileSync(f, b);
  }, /CRC|decompress|zstd|Incorrect|invalid|Unknown|record/i);
  variant("truncated", (d, f, bytes) => fs.writeFileSync(f, bytes.subarray(0, Math.floor(bytes.length * 0.6))), /magic|truncated|ends/i);
  variant("wrong-count", (d) => {
    const m = path.join(d, "metadata.yaml");
    fs.writeFileSync(m, fs.readFileSync(m, "utf8").replace(/message_count: (\d+)/, (_, n) => `message_count: ${Number(n) + 1}`));
  }, /message_count/);
  variant("metadata-v9", (d) => {
    const m = path.join(d, "metadata.yaml");
    fs.writeFileSync(m, fs.readFileSync(m, "utf8").replace("version: 5", "version: 9"));
  }, /version 9/);
  // A schema that claims Image but has other fields, in a file without chunks or summary whose data
  // section CRC is 0 ("not computed"), so that only the schema check can catch it.
  variant("wrong-schema", (d, f, bytes) => {
    const b = Buffer.from(bytes);
    const from = Buffer.from("uint32 height\nuint32 width\nstring encoding\n");
    const to = Buffer.from("uint32 heigxt\nuint32 width\nstring encoding\n");
    let at = b.indexOf(from);
    while (at >= 0) {
      to.copy(b, at);
      at = b.indexOf(from, at + 1);
    }
    b.writeUInt32LE(0, b.length - 8 - 29 - 13 + 9);
    fs.writeFileSync(f, b);
  }, /claims sensor_msgs\/msg\/Image but has fields header, heigxt/, flat);
  for (const [name, dir, re] of cases) {
    const r = node("read_bag.mjs", [dir, "--quiet"], true);
    ok(r.ok && re.test(r.err), `read_bag refuses ${name}: ${r.ok ? r.err.trim().split("\n")[0] : r.err}`);
  }
}

// ---------------------------------------------------------------- the real APC captures

function apc() {
  const scene = path.join(dataRoot, "apc-vision-toolbox", "scene-0000");
  if (!fs.existsSync(scene)) {
    console.log(`selftest: no APC captures at ${scene}: the real-data bag is skipped`);
    return;
  }
  const frames = Array.from({ length: 8 }, (_, i) => {
    const n = String(i).padStart(6, "0");
    return { depth: `frame-${n}.depth.png`, mask: `segm/frame-${n}.segm.png`, color: `frame-${n}.color.png` };
  });
  // cam.info.txt's colour K (the aligned depth is on the colour camera's grid).
  const spec = { apc: true, intrinsics: { fx: 615.19519, fy: 615.195251, cx: 298.442688, cy: 247.519196 }, frames };
  const file = path.join(work, "apc-spec.json");
  fs.writeFileSync(file, JSON.stringify({ ...spec, frames: frames.map((f) => Object.fromEntries(Object.entries(f).map(([k, v]) => [k, path.join(scene, v)]))) }));
  const u16 = roundTrip(file, "apc-16UC1", ["--jitter-ms", "3"], { jitter_ms: 3, encoding: "16UC1" });
  const f32 = roundTrip(file, "apc-32FC1", ["--depth", "32FC1", "--color", "jpeg", "--compression", "lz4"], { encoding: "32FC1" });
  // The dataset README's reference counts: valid depth, and depth > 0 with segm > 0.
  const counts = (r, i) => {
    const fr = r.manifest.frames[i];
    const d = filePixels(path.join(r.out, "fixture", fr.depth)).bytes;
    const m = filePixels(path.join(r.out, "fixture", fr.mask)).bytes;
    let valid = 0;
    let kept = 0;
    const size = d.length / m.length;
    for (let p = 0; p < m.length; p++) {
      const v = size === 2 ? d.readUInt16LE(2 * p) : d.readFloatLE(4 * p);
      if (v > 0) valid++, (kept += m[p] > 0 ? 1 : 0);
    }
    return [valid, kept];
  };
  for (const r of [u16, f32]) {
    const [v0, k0] = counts(r, 0);
    const [v7, k7] = counts(r, 7);
    ok(v0 === 81376 && k0 === 26485 && v7 === 89463 && k7 === 23952, `APC ${r.manifest.options.depth}: valid/kept ${v0}/${k0}, ${v7}/${k7} (README: 81376/26485, 89463/23952)`);
  }
  console.log(`selftest: APC captures bagged (8 frames, 16UC1 and 32FC1)${keep ? `: ${u16.out}, ${f32.out}` : ""}`);
}

try {
  codecCases();
  const specDir = path.join(work, "synthetic");
  fs.mkdirSync(specDir);
  const spec = syntheticSpec(specDir);
  const results = matrix(spec);
  refusals(results["u16-zstd"], results["no-chunks-no-index"]);
  apc();
} catch (e) {
  failures++;
  console.error(`FAIL: ${e.stack || e}`);
}
console.log(`selftest: ${passes} checks passed, ${failures} failed${keep ? ` (work folder ${work})` : ""}`);
if (!keep) fs.rmSync(work, { recursive: true, force: true });
process.exit(failures ? 1 : 0);
