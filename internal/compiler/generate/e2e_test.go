package generate_test

import (
	"context"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/tools/txtar"

	"github.com/fsmgen/fsmgen/internal/compiler/generate"
)

// TestMain makes every go command the tests start, the go/packages loads
// of generate.Load included, work offline in modules that are not tidy
// and outside any workspace: the temporary modules require this checkout
// with its go.sum and no more (see requireCheckout). Set once for the test
// binary, rather than per test with t.Setenv, so that the tests run in
// parallel; TestGoTool gives the proxy back to the one command that needs
// it.
func TestMain(m *testing.M) {
	proxy = os.Getenv("GOPROXY")
	for k, v := range map[string]string{"GOFLAGS": "-mod=mod", "GOPROXY": "off", "GOWORK": "off"} {
		if err := os.Setenv(k, v); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
	}
	os.Exit(m.Run())
}

// proxy is the GOPROXY the tests were started with.
var proxy string

// tempGoFlags are the flags of the go commands that build in a temporary
// module: -mod=mod completes the go.mod that requireCheckout writes;
// -trimpath keys the build cache by the packages' contents and import
// paths rather than their directories, which are new at every run, so
// that a run compiles only what changed since the last one (the
// 600-state package of TestWideSpecBuilds: 250 s cold, 30 s warm). The
// price, the first time: the few modules they import (fsmgen's runtime,
// testify) are built once more, trimmed.
const tempGoFlags = "-mod=mod -trimpath"

// TestEndToEnd generates each golden spec (a traffic light, a TCP
// connection, hostile docs) into a package of one temporary module, with
// the archive's hand-written files, and runs go vet and go test there: the
// generated code must compile, vet clean, and pass its own generated
// tests. One go test builds and runs every golden's package (the go
// command's start, its module loading and the dependencies' cache checks
// once, not once a golden: about half the processor time;
// docs/performance.md); each golden's verdict is its package's.
// -run 'TestEndToEnd/NAME$' generates and tests that golden alone.
func TestEndToEnd(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds a temporary module")
	}
	archives, err := filepath.Glob("../emit/testdata/golden/*.txtar")
	require.NoError(t, err)
	require.GreaterOrEqual(t, len(archives), 2)
	dir := t.TempDir()
	const module = "example.com"
	requireCheckout(t, dir, module)
	want := map[string]goldenFiles{}
	for _, path := range archives {
		name := strings.TrimSuffix(filepath.Base(path), ".txtar")
		t.Run(name, func(t *testing.T) {
			pkgDir, files := goldenPackage(t, filepath.Join(dir, name), path)
			rel, err := filepath.Rel(dir, pkgDir)
			require.NoError(t, err)
			want[module+"/"+filepath.ToSlash(rel)] = files
		})
	}
	if len(want) == 0 {
		return // -run selected no golden
	}
	pkgs := slices.Sorted(maps.Keys(want))
	// Every vet check (go vet's, not go test's few), then the tests: one
	// go command, which vets and compiles at once. It fails when any
	// package does; each package's events say which.
	out, testErr := goRun(t, tempGoFlags, dir, append([]string{"test", "-json", "-vet=all", "-count=1", "-cover"}, pkgs...)...)
	results, stray := testResults(out)
	// No spec text became a build constraint or a directive: every file
	// stays in the build, nothing is ignored, embedded or generated (one
	// go list for every package, and go generate's own test for a
	// directive: a line that starts with it).
	listed := goIn(t, dir, append([]string{"list", "-f", "{{.ImportPath}} {{.Dir}} {{len .GoFiles}} {{len .TestGoFiles}}+{{len .XTestGoFiles}} {{len .IgnoredGoFiles}} {{len .EmbedPatterns}} {{len .TestEmbedPatterns}}"}, pkgs...)...)
	for line := range strings.Lines(listed) {
		var pkg, pkgDir string
		var code, internal, external, ignored, embeds, testEmbeds int
		_, err := fmt.Sscanf(line, "%s %s %d %d+%d %d %d %d", &pkg, &pkgDir, &code, &internal, &external, &ignored, &embeds, &testEmbeds)
		require.NoError(t, err, "go list: %s", line)
		assert.Equal(t, []int{want[pkg].code, want[pkg].tests, 0, 0, 0}, []int{code, internal + external, ignored, embeds, testEmbeds},
			"%s: go files, test files, ignored files, embed patterns", pkg)
		goFiles, err := filepath.Glob(filepath.Join(pkgDir, "*.go"))
		require.NoError(t, err)
		for _, f := range goFiles {
			b, err := os.ReadFile(f)
			require.NoError(t, err)
			assert.NotRegexp(t, `(?m)^//go:generate`, string(b), "%s: no go:generate line in generated files", f)
		}
	}
	failed := false
	for _, pkg := range pkgs {
		r := results[pkg]
		if !assert.True(t, r.passed, "%s: go vet and go test failed:\n%s%s", pkg, r.output, stray) {
			failed = true
			continue
		}
		assertCoverage(t, r.output, 90)
	}
	if testErr != nil && !failed {
		t.Errorf("go test failed, though every package passed: %v\n%s", testErr, stray)
	}
}

// goldenFiles counts a golden package's Go files: code, the generated
// file and the hand-written ones beside it; tests, the generated tests
// and the hand-written ones.
type goldenFiles struct{ code, tests int }

// goldenPackage writes the spec of golden archive path and the
// hand-written Go files beside it into folder dir, generates the spec
// there, and returns the generated package's folder and how many Go files
// and test files it should have: the golden outputs (named *_gen*) are
// generated afresh.
func goldenPackage(t *testing.T, dir, path string) (pkgDir string, want goldenFiles) {
	t.Helper()
	ar, err := txtar.ParseFile(path)
	require.NoError(t, err)
	handWritten := 0
	for _, f := range ar.Files {
		if f.Name != "spec.yaml" && (!strings.HasSuffix(f.Name, ".go") || strings.Contains(f.Name, "_gen")) {
			continue
		}
		switch {
		case strings.HasSuffix(f.Name, "_test.go"):
			want.tests++ // a test of the generated package's behaviour
		case f.Name != "spec.yaml":
			handWritten++
		}
		p := filepath.Join(dir, filepath.FromSlash(f.Name))
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, f.Data, 0o644))
	}
	res, err := generate.Load(filepath.Join(dir, "spec.yaml"))
	require.NoError(t, err)
	require.NotNil(t, res.Machine, "%s", res.Diags)
	wrote, err := generate.Write(res.Outputs)
	require.NoError(t, err)
	require.Len(t, wrote, len(res.Outputs))
	for _, o := range res.Outputs {
		switch {
		case strings.HasSuffix(o.Path, "_test.go"):
			want.tests++
		case strings.HasSuffix(o.Path, ".go"):
			pkgDir = filepath.Dir(o.Path)
		}
	}
	require.NotEmpty(t, pkgDir, "a generated Go file")
	want.code = 1 + handWritten
	return pkgDir, want
}

// assertCoverage checks that every package go test reported on covers at
// least min percent of its statements, and logs the figures.
func assertCoverage(t *testing.T, goTestOutput string, min float64) {
	t.Helper()
	re := regexp.MustCompile(`(?m)^ok\s+(\S+)\s.*coverage: ([0-9.]+)% of statements`)
	matches := re.FindAllStringSubmatch(goTestOutput, -1)
	require.NotEmpty(t, matches, "no coverage in:\n%s", goTestOutput)
	for _, m := range matches {
		pct, err := strconv.ParseFloat(m[2], 64)
		require.NoError(t, err)
		t.Logf("%s: %.1f%% of statements covered by its generated tests", m[1], pct)
		assert.GreaterOrEqual(t, pct, min, "%s: statement coverage", m[1])
	}
}

// TestGeneratedCoverage measures the statement coverage of the generated
// agent package by the package's own (generated) tests: at least 90%.
func TestGeneratedCoverage(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("runs go test")
	}
	// In the checkout, whose packages the build cache knows by their
	// directory: no -trimpath, which would build them all again.
	assertCoverage(t, goWith(t, "-mod=mod", repoRoot(t), "test", "-count=1", "-cover", "./gen/..."), 90)
}

// repoRoot returns the root of this repository's checkout: three folders
// up from this file, as the compiler saw it. The test binary need not run
// in its package's folder (bench/run.sh runs it from bench/ and keeps it in
// bench/out); where the build trimmed the paths (-trimpath), the working
// directory stands in, as go test sets it.
func repoRoot(t testing.TB) string {
	t.Helper()
	root, err := filepath.Abs("../../..")
	require.NoError(t, err)
	if _, file, _, ok := runtime.Caller(0); ok && filepath.IsAbs(file) {
		root = filepath.Join(filepath.Dir(file), "..", "..", "..")
	}
	_, err = os.Stat(filepath.Join(root, "go.mod"))
	require.NoError(t, err, "the repository's root (run the test binary in internal/compiler/generate, as go test does)")
	return root
}

// runReplaceRecipe runs, in module dir, the README's sh block that makes a
// checkout of fsmgen at ~/src/fsmgen stand in for a published version,
// with HOME a directory whose src/fsmgen links to the checkout at root.
// The go command's caches and settings stay those of the test's user.
func runReplaceRecipe(t *testing.T, root, dir string) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(root, "README.md"))
	require.NoError(t, err)
	var recipe string
	for _, b := range codeBlocks(readmeSection(t, string(data), readmeExample)) {
		if b.lang == "sh" && strings.Contains(b.body, "-replace") {
			recipe = b.body
		}
	}
	require.NotEmpty(t, recipe, "the README shows how to use a checkout through a replace")
	home := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(home, "src"), 0o755))
	require.NoError(t, os.Symlink(root, filepath.Join(home, "src", "fsmgen")))
	env := os.Environ()
	for _, v := range []string{"GOPATH", "GOMODCACHE", "GOCACHE", "GOENV"} {
		out, err := exec.Command("go", "env", v).Output()
		require.NoError(t, err)
		env = append(env, v+"="+strings.TrimSpace(string(out)))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "sh", "-e", "-x", "-c", recipe)
	cmd.Dir = dir
	cmd.Env = append(env, "HOME="+home, "GOWORK=off")
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "the README's replace recipe:\n%s", out)
}

// requireCheckout makes dir the module path, requiring this repository's
// module through a replace, with the repository's go.sum: generated code,
// which imports fsmgen's runtime, and specs importing the repository's
// packages (chat) then build there offline.
func requireCheckout(t testing.TB, dir, path string) {
	t.Helper()
	root := repoRoot(t)
	gosum, err := os.ReadFile(filepath.Join(root, "go.sum"))
	require.NoError(t, err)
	testify := requiredVersion(t, filepath.Join(root, "go.mod"), "github.com/stretchr/testify")
	gomod := "module " + path + "\n\ngo 1.26\n\nrequire (\n\tgithub.com/fsmgen/fsmgen v0.0.0\n\tgithub.com/stretchr/testify " + testify + "\n)\n\nreplace github.com/fsmgen/fsmgen => " + root + "\n"
	require.NoError(t, os.WriteFile(filepath.Join(dir, "go.mod"), []byte(gomod), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "go.sum"), gosum, 0o644))
}

// tempModule returns a new module in a temporary directory that requires
// this repository's module (see requireCheckout).
func tempModule(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	// The module is not tidy (its go.mod lists no indirect requirements):
	// the go command that loads the spec's imports completes it, offline
	// (see TestMain).
	requireCheckout(t, dir, "example.com/m")
	return dir
}

// generateIn writes spec src into module dir as dir/name/name.yaml,
// generates it there (package name) and adds files, each path relative
// to dir (a hand-written test beside the generated ones, a main under
// cmd/).
func generateIn(t *testing.T, dir, name string, src []byte, files map[string]string) {
	t.Helper()
	spec := filepath.Join(dir, name, name+".yaml")
	require.NoError(t, os.MkdirAll(filepath.Dir(spec), 0o755))
	require.NoError(t, os.WriteFile(spec, src, 0o644))
	res, err := generate.Load(spec)
	require.NoError(t, err)
	require.NotNil(t, res.Machine, "%s", res.Diags)
	_, err = generate.Write(res.Outputs)
	require.NoError(t, err)
	for rel, content := range files {
		path := filepath.Join(dir, filepath.FromSlash(rel))
		require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
		require.NoError(t, os.WriteFile(path, []byte(content), 0o644))
	}
}

// chartSpec reads the spec of chart name of the export's differential
// test (internal/compiler/export/testdata/charts).
func chartSpec(t *testing.T, name string) []byte {
	t.Helper()
	src, err := os.ReadFile(filepath.Join("..", "export", "testdata", "charts", name, name+".yaml"))
	require.NoError(t, err)
	return src
}

// goIn runs the go command in a temporary module dir (GOFLAGS
// tempGoFlags), offline, and returns its output; it
// fails the test when the command fails. Offline, the checksum database
// cannot be asked either: a module the temporary module selects at
// another version than this repository's go.sum lists (a test dependency
// of a dependency, which graph pruning resolves differently there) is
// taken from the module cache as the go command verified it when it was
// downloaded, or is missing, which go mod tidy -e tolerates.
func goIn(t *testing.T, dir string, args ...string) string {
	t.Helper()
	return goWith(t, tempGoFlags, dir, args...)
}

// goWith is goIn with GOFLAGS flags.
func goWith(t *testing.T, flags, dir string, args ...string) string {
	t.Helper()
	out, err := goRun(t, flags, dir, args...)
	require.NoError(t, err, "go %s in %s:\n%s", strings.Join(args, " "), dir, out)
	return out
}

// goRun runs the go command as goWith does and returns its output and
// error, for the caller to judge.
func goRun(t *testing.T, flags, dir string, args ...string) (string, error) {
	t.Helper()
	cmd := exec.CommandContext(goContext(t), "go", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOFLAGS="+flags, "GOPROXY=off", "GOWORK=off", "GOSUMDB=off")
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// goContext bounds the go commands a test runs by the test's own deadline
// (go test's -timeout), less a margin to report what they printed, and by
// nothing else: on a loaded machine they take what they take (a cold
// build of TestWideSpecBuilds's package took four minutes of a five-minute
// bound once).
func goContext(t *testing.T) context.Context {
	ctx := t.Context()
	if deadline, ok := t.Deadline(); ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithDeadline(ctx, deadline.Add(-30*time.Second))
		t.Cleanup(cancel)
	}
	return ctx
}

// requiredVersion returns the version go.mod requires of module.
func requiredVersion(t testing.TB, gomod, module string) string {
	data, err := os.ReadFile(gomod)
	require.NoError(t, err)
	for _, line := range strings.Split(string(data), "\n") {
		fields := strings.Fields(line)
		if len(fields) >= 2 && fields[0] == module {
			return fields[1]
		}
	}
	t.Fatalf("%s does not require %s", gomod, module)
	return ""
}

// TestGoTool uses fsmgen from another module as the README says, from a
// checkout and offline: the README's lines that make the checkout (at
// ~/src/fsmgen, here a link to this one) stand in for a published version
// through a local replace and go get -tool it, run by sh as written; then
// a go:generate line running go tool fsmgen, go generate, go mod tidy -e,
// go vet and go test there.
func TestGoTool(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds a temporary module")
	}
	root := repoRoot(t)
	// The module cache must hold the go.mod of every module in the graph
	// for go get to work offline below; fetch what is missing (the go
	// command's own proxy settings, as for the project's dependencies).
	cmd := exec.Command("go", "mod", "download")
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "GOPROXY="+proxy)
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "go mod download:\n%s", out)

	dir := t.TempDir()
	goIn(t, dir, "mod", "init", "example.com/orders")
	runReplaceRecipe(t, root, dir)

	ar, err := txtar.ParseFile("../emit/testdata/golden/flow.txtar")
	require.NoError(t, err)
	for _, f := range ar.Files {
		if f.Name == "spec.yaml" {
			require.NoError(t, os.WriteFile(filepath.Join(dir, "orders.yaml"), f.Data, 0o644))
		}
	}
	require.NoError(t, os.WriteFile(filepath.Join(dir, "generate.go"), []byte("package order\n\n//go:generate go tool fsmgen generate orders.yaml\n"), 0o644))
	goIn(t, dir, "generate", "./...")
	require.FileExists(t, filepath.Join(dir, "order_gen.go"))
	// The generated code imports fsmgen's runtime, and its tests the
	// runtime's test drivers: go mod tidy records what they need.
	goIn(t, dir, "mod", "tidy", "-e") // -e: offline, the tests of dependencies' dependencies may be missing
	goIn(t, dir, "tool", "fsmgen", "check", "orders.yaml")
	goIn(t, dir, "vet", "./...")
	assertCoverage(t, goIn(t, dir, "test", "-count=1", "-cover", "./..."), 90)
}
