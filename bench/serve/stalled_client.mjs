// live --serve benchmark (not a test: timings): does a stalled viewer slow the pipeline? Runs
// `depthmask live` on synthetic 640x480 frames at 30 fps with --serve, one healthy Foxglove client
// subscribed to every channel, and, in the "stalled" runs, a second client that subscribes to every
// channel and never reads again (its socket paused; live.serve_timeout 3600 s keeps it connected for
// the whole run). Prints each run's pipeline latency (capture to masked: p50, p99) from the run
// summary, alternating the two cases, and the medians.
// usage: node bench/serve/stalled_client.mjs DEPTHMASK_BIN [SECONDS=20] [ROUNDS=3]
import { connect, sleep, startServer, stopServer } from "../../tests/ros/lib/serve_run.mjs";

const [bin, seconds = "20", rounds = "3"] = process.argv.slice(2);

async function subscribeAll(c) {
  for (const ch of c.channels.values()) c.client.subscribe(ch.id);
}

async function run(stalled) {
  const server = await startServer(bin, [
    "live", "--source", "synthetic://?size=640x480&fps=30", "--serve", "127.0.0.1:0", "--duration", seconds,
    "--backend", "cpu", "--set", "live.serve_timeout=3600", "--set", "live.stats_interval=0",
    "--set", "input.intrinsics={fx: 525, fy: 525, cx: 319.5, cy: 239.5}",
  ]);
  const healthy = await connect(server.port);
  await sleep(300); // the colour channel is advertised after the first frame
  let received = 0;
  const bytes = new Map(); // subscription → [count, bytes]
  healthy.client.on("message", ({ subscriptionId, data }) => {
    ++received;
    const b = bytes.get(subscriptionId) ?? [0, 0];
    bytes.set(subscriptionId, [b[0] + 1, b[1] + data.byteLength]);
  });
  const topics = new Map();
  for (const ch of healthy.channels.values()) topics.set(healthy.client.subscribe(ch.id), ch.topic);
  let stall = null;
  if (stalled) {
    stall = await connect(server.port);
    await sleep(300);
    await subscribeAll(stall);
    await sleep(100);
    stall.ws._socket.pause();
  }
  const e = await server.exited;
  const log = server.log();
  const lat = /latency \(capture to masked\): p50 (\d+) us, p99 (\d+) us/.exec(log);
  const served = /served:.*/.exec(log);
  const fps = /\(([\d.]+) frames\/s/.exec(log);
  healthy.ws.terminate();
  if (stall) stall.ws.terminate();
  if (!lat) throw new Error(`no summary (exit ${e.code}):\n${log}`);
  const sizes = [...bytes].map(([sub, [n, b]]) => `${topics.get(sub)} ${(b / n / 1024).toFixed(0)} KiB`).join(", ");
  return { sizes, stalled, p50: Number(lat[1]), p99: Number(lat[2]), fps: Number(fps[1]), received, served: served[0] };
}

const results = [];
for (let r = 0; r < Number(rounds); ++r)
  for (const stalled of [false, true]) {
    const x = await run(stalled);
    results.push(x);
    console.log(`${x.stalled ? "stalled+healthy" : "healthy only   "}  ${x.fps} fps  p50 ${x.p50} us  p99 ${x.p99} us  ` +
      `healthy client got ${x.received} messages; ${x.served}`);
  }
console.log(`mean message sizes (healthy client, last run): ${results.at(-1).sizes}`);
const median = (a) => a.sort((x, y) => x - y)[Math.floor(a.length / 2)];
const h = median(results.filter((x) => !x.stalled).map((x) => x.p99));
const s = median(results.filter((x) => x.stalled).map((x) => x.p99));
console.log(`median p99: healthy only ${h} us, with a stalled client ${s} us (${((s / h - 1) * 100).toFixed(1)} %)`);
