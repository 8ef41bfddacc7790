// The XState side of the export's differential test
// (internal/compiler/export, TestXStateDifferential). It reads, from the
// file named by its first argument, machines exported by fsmgen export
// -format xstate and walks to replay on each (the events and timers the
// Go machine was sent, and the answers its guards gave), runs each walk in
// XState, and writes to the second argument, step by step, what XState
// did: the leaf it rests in, the states it exited and entered, the
// effects and actions it ran, the guards it asked and the delayed events
// it has scheduled.
import { readFileSync, writeFileSync } from 'node:fs';
import { assign, createActor, createMachine, stateIn } from 'xstate';

const [input, output] = process.argv.slice(2);
const machines = JSON.parse(readFileSync(input, 'utf8'));

// traced returns a copy of a state node's config whose entry and exit
// start with an action recording them.
function traced(name, config) {
  const out = { ...config };
  if (name !== null) {
    out.entry = [{ type: 'fsmgenTrace', params: { t: 'entry ' + name } }, ...(config.entry ?? [])];
    out.exit = [{ type: 'fsmgenTrace', params: { t: 'exit ' + name } }, ...(config.exit ?? [])];
  }
  if (config.states) {
    out.states = {};
    for (const [k, v] of Object.entries(config.states)) out.states[k] = traced(k, v);
  }
  return out;
}

// inGuards returns the guard objects of a config's transitions whose
// type is In(...).
function inGuards(config) {
  const out = [];
  const visit = (node) => {
    for (const ts of [...Object.values(node.on ?? {}), ...Object.values(node.after ?? {}), node.always, node.onDone]) {
      for (const t of [ts ?? []].flat()) {
        if (typeof t.guard === 'object' && t.guard.type.startsWith('In(')) out.push(t.guard);
      }
    }
    for (const child of Object.values(node.states ?? {})) visit(child);
  };
  visit(config);
  return out;
}

function runWalk(spec, walk) {
  let rec = null;
  let answers = [];
  let names = [];
  let failure = null;
  const fresh = () => ({ trace: [], calls: [], guards: [], extra: [], early: [] });
  const actions = { fsmgenTrace: (_, params) => rec.trace.push(params.t) };
  for (const name of spec.actions ?? []) actions[name] = () => rec.calls.push(name);
  // An effect computes data: it is an assign, which XState runs while it
  // resolves a step (in order with the delays of the timers it starts),
  // before it executes the step's actions, as the Go machine runs every
  // effect of a step before it hands out the actions.
  for (const name of spec.effects ?? []) {
    actions[name] = assign(() => {
      rec.calls.push(name);
      return {};
    });
  }
  const guards = {};
  const leaving = new Set(spec.leaving ?? []);
  const waiting = new Set(spec.waiting ?? []);
  const own = new Set(spec.own ?? []);
  // given: the answers the guards of own gave in this step, each with the
  // selection of eventless transitions it was asked in: how far the step
  // had got then, and the event the selection follows (a done event that
  // enabled nothing is followed by a selection of its own, which moved
  // nothing either).
  let given = new Map();
  // guessed: the answers the guards of own gave beyond the Go machine's
  // asks in this step, each with its selection; micro: for each answer
  // left, how many rules the Go machine had fired when it asked it, and
  // lastMicro that of the last answer given.
  let guessed = new Map();
  let micro = [];
  let lastMicro = 0;
  const eventIds = new WeakMap();
  let lastEventId = 0;
  const selection = (event) => {
    if (!eventIds.has(event)) {
      // The done event of a state without onDone (a region's, or a
      // parallel state's nested in another) enables nothing, and the
      // Go machine, which raises none, asks nothing after it: the
      // selection that follows it is the one before it, when nothing
      // moved since (progress).
      eventIds.set(event, quietDone(event) ? lastEventId : ++lastEventId);
    }
    return `${progress()}#${eventIds.get(event)}`;
  };
  const quietDone = (event) => {
    const m = /^xstate\.done\.state\.(.*)$/.exec(event?.type ?? '');
    if (!m) return false;
    let node = { states: { [spec.config.id]: spec.config } };
    for (const key of m[1].split('.')) node = node?.states?.[key];
    return node !== undefined && node.onDone === undefined;
  };
  let rejected = false;
  // restedAt: for each guard of a state that waits that answered false in
  // this step, how far the step had got then and in what selection (see
  // below).
  let restedAt = new Map();
  const progress = () => `${rec.trace.length}:${rec.calls.length}`;
  for (const name of spec.guards ?? []) {
    guards[name] = ({ event }) => {
      if (waiting.has(name) && restedAt.get(name)?.sel === selection(event)) {
        // Asked again after a done event that enables nothing (see
        // quietDone), in the selection it answered false in: the Go
        // machine raises no such event and asks nothing; it is pure.
        rec.early.push(name);
        return false;
      }
      if (waiting.has(name) && names[0] !== name && restedAt.get(name)?.at === progress()) {
        // XState tests the always of the configuration again after every
        // internal event it takes, a done event that enables nothing
        // among them (xstate.done.state of a parallel state left in the
        // step); the Go machine drops such an event and tests nothing.
        // Nothing was entered, exited or run since the guard answered
        // false in this step, and it is pure: false again.
        rec.early.push(name);
        return false;
      }
      if (rejected && answers.length === 0 && waiting.has(name)) {
        // XState takes a rejection as a transition that does nothing,
        // then tests the always of a state that waits, as after every
        // event; the Go machine, which changes nothing on a rejection,
        // does not. The state rested: every guard answered false, and
        // they are pure.
        rec.early.push(name);
        return false;
      }
      if (own.has(name) && given.get(name)?.at === selection(event)) {
        // Asked again in the same selection, for another region's atomic
        // state (see below): nothing moved since, and it is pure.
        rec.extra.push(name);
        return given.get(name).answer;
      }
      const guess = guessed.get(name);
      if (own.has(name) && guess?.at === selection(event) && (names[0] !== name || micro[0] > lastMicro)) {
        // Asked again in the selection it was asked in beyond the Go
        // machine's asks (see below), for another region's atomic state,
        // where the Go machine's next ask of it comes in a later
        // microstep (a region's transient state's row preempts it in
        // this one): the same answer, and it is pure.
        rec.extra.push(name);
        return guess.answer;
      }
      if (names[0] !== name && own.has(name)) {
        // XState selects the always of every region's atomic state and
        // of its ancestors (SCXML 1.0 §3.13,
        // selectEventlessTransitions): it asks the guard of a parallel
        // state's eventless rule once for each region without one of its
        // own enabled, also in a microstep a region's rule preempts it,
        // where the Go machine asks it once, after the regions settled.
        // It is pure: the answer given already in the step, or the one
        // the Go machine gives later, or false.
        rec.extra.push(name);
        if (given.has(name)) return given.get(name).answer;
        const later = names.indexOf(name);
        const answer = later >= 0 ? answers[later] : false;
        guessed.set(name, { answer, at: selection(event) });
        return answer;
      }
      if (names[0] !== name && leaving.has(name)) {
        // XState asks the guards of the transitions of every region
        // (transitionParallelNode), also those of a rule that leaves the
        // parallel state from a later region where an earlier region's
        // transition drops it (removeConflictingTransitions), which the
        // Go machine does not ask. They are pure: the answer the Go
        // machine gives later in the step, or false; the test checks
        // whose guards they are.
        rec.extra.push(name);
        const later = names.indexOf(name);
        return later >= 0 ? answers[later] : false;
      }
      rec.guards.push(name);
      if (answers.length === 0) {
        failure = failure ?? `guard ${name} asked with no answer left`;
        return false;
      }
      names.shift();
      lastMicro = micro.shift() ?? lastMicro;
      const answer = answers.shift();
      if (own.has(name)) given.set(name, { answer, at: selection(event) });
      if (!answer && waiting.has(name)) restedAt.set(name, { at: progress(), sel: selection(event) });
      return answer;
    };
  }
  // fsmgen's In(State) guards: a guard object {type: 'In(S)', params:
  // {stateValue: '#id'}} is XState's built-in stateIn with that id.
  for (const g of inGuards(spec.config)) guards[g.type] = stateIn(g.params.stateValue);
  const delays = {};
  for (const name of spec.delays ?? []) {
    delays[name] = () => {
      rec.calls.push(name);
      return 0; // the Go side's effects return zero values
    };
  }
  const machine = createMachine(traced(null, spec.config)).provide({ actions, guards, delays });
  // The clock runs nothing by itself: a timer fires when the walk says.
  const pending = new Map(); // event type -> callback
  let actor = null;
  const clock = {
    setTimeout(fn) {
      const known = new Set(pending.keys());
      const scheduled = Object.values(actor.system._snapshot._scheduledEvents);
      const ev = scheduled.find((s) => !known.has(s.event.type));
      pending.set(ev.event.type, fn);
      return ev.event.type;
    },
    clearTimeout(type) {
      pending.delete(type);
    },
  };
  // XState computes the initial snapshot, delays included, in
  // createActor, and runs its actions in start: both are New's step.
  rec = fresh();
  // New's own step: the always of an initial state that waits.
  answers = [...(walk.start ?? [])];
  names = [...(walk.startNames ?? [])];
  guessed = new Map();
  micro = [];
  lastMicro = 0;
  actor = createActor(machine, { clock });
  actor.subscribe({ error: (err) => { failure = failure ?? String(err); } });
  const results = [];
  const finish = () => {
    const snap = actor.getSnapshot();
    const leaves = snap._nodes.filter((n) => n.type === 'atomic' || n.type === 'final').map((n) => n.key);
    const timers = Object.values(actor.system._snapshot._scheduledEvents).map((s) => s.event.type).sort();
    results.push({ ...rec, leaf: leaves.join(','), timers, status: snap.status, error: failure ?? undefined });
  };
  actor.start();
  if (answers.length > 0) failure = failure ?? `${answers.length} guard answers of New left unused`;
  finish();
  for (const step of walk.steps ?? []) {
    rec = fresh();
    answers = [...(step.guards ?? [])];
    names = [...(step.names ?? [])];
    rejected = step.rejected ?? false;
    restedAt = new Map();
    given = new Map();
    guessed = new Map();
    micro = [...(step.micro ?? [])];
    lastMicro = 0;
    if (step.timer) {
      const fn = pending.get(step.timer);
      if (fn === undefined) {
        failure = failure ?? `${step.timer} is not scheduled`;
      } else {
        pending.delete(step.timer);
        fn();
      }
    } else {
      actor.send({ type: step.event });
    }
    if (answers.length > 0) failure = failure ?? `${answers.length} guard answers left unused`;
    finish();
  }
  return results;
}

const out = machines.map((spec) => spec.walks.map((walk) => runWalk(spec, walk)));
writeFileSync(output, JSON.stringify(out));
