package autocommit

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// leftOut is what a commit leaves out, by path relative to the workspace.
type leftOut struct {
	secrets []string // files holding a secret
	repos   []string // repositories inside the workspace
	large   []string // new files over the limit
	// largeStates are the large files' staged objects, for noteNew.
	largeStates map[string]string
}

// staged is one staged change, from git diff --cached --raw.
type staged struct {
	oldMode, newMode string
	object           string // the new content's object name
	path             string // relative to the workspace
}

// review looks at the staged changes below the workspace and sorts out
// those that must not be committed: gitlinks that are not the user's
// submodules, files whose path, content or (for a symbolic link) target
// holds a secret, and new files over the size limit. It adds them to out
// and returns their paths, to be unstaged.
//
// Contents are searched by git grep and git cat-file, which read the
// secrets' forms and the object names on their standard input: the forms
// appear on no command line.
func (c *Committer) review(ctx context.Context, g git, out *leftOut) ([]string, error) {
	raw, err := g.run(ctx, append([]string{"diff", "--cached", "--raw", "-z", "--no-abbrev", "--no-renames", "--relative", "--diff-filter=d"}, pathspec...)...)
	if err != nil {
		return nil, err
	}
	changes, err := parseRaw(raw)
	if err != nil {
		return nil, fmt.Errorf("auto-commit in %s: %w; check the repository with git status", c.dir, err)
	}
	var left []string
	var links, files []staged
	for _, s := range changes {
		switch {
		case s.newMode == modeGitlink:
			if !c.submoduleUnchanged(s.path) {
				out.repos = append(out.repos, s.path)
				left = append(left, s.path)
			}
		case c.secrets.Contains([]byte(s.path)):
			out.secrets = append(out.secrets, s.path)
			left = append(left, s.path)
		case s.newMode == modeSymlink:
			links = append(links, s)
		case s.newMode == modeFile || s.newMode == modeExec:
			files = append(files, s)
		}
	}

	if len(links) > 0 && !c.secrets.Empty() {
		targets, err := g.objects(ctx, links, true)
		if err != nil {
			return nil, err
		}
		for i, s := range links {
			if c.secrets.Contains(targets[i]) {
				out.secrets = append(out.secrets, s.path)
				left = append(left, s.path)
			}
		}
	}

	if c.maxNew >= 0 {
		var added []staged
		for _, s := range files {
			if s.oldMode == modeNone {
				added = append(added, s)
			}
		}
		sizes, err := g.objects(ctx, added, false)
		if err != nil {
			return nil, err
		}
		out.largeStates = map[string]string{}
		for i, s := range added {
			if n, err := strconv.ParseInt(string(sizes[i]), 10, 64); err == nil && n > c.maxNew {
				out.large = append(out.large, s.path)
				out.largeStates[s.path] = s.object
				left = append(left, s.path)
			}
		}
		files = slices.DeleteFunc(files, func(s staged) bool { return slices.Contains(out.large, s.path) })
	}

	hits, err := c.grepSecrets(ctx, g, files)
	if err != nil {
		return nil, err
	}
	out.secrets = append(out.secrets, hits...)
	return append(left, hits...), nil
}

// grepSecrets returns the files whose staged content holds a secret. It
// searches with git grep, fed the secret's forms on its standard input.
func (c *Committer) grepSecrets(ctx context.Context, g git, files []staged) ([]string, error) {
	var forms []string
	for _, f := range c.secrets.Forms() {
		if !strings.ContainsAny(f, "\n\r") {
			forms = append(forms, f)
		}
	}
	if len(forms) == 0 || len(files) == 0 {
		return nil, nil
	}
	patterns := []byte(strings.Join(forms, "\n") + "\n")
	var hits []string
	for chunk := range slices.Chunk(files, 256) {
		// These paths hold no secret (review checked): they may go on
		// the command line.
		args := []string{"grep", "--cached", "-l", "-z", "-F", "--no-color", "-f", "-", "--"}
		for _, s := range chunk {
			args = append(args, ":(literal)"+s.path)
		}
		out, code, err := g.runInput(ctx, patterns, args...)
		if err != nil && code != 1 { // 1: no file matches
			return nil, err
		}
		hits = append(hits, splitNUL(out)...)
	}
	return hits, nil
}

// unstage takes the paths out of the index: back to what HEAD has, or out
// of it when there is no HEAD yet.
func unstage(ctx context.Context, g git, paths []string) error {
	if len(paths) == 0 {
		return nil
	}
	args := []string{"reset", "--quiet"}
	if _, code, err := g.runCode(ctx, "rev-parse", "--verify", "--quiet", "HEAD"); err != nil {
		if code != 1 {
			return err
		}
		args = []string{"rm", "--cached", "--quiet"} // no HEAD to reset to yet
	}
	_, err := g.runPaths(ctx, literal(paths), args...)
	return err
}

// parseRaw reads git diff --raw -z --no-renames output: for each change,
// ":<old mode> <new mode> <old object> <new object> <status>" then the
// path, each ended by a NUL.
func parseRaw(raw []byte) ([]staged, error) {
	fields := splitNUL(raw)
	if len(fields)%2 != 0 {
		return nil, fmt.Errorf("git diff --raw gave output it cannot read (%d fields)", len(fields))
	}
	changes := make([]staged, 0, len(fields)/2)
	for i := 0; i < len(fields); i += 2 {
		meta := strings.Fields(strings.TrimPrefix(fields[i], ":"))
		if !strings.HasPrefix(fields[i], ":") || len(meta) != 5 {
			return nil, fmt.Errorf("git diff --raw gave a line it cannot read (%q)", fields[i])
		}
		changes = append(changes, staged{oldMode: meta[0], newMode: meta[1], object: meta[3], path: fields[i+1]})
	}
	return changes, nil
}

// objects returns, for each of the staged changes, its new object's
// content (contents) or size in decimal (!contents), with git cat-file
// --batch or --batch-check fed the object names on its standard input.
func (g git) objects(ctx context.Context, changes []staged, contents bool) ([][]byte, error) {
	if len(changes) == 0 {
		return nil, nil
	}
	var in bytes.Buffer
	for _, s := range changes {
		in.WriteString(s.object + "\n")
	}
	mode := "--batch-check"
	if contents {
		mode = "--batch"
	}
	out, _, err := g.runInput(ctx, in.Bytes(), "cat-file", mode)
	if err != nil {
		return nil, err
	}
	results := make([][]byte, len(changes))
	for i, s := range changes {
		// "<object> <type> <size>\n", then with --batch the content and "\n".
		line, rest, ok := bytes.Cut(out, []byte{'\n'})
		f := strings.Fields(string(line))
		if !ok || len(f) != 3 || f[0] != s.object {
			return nil, fmt.Errorf("auto-commit in %s: git cat-file gave output it cannot read for %s (%q); check the repository with git fsck", g.dir, s.object, line)
		}
		out = rest
		if !contents {
			results[i] = []byte(f[2])
			continue
		}
		n, err := strconv.Atoi(f[2])
		if err != nil || n < 0 || n+1 > len(out) {
			return nil, fmt.Errorf("auto-commit in %s: git cat-file gave a size it cannot read for %s (%q); check the repository with git fsck", g.dir, s.object, line)
		}
		results[i], out = out[:n], out[n+1:]
	}
	return results, nil
}
