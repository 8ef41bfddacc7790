// Package storetest holds the tests every store.Store must pass, run on
// each store the server can use.
package storetest
