package jobs

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/fsmgen/fsmgen/server/monitors"
)

// file is the configuration file as yaml.v3 reads it, strictly: a key it
// does not know is an error. Values stay nodes, so that each error names
// its line.
type file struct {
	Jobs []fileJob `yaml:"jobs"`
}

type fileJob struct {
	ID       yaml.Node     `yaml:"id"`
	Name     yaml.Node     `yaml:"name"`
	Command  yaml.Node     `yaml:"command"`
	Schedule *fileSchedule `yaml:"schedule"`
	Timeout  yaml.Node     `yaml:"timeout"`
	Retries  yaml.Node     `yaml:"retries"`
	Backoff  *fileBackoff  `yaml:"backoff"`
	Overlap  yaml.Node     `yaml:"overlap"`
	Enabled  yaml.Node     `yaml:"enabled"`
}

type fileSchedule struct {
	Type       yaml.Node `yaml:"type"`
	Expression yaml.Node `yaml:"expression"`
	Timezone   yaml.Node `yaml:"timezone"`
	Seconds    yaml.Node `yaml:"seconds"`
}

type fileBackoff struct {
	Base yaml.Node `yaml:"base"`
	Cap  yaml.Node `yaml:"cap"`
}

// Load reads the configuration file at path (see Parse).
func Load(path string) ([]Job, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read the jobs file: %w", err)
	}
	return Parse(path, data)
}

// Parse reads a configuration file of command jobs, named name in errors:
//
//	jobs:
//	  - id: backup
//	    name: Nightly backup
//	    command: [/usr/local/bin/backup, --full]
//	    schedule: {type: cron, expression: "30 2 * * *", timezone: Europe/Paris}
//	    timeout: 30m
//	    retries: 3
//	    backoff: {base: 5s, cap: 5m}
//	    overlap: skip
//	    enabled: true
//
// A schedule is {type: cron, expression, timezone} or {type: interval,
// seconds}; timeout (default 1h), retries (default 3), backoff base
// (default 5s) and cap (default 5m), overlap (skip or queue, default
// skip) and enabled (default true) may be left out. Every problem is reported, each as "name:line: what is wrong and
// what to do", in the order of the file.
func Parse(name string, data []byte) ([]Job, error) {
	var f file
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&f); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("%s:1: the file is empty: give a list of jobs under jobs:", name)
		}
		return nil, yamlError(name, err)
	}
	p := &parser{name: name}
	seen := map[string]int{}
	var out []Job
	for i := range f.Jobs {
		j, line := p.job(&f.Jobs[i], i)
		if j == nil {
			continue
		}
		if first, ok := seen[j.ID]; ok {
			p.errorf(line, "job %q is declared twice (first at line %d): give each job its own id", j.ID, first)
			continue
		}
		seen[j.ID] = line
		out = append(out, *j)
	}
	if len(p.errs) > 0 {
		return nil, errors.Join(p.errs...)
	}
	return out, nil
}

// The lines of yaml.v3's errors, and the two kinds this package rewords.
var (
	yamlLineRE    = regexp.MustCompile(`^(?:yaml: )?line (\d+): (.*)$`)
	yamlUnknownRE = regexp.MustCompile(`^field (\S+) not found in type jobs\.(\w+)$`)
	yamlTypeRE    = regexp.MustCompile("^cannot unmarshal !!(\\w+) `?(.*?)`? into (.*)$")
)

// fieldsOf lists the keys each part of the file takes.
var fieldsOf = map[string]string{
	"file":         "jobs",
	"fileJob":      "id, name, command, schedule, timeout, retries, backoff, overlap, enabled",
	"fileSchedule": "type, expression, timezone, seconds",
	"fileBackoff":  "base, cap",
}

// yamlError rewrites yaml.v3's error as name:line: messages.
func yamlError(name string, err error) error {
	var lines []string
	var te *yaml.TypeError
	syntax := !errors.As(err, &te)
	if syntax {
		lines = []string{err.Error()}
	} else {
		lines = te.Errors
	}
	var errs []error
	for _, l := range lines {
		m := yamlLineRE.FindStringSubmatch(strings.TrimSpace(l))
		if m == nil {
			errs = append(errs, fmt.Errorf("%s: %s", name, strings.TrimPrefix(l, "yaml: ")))
			continue
		}
		msg := m[2]
		if syntax {
			msg = "invalid YAML: " + msg
		} else if u := yamlUnknownRE.FindStringSubmatch(msg); u != nil {
			msg = fmt.Sprintf("unknown key %q: the keys here are %s", u[1], fieldsOf[u[2]])
		} else if t := yamlTypeRE.FindStringSubmatch(msg); t != nil {
			switch {
			case strings.HasPrefix(t[3], "[]"):
				msg = "want a list of jobs, each a mapping with an id"
			default:
				msg = "want a mapping of keys, found a " + map[string]string{"seq": "list", "str": "string", "int": "number"}[t[1]]
			}
		}
		errs = append(errs, fmt.Errorf("%s:%s: %s", name, m[1], msg))
	}
	return errors.Join(errs...)
}

// parser collects the problems of a file.
type parser struct {
	name string
	errs []error
}

func (p *parser) errorf(line int, format string, args ...any) {
	p.errs = append(p.errs, fmt.Errorf("%s:%d: "+format, append([]any{p.name, line}, args...)...))
}

// set reports whether a key was given.
func set(n *yaml.Node) bool { return n.Kind != 0 }

// str reads a string; def when absent.
func (p *parser) str(n *yaml.Node, key, def string) string {
	if !set(n) {
		return def
	}
	if n.Kind != yaml.ScalarNode || n.Tag == "!!null" {
		p.errorf(n.Line, "%s: want a string", key)
		return def
	}
	return n.Value
}

// integer reads a whole number; def when absent.
func (p *parser) integer(n *yaml.Node, key string, def int) int {
	if !set(n) {
		return def
	}
	v, err := strconv.Atoi(n.Value)
	if n.Kind != yaml.ScalarNode || err != nil {
		p.errorf(n.Line, "%s: %q is not a whole number", key, n.Value)
		return def
	}
	return v
}

// duration reads a Go duration; def when absent.
func (p *parser) duration(n *yaml.Node, key string, def time.Duration) time.Duration {
	if !set(n) {
		return def
	}
	d, err := time.ParseDuration(n.Value)
	if n.Kind != yaml.ScalarNode || err != nil {
		p.errorf(n.Line, "%s: %q is not a duration: give one like 30s, 5m or 1h30m", key, n.Value)
		return def
	}
	if d <= 0 {
		p.errorf(n.Line, "%s: %s is not positive: give a duration like 30s, 5m or 1h30m", key, n.Value)
		return def
	}
	return d
}

// job reads the i-th job and returns it with its line, or nil with
// problems recorded.
func (p *parser) job(fj *fileJob, i int) (*Job, int) {
	before := len(p.errs)
	line := fj.ID.Line
	if !set(&fj.ID) {
		line = firstLine(fj)
		p.errorf(line, "job %d has no id: give it one, as in id: nightly-backup", i+1)
		return nil, line
	}
	j := &Job{ID: p.str(&fj.ID, "id", ""), Enabled: true}
	if !idRE.MatchString(j.ID) {
		p.errorf(line, "id %q: give 1 to 64 of a-z, 0-9, - and _, starting with a letter or digit", j.ID)
	}
	j.Name = p.str(&fj.Name, "name", j.ID)
	switch {
	case !set(&fj.Command):
		p.errorf(line, "job %q has no command: give the program and its arguments, as in command: [/usr/bin/backup, --full]", j.ID)
	case fj.Command.Kind != yaml.SequenceNode || len(fj.Command.Content) == 0:
		p.errorf(fj.Command.Line, "command: give a list, the program and its arguments, as in [/usr/bin/backup, --full] (no shell runs it)")
	default:
		for _, a := range fj.Command.Content {
			if a.Kind != yaml.ScalarNode {
				p.errorf(a.Line, "command: each argument is a string")
				continue
			}
			j.Command = append(j.Command, a.Value)
		}
		if len(j.Command) > 0 && j.Command[0] == "" {
			p.errorf(fj.Command.Line, "command: the program is empty")
		}
	}
	s := &j.Settings
	if fj.Schedule == nil {
		p.errorf(line, "job %q has no schedule: give {type: cron, expression: \"0 3 * * *\"} or {type: interval, seconds: 3600}", j.ID)
	} else {
		p.schedule(fj.Schedule, s, line)
	}
	s.Timeout = p.duration(&fj.Timeout, "timeout", DefaultTimeout)
	s.Retries = p.integer(&fj.Retries, "retries", DefaultRetries)
	if s.Retries < 0 || s.Retries > 100 {
		p.errorf(fj.Retries.Line, "retries: %d is not between 0 and 100", s.Retries)
	}
	s.BackoffBase, s.BackoffCap = DefaultBackoffBase, DefaultBackoffCap
	if fj.Backoff != nil {
		s.BackoffBase = p.duration(&fj.Backoff.Base, "backoff base", DefaultBackoffBase)
		s.BackoffCap = p.duration(&fj.Backoff.Cap, "backoff cap", max(DefaultBackoffCap, s.BackoffBase))
		if s.BackoffCap < s.BackoffBase {
			p.errorf(fj.Backoff.Cap.Line, "backoff cap: %v is below the base %v: give a cap at least the base", s.BackoffCap, s.BackoffBase)
		}
	}
	if set(&fj.Overlap) {
		switch v := fj.Overlap.Value; {
		case fj.Overlap.Kind != yaml.ScalarNode:
			p.errorf(fj.Overlap.Line, "overlap: give skip or queue")
		case v == OverlapSkipName:
		case v == OverlapQueue:
			s.Overlap = OverlapQueue
		default:
			p.errorf(fj.Overlap.Line, "overlap: %q is not skip or queue (what becomes due while the job's run is in progress: skipped, or run once it ends)", v)
		}
	}
	if set(&fj.Enabled) {
		switch fj.Enabled.Value {
		case "true":
		case "false":
			j.Enabled = false
		default:
			p.errorf(fj.Enabled.Line, "enabled: %q is not true or false", fj.Enabled.Value)
		}
	}
	if len(p.errs) > before {
		return nil, line
	}
	return j, line
}

// schedule reads a job's schedule into s.
func (p *parser) schedule(fs *fileSchedule, s *Settings, line int) {
	if set(&fs.Type) {
		line = fs.Type.Line
	}
	typ := p.str(&fs.Type, "schedule type", "")
	switch typ {
	case monitors.ScheduleCron:
		if set(&fs.Seconds) {
			p.errorf(fs.Seconds.Line, "schedule: seconds is for an interval schedule: give a cron expression")
			return
		}
		s.Schedule = monitors.Schedule{Type: typ, Expression: p.str(&fs.Expression, "schedule expression", "")}
		s.Timezone = p.str(&fs.Timezone, "schedule timezone", "UTC")
		if !set(&fs.Expression) {
			p.errorf(line, "schedule: a cron schedule needs an expression, as in expression: \"30 2 * * *\"")
			return
		}
	case monitors.ScheduleInterval:
		if set(&fs.Expression) || set(&fs.Timezone) {
			p.errorf(line, "schedule: an interval schedule takes only seconds: give type: cron for an expression")
			return
		}
		s.Schedule = monitors.Schedule{Type: typ, Seconds: p.integer(&fs.Seconds, "schedule seconds", 0)}
		s.Timezone = "UTC"
	default:
		p.errorf(line, "schedule type %q: give cron (with an expression) or interval (with seconds)", typ)
		return
	}
	if _, err := monitors.Compile(s.cron()); err != nil {
		var bad *monitors.InvalidError
		if errors.As(err, &bad) {
			err = bad.Err
		}
		p.errorf(line, "schedule: %v", err)
	}
}

// firstLine is the line of the first key a job gives.
func firstLine(fj *fileJob) int {
	for _, n := range []*yaml.Node{&fj.Name, &fj.Command, &fj.Timeout, &fj.Retries, &fj.Overlap, &fj.Enabled} {
		if set(n) {
			return n.Line
		}
	}
	if fj.Schedule != nil {
		return fj.Schedule.Type.Line
	}
	return 0
}
