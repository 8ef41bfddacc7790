package app

import (
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/fsmgen/fsmgen/agent/internal/instructions"
	"github.com/fsmgen/fsmgen/agent/internal/mcptools"
	"github.com/fsmgen/fsmgen/agent/internal/sandbox"
	"github.com/fsmgen/fsmgen/agent/internal/tools"
	"github.com/fsmgen/fsmgen/internal/suggest"
)

// configDirName is the agent's directory in the user's configuration
// directory: it holds config.yaml and the user's AGENTS.md.
const configDirName = "fsmgen-agent"

// configFile is the user's config file, read strictly: every key is known,
// every value checked, and an error names the file, the line and what is
// allowed there.
type configFile struct {
	// path is the file read; "" when there is none.
	path string
	// flags are the flags' defaults it sets, in its order.
	flags []configFlag
	// instructions are its instructions settings.
	instructions instructionsConfig
	// servers are its MCP servers, in its order (disabled ones left out).
	servers []mcptools.Server
}

// configFlag is a flag's default given in the config file.
type configFlag struct {
	key, flag string
	values    []string // several for a repeatable flag
	line, col int
}

// instructionsConfig is the config file's instructions section.
type instructionsConfig struct {
	disabled bool
	names    []string
	maxFile  byteSize
	maxTotal byteSize
	userFile string // "" for the default
}

// notInConfig are the flags a config file cannot set: what one run
// asks for, not a default.
var notInConfig = map[string]bool{"p": true, "resume": true, "json": true, "version": true,
	"config": true, "log": true, "workspace": true, "v": true}

// repeatableFlags may be given a list in the config file.
var repeatableFlags = map[string]bool{sandbox.FlagExpose: true}

// configKey is a flag's name as a config key: dashes made underscores.
func configKey(flagName string) string { return strings.ReplaceAll(flagName, "-", "_") }

// defaultConfigDir is $XDG_CONFIG_HOME/fsmgen-agent, or
// ~/.config/fsmgen-agent; "" when neither can be found.
func defaultConfigDir() string {
	if d := os.Getenv("XDG_CONFIG_HOME"); d != "" && filepath.IsAbs(d) {
		return filepath.Join(d, configDirName)
	}
	if home, err := os.UserHomeDir(); err == nil {
		return filepath.Join(home, ".config", configDirName)
	}
	return ""
}

// loadConfig reads the config file: path (-config), which must exist, or
// the default one, which may not. fs names the flags the file may set.
func loadConfig(path string, fset *flag.FlagSet) (*configFile, error) {
	explicit := path != ""
	if !explicit {
		dir := defaultConfigDir()
		if dir == "" {
			return &configFile{}, nil
		}
		path = filepath.Join(dir, "config.yaml")
	}
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) && !explicit {
		return &configFile{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read the config file: %w", err)
	}
	c, err := parseConfig(path, data, fset)
	if err != nil {
		return nil, err
	}
	return c, nil
}

// configError is an error at a place of the config file.
func configError(path string, n *yaml.Node, format string, args ...any) error {
	return fmt.Errorf("%s:%d:%d: %s", path, n.Line, n.Column, fmt.Sprintf(format, args...))
}

// pair is one key of a mapping and its value.
type pair struct {
	key  string
	k, v *yaml.Node
}

// mapping returns the pairs of the mapping n, refusing another kind of
// node, duplicate keys and keys not in allowed (nil allows any).
func mapping(path string, n *yaml.Node, where string, allowed []string) ([]pair, error) {
	if n.Kind != yaml.MappingNode {
		return nil, configError(path, n, "%s must be a mapping of keys to values", where)
	}
	var out []pair
	seen := map[string]bool{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if k.Kind != yaml.ScalarNode {
			return nil, configError(path, k, "a key of %s must be a plain name", where)
		}
		if seen[k.Value] {
			return nil, configError(path, k, "%s is given twice in %s; keep one", k.Value, where)
		}
		seen[k.Value] = true
		if allowed != nil && !slices.Contains(allowed, k.Value) {
			return nil, configError(path, k, "unknown key %q in %s%s; allowed: %s", k.Value, where,
				suggest.DidYouMean(k.Value, allowed), strings.Join(allowed, ", "))
		}
		out = append(out, pair{key: k.Value, k: k, v: v})
	}
	return out, nil
}

// scalar returns the scalar n's value.
func scalar(path string, n *yaml.Node, what string) (string, error) {
	if n.Kind != yaml.ScalarNode || n.Tag == "!!null" {
		return "", configError(path, n, "%s must be a single value", what)
	}
	return n.Value, nil
}

// boolean returns the boolean n's value.
func boolean(path string, n *yaml.Node, what string) (bool, error) {
	var b bool
	if n.Kind != yaml.ScalarNode || n.Decode(&b) != nil {
		return false, configError(path, n, "%s must be true or false", what)
	}
	return b, nil
}

// stringList returns the list of strings n holds.
func stringList(path string, n *yaml.Node, what string) ([]string, error) {
	if n.Kind != yaml.SequenceNode {
		return nil, configError(path, n, "%s must be a list, e.g. [a, b]", what)
	}
	var out []string
	for _, item := range n.Content {
		s, err := scalar(path, item, "each item of "+what)
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, nil
}

// stringMap returns the mapping of strings n holds.
func stringMap(path string, n *yaml.Node, what string) (map[string]string, error) {
	pairs, err := mapping(path, n, what, nil)
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	for _, p := range pairs {
		s, err := scalar(path, p.v, what+"."+p.key)
		if err != nil {
			return nil, err
		}
		out[p.key] = s
	}
	return out, nil
}

// parseConfig parses the config file's bytes.
func parseConfig(path string, data []byte, fset *flag.FlagSet) (*configFile, error) {
	c := &configFile{path: path}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if doc.Kind == 0 || len(doc.Content) == 0 {
		return c, nil // empty
	}
	root := doc.Content[0]
	if root.Kind == yaml.ScalarNode && root.Tag == "!!null" {
		return c, nil
	}
	flagKeys := map[string]string{}
	fset.VisitAll(func(f *flag.Flag) {
		if !notInConfig[f.Name] {
			flagKeys[configKey(f.Name)] = f.Name
		}
	})
	allowed := append([]string{"instructions", "mcp_servers"}, slices.Sorted(maps.Keys(flagKeys))...)
	pairs, err := mapping(path, root, "the config file", allowed)
	if err != nil {
		return nil, err
	}
	for _, p := range pairs {
		switch p.key {
		case "instructions":
			if c.instructions, err = parseInstructions(path, p.v); err != nil {
				return nil, err
			}
		case "mcp_servers":
			if c.servers, err = parseServers(path, p.v); err != nil {
				return nil, err
			}
		default:
			name := flagKeys[p.key]
			cf := configFlag{key: p.key, flag: name, line: p.v.Line, col: p.v.Column}
			if p.v.Kind == yaml.SequenceNode && repeatableFlags[name] {
				if cf.values, err = stringList(path, p.v, p.key); err != nil {
					return nil, err
				}
			} else {
				v, err := scalar(path, p.v, p.key)
				if err != nil {
					return nil, err
				}
				cf.values = []string{v}
			}
			c.flags = append(c.flags, cf)
		}
	}
	return c, nil
}

// apply sets the flags the file gives a default for, except those given
// on the command line (set), and only those in only when it is not nil.
func (c *configFile) apply(fset *flag.FlagSet, set map[string]bool, only map[string]bool) error {
	for _, f := range c.flags {
		if set[f.flag] || (only != nil && !only[f.flag]) {
			continue
		}
		for _, v := range f.values {
			if err := fset.Set(f.flag, v); err != nil {
				return fmt.Errorf("%s:%d:%d: %s: %v", c.path, f.line, f.col, f.key, err)
			}
		}
	}
	return nil
}

// parseInstructions parses the instructions section.
func parseInstructions(path string, n *yaml.Node) (instructionsConfig, error) {
	var ic instructionsConfig
	pairs, err := mapping(path, n, "instructions", []string{"enabled", "names", "max_file_size", "max_total_size", "user_file"})
	if err != nil {
		return ic, err
	}
	for _, p := range pairs {
		what := "instructions." + p.key
		switch p.key {
		case "enabled":
			on, err := boolean(path, p.v, what)
			if err != nil {
				return ic, err
			}
			ic.disabled = !on
		case "names":
			if ic.names, err = stringList(path, p.v, what); err != nil {
				return ic, err
			}
			for _, name := range ic.names {
				if name == "" || strings.ContainsAny(name, "/\\") || name == "." || name == ".." {
					return ic, configError(path, p.v, "%s: %q is not a file name; give names such as AGENTS.md", what, name)
				}
			}
		case "max_file_size", "max_total_size":
			s, err := scalar(path, p.v, what)
			if err != nil {
				return ic, err
			}
			var b byteSize
			if err := b.Set(s); err != nil || b <= 0 {
				return ic, configError(path, p.v, "%s: %q is not a positive size, such as 32KiB", what, s)
			}
			if p.key == "max_file_size" {
				ic.maxFile = b
			} else {
				ic.maxTotal = b
			}
		case "user_file":
			s, err := scalar(path, p.v, what)
			if err != nil {
				return ic, err
			}
			if ic.userFile, err = expandHome(s); err != nil {
				return ic, configError(path, p.v, "%s: %v", what, err)
			}
		}
	}
	return ic, nil
}

// expandHome makes ~/x the home directory's x; the path must then be
// absolute.
func expandHome(p string) (string, error) {
	if rest, ok := strings.CutPrefix(p, "~/"); ok {
		home, err := os.UserHomeDir()
		if err != nil {
			return "", err
		}
		p = filepath.Join(home, rest)
	}
	if !filepath.IsAbs(p) {
		return "", fmt.Errorf("%q must be absolute or start with ~/", p)
	}
	return p, nil
}

// serverName is what an MCP server's name may be.
var serverName = regexp.MustCompile(`^[A-Za-z0-9_-]{1,32}$`)

// serverKeys are an MCP server entry's keys.
var serverKeys = []string{"command", "env", "network", "expose", "workspace", "url", "headers", "read_only_tools", "approve", "start_timeout", "disabled"}

// stdioOnly are the keys only a stdio server takes.
var stdioOnly = []string{"command", "env", "network", "expose", "workspace"}

// approvals are the values of approve.
var approvals = map[string]tools.Approval{"policy": tools.ApprovalPolicy, "always": tools.ApprovalAlways, "never": tools.ApprovalNever}

// parseServers parses the mcp_servers section.
func parseServers(path string, n *yaml.Node) ([]mcptools.Server, error) {
	entries, err := mapping(path, n, "mcp_servers", nil)
	if err != nil {
		return nil, err
	}
	var out []mcptools.Server
	for _, e := range entries {
		if !serverName.MatchString(e.key) {
			return nil, configError(path, e.k, "MCP server name %q: use 1 to 32 letters, digits, _ or - (it prefixes its tools' names)", e.key)
		}
		where := "mcp_servers." + e.key
		pairs, err := mapping(path, e.v, where, serverKeys)
		if err != nil {
			return nil, err
		}
		s := mcptools.Server{Name: e.key}
		disabled := false
		var stdioKey *yaml.Node
		for _, p := range pairs {
			what := where + "." + p.key
			if slices.Contains(stdioOnly, p.key) && stdioKey == nil {
				stdioKey = p.k
			}
			switch p.key {
			case "command":
				if p.v.Kind == yaml.ScalarNode {
					return nil, configError(path, p.v, "%s must be a list: the program and its arguments, e.g. [my-server, --stdio]", what)
				}
				if s.Command, err = stringList(path, p.v, what); err != nil {
					return nil, err
				}
				if len(s.Command) == 0 || s.Command[0] == "" {
					return nil, configError(path, p.v, "%s is empty; give the program and its arguments", what)
				}
			case "env":
				if s.Env, err = stringMap(path, p.v, what); err != nil {
					return nil, err
				}
			case "network":
				if s.Network, err = boolean(path, p.v, what); err != nil {
					return nil, err
				}
			case "disabled":
				if disabled, err = boolean(path, p.v, what); err != nil {
					return nil, err
				}
			case "expose":
				list, err := stringList(path, p.v, what)
				if err != nil {
					return nil, err
				}
				for _, x := range list {
					e, err := sandbox.ParseExposure(x)
					if err != nil {
						return nil, configError(path, p.v, "%s: %v", what, err)
					}
					s.Expose = append(s.Expose, e)
				}
			case "workspace":
				v, err := scalar(path, p.v, what)
				if err != nil {
					return nil, err
				}
				switch v {
				case "rw":
				case "ro":
					s.ReadOnlyWorkspace = true
				default:
					return nil, configError(path, p.v, "%s is %q: use rw (the server may write the workspace, the default) or ro", what, v)
				}
			case "url":
				if s.URL, err = scalar(path, p.v, what); err != nil {
					return nil, err
				}
				if !strings.HasPrefix(s.URL, "http://") && !strings.HasPrefix(s.URL, "https://") {
					return nil, configError(path, p.v, "%s %q: give an http:// or https:// URL", what, s.URL)
				}
			case "headers":
				if s.Headers, err = stringMap(path, p.v, what); err != nil {
					return nil, err
				}
				for k, v := range s.Headers {
					var missing []string
					s.Headers[k] = os.Expand(v, func(name string) string {
						val, ok := os.LookupEnv(name)
						if !ok {
							missing = append(missing, name)
						}
						return val
					})
					if len(missing) > 0 {
						return nil, configError(path, p.v, "%s.%s names $%s, which is not set in the environment; set it or change the header", what, k, missing[0])
					}
				}
			case "start_timeout":
				v, err := scalar(path, p.v, what)
				if err != nil {
					return nil, err
				}
				if s.StartTimeout, err = time.ParseDuration(v); err != nil || s.StartTimeout <= 0 {
					return nil, configError(path, p.v, "%s %q: give a positive duration, such as 1m", what, v)
				}
			case "read_only_tools":
				if s.ReadOnlyTools, err = stringList(path, p.v, what); err != nil {
					return nil, err
				}
			case "approve":
				if s.Approve, err = parseApprove(path, p.v, what); err != nil {
					return nil, err
				}
			}
		}
		switch {
		case s.URL == "" && s.Command == nil:
			return nil, configError(path, e.k, "%s has neither command (a stdio server) nor url (an HTTP server); give one", where)
		case s.URL != "" && stdioKey != nil:
			return nil, configError(path, stdioKey, "%s has a url: %s applies only to a stdio server (one with a command)", where, stdioKey.Value)
		}
		if !disabled {
			out = append(out, s)
		}
	}
	return out, nil
}

// parseApprove parses an entry's approve: one value for every tool, or a
// mapping of tool names ("*" for the others) to values.
func parseApprove(path string, n *yaml.Node, what string) (map[string]tools.Approval, error) {
	names := slices.Sorted(maps.Keys(approvals))
	one := func(n *yaml.Node, what string) (tools.Approval, error) {
		v, err := scalar(path, n, what)
		if err != nil {
			return "", err
		}
		a, ok := approvals[v]
		if !ok {
			return "", configError(path, n, "%s is %q: use %s", what, v, strings.Join(names, ", "))
		}
		return a, nil
	}
	if n.Kind == yaml.ScalarNode {
		a, err := one(n, what)
		return map[string]tools.Approval{"*": a}, err
	}
	pairs, err := mapping(path, n, what, nil)
	if err != nil {
		return nil, err
	}
	out := map[string]tools.Approval{}
	for _, p := range pairs {
		if out[p.key], err = one(p.v, what+"."+p.key); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// instructionsOptions returns the options of the session's instructions.
func (c *configFile) instructionsOptions() instructions.Options {
	ic := c.instructions
	o := instructions.Options{Names: ic.names, MaxFileBytes: int(ic.maxFile), MaxTotalBytes: int(ic.maxTotal), UserFile: ic.userFile}
	if o.UserFile == "" {
		if dir := defaultConfigDir(); dir != "" {
			o.UserFile = filepath.Join(dir, "AGENTS.md")
		}
	}
	o.UserLabel = o.UserFile
	if home, err := os.UserHomeDir(); err == nil {
		if rel, err := filepath.Rel(home, o.UserFile); err == nil && !strings.HasPrefix(rel, "..") {
			o.UserLabel = "~/" + filepath.ToSlash(rel)
		}
	}
	return o
}
