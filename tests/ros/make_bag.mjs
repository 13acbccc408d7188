#!/usr/bin/env node
// make_bag.mjs: writes a ROS 2 bag (rosbag2 folder: metadata.yaml + MCAP or SQLite files) from
// depth/mask/colour image files with Foxglove's own writer (@mcap/core McapWriter,
// @foxglove/rosmsg2-serialization), and beside it the fixture folder of exactly the pixels the bag
// holds, which depthmask reads as a plain dataset folder. The spec format and the options are in
// README.md; `node make_bag.mjs --help` prints them.
import { McapWriter } from "@mcap/core";
import zstd from "@foxglove/wasm-zstd";
import lz4 from "lz4js";
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";

import * as C from "./lib/codecs.mjs";
import { DEFAULT_QOS, SCHEMAS, serialize, stampOf } from "./lib/msgs.mjs";

const USAGE = `usage: node make_bag.mjs SPEC.json OUT_DIR [options]
  --depth 16UC1|mono16|32FC1|compressedDepth-png|compressedDepth-png-32FC1|compressedDepth-rvl|compressedDepth-rvl-32FC1
  --mask mono8|8UC1|16UC1|mono16|none          --color rgb8|bgr8|jpeg|png|none
  --compression none|zstd|lz4                  --chunk-size BYTES      --no-index    --no-chunks
  --split N            --jitter-ms MS          --seed N                --storage mcap|sqlite3
  --sqlite-schema 3|4  --message-compression none|zstd   --float-invalid nan|zero
  --step-padding BYTES --bigendian             --name BAG_NAME         --fps N       --start-ns NS
Writes OUT_DIR/<name>/ (metadata.yaml + <name>_K.mcap|.db3), OUT_DIR/fixture/ and OUT_DIR/manifest.json.`;

const DEFAULTS = {
  depth: "16UC1",
  mask: "mono8",
  color: "rgb8",
  compression: "zstd",
  chunk_size: 786432, // rosbag2's MCAP default chunk size (768 KiB)
  index: true,
  chunks: true,
  split: 1,
  jitter_ms: 0,
  seed: 1,
  storage: "mcap",
  sqlite_schema: 3,
  message_compression: "none",
  float_invalid: "nan",
  step_padding: 0,
  bigendian: false,
  name: "bag",
  fps: 30,
  start_ns: "1700000000000000000",
  frame_id: "camera_depth_optical_frame",
  color_frame_id: "camera_color_optical_frame",
  topics: {
    depth: "/camera/depth/image_rect_raw",
    color: "/camera/color/image_raw",
    mask: "/seg/mask",
    camera_info: "/camera/depth/camera_info",
  },
};

const FLAGS = {
  "--depth": ["depth", String], "--mask": ["mask", String], "--color": ["color", String],
  "--compression": ["compression", String], "--chunk-size": ["chunk_size", Number],
  "--split": ["split", Number], "--jitter-ms": ["jitter_ms", Number], "--seed": ["seed", Number],
  "--storage": ["storage", String], "--sqlite-schema": ["sqlite_schema", Number],
  "--message-compression": ["message_compression", String], "--float-invalid": ["float_invalid", String],
  "--step-padding": ["step_padding", Number], "--name": ["name", String], "--fps": ["fps", Number],
  "--start-ns": ["start_ns", String],
};

const ONE_OF = {
  depth: ["16UC1", "mono16", "32FC1", "compressedDepth-png", "compressedDepth-png-32FC1", "compressedDepth-rvl",
    "compressedDepth-rvl-32FC1"],
  mask: ["mono8", "8UC1", "16UC1", "mono16", "none"],
  color: ["rgb8", "bgr8", "jpeg", "png", "none"],
  compression: ["none", "zstd", "lz4"],
  storage: ["mcap", "sqlite3"],
  message_compression: ["none", "zstd"],
  float_invalid: ["nan", "zero"],
};

function fail(msg) {
  console.error(`make_bag: ${msg}`);
  process.exit(2);
}

function parseArgs(argv) {
  const pos = [];
  const over = {};
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === "--help" || a === "-h") {
      console.log(USAGE);
      process.exit(0);
    } else if (a === "--no-index") over.index = false;
    else if (a === "--no-chunks") over.chunks = false;
    else if (a === "--bigendian") over.bigendian = true;
    else if (FLAGS[a]) {
      if (i + 1 >= argv.length) fail(`${a} needs a value`);
      const [key, conv] = FLAGS[a];
      over[key] = conv(argv[++i]);
    } else if (a.startsWith("--")) fail(`unknown option ${a}\n${USAGE}`);
    else pos.push(a);
  }
  if (pos.length !== 2) fail(USAGE);
  return { specFile: pos[0], out: pos[1], over };
}

/** The spec's options (top level or under "options"), then the command line's. */
function resolveOptions(spec, over) {
  const o = { ...DEFAULTS, ...(spec.options || {}) };
  for (const k of Object.keys(DEFAULTS)) if (k in spec && k !== "topics") o[k] = spec[k];
  Object.assign(o, over);
  o.topics = { ...DEFAULTS.topics, ...(spec.topics || {}), ...((spec.options || {}).topics || {}) };
  for (const [k, allowed] of Object.entries(ONE_OF))
    if (!allowed.includes(o[k])) fail(`${k} '${o[k]}' is not one of ${allowed.join(", ")}`);
  if (!(Number.isInteger(o.split) && o.split >= 1)) fail(`split ${o.split} is not a positive integer`);
  if (![3, 4].includes(o.sqlite_schema)) fail("sqlite_schema is 3 (Humble) or 4 (Iron, Jazzy)");
  return o;
}

// Deterministic jitter: mulberry32.
function rng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function swap(bytes, size) {
  const b = Buffer.from(bytes);
  if (size === 2) b.swap16();
  if (size === 4) b.swap32();
  return b;
}

/** An Image message's data: rows of `rowBytes` each padded with `pad` zero bytes. */
function padRows(bytes, height, rowBytes, pad) {
  if (!pad) return bytes;
  const out = Buffer.alloc(height * (rowBytes + pad));
  for (let y = 0; y < height; y++) bytes.copy(out, y * (rowBytes + pad), y * rowBytes, (y + 1) * rowBytes);
  return out;
}

function imageMsg(header, width, height, encoding, pixels, bytesPerPixel, o) {
  let bytes = C.leBytes(pixels);
  const big = o.bigendian && bytesPerPixel > 1 && !/^(rgb8|bgr8)$/.test(encoding);
  if (big) bytes = swap(bytes, bytesPerPixel);
  const rowBytes = width * bytesPerPixel;
  return {
    header,
    height,
    width,
    encoding,
    is_bigendian: big ? 1 : 0,
    step: rowBytes + o.step_padding,
    data: padRows(bytes, height, rowBytes, o.step_padding),
  };
}

function readDepthUnits(file, frame, spec) {
  const img = C.readPng(file);
  if (img.channels !== 1 || img.depth !== 16) fail(`${file}: depth is a single-channel 16-bit PNG`);
  const apc = frame.apc ?? spec.apc ?? false;
  const units = apc ? C.unrotateApc(img.data) : img.data;
  const metresPerUnit = frame.depth_units ?? spec.depth_units ?? (apc ? 0.0001 : 0.001);
  return { width: img.width, height: img.height, units, metresPerUnit };
}

/** The depth message and the fixture pixels (what a decoder of that message gets). */
function depthOf(d, o, header) {
  const { width, height } = d;
  const kind = o.depth;
  const fixture = (pixels) => ({ pixels, ext: pixels instanceof Float32Array ? "tiff" : "png" });
  if (kind === "16UC1" || kind === "mono16") {
    const mm = C.toMillimetres(d.units, d.metresPerUnit);
    return { type: "sensor_msgs/msg/Image", msg: imageMsg(header, width, height, kind, mm, 2, o), ...fixture(mm) };
  }
  if (kind === "32FC1") {
    const m = C.toMetres(d.units, d.metresPerUnit, o.float_invalid);
    return { type: "sensor_msgs/msg/Image", msg: imageMsg(header, width, height, "32FC1", m, 4, o), ...fixture(m) };
  }
  const codec = kind.startsWith("compressedDepth-png") ? "png" : "rvl";
  const float = kind.endsWith("-32FC1");
  let data;
  let pixels;
  if (float) {
    const q = C.quantParams();
    const words = C.quantizeInverseDepth(C.toMetres(d.units, d.metresPerUnit, o.float_invalid), q);
    data = C.compressedDepthPayload(words, width, height, codec, q.A, q.B);
    pixels = C.dequantizeInverseDepth(words, q.A, q.B);
  } else {
    pixels = C.clipMillimetres(C.toMillimetres(d.units, d.metresPerUnit));
    data = C.compressedDepthPayload(pixels, width, height, codec);
  }
  const format = `${float ? "32FC1" : "16UC1"}; compressedDepth ${codec}`;
  return { type: "sensor_msgs/msg/CompressedImage", msg: { header, format, data }, ...fixture(pixels) };
}

function maskOf(file, o, header) {
  const img = C.readPng(file);
  if (img.channels !== 1) fail(`${file}: a mask is single-channel`);
  const wide = o.mask === "16UC1" || o.mask === "mono16";
  if (!wide && img.depth !== 8) fail(`${file}: ${o.mask} needs an 8-bit mask (this one is ${img.depth}-bit)`);
  const pixels = wide && img.depth === 8 ? Uint16Array.from(img.data) : img.data;
  return {
    type: "sensor_msgs/msg/Image",
    msg: imageMsg(header, img.width, img.height, o.mask, pixels, wide ? 2 : 1, o),
    pixels,
    width: img.width,
    height: img.height,
  };
}

function readColour(file) {
  if (/\.jpe?g$/i.test(file)) {
    const bytes = fs.readFileSync(file);
    const dec = C.decodeCompressed("jpeg", bytes);
    return { width: dec.width, height: dec.height, rgb: dec.pixels, jpeg: bytes };
  }
  const img = C.readPng(file);
  if (img.depth !== 8 || img.channels < 3) fail(`${file}: colour is an 8-bit RGB(A) PNG or a JPEG`);
  let rgb = img.data;
  if (img.channels === 4) {
    rgb = new Uint8Array(img.width * img.height * 3);
    for (let i = 0, j = 0; j < rgb.length; i += 4, j += 3) rgb.set(img.data.subarray(i, i + 3), j);
  }
  return { width: img.width, height: img.height, rgb };
}

/** The colour message and the fixture: an RGB PNG of the pixels, or the JPEG's own bytes. */
function colourOf(c, o, header) {
  const { width, height, rgb } = c;
  if (o.color === "rgb8") return { type: "sensor_msgs/msg/Image", msg: imageMsg(header, width, height, "rgb8", rgb, 3, o), ext: "png" };
  if (o.color === "bgr8") {
    const bgr = Uint8Array.from(rgb);
    for (let i = 0; i < bgr.length; i += 3) [bgr[i], bgr[i + 2]] = [rgb[i + 2], rgb[i]];
    return { type: "sensor_msgs/msg/Image", msg: imageMsg(header, width, height, "bgr8", bgr, 3, o), ext: "png" };
  }
  if (o.color === "png") {
    const data = Buffer.from(C.encodePngRgb(width, height, rgb));
    return { type: "sensor_msgs/msg/CompressedImage", msg: { header, format: "rgb8; png compressed bgr8", data }, ext: "png" };
  }
  const data = c.jpeg ?? Buffer.from(C.encodeJpeg(width, height, rgb));
  return { type: "sensor_msgs/msg/CompressedImage", msg: { header, format: "rgb8; jpeg compressed bgr8", data }, ext: "jpg", bytes: data };
}

function cameraInfo(header, k) {
  const { fx, fy, cx, cy, width, height } = k;
  return {
    header,
    height,
    width,
    distortion_model: "plumb_bob",
    d: [0, 0, 0, 0, 0],
    k: [fx, 0, cx, 0, fy, cy, 0, 0, 1],
    r: [1, 0, 0, 0, 1, 0, 0, 0, 1],
    p: [fx, 0, cx, 0, 0, fy, cy, 0, 0, 0, 1, 0],
    binning_x: 0,
    binning_y: 0,
    roi: { x_offset: 0, y_offset: 0, height: 0, width: 0, do_rectify: false },
  };
}

const pad19 = (ns) => ns.toString().padStart(19, "0");

/** Every message of the bag (sorted by log time) and the fixture folder written. */
function buildMessages(spec, specDir, o, fixtureDir) {
  const frames = spec.frames;
  if (!Array.isArray(frames) || frames.length === 0) fail("the spec has no frames");
  const rand = rng(o.seed);
  const start = BigInt(o.start_ns);
  const period = 1e9 / o.fps;
  const jitter = () => BigInt(Math.round((2 * rand() - 1) * o.jitter_ms * 1e6));
  const resolve = (p) => (p ? path.resolve(specDir, p) : null);
  for (const sub of ["depth", "mask", "color"]) fs.mkdirSync(path.join(fixtureDir, sub), { recursive: true });

  const msgs = [];
  const listing = [];
  const ids = new Map();
  let firstK = null;
  frames.forEach((f, i) => {
    const depthStamp = f.stamp_ns !== undefined ? BigInt(f.stamp_ns) : start + BigInt(Math.round(i * period));
    const colourStamp = depthStamp + (o.jitter_ms ? jitter() : 0n);
    const maskStamp = depthStamp + (o.jitter_ms ? jitter() : 0n);
    let id = pad19(depthStamp);
    const seen = ids.get(id) || 0;
    ids.set(id, seen + 1);
    if (seen) id += `-${seen}`;
    const entry = { index: i, id, depth_stamp_ns: depthStamp.toString() };

    const d = readDepthUnits(resolve(f.depth), f, spec);
    const k = { width: d.width, height: d.height, ...(spec.intrinsics || {}), ...(f.intrinsics || {}) };
    for (const key of ["fx", "fy", "cx", "cy"]) if (typeof k[key] !== "number") fail(`frame ${i}: intrinsics lack ${key}`);
    firstK ??= k;
    const dh = { stamp: stampOf(depthStamp), frame_id: f.frame_id ?? o.frame_id };
    const depth = depthOf(d, o, dh);
    msgs.push({ topic: "depth", type: depth.type, stamp: depthStamp, msg: depth.msg });
    msgs.push({ topic: "camera_info", type: "sensor_msgs/msg/CameraInfo", stamp: depthStamp, msg: cameraInfo(dh, k) });
    entry.depth = `depth/${id}.${depth.ext}`;
    if (depth.ext === "png") C.writePng(path.join(fixtureDir, entry.depth), d.width, d.height, 1, depth.pixels);
    else C.writeFloatTiff(path.join(fixtureDir, entry.depth), d.width, d.height, depth.pixels);

    if (o.mask !== "none" && f.mask) {
      const mh = { stamp: stampOf(maskStamp), frame_id: f.frame_id ?? o.frame_id };
      const m = maskOf(resolve(f.mask), o, mh);
      msgs.push({ topic: "mask", type: m.type, stamp: maskStamp, msg: m.msg });
      entry.mask = `mask/${id}.png`;
      entry.mask_stamp_ns = maskStamp.toString();
      C.writePng(path.join(fixtureDir, entry.mask), m.width, m.height, 1, m.pixels);
    }
    if (o.color !== "none" && f.color) {
      const c = readColour(resolve(f.color));
      const ch = { stamp: stampOf(colourStamp), frame_id: f.color_frame_id ?? o.color_frame_id };
      const col = colourOf(c, o, ch);
      msgs.push({ topic: "color", type: col.type, stamp: colourStamp, msg: col.msg });
      entry.color = `color/${id}.${col.ext}`;
      entry.color_stamp_ns = colourStamp.toString();
      if (col.ext === "jpg") fs.writeFileSync(path.join(fixtureDir, entry.color), col.bytes);
      else C.writePng(path.join(fixtureDir, entry.color), c.width, c.height, 3, c.rgb);
    }
    listing.push(entry);
  });
  const order = ["depth", "camera_info", "color", "mask"];
  msgs.forEach((m, i) => (m.seq = i));
  msgs.sort((a, b) => (a.stamp < b.stamp ? -1 : a.stamp > b.stamp ? 1 : order.indexOf(a.topic) - order.indexOf(b.topic) || a.seq - b.seq));
  for (const m of msgs) if (m.stamp < 0n) fail("a stamp before 1970");
  const kYaml = ["fx", "fy", "cx", "cy", "width", "height"].map((key) => `${key}: ${firstK[key]}`).join("\n") + "\n";
  fs.writeFileSync(path.join(fixtureDir, "intrinsics.yaml"), kYaml);
  return { msgs, listing, intrinsics: firstK };
}

class MemWritable {
  constructor() {
    this.parts = [];
    this.size = 0n;
  }
  async write(buf) {
    this.parts.push(Buffer.from(buf));
    this.size += BigInt(buf.byteLength);
  }
  position() {
    return this.size;
  }
}

function chunkCompressor(kind) {
  if (kind === "zstd") return (d) => ({ compression: "zstd", compressedData: zstd.compress(d, 3) });
  if (kind === "lz4") return (d) => ({ compression: "lz4", compressedData: lz4.compress(d) });
  return undefined;
}

async function writeMcap(file, msgs, topics, o) {
  const out = new MemWritable();
  const idx = o.index;
  const w = new McapWriter({
    writable: out,
    useChunks: o.chunks,
    chunkSize: o.chunk_size,
    compressChunk: o.chunks ? chunkCompressor(o.compression) : undefined,
    useStatistics: idx,
    useSummaryOffsets: idx,
    repeatSchemas: idx,
    repeatChannels: idx,
    useAttachmentIndex: idx,
    useMetadataIndex: idx,
    useMessageIndex: idx && o.chunks,
    useChunkIndex: idx && o.chunks,
  });
  await w.start({ profile: "ros2", library: "depthmask tests/ros/make_bag.mjs (@mcap/core)" });
  const schemaIds = {};
  const channelIds = {};
  for (const t of topics) {
    schemaIds[t.type] ??= await w.registerSchema({ name: t.type, encoding: "ros2msg", data: Buffer.from(SCHEMAS[t.type]) });
    channelIds[t.name] = await w.registerChannel({
      topic: t.name,
      schemaId: schemaIds[t.type],
      messageEncoding: "cdr",
      metadata: new Map([["offered_qos_profiles", DEFAULT_QOS]]),
    });
  }
  const sequence = {};
  for (const m of msgs) {
    sequence[m.name] = (sequence[m.name] ?? 0) + 1;
    await w.addMessage({ channelId: channelIds[m.name], sequence: sequence[m.name], logTime: m.stamp, publishTime: m.stamp, data: m.data });
  }
  await w.addMetadata({ name: "rosbag2", metadata: new Map([["ROS_DISTRO", "humble"]]) });
  await w.end();
  fs.writeFileSync(file, Buffer.concat(out.parts));
}

/** A .db3 in rosbag2's SQLite schema (3: Humble; 4: Iron/Jazzy, with type_description_hash), through
 * the sqlite3 command-line program. */
function writeDb3(file, msgs, topics, o, metadataYaml) {
  fs.rmSync(file, { force: true });
  const q = (s) => `'${s.replaceAll("'", "''")}'`;
  const v4 = o.sqlite_schema === 4;
  const sql = [
    ".bail on",
    "BEGIN;",
    "CREATE TABLE schema(schema_version INTEGER PRIMARY KEY, ros_distro TEXT NOT NULL);",
    "CREATE TABLE metadata(id INTEGER PRIMARY KEY, metadata_version INTEGER NOT NULL, metadata TEXT NOT NULL);",
    `CREATE TABLE topics(id INTEGER PRIMARY KEY, name TEXT NOT NULL, type TEXT NOT NULL, serialization_format TEXT NOT NULL, offered_qos_profiles TEXT NOT NULL${v4 ? ", type_description_hash TEXT NOT NULL" : ""});`,
    v4 ? "CREATE TABLE message_definitions(id INTEGER PRIMARY KEY, topic_type TEXT NOT NULL, encoding TEXT NOT NULL, encoded_message_definition TEXT NOT NULL, type_description_hash TEXT NOT NULL);" : "",
    "CREATE TABLE messages(id INTEGER PRIMARY KEY, topic_id INTEGER NOT NULL, timestamp INTEGER NOT NULL, data BLOB NOT NULL);",
    "CREATE INDEX timestamp_idx ON messages (timestamp ASC);",
    `INSERT INTO schema VALUES (${o.sqlite_schema}, ${q(v4 ? "jazzy" : "humble")});`,
  ];
  topics.forEach((t, i) => {
    sql.push(`INSERT INTO topics VALUES (${i + 1}, ${q(t.name)}, ${q(t.type)}, 'cdr', ${q(DEFAULT_QOS)}${v4 ? ", ''" : ""});`);
  });
  if (v4)
    [...new Set(topics.map((t) => t.type))].forEach((type) =>
      sql.push(`INSERT INTO message_definitions(topic_type, encoding, encoded_message_definition, type_description_hash) VALUES (${q(type)}, 'ros2msg', ${q(SCHEMAS[type])}, '');`),
    );
  const ids = Object.fromEntries(topics.map((t, i) => [t.name, i + 1]));
  for (const m of msgs) sql.push(`INSERT INTO messages(topic_id, timestamp, data) VALUES (${ids[m.name]}, ${m.stamp}, X'${Buffer.from(m.data).toString("hex")}');`);
  sql.push(`INSERT INTO metadata(metadata_version, metadata) VALUES (5, ${q(metadataYaml)});`, "COMMIT;");
  const script = `${file}.sql`;
  fs.writeFileSync(script, sql.join("\n") + "\n");
  try {
    execFileSync("sqlite3", [file, `.read ${script}`], { stdio: ["ignore", "ignore", "inherit"] });
  } catch (e) {
    fail(`sqlite3 could not write ${file} (${e.code === "ENOENT" ? "no sqlite3 program: apt-get install sqlite3" : e.message})`);
  } finally {
    fs.rmSync(script, { force: true });
  }
}

/** rosbag2's metadata.yaml, version 5 (what Humble writes and Jazzy still reads). */
function metadataYaml(o, topics, parts, ext) {
  const all = parts.flat();
  const t0 = all.reduce((a, m) => (m.stamp < a ? m.stamp : a), all[0].stamp);
  const t1 = all.reduce((a, m) => (m.stamp > a ? m.stamp : a), all[0].stamp);
  const lines = [
    "rosbag2_bagfile_information:",
    "  version: 5",
    `  storage_identifier: ${o.storage}`,
    "  duration:",
    `    nanoseconds: ${t1 - t0}`,
    "  starting_time:",
    `    nanoseconds_since_epoch: ${t0}`,
    `  message_count: ${all.length}`,
    "  topics_with_message_count:",
  ];
  for (const t of topics) {
    lines.push(
      "    - topic_metadata:",
      `        name: ${t.name}`,
      `        type: ${t.type}`,
      "        serialization_format: cdr",
      `        offered_qos_profiles: ${JSON.stringify(DEFAULT_QOS)}`,
      `      message_count: ${all.filter((m) => m.name === t.name).length}`,
    );
  }
  const mc = o.message_compression === "zstd";
  lines.push(`  compression_format: "${mc ? "zstd" : ""}"`, `  compression_mode: "${mc ? "MESSAGE" : ""}"`, "  relative_file_paths:");
  parts.forEach((_, k) => lines.push(`    - ${o.name}_${k}.${ext}`));
  lines.push("  files:");
  parts.forEach((p, k) => {
    const a = p[0].stamp;
    const b = p[p.length - 1].stamp;
    lines.push(`    - path: ${o.name}_${k}.${ext}`, "      starting_time:", `        nanoseconds_since_epoch: ${a}`,
      "      duration:", `        nanoseconds: ${b - a}`, `      message_count: ${p.length}`);
  });
  return lines.join("\n") + "\n";
}

async function main() {
  const { specFile, out, over } = parseArgs(process.argv.slice(2));
  let spec;
  try {
    spec = JSON.parse(fs.readFileSync(specFile, "utf8"));
  } catch (e) {
    fail(`cannot read the spec ${specFile}: ${e.message}`);
  }
  const o = resolveOptions(spec, over);
  const bagDir = path.join(out, o.name);
  const fixtureDir = path.join(out, "fixture");
  fs.rmSync(bagDir, { recursive: true, force: true });
  fs.rmSync(fixtureDir, { recursive: true, force: true });
  fs.mkdirSync(bagDir, { recursive: true });
  await zstd.isLoaded;

  const { msgs, listing, intrinsics } = buildMessages(spec, path.dirname(path.resolve(specFile)), o, fixtureDir);
  const topics = [];
  for (const m of msgs) {
    m.name = o.topics[m.topic];
    if (!topics.some((t) => t.name === m.name)) topics.push({ name: m.name, type: m.type, role: m.topic });
    m.data = serialize(m.type, m.msg);
    if (o.message_compression === "zstd") m.data = zstd.compress(m.data, 3);
  }
  topics.sort((a, b) => ["depth", "camera_info", "color", "mask"].indexOf(a.role) - ["depth", "camera_info", "color", "mask"].indexOf(b.role));
  const n = Math.min(o.split, msgs.length);
  const parts = Array.from({ length: n }, (_, k) => msgs.slice(Math.floor((k * msgs.length) / n), Math.floor(((k + 1) * msgs.length) / n)));
  const ext = o.storage === "mcap" ? "mcap" : "db3";
  const meta = metadataYaml(o, topics, parts, ext);
  const files = [];
  for (let k = 0; k < n; k++) {
    const file = path.join(bagDir, `${o.name}_${k}.${ext}`);
    if (ext === "mcap") await writeMcap(file, parts[k], topics, o);
    else writeDb3(file, parts[k], topics, o, meta);
    files.push(path.relative(out, file));
  }
  fs.writeFileSync(path.join(bagDir, "metadata.yaml"), meta);

  const depthExt = listing[0].depth.split(".").pop();
  const fixture = {
    root: "fixture",
    "input.depth": `depth/{id}.${depthExt}`,
    "input.mask": listing.some((f) => f.mask) ? "mask/{id}.png" : null,
    "input.color": listing.some((f) => f.color) ? `color/{id}.${listing.find((f) => f.color).color.split(".").pop()}` : null,
    "input.intrinsics": "intrinsics.yaml",
    "depth.scale": depthExt === "png" ? 0.001 : null,
  };
  const manifest = {
    bag: o.name,
    storage: o.storage,
    files,
    metadata: path.join(o.name, "metadata.yaml"),
    options: o,
    topics: Object.fromEntries(topics.map((t) => [t.role, { name: t.name, type: t.type, count: msgs.filter((m) => m.name === t.name).length }])),
    intrinsics,
    fixture,
    frames: listing,
  };
  fs.writeFileSync(path.join(fixtureDir, "frames.json"), JSON.stringify(listing, null, 1) + "\n");
  fs.writeFileSync(path.join(out, "manifest.json"), JSON.stringify(manifest, null, 1) + "\n");
  console.log(`make_bag: ${msgs.length} messages, ${listing.length} frames → ${files.join(", ")}; fixture in ${fixtureDir}`);
}

main().catch((e) => fail(e.stack || String(e)));
