//go:build !linux

package sandboxtest

import (
	"errors"
	"fmt"
	"io"
)

// execWithSessionKey needs Linux's keyrings.
func execWithSessionKey(_, _, _ string, _, _ []string) error {
	return errors.New("kernel keyrings are Linux's")
}

// readKey needs Linux's keyrings.
func readKey(w io.Writer, _ string) int {
	fmt.Fprintln(w, "keyring: kernel keyrings are Linux's")
	return 0
}
