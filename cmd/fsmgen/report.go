package main

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"runtime/debug"
	"slices"
	"strings"

	"github.com/fsmgen/fsmgen/internal/compiler/diag"
	"github.com/fsmgen/fsmgen/internal/compiler/generate"
)

// report runs generate or check for -format json and sarif: it collects
// the specs' diagnostics and, when they pass, writes the outputs or finds
// the stale ones, then prints one document with every finding on stdout.
// A failure that is not a spec's problem is in the document and returned.
func report(check bool, o options, paths []string, stdout, stderr io.Writer) error {
	findings, failed, err := collect(check, o.werror, paths, stderr)
	findings.Sort()
	var werr error
	switch o.format {
	case formatJSON:
		werr = writeJSON(stdout, findings, err)
	case formatSARIF:
		werr = writeSARIF(stdout, findings, err)
	}
	switch {
	case err != nil:
		return err
	case werr != nil:
		return fmt.Errorf("write the %s report: %w", o.format, werr)
	case failed:
		return errReported
	}
	return nil
}

// collect loads the specs and returns their diagnostics (warnings as
// errors with werror) and whether they fail the run. When no spec fails,
// it writes the outputs (generate, reporting each written file on stderr)
// or adds a stale-output finding for each output that is not up to date
// (check), which fails the run too.
func collect(check, werror bool, paths []string, stderr io.Writer) (diag.List, bool, error) {
	results, err := generate.LoadAll(paths)
	if err != nil {
		return nil, false, err
	}
	var findings diag.List
	failed := false
	for _, r := range results {
		for _, d := range r.Diags {
			if werror {
				d.Severity = diag.Error
			}
			findings = append(findings, d)
		}
		if r.Machine == nil || werror && len(r.Diags) > 0 {
			failed = true
		}
	}
	if failed {
		return findings, true, nil
	}
	if !check {
		return findings, false, writeOutputs(results, stderr)
	}
	for _, r := range results {
		stale, err := generate.Check(r.Outputs)
		if err != nil {
			return findings, false, err
		}
		for _, s := range stale {
			staleFinding(&findings, r.Spec, s)
			failed = true
		}
	}
	return findings, failed, nil
}

// staleFinding adds the finding for a generated file of spec that is not
// up to date, or missing, at the file.
func staleFinding(l *diag.List, spec string, s generate.Stale) {
	if s.Missing {
		l.Errorf(diag.Pos{File: s.Path}, "generated file is missing: spec %s generates it; run fsmgen generate %s", spec, spec)
		return
	}
	l.Errorf(diag.Pos{File: s.Path}, "generated file is stale: it differs from what spec %s generates; run fsmgen generate %s", spec, spec)
}

// ruleOf returns d's rule id, classifying its message when it was made
// without Errorf or Warnf.
func ruleOf(d diag.Diagnostic) string {
	if d.Rule != "" {
		return d.Rule
	}
	return diag.Classify(d.Msg)
}

// jsonReport is the document of -format json.
type jsonReport struct {
	Diagnostics []jsonDiagnostic `json:"diagnostics"`
	Error       string           `json:"error,omitempty"`
}

// jsonDiagnostic is one finding of -format json.
type jsonDiagnostic struct {
	File     string   `json:"file"`
	Line     int      `json:"line"`
	Column   int      `json:"column"`
	Severity string   `json:"severity"`
	Rule     string   `json:"rule"`
	Message  string   `json:"message"`
	Notes    []string `json:"notes"`
}

// writeJSON prints findings, and the failure that stopped fsmgen if any,
// as the -format json document.
func writeJSON(w io.Writer, findings diag.List, failure error) error {
	doc := jsonReport{Diagnostics: []jsonDiagnostic{}}
	if failure != nil {
		doc.Error = failure.Error()
	}
	for _, d := range findings {
		doc.Diagnostics = append(doc.Diagnostics, jsonDiagnostic{
			File:     d.Pos.File,
			Line:     d.Pos.Line,
			Column:   d.Pos.Col,
			Severity: d.Severity.String(),
			Rule:     ruleOf(d),
			Message:  d.Msg,
			Notes:    append([]string{}, d.Notes...),
		})
	}
	return encode(w, doc)
}

// encode prints v as indented JSON, leaving <, > and & as they are.
func encode(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

// The fixed parts of fsmgen's SARIF log.
const (
	sarifSchema      = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
	sarifVersion     = "2.1.0"
	modulePath       = "github.com/fsmgen/fsmgen"
	informationURI   = "https://" + modulePath
	srcRoot          = "%SRCROOT%"
	fingerprintKey   = "fsmgen/v1"
	columnKindPoints = "unicodeCodePoints"
)

// The SARIF 2.1.0 objects fsmgen writes, with only the properties it uses.
type (
	sarifLog struct {
		Schema  string     `json:"$schema"`
		Version string     `json:"version"`
		Runs    []sarifRun `json:"runs"`
	}
	sarifRun struct {
		Tool        sarifTool         `json:"tool"`
		Invocations []sarifInvocation `json:"invocations"`
		ColumnKind  string            `json:"columnKind"`
		Results     []sarifResult     `json:"results"`
	}
	sarifTool struct {
		Driver sarifDriver `json:"driver"`
	}
	sarifDriver struct {
		Name            string      `json:"name"`
		InformationURI  string      `json:"informationUri"`
		Version         string      `json:"version,omitempty"`
		SemanticVersion string      `json:"semanticVersion,omitempty"`
		Rules           []sarifRule `json:"rules"`
	}
	sarifRule struct {
		ID                   string        `json:"id"`
		ShortDescription     sarifText     `json:"shortDescription"`
		FullDescription      sarifText     `json:"fullDescription"`
		Help                 sarifText     `json:"help"`
		DefaultConfiguration sarifSettings `json:"defaultConfiguration"`
	}
	sarifSettings struct {
		Level string `json:"level"`
	}
	sarifText struct {
		Text     string `json:"text"`
		Markdown string `json:"markdown,omitempty"`
	}
	sarifInvocation struct {
		ExecutionSuccessful        bool                `json:"executionSuccessful"`
		ToolExecutionNotifications []sarifNotification `json:"toolExecutionNotifications,omitempty"`
	}
	sarifNotification struct {
		Level   string    `json:"level"`
		Message sarifText `json:"message"`
	}
	sarifResult struct {
		RuleID              string            `json:"ruleId"`
		RuleIndex           int               `json:"ruleIndex"`
		Level               string            `json:"level"`
		Message             sarifText         `json:"message"`
		Locations           []sarifLocation   `json:"locations"`
		PartialFingerprints map[string]string `json:"partialFingerprints"`
		Properties          *sarifProperties  `json:"properties,omitempty"`
	}
	sarifProperties struct {
		Notes []string `json:"notes"`
	}
	sarifLocation struct {
		PhysicalLocation sarifPhysical `json:"physicalLocation"`
	}
	sarifPhysical struct {
		ArtifactLocation sarifArtifact `json:"artifactLocation"`
		Region           *sarifRegion  `json:"region,omitempty"`
	}
	sarifArtifact struct {
		URI       string `json:"uri"`
		URIBaseID string `json:"uriBaseId,omitempty"`
	}
	sarifRegion struct {
		StartLine   int `json:"startLine"`
		StartColumn int `json:"startColumn,omitempty"`
	}
)

// writeSARIF prints findings, and the failure that stopped fsmgen if any,
// as a SARIF 2.1.0 log of one run.
func writeSARIF(w io.Writer, findings diag.List, failure error) error {
	cwd, err := os.Getwd()
	if err != nil {
		return fmt.Errorf("find the current directory, which SARIF paths are relative to: %w", err)
	}
	version, semantic := toolVersion()
	run := sarifRun{
		Tool: sarifTool{Driver: sarifDriver{
			Name:            "fsmgen",
			InformationURI:  informationURI,
			Version:         version,
			SemanticVersion: semantic,
			Rules:           []sarifRule{},
		}},
		Invocations: []sarifInvocation{{ExecutionSuccessful: failure == nil}},
		ColumnKind:  columnKindPoints,
		Results:     []sarifResult{},
	}
	if failure != nil {
		run.Invocations[0].ToolExecutionNotifications = []sarifNotification{{Level: "error", Message: sarifText{Text: failure.Error()}}}
	}

	var ids []string
	for _, d := range findings {
		ids = append(ids, ruleOf(d))
	}
	slices.Sort(ids)
	ids = slices.Compact(ids)
	for _, id := range ids {
		r, ok := diag.RuleByID(id)
		if !ok {
			r, _ = diag.RuleByID(diag.Unclassified)
			r.ID = id
		}
		run.Tool.Driver.Rules = append(run.Tool.Driver.Rules, sarifRule{
			ID:                   r.ID,
			ShortDescription:     sarifText{Text: r.Short},
			FullDescription:      sarifText{Text: r.Full},
			Help:                 sarifText{Text: r.Help},
			DefaultConfiguration: sarifSettings{Level: r.Level.String()},
		})
	}

	seen := map[string]int{}
	for _, d := range findings {
		id := ruleOf(d)
		uri, base := artifactURI(d.Pos.File, cwd)
		sum := sha256.Sum256([]byte(id + "\x00" + uri + "\x00" + d.Msg))
		fp := hex.EncodeToString(sum[:])
		seen[fp]++
		res := sarifResult{
			RuleID:              id,
			RuleIndex:           slices.Index(ids, id),
			Level:               d.Severity.String(),
			Message:             resultMessage(d),
			PartialFingerprints: map[string]string{fingerprintKey: fmt.Sprintf("%s:%d", fp, seen[fp])},
			Locations: []sarifLocation{{PhysicalLocation: sarifPhysical{
				ArtifactLocation: sarifArtifact{URI: uri, URIBaseID: base},
			}}},
		}
		// GitHub code scanning places a result by its region's startLine
		// and needs one: a problem of the whole file is put on its first
		// line.
		region := &sarifRegion{StartLine: d.Pos.Line, StartColumn: d.Pos.Col}
		if d.Pos.Line <= 0 {
			region = &sarifRegion{StartLine: 1}
		}
		res.Locations[0].PhysicalLocation.Region = region
		if len(d.Notes) > 0 {
			res.Properties = &sarifProperties{Notes: d.Notes}
		}
		run.Results = append(run.Results, res)
	}
	return encode(w, sarifLog{Schema: sarifSchema, Version: sarifVersion, Runs: []sarifRun{run}})
}

// resultMessage is a result's message: the diagnostic's, then a line
// "note: ..." for each note; with notes, also as Markdown with the notes
// as a list.
func resultMessage(d diag.Diagnostic) sarifText {
	if len(d.Notes) == 0 {
		return sarifText{Text: d.Msg}
	}
	text := []string{d.Msg}
	md := []string{markdownEscape(d.Msg), ""}
	for _, n := range d.Notes {
		text = append(text, "note: "+n)
		md = append(md, "- "+markdownEscape(n))
	}
	return sarifText{Text: strings.Join(text, "\n"), Markdown: strings.Join(md, "\n")}
}

// markdownPunct are the characters that can start Markdown syntax.
var markdownPunct = regexp.MustCompile("[\\\\`*_{}\\[\\]()#+\\-.!|<>~]")

// markdownEscape makes s plain text in Markdown, line breaks included.
func markdownEscape(s string) string {
	s = markdownPunct.ReplaceAllString(s, `\$0`)
	return strings.ReplaceAll(s, "\n", "  \n")
}

// artifactURI returns path as SARIF wants it: relative to cwd, with
// forward slashes, and the %SRCROOT% base; or, when it is outside cwd, an
// absolute file: URI and no base.
func artifactURI(path, cwd string) (uri, base string) {
	abs := path
	if !filepath.IsAbs(abs) {
		abs = filepath.Join(cwd, path)
	}
	if rel, err := filepath.Rel(cwd, abs); err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return (&url.URL{Path: filepath.ToSlash(rel)}).String(), srcRoot
	}
	abs = filepath.ToSlash(abs)
	if !strings.HasPrefix(abs, "/") {
		abs = "/" + abs // a Windows drive: file:///C:/...
	}
	return (&url.URL{Scheme: "file", Path: abs}).String(), ""
}

// semverRE matches a Go module version that is a semantic version.
var semverRE = regexp.MustCompile(`^v(\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?(\+[0-9A-Za-z.-]+)?)$`)

// toolVersion returns the version of the fsmgen module this binary was
// built from, and the same as a semantic version (without the "v"), or ""
// for a build from a work tree, which has none.
func toolVersion() (version, semantic string) {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "", ""
	}
	mod := &bi.Main
	if mod.Path != modulePath {
		i := slices.IndexFunc(bi.Deps, func(m *debug.Module) bool { return m.Path == modulePath })
		if i < 0 {
			return "", ""
		}
		mod = bi.Deps[i]
	}
	if mod.Version == "" || mod.Version == "(devel)" {
		return "", ""
	}
	if m := semverRE.FindStringSubmatch(mod.Version); m != nil {
		return mod.Version, m[1]
	}
	return mod.Version, ""
}
