package web_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
	_ "time/tzdata" // the cron monitor's zone, whatever the host has

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"github.com/fsmgen/fsmgen/agent/chat"
	"github.com/fsmgen/fsmgen/internal/threadwire"
	"github.com/fsmgen/fsmgen/server/internal/api"
	"github.com/fsmgen/fsmgen/server/internal/apikey"
	jobsengine "github.com/fsmgen/fsmgen/server/internal/jobengine"
	"github.com/fsmgen/fsmgen/server/internal/monitorengine"
	"github.com/fsmgen/fsmgen/server/internal/store/sqlite"
	"github.com/fsmgen/fsmgen/server/internal/web"
	"github.com/fsmgen/fsmgen/server/jobs"
	"github.com/fsmgen/fsmgen/server/monitors"
)

// TestPage drives the page in a headless Chromium against the real server
// stack (SQLite, the engine running on the real clock, the API): signing
// in, the monitors and their health, changes of health that arrive by the
// event stream, a monitor's check-ins and next runs, a monitor renamed
// and deleted (no row left under its old slug), the stream's
// reconnection, the background jobs beside the monitors (a run asked for
// from the page, its failure shown), the agent's synced threads, escaping of the server's text, and a
// refused token.
func TestPage(t *testing.T) {
	if testing.Short() {
		t.Skip("drives a browser: skipped with -short")
	}
	chromium := findChromium(t)
	s := startServer(t)
	b := startBrowser(t, chromium)

	// Sign in.
	b.do("open the page", chromedp.Navigate(s.url+"/"))
	b.do("see the sign-in form", chromedp.WaitVisible(chromedp.CSS("#login")))
	b.do("enter the token", chromedp.SendKeys(chromedp.CSS("#token"), s.token))
	b.do("submit the token", chromedp.Click(chromedp.CSS(`#login button[type="submit"]`)))
	b.wait("the monitors' table, live", `!document.querySelector("#app").hidden && document.querySelector("#live").dataset.state === "live"`)
	b.equal("the stored token", `localStorage.getItem("fsmgen.token")`, s.token)
	// Record each health each row shows, and the stream's states, as they
	// change: a state may last less than a poll.
	b.eval(`window.notReloaded = true; window.seen = {};
		const record = () => {
			const add = (k, v) => { const a = (seen[k] ||= []); if (v && a[a.length - 1] !== v) a.push(v); };
			for (const tr of document.querySelectorAll("#monitors tbody tr[data-slug]")) add(tr.dataset.slug, tr.querySelector(".health .badge")?.textContent);
			add("#live", document.querySelector("#live").dataset.state);
		};
		new MutationObserver(record).observe(document.body, {subtree: true, childList: true, characterData: true, attributes: true});
		record();`)

	// Monitors created now arrive by the stream.
	beat := s.create(`{"slug": "beat", "name": "Heartbeat", "schedule": {"type": "interval", "seconds": 2}, "checkin_margin_seconds": 1}`)
	nightly := s.create(`{"slug": "nightly", "name": "Nightly backup", "schedule": {"type": "cron", "expression": "30 2 * * *"}, "timezone": "Europe/Berlin"}`)
	const evil = `<img src=x onerror=alert(1)>`
	s.create(`{"slug": "xss", "name": "<img src=x onerror=alert(1)>", "schedule": {"type": "interval", "seconds": 3600}}`)
	b.wait("three monitors listed", `document.querySelectorAll("#monitors tbody tr").length === 3`)
	b.equal("the rows, by slug", `[...document.querySelectorAll("#monitors tbody tr")].map(r => r.dataset.slug)`, []string{"beat", "nightly", "xss"})
	row := func(slug, sel string) string {
		return fmt.Sprintf(`document.querySelector('#monitors tr[data-slug=%q] %s')`, slug, sel)
	}
	b.equal("the cron monitor's name", row("nightly", "button.name")+".textContent", "Nightly backup")
	b.equal("the cron monitor's health", row("nightly", ".health .badge")+".textContent", "unknown")
	b.equal("the cron monitor's status", row("nightly", ".status")+".textContent", "active")
	b.equal("the cron monitor's schedule", row("nightly", ".schedule")+".textContent", "30 2 * * * (Europe/Berlin)")
	b.equal("the cron monitor's next run", row("nightly", ".next time")+".dateTime", nightly.NextExpectedAt.Format(time.RFC3339))
	b.wait("the cron monitor's next run, relative", row("nightly", ".next .rel")+`.textContent.startsWith("in ")`)
	b.equal("the cron monitor's last check-in", row("nightly", ".last")+".textContent", "never")
	b.equal("the cron monitor's failures", row("nightly", ".failures")+".textContent", "0")
	b.equal("the cron monitor's ping URL", row("nightly", ".ping code")+".textContent", s.url+"/ping/"+nightly.PingKey)
	b.equal("the interval monitor's schedule", row("beat", ".schedule")+".textContent", "every 2 s")
	b.do("copy a ping URL", chromedp.Click(chromedp.CSS(`#monitors tr[data-slug="nightly"] button.copy`)))
	b.wait("the copy button's answer", row("nightly", "button.copy")+`.textContent !== "Copy"`)

	// The server's text is text.
	b.equal("the monitor named with markup", row("xss", "button.name")+".textContent", evil)
	b.equal("images in the page", `document.querySelectorAll("img").length`, 0)

	// The interval monitor misses its run: the stream says so.
	b.wait("the interval monitor missed", row("beat", ".health .badge")+`.textContent === "missed"`)
	var before []string
	b.get("the interval monitor's healths", `seen.beat`, &before)
	if before[0] == "missed" || !slices.Contains(before, "missed") {
		t.Fatalf("the interval monitor showed the healths %q, want it to be missed after it was listed", before)
	}
	s.ping(beat.PingKey)
	b.wait("the interval monitor healthy after a ping", fmt.Sprintf(`seen.beat.slice(%d).includes("healthy")`, len(before)))
	b.wait("the interval monitor's last check-in", `/ ago$|^now$/.test(`+row("beat", ".last .rel")+`?.textContent)`)

	// Its check-ins and next runs.
	b.do("open the interval monitor", chromedp.Click(chromedp.CSS(`#monitors tr[data-slug="beat"] button.name`)))
	b.wait("its detail", `!document.querySelector("#detail").hidden && document.querySelector("#detail-name").textContent === "Heartbeat"`)
	b.wait("its missed check-in, with the run's time", `[...document.querySelectorAll('#checkins tbody tr[data-status="missed"]')].some(r => r.querySelector(".expected time") && r.textContent.includes("system"))`)
	b.wait("its ping", `[...document.querySelectorAll('#checkins tbody tr[data-status="ok"]')].some(r => r.textContent.includes("ping"))`)
	b.wait("its next five runs", `document.querySelectorAll("#next-runs li time").length === 5`)
	// A check-in arrives while it is open: the list follows, as text.
	const output = `<script>alert(2)</script><img src=x onerror=alert(3)> & done`
	s.call("POST", "/api/crons/monitors/beat/checkins", `{"status": "error", "exit_code": 3, "output": `+jsonString(output)+`}`, http.StatusAccepted, nil)
	b.wait("the check-in posted, in the open list", fmt.Sprintf(`[...document.querySelectorAll('#checkins tbody tr[data-status="error"] pre')].some(p => p.textContent === %s)`, jsonString(output)))
	b.wait("the failure counted", row("beat", ".failures")+`.textContent !== "0"`)

	// The cron monitor's next runs are the schedule's.
	var preview struct{ Runs []string }
	s.call("GET", "/api/crons/preview?"+url.Values{"schedule": {"30 2 * * *"}, "timezone": {"Europe/Berlin"}, "count": {"5"}}.Encode(), "", http.StatusOK, &preview)
	b.do("open the cron monitor", chromedp.Click(chromedp.CSS(`#monitors tr[data-slug="nightly"] td.schedule`)))
	b.wait("its detail", `document.querySelector("#detail-name").textContent === "Nightly backup" && document.querySelectorAll("#next-runs li time").length === 5`)
	b.equal("its next runs", `[...document.querySelectorAll("#next-runs time")].map(t => t.dateTime)`, preview.Runs)
	b.wait("no check-ins yet", `!document.querySelector("#no-checkins").hidden`)

	b.do("open the monitor named with markup", chromedp.Click(chromedp.CSS(`#monitors tr[data-slug="xss"] button.name`)))
	b.wait("its name, as text", fmt.Sprintf(`document.querySelector("#detail-name").textContent === %s`, jsonString(evil)))
	b.equal("images in the page", `document.querySelectorAll("img").length`, 0)

	// The open monitor is renamed, then deleted: its row, and the
	// detail, follow; no row of the old slug is left.
	s.call("PATCH", "/api/crons/monitors/xss", `{"slug": "markup"}`, http.StatusOK, nil)
	b.wait("the renamed monitor's row", `document.querySelector('#monitors tr[data-slug="markup"]') !== null`)
	b.wait("no row of its old slug", `document.querySelector('#monitors tr[data-slug="xss"]') === null`)
	b.equal("the rows, by slug", `[...document.querySelectorAll("#monitors tbody tr")].map(r => r.dataset.slug)`, []string{"beat", "markup", "nightly"})
	b.wait("its detail, under the new slug", `!document.querySelector("#detail").hidden && document.querySelector("#detail-slug").textContent.startsWith("markup ")`)
	s.call("DELETE", "/api/crons/monitors/markup", "", http.StatusNoContent, nil)
	b.wait("its row gone", `document.querySelector('#monitors tr[data-slug="markup"]') === null && document.querySelector("#detail").hidden`)
	b.equal("the rows left", `[...document.querySelectorAll("#monitors tbody tr")].map(r => r.dataset.slug)`, []string{"beat", "nightly"})

	// The background jobs, beside the monitors.
	jobRow := func(id, sel string) string {
		return fmt.Sprintf(`document.querySelector('#jobs tr[data-job=%q] %s')`, id, sel)
	}
	b.wait("two jobs listed", `!document.querySelector("#jobs-section").hidden && document.querySelectorAll("#jobs tbody tr").length === 2`)
	b.equal("the jobs, in their order", `[...document.querySelectorAll("#jobs tbody tr")].map(r => r.dataset.job)`, []string{"sweep", "marked"})
	b.equal("the job named with markup", jobRow("marked", ".job-name")+".textContent", evil)
	b.equal("the job's health", jobRow("sweep", ".health .badge")+".textContent", "healthy")
	b.equal("the job's schedule", jobRow("sweep", ".schedule")+".textContent", "0 3 1 1 * (UTC)")
	b.equal("the job's last run", jobRow("sweep", ".last")+".textContent", "never")
	b.wait("the job's next run, relative", jobRow("sweep", ".next .rel")+`.textContent.startsWith("in ")`)
	b.do("run the job now", chromedp.Click(chromedp.CSS(`#jobs tr[data-job="sweep"] button.run`)))
	b.wait("its failed run", jobRow("sweep", ".last .badge")+`?.textContent === "failed"`)
	b.equal("the run's error", jobRow("sweep", ".last .error-text")+".textContent", "the disk is full")
	b.equal("the failure counted", jobRow("sweep", ".failures")+".textContent", "1")
	b.equal("the job degraded", jobRow("sweep", ".health .badge")+".textContent", "degraded")
	b.equal("images in the page", `document.querySelectorAll("img").length`, 0)

	// The agent's synced threads, the most recently updated first.
	b.wait("no threads yet", `!document.querySelector("#no-threads").hidden && document.querySelectorAll("#threads tbody tr").length === 0`)
	s.pushThread("t-old", time.Date(2026, 11, 1, 9, 0, 0, 0, time.UTC), "fix the build", 200)
	s.pushThread("t-new", time.Date(2026, 11, 2, 9, 0, 0, 0, time.UTC), evil, 3500)
	threadRow := func(id, sel string) string {
		return fmt.Sprintf(`document.querySelector('#threads tr[data-thread=%q] %s')`, id, sel)
	}
	b.wait("two threads listed", `document.querySelectorAll("#threads tbody tr").length === 2 && document.querySelector("#no-threads").hidden`)
	b.equal("the threads, newest first", `[...document.querySelectorAll("#threads tbody tr")].map(r => r.dataset.thread)`, []string{"t-new", "t-old"})
	b.equal("a thread's first prompt", threadRow("t-old", ".prompt")+".textContent", "fix the build")
	b.equal("a thread's first prompt with markup, as text", threadRow("t-new", ".prompt")+".textContent", evil)
	b.equal("a thread's workspace", threadRow("t-old", ".workspace")+".textContent", "/src/t-old")
	b.equal("a thread's model", threadRow("t-old", ".model")+".textContent", "anthropic fake-model")
	b.equal("a thread's messages", threadRow("t-old", ".messages")+".textContent", "2")
	b.equal("a thread's tokens", threadRow("t-new", ".tokens")+".textContent", "3500")
	b.equal("a thread's update", threadRow("t-old", ".updated time")+".dateTime", "2026-11-01T09:00:00Z")
	b.equal("images in the page", `document.querySelectorAll("img").length`, 0)

	// The API keys, to the admin key: a key made on the page, its token
	// shown once and working with its scope, then revoked on the page.
	keyRow := func(id, sel string) string {
		return fmt.Sprintf(`document.querySelector('#keys tr[data-key=%q] %s')`, id, sel)
	}
	b.wait("the keys listed", `!document.querySelector("#keys-section").hidden && document.querySelectorAll("#keys tbody tr").length === 1`)
	b.equal("the admin key", keyRow("admin", ".key-name")+".textContent", "admin")
	b.equal("its scope", keyRow("admin", ".scope")+".textContent", "admin")
	b.equal("its state", keyRow("admin", ".state")+".textContent", "valid")
	b.do("name a key", chromedp.SendKeys(chromedp.CSS("#key-name"), evil))
	b.do("choose read-only", chromedp.SetValue(chromedp.CSS("#key-scope"), "read-only"))
	b.do("create the key", chromedp.Click(chromedp.CSS(`#new-key button[type="submit"]`)))
	b.wait("its token, shown", `!document.querySelector("#new-token").hidden && document.querySelectorAll("#keys tbody tr").length === 2`)
	b.equal("the new key's name, as text", `document.querySelector("#new-token-name").textContent`, evil)
	var made struct{ Token, ID string }
	b.get("the new key", `({token: document.querySelector("#new-token-value").textContent, id: [...document.querySelectorAll("#keys tbody tr")][1].dataset.key})`, &made)
	if !strings.HasPrefix(made.Token, "fsm_") {
		t.Fatalf("the page shows the token %q", made.Token)
	}
	b.equal("the new key's row, as text", keyRow(made.ID, ".key-name")+".textContent", evil)
	b.equal("the new key's scope", keyRow(made.ID, ".scope")+".textContent", "read-only")
	b.equal("images in the page", `document.querySelectorAll("img").length`, 0)
	s.callAs(made.Token, "GET", "/api/crons/monitors", "", http.StatusOK, nil)
	s.callAs(made.Token, "POST", "/api/crons/monitors", `{"slug": "nope", "schedule": {"type": "interval", "seconds": 60}}`, http.StatusForbidden, nil)
	revoke := chromedp.CSS(fmt.Sprintf(`#keys tr[data-key=%q] button.revoke`, made.ID))
	b.do("revoke the key", chromedp.Click(revoke))
	b.equal("asked to confirm", keyRow(made.ID, "button.revoke")+".textContent", "Confirm revoke")
	s.callAs(made.Token, "GET", "/api/crons/monitors", "", http.StatusOK, nil)
	b.do("confirm", chromedp.Click(revoke))
	b.wait("the key revoked", keyRow(made.ID, ".state")+`.textContent.startsWith("revoked")`)
	b.equal("no revoke button on a revoked key", keyRow(made.ID, "button.revoke")+".hidden", true)
	s.callAs(made.Token, "GET", "/api/crons/monitors", "", http.StatusUnauthorized, nil)

	// The stream ends: the page reconnects, and reads the changes again.
	var live []string
	b.get("the stream's states", `seen["#live"]`, &live)
	s.engine.Hub().Close()
	b.wait("reconnecting", fmt.Sprintf(`seen["#live"].slice(%d).includes("reconnecting")`, len(live)))
	b.wait("live again", `document.querySelector("#live").dataset.state === "live"`)
	s.ping(nightly.PingKey)
	b.wait("the cron monitor healthy after a ping", row("nightly", ".health .badge")+`.textContent === "healthy"`)
	b.equal("the page, never reloaded", `window.notReloaded`, true)

	// Forgetting the token, and a wrong one.
	b.do("forget the token", chromedp.Click(chromedp.CSS("#forget")))
	b.wait("the sign-in form", `!document.querySelector("#login").hidden && document.querySelector("#app").hidden`)
	b.equal("the stored token", `localStorage.getItem("fsmgen.token")`, nil)
	b.do("enter a wrong token", chromedp.SendKeys(chromedp.CSS("#token"), "fsm_wrong"))
	b.do("submit it", chromedp.Click(chromedp.CSS(`#login button[type="submit"]`)))
	b.wait("the form again, saying why", `!document.querySelector("#login").hidden && document.querySelector("#login-error").textContent.includes("refused the token")`)
	b.equal("the stored token", `localStorage.getItem("fsmgen.token")`, nil)
	b.eval(`localStorage.setItem("fsmgen.token", "fsm_stale")`)
	b.do("reload with a stale token", chromedp.Reload())
	b.wait("the form, saying why", `!document.querySelector("#login").hidden && document.querySelector("#login-error").textContent.includes("refused the token")`)

	// A read-only key: the monitors, no keys, none of the admin key's
	// threads; revoked while signed in, it is sent back to the form.
	var reader struct{ Token, ID string }
	s.call("POST", "/api/keys", `{"name": "reader", "scope": "read-only"}`, http.StatusCreated, &reader)
	b.do("enter a read-only key's token", chromedp.SendKeys(chromedp.CSS("#token"), reader.Token))
	b.do("submit it", chromedp.Click(chromedp.CSS(`#login button[type="submit"]`)))
	b.wait("the monitors, live", `!document.querySelector("#app").hidden && document.querySelectorAll("#monitors tbody tr").length === 2`) // the third was renamed, then deleted, above
	b.wait("no threads of this key", `!document.querySelector("#no-threads").hidden`)
	b.equal("the threads", `document.querySelectorAll("#threads tbody tr").length`, 0)
	b.do("run a job now", chromedp.Click(chromedp.CSS(`#jobs tr[data-job="marked"] button.run`)))
	b.wait("refused, saying why", `document.querySelector("#notice").textContent.includes("read-only")`)
	b.equal("the keys, hidden", `document.querySelector("#keys-section").hidden`, true)
	s.call("DELETE", "/api/keys/"+reader.ID, "", http.StatusOK, nil)
	b.wait("the form, saying the key was revoked", `!document.querySelector("#login").hidden && document.querySelector("#login-error").textContent.includes("revoked")`)

	b.checkClean()
}

// findChromium returns the browser's path; the test fails without one.
func findChromium(t *testing.T) string {
	for _, name := range []string{"chromium", "/usr/bin/chromium"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Fatal("chromium is not installed: the web page's test needs it (make browser-deps installs it, as root with apt-get; or install the chromium package)")
	return ""
}

// server is the real server stack on an httptest server.
type server struct {
	t      *testing.T
	url    string
	token  string
	engine *monitorengine.Engine
}

func startServer(t *testing.T) *server {
	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "server.db"))
	if err != nil {
		t.Fatal(err)
	}
	logs := &testLog{t: t}
	log := slog.New(slog.NewTextHandler(logs, nil))
	engine, err := monitorengine.New(ctx, monitorengine.Config{Store: st, Log: log})
	if err != nil {
		t.Fatal(err)
	}
	token, key := apikey.Make(apikey.AdminID, "admin", apikey.ScopeAdmin, time.Now().UTC().Truncate(time.Microsecond))
	if _, err := st.AddKey(ctx, key); err != nil {
		t.Fatal(err)
	}
	sched := jobs.Settings{Schedule: monitors.Schedule{Type: "cron", Expression: "0 3 1 1 *"}, Timezone: "UTC", Timeout: time.Minute, BackoffBase: time.Second, BackoffCap: time.Second}
	jobEngine, err := jobsengine.New(ctx, jobsengine.Config{Store: st, Log: log, Jobs: []*jobs.Job{
		{ID: "sweep", Name: "Sweep", Enabled: true, Settings: sched, Func: func(ctx context.Context) (string, error) { return "", errors.New("the disk is full") }},
		{ID: "marked", Name: `<img src=x onerror=alert(1)>`, Enabled: true, Settings: sched, Func: func(ctx context.Context) (string, error) { return "", nil }},
	}})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(api.New(api.Config{Engine: engine, Jobs: jobEngine, Store: st, Page: web.Page(), Log: log}))
	runCtx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- engine.Run(runCtx) }()
	jobsCtx, stopJobs := context.WithCancel(ctx)
	jobsDone := make(chan error, 1)
	go func() { jobsDone <- jobEngine.Run(jobsCtx) }()
	t.Cleanup(func() {
		engine.Hub().Close() // the streams end, so Close does not wait for them
		srv.Close()
		stopJobs()
		if err := <-jobsDone; err != nil {
			t.Errorf("the jobs engine: %v", err)
		}
		stop()
		if err := <-done; err != nil {
			t.Errorf("the engine: %v", err)
		}
		st.Close()
		logs.mu.Lock()
		logs.done = true
		logs.mu.Unlock()
	})
	return &server{t: t, url: srv.URL, token: token, engine: engine}
}

// pushThread pushes a thread as the agent does: its user asked prompt
// and it used tokens.
func (s *server) pushThread(id string, updated time.Time, prompt string, tokens int) {
	s.t.Helper()
	var msgs []json.RawMessage
	for _, m := range []chat.Message{{Role: chat.RoleUser, Content: prompt}, {Role: chat.RoleAssistant, Content: "done"}} {
		b, err := json.Marshal(m)
		if err != nil {
			s.t.Fatal(err)
		}
		msgs = append(msgs, b)
	}
	th, err := json.Marshal(threadwire.Thread{Version: threadwire.Version, ID: id, Created: updated.Add(-time.Hour), Updated: updated,
		Provider: "anthropic", Model: "fake-model", Workspace: "/src/" + id, Messages: msgs,
		Ledger: chat.Ledger{Total: chat.Usage{InputTokens: tokens - 100, OutputTokens: 100}}})
	if err != nil {
		s.t.Fatal(err)
	}
	body, err := json.Marshal(threadwire.PushBody{Revision: updated.UnixNano(), Thread: th})
	if err != nil {
		s.t.Fatal(err)
	}
	s.call("PUT", "/api/threads/"+id, string(body), http.StatusOK, nil)
}

// call makes an API request with the admin key, checks its status and
// decodes its answer into out (unless nil).
func (s *server) call(method, path, body string, want int, out any) {
	s.t.Helper()
	s.callAs(s.token, method, path, body, want, out)
}

// callAs is call with another key's token.
func (s *server) callAs(token, method, path, body string, want int, out any) {
	s.t.Helper()
	req, err := http.NewRequest(method, s.url+path, strings.NewReader(body))
	if err != nil {
		s.t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		s.t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != want {
		s.t.Fatalf("%s %s: %d %s, want %d", method, path, resp.StatusCode, data, want)
	}
	if out != nil {
		if err := json.Unmarshal(data, out); err != nil {
			s.t.Fatalf("%s %s: %v in %s", method, path, err, data)
		}
	}
}

func (s *server) create(body string) *monitorengine.View {
	s.t.Helper()
	var v monitorengine.View
	s.call("POST", "/api/crons/monitors", body, http.StatusCreated, &v)
	return &v
}

func (s *server) ping(key string) {
	s.t.Helper()
	resp, err := http.Get(s.url + "/ping/" + key)
	if err != nil {
		s.t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		s.t.Fatalf("ping: %s", resp.Status)
	}
}

// browser is a headless Chromium's tab, with what went wrong in it.
type browser struct {
	t   *testing.T
	ctx context.Context

	mu       sync.Mutex
	problems []string // exceptions, dialogs, console errors
}

func startBrowser(t *testing.T, path string) *browser {
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(),
		chromedp.ExecPath(path),
		chromedp.Flag("headless", "new"),
		chromedp.Flag("no-sandbox", true),
		chromedp.Flag("disable-gpu", true),
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("no-first-run", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1280, 900),
	)
	ctx, cancel := chromedp.NewContext(allocCtx)
	t.Cleanup(func() { cancel(); cancelAlloc() })
	b := &browser{t: t, ctx: ctx}
	// Start the browser (without a deadline: it would stop the browser),
	// then listen to the tab.
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("start chromium (%s): %v", path, err)
	}
	dialogs := chromedp.Events(ctx, page.JavascriptDialogOpening)
	go func() {
		for ev, err := range dialogs {
			if err != nil {
				return
			}
			b.problem(fmt.Sprintf("a %s dialog: %q", ev.Type, ev.Message))
			chromedp.Call(ctx, page.HandleJavaScriptDialog, page.HandleJavaScriptDialogParams{Accept: false})
		}
	}()
	console := chromedp.Console(ctx)
	go func() {
		for m, err := range console {
			if err != nil {
				return
			}
			// The network's errors are the answers the test asks for
			// (a refused token's 401).
			if m.IsException() || m.Type == chromedp.ConsoleError && m.Source != "network" {
				b.problem(m.String())
			}
		}
	}()
	return b
}

func (b *browser) problem(p string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.problems = append(b.problems, p)
}

// checkClean fails the test if the page threw, opened a dialog or wrote an
// error.
func (b *browser) checkClean() {
	b.t.Helper()
	// A last round trip, so that the events before it are in.
	b.eval(`1`)
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.problems) > 0 {
		b.t.Errorf("the page went wrong:\n%s", strings.Join(b.problems, "\n"))
	}
}

// timeout bounds each step; the page's own waits are a second or two.
const timeout = 20 * time.Second

func (b *browser) do(what string, a chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, timeout)
	defer cancel()
	if err := chromedp.Do(ctx, a); err != nil {
		b.t.Fatalf("%s: %v%s", what, err, b.dump())
	}
}

// wait waits until the JavaScript expression is true.
func (b *browser) wait(what, expr string) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, timeout)
	defer cancel()
	_, err := chromedp.Run(ctx, chromedp.Poll[bool](expr, chromedp.WithPollingInterval(20*time.Millisecond), chromedp.WithPollingTimeout(timeout)))
	if err != nil {
		b.t.Fatalf("waiting for %s (%s): %v%s", what, expr, err, b.dump())
	}
}

func (b *browser) eval(expr string) {
	b.t.Helper()
	b.do("evaluate "+expr, chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		_, err := chromedp.Evaluate[chromedp.Void](expr)(ctx, t)
		return err
	}))
}

// get decodes the JavaScript expression's value into out.
func (b *browser) get(what, expr string, out any) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, timeout)
	defer cancel()
	raw, err := chromedp.Run(ctx, chromedp.Evaluate[[]byte](expr))
	if err == nil {
		err = json.Unmarshal(raw, out)
	}
	if err != nil {
		b.t.Fatalf("%s (%s): %v%s", what, expr, err, b.dump())
	}
}

// equal checks that the expression's value, as JSON, is want's.
func (b *browser) equal(what, expr string, want any) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, timeout)
	defer cancel()
	raw, err := chromedp.Run(ctx, chromedp.Evaluate[[]byte](expr))
	if err != nil {
		b.t.Fatalf("%s (%s): %v%s", what, expr, err, b.dump())
	}
	wantJSON, _ := json.Marshal(want)
	var got, wanted any
	if err := json.Unmarshal(raw, &got); err != nil {
		b.t.Fatalf("%s (%s) = %s: %v", what, expr, raw, err)
	}
	json.Unmarshal(wantJSON, &wanted)
	if !reflect.DeepEqual(got, wanted) {
		b.t.Fatalf("%s (%s) = %s, want %s%s", what, expr, raw, wantJSON, b.dump())
	}
}

// dump is the page's text and the healths seen, for a failure's message.
func (b *browser) dump() string {
	ctx, cancel := context.WithTimeout(b.ctx, 5*time.Second)
	defer cancel()
	s, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.body.innerText + "\nseen: " + JSON.stringify(window.seen)`))
	if err != nil {
		return "\n(the page cannot be read: " + err.Error() + ")"
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	return "\nthe page:\n" + s + "\nits problems: " + strings.Join(b.problems, "; ")
}

func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// testLog forwards the server's log to the test's until it ends.
type testLog struct {
	t    *testing.T
	mu   sync.Mutex
	done bool
}

func (l *testLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.done {
		return 0, errors.New("the test is over")
	}
	l.t.Logf("server: %s", bytes.TrimSpace(p))
	return len(p), nil
}
