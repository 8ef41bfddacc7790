package tools

import "golang.org/x/sys/unix"

// dirFlags open a directory a walker passes through: O_PATH, which needs
// no read permission (searching a directory needs only its execute bit,
// as the kernel's own lookup does) and never follows a final link.
const dirFlags = unix.O_PATH | unix.O_DIRECTORY | unix.O_NOFOLLOW
