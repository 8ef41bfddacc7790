package apitest_test

import (
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/fsmgen/fsmgen/server/internal/api"
	"github.com/fsmgen/fsmgen/server/internal/monitorengine"
	"github.com/fsmgen/fsmgen/server/internal/pgtest"
)

const token = "fsm_test-token"

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

// TestOnPostgres runs every other test again on Postgres, in a child
// process, beside this one's.
func TestOnPostgres(t *testing.T) {
	t.Parallel()
	pgtest.Again(t)
}

func TestAuth(t *testing.T) {
	t.Parallel()
	s := start(t, api.Config{})
	v := s.create(`{"slug": "job", "schedule": {"type": "interval", "seconds": 3600}}`)
	tests := []struct {
		name   string
		method string
		path   string
		auth   string
		status int
		code   string
	}{
		{"no header", "GET", "/api/crons/monitors", "", 401, "unauthorized"},
		{"empty bearer", "GET", "/api/crons/monitors", "Bearer ", 401, "unauthorized"},
		{"basic scheme", "GET", "/api/crons/monitors", "Basic Zm9vOmJhcg==", 401, "unauthorized"},
		{"the token without a scheme", "GET", "/api/crons/monitors", token, 401, "unauthorized"},
		{"wrong token", "GET", "/api/crons/monitors", "Bearer fsm_wrong", 401, "invalid_token"},
		{"the token with a suffix", "GET", "/api/crons/monitors", "Bearer " + token + "x", 401, "invalid_token"},
		{"another scheme with the token", "GET", "/api/crons/monitors", "Token " + token, 401, "unauthorized"},
		{"wrong token on a monitor", "DELETE", "/api/crons/monitors/job", "Bearer fsm_wrong", 401, "invalid_token"},
		{"no token on the stream", "GET", "/api/crons/stream", "", 401, "unauthorized"},
		{"no token on the preview", "GET", "/api/crons/preview?schedule=@daily", "", 401, "unauthorized"},
		{"no token before the method", "PUT", "/api/crons/monitors", "", 401, "unauthorized"},
		{"the token", "GET", "/api/crons/monitors", "Bearer " + token, 200, ""},
		{"the scheme is case-insensitive", "GET", "/api/crons/monitors", "bearer " + token, 200, ""},
		{"a ping needs no token", "GET", "/ping/" + v.PingKey, "", 200, ""},
		{"a ping ignores a wrong token", "POST", "/ping/" + v.PingKey + "/fail", "Bearer fsm_wrong", 200, ""},
		{"health needs no token", "GET", "/health", "", 200, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := s.do(req{method: tt.method, path: tt.path, header: map[string]string{"Authorization": tt.auth}})
			if tt.code == "" {
				assert.Equal(t, tt.status, a.status, "%s", a.body)
				return
			}
			requireError(t, a, tt.status, tt.code)
			assert.Contains(t, a.header.Get("WWW-Authenticate"), "Bearer")
		})
	}
	assert.Equal(t, []string{monitorengine.CheckinError, monitorengine.CheckinOK}, statuses(s.checkins("job", 0)), "the pings were recorded")
}

// statuses returns the check-ins' statuses, as listed (newest first).
func statuses(list []monitorengine.CheckinView) []string {
	var out []string
	for _, c := range list {
		out = append(out, c.Status)
	}
	return out
}

// TestBadRequests sends every kind of malformed request: each gets its
// documented 4xx, with a JSON error whose code is stable and whose message
// says what is wrong.
func TestBadRequests(t *testing.T) {
	t.Parallel()
	s := start(t, api.Config{})
	job := s.create(`{"slug": "job", "schedule": {"type": "interval", "seconds": 3600}}`)
	off := s.create(`{"slug": "off", "schedule": {"type": "interval", "seconds": 3600}}`)
	s.patch("off", `{"status": "disabled"}`)
	finished := s.ping("GET", job.PingKey+"/start", "")
	s.ping("GET", job.PingKey+"?checkin_id="+finished, "")
	running := s.ping("GET", job.PingKey+"/start", "")
	other := s.create(`{"slug": "other", "schedule": {"type": "interval", "seconds": 3600}}`)
	otherRun := s.ping("GET", other.PingKey+"/start", "")

	valid := func(extra string) string {
		return `{"slug": "new", "schedule": {"type": "interval", "seconds": 60}` + extra + `}`
	}
	cron := func(expr string) string {
		return `{"slug": "new", "schedule": {"type": "cron", "expression": "` + expr + `"}}`
	}
	asJSON := map[string]string{"Content-Type": "application/json"}
	big := strings.Repeat(" ", 64<<10) + valid("")
	tests := []struct {
		name    string
		method  string
		path    string
		header  map[string]string
		body    string
		status  int
		code    string
		message []string
	}{
		// The body.
		{"bad JSON", "POST", "/api/crons/monitors", asJSON, `{"slug": }`, 400, "bad_json", []string{"invalid JSON at byte 10"}},
		{"JSON cut short", "POST", "/api/crons/monitors", asJSON, `{"slug": "x"`, 400, "bad_json", []string{"ends too early"}},
		{"trailing value", "POST", "/api/crons/monitors", asJSON, valid("") + ` {}`, 400, "bad_json", []string{"data after the JSON object", "send one JSON object"}},
		{"trailing brace", "POST", "/api/crons/monitors", asJSON, valid("") + `}`, 400, "bad_json", []string{"after the JSON object"}},
		{"trailing bracket", "POST", "/api/crons/monitors", asJSON, valid("") + `]`, 400, "bad_json", []string{"after the JSON object"}},
		{"trailing garbage", "POST", "/api/crons/monitors", asJSON, valid("") + `x`, 400, "bad_json", []string{"after the JSON object"}},
		{"unknown field", "POST", "/api/crons/monitors", asJSON, valid(`, "colour": "red"`), 400, "bad_json", []string{`unknown field "colour"`}},
		{"unknown nested field", "POST", "/api/crons/monitors", asJSON, `{"slug": "new", "schedule": {"type": "interval", "every": 60}}`, 400, "bad_json", []string{`unknown field "every"`}},
		{"wrong type", "POST", "/api/crons/monitors", asJSON, `{"slug": 5}`, 400, "bad_json", []string{"field slug", "want a string", "found number"}},
		{"wrong nested type", "POST", "/api/crons/monitors", asJSON, `{"slug": "new", "schedule": {"type": "interval", "seconds": "60"}}`, 400, "bad_json", []string{"field schedule.seconds", "want a whole number", "found string"}},
		{"fraction", "POST", "/api/crons/monitors", asJSON, valid(`, "checkin_margin_seconds": 1.5`), 400, "bad_json", []string{"field checkin_margin_seconds: want a whole number (digits, no fraction or exponent), found 1.5"}},
		{"nested fraction", "POST", "/api/crons/monitors", asJSON, `{"slug": "new", "schedule": {"type": "interval", "seconds": 1.5}}`, 400, "bad_json", []string{"field schedule.seconds: want a whole number (digits, no fraction or exponent), found 1.5"}},
		{"huge number", "POST", "/api/crons/monitors", asJSON, valid(`, "max_runtime_seconds": 1e30`), 400, "bad_json", []string{"field max_runtime_seconds: want a whole number (digits, no fraction or exponent), found 1e30"}},
		{"number out of range", "POST", "/api/crons/monitors", asJSON, valid(`, "max_runtime_seconds": 99999999999999999999`), 400, "bad_json", []string{"field max_runtime_seconds: want a whole number in range, found 99999999999999999999"}},
		{"not an object", "POST", "/api/crons/monitors", asJSON, `[1, 2]`, 400, "bad_json", []string{"want a JSON object", "found array"}},
		{"empty body", "POST", "/api/crons/monitors", asJSON, ``, 400, "bad_json", []string{"empty"}},
		{"blank body", "POST", "/api/crons/monitors", asJSON, " \n\t", 400, "bad_json", []string{"empty"}},
		{"JSON with a charset", "PATCH", "/api/crons/monitors/job", map[string]string{"Content-Type": "application/json; charset=utf-8"}, `{"name": nope}`, 400, "bad_json", nil},
		{"text/plain", "POST", "/api/crons/monitors", map[string]string{"Content-Type": "text/plain"}, valid(""), 415, "unsupported_media_type", []string{"text/plain", "application/json"}},
		{"a JSON look-alike type", "POST", "/api/crons/monitors", map[string]string{"Content-Type": "application/jsonp"}, valid(""), 415, "unsupported_media_type", []string{"application/jsonp"}},
		{"too large", "POST", "/api/crons/monitors", asJSON, big, 413, "body_too_large", []string{"65536"}},
		{"bad JSON on a patch", "PATCH", "/api/crons/monitors/job", asJSON, `{"name": nope}`, 400, "bad_json", []string{"invalid JSON"}},
		{"unknown field on a patch", "PATCH", "/api/crons/monitors/job", asJSON, `{"ping_key": "mine"}`, 400, "bad_json", []string{`unknown field "ping_key"`}},

		// The monitor's fields.
		{"no slug", "POST", "/api/crons/monitors", nil, `{"schedule": {"type": "interval", "seconds": 60}}`, 400, "invalid_slug", []string{"missing"}},
		{"slug with capitals", "POST", "/api/crons/monitors", nil, `{"slug": "Backup", "schedule": {"type": "interval", "seconds": 60}}`, 400, "invalid_slug", []string{`"Backup" is not a slug`}},
		{"slug with a space", "POST", "/api/crons/monitors", nil, `{"slug": "a b", "schedule": {"type": "interval", "seconds": 60}}`, 400, "invalid_slug", nil},
		{"slug starting with -", "POST", "/api/crons/monitors", nil, `{"slug": "-a", "schedule": {"type": "interval", "seconds": 60}}`, 400, "invalid_slug", nil},
		{"empty slug", "POST", "/api/crons/monitors", nil, `{"slug": "", "schedule": {"type": "interval", "seconds": 60}}`, 400, "invalid_slug", nil},
		{"slug of 65", "POST", "/api/crons/monitors", nil, `{"slug": "` + strings.Repeat("a", 65) + `", "schedule": {"type": "interval", "seconds": 60}}`, 400, "invalid_slug", []string{"1 to 64"}},
		{"blank name", "POST", "/api/crons/monitors", nil, valid(`, "name": "  "`), 400, "invalid_name", []string{"1 to 200"}},
		{"name of 201", "POST", "/api/crons/monitors", nil, valid(`, "name": "` + strings.Repeat("é", 201) + `"`), 400, "invalid_name", []string{"1 to 200"}},
		{"no schedule", "POST", "/api/crons/monitors", nil, `{"slug": "new"}`, 400, "invalid_schedule", []string{"missing"}},
		{"schedule without a type", "POST", "/api/crons/monitors", nil, `{"slug": "new", "schedule": {}}`, 400, "invalid_schedule", []string{"no type"}},
		{"unknown schedule type", "POST", "/api/crons/monitors", nil, `{"slug": "new", "schedule": {"type": "weekly"}}`, 400, "invalid_schedule", []string{`"weekly"`}},
		{"minute out of range", "POST", "/api/crons/monitors", nil, cron("60 0 * * *"), 400, "invalid_schedule", []string{`minute field "60"`, "0-59"}},
		{"hour out of range", "POST", "/api/crons/monitors", nil, cron("0 24 * * *"), 400, "invalid_schedule", []string{`hour field "24"`}},
		{"four fields", "POST", "/api/crons/monitors", nil, cron("* * * *"), 400, "invalid_schedule", []string{"4 fields, want 5"}},
		{"six fields", "POST", "/api/crons/monitors", nil, cron("0 * * * * *"), 400, "invalid_schedule", []string{"6 fields", "seconds"}},
		{"empty expression", "POST", "/api/crons/monitors", nil, cron(""), 400, "invalid_schedule", []string{"empty expression"}},
		{"bad day of week", "POST", "/api/crons/monitors", nil, cron("0 0 * * FOO"), 400, "invalid_schedule", []string{"day-of-week"}},
		{"never runs", "POST", "/api/crons/monitors", nil, cron("0 0 30 2 *"), 400, "invalid_schedule", []string{"day-of-month"}},
		{"@reboot", "POST", "/api/crons/monitors", nil, cron("@reboot"), 400, "invalid_schedule", []string{"@reboot"}},
		{"interval 0", "POST", "/api/crons/monitors", nil, `{"slug": "new", "schedule": {"type": "interval", "seconds": 0}}`, 400, "invalid_schedule", []string{"at least 1 second"}},
		{"interval negative", "POST", "/api/crons/monitors", nil, `{"slug": "new", "schedule": {"type": "interval", "seconds": -5}}`, 400, "invalid_schedule", []string{"at least 1 second"}},
		{"interval over a year", "POST", "/api/crons/monitors", nil, `{"slug": "new", "schedule": {"type": "interval", "seconds": 31622401}}`, 400, "invalid_schedule", []string{"366 days"}},
		{"unknown time zone", "POST", "/api/crons/monitors", nil, `{"slug": "new", "schedule": {"type": "cron", "expression": "@daily"}, "timezone": "Mars/Olympus"}`, 400, "invalid_timezone", []string{`"Mars/Olympus"`}},
		{"unknown time zone with an interval", "POST", "/api/crons/monitors", nil, valid(`, "timezone": "Mars/Olympus"`), 400, "invalid_timezone", []string{`"Mars/Olympus"`}},
		{"Local is no time zone", "POST", "/api/crons/monitors", nil, valid(`, "timezone": "Local"`), 400, "invalid_timezone", nil},
		{"a path is no time zone", "POST", "/api/crons/monitors", nil, valid(`, "timezone": "../../etc/passwd"`), 400, "invalid_timezone", nil},
		{"negative margin", "POST", "/api/crons/monitors", nil, valid(`, "checkin_margin_seconds": -1`), 400, "invalid_checkin_margin_seconds", []string{"-1", "0 and 604800"}},
		{"margin over a week", "POST", "/api/crons/monitors", nil, valid(`, "checkin_margin_seconds": 604801`), 400, "invalid_checkin_margin_seconds", nil},
		{"max runtime 0", "POST", "/api/crons/monitors", nil, valid(`, "max_runtime_seconds": 0`), 400, "invalid_max_runtime_seconds", []string{"1 and 604800"}},
		{"max runtime over a week", "POST", "/api/crons/monitors", nil, valid(`, "max_runtime_seconds": 604801`), 400, "invalid_max_runtime_seconds", nil},
		{"failure threshold 0", "POST", "/api/crons/monitors", nil, valid(`, "failure_threshold": 0`), 400, "invalid_failure_threshold", []string{"1 and 1000"}},
		{"recovery threshold 1001", "POST", "/api/crons/monitors", nil, valid(`, "recovery_threshold": 1001`), 400, "invalid_recovery_threshold", []string{"1001"}},
		{"webhook not http", "POST", "/api/crons/monitors", nil, valid(`, "alert_webhook_url": "ftp://example.com/x"`), 400, "invalid_alert_webhook_url", []string{"http or https"}},
		{"webhook not a URL", "POST", "/api/crons/monitors", nil, valid(`, "alert_webhook_url": "example.com/hook"`), 400, "invalid_alert_webhook_url", nil},
		{"webhook without host", "POST", "/api/crons/monitors", nil, valid(`, "alert_webhook_url": "https:///hook"`), 400, "invalid_alert_webhook_url", nil},
		{"webhook on loopback", "POST", "/api/crons/monitors", nil, valid(`, "alert_webhook_url": "http://127.0.0.1:9000/hook"`), 400, "webhook_refused", []string{"127.0.0.1 is a loopback address", "-webhook-allow"}},
		{"webhook on localhost", "POST", "/api/crons/monitors", nil, valid(`, "alert_webhook_url": "http://localhost/hook"`), 400, "webhook_refused", []string{"localhost is a loopback address"}},
		{"webhook on [::1]", "POST", "/api/crons/monitors", nil, valid(`, "alert_webhook_url": "http://[::1]:8080/"`), 400, "webhook_refused", []string{"loopback"}},
		{"webhook to the metadata", "POST", "/api/crons/monitors", nil, valid(`, "alert_webhook_url": "http://169.254.169.254/latest/meta-data/"`), 400, "webhook_refused", []string{"cloud metadata"}},
		{"webhook on a private address", "PATCH", "/api/crons/monitors/job", nil, `{"alert_webhook_url": "https://192.168.1.10/hook"}`, 400, "webhook_refused", []string{"private"}},
		{"webhook on 0.0.0.0", "PATCH", "/api/crons/monitors/job", nil, `{"alert_webhook_url": "http://0.0.0.0:8080/"}`, 400, "webhook_refused", []string{"unspecified"}},
		{"new monitor paused", "POST", "/api/crons/monitors", nil, valid(`, "status": "paused"`), 400, "invalid_status", []string{"active"}},
		{"duplicate slug", "POST", "/api/crons/monitors", nil, `{"slug": "job", "schedule": {"type": "interval", "seconds": 60}}`, 409, "slug_taken", []string{`"job"`}},
		{"patch unknown status", "PATCH", "/api/crons/monitors/job", nil, `{"status": "sleeping"}`, 400, "invalid_status", []string{`"sleeping"`}},
		{"patch bad schedule", "PATCH", "/api/crons/monitors/job", nil, `{"schedule": {"type": "cron", "expression": "60 0 * * *"}}`, 400, "invalid_schedule", []string{"minute"}},
		{"patch a cron zone", "PATCH", "/api/crons/monitors/job", nil, `{"schedule": {"type": "cron", "expression": "@daily"}, "timezone": "Nowhere"}`, 400, "invalid_timezone", nil},
		{"patch to a taken slug", "PATCH", "/api/crons/monitors/job", nil, `{"slug": "off"}`, 409, "slug_taken", []string{`"off"`}},
		{"patch bad slug", "PATCH", "/api/crons/monitors/job", nil, `{"slug": "A"}`, 400, "invalid_slug", nil},

		// Unknown things.
		{"get unknown monitor", "GET", "/api/crons/monitors/nope", nil, "", 404, "monitor_not_found", []string{`"nope"`}},
		{"patch unknown monitor", "PATCH", "/api/crons/monitors/nope", nil, `{"name": "x"}`, 404, "monitor_not_found", nil},
		{"delete unknown monitor", "DELETE", "/api/crons/monitors/nope", nil, "", 404, "monitor_not_found", nil},
		{"check-ins of unknown monitor", "GET", "/api/crons/monitors/nope/checkins", nil, "", 404, "monitor_not_found", nil},
		{"check-in to unknown monitor", "POST", "/api/crons/monitors/nope/checkins", nil, `{"status": "ok"}`, 404, "monitor_not_found", nil},
		{"unknown ping key", "GET", "/ping/nope", nil, "", 404, "unknown_ping_key", []string{"ping key"}},
		{"unknown ping key start", "POST", "/ping/nope/start", nil, "", 404, "unknown_ping_key", nil},
		{"unknown path", "GET", "/api/crons/nothing", nil, "", 404, "not_found", []string{`"/api/crons/nothing"`}},
		{"unknown top path", "GET", "/favicon.ico", nil, "", 404, "not_found", nil},
		{"too deep a ping", "GET", "/ping/" + job.PingKey + "/start/now", nil, "", 404, "not_found", nil},
		{"too deep a monitor", "GET", "/api/crons/monitors/job/checkins/x", nil, "", 404, "not_found", nil},

		// Pings.
		{"exit code 256 in the path", "GET", "/ping/" + job.PingKey + "/256", nil, "", 404, "not_found", []string{`"256"`, "0-255"}},
		{"negative exit code in the path", "GET", "/ping/" + job.PingKey + "/-1", nil, "", 404, "not_found", nil},
		{"unknown ping kind", "GET", "/ping/" + job.PingKey + "/finish", nil, "", 404, "not_found", []string{`"finish"`}},
		{"exit code not a number", "GET", "/ping/" + job.PingKey + "?exit_code=x", nil, "", 400, "invalid_exit_code", []string{`"x"`, "0 to 255"}},
		{"exit code 256", "GET", "/ping/" + job.PingKey + "?exit_code=256", nil, "", 400, "invalid_exit_code", nil},
		{"exit code twice", "GET", "/ping/" + job.PingKey + "/1?exit_code=2", nil, "", 400, "invalid_exit_code", []string{"exit code 1", "the query 2"}},
		{"checkin_id on a start", "GET", "/ping/" + job.PingKey + "/start?checkin_id=" + running, nil, "", 400, "invalid_checkin_id", []string{"leave checkin_id out"}},
		{"unknown checkin_id", "GET", "/ping/" + job.PingKey + "?checkin_id=0123456789abcdef0123456789abcdef", nil, "", 404, "checkin_not_found", []string{`"0123456789abcdef0123456789abcdef"`}},
		{"another monitor's checkin_id", "GET", "/ping/" + job.PingKey + "?checkin_id=" + otherRun, nil, "", 404, "checkin_not_found", nil},
		{"finished checkin_id", "GET", "/ping/" + job.PingKey + "/fail?checkin_id=" + finished, nil, "", 409, "checkin_finished", []string{"already finished (ok)"}},
		{"disabled monitor", "GET", "/ping/" + off.PingKey, nil, "", 409, "monitor_disabled", []string{`"off"`, "disabled"}},
		{"disabled monitor start", "POST", "/ping/" + off.PingKey + "/start", nil, "", 409, "monitor_disabled", nil},
		{"ping body over 1 MiB", "POST", "/ping/" + job.PingKey, nil, strings.Repeat("x", 1<<20+1), 413, "body_too_large", []string{"1048576"}},

		// Check-ins through the API.
		{"check-in unknown status", "POST", "/api/crons/monitors/job/checkins", nil, `{"status": "done"}`, 400, "invalid_status", []string{`"done"`}},
		{"check-in missing status", "POST", "/api/crons/monitors/job/checkins", nil, `{}`, 400, "invalid_status", nil},
		{"check-in in progress with an id", "POST", "/api/crons/monitors/job/checkins", nil, `{"status": "in_progress", "checkin_id": "` + running + `"}`, 400, "invalid_checkin_id", nil},
		{"check-in unknown id", "POST", "/api/crons/monitors/job/checkins", nil, `{"status": "ok", "checkin_id": "abc"}`, 404, "checkin_not_found", nil},
		{"check-in finished id", "POST", "/api/crons/monitors/job/checkins", nil, `{"status": "ok", "checkin_id": "` + finished + `"}`, 409, "checkin_finished", nil},
		{"check-in bad exit code", "POST", "/api/crons/monitors/job/checkins", nil, `{"status": "ok", "exit_code": 300}`, 400, "invalid_exit_code", []string{"300"}},
		{"check-in negative exit code", "POST", "/api/crons/monitors/job/checkins", nil, `{"status": "error", "exit_code": -1}`, 400, "invalid_exit_code", nil},
		{"check-in disabled", "POST", "/api/crons/monitors/off/checkins", nil, `{"status": "ok"}`, 409, "monitor_disabled", nil},
		{"check-in unknown field", "POST", "/api/crons/monitors/job/checkins", nil, `{"status": "ok", "duration": 5}`, 400, "bad_json", []string{`"duration"`}},

		// Query parameters.
		{"limit 0", "GET", "/api/crons/monitors/job/checkins?limit=0", nil, "", 400, "invalid_limit", []string{"1 to 10000"}},
		{"limit 10001", "GET", "/api/crons/monitors/job/checkins?limit=10001", nil, "", 400, "invalid_limit", nil},
		{"limit not a number", "GET", "/api/crons/monitors/job/checkins?limit=ten", nil, "", 400, "invalid_limit", []string{`"ten"`}},
		{"preview without a schedule", "GET", "/api/crons/preview", nil, "", 400, "invalid_schedule", []string{"interval_seconds"}},
		{"preview bad expression", "GET", "/api/crons/preview?schedule=60+0+*+*+*", nil, "", 400, "invalid_schedule", []string{"minute"}},
		{"preview both", "GET", "/api/crons/preview?schedule=@daily&interval_seconds=60", nil, "", 400, "invalid_schedule", []string{"not both"}},
		{"preview interval not a number", "GET", "/api/crons/preview?interval_seconds=1m", nil, "", 400, "invalid_interval_seconds", []string{`"1m"`}},
		{"preview interval 0", "GET", "/api/crons/preview?interval_seconds=0", nil, "", 400, "invalid_interval_seconds", []string{"at least 1 second"}},
		{"preview unknown zone", "GET", "/api/crons/preview?schedule=@daily&timezone=Mars/Olympus", nil, "", 400, "invalid_timezone", []string{`"Mars/Olympus"`}},
		{"preview unknown zone with an interval", "GET", "/api/crons/preview?interval_seconds=60&timezone=Mars/Olympus", nil, "", 400, "invalid_timezone", nil},
		{"preview bad after", "GET", "/api/crons/preview?schedule=@daily&after=yesterday", nil, "", 400, "invalid_after", []string{"RFC 3339"}},
		{"preview count 0", "GET", "/api/crons/preview?schedule=@daily&count=0", nil, "", 400, "invalid_count", []string{"1 to 1000"}},
		{"preview count 1001", "GET", "/api/crons/preview?schedule=@daily&count=1001", nil, "", 400, "invalid_count", nil},
		{"unknown parameter", "GET", "/api/crons/monitors?colour=red", nil, "", 400, "unknown_parameter", []string{`unknown query parameter "colour"`, "/api/crons/monitors takes no query parameter"}},
		{"misspelt limit", "GET", "/api/crons/monitors/job/checkins?limit=5&lmit=3", nil, "", 400, "unknown_parameter", []string{`"lmit"`, "takes limit"}},
		{"limit twice", "GET", "/api/crons/monitors/job/checkins?limit=5&limit=6", nil, "", 400, "invalid_limit", []string{"limit is given 2 times"}},
		{"misspelt time zone", "GET", "/api/crons/preview?schedule=@daily&tz=Europe/Paris", nil, "", 400, "unknown_parameter", []string{`"tz"`, "schedule, interval_seconds, timezone, after, count"}},
		{"unknown ping parameter", "GET", "/ping/" + job.PingKey + "?exitcode=3", nil, "", 400, "unknown_parameter", []string{`"exitcode"`, "exit_code, checkin_id"}},
		{"unknown parameter on a patch", "PATCH", "/api/crons/monitors/job?dry_run=1", nil, `{"name": "x"}`, 400, "unknown_parameter", []string{`"dry_run"`}},
		{"bad query", "GET", "/api/crons/monitors/job/checkins?limit=%zz", nil, "", 400, "bad_query", []string{"not valid"}},

		// Methods.
		{"PUT on monitors", "PUT", "/api/crons/monitors", nil, valid(""), 405, "method_not_allowed", []string{"PUT", "GET or POST"}},
		{"POST on a monitor", "POST", "/api/crons/monitors/job", nil, `{}`, 405, "method_not_allowed", nil},
		{"DELETE on health", "DELETE", "/health", nil, "", 405, "method_not_allowed", nil},
		{"DELETE on a ping", "DELETE", "/ping/" + job.PingKey, nil, "", 405, "method_not_allowed", nil},
		{"POST on the stream", "POST", "/api/crons/stream", nil, "", 405, "method_not_allowed", nil},
		{"POST on the page", "POST", "/", nil, "", 405, "method_not_allowed", nil},
	}
	allow := map[string]string{
		"PUT on monitors":    "GET, POST",
		"POST on a monitor":  "DELETE, GET, PATCH",
		"DELETE on health":   "GET",
		"DELETE on a ping":   "GET, HEAD, POST",
		"POST on the stream": "GET",
		"POST on the page":   "GET",
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := s.do(req{method: tt.method, path: tt.path, body: tt.body, header: tt.header})
			requireError(t, a, tt.status, tt.code, tt.message...)
			if tt.status == 405 {
				assert.Equal(t, allow[tt.name], a.header.Get("Allow"))
			}
		})
	}

	// Nothing of it changed anything.
	var list struct {
		Monitors []monitorengine.View `json:"monitors"`
	}
	s.json("GET", "/api/crons/monitors", "", 200, &list)
	var slugs []string
	for _, m := range list.Monitors {
		slugs = append(slugs, m.Slug)
	}
	assert.Equal(t, []string{"job", "off", "other"}, slugs)
	v := s.get("job")
	assert.Equal(t, running, v.RunningCheckinID)
	assert.Equal(t, monitorengine.Schedule{Type: "interval", Seconds: 3600}, v.Schedule)
	assert.Equal(t, []string{monitorengine.CheckinInProgress, monitorengine.CheckinOK}, statuses(s.checkins("job", 0)))
	assert.Empty(t, s.checkins("off", 0))
}
