#!/usr/bin/env node
// read_bag.mjs: reads a ROS 2 bag with Foxglove's own reader and checks it strictly: MCAP through
// @mcap/core (McapIndexedReader where the file has an index, McapStreamReader always, CRCs on,
// @mcap/support's zstd/lz4 decompression), every schema parsed by @foxglove/rosmsg (ROS 2), every
// message decoded by @foxglove/rosmsg2-serialization; SQLite .db3 through the sqlite3 program;
// metadata.yaml (rosbag2 version 5) checked against what the files hold. Prints a JSON summary;
// --dump DIR writes each image's pixels. Exit 0 when every check passes, 1 with the reason otherwise.
import { McapIndexedReader, McapStreamReader } from "@mcap/core";
import { loadDecompressHandlers } from "@mcap/support";
import { crc32 } from "@foxglove/crc";
import zstd from "@foxglove/wasm-zstd";
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import YAML from "yaml";

import * as C from "./lib/codecs.mjs";
import { FIELDS, SCHEMAS, nsOf, readerFor } from "./lib/msgs.mjs";

const USAGE = `usage: node read_bag.mjs BAG [--dump DIR] [--out SUMMARY.json] [--quiet]
  BAG: a rosbag2 folder (metadata.yaml + .mcap/.db3 files), or one .mcap or .db3 file.`;

class BagError extends Error {}
const check = (ok, msg) => {
  if (!ok) throw new BagError(msg);
};

// ---------------------------------------------------------------- MCAP

const DATA_END = 0x0f;
const FOOTER_BYTES = 1 + 8 + 8 + 8 + 4;
const MAGIC = Buffer.from([0x89, 0x4d, 0x43, 0x41, 0x50, 0x30, 0x0d, 0x0a]);

/** Every record of the file through McapStreamReader (chunk CRCs checked), then the data section's
 * CRC (which no @mcap/core reader checks) and, where there is a summary, McapIndexedReader (summary
 * CRC, chunk CRCs, the index) whose messages must be the stream's. */
async function readMcap(file, handlers, info) {
  const buf = fs.readFileSync(file);
  check(buf.length >= 2 * MAGIC.length && buf.subarray(0, 8).equals(MAGIC), `${file}: no MCAP magic at the start`);
  check(buf.subarray(buf.length - 8).equals(MAGIC), `${file}: no MCAP magic at the end (truncated?)`);
  const stream = new McapStreamReader({ includeChunks: true, decompressHandlers: handlers, validateCrcs: true });
  stream.append(buf);
  const rec = { schemas: new Map(), channels: new Map(), messages: [], chunks: 0, compression: new Set() };
  for (let r; (r = stream.nextRecord()); ) {
    if (r.type === "Header") rec.header = r;
    else if (r.type === "Schema") rec.schemas.set(r.id, r);
    else if (r.type === "Channel") rec.channels.set(r.id, r);
    else if (r.type === "Message") rec.messages.push(r);
    else if (r.type === "Chunk") rec.chunks++, rec.compression.add(r.compression || "none");
    else if (r.type === "DataEnd") rec.dataEnd = r;
    else if (r.type === "Footer") rec.footer = r;
    else if (r.type === "Statistics") rec.statistics = r;
  }
  check(stream.done(), `${file}: the stream ends before the footer (${stream.bytesRemaining()} bytes left unparsed)`);
  check(rec.header, `${file}: no Header record`);
  check(rec.header.profile === "ros2", `${file}: profile '${rec.header.profile}', expected 'ros2'`);
  info.profile = rec.header.profile;
  info.library = rec.header.library;
  info.chunks = rec.chunks;
  info.chunk_compression = [...rec.compression];

  // The data section CRC covers every byte before the DataEnd record (magic included).
  const dataEndAt = rec.footer.summaryStart !== 0n ? Number(rec.footer.summaryStart) - 13 : buf.length - 8 - FOOTER_BYTES - 13;
  check(buf[dataEndAt] === DATA_END, `${file}: no DataEnd record at byte ${dataEndAt}`);
  if (rec.dataEnd.dataSectionCrc !== 0) {
    const crc = crc32(buf.subarray(0, dataEndAt));
    check(crc === rec.dataEnd.dataSectionCrc, `${file}: data section CRC ${crc}, DataEnd says ${rec.dataEnd.dataSectionCrc}`);
    info.data_section_crc = "checked";
  } else info.data_section_crc = "zero (not computed)";

  info.indexed = false;
  let messages = rec.messages;
  if (rec.footer.summaryStart !== 0n) {
    const readable = {
      size: async () => BigInt(buf.length),
      read: async (offset, size) => buf.subarray(Number(offset), Number(offset + size)),
    };
    const indexed = await McapIndexedReader.Initialize({ readable, decompressHandlers: handlers });
    info.summary_crc = rec.footer.summaryCrc !== 0 ? "checked" : "zero (not computed)";
    if (indexed.statistics) {
      const s = indexed.statistics;
      check(Number(s.messageCount) === rec.messages.length, `${file}: statistics count ${s.messageCount} messages, the file holds ${rec.messages.length}`);
      for (const [id, n] of s.channelMessageCounts) {
        const real = rec.messages.filter((m) => m.channelId === id).length;
        check(Number(n) === real, `${file}: statistics count ${n} messages on channel ${id}, the file holds ${real}`);
      }
      info.statistics = "checked";
    }
    if (indexed.chunkIndexes.length > 0) {
      const viaIndex = [];
      for await (const m of indexed.readMessages({ validateCrcs: true })) viaIndex.push(m);
      check(viaIndex.length === rec.messages.length, `${file}: the index finds ${viaIndex.length} messages, a scan ${rec.messages.length}`);
      const key = (m) => `${m.channelId}:${m.sequence}:${m.logTime}`;
      const scanned = new Map(rec.messages.map((m) => [key(m), m]));
      for (const m of viaIndex) {
        const s = scanned.get(key(m));
        check(s && Buffer.compare(Buffer.from(s.data), Buffer.from(m.data)) === 0, `${file}: the index's message ${key(m)} differs from the scan's`);
      }
      for (let i = 1; i < viaIndex.length; i++) check(viaIndex[i - 1].logTime <= viaIndex[i].logTime, `${file}: the index's messages are not in log-time order`);
      messages = viaIndex;
      info.indexed = true;
    }
  }
  const topics = new Map();
  for (const [id, ch] of rec.channels) {
    const schema = rec.schemas.get(ch.schemaId);
    check(schema, `${file}: channel ${ch.topic} names schema ${ch.schemaId}, which the file lacks`);
    check(schema.encoding === "ros2msg", `${file}: schema ${schema.name} is encoded '${schema.encoding}', expected 'ros2msg'`);
    check(ch.messageEncoding === "cdr", `${file}: channel ${ch.topic} has message encoding '${ch.messageEncoding}', expected 'cdr'`);
    check(ch.metadata.has("offered_qos_profiles"), `${file}: channel ${ch.topic} has no offered_qos_profiles (the ros2 profile requires it)`);
    topics.set(id, { name: ch.topic, type: schema.name, schemaText: new TextDecoder().decode(schema.data), qos: ch.metadata.get("offered_qos_profiles") });
  }
  return messages.map((m) => {
    const t = topics.get(m.channelId);
    check(t, `${file}: a message on channel ${m.channelId}, which has no Channel record`);
    return { topic: t, logTime: m.logTime, data: m.data };
  });
}

// ---------------------------------------------------------------- SQLite

function sqliteJson(file, sql) {
  const out = execFileSync("sqlite3", ["-readonly", "-json", file, sql], { maxBuffer: 1 << 30, encoding: "utf8" });
  return out.trim() ? JSON.parse(out) : [];
}

function readDb3(file, info) {
  const tables = sqliteJson(file, "SELECT name FROM sqlite_master WHERE type='table'").map((r) => r.name);
  for (const t of ["topics", "messages"]) check(tables.includes(t), `${file}: no '${t}' table`);
  if (tables.includes("schema")) info.schema_version = sqliteJson(file, "SELECT schema_version FROM schema")[0]?.schema_version;
  const defs = new Map();
  if (tables.includes("message_definitions"))
    for (const r of sqliteJson(file, "SELECT topic_type, encoding, encoded_message_definition FROM message_definitions"))
      if (r.encoding === "ros2msg" && r.encoded_message_definition) defs.set(r.topic_type, r.encoded_message_definition);
  const topics = new Map();
  for (const r of sqliteJson(file, "SELECT id, name, type, serialization_format, offered_qos_profiles FROM topics")) {
    check(r.serialization_format === "cdr", `${file}: topic ${r.name} is serialised as '${r.serialization_format}', expected 'cdr'`);
    const schemaText = defs.get(r.type) ?? SCHEMAS[r.type];
    check(schemaText, `${file}: topic ${r.name} has type ${r.type}, whose definition neither the bag nor this checker has`);
    topics.set(r.id, { name: r.name, type: r.type, schemaText, qos: r.offered_qos_profiles });
  }
  // Timestamps as text: JSON numbers lose nanoseconds past 2^53.
  const rows = sqliteJson(file, "SELECT id, topic_id, CAST(timestamp AS TEXT) AS timestamp, hex(data) AS data FROM messages ORDER BY timestamp, id");
  return rows.map((r) => {
    const t = topics.get(r.topic_id);
    check(t, `${file}: message row ${r.id} names topic ${r.topic_id}, which the topics table lacks`);
    return { topic: t, logTime: BigInt(r.timestamp), data: Buffer.from(r.data, "hex") };
  });
}

// ---------------------------------------------------------------- metadata.yaml

function need(obj, keys, where) {
  for (const k of keys) check(obj && obj[k] !== undefined && obj[k] !== null, `metadata.yaml: ${where} has no '${k}'`);
}

function readMetadata(dir) {
  const file = path.join(dir, "metadata.yaml");
  const doc = YAML.parse(fs.readFileSync(file, "utf8"), { intAsBigInt: true });
  const m = doc?.rosbag2_bagfile_information;
  check(m, "metadata.yaml: no rosbag2_bagfile_information");
  need(m, ["version", "storage_identifier", "duration", "starting_time", "message_count", "topics_with_message_count",
    "compression_format", "compression_mode", "relative_file_paths", "files"], "rosbag2_bagfile_information");
  check(m.version === 5n, `metadata.yaml: version ${m.version}, expected 5 (what Humble reads)`);
  need(m.duration, ["nanoseconds"], "duration");
  need(m.starting_time, ["nanoseconds_since_epoch"], "starting_time");
  for (const t of m.topics_with_message_count) {
    need(t, ["topic_metadata", "message_count"], "a topics_with_message_count entry");
    need(t.topic_metadata, ["name", "type", "serialization_format", "offered_qos_profiles"], "a topic_metadata");
  }
  for (const f of m.files) {
    need(f, ["path", "starting_time", "duration", "message_count"], "a files entry");
    need(f.starting_time, ["nanoseconds_since_epoch"], `files entry ${f.path}: starting_time`);
    need(f.duration, ["nanoseconds"], `files entry ${f.path}: duration`);
  }
  check(m.files.map((f) => f.path).join("\n") === m.relative_file_paths.join("\n"), "metadata.yaml: files and relative_file_paths disagree");
  check(["", "MESSAGE"].includes(m.compression_mode), `metadata.yaml: compression_mode '${m.compression_mode}' (only none and MESSAGE are read here)`);
  return m;
}

/** metadata.yaml against what the files hold. */
function checkMetadata(m, perFile) {
  const all = perFile.flat();
  const span = (msgs) => {
    if (!msgs.length) return [0n, 0n];
    let a = msgs[0].logTime;
    let b = a;
    for (const x of msgs) (a = x.logTime < a ? x.logTime : a), (b = x.logTime > b ? x.logTime : b);
    return [a, b - a];
  };
  check(Number(m.message_count) === all.length, `metadata.yaml: message_count ${m.message_count}, the files hold ${all.length}`);
  const [t0, dur] = span(all);
  check(m.starting_time.nanoseconds_since_epoch === t0, `metadata.yaml: starting_time ${m.starting_time.nanoseconds_since_epoch}, the first message is at ${t0}`);
  check(m.duration.nanoseconds === dur, `metadata.yaml: duration ${m.duration.nanoseconds}, the messages span ${dur}`);
  for (const t of m.topics_with_message_count) {
    const tm = t.topic_metadata;
    const mine = all.filter((x) => x.topic.name === tm.name);
    check(Number(t.message_count) === mine.length, `metadata.yaml: topic ${tm.name} counts ${t.message_count}, the files hold ${mine.length}`);
    if (mine.length) check(mine[0].topic.type === tm.type, `metadata.yaml: topic ${tm.name} is ${tm.type}, the files say ${mine[0].topic.type}`);
  }
  const named = new Set(m.topics_with_message_count.map((t) => t.topic_metadata.name));
  for (const x of all) check(named.has(x.topic.name), `metadata.yaml: topic ${x.topic.name} is in the files but not listed`);
  m.files.forEach((f, k) => {
    const [a, d] = span(perFile[k]);
    check(Number(f.message_count) === perFile[k].length, `metadata.yaml: ${f.path} counts ${f.message_count}, it holds ${perFile[k].length}`);
    check(f.starting_time.nanoseconds_since_epoch === a && f.duration.nanoseconds === d, `metadata.yaml: ${f.path}'s starting_time/duration are not its messages'`);
  });
}

// ---------------------------------------------------------------- messages

/** The decompressed size a zstd frame's header states (rosbag2 compresses with ZSTD_compress, which
 * writes it). */
function zstdContentSize(b) {
  check(b.length >= 6 && b.readUInt32LE(0) === 0xfd2fb528, "a message payload is not a zstd frame");
  const fhd = b[4];
  const fcsFlag = fhd >> 6;
  const single = (fhd >> 5) & 1;
  const didSize = [0, 1, 2, 4][fhd & 3];
  const at = 5 + (single ? 0 : 1) + didSize;
  const size = [single ? 1 : 0, 2, 4, 8][fcsFlag];
  check(size > 0, "a zstd frame without its content size");
  if (size === 1) return b[at];
  if (size === 2) return b.readUInt16LE(at) + 256;
  if (size === 4) return b.readUInt32LE(at);
  return Number(b.readBigUInt64LE(at));
}

const BYTES = { "16UC1": 2, mono16: 2, "32FC1": 4, mono8: 1, "8UC1": 1, rgb8: 3, bgr8: 3, rgba8: 4, bgra8: 4 };

/** An Image's pixels without step padding, as little-endian typed values. */
function imagePixels(img, where) {
  const bpp = BYTES[img.encoding];
  check(bpp, `${where}: encoding '${img.encoding}' is not one read here`);
  const row = img.width * bpp;
  check(img.step >= row, `${where}: step ${img.step} < width ${img.width} x ${bpp} bytes`);
  check(img.data.length >= img.step * img.height, `${where}: ${img.data.length} data bytes, step x height needs ${img.step * img.height}`);
  const out = Buffer.alloc(row * img.height);
  const data = Buffer.from(img.data.buffer, img.data.byteOffset, img.data.byteLength);
  for (let y = 0; y < img.height; y++) data.copy(out, y * row, y * img.step, y * img.step + row);
  if (img.is_bigendian && bpp === 2 && img.encoding !== "rgb8") out.swap16();
  if (img.is_bigendian && bpp === 4 && img.encoding === "32FC1") out.swap32();
  return out;
}

function dumpImage(dir, name, encoding, width, height, bytes) {
  fs.mkdirSync(path.dirname(path.join(dir, name)), { recursive: true });
  if (encoding === "32FC1") {
    fs.writeFileSync(path.join(dir, `${name}.npy`), C.npyBytes(width, height, bytes));
    return `${name}.npy`;
  }
  const a = new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let pixels;
  let channels = 1;
  if (encoding === "16UC1" || encoding === "mono16") pixels = new Uint16Array(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength));
  else if (encoding === "mono8" || encoding === "8UC1") pixels = a;
  else {
    channels = encoding.endsWith("a8") ? 4 : 3;
    pixels = Uint8Array.from(a);
    if (encoding.startsWith("bgr")) for (let i = 0; i < pixels.length; i += channels) [pixels[i], pixels[i + 2]] = [a[i + 2], a[i]];
  }
  C.writePng(path.join(dir, `${name}.png`), width, height, channels, pixels);
  return `${name}.png`;
}

function decodeAll(messages, opts, summary) {
  const readers = new Map();
  const perTopicIds = new Map();
  for (const m of messages) {
    const t = m.topic;
    const where = `topic ${t.name} message at log time ${m.logTime}`;
    let r = readers.get(t.schemaText);
    if (!r) {
      try {
        r = readerFor(t.schemaText);
      } catch (e) {
        throw new BagError(`topic ${t.name}: its schema (${t.type}) does not parse: ${e.message}`);
      }
      if (FIELDS[t.type]) {
        const got = r.defs[0].definitions.filter((d) => !d.isConstant).map((d) => d.name);
        check(got.join(",") === FIELDS[t.type].join(","), `topic ${t.name}: its schema claims ${t.type} but has fields ${got.join(", ")}`);
      }
      readers.set(t.schemaText, r);
    }
    let msg;
    try {
      msg = r.reader.readMessage(m.data);
    } catch (e) {
      throw new BagError(`${where}: CDR does not decode as ${t.type}: ${e.message}`);
    }
    const e = { topic: t.name, type: t.type, log_time: m.logTime.toString(), data_bytes: m.data.length };
    if (r.reader.lastReadHadTrailingBytes()) e.trailing_bytes = m.data.length - r.reader.lastReadByteLength();
    if (msg.header) {
      e.stamp_ns = nsOf(msg.header.stamp).toString();
      e.frame_id = msg.header.frame_id;
    }
    let dump = null;
    if (t.type === "sensor_msgs/msg/Image") {
      Object.assign(e, { encoding: msg.encoding, width: msg.width, height: msg.height, step: msg.step, is_bigendian: msg.is_bigendian });
      const px = imagePixels(msg, where);
      dump = { encoding: msg.encoding, width: msg.width, height: msg.height, bytes: px };
    } else if (t.type === "sensor_msgs/msg/CompressedImage") {
      e.format = msg.format;
      let dec;
      try {
        dec = C.decodeCompressed(msg.format, msg.data);
      } catch (err) {
        throw new BagError(`${where}: ${err.message}`);
      }
      Object.assign(e, { encoding: dec.encoding, width: dec.width, height: dec.height });
      if (dec.A !== undefined) Object.assign(e, { depth_quant_a: dec.A, depth_quant_b: dec.B });
      dump = { encoding: dec.encoding, width: dec.width, height: dec.height, bytes: C.leBytes(dec.pixels) };
    } else if (t.type === "sensor_msgs/msg/CameraInfo") {
      Object.assign(e, { width: msg.width, height: msg.height, distortion_model: msg.distortion_model, k: Array.from(msg.k), d: Array.from(msg.d) });
    }
    if (dump && opts.dump) {
      const dirName = t.name.replace(/^\/+/, "").replaceAll("/", "__");
      let id = (e.stamp_ns ?? e.log_time).padStart(19, "0");
      const seen = perTopicIds.get(`${t.name} ${id}`) || 0;
      perTopicIds.set(`${t.name} ${id}`, seen + 1);
      if (seen) id += `-${seen}`;
      e.dump = dumpImage(opts.dump, `${dirName}/${id}`, dump.encoding, dump.width, dump.height, dump.bytes);
    }
    summary.messages.push(e);
  }
}

// ---------------------------------------------------------------- main

function parseArgs(argv) {
  const o = { dump: null, out: null, quiet: false, bag: null };
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === "--dump") o.dump = argv[++i];
    else if (argv[i] === "--out") o.out = argv[++i];
    else if (argv[i] === "--quiet") o.quiet = true;
    else if (argv[i] === "--help" || argv[i] === "-h") (console.log(USAGE), process.exit(0));
    else if (argv[i].startsWith("--") || o.bag) (console.error(USAGE), process.exit(2));
    else o.bag = argv[i];
  }
  if (!o.bag) (console.error(USAGE), process.exit(2));
  return o;
}

export async function readBag(bag, opts = {}) {
  const summary = { bag, metadata: null, files: [], topics: [], messages: [] };
  let files;
  let meta = null;
  const isDir = fs.statSync(bag).isDirectory();
  if (isDir && fs.existsSync(path.join(bag, "metadata.yaml"))) {
    meta = readMetadata(bag);
    files = meta.relative_file_paths.map((p) => path.join(bag, p));
    for (const f of files) check(fs.existsSync(f), `metadata.yaml names ${f}, which is missing`);
  } else if (isDir) {
    files = fs.readdirSync(bag).filter((f) => /\.(mcap|db3)$/.test(f)).sort().map((f) => path.join(bag, f));
    check(files.length, `${bag}: no metadata.yaml and no .mcap or .db3 file`);
  } else files = [bag];

  const handlers = await loadDecompressHandlers();
  await zstd.isLoaded;
  const perFile = [];
  for (const file of files) {
    const info = { path: file, storage: file.endsWith(".db3") ? "sqlite3" : "mcap" };
    let msgs;
    try {
      msgs = info.storage === "mcap" ? await readMcap(file, handlers, info) : readDb3(file, info);
    } catch (e) {
      throw new BagError(e instanceof BagError ? e.message : `${file}: ${e.message}`);
    }
    if (meta?.compression_mode === "MESSAGE") {
      check(meta.compression_format === "zstd", `metadata.yaml: compression_format '${meta.compression_format}'`);
      for (const m of msgs) m.data = Buffer.from(zstd.decompress(Buffer.from(m.data), zstdContentSize(Buffer.from(m.data))));
    }
    info.messages = msgs.length;
    summary.files.push(info);
    perFile.push(msgs);
  }
  if (meta) {
    checkMetadata(meta, perFile);
    summary.metadata = { version: Number(meta.version), storage_identifier: meta.storage_identifier, compression_mode: meta.compression_mode, checked: true };
  }
  const all = perFile.flat();
  const topics = new Map();
  for (const m of all) {
    const t = topics.get(m.topic.name) ?? { name: m.topic.name, type: m.topic.type, count: 0, offered_qos_profiles: Boolean(m.topic.qos) };
    check(t.type === m.topic.type, `topic ${t.name} is ${t.type} in one file and ${m.topic.type} in another`);
    t.count++;
    topics.set(t.name, t);
  }
  summary.topics = [...topics.values()];
  if (opts.dump) fs.mkdirSync(opts.dump, { recursive: true });
  decodeAll(all, opts, summary);
  return summary;
}

if (import.meta.url === `file://${process.argv[1]}` || process.argv[1]?.endsWith("read_bag.mjs")) {
  const opts = parseArgs(process.argv.slice(2));
  readBag(opts.bag, opts)
    .then((summary) => {
      const text = JSON.stringify(summary, null, 1) + "\n";
      if (opts.out) fs.writeFileSync(opts.out, text);
      else if (!opts.quiet) process.stdout.write(text);
    })
    .catch((e) => {
      console.error(`read_bag: ${e instanceof BagError ? e.message : e.stack}`);
      process.exit(1);
    });
}
