package autocommit

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
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

// review looks at the changes staged against the commit base below the workspace and sorts out
// those that must not be committed: gitlinks that are not the user's
// submodules, files whose path, content or (for a symbolic link) target
// holds a secret, and new files over the size limit. It adds them to out
// and returns their paths, to be unstaged.
//
// Contents are read with git cat-file, fed the object names on its
// standard input, and searched by the redactor in the agent: the secrets'
// forms appear on no command line and in no file.
func (c *Committer) review(ctx context.Context, g git, base string, out *leftOut) ([]string, error) {
	raw, err := g.run(ctx, append([]string{"diff", "--cached", "--raw", "-z", "--no-abbrev", "--no-renames", "--relative", "--diff-filter=d", base}, pathspec...)...)
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

	if c.maxNew >= 0 {
		var added []staged
		for _, s := range files {
			if s.oldMode == modeNone {
				added = append(added, s)
			}
		}
		sizes, err := g.sizes(ctx, added)
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

	hits, err := c.scanSecrets(ctx, g, slices.Concat(links, files))
	if err != nil {
		return nil, err
	}
	out.secrets = append(out.secrets, hits...)
	return append(left, hits...), nil
}

// scanSecrets returns the paths of the changes whose staged content (a
// file's, or a symbolic link's target) holds a secret, raw or in any form
// the redactor knows, whitespace-broken encodings and pieces of a key
// included. The contents are streamed from git cat-file --batch, which
// reads the object names on its standard input, one at a time, through
// the redactor: memory stays small whatever their size.
func (c *Committer) scanSecrets(ctx context.Context, g git, changes []staged) ([]string, error) {
	if c.secrets.Empty() || len(changes) == 0 {
		return nil, nil
	}
	var in bytes.Buffer
	for _, s := range changes {
		in.WriteString(s.object + "\n")
	}
	var hits []string
	err := g.runStream(ctx, in.Bytes(), func(out io.Reader) error {
		br := bufio.NewReaderSize(out, 64<<10)
		for _, s := range changes {
			// "<object> <type> <size>\n", the content, "\n".
			line, err := br.ReadString('\n')
			f := strings.Fields(line)
			if err != nil || len(f) != 3 || f[0] != s.object {
				return fmt.Errorf("auto-commit in %s: git cat-file gave output it cannot read for %s (%q); check the repository with git fsck", g.dir, s.object, line)
			}
			n, err := strconv.ParseInt(f[2], 10, 64)
			if err != nil || n < 0 {
				return fmt.Errorf("auto-commit in %s: git cat-file gave a size it cannot read for %s (%q); check the repository with git fsck", g.dir, s.object, line)
			}
			content := io.LimitReader(br, n)
			found, err := c.secrets.ContainsReader(content)
			if err != nil {
				return fmt.Errorf("auto-commit in %s: read %s from git cat-file: %w", g.dir, s.object, err)
			}
			if found {
				hits = append(hits, s.path)
			}
			if _, err := io.Copy(io.Discard, content); err != nil {
				return fmt.Errorf("auto-commit in %s: read %s from git cat-file: %w", g.dir, s.object, err)
			}
			if b, err := br.ReadByte(); err != nil || b != '\n' {
				return fmt.Errorf("auto-commit in %s: git cat-file's output for %s ends unexpectedly; check the repository with git fsck", g.dir, s.object)
			}
		}
		return nil
	}, "cat-file", "--batch")
	return hits, err
}

// unstage takes the paths out of the index: back to what the commit
// parent has, or out of it when there is none.
func unstage(ctx context.Context, g git, parent string, paths []string) error {
	if len(paths) == 0 {
		return nil
	}
	args := []string{"reset", "--quiet", parent}
	if parent == "" {
		args = []string{"rm", "--cached", "--quiet"} // no commit to reset to
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

// sizes returns, for each of the staged changes, its new object's size
// in decimal, with git cat-file --batch-check fed the object names on its
// standard input.
func (g git) sizes(ctx context.Context, changes []staged) ([][]byte, error) {
	if len(changes) == 0 {
		return nil, nil
	}
	var in bytes.Buffer
	for _, s := range changes {
		in.WriteString(s.object + "\n")
	}
	out, _, err := g.runInput(ctx, in.Bytes(), "cat-file", "--batch-check")
	if err != nil {
		return nil, err
	}
	results := make([][]byte, len(changes))
	for i, s := range changes {
		// "<object> <type> <size>\n"
		line, rest, ok := bytes.Cut(out, []byte{'\n'})
		f := strings.Fields(string(line))
		if !ok || len(f) != 3 || f[0] != s.object {
			return nil, fmt.Errorf("auto-commit in %s: git cat-file gave output it cannot read for %s (%q); check the repository with git fsck", g.dir, s.object, line)
		}
		out = rest
		results[i] = []byte(f[2])
	}
	return results, nil
}
