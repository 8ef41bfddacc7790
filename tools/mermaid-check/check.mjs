#!/usr/bin/env node
// check.mjs — render Mermaid state diagrams with the real mermaid library in
// headless Chromium and check that every state (and every transition) is drawn.
//
// usage: node check.mjs [--out DIR] [--states-only] FILE.mmd...
//
// For each FILE it:
//   1. calls mermaid.render on the file's text in a blank page (mermaid's own
//      bundle from node_modules, injected with addScriptTag; all network
//      requests from the page are aborted) and fails with mermaid's message
//      if that throws;
//   2. parses the state names out of the .mmd itself (every identifier on
//      either side of `-->`, except [*], plus `state X` declarations) and
//      checks each one is a rendered node of the SVG (g.node with id
//      "<svg>-state-<Name>-<n>", a non-empty bounding box, and the state's name
//      as its label — choice/fork/join pseudo-states have no label);
//   3. unless --states-only, checks every transition's label ("Event [guard] /
//      Action", or none) appears on a rendered edge, as many times as the .mmd
//      has it: Mermaid can silently drop edges (e.g. a second self-loop on the
//      same state), which step 2 alone would not notice.
// It writes NAME.svg and NAME.png into --out DIR (default: a new temp dir),
// never next to the input. Exit status: 0 all good, 1 a check failed, 2 usage.

import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createRequire } from 'node:module';
import puppeteer from 'puppeteer-core';

const require = createRequire(import.meta.url);
const CHROMIUM = process.env.CHROMIUM_PATH || '/usr/bin/chromium';

function usage(msg) {
  if (msg) console.error(`check.mjs: ${msg}`);
  console.error('usage: node check.mjs [--out DIR] [--states-only] FILE.mmd...');
  process.exit(2);
}

// ---- arguments -------------------------------------------------------------
const files = [];
let outDir = null;
let statesOnly = false;
const argv = process.argv.slice(2);
for (let i = 0; i < argv.length; i++) {
  const a = argv[i];
  if (a === '--out' || a === '--svg') {
    if (i + 1 >= argv.length) usage(`${a} needs a directory`);
    outDir = argv[++i];
  } else if (a.startsWith('--out=')) outDir = a.slice(6);
  else if (a === '--states-only') statesOnly = true;
  else if (a === '-h' || a === '--help') usage();
  else if (a.startsWith('--')) usage(`unknown flag ${a}`);
  else files.push(a);
}
if (files.length === 0) usage('no input file');
outDir = outDir ? path.resolve(outDir) : fs.mkdtempSync(path.join(os.tmpdir(), 'mermaid-check-'));
fs.mkdirSync(outDir, { recursive: true });

// ---- parse the .mmd for what must be drawn ---------------------------------
// Returns { states: Map(name -> {kind, label}), transitions: [{line, from, to, label}] }.
function parseMmd(text) {
  const states = new Map();
  const transitions = [];
  const add = (name, kind = 'state', label = name) => {
    if (name === '[*]') return;
    const prev = states.get(name);
    if (!prev) states.set(name, { kind, label });
    else if (kind !== 'state' || label !== name) states.set(name, { kind, label });
  };
  const clean = (id) => id.replace(/:::.*$/, '').trim(); // drop A:::class
  text.split(/\r?\n/).forEach((raw, idx) => {
    const line = raw.replace(/%%.*$/, '').trim();
    if (!line) return;
    let m;
    if ((m = line.match(/^state\s+"([^"]*)"\s+as\s+(\S+)/))) {
      add(clean(m[2]), 'state', m[1]);
    } else if ((m = line.match(/^state\s+([^\s{]+)\s*\{$/))) {
      add(clean(m[1]), 'composite'); // drawn as a cluster holding its states
    } else if (line === '}' || /^note\s/.test(line)) {
      // the end of a composite state; a note is drawn beside its state
    } else if ((m = line.match(/^([A-Za-z_][\w]*)$/))) {
      add(clean(m[1])); // a state declared inside a composite state
    } else if ((m = line.match(/^state\s+([^\s{]+)\s*(?:<<(\w+)>>)?/))) {
      add(clean(m[1]), m[2] ? m[2].toLowerCase() : 'state');
    } else if ((m = line.match(/^(\S+?)\s*-->\s*([^\s:]+)\s*(?::(.*))?$/))) {
      const from = clean(m[1]);
      const to = clean(m[2]);
      const label = (m[3] ?? '').trim();
      if (!states.has(from)) add(from);
      if (!states.has(to)) add(to);
      transitions.push({ line: idx + 1, from, to, label });
    }
  });
  return { states, transitions };
}

// ---- runs in the page ------------------------------------------------------
async function renderInPage(id, text) {
  /* global mermaid, document, window */
  try {
    await mermaid.parse(text);
    const { svg } = await mermaid.render(id, text);
    const host = document.createElement('div');
    host.id = 'host';
    host.style.display = 'inline-block';
    host.style.padding = '16px';
    host.style.background = 'white';
    host.innerHTML = svg;
    document.getElementById('host')?.remove();
    document.body.appendChild(host);
    const el = host.querySelector('svg');
    const maxW = parseFloat(el.style.maxWidth) || el.viewBox.baseVal.width || 800;
    el.setAttribute('width', String(maxW)); // draw at natural size, not 100% of a narrow page
    el.style.maxWidth = 'none';
    return { ok: true, svg, width: Math.ceil(maxW) };
  } catch (e) {
    // mermaid leaves its "Syntax error" placeholder behind: remove it
    document.querySelectorAll(`#d${id}, #${id}`).forEach((n) => n.remove());
    const msg = (e && (e.message || e.str)) || String(e);
    return { ok: false, error: msg };
  }
}

function inspectInPage(id, wanted) {
  /* global document, CSS */
  const svg = document.querySelector('#host svg');
  const nodes = [...svg.querySelectorAll('g.node')];
  const clusters = [...svg.querySelectorAll('g.statediagram-cluster')];
  const found = {};
  for (const [name, want] of wanted) {
    const re = new RegExp(`^${id}-state-${name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}-\\d+$`);
    if (want.kind === 'composite') {
      // A composite state is a cluster: a box titled with its name.
      const c = clusters.find((n) => re.test(n.id));
      if (!c) { found[name] = { drawn: false, why: 'no cluster in the SVG' }; continue; }
      const box = c.getBBox();
      const title = c.querySelector('g.cluster-label')?.textContent.replace(/\s+/g, ' ').trim();
      if (!(box.width > 0 && box.height > 0)) { found[name] = { drawn: false, why: `cluster ${c.id} has an empty box` }; continue; }
      if (title !== name) { found[name] = { drawn: false, why: `cluster ${c.id} is titled ${JSON.stringify(title)}` }; continue; }
      found[name] = { drawn: true, id: c.id, label: title };
      continue;
    }
    const g = nodes.find((n) => re.test(n.id));
    if (!g) { found[name] = { drawn: false, why: 'no node in the SVG' }; continue; }
    const box = g.getBBox();
    if (!(box.width > 0 && box.height > 0)) { found[name] = { drawn: false, why: `node ${g.id} has an empty box` }; continue; }
    const label = g.textContent.replace(/\s+/g, ' ').trim();
    if (want.kind === 'state' && label !== want.label) {
      found[name] = { drawn: false, why: `node ${g.id} is labelled ${JSON.stringify(label)}, want ${JSON.stringify(want.label)}` };
      continue;
    }
    found[name] = { drawn: true, id: g.id, label };
  }
  const edgeLabels = [...svg.querySelectorAll('g.edgeLabel')]
    .filter((g) => !g.parentElement.closest('g.edgeLabel')) // outermost only
    .map((g) => g.textContent.replace(/\s+/g, ' ').trim());
  const edgePaths = svg.querySelectorAll('path.transition').length;
  const start = nodes.some((n) => /-state-root_start-\d+$/.test(n.id));
  // [*] as a target: the machine's end (root_end), or a composite
  // state's final state, drawn inside it (<Composite>_end).
  const end = nodes.some((n) => /-state-[A-Za-z0-9_]+_end-\d+$/.test(n.id));
  return { found, edgeLabels, edgePaths, start, end };
}

// ---- main ------------------------------------------------------------------
const userDataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'mermaid-check-profile-'));
let browser;
let failed = false;
try {
  browser = await puppeteer.launch({
    executablePath: CHROMIUM,
    headless: true,
    userDataDir,
    args: [
      '--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync',
    ],
  });
  const page = await browser.newPage();
  await page.setRequestInterception(true);
  page.on('request', (req) => {
    const u = req.url();
    if (u === 'about:blank' || u.startsWith('data:')) req.continue();
    else req.abort();
  });
  await page.setContent('<!doctype html><html><head><meta charset="utf-8"></head><body style="margin:0;background:white"></body></html>');
  const bundle = require.resolve('mermaid/dist/mermaid.min.js');
  await page.addScriptTag({ content: fs.readFileSync(bundle, 'utf8') });
  const version = JSON.parse(fs.readFileSync(path.join(path.dirname(bundle), '..', 'package.json'), 'utf8')).version;
  await page.evaluate(() => mermaid.initialize({ startOnLoad: false, securityLevel: 'strict', logLevel: 'fatal' }));
  console.log(`mermaid ${version}, ${(await browser.version())}; output in ${outDir}`);

  const usedNames = new Set();
  for (const [i, file] of files.entries()) {
    const problems = [];
    let text;
    try { text = fs.readFileSync(file, 'utf8'); } catch (e) { console.error(`${file}: ${e.message}`); failed = true; continue; }
    const { states, transitions } = parseMmd(text);
    const id = `d${i}`;
    const r = await page.evaluate(renderInPage, id, text);
    if (!r.ok) {
      console.error(`${file}: FAIL: mermaid could not render it:\n${r.error.replace(/^/gm, '    ')}`);
      failed = true;
      continue;
    }
    let base = path.basename(file).replace(/\.[^.]+$/, '') || `diagram${i}`;
    while (usedNames.has(base)) base += `-${i}`;
    usedNames.add(base);
    const svgOut = path.join(outDir, `${base}.svg`);
    const pngOut = path.join(outDir, `${base}.png`);
    fs.writeFileSync(svgOut, r.svg);
    await page.setViewport({ width: Math.max(800, r.width + 40), height: 800, deviceScaleFactor: 1.5 });
    await (await page.$('#host')).screenshot({ path: pngOut });

    if (states.size === 0) problems.push('found no state in the .mmd (no `-->` lines)');
    const ins = await page.evaluate(inspectInPage, id, [...states]);
    const drawn = Object.values(ins.found).filter((f) => f.drawn).length;
    for (const [name, f] of Object.entries(ins.found)) {
      if (!f.drawn) problems.push(`state ${name} not drawn: ${f.why}`);
    }
    if (transitions.some((t) => t.from === '[*]') && !ins.start) problems.push('initial [*] not drawn');
    if (transitions.some((t) => t.to === '[*]') && !ins.end) problems.push('final [*] not drawn');

    let edgeNote = '';
    if (!statesOnly) {
      // compare without whitespace and <br/>: a label's line breaks vanish in textContent
      const norm = (l) => l.replace(/<br\s*\/?>/gi, '').replace(/\s+/g, '');
      const pool = ins.edgeLabels.map(norm);
      const missing = [];
      for (const t of transitions) {
        const j = pool.indexOf(norm(t.label));
        if (j >= 0) pool.splice(j, 1);
        else missing.push(t);
      }
      for (const t of missing) {
        problems.push(`transition on line ${t.line} not drawn: ${t.from} --> ${t.to}${t.label ? ` : ${t.label}` : ''}`);
      }
      edgeNote = `, ${transitions.length - missing.length}/${transitions.length} transitions drawn`;
    }
    const kinds = [...states.values()].filter((s) => s.kind !== 'state' && s.kind !== 'composite').length;
    const comps = [...states.values()].filter((s) => s.kind === 'composite').length;
    const notes = [comps ? `${comps} composite` : '', kinds ? `${kinds} pseudo-state${kinds > 1 ? 's' : ''}` : ''].filter(Boolean);
    const summary = `${drawn} states drawn${notes.length ? ` (${notes.join(', ')})` : ''}${edgeNote}`;
    const out = [`    svg: ${svgOut}`, `    png: ${pngOut}`];
    if (problems.length) {
      failed = true;
      console.error([`${file}: FAIL: rendered, ${summary}`, ...problems.map((p) => `    ${p}`), ...out].join('\n'));
    } else {
      console.log([`${file}: rendered, ${summary}`, ...out].join('\n'));
    }
  }
} catch (e) {
  console.error(`check.mjs: ${e.stack || e}`);
  failed = true;
} finally {
  if (browser) await browser.close().catch(() => {});
  fs.rmSync(userDataDir, { recursive: true, force: true });
}
process.exit(failed ? 1 : 0);
