// live --serve against Foxglove's own client (@foxglove/ws-protocol's FoxgloveClient): a replay of a
// synthetic dataset served while the same run writes every frame (--output, .npy); N served frames
// decoded (CDR with @foxglove/rosmsg2-serialization, PNG with fast-png) and compared with the files
// the run wrote for the same frame ids (the stats message of the same stamp names the frame):
//   /depthmask/depth   png: 16-bit millimetres, the {id}.mm.png rule (encoders.h depth_to_mm16: kept
//                      pixels rounded half away from zero, clamped to 65535, 0 elsewhere); raw: 32FC1
//                      with NaN where the output holds output.invalid — bit for bit
//   /depthmask/mask    255 where the output is not output.invalid
//   /depthmask/reason  (raw mode, which also writes the reason output) equal to {id}.reason.png
//   /depthmask/points  one point per kept pixel (finite, > 0, not invalid), back-projected
//   /depthmask/camera_info, /depthmask/stats
// usage: node serve_client.mjs DEPTHMASK_BIN WORK_DIR png|raw
import { MessageReader } from "@foxglove/rosmsg2-serialization";
import { parse } from "@foxglove/rosmsg";
import { decode as decodePng } from "fast-png";
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";

import { readNpy } from "./lib/codecs.mjs";
import { connect, startServer, stopServer, until } from "./lib/serve_run.mjs";

const [bin, work, mode = "png"] = process.argv.slice(2);
const W = 160, H = 120, N = 5;
const K = { fx: 150, fy: 140, cx: 79.5, cy: 60.25 };

function fail(msg) {
  console.error(`serve_client (${mode}): FAIL: ${msg}`);
  process.exit(1);
}
function check(cond, msg) {
  if (!cond) fail(msg);
}

const kept = (z) => Number.isFinite(z) && z > 0; // output.invalid is 0 here (the default)

fs.rmSync(work, { recursive: true, force: true });
fs.mkdirSync(work, { recursive: true });
const data = path.join(work, "data"), out = path.join(work, "out");
execFileSync(bin, ["synth", "-o", data, "-n", "12", "-s", `${W}x${H}`], { stdio: "ignore" });
const server = await startServer(bin, [
  "live", "--source", `replay://${data}?fps=20&loop=1`, "--serve", "127.0.0.1:0", "--output", out, "--duration", "60",
  "--set", `output.format=[${mode === "raw" ? "npy, reason" : "npy"}]`, "--set", `input.intrinsics={fx: ${K.fx}, fy: ${K.fy}, cx: ${K.cx}, cy: ${K.cy}}`,
  "--set", "live.serve_fps=20", "--set", `live.serve_depth=${mode}`, "--set", "live.overflow=block",
]);

const c = await connect(server.port);
check(c.serverInfo && Array.isArray(c.serverInfo.capabilities) && c.serverInfo.capabilities.length === 0,
  `serverInfo capabilities: ${JSON.stringify(c.serverInfo)}`);
await until(() => c.channels.has("/depthmask/color"), 10000, "/depthmask/color advertised after the first frame");
const expected = {
  "/depthmask/color": ["sensor_msgs/msg/CompressedImage", "cdr"],
  "/depthmask/mask": ["sensor_msgs/msg/CompressedImage", "cdr"],
  "/depthmask/depth": [mode === "raw" ? "sensor_msgs/msg/Image" : "sensor_msgs/msg/CompressedImage", "cdr"],
  "/depthmask/camera_info": ["sensor_msgs/msg/CameraInfo", "cdr"],
  "/depthmask/points": ["sensor_msgs/msg/PointCloud2", "cdr"],
  "/depthmask/stats": ["depthmask.LiveStats", "json"],
};
for (const [topic, [schema, enc]] of Object.entries(expected)) {
  const ch = c.channels.get(topic);
  check(ch && ch.schemaName === schema && ch.encoding === enc, `${topic}: ${JSON.stringify(ch && { ...ch, schema: "…" })}`);
}
const withReason = mode === "raw";
check(c.channels.has("/depthmask/reason") === withReason, `/depthmask/reason advertised: ${c.channels.has("/depthmask/reason")}`);

const readers = new Map();
const byStamp = new Map(); // stamp ns → { topic: decoded }
const topicOf = new Map();
const topics = ["/depthmask/depth", "/depthmask/mask", "/depthmask/points", "/depthmask/camera_info", "/depthmask/stats",
  "/depthmask/color", ...(withReason ? ["/depthmask/reason"] : [])];
for (const topic of topics) {
  const ch = c.channels.get(topic);
  if (ch.encoding === "cdr") readers.set(topic, new MessageReader(parse(ch.schema, { ros2: true })));
  topicOf.set(c.client.subscribe(ch.id), topic);
}
c.client.on("message", ({ subscriptionId, timestamp, data: view }) => {
  const topic = topicOf.get(subscriptionId);
  const bytes = new Uint8Array(view.buffer, view.byteOffset, view.byteLength);
  const msg = topic === "/depthmask/stats" ? JSON.parse(new TextDecoder().decode(bytes)) : readers.get(topic).readMessage(bytes);
  if (!byStamp.has(timestamp)) byStamp.set(timestamp, {});
  byStamp.get(timestamp)[topic] = msg;
});
const complete = () => [...byStamp.values()].filter((g) => Object.keys(g).length === topics.length);
await until(() => complete().length >= N, 30000, `${N} frames with all ${topics.length} channels`);
c.client.close();
const stopped = await stopServer(server);
check(stopped.code === 0, `exit ${stopped.code ?? stopped.signal}:\n${stopped.log}`);

let compared = 0;
for (const g of complete().slice(0, N)) {
  const stats = g["/depthmask/stats"];
  for (const k of ["sequence", "id", "fps", "latency_p50_us", "latency_p99_us", "processed", "drops_overflow",
    "drops_unpaired", "failed", "client_dropped"])
    check(k in stats, `stats without ${k}: ${JSON.stringify(stats)}`);
  const file = path.join(out, `${stats.id}.npy`);
  check(fs.existsSync(file), `frame ${stats.id} was served but ${file} was not written`);
  const { w, h, depth } = readNpy(file);
  check(w === W && h === H, `${file}: ${w}x${h}`);
  const d = g["/depthmask/depth"];
  if (mode === "raw") {
    check(d.encoding === "32FC1" && d.width === W && d.height === H && d.step === W * 4, `raw depth ${d.encoding} ${d.width}x${d.height}`);
    const got = new Float32Array(d.data.slice().buffer);
    for (let i = 0; i < W * H; ++i) {
      const want = depth[i] === 0 ? NaN : depth[i];
      if (!(Object.is(got[i], want) || (Number.isNaN(got[i]) && Number.isNaN(want))))
        fail(`frame ${stats.id} pixel ${i}: served ${got[i]}, written ${depth[i]}`);
    }
  } else {
    check(d.format === "png", `depth format ${d.format}`);
    const png = decodePng(d.data);
    check(png.width === W && png.height === H && png.depth === 16 && png.channels === 1, `depth PNG ${png.width}x${png.height} ${png.depth}-bit`);
    for (let i = 0; i < W * H; ++i) {
      const z = depth[i];
      const want = kept(z) ? Math.min(65535, Math.round(z * 1000)) : 0;
      if (png.data[i] !== want) fail(`frame ${stats.id} pixel ${i}: served ${png.data[i]} mm, written ${z} m (${want} mm)`);
    }
  }
  const m = decodePng(g["/depthmask/mask"].data);
  check(m.depth === 8 && m.channels === 1, "mask PNG is not mono8");
  for (let i = 0; i < W * H; ++i)
    if (m.data[i] !== (depth[i] === 0 ? 0 : 255)) fail(`frame ${stats.id} mask pixel ${i}: ${m.data[i]} for depth ${depth[i]}`);
  const pc = g["/depthmask/points"];
  const nKept = depth.reduce((n, z) => n + (kept(z) ? 1 : 0), 0);
  check(nKept > 0 && nKept < W * H, `frame ${stats.id}: ${nKept} kept pixels of ${W * H}: nothing to tell apart`);
  check(pc.point_step === 12 && pc.fields.map((f) => f.name).join() === "x,y,z", "point cloud fields");
  check(pc.width * pc.height === nKept, `frame ${stats.id}: ${pc.width * pc.height} points, ${nKept} kept pixels`);
  const xyz = new Float32Array(pc.data.slice().buffer);
  let p = 0;
  for (let v = 0; v < H; ++v)
    for (let u = 0; u < W; ++u) {
      const z = depth[v * W + u];
      if (!kept(z)) continue;
      const x = ((u - K.cx) / K.fx) * z, y = ((v - K.cy) / K.fy) * z;
      const [gx, gy, gz] = [xyz[3 * p], xyz[3 * p + 1], xyz[3 * p + 2]];
      if (gz !== z || Math.abs(gx - x) > 1e-5 * z + 1e-7 || Math.abs(gy - y) > 1e-5 * z + 1e-7)
        fail(`frame ${stats.id} point ${p} (pixel ${u},${v}): (${gx}, ${gy}, ${gz}), expected (${x}, ${y}, ${z})`);
      ++p;
    }
  const ci = g["/depthmask/camera_info"];
  check(ci.width === W && ci.height === H && ci.k[0] === K.fx && ci.k[2] === K.cx && ci.k[4] === K.fy && ci.k[5] === K.cy,
    `camera_info ${JSON.stringify({ w: ci.width, h: ci.height, k: Array.from(ci.k) })}`);
  check(g["/depthmask/color"].format === "jpeg", "colour format");
  if (withReason) {
    const served = decodePng(g["/depthmask/reason"].data);
    const written = decodePng(fs.readFileSync(path.join(out, `${stats.id}.reason.png`)));
    check(served.depth === 8 && served.channels === 1 && served.width === W, "reason PNG is not mono8");
    for (let i = 0; i < W * H; ++i)
      if (served.data[i] !== written.data[i]) fail(`frame ${stats.id} reason pixel ${i}: ${served.data[i]} != ${written.data[i]}`);
    check(new Set(served.data).size > 1, `frame ${stats.id}: one reason code only`);
  }
  ++compared;
}
const served = /served:\s+(\d+) client\(s\), (\d+) message\(s\) sent/.exec(stopped.log);
check(served && Number(served[1]) >= 1 && Number(served[2]) > 0, `summary without the served line:\n${stopped.log}`);
console.log(`serve_client (${mode}): OK: ${compared} served frames equal to the written ones (depth, mask, ` +
  `points, camera_info${withReason ? ", reason" : ""}); summary "${served[0]}"`);
