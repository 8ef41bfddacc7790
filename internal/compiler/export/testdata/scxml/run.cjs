// The SCXML side of the export's differential test
// (internal/compiler/export, TestDifferential). It reads, from the file
// named by its first argument, documents exported by fsmgen export
// -format scxml and walks to replay on each (the events and timers the Go
// machine was sent, and the answers its guards gave), runs each walk in
// SCION, an SCXML interpreter, and writes to the second argument, step
// by step, what SCION did: the leaf it rests in, the states it exited
// and entered, the effects and actions it ran, the guards it asked and
// the timers (delayed <send>s) pending.
'use strict';
const fs = require('node:fs');
const scxml = require('@scion-scxml/scxml');

const [input, output] = process.argv.slice(2);
const machines = JSON.parse(fs.readFileSync(input, 'utf8'));

// prepare compiles a document with the guards, effects and delays as the
// globals of its data model, and calls back with the model.
function prepare(spec, ctx) {
  return new Promise((resolve, reject) => {
    scxml.documentStringToModel('export.scxml', spec.document, (err, model) => {
      if (err) return reject(err);
      model.prepare((err, fnModel) => (err ? reject(err) : resolve(fnModel)), ctx);
    });
  });
}

// machineRunner prepares a machine's document once and returns the
// function that runs one walk on it. The guards, effects and delays the
// document calls record into the walk that runs.
async function machineRunner(spec) {
  const cur = { rec: null, answers: [], names: [], micro: [], lastMicro: 0, given: {}, givenAt: {}, guessed: {}, failure: null, waiting: new Set(spec.waiting ?? []), own: new Set(spec.own ?? []), restedAt: new Map() };
  // givenAt: the selection of eventless transitions each guard answered in
  // (see own): how far the step had got then, and the event it follows.
  // guessed: the answers the guards of own gave beyond the Go machine's
  // asks, each with its selection; micro: for each answer left, how many
  // rules the Go machine had fired when it asked it, and lastMicro that
  // of the last answer given.
  const eventIds = new WeakMap();
  let lastEventId = 0;
  // awaited: the done events the document has transitions for. Another
  // (a region's, or a parallel state's nested in another) enables
  // nothing, and the Go machine, which raises none, asks nothing after
  // it: the selection that follows it is the one before it, when nothing
  // moved since (progress).
  const awaited = new Set([...spec.document.matchAll(/event="(done\.state\.[^"]*)"/g)].map((m) => m[1]));
  const quietDone = (event) => typeof event.name === 'string' && event.name.startsWith('done.state.') && !awaited.has(event.name);
  const selection = (event) => {
    if (event && typeof event === 'object' && !eventIds.has(event)) eventIds.set(event, quietDone(event) ? lastEventId : ++lastEventId);
    return `${progress()}#${event && typeof event === 'object' ? eventIds.get(event) : ''}`;
  };
  // restedAt: for each guard of a state that waits that answered false in
  // this step, how far the step had got then and in what selection (see
  // below).
  const progress = () => `${cur.rec.trace.length}:${cur.rec.calls.length}`;
  const fail = (msg) => { cur.failure = cur.failure ?? msg; };
  const ctx = {};
  for (const name of spec.effects ?? []) ctx[name] = () => { cur.rec.calls.push(name); };
  for (const name of spec.delays ?? []) {
    ctx[name] = () => {
      cur.rec.calls.push(name);
      return '0ms'; // the Go side's effects return zero values
    };
  }
  for (const name of spec.guards ?? []) {
    ctx[name] = (event) => {
      if (cur.early || (cur.rejected && cur.names.length === 0 && cur.waiting.has(name))) {
        // SCION selects eventless transitions before it takes the event
        // (_selectTransitionsAndPerformSmallStep), where SCXML 1.0 §3.13
        // selects them at the end of the macrostep before; the Go machine
        // did then, when the state that waits on them stayed: every guard
        // answered false, and they are pure. So after a rejected event,
        // which SCION takes as a transition that does nothing and the Go
        // machine as nothing.
        cur.rec.early.push(name);
        return false;
      }
      if (cur.waiting.has(name) && cur.restedAt.get(name)?.sel === selection(event)) {
        // Asked again after a done event that enables nothing (see
        // quietDone), in the selection it answered false in: the Go
        // machine raises no such event and asks nothing; it is pure.
        cur.rec.early.push(name);
        return false;
      }
      if (cur.waiting.has(name) && cur.names[0] !== name && cur.restedAt.get(name)?.at === progress()) {
        // SCION, as XState, selects the eventless transitions again
        // after every internal event it takes, a done event of a region
        // that enables nothing among them; the Go machine drops such an
        // event and tests nothing. Nothing was entered, exited or run
        // since the guard answered false in this step, and it is pure:
        // false again.
        cur.rec.early.push(name);
        return false;
      }
      if (cur.own.has(name) && name in cur.given && cur.givenAt[name] === selection(event)) {
        // The guard of a parallel state's eventless rule, asked again in
        // the same selection for another region's atomic state (SCXML
        // 1.0 §3.13, selectEventlessTransitions), where the Go machine
        // asks it once: nothing moved since, and it is pure.
        cur.rec.extra.push(name);
        return cur.given[name];
      }
      const guess = cur.guessed[name];
      if (cur.own.has(name) && guess?.at === selection(event) && (cur.names[0] !== name || cur.micro[0] > cur.lastMicro)) {
        // Asked again in the selection it was asked in beyond the Go
        // machine's asks (see below), for another region's atomic state,
        // where the Go machine's next ask of it comes in a later
        // microstep (a region's transient state's row preempts it in
        // this one): the same answer, and it is pure.
        cur.rec.extra.push(name);
        return guess.answer;
      }
      if (cur.names.length > 0 && cur.names[0] === name) {
        cur.names.shift();
        cur.lastMicro = cur.micro.shift() ?? cur.lastMicro;
        const a = cur.answers.shift();
        cur.given[name] = a;
        cur.givenAt[name] = selection(event);
        cur.rec.guards.push(name);
        if (!a && cur.waiting.has(name)) cur.restedAt.set(name, { at: progress(), sel: selection(event) });
        return a;
      }
      // SCXML offers an event to a parallel state's own transitions once
      // for each region that has none, even when another region's
      // transition preempts them (§3.13, selectTransitions): the guards
      // of those transitions are asked again, or asked where the Go
      // machine does not ask them, or before the Go machine does (a
      // region earlier in document order that has no transition offers
      // the event to the parallel state's before a later region's own
      // guard is asked). They are pure: the answer given already, or the
      // one the Go machine gives later in the step, or false; the test
      // checks whose guards they are.
      cur.rec.extra.push(name);
      if (name in cur.given) return cur.given[name];
      const later = cur.names.indexOf(name);
      const a = later >= 0 ? cur.answers[later] : false;
      if (cur.own.has(name)) cur.guessed[name] = { answer: a, at: selection(event) };
      return a;
    };
  }
  const fnModel = await prepare(spec, ctx);
  return (walk) => runWalk(fnModel, cur, fail, walk);
}

// doneInEntryOrder makes SCION raise the done events of a microstep as
// SCXML 1.0 does (Appendix D, enterStates): as each final state is
// entered, in entry order (document order, ancestors first), the done
// event of its parent, and of its grandparent when that is a <parallel>
// whose regions are all final, which holds once the last of them is
// entered. SCION enters a microstep's states shallowest first (its depth
// order), raising a deeper state's done event after a shallower one's of
// a region later in document order, and tests whether every region is
// final after entering them all, once for each, raising a parallel
// state's done event once per region that reached its final state in
// the microstep (so that its done transition ran again). The events SCION
// raised are put back in SCXML's order, each once.
function doneInEntryOrder(sc) {
  const enter = sc._enterStates;
  sc._enterStates = function (...args) {
    const from = this._internalEventQueue.length;
    const entered = enter.apply(this, args);
    const raised = new Map(); // the name of each event SCION raised, to the event
    for (const ev of this._internalEventQueue.splice(from)) {
      if (!raised.has(ev.name)) raised.set(ev.name, ev);
    }
    const finals = entered.filter((s) => s.$type === 'final').sort((a, b) => a.documentOrder - b.documentOrder);
    const order = [];
    for (const s of finals) {
      order.push('done.state.' + s.parent.id);
      const par = s.parent.parent;
      if (par && finals.findLast((f) => f.parent.parent === par) === s) {
        order.push('done.state.' + par.id);
      }
    }
    for (const name of [...order, ...raised.keys()]) {
      if (raised.has(name)) {
        this._internalEventQueue.push(raised.get(name));
        raised.delete(name);
      }
    }
    return entered;
  };
}

// endOnlyAtTopLevel keeps SCION running where SCXML 1.0 does: its
// macrostep ends the interpreter when every atomic state of the
// configuration is a <final>, where SCXML ends it only on entering a
// <final> child of <scxml> (§3.13, enterStates: "if isSCXMLElement(s.parent)
// then running = false"). A composite state resting in its final child
// (its done transition refused by every guard) or a parallel state with
// every region final then stays, as in SCXML and XState.
function endOnlyAtTopLevel(sc) {
  const exit = sc._exitInterpreter;
  sc._exitInterpreter = function (...args) {
    if (this._configuration.iter().some((s) => s.$type === 'final' && s.parent.$type === 'scxml')) {
      return exit.apply(this, args);
    }
    this._isInFinalState = false;
  };
}

// reselectAfterInternal makes SCION select the eventless transitions once
// more after an internal event that enabled nothing, as SCXML 1.0 does
// (§3.13, mainEventLoop: the macrostep ends only once no eventless
// transition is enabled and the internal queue is empty), where SCION
// ends the macrostep when that event was the queue's last. Nothing moved
// since the selection before, whose guards answered false: the Go
// machine, which follows SCXML, may ask them again (random chart 977117:
// a region's state that waits, asked again after a done transition whose
// guard failed).
function reselectAfterInternal(sc) {
  const step = sc._selectTransitionsAndPerformSmallStep;
  sc._selectTransitionsAndPerformSmallStep = function (currentEvent, ...rest) {
    const queued = this._internalEventQueue.length;
    const [ev, keepGoing] = step.call(this, currentEvent, ...rest);
    const tookInternal = queued > 0 && this._internalEventQueue.length < queued;
    return [ev, keepGoing || tookInternal];
  };
}

function runWalk(fnModel, cur, fail, walk) {
  cur.failure = null;
  const fresh = () => ({ trace: [], calls: [], guards: [], extra: [], early: [] });
  // The timers run when the walk says: a delayed <send> is kept by its id.
  const pending = new Map(); // sendid -> event name
  const sc = new scxml.core.Statechart(fnModel, {
    customSend(event, options) {
      if (event.target === '#_parent') {
        cur.rec.calls.push(event.name);
      } else if (event.sendid && options.delay !== undefined) {
        pending.set(event.sendid, event.name);
      } else {
        fail(`unexpected <send> of ${event.name}`);
      }
    },
    customCancel(sendid) {
      pending.delete(sendid);
    },
  });
  const select = sc._selectTransitions;
  sc._selectTransitions = function (ev, eventless) {
    if (!eventless) cur.early = false; // the event is taken now
    return select.call(this, ev, eventless);
  };
  doneInEntryOrder(sc);
  endOnlyAtTopLevel(sc);
  reselectAfterInternal(sc);
  sc.on('onEntry', (id) => cur.rec.trace.push('entry ' + id));
  sc.on('onExit', (id) => cur.rec.trace.push('exit ' + id));
  sc.on('onError', (e) => fail(JSON.stringify(e)));
  const results = [];
  const finish = () => {
    const timers = [...pending.keys()].sort();
    results.push({ ...cur.rec, leaf: sc.getConfiguration().join(','), timers, error: cur.failure ?? undefined });
  };
  cur.rec = fresh();
  // New's own step: the eventless transitions of an initial state that
  // waits, selected once the initial configuration is entered.
  cur.answers = [...(walk.start ?? [])];
  cur.names = [...(walk.startNames ?? [])];
  cur.micro = [];
  cur.lastMicro = 0;
  cur.guessed = {};
  cur.given = {};
  cur.givenAt = {};
  cur.restedAt = new Map();
  cur.early = false;
  sc.start();
  if (cur.answers.length > 0) fail(`${cur.answers.length} guard answers of New left unused`);
  finish();
  for (const step of walk.steps ?? []) {
    cur.rec = fresh();
    cur.answers = [...(step.guards ?? [])];
    cur.names = [...(step.names ?? [])];
    cur.micro = [...(step.micro ?? [])];
    cur.lastMicro = 0;
    cur.guessed = {};
    cur.given = {};
    cur.givenAt = {};
    cur.restedAt = new Map();
    cur.early = true;
    cur.rejected = step.rejected ?? false;
    if (step.timer) {
      const name = pending.get(step.timer);
      if (name === undefined) {
        fail(`timer ${step.timer} is not pending`);
      } else {
        pending.delete(step.timer);
        sc.gen({ name });
      }
    } else {
      sc.gen({ name: step.event });
    }
    cur.early = false;
    if (cur.answers.length > 0) fail(`${cur.answers.length} guard answers left unused`);
    finish();
  }
  return results;
}

async function main() {
  const out = [];
  for (const spec of machines) {
    const run = await machineRunner(spec);
    const walks = [];
    for (const walk of spec.walks ?? []) walks.push(run(walk));
    out.push(walks);
  }
  fs.writeFileSync(output, JSON.stringify(out));
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
