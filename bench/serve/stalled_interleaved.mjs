// live --serve benchmark, paired within one run (not a test: timings): `depthmask live` on synthetic
// 640x480 frames at 30 fps with --serve and one healthy client subscribed to every channel; at each
// live.stats_interval line (every 5 s) a stalled client (subscribed to every channel, never reading)
// is attached or removed, so consecutive intervals alternate between "healthy only" and "healthy +
// stalled" under the same machine load. Prints each interval's p99 and the medians per case.
// usage: node bench/serve/stalled_interleaved.mjs DEPTHMASK_BIN [INTERVALS=24]
import { connect, sleep, startServer, until } from "../../tests/ros/lib/serve_run.mjs";

const [bin, intervals = "24"] = process.argv.slice(2);
const n = Number(intervals);
const server = await startServer(bin, [
  "live", "--source", "synthetic://?size=640x480&fps=30", "--serve", "127.0.0.1:0", "--duration", String(5 * n + 12),
  "--backend", "cpu", "--set", "live.serve_timeout=3600", "--set", "live.stats_interval=5",
  "--set", "input.intrinsics={fx: 525, fy: 525, cx: 319.5, cy: 239.5}",
]);
const lines = () => [...server.log().matchAll(/live: ([\d.]+) fps, latency p50 (\d+) µs p99 (\d+) µs/g)];
const healthy = await connect(server.port);
await sleep(300);
for (const ch of healthy.channels.values()) healthy.client.subscribe(ch.id);
let received = 0;
healthy.client.on("message", () => ++received);

const state = []; // state[i]: whether a stalled client was attached during stats interval i
let stall = null;
await until(() => lines().length >= 1, 15000, "the first stats line"); // interval 0: start-up, left out
for (let i = 1; i <= n; ++i) {
  const stalled = i % 2 === 0;
  if (stalled && !stall) {
    stall = await connect(server.port);
    for (const ch of stall.channels.values()) stall.client.subscribe(ch.id);
    await sleep(50);
    stall.ws._socket.pause();
  } else if (!stalled && stall) {
    stall.ws.terminate();
    stall = null;
  }
  state[i] = stalled;
  await until(() => lines().length >= i + 1, 15000, `stats line ${i + 1}`);
}
if (stall) stall.ws.terminate();
healthy.ws.terminate();
server.proc.kill("SIGINT");
await server.exited;
const got = lines();
const by = { false: [], true: [] };
for (let i = 1; i <= n; ++i) {
  const [, fps, p50, p99] = got[i].map(Number);
  by[state[i]].push(p99);
  console.log(`interval ${i}: ${state[i] ? "healthy + stalled" : "healthy only   "}  ${fps} fps  p50 ${p50} µs  p99 ${p99} µs`);
}
const median = (a) => [...a].sort((x, y) => x - y)[Math.floor(a.length / 2)];
const h = median(by.false), s = median(by.true);
console.log(`median p99 over ${by.false.length} + ${by.true.length} intervals: healthy only ${h} µs, with a stalled ` +
  `client ${s} µs (${((s / h - 1) * 100).toFixed(1)} %); healthy client received ${received} messages`);
console.log(/served:.*/.exec(server.log())?.[0] ?? "");
