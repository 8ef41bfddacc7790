// Package apitest holds the tests of the HTTP API (package server/internal/api) on
// the real stack: a SQLite database in a temporary directory, the engine
// running, the handlers on an httptest server. They live here, and not in
// package api's own directory, so that the fuzz target of package api
// (FuzzAPI, on the in-memory store) is built without SQLite: a fuzz binary
// links every test file of its package, and SQLite's cold build takes
// minutes.
package apitest
