// live --serve's safety and bad clients, against the real binary (synthetic 640x480 frames, raw depth):
// the token on HTTP and WebSocket, 404, Cache-Control, a non-loopback bind's warning, the
// subprotocol; malformed JSON, unknown and refused ops, unknown channels, binary and oversized client
// frames, raw TCP garbage; 300 connects/disconnects; a client that stops reading is closed. The
// server's file descriptors and resident memory stay flat, and a healthy client keeps receiving. At
// live.serve_max_connections a new connection waits until one closes.
// usage: node serve_robust.mjs DEPTHMASK_BIN WORK_DIR
import net from "node:net";
import WebSocket from "ws";

import { connect, sleep, startServer, stopServer, until, usage } from "./lib/serve_run.mjs";

const [bin] = process.argv.slice(2);
const TOKEN = "s3cret/+x";
const Q = `?token=${encodeURIComponent(TOKEN)}`;
const CYCLES = 300;

function fail(msg) {
  console.error(`serve_robust: FAIL: ${msg}`);
  process.exit(1);
}
function check(cond, msg) {
  if (!cond) fail(msg);
}

const server = await startServer(bin, [
  "live", "--source", "synthetic://?size=640x480&fps=30", "--serve", "0.0.0.0:0", "--duration", "240",
  "--set", `live.serve_token="${TOKEN}"`, "--set", "live.serve_timeout=1", "--set", "live.serve_depth=raw",
  "--set", "live.serve_queue=8", "--set", "live.serve_fps=15",
]);
const { port } = server;
const pid = server.proc.pid;
const base = `http://127.0.0.1:${port}`;
await until(() => /not a loopback address: the stream is visible on the network/.test(server.log()), 5000,
  "the warning for a non-loopback bind");

// HTTP: the token, the page, 404, no caching.
const get = (p) => fetch(base + p);
check((await get("/")).status === 401, "GET / without the token is not 401");
check((await get("/?token=wrong")).status === 401, "GET / with a wrong token is not 401");
const page = await get("/" + Q);
check(page.status === 200 && page.headers.get("content-type").startsWith("text/html") &&
  page.headers.get("cache-control") === "no-store", `GET /: ${page.status} ${[...page.headers]}`);
check((await page.text()).includes("foxglove.websocket.v1"), "the page does not speak the protocol");
check((await get("/index.html" + Q)).status === 200, "GET /index.html");
const missing = await get("/nope" + Q);
check(missing.status === 404 && missing.headers.get("cache-control") === "no-store", `GET /nope: ${missing.status}`);

// WebSocket: the token and the subprotocol are required.
function refused(url, protocols) {
  return new Promise((resolve) => {
    const ws = new WebSocket(url, protocols);
    ws.on("unexpected-response", (_req, res) => resolve(res.statusCode));
    ws.on("open", () => { ws.close(); resolve("opened"); });
    ws.on("error", () => {});
  });
}
check(await refused(`ws://127.0.0.1:${port}/`, ["foxglove.websocket.v1"]) === 401, "WebSocket without the token");
check(await refused(`ws://127.0.0.1:${port}/${Q}`, ["other"]) === 400, "WebSocket without foxglove.websocket.v1");

// A healthy client that stays connected throughout.
const healthy = await connect(port, Q);
let healthyMessages = 0;
healthy.client.on("message", () => ++healthyMessages);
healthy.client.subscribe(healthy.channels.get("/depthmask/depth").id);
healthy.client.subscribe(healthy.channels.get("/depthmask/stats").id);
await until(() => healthyMessages >= 10, 15000, "the healthy client's first messages");

async function cycles(n, batch = 20) {
  for (let i = 0; i < n; i += batch) {
    await Promise.all(Array.from({ length: Math.min(batch, n - i) }, async (_, k) => {
      const c = await connect(port, Q);
      if ((i + k) % 2) c.client.subscribe(c.channels.get("/depthmask/depth").id);
      await sleep(5);
      c.client.close();
    }));
  }
}

// Garbage from a client that stays: each answered with a status, the connection kept.
async function garbage() {
  const ws = new WebSocket(`ws://127.0.0.1:${port}/${Q}`, ["foxglove.websocket.v1"]);
  const statuses = [];
  ws.on("message", (d, binary) => {
    if (!binary) { const m = JSON.parse(d.toString()); if (m.op === "status") statuses.push(m); }
  });
  await new Promise((r) => ws.on("open", r));
  const bad = ["not json", "[1,2]", "{}", '{"op": 5}', '{"op":"nope"}', '{"op":"subscribe","subscriptions":"x"}',
    '{"op":"subscribe","subscriptions":[{"id":1,"channelId":999}]}', '{"op":"subscribe","subscriptions":[{"id":-1,"channelId":1}]}',
    '{"op":"unsubscribe","subscriptionIds":[77]}', '{"op":"setParameters","parameters":[]}', '{"op":"advertise","channels":[]}',
    '{"op":"callService"}', "\u0000\u00ff"];
  for (const b of bad) ws.send(b);
  ws.send(Buffer.from([1, 0, 0, 0, 1, 2, 3]));
  await until(() => statuses.length >= bad.length + 1, 5000, `a status per bad message (${statuses.length} of ${bad.length + 1})`);
  check(ws.readyState === WebSocket.OPEN, "the server closed a client for a bad message");
  check(statuses.some((s) => /read-only/.test(s.message)) && statuses.some((s) => /not advertised/.test(s.message)) &&
    statuses.some((s) => /malformed JSON/.test(s.message)) && statuses.some((s) => /binary/.test(s.message)),
  `statuses: ${JSON.stringify(statuses.map((s) => s.message))}`);
  // Over the read limit (64 KiB): that client is closed.
  const closed = new Promise((r) => ws.on("close", (code) => r(code)));
  ws.send("x".repeat(100 * 1024));
  const code = await Promise.race([closed, sleep(5000).then(() => "open")]);
  check(code !== "open", "an oversized message did not close its client");
  // Raw TCP: not HTTP, and a header over the limit.
  for (const junk of [Buffer.from("\x16\x03\x01garbage\r\n\r\n"), Buffer.from(`GET / HTTP/1.1\r\nX: ${"a".repeat(40000)}\r\n\r\n`)]) {
    await new Promise((resolve) => {
      const s = net.connect(port, "127.0.0.1", () => s.write(junk));
      s.on("error", () => resolve());
      s.on("close", () => resolve());
      s.setTimeout(5000, () => fail("raw TCP garbage was not answered with a close"));
    });
  }
}

await cycles(50); // warm up the allocator before the baseline
await garbage();
await sleep(500);
const before = usage(pid);
for (let round = 0; round < 3; ++round) {
  await cycles(CYCLES / 3);
  await garbage();
}
await sleep(1500);
const after = usage(pid);
check(after.fds <= before.fds + 2, `file descriptors grew: ${before.fds} → ${after.fds}`);
check(after.rssKiB <= before.rssKiB + 24 * 1024, `resident memory grew: ${before.rssKiB} → ${after.rssKiB} KiB`);

// A client that subscribes to the raw depth and stops reading: closed after live.serve_timeout.
const stalled = await connect(port, Q);
stalled.client.subscribe(stalled.channels.get("/depthmask/depth").id);
await sleep(200);
stalled.ws._socket.pause();
await until(() => /closing client \d+: it stopped (reading|answering)/.test(server.log()), 20000, "the stalled client closed");

const seen = healthyMessages;
await until(() => healthyMessages >= seen + 10, 10000, "the healthy client still receiving");
healthy.client.close();
const stopped = await stopServer(server);
check(stopped.code === 0, `exit ${stopped.code ?? stopped.signal}:\n${stopped.log}`);
const m = /served:\s+(\d+) client\(s\), (\d+) message\(s\) sent, (\d+) dropped for slow clients, (\d+) client\(s\) closed/
  .exec(stopped.log);
check(m && Number(m[1]) >= CYCLES + 50 && Number(m[4]) >= 5, `summary: ${m && m[0]}\n${stopped.log.slice(-2000)}`);

// live.serve_max_connections: at the cap (a WebSocket client and two idle HTTP connections of 3) a new
// request waits, unanswered, until a connection closes; then it is served.
const capped = await startServer(bin, [
  "live", "--source", "synthetic://?size=64x48&fps=30", "--serve", "0", "--duration", "60",
  "--set", "live.serve_max_connections=3", "--set", "live.serve_timeout=30",
]);
const viewer = await connect(capped.port);
const idle = await Promise.all([0, 1].map(() => new Promise((resolve, reject) => {
  const s = net.connect(capped.port, "127.0.0.1", () => resolve(s));
  s.on("error", reject);
})));
await until(() => /3 connections open \(live.serve_max_connections\): new ones wait/.test(capped.log()), 5000,
  "the warning that the cap is reached");
let answered = null;
const waiting = fetch(`http://127.0.0.1:${capped.port}/`).then((r) => (answered = r.status));
await sleep(1500);
check(answered === null, `a request past live.serve_max_connections was answered (${answered})`);
idle[0].destroy();
await until(() => answered !== null, 5000, "the waiting request served once a connection closed");
check((await waiting) === 200, `the waiting request: ${answered}`);
idle[1].destroy();
viewer.client.close();
const cappedStop = await stopServer(capped);
check(cappedStop.code === 0, `capped server: exit ${cappedStop.code ?? cappedStop.signal}:\n${cappedStop.log}`);

console.log(`serve_robust: OK: fds ${before.fds} → ${after.fds}, RSS ${before.rssKiB} → ${after.rssKiB} KiB over ` +
  `${CYCLES} connections and 4 rounds of garbage; stalled client closed; "${m[0]}"; a request past ` +
  `live.serve_max_connections waited and was served when a connection closed`);
