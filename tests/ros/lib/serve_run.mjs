// Helpers of the live --serve tests: run `depthmask live --serve 127.0.0.1:0 ...`, read the port it
// bound from its log, measure its file descriptors and memory, stop it and collect its summary.
import { spawn } from "node:child_process";
import fs from "node:fs";
import WebSocket from "ws";
import wsProtocol from "@foxglove/ws-protocol";

const { FoxgloveClient } = wsProtocol;

/** Starts the binary with `args`; resolves to { proc, port, log() } once it logs the port it serves on. */
export function startServer(bin, args, { timeoutMs = 30000 } = {}) {
  const proc = spawn(bin, args, { stdio: ["ignore", "pipe", "pipe"] });
  let out = "";
  proc.stdout.on("data", (d) => (out += d));
  proc.stderr.on("data", (d) => (out += d));
  const exited = new Promise((resolve) => proc.on("exit", (code, signal) => resolve({ code, signal })));
  // A test that fails half-way leaves no server behind.
  process.on("exit", () => proc.exitCode === null && proc.signalCode === null && proc.kill("SIGKILL"));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no "serving on" line within ${timeoutMs} ms:\n${out}`)), timeoutMs);
    const poll = setInterval(() => {
      const m = /serving on http:\/\/([^/]+):(\d+)\//.exec(out);
      if (m) {
        clearInterval(poll);
        clearTimeout(timer);
        resolve({ proc, port: Number(m[2]), log: () => out, exited });
      }
    }, 20);
    exited.then((e) => {
      clearInterval(poll);
      clearTimeout(timer);
      reject(new Error(`depthmask exited (${e.code ?? e.signal}) before serving:\n${out}`));
    });
  });
}

/** SIGINT, then the exit and the whole log (the run summary is in it). */
export async function stopServer(server) {
  server.proc.kill("SIGINT");
  const e = await server.exited;
  return { ...e, log: server.log() };
}

/** Open file descriptors and resident memory (KiB) of process `pid`, from /proc. */
export function usage(pid) {
  const fds = fs.readdirSync(`/proc/${pid}/fd`).length;
  const rss = Number(/VmRSS:\s+(\d+)/.exec(fs.readFileSync(`/proc/${pid}/status`, "utf8"))[1]);
  return { fds, rssKiB: rss };
}

/** A FoxgloveClient on ws://127.0.0.1:port/ (plus `query`), resolved with its first advertise. */
export function connect(port, query = "") {
  const ws = new WebSocket(`ws://127.0.0.1:${port}/${query}`, [FoxgloveClient.SUPPORTED_SUBPROTOCOL]);
  const client = new FoxgloveClient({ ws });
  const state = { ws, client, serverInfo: null, channels: new Map(), statuses: [] };
  client.on("status", (s) => state.statuses.push(s));
  client.on("advertise", (chs) => chs.forEach((c) => state.channels.set(c.topic, c)));
  return new Promise((resolve, reject) => {
    client.on("error", reject);
    client.on("serverInfo", (i) => (state.serverInfo = i));
    client.on("advertise", () => resolve(state));
  });
}

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** Waits until `pred()` or `ms` pass; throws `what` on the timeout. */
export async function until(pred, ms, what) {
  const end = Date.now() + ms;
  while (!pred()) {
    if (Date.now() > end) throw new Error(`timed out: ${what}`);
    await sleep(20);
  }
}
