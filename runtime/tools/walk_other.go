//go:build !linux

package tools

import "golang.org/x/sys/unix"

// dirFlags open a directory a walker passes through, never following a
// final link. Systems without O_PATH need read permission on it.
const dirFlags = unix.O_RDONLY | unix.O_DIRECTORY | unix.O_NOFOLLOW
