package diag

import (
	"cmp"
	"regexp"
	"slices"
)

// Rule is one kind of problem fsmgen reports. Its ID is stable across
// releases, so CI tools (SARIF viewers, code scanning, scripts reading
// fsmgen check -format json) can group, filter and suppress findings by it
// while the wording of messages improves.
//
// A diagnostic gets its rule from its message: the checker's packages call
// Errorf and Warnf with plain messages, and the table below says which
// messages belong to which rule. TestEveryMessageHasOneRule parses every
// Errorf and Warnf call of fsmgen and fails when a message matches no rule,
// or more than one.
type Rule struct {
	ID       string   // kebab-case, never reused for another meaning
	Level    Severity // the severity of every message of the rule
	Short    string   // what is wrong, in one sentence
	Full     string   // what the rule covers, and why it matters
	Help     string   // what to do about it
	Patterns []string // regular expressions; a message of the rule matches one
}

// Unclassified is the rule of a message that no rule's patterns match. The
// classification test keeps fsmgen's own messages out of it; it is there
// so that a message added without a rule still has an id.
const Unclassified = "unclassified"

// rules is the table, in no particular order; Rules returns it sorted by
// id. Patterns are matched against whole messages, so each names the fixed
// words of its message, with .* where fsmgen puts a name, a position or a
// hint.
var rules = []Rule{
	// Reading the file.
	{
		ID: "not-text", Level: Error,
		Short:    "The spec file is not text.",
		Full:     "A spec must be UTF-8 text without NUL bytes; anything else (a binary, another encoding) is refused before YAML is read.",
		Help:     "Check that the path names the spec and not another file, and save it as UTF-8.",
		Patterns: []string{`^spec contains a NUL byte`, `^spec is not valid UTF-8`},
	},
	{
		ID: "empty-spec", Level: Error,
		Short:    "The spec file is empty.",
		Full:     "The file holds nothing but white space, so there is no machine to read.",
		Help:     "Start the spec with the version line, then the machine's name, package, states and events (see docs/spec.md, \"A first machine\").",
		Patterns: []string{`^spec is empty`},
	},
	{
		ID: "limit-exceeded", Level: Error,
		Short: "The spec or its machine is larger than fsmgen accepts.",
		Full:  "fsmgen refuses specs over 1 MiB, YAML nested too deeply or expanding through aliases to too many nodes, and machines with too many states, events or state × event pairs, so that a hostile or runaway file cannot exhaust memory or time.",
		Help:  "Split the machine into machines that talk through actions and events, trim long doc text, or remove the aliases that multiply the document.",
		Patterns: []string{
			`^spec is \d+ bytes, larger than the \d+-byte limit`,
			`^spec is nested more than \d+ levels deep`,
			`^spec expands to more than \d+ YAML nodes`,
			`^the machine has \d+ .*more than the limit of \d+`,
		},
	},
	{
		ID: "yaml-syntax", Level: Error,
		Short:    "The spec is not well-formed YAML.",
		Full:     "The YAML parser could not read the file; the message is the parser's, with the line it stopped at.",
		Help:     "Fix the YAML at the line shown: indent with spaces (never tabs), close brackets and quotes, and quote values that contain \": \" or start with a special character.",
		Patterns: []string{`^invalid YAML: `},
	},
	// The shape of the document.
	{
		ID: "spec-version", Level: Error,
		Short:    "The spec does not start with a version this fsmgen reads.",
		Full:     "Every spec starts with \"version: 2\". Version 1 specs are no longer read: version 2 declares what each guard and effect reads and sets.",
		Help:     "Put \"version: 2\" first; to convert a version 1 spec, follow \"From version 1\" in docs/spec.md.",
		Patterns: []string{`^spec must start with "version: `, `^version 1 specs are no longer read`, `^unsupported spec version `},
	},
	{
		ID: "wrong-value-type", Level: Error,
		Short:    "A value has the wrong YAML type.",
		Full:     "A key holds a value of another kind than the spec language expects: a list where a mapping belongs, a mapping where a name belongs, and so on.",
		Help:     "Write the value in the form the message names; docs/spec.md shows each key with an example, and the JSON Schema (fsmgen schema) lets an editor flag it as you type.",
		Patterns: []string{`^spec must be a mapping`, `^expected .*, found `, `^transitions must be a list`, `^guards must be a list of branches`, `^breaks is a list of the changes made on purpose`, `^done is a transition, not a state name`, `^imports maps each package.s qualifier to its import path`},
	},
	{
		ID: "unknown-key", Level: Error,
		Short:    "A key is not part of the spec language.",
		Full:     "Unknown keys are refused rather than ignored, so that a misspelt key does not silently drop what it meant to say.",
		Help:     "Correct the spelling (the message suggests the nearest known key), or remove the key.",
		Patterns: []string{`^unknown key "`},
	},
	{
		ID: "duplicate-key", Level: Error,
		Short:    "A mapping has the same key twice.",
		Full:     "YAML would keep only the last value of a repeated key; fsmgen refuses the file instead.",
		Help:     "Merge the two entries into one, or remove one of them.",
		Patterns: []string{`^duplicate key "`},
	},
	{
		ID: "missing-key", Level: Error,
		Short:    "A required key is missing.",
		Full:     "The spec, a field, a timer, a transition or a \"*\" row lacks a key it cannot do without.",
		Help:     "Add the key the message names.",
		Patterns: []string{`^spec has no "`, `^field (".*" )?has no type$`, `^after has no "delay"`, `^transition has no "from"`, `^a "\*" row needs "on"`, `^a declared break names the change`, `^"on" lists no event`},
	},
	// Names.
	{
		ID: "invalid-name", Level: Error,
		Short:    "A name cannot be used in the generated Go.",
		Full:     "Machine, state, event, action, guard, effect and field names must be identifiers, the package name a Go identifier in lower case (underscores allowed), import aliases identifiers that are not Go keywords, import paths valid Go import paths, a go_name an exported Go identifier, and an initialism a word in capitals.",
		Help:     "Rename it with letters, digits and underscores, starting with a letter (a capital letter for a go_name).",
		Patterns: []string{`^\S+ name ".*" is (not an identifier|a Go keyword|not a Go identifier|reserved)`, `^package name ".*" has capitals`, `^import alias ".*" is (a Go keyword|not a Go identifier)$`, `^import path ".*" is not a valid Go import path`, `^go_name ".*" of .* is not (a Go identifier|exported)`, `^initialism ".*" is not (written in capitals|a word)`, `^an initialism is a word in capitals`},
	},
	{
		ID: "invalid-rename", Level: Error,
		Short:    "A renamed_from entry would not keep old data readable.",
		Full:     "renamed_from lists the names a state, event, action or field had in earlier revisions, so that data saved under them still loads. Each must be a name, differ from the current one, appear once, and belong to one declaration only: an old name that is another declaration's name now, or that two declarations claim, would load as either.",
		Help:     "List each earlier name once, on the declaration that carries it now; remove an entry that names the current name or another declaration.",
		Patterns: []string{`: renamed_from ".*" is (not a name|its name now)`, `: renamed_from lists ".*" twice$`, ` was renamed from .*, which is the name of `, ` were both renamed from `},
	},
	{
		ID: "go-name-clash", Level: Error,
		Short:    "Two names become the same Go identifier.",
		Full:     "Spec names are turned into Go identifiers; two that map to the same identifier, or one that takes a name fsmgen generates or an import needs, would not compile. Each place is reported. So would a hand-written declaration in the package fsmgen writes into (a type, function, variable, constant, or a method of a generated type) that has the name of a generated one: it is reported where it is declared.",
		Help:     "Rename one of them, give one its Go name with go_name, or choose another import alias; rename a hand-written declaration that takes a generated name.",
		Patterns: []string{` in Go, .*rename (it|one of them)( or give (it|one) a go_name)?$`, ` are both .* in Go: rename one( or give one a go_name)?$`, `^import alias ".*" is the generated package's own name`, `^import alias time names `, `^hand-written .* takes the name of the generated `, `^fsmgen generated .* before, under another machine name: `, `: two machines cannot share a package; `},
	},
	{
		ID: "duplicate-declaration", Level: Error,
		Short:    "A name is declared twice.",
		Full:     "States, events, actions, guards and effects share one name space each, states across the whole machine; a state is listed twice in one list; a substate repeats a field its ancestors already have.",
		Help:     "Rename one of the two, or remove the repetition.",
		Patterns: []string{`^duplicate name "`, `^state .* is declared twice`, `^".*" is declared as both a `, `^(state|event) .* is listed twice$`, `^field .* of state .* is already a field of `, `^initialism \S+ is listed twice$`},
	},
	{
		ID: "unknown-name", Level: Error,
		Short:    "A name refers to nothing declared.",
		Full:     "A transition, list or declaration names a state, event, action, guard or effect the spec does not declare.",
		Help:     "Correct the spelling (the message suggests the nearest declared name), or declare it.",
		Patterns: []string{`^unknown (state|event|action) "`, `^unknown \S+ ".*": declare it under `, `^on: "\*" names no event`},
	},
	{
		ID: "wrong-name-kind", Level: Error,
		Short:    "A name is used as another kind of declaration.",
		Full:     "A guard is named where an effect belongs, or an effect where a guard belongs.",
		Help:     "Name a declaration of the kind the place needs, or move the declaration under the right key.",
		Patterns: []string{`^".*" is a \S+, not a \S+$`},
	},
	// Types and imports.
	{
		ID: "invalid-field-type", Level: Error,
		Short:    "A field's type is not a type the generated package can use.",
		Full:     "Field types are Go type expressions: names, qualified names of imported packages, pointers, slices, arrays and maps of those. fsmgen checks that each name is a type, exists, and is exported.",
		Help:     "Use a Go type, a type of a package listed under imports (pkg.Name), or a type declared in the output package.",
		Patterns: []string{`^type ".*" (is not a Go type expression|uses package|is not supported|uses .*, which is)`, `^unknown type .* in "`, `^package .* \(.*\) has no type `, ` is not exported by package .*, so the generated package cannot use it`, `^\S+ is a \S+, not a type$`, ` is a generic type: name an instance`},
	},
	{
		ID: "import-not-loaded", Level: Error,
		Short:    "An imported package could not be loaded.",
		Full:     "fsmgen loads the packages that field types and the behavior expression use, from the module that holds the spec, to check them; this one failed to load (for a reason other than importing the generated package, which is not generated yet: that is left to the compiler).",
		Help:     "Check the import path, and that the package builds in the spec's module (go build, go mod tidy).",
		Patterns: []string{`^cannot load package ".*", which (field types use|behavior names)`, `^package ".*", which field types use, imports the generated package`},
	},
	// Guards and effects.
	{
		ID: "guard-effect-sets", Level: Error,
		Short:    "A guard sets fields, or an effect sets none.",
		Full:     "A guard only decides between branches; an effect exists to compute fields, which it lists under \"sets\".",
		Help:     "Move what a guard computes to an effect; list the fields an effect computes under its \"sets\".",
		Patterns: []string{`^guard .* sets nothing: a guard only decides`, `^effect .* sets nothing: list the fields`},
	},
	{
		ID: "guard-branches", Level: Error,
		Short:    "Guard branches are malformed or cannot all fire.",
		Full:     "A guarded transition or timer lists branches, each with \"if\" a guard or a final \"else: true\"; a branch after else, a guard tested twice or a chain without else leaves some case unhandled or some branch dead. A done transition's chain may end without else (the machine then rests in the final state, or with every region of the parallel state final, when no guard holds: SCXML drops the done event), inside a region of a parallel state too, and inside a region of a parallel state that is inside another region's state.",
		Help:     "Give each branch \"if\" or \"else: true\", test each guard once, and end the chain with \"- else: true\".",
		Patterns: []string{`^a (transition|timer|done transition) with guards keeps to, effect, action, set, with, ignore and reject inside its branches$`, `^branch after else can never fire`, `^a branch has either "if" or "else"`, `^write "else: true" for the last branch`, `^branch has no "if"`, `^guard .* is already tested at .*: this branch can never fire`, `^guards of .* end without an else branch`},
	},
	{
		ID: "rule-outcome", Level: Error,
		Short:    "A transition has no outcome, or more than one.",
		Full:     "Each rule either moves (to, effect, action), ignores the event, or rejects it with a reason; not several of these, not none.",
		Help:     "Keep one of ignore, reject (with a reason) or a transition.",
		Patterns: []string{`^choose one of ignore, reject, or a transition`, `^write "ignore: true", or remove it$`, `^reject needs a reason`, `^transition does nothing`, `^a timer's rule cannot reject`},
	},
	{
		ID: "conflicting-rules", Level: Error,
		Short:    "Two rules handle the same state and event.",
		Full:     "A state × event pair is handled by two transitions, by a transition and an ignore or reject list, or by two \"*\" rows, so either could fire.",
		Help:     "Merge them into one transition with guards, or remove the pair from one of the places.",
		Patterns: []string{`^"\*" already handles `, ` is already handled at .*: two transitions for one pair can both fire`, ` is listed under .* but already handled at `, `^state .* already resolves every other event at `},
	},
	{
		ID: "redundant-star", Level: Error,
		Short:    "\"*\" is listed with other names.",
		Full:     "\"*\" already means every state (in from) or every other event (in ignore and reject lists); listing names beside it is a contradiction.",
		Help:     "Keep \"*\" alone, or list the names without it.",
		Patterns: []string{`^"\*" stands alone`},
	},
	{
		ID: "timer-event-misused", Level: Error,
		Short:    "The timers' event is handled like an ordinary event.",
		Full:     "The event that timers fire is generated for the states' \"after\" keys; transitions and ignore lists do not name it.",
		Help:     "Give the state \"after\" instead, or remove the event from the list.",
		Patterns: []string{` is the event of the timers: `},
	},
	{
		ID: "timer-delay", Level: Error,
		Short:    "A timer's delay is not a positive duration.",
		Full:     "\"delay\" is a Go duration such as 30s or 2m30s, or the name of an effect that sets exactly one time.Duration.",
		Help:     "Give a positive duration, or an effect that sets one time.Duration field.",
		Patterns: []string{`^the delay of .* is .*: give a positive duration$`, `^effect .* computes the delay of `, `^delay ".*" is neither a duration`},
	},
	{
		ID: "timer-ids", Level: Error,
		Short:    "A state's timers are not told apart.",
		Full:     "\"after\" is one timer or a list of them. Each timer of a state is named by its id, which saved machines, messages and fsmgen diff use: ids are names, distinct within the state, and at most one timer of a state goes without.",
		Help:     "Give each timer of the list its own \"id\" (one may go without), or remove the empty list.",
		Patterns: []string{`^after is an empty list`, `^timer id ".*" is not a name`, `^state .* has two timers (with id|without an id)`},
	},
	// States.
	{
		ID: "initial-state", Level: Error,
		Short:    "The initial state is missing or given twice.",
		Full:     "A machine has exactly one initial top-level state, and each composite state exactly one initial child.",
		Help:     "Mark the state the machine (or the composite state) starts in \"initial: true\", and only that one.",
		Patterns: []string{`is marked initial, but .* already is`, `^composite state .* has no initial child`, `^no state is marked "initial: true"`},
	},
	{
		ID: "composite-state", Level: Error,
		Short:    "A composite state is misdeclared.",
		Full:     "A composite state has substates, and the flags that belong to leaves (terminal, transient) are put on its leaves.",
		Help:     "List its substates, or remove the empty \"states\" key; mark one of its leaves instead of the composite.",
		Patterns: []string{`^state .* has an empty "states"`, `^composite state .* cannot be `},
	},
	{
		ID: "transient-state", Level: Error,
		Short:    "A transient state, or an eventless transition, is misused.",
		Full:     "A transient state is left in the step that enters it, through eventless transitions (no \"on\"); it handles no events, has no entry, exit or timer, and transient states must not loop. A state that is not transient may wait on eventless transitions (SCXML's eventless transitions, XState's always): every branch has a guard (no else) and leads elsewhere (a composite state's, out of it), and they are tested after every step that leaves the machine in it (a composite state's in every state inside it, after that state's own); it is not final or terminal, nor holds one, nor is (in a machine with parallel states) the initial state or a parallel state's done transition's target, and eventless transitions must not be able to loop. Inside a region of a parallel state a leaf may wait too: its eventless transitions are tested after every step that keeps the parallel state, with those of the regions' transient states, as one microstep (SCXML 1.0 §3.13); also in a region of a parallel state inside a region or nested in another as a region, but not yet beside a nested one with a done transition, nor where an eventless transition or a done transition inside the region leads into a history that may resume it. A composite state inside a region may wait too, and so may a parallel state outside regions, its own eventless transitions tested after its regions' (not yet one inside a region).",
		Help:     "Give the transient state eventless transitions that lead elsewhere, move events and actions to its neighbours, or make it an ordinary state; guard every branch of a waiting state's eventless transition and give it \"to\".",
		Patterns: []string{`^transient states? `, `^transition from .* has no "on"`, `^an eventless transition of `, `^state .* cannot be transient and `, `^the eventless transition of .* (cannot lead to |ends with else|leads to .*, inside it)`, `^eventless transitions could loop `, ` has no event to ignore or reject in an eventless transition`, `^state .* waits on eventless transitions inside region `},
	},
	{
		ID: "local-transition", Level: Error,
		Short:    "\"local\" is used where it does not apply.",
		Full:     "A local transition goes from a composite state into one of its own substates without leaving the composite (UML); elsewhere it means nothing.",
		Help:     "Remove \"local\", or target one of the source's substates.",
		Patterns: []string{`^local applies to a transition of a composite state`, `^a local transition of .* must lead to one of its substates`},
	},
	{
		ID: "history", Level: Error,
		Short:    "A history is misdeclared or misused.",
		Full:     "A composite state may have a history (history: shallow or deep), which a transition enters with \"to: State.history\" (UML's shallowHistory and deepHistory, SCXML's <history>). Only a composite state has one, or a parallel state a deep one; the states it remembers must be at rest (a transient state must not leave it), but for a final state whose done transition leaves the history's state, which it remembers and resumes, completing the state again in that step (SCXML 1.0 §3.10), inside a region too; a deep history of a parallel state with a done transition, or around one whose done transition leaves the history's state, may so remember every region final and resume them, the done transition following in that step, which must then not lead into that history again (it would complete the parallel state forever); a transition into a history is never local. A deep history may remember a region resting in the final state of a composite state whose done transition's guards end without else: resuming it enters that final state anew, which raises the done event again (SCXML 1.0 §3.10, §3.13), its guards tested in the resuming step, the done transitions of the other regions and of the parallel state following as after any step of its regions; the parallel state's done transition must then not lead into that history again when the region's done transition may end the region (it would complete the parallel state forever). Nor may a chain of done transitions through parallel and composite states lead back to where it began, each completing the next in that step (into its final state, or into a history that may remember one, or every region of the next final).",
		Help:     "Put history on a composite state and write shallow or deep; add it to the state a target names as State.history; lead transient states inside it elsewhere first; lead a parallel state's done transition to a state, not into a history that may remember its regions final or one resting in a final state whose done transition may end it; remove local.",
		Patterns: []string{`^history .* of state .* is neither shallow nor deep`, `^state .* has no states inside it, so it has no history`, `^this transition leaves .* from transient state .*, which its history would remember`, `^state .* has no history for .* to enter`, `^a transition into the history of .* cannot be local`, `^the done transition of parallel state .* leads into the history of .*, which may remember every region of `, `^the done transitions of parallel states .* could loop without an event`, `^done transitions of parallel and composite states could loop without an event`, `^the done transition of parallel state .* leads into the history of .*, which may remember region `},
	},
	{
		ID: "parallel", Level: Error,
		Short:    "A parallel state, one of its regions or an In(State) guard is misdeclared or misused.",
		Full:     "A parallel state (parallel: true) has at least two regions, its states, all active while it is (UML 2.5.1 §14.2.3.4.3, SCXML 1.0 §3.4); none is marked initial, since all are entered with it. A rule inside a region moves within its region, or leaves the parallel state as a whole, every region and the parallel state exited first (SCXML 1.0 §3.13), which a row into another region does too, entering the parallel state again. In(State) tests, in a region's rule, the state of another region of the same parallel state, and in a rule of the parallel state itself (its timer's and its done transition's included) or of a composite state around it, the state of any of its regions, false while the machine is not in the parallel state (SCXML 1.0 §5.9.1); on the rules of a state never active beside the state it names it would never hold, and is refused. A rule of a state outside a parallel state may target a state inside one of its regions: it enters the parallel state, that region down to the target (its initial states below it) and the other regions through their initial states, in document order (SCXML 1.0 §3.13, enterStates); a row of a state of one region into a state of another region leaves the parallel state and enters it so (SCXML's domain is the state around it); the target may be a transient or final state, a history, or a state inside a parallel state inside a region's state, at any depth, which a row, a timer or a done transition of that region's states may target too (SCXML 1.0 §3.13, addAncestorStatesToEnter). A final state right inside a region is where the region rests once done, with no transitions of its own; a parallel state with a done transition needs one in every region, each reachable within its region (SCXML 1.0 §3.4). A state inside a region may have timers, as any state: entering it starts them, leaving it (or the parallel state) cancels them, and their rules move within its region. A composite state inside a region completes as outside one: its done transition moves within the region, in the step that enters its final child, and may end the region, and then complete the parallel state, in that step; the region's own state has no done transition (its final state ends the region) and is not final itself. A composite state inside a region may have a history, which a rule of its region enters; it remembers the region's leaf when a rule of the region leaves the state and when the parallel state is left, and the final state a done transition leaves it from, which resuming it completes again in that step; a region's own state may have one too, which may remember the region's final state, and resuming that ends the region again, the parallel state's done following in that step when every region is final (SCXML 1.0 §3.10, §3.13), a parallel state inside a region's too. A deep history of a parallel state, or of a composite state around one, remembers the leaf of each region when the machine leaves the history's state from the parallel state, and resuming it enters every region down to that leaf (SCXML 1.0 §3.10, §3.13), a final one too, the done following once the last other region ends, or in that step when every region is resumed final (a deep history of a parallel state with a done transition, or around one whose done transition leaves the history's state); a shallow history of a parallel state would resume its regions through their initial states, which is entering it, and is refused. A transient state inside a region is left in the step that enters it, as outside one: the eventless rules of every region then in a transient state are taken together, as one microstep, until none is (SCXML 1.0 §3.13, XState's always), before each done transition of a composite state inside the regions; it may be a region's initial state, whose rules the step that enters the parallel state takes, but not in the parallel state New starts the machine in (New tests no guards); In(State) does not name one. A region may itself be a parallel state, at any depth, whose regions are then regions of the outer one, active while it is (SCXML 1.0 §3.4), which a deep history of or around the outer one remembers and resumes, each nested one entered before its first region; its ignore, reject and defer lists, and its rules, decide an event no region of it takes, as a state around its regions' own states does (SCXML 1.0 §3.13, XState's parallel node), and its timers run from its entry to its exit, the outer one's; a rule or timer of it with a target leaves the outer one entirely before it enters the target, as the outer one's own would (SCXML 1.0 §3.13: its transition domain is above the outer one), and so does one for an event states of several of its regions take run as the outer one's, taken when no region takes the event; its done transition, once each of its regions has a final state, is taken in the step that puts the last of them in a final state, its done event raised before the outer one's (SCXML 1.0 §3.13, XState's onDone), and leaves the outer one entirely, as its rules with a target do; when its guards end without else and none holds, the event is dropped and its regions rest final, the outer one's done transition following in that step when every region is final. A parallel state may also be a state inside a region, below its own state: the region's rules enter and leave it, its regions are active only while the region is in it, their rules preempt its own and those of the region around it, and In(State) names states across these levels (SCXML 1.0 §3.4, §3.13); a row of its regions may leave it for a state of the region around it, or of another of its regions (entering it again), written as its rule guarded by In(State), where it has no rule or list entry of its own for the event and no state around the row's source, nor a later region of it, would take the event first, and a row or a timer of its regions may leave the parallel state outside regions that holds it, as a row of that one's own regions does, where no state around its source up to its region's own state, no other state of its region, and no other region would take the event first (not yet an eventless rule there, nor a timer's into another of its regions), and so may a timer of its regions' states for a state of the region around it. The rules inside a region read and set the parallel state's fields (guards, effects, set, with), which every state of its regions has; the rules several regions take in one step run their content in document order, each reading what the earlier set (SCXML 1.0 §3.13), and two of them may not set one field unless the later's effect reads it. The entry and exit of a state inside a region (a parallel state inside a region, or nested as one, too) may run an effect that reads and sets those fields and fills its actions' fields, in place: a step runs the exits of the states it leaves, then the rules' content, then the entries (SCXML 1.0 §3.13), entering the parallel state runs its regions' initial entries after its own, and leaving it runs its regions' exits before its own and the rule's content; two of one step, of different regions, may not set one field unless the later's effect reads it. A parallel state inside a region, at any depth, may have a done transition, once each of its regions has a final state: a rule of the region around it, taken in the step that puts the last of its regions in a final state, after that step's transient states, its done event waiting with those of the composite states and parallel states inside the other regions of the parallel state around in the order they were raised (SCXML 1.0 §3.13); when its guards end without else and none holds, the done event is dropped and every one of its regions rests final, answering events by its rules and those around it, the region around it may have transient states and done transitions, which may enter it, and so may its own regions have transient states, initial ones included, taken with those of every other region of the parallel state around in one microstep, and composite states with done transitions, whose done events wait with the others' in the order they were raised, its own done following once they end its last region (SCXML 1.0 §3.13), or with histories, which remember their region's leaf when the parallel state is left too; a composite state of the region around it may have a shallow history, which resumes it by entering it anew, or a deep one (the region's own state's too, or its own deep history), which remembers the leaf of each of its regions whenever the history's state is left from it, and resuming it enters it with each region down to that leaf, entries in document order (SCXML 1.0 §3.10, §3.13; XState v5 alike), at any depth. What fsmgen does not resolve yet inside regions (such a parallel state's fields and a delay an effect computes for its timer, deferrals and nested parallel regions inside its regions, a deep history of or around it whose regions hold parallel states in turn, start in a transient state or one that waits, or may rest in a final state, or that its done transition leaves (its own always); a nested parallel state's history, a done transition of it that always leaves where the outer one or a parallel state around it has one too (which could never be taken), one whose guards end without else beside another nested one's done transition, one beside a parallel state inside a region's state of the outer one or under a deep history of or around it, one into a state inside the outer one, or entering the outer one again while the done event of the outer one or another parallel state nested in it may wait, its rules with a target inside the outer one, its rules with a target or for an event several of its regions take where a region of the outer one outside it takes the event too, or the outer one or a parallel state around it has a rule for it, or a list and the rule has guards without else, \"*\" in its lists, or its rejection of an event a state of its regions takes otherwise; fields of the states inside regions, effects and actions with fields on the entry or exit of the states of a parallel state inside a region, a transient initial state of a region of the parallel state New starts the machine in, a rule into a history inside a region that entering the parallel state takes through the transient initial states, or a rule from outside a parallel state into a state inside a parallel state nested as its region, or down to a final state whose composite state's done transition has guards without else, a region's rule into a deep history inside a parallel state inside its states that may resume a parallel state in turn, and a done transition into another region) is refused, named.",
		Help:     "Give the parallel state two regions or more and remove their initial; write timers' rules that leave the parallel state from it; name in In(State) a state of another region, or of a region of the parallel state the rule's state is or holds; give the fields to the parallel state, let one region's rule, entry or exit of a step set a field or the later read it in its effect, and give a region's timer a duration; give every region of a parallel state with done a final state its rules reach, and write the rows for the events it is offered there from the region or the parallel state.",
		Patterns: []string{`^parallel state `, `^region `, `^In\(.*\) (is a guard|names|tests|on a rule of .* is never true)`, `^rules? .* leaves? parallel state `, `^a timer of .*, in region .*, leaves parallel state `, `^the done transition of .*, in region .*, leaves parallel state `, `^the done transition of .*, in region .*, targets .* in region .*: it would leave a parallel state `, `^the done transition of parallel state .*, a region of parallel state `, `^the deep history of .* remembers the leaves of the regions of parallel state .* inside region `, `^a transition from outside parallel state `},
	},
	{
		ID: "done-transition", Level: Error,
		Short:    "A final state or a done transition is misdeclared.",
		Full:     "A leaf marked final completes its composite state; the composite state's done transition is taken when the machine enters a final child, in the same step (UML completion transitions, SCXML done.state.ID). A done transition needs a composite state with a final child and must leave the final state in each branch it takes; its guards may end without else, and the machine then rests in the final state when none holds (SCXML drops the done event no transition enables), answering events by the composite state's rules. Either way the final state has no entry, exit, timer or transitions of its own, nor ignore, reject or defer lists (SCXML 1.0 §3.7). A composite state inside a region of a parallel state (a parallel state inside another region's state included) completes so too, its done transition moving within the region, and the region resting in the final state when no guard holds. A parallel state's done transition is taken when every region is in a final state (SCXML done.state.ID of a <parallel>), and must leave the parallel state.",
		Help:     "Put done on a composite state and mark the leaf that completes it final: true; give done a to; move the final state's actions to done or to the rows into it.",
		Patterns: []string{`^state .* has a done transition, but no states inside it`, `^composite state .* has a done transition, but no final child`, `^the done transition of .* must leave its final state`, `^a branch of the done transition of .* must leave its final state`, `^the done transition of .* has no event to ignore or reject`, `^state .* is final, but only a state inside a composite state completes it`, `^state .* cannot be final and `, `^final state .* is left `, `^final state .* completes .*, whose done transition is tested in the step that enters it`},
	},
	{
		ID: "deferred-event", Level: Error,
		Short:    "A deferred event could wait forever, or its deferral is misdeclared.",
		Full:     "A state may defer events (defer: [E]; UML's deferrable triggers): the machine keeps them and handles each once it is in a state that does not defer it. So a terminal state defers nothing, a state that defers an event must be able to reach one that does not, some state must take a transition on each deferred event, and defer_limit is a whole number, set only when some state defers an event. In a machine with parallel states, the states outside them, a parallel state as a whole and the states inside its regions (a parallel state inside a region included, not yet the states inside its own regions) may defer events: a region's transition, ignore or reject takes precedence over a deferral, the parallel state's or another region's (UML 2.5.1 §14.2.3.4.5, §14.2.3.9 and §14.5.9), and a region's deferral over the parallel state's own rules. A parallel state defers only the events its regions leave to it, in the configurations whose leaves leave them to it: whether the machine defers an event then depends on its regions' leaves, and a region's guards may not decide whether an event a state of its regions, or the parallel state, defers is deferred; the transient states and done transitions inside the regions settle them within the step, before recall asks the configuration what it defers.",
		Help:     "Ignore or reject the event in a terminal state; add a way to a state that takes the event, or a transition on it; list events by name; give defer_limit a whole number or remove it; end a region's guards with else; remove a region's deferral that another region always decides first.",
		Patterns: []string{`^a state defers events by name, not "\*"`, `^terminal state .* defers .*, which it would keep forever`, `^defer_limit is set, and no state defers an event`, `^defer_limit .* is not a whole number`, ` defers .*, and every state it can reach defers `, ` is deferred, and no state has a transition for it`, `^parallel states and deferred events together: `, `^state .* defers .*, but in every configuration that can be reached while it is active another region decides `},
	},
	{
		ID: "terminal-state-left", Level: Error,
		Short:    "A terminal state has a transition to another state.",
		Full:     "A terminal state is never left; a transition out of it contradicts the mark.",
		Help:     "Remove the transition, or remove \"terminal: true\".",
		Patterns: []string{`^terminal state .* cannot have a transition to `},
	},
	{
		ID: "unhandled-pair", Level: Error,
		Short:    "A state does not say what it does with an event.",
		Full:     "fsmgen machines are total: every state resolves every event, by a transition, an ignore or a reject (its own, an enclosing state's, or a \"*\" row's), so no event is dropped silently.",
		Help:     "Add a transition, or list the event under the state's ignore or reject.",
		Patterns: []string{`^state .* does not handle (event|\d+ events)`, `^final state .* \(where the machine rests when no guard of the done transition of .* holds\) does not handle (event|\d+ events)`},
	},
	{
		ID: "unreachable-state", Level: Error,
		Short:    "A state cannot be reached from the initial state.",
		Full:     "No sequence of events leads from the initial state to this one, so its rules are dead code.",
		Help:     "Add a transition into it, or remove it.",
		Patterns: []string{`^state .* is unreachable from the initial state`},
	},
	{
		ID: "no-way-out", Level: Error,
		Short:    "A non-terminal state can never be left.",
		Full:     "Every rule of the state keeps it where it is, yet it is not marked terminal: the machine would be stuck there. Inside a region of a parallel state whose done transition is its only way out (no rule of it or of a state around it leaves it), a state from which no rule of the region leads to a final state is stuck the same way: the done transition waits for the region to end. For a parallel state inside a region's state, a rule of its host region that leaves it, or one that leaves the parallel state around that region, is a way out; that parallel state's done transition is none (it waits for the host region to end).",
		Help:     "Add a transition to another state, or mark it \"terminal: true\".",
		Patterns: []string{`^state .* has no way out`, `^state .*, in region .* of parallel state .*, never leads to a final state`},
	},
	{
		ID: "unreachable-rule", Level: Error,
		Short:    "A rule can never fire.",
		Full:     "No sequence of events from the initial state reaches a state that takes the rule, so it is dead code.",
		Help:     "Make a state that takes the rule reachable, or remove the rule.",
		Patterns: []string{`^rule .* can never fire`},
	},
	{
		ID: "path-search-limit", Level: Error,
		Short:    "A rule fired in none of the configurations searched.",
		Full:     "fsmgen finds a witness path to every rule by searching the configurations the machine reaches (its states, its parallel states' regions, its histories and running timers), breadth first; with several parallel states there may be millions, so the search stops after 131072, and a rule not reached by then is reported, as it may never fire. Within one step, it follows every combination of the branches the guards of the eventless rules inside a parallel state's regions may take, microstep after microstep; past 1048576 microsteps in all it gives up on the machine, naming the parallel state.",
		Help:     "Make a state that takes the rule reachable in fewer steps, or remove the rule (a rule that can never fire is reported as such when the search ends sooner); give fewer states inside the parallel state's regions guarded eventless rows, or name the events that move them.",
		Patterns: []string{`^rule .* fires in none of the first \d+ configurations`, `^the checker gives up on parallel state .* after \d+ microsteps`},
	},
	// Examples run through the real behaviour.
	{
		ID: "invalid-example", Level: Error,
		Short:    "An example of a rule is malformed or cannot run.",
		Full:     "A rule's examples name the state at rest they start in and the event they send, with field values of the fields' types; fsmgen runs them through the real behaviour. An example of a rule inside a region starts in the parallel state, the rule's region in the rule's leaf (or the one \"in\" names, inside the region) and the other regions in their resting leaves or those its state names (the region's name, a leaf it rests in): the event must lead to the rule there. An example of a timer's rule sends the TimerFired of that timer as Restore numbers the timers of the state it starts in, from 1, outermost first and the regions in document order (unless the example gives \"timer\").",
		Help:     "Correct the example as the message says: its name, \"in\", \"send\", values that fit the fields, and for a region's rule the leaves of the regions under \"state\" ({volume: muted}).",
		Patterns: []string{`^examples? `, `^cannot read the value of `},
	},
	{
		ID: "invalid-behavior", Level: Error,
		Short:    "\"behavior\" does not make the machine's Behavior.",
		Full:     "\"behavior\" is a Go expression, using the spec's imports, that gives the Behavior (and optionally an error) the examples run through.",
		Help:     "Write a call such as mypkg.New() of a package listed under imports.",
		Patterns: []string{`^behavior ".*"`, `^behavior names `},
	},
	// Field flow.
	{
		ID: "field-not-filled", Level: Error,
		Short:    "A field of the target state or of an action gets no value.",
		Full:     "On each row, every field of the state entered and of the actions emitted is carried over (same name and type) from the source state or the event, or set by the row's effect.",
		Help:     "Carry it over with a field of the same name and type, or name an effect that sets it.",
		Patterns: []string{`^field .* of (state|action) .* is not filled on `},
	},
	{
		ID: "field-type-mismatch", Level: Error,
		Short:    "A field has different types in two places.",
		Full:     "A value flows between fields, effect results and reads only with the same name and type.",
		Help:     "Declare the same type in both places.",
		Patterns: []string{`make the types agree`, `declare the same type in both places$`},
	},
	{
		ID: "field-not-available", Level: Error,
		Short:    "A guard or effect reads a field the row does not provide.",
		Full:     "A guard or effect reads only fields of the source state, the event, or (for entry and exit effects) the state itself.",
		Help:     "Use the guard or effect where the field is available, or add the field.",
		Patterns: []string{`^\S+ \S+ reads \S+, but `, `^\S+ \S+ reads .*, but on this row .*: use it where .* is available`, `^effect .* runs on .* of state .* and reads .*, but the state has no field `},
	},
	{
		ID: "field-ambiguous", Level: Error,
		Short:    "A row reads a name that both its source state and its event have.",
		Full:     "A value a row carries over, or a guard or effect reads, comes from the source state or the event by name; when both have a field of that name, taking the state's would silently ignore the event's (a new value the event brings), so fsmgen refuses to choose.",
		Help:     "Say on the row which one it takes, with: {name: event.name} or with: {name: state.name}, or rename one of the two fields.",
		Patterns: []string{`, but both .* and event .* have a field .*: it is ambiguous which one is meant`},
	},
	{
		ID: "invalid-with", Level: Error,
		Short:    "A row's with: names no field, or a field nothing reads.",
		Full:     "with: says, for a name the row reads or fills (in its guard, its effect, the fields of the state it enters or stays in, or of its actions), which field it takes: the event's (event.<field>) or the source state's (state.<field>), of that name or another of the same type; the field must exist in the event or in every state that takes the row, and something on the row must use the name.",
		Help:     "Write event.<field> or state.<field> naming a field of the row of the name's type, or remove the entry.",
		Patterns: []string{`^with: `},
	},
	{
		ID: "invalid-constant", Level: Error,
		Short:    "A constant of a row's set: does not fit, or nothing takes it.",
		Full:     "set: gives fields of the target state (or of the state a row stays in) and of the row's actions constant values: a bool, a string, a number, or a duration for a time.Duration, checked against the field's type; a field is set by set:, by the effect, by with: or by an entry, never by two of them.",
		Help:     "Give a constant of the field's type, name a field the row fills, or drop the constant from set: or the field from the effect.",
		Patterns: []string{`^set: `},
	},
	{
		ID: "effect-result-unused", Level: Error,
		Short:    "An effect sets a field nothing takes.",
		Full:     "What an effect sets must go into the target state or an emitted action; a result nothing takes is a mistake in the spec.",
		Help:     "Drop the field from the effect's sets, or use another effect here.",
		Patterns: []string{`^effect .* sets .*, but nothing on .* takes it`},
	},
	{
		ID: "effect-result-conflict", Level: Error,
		Short:    "An effect's result cannot be stored unambiguously.",
		Full:     "An effect sets a field that an entry effect also sets, or that only some of the row's source states have.",
		Help:     "Drop the field from one of the effects, give all the states the field, or write rows of their own.",
		Patterns: []string{`^effect .* sets .*, but the entry of the state that owns .* sets it too`, `^effect .* sets .*, but only some of .* have it`},
	},
	// Output.
	{
		ID: "invalid-output-path", Level: Error,
		Short:    "An output path is empty, absolute or uses odd characters.",
		Full:     "Output paths are relative to the spec, use forward slashes, and only letters, digits, '.', '_', '-' and '/', so no spec text can steer a write elsewhere.",
		Help:     "Write a relative path such as ../gen/door.",
		Patterns: []string{`^output path is empty$`, `^output path ".*" (must be relative|may use only)`},
	},
	{
		ID: "output-outside-module", Level: Error,
		Short:    "An output path leads out of the spec's module.",
		Full:     "Outputs stay inside the module that holds the spec (the directory of the nearest go.mod), or the spec's directory when there is none.",
		Help:     "Choose an output path inside the module.",
		Patterns: []string{`^output path ".*" leads out of `},
	},
	{
		ID: "temporal-output", Level: Error,
		Short:    "output.temporal cannot generate the machine's Temporal glue.",
		Full:     "The Temporal glue imports the machine's generated package and hands its actions to activities: it needs output.go, a Go module to name the package by, actions to perform, a directory whose name is a Go package name, and action fields of types the machine's package exports.",
		Help:     "Do what the message says: add output.go, put the spec in a module, rename the directory, or export the type.",
		Patterns: []string{`^output\.temporal needs `, `^output\.temporal: .* has no actions`, `^output\.temporal: the directory's last element `, `^output\.temporal: field .* which package .* does not export`},
	},
	{
		ID: "temporal-revision-record", Level: Error,
		Short:    "The Temporal glue's revision record is not one fsmgen can use.",
		Full:     "fsmgen generate keeps, beside the Temporal glue, the spec it was last generated from with its Revision and MinRevision, and compares the next spec with it. A record that does not parse, names another machine, holds revisions out of order, or whose spec no longer checks cannot be compared.",
		Help:     "Restore the record from version control, or fix what makes the recorded spec fail (a Go type it names that was removed, say).",
		Patterns: []string{`^output\.temporal: .* is not a revision record`, `^output\.temporal: .* records machine `, `^output\.temporal: .* records revisions `, `^output\.temporal: the spec of revision \d+`},
	},
	{
		ID: "temporal-break", Level: Error,
		Short:    "A change of the spec breaks running Temporal workflows and is not declared.",
		Full:     "Workflows started by the recorded revision replay their histories on the new code; a change that breaks what they saved, logged or do would fail them mid-step. Declared under breaks:, it raises MinRevision, and older runs stop cleanly at their next workflow task.",
		Help:     "Declare the change under breaks: once the running workflows may stop (or have finished), or undo it.",
		Patterns: []string{`breaks the workflows running revision \d+ of `},
	},
	{
		ID: "breaking-change", Level: Error,
		Short:    "A change between two revisions of a spec breaks something the new one does not declare.",
		Full:     "fsmgen diff found a change that breaks states or events saved by the old revision, the hand-written Behavior or Handler, or what the machine does, and the new spec does not list it under breaks:.",
		Help:     "Undo the change, keep old data readable with renamed_from, or declare the break under breaks: with the change's subject and why (fsmgen diff then reports it as declared).",
		Patterns: []string{`^breaking change: `},
	},
	{
		ID: "declared-break", Level: Warning,
		Short:    "A change breaks something, as the new spec declares under breaks:.",
		Full:     "fsmgen diff found a breaking change that the new spec lists under breaks:, so it is intended; it is reported so that whoever upgrades knows what to migrate.",
		Help:     "Migrate what the verdicts name (saved states, an event log, the Behavior or Handler); remove the entry from breaks: once no saved data of the old revision is left.",
		Patterns: []string{`^declared breaking change: `},
	},
	{
		ID: "stale-output", Level: Error,
		Short:    "A generated file is out of date with its spec.",
		Full:     "fsmgen check found a generated file whose bytes differ from what its spec generates now, or that is missing.",
		Help:     "Run fsmgen generate on the spec (or make generate) and commit the result.",
		Patterns: []string{`^generated file is (stale|missing): `},
	},
	// Warnings.
	{
		ID: "unused-declaration", Level: Warning,
		Short:    "A declaration is never used.",
		Full:     "An event that never causes a transition, an action never emitted, a guard or effect no rule names, an import no field type uses, a behavior no example runs through, an initialism no name has.",
		Help:     "Remove it, or use it where it was meant to be used.",
		Patterns: []string{`^event .* never causes a transition`, `^action .* is never emitted$`, `^\S+ \S+ is never used$`, `^import .* is not used by any field type$`, `^behavior is given, but the spec declares no guard or effect`, `^behavior is given, but no rule has examples`, `^breaks declares ".*", which names no breaking change`, `^initialism \S+ is in no name fsmgen makes a Go name of`},
	},
	{
		ID: "rule-applies-nowhere", Level: Warning,
		Short:    "A \"*\" row or an enclosing state's rule applies to no state.",
		Full:     "Every state it would cover handles the event itself, so the rule is dead.",
		Help:     "Remove the rule.",
		Patterns: []string{` applies to no state: `},
	},
	{
		ID: "new-event-through-star", Level: Warning,
		Short:    "A state handles a new event only through \"*\".",
		Full:     "fsmgen diff found an event the old revision did not have that a state ignores or rejects through \"ignore: *\" or \"reject: *\" rather than by a rule written for it, which may not be what the state should do with it.",
		Help:     "If it is wrong, give the state a rule for the event; if it is right, nothing needs doing.",
		Patterns: []string{`^the new event .* reaches .* through "\*"`},
	},
	{
		ID: Unclassified, Level: Error,
		Short: "A problem fsmgen has not classified.",
		Full:  "fsmgen's own tests keep every message it produces classified; this id appears only for a message added without a rule.",
		Help:  "Read the message; please report it so that it gets a rule of its own.",
	},
}

// compiled holds each rule's patterns compiled, in the order of rules.
var compiled = func() [][]*regexp.Regexp {
	out := make([][]*regexp.Regexp, len(rules))
	for i, r := range rules {
		for _, p := range r.Patterns {
			out[i] = append(out[i], regexp.MustCompile(p))
		}
	}
	return out
}()

// Classify returns the id of the rule a message belongs to, or
// Unclassified when no rule matches.
func Classify(msg string) string {
	if ids := matching(msg); len(ids) > 0 {
		return ids[0]
	}
	return Unclassified
}

// matching returns the ids of every rule one of whose patterns matches msg.
func matching(msg string) []string {
	var ids []string
	for i, res := range compiled {
		if slices.ContainsFunc(res, func(re *regexp.Regexp) bool { return re.MatchString(msg) }) {
			ids = append(ids, rules[i].ID)
		}
	}
	return ids
}

// Rules returns a copy of every rule, sorted by id.
func Rules() []Rule {
	out := slices.Clone(rules)
	for i := range out {
		out[i].Patterns = slices.Clone(out[i].Patterns)
	}
	slices.SortFunc(out, func(a, b Rule) int { return cmp.Compare(a.ID, b.ID) })
	return out
}

// RuleByID returns a copy of the rule with the given id.
func RuleByID(id string) (Rule, bool) {
	i := slices.IndexFunc(rules, func(r Rule) bool { return r.ID == id })
	if i < 0 {
		return Rule{}, false
	}
	r := rules[i]
	r.Patterns = slices.Clone(r.Patterns)
	return r, true
}
