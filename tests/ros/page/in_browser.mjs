// The page `depthmask live --serve` serves (lib/live_serve/src/page.html), in a headless browser through
// puppeteer-core (Debian's Chromium; Firefox ESR with BROWSER=firefox, over WebDriver BiDi), against the
// real server: a replay of one synthetic frame looped (so every served frame is the frame the run wrote)
// with --output (.npy and the reason PNG). Checks: the page connects (state "connected"), draws all four
// panels (pixels that are not blank), the counters move; a click on the depth panel shows the depth
// the run wrote at that pixel and its reason code; pause stops drawing and resume starts it again; at
// a phone's width (390x844) the panels stack in one column and (Chromium, touch emulated) a tap probes
// a pixel; with live.serve_depth raw the probe shows the written float exactly; with a token the page
// passes ?token= through; when the server stops the page says it is disconnected and retrying. Saves a
// screenshot. Exit 0, or 1 naming what failed.
//   [BROWSER=chrome|firefox] [BROWSER_PATH=...] node tests/ros/page/in_browser.mjs DEPTHMASK_BIN WORK_DIR [SHOT.png]
import { decode as decodePng } from "fast-png";
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import puppeteer from "puppeteer-core";

import { readNpy } from "../lib/codecs.mjs";
import { sleep, startServer, stopServer, until } from "../lib/serve_run.mjs";

const [bin, work, screenshot] = process.argv.slice(2);
const W = 160, H = 120;
const firefox = process.env.BROWSER === "firefox";
const browserPath = process.env.BROWSER_PATH || (firefox ? "/usr/bin/firefox-esr" : "/usr/bin/chromium");
const tag = firefox ? "page_in_firefox" : "page_in_chromium";

function fail(msg) {
  throw new Error(msg);
}
function check(cond, msg) {
  if (!cond) fail(msg);
}

fs.rmSync(work, { recursive: true, force: true });
fs.mkdirSync(work, { recursive: true });
const data = path.join(work, "data");
execFileSync(bin, ["synth", "-o", data, "-n", "1", "-s", `${W}x${H}`], { stdio: "ignore" });

/** Serves the looped frame with `extra` settings; the run writes out/000000.{npy,reason.png}. */
async function serve(name, extra) {
  const out = path.join(work, name);
  const server = await startServer(bin, [
    "live", "--backend", "cpu", "--source", `replay://${data}?fps=15&loop=1`, "--serve", "127.0.0.1:0",
    "--output", out, "--duration", "120", "--set", "output.format=[npy,reason]", "--set", "live.serve_fps=10",
    "--set", "depth.max=1.2", ...extra,
  ]);
  await until(() => fs.existsSync(path.join(out, "000000.npy")) && fs.existsSync(path.join(out, "000000.reason.png")),
    20000, `${name}: the run writes its first frame`);
  await sleep(300);  // the files are renamed into place whole; give the first write time to finish
  const written = readNpy(path.join(out, "000000.npy"));
  const reason = decodePng(fs.readFileSync(path.join(out, "000000.reason.png")));
  return { server, written, reason };
}

/** Pixels of each canvas that are not black, and a hash of its content. */
const canvasStats = (page) => page.evaluate(() => {
  const r = {};
  for (const id of ["color", "mask", "depth", "reason"]) {
    const c = document.getElementById(id);
    const px = c.getContext("2d").getImageData(0, 0, c.width, c.height).data;
    let lit = 0, hash = 0;
    for (let i = 0; i < px.length; i += 4) {
      if (px[i] || px[i + 1] || px[i + 2]) ++lit;
      hash = (Math.imul(hash, 31) + px[i] + 3 * px[i + 1] + 7 * px[i + 2]) | 0;
    }
    r[id] = { w: c.width, h: c.height, lit, hash };
  }
  return r;
});

const drawn = (page) => page.evaluate(() => Number(document.body.dataset.drawn || 0));
const text = (page, id) => page.$eval("#" + id, (e) => e.textContent);
const probe = (page) => page.$eval("#probe", (e) => ({ ...e.dataset, text: e.textContent }));

/** Clicks (or taps) the depth panel at image pixel (x, y). */
async function clickPixel(page, x, y, tap = false) {
  const box = await page.$eval("#depth", (c) => {
    const b = c.getBoundingClientRect();
    return { left: b.left, top: b.top, width: b.width, height: b.height, cw: c.width, ch: c.height };
  });
  const cx = box.left + ((x + 0.5) * box.width) / box.cw, cy = box.top + ((y + 0.5) * box.height) / box.ch;
  if (tap) await page.touchscreen.tap(cx, cy);
  else await page.mouse.click(cx, cy);
  await page.waitForFunction((px, py) => {
    const d = document.getElementById("probe").dataset;
    return d.x === String(px) && d.y === String(py);
  }, { timeout: 5000 }, x, y);
  return probe(page);
}

/** A kept pixel and a dropped one of the written frame, away from the borders. */
function pickPixels(written) {
  let keptAt = null, droppedAt = null;
  for (let y = 20; y < H - 20 && !(keptAt && droppedAt); ++y)
    for (let x = 20; x < W - 20; ++x) {
      const z = written.depth[y * W + x];
      if (!keptAt && Number.isFinite(z) && z > 0) keptAt = { x, y, z };
      if (!droppedAt && z === 0) droppedAt = { x, y, z };
    }
  check(keptAt && droppedAt, "the written frame has kept and dropped pixels");
  return { keptAt, droppedAt };
}

const browser = await puppeteer.launch(firefox
  ? { browser: "firefox", executablePath: browserPath, headless: true, userDataDir: path.join(work, "profile") }
  : { executablePath: browserPath, headless: true, userDataDir: path.join(work, "profile"),
      args: ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"] });
const servers = [];
let failed = null;
try {
  // --- the 16-bit PNG depth (the default) ---
  const png = await serve("png", []);
  servers.push(png.server);
  const page = await browser.newPage();
  const errors = [];
  page.on("pageerror", (e) => errors.push(e.message));
  page.on("console", (m) => m.type() === "error" && errors.push(m.text()));
  await page.setViewport({ width: 1400, height: 900 });
  await page.goto(`http://127.0.0.1:${png.server.port}/`);
  await page.waitForFunction(() => document.getElementById("state").dataset.state === "connected", { timeout: 15000 });
  await page.waitForFunction(() => {
    const lit = (id) => {
      const c = document.getElementById(id);
      if (c.width < 2) return false;
      const px = c.getContext("2d").getImageData(0, 0, c.width, c.height).data;
      for (let i = 0; i < px.length; i += 4) if (px[i] || px[i + 1] || px[i + 2]) return true;
      return false;
    };
    return ["color", "mask", "depth", "reason"].every(lit);
  }, { timeout: 20000 });
  const stats = await canvasStats(page);
  for (const id of ["color", "mask", "depth", "reason"])
    check(stats[id].w === W && stats[id].h === H, `${id} canvas is ${stats[id].w}x${stats[id].h}, expected ${W}x${H}`);
  check(stats.depth.lit > 100, `the depth panel has ${stats.depth.lit} coloured pixels`);
  check((await text(page, "t-reason")) === "", "the reason panel says it is sent");
  check((await text(page, "scale-hi")).endsWith(" m"), "the colour scale's legend is in metres");

  // The counters move: processed grows, fps and latency are numbers.
  const p0 = Number(await text(page, "c-processed"));
  await page.waitForFunction((p) => Number(document.getElementById("c-processed").textContent) > p,
    { timeout: 10000 }, p0);
  check(/^\d+\.\d$/.test(await text(page, "c-fps")), `fps shows ${await text(page, "c-fps")}`);
  check(/ms$/.test(await text(page, "c-latency")), `latency shows ${await text(page, "c-latency")}`);
  check(/^\d+$/.test(await text(page, "c-client")), `this client's drops show ${await text(page, "c-client")}`);
  check(/^\d+$/.test(await text(page, "c-overflow")), `overflow drops show ${await text(page, "c-overflow")}`);

  // A click on a kept pixel: the written depth (to the millimetre the PNG carries) and reason 0.
  const { keptAt, droppedAt } = pickPixels(png.written);
  let p = await clickPixel(page, keptAt.x, keptAt.y);
  check(p.depthMm === String(Math.round(keptAt.z * 1000)),
    `probe at ${keptAt.x},${keptAt.y}: ${p.depthMm} mm shown, the run wrote ${keptAt.z} m (${p.text})`);
  check(p.text.includes((Math.round(keptAt.z * 1000) / 1000).toFixed(3) + " m"), `probe text: ${p.text}`);
  check(p.reason === "0" && p.text.includes("(kept)"), `probe reason at a kept pixel: ${p.text}`);
  p = await clickPixel(page, droppedAt.x, droppedAt.y);
  const code = png.reason.data[droppedAt.y * W + droppedAt.x];
  check(p.depthMm === "0" && p.text.includes("dropped"), `probe at a dropped pixel: ${p.text}`);
  check(p.reason === String(code) && code > 0, `probe reason ${p.reason}, the run wrote ${code}: ${p.text}`);

  // Pause: drawing stops (the image channels are unsubscribed); resume: it starts again.
  await page.click("#pause");
  check((await text(page, "pause")) === "Resume", "the pause button turns into Resume");
  await sleep(500);  // a decode in flight may still finish
  const d0 = await drawn(page), h0 = (await canvasStats(page)).depth.hash;
  await sleep(2000);
  check((await drawn(page)) === d0, `drawn ${d0} → ${await drawn(page)} while paused`);
  check((await canvasStats(page)).depth.hash === h0, "the depth panel changed while paused");
  const c0 = Number(await text(page, "c-processed"));
  await page.waitForFunction((c) => Number(document.getElementById("c-processed").textContent) > c,
    { timeout: 10000 }, c0);  // the counters go on while paused
  await page.click("#pause");
  await page.waitForFunction((d) => Number(document.body.dataset.drawn) > d + 3, { timeout: 10000 }, d0);

  if (screenshot) await page.screenshot({ path: screenshot });

  // A phone: one column, and a tap (Chromium's touch emulation; a click in Firefox) probes.
  await page.setViewport(firefox ? { width: 390, height: 844 }
    : { width: 390, height: 844, isMobile: true, hasTouch: true, deviceScaleFactor: 2 });
  await sleep(300);
  const boxes = await page.$$eval("figure", (fs) => fs.map((f) => f.getBoundingClientRect().toJSON()));
  check(boxes.length === 4, `${boxes.length} panels`);
  for (let i = 1; i < 4; ++i) {
    check(Math.abs(boxes[i].left - boxes[0].left) < 1, `phone: panel ${i} at x ${boxes[i].left}, panel 0 at ${boxes[0].left}`);
    check(boxes[i].top >= boxes[i - 1].bottom - 1, `phone: panel ${i} is not below panel ${i - 1}`);
  }
  check(boxes[0].right <= 390 + 1, `phone: panels ${boxes[0].width} px wide overflow the screen`);
  await page.evaluate(() => document.getElementById("depth").scrollIntoView());
  p = await clickPixel(page, keptAt.x, keptAt.y, !firefox);
  check(p.depthMm === String(Math.round(keptAt.z * 1000)), `phone tap: ${p.text}`);
  check(errors.length === 0, `page errors: ${errors.join("; ")}`);
  // The server goes away: the page says so and that it retries.
  const summary = await stopServer(png.server);
  servers.pop();
  check(summary.code === 0, `the png run exited ${summary.code ?? summary.signal}:\n${summary.log.slice(-2000)}`);
  await page.waitForFunction(() => document.getElementById("state").dataset.state !== "connected", { timeout: 10000 });
  await page.waitForFunction(() => /retrying in/.test(document.getElementById("state").textContent), { timeout: 10000 });
  await page.close();

  // --- raw 32FC1 depth, behind a token ---
  const raw = await serve("raw", ["--set", "live.serve_depth=raw", "--set", "live.serve_token=s3cret"]);
  servers.push(raw.server);
  const page2 = await browser.newPage();
  await page2.setViewport({ width: 1400, height: 900 });
  await page2.goto(`http://127.0.0.1:${raw.server.port}/?token=s3cret`);
  await page2.waitForFunction(() => document.getElementById("state").dataset.state === "connected", { timeout: 15000 });
  await page2.waitForFunction(() => document.getElementById("t-depth").textContent === "32FC1", { timeout: 20000 });
  const picked = pickPixels(raw.written);
  p = await clickPixel(page2, picked.keptAt.x, picked.keptAt.y);
  check(p.depthM === String(picked.keptAt.z), `raw probe ${p.depthM} m, the run wrote ${picked.keptAt.z} (${p.text})`);
  p = await clickPixel(page2, picked.droppedAt.x, picked.droppedAt.y);
  check(p.depthM === "" && p.text.includes("NaN"), `raw probe at a dropped pixel: ${p.text}`);
  await page2.close();
  await stopServer(raw.server);
  servers.pop();
  console.log(`${tag}: every check passed` + (screenshot ? ` (screenshot: ${screenshot})` : ""));
} catch (e) {
  failed = e;
} finally {
  await browser.close();
  for (const s of servers) await stopServer(s);
}
if (failed) {
  console.error(`${tag}: FAIL: ${failed.message}`);
  process.exit(1);
}
