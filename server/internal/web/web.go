// Package web is the server's web page: the monitors with their health,
// check-ins and next runs, kept live by the event stream.
package web

import (
	_ "embed"
	"net/http"
)

//go:embed index.html
var page []byte

// Page serves the page.
func Page() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("Cache-Control", "no-store")
		w.Header().Set("Content-Security-Policy", "default-src 'self'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; connect-src 'self'")
		w.Write(page)
	})
}
