package sandbox

import (
	"encoding/binary"
	"fmt"
	"syscall"
)

// The seccomp filter handed to bubblewrap (--seccomp) keeps confined
// commands from two things: the kernel's keyrings, and making setuid and
// setgid files.
//
// The keyrings are not namespaced: a command started from a login
// session could search the session's keyring (and the user's) and read
// the keys in it, whatever mount, PID or user namespace it runs in. The
// filter fails keyctl, add_key and request_key with EPERM, whatever their
// arguments, as Docker's and Flatpak's default profiles do.
//
// Setuid files: a command run by root
// owns the files it creates, so `chmod 4755` on a copy of bash would
// otherwise leave a root shell in the workspace for anyone on the host to
// run. The filter fails with EPERM every call that would set S_ISUID or
// S_ISGID on a file: chmod, fchmod, fchmodat and fchmodat2 with either
// bit in the mode, and open, openat, creat, mknod and mknodat creating a
// file with either bit (for open and openat, only when the flags hold
// O_CREAT or O_TMPFILE: the mode means nothing otherwise). The calls
// whose mode the filter cannot see fail with ENOSYS, as on a kernel
// without them, and every caller falls back to the ones above: openat2
// (its mode is in memory) and io_uring (its operations are not filtered
// at all). So do system calls newer than the filter, whose numbers it
// does not know, and the calls of other ABIs than those listed below (on
// amd64, the x32 ABI). Everything else is allowed: the filter guards
// against this one thing, the rest of the sandbox is namespaces.
//
// The filter is classic BPF over struct seccomp_data, built here for each
// architecture the agent is built for: amd64 (with its i386 compatibility
// ABI) and arm64 (with AArch32). On other architectures there is no
// filter. Why a filter rather than clearing the bits after each command:
// see the package doc.

// seccompData offsets: struct seccomp_data { int nr; __u32 arch; __u64
// instruction_pointer; __u64 args[6]; }. Both supported architectures are
// little-endian, so an argument's low 32 bits (a mode, a flags word) are
// at the start of its 8 bytes.
const (
	seccompNrOffset   = 0
	seccompArchOffset = 4
	seccompArgsOffset = 16
)

// The filter's results (SECCOMP_RET_*).
const (
	seccompRetAllow = 0x7fff0000
	seccompRetErrno = 0x00050000 // | errno
)

// Classic BPF opcodes the filter uses.
const (
	bpfLoadWord = syscall.BPF_LD | syscall.BPF_W | syscall.BPF_ABS
	bpfJumpEq   = syscall.BPF_JMP | syscall.BPF_JEQ | syscall.BPF_K
	bpfJumpGE   = syscall.BPF_JMP | syscall.BPF_JGE | syscall.BPF_K
	bpfJumpSet  = syscall.BPF_JMP | syscall.BPF_JSET | syscall.BPF_K
	bpfReturn   = syscall.BPF_RET | syscall.BPF_K
)

// Bits of modes and open flags, the same on every architecture below.
const (
	setIDBits  = syscall.S_ISUID | syscall.S_ISGID // 06000
	oCreat     = 0o100
	oTmpfile   = 0o20000000 // __O_TMPFILE, without O_DIRECTORY (which differs by architecture)
	createBits = oCreat | oTmpfile
)

// maxKnownSyscall is the highest system call number the filter knows of:
// rseq_slice_yield, the newest when this was written (calls are numbered
// alike on every architecture since 424). A higher one fails with ENOSYS,
// as on a kernel without it: it might be a new way to set a mode.
const maxKnownSyscall = 471

// armPrivateSyscalls is where AArch32's ARM-private calls start
// (__ARM_NR_BASE: cacheflush, set_tls, ...): allowed, above the others.
const armPrivateSyscalls = 0x0f0000

// seccompFD is the file descriptor bubblewrap reads the filter from: the
// first of exec.Cmd.ExtraFiles.
const seccompFD = 3

// No argument: a rule whose call has no flags word.
const noArg = -1

// refuse, as a rule's mode, fails the call with EPERM whatever its
// arguments.
const refuse = -2

// seccompRule is what the filter does with one system call: fail it with
// ENOSYS when mode is noArg, with EPERM when mode is refuse; otherwise
// fail it with EPERM when its argument mode holds S_ISUID or S_ISGID and,
// if flags is not noArg, its argument flags holds O_CREAT or O_TMPFILE.
type seccompRule struct {
	name  string // for tests and errors
	nr    uint32
	mode  int
	flags int
}

// seccompABI is one system call ABI the filter accepts: its
// AUDIT_ARCH_* value and its rules.
type seccompABI struct {
	name  string
	audit uint32
	rules []seccompRule
	// allowFrom, when not 0, is a call number from which on calls are
	// allowed although above maxKnownSyscall.
	allowFrom uint32
}

// The calls numbered alike everywhere (Linux 5.1 and later).
var unifiedRules = []seccompRule{
	{"io_uring_setup", 425, noArg, noArg},
	{"io_uring_enter", 426, noArg, noArg},
	{"io_uring_register", 427, noArg, noArg},
	{"openat2", 437, noArg, noArg},
	{"fchmodat2", 452, 2, noArg},
}

// AUDIT_ARCH_* values (linux/audit.h).
const (
	auditArchX86_64  = 0xc000003e
	auditArchI386    = 0x40000003
	auditArchAArch64 = 0xc00000b7
	auditArchARM     = 0x40000028
)

// keyringRules refuses the kernel keyrings' calls, numbered by ABI.
func keyringRules(addKey, requestKey, keyctl uint32) []seccompRule {
	return []seccompRule{
		{"add_key", addKey, refuse, noArg},
		{"request_key", requestKey, refuse, noArg},
		{"keyctl", keyctl, refuse, noArg},
	}
}

// abiRules joins the rules of one ABI.
func abiRules(parts ...[]seccompRule) []seccompRule {
	var out []seccompRule
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

// seccompABIs lists, per GOARCH, the ABIs a process of that architecture
// can call the kernel through, with their call numbers (see the kernel's
// syscall tables; a test checks the native ones against package syscall
// on each of these architectures).
var seccompABIs = map[string][]seccompABI{
	"amd64": {
		{name: "x86_64", audit: auditArchX86_64, rules: abiRules([]seccompRule{
			{"open", 2, 2, 1},
			{"creat", 85, 1, noArg},
			{"chmod", 90, 1, noArg},
			{"fchmod", 91, 1, noArg},
			{"mknod", 133, 1, noArg},
			{"openat", 257, 3, 2},
			{"mknodat", 259, 2, noArg},
			{"fchmodat", 268, 2, noArg},
		}, keyringRules(248, 249, 250), unifiedRules)},
		{name: "i386", audit: auditArchI386, rules: abiRules([]seccompRule{
			{"open", 5, 2, 1},
			{"creat", 8, 1, noArg},
			{"mknod", 14, 1, noArg},
			{"chmod", 15, 1, noArg},
			{"fchmod", 94, 1, noArg},
			{"openat", 295, 3, 2},
			{"mknodat", 297, 2, noArg},
			{"fchmodat", 306, 2, noArg},
		}, keyringRules(286, 287, 288), unifiedRules)},
	},
	"arm64": {
		{name: "aarch64", audit: auditArchAArch64, rules: abiRules([]seccompRule{
			{"mknodat", 33, 2, noArg},
			{"fchmod", 52, 1, noArg},
			{"fchmodat", 53, 2, noArg},
			{"openat", 56, 3, 2},
		}, keyringRules(217, 218, 219), unifiedRules)},
		{name: "arm", audit: auditArchARM, allowFrom: armPrivateSyscalls, rules: abiRules([]seccompRule{
			{"open", 5, 2, 1},
			{"creat", 8, 1, noArg},
			{"mknod", 14, 1, noArg},
			{"chmod", 15, 1, noArg},
			{"fchmod", 94, 1, noArg},
			{"openat", 322, 3, 2},
			{"mknodat", 324, 2, noArg},
			{"fchmodat", 333, 2, noArg},
		}, keyringRules(309, 310, 311), unifiedRules)},
	},
}

// bpfInsn is a classic BPF instruction (struct sock_filter).
type bpfInsn struct {
	code   uint16
	jt, jf uint8
	k      uint32
}

// seccompProgram returns the filter for goarch as BPF instructions, or
// nil when there is none for it.
func seccompProgram(goarch string) ([]bpfInsn, error) {
	abis, ok := seccompABIs[goarch]
	if !ok {
		return nil, nil
	}
	ld := func(off uint32) bpfInsn { return bpfInsn{code: bpfLoadWord, k: off} }
	ret := func(v uint32) bpfInsn { return bpfInsn{code: bpfReturn, k: v} }
	jump := func(code uint16, k uint32, jt, jf int) bpfInsn {
		return bpfInsn{code: code, jt: uint8(jt), jf: uint8(jf), k: k}
	}
	arg := func(i int) uint32 { return seccompArgsOffset + 8*uint32(i) }
	allow, eperm, enosys := ret(seccompRetAllow), ret(seccompRetErrno|uint32(syscall.EPERM)), ret(seccompRetErrno|uint32(syscall.ENOSYS))

	prog := []bpfInsn{ld(seccompArchOffset)}
	for _, abi := range abis {
		// The accumulator holds the call's number throughout, but in a
		// rule's body, which always returns.
		section := []bpfInsn{ld(seccompNrOffset)}
		for _, r := range abi.rules {
			var body []bpfInsn
			switch {
			case r.mode == noArg:
				body = []bpfInsn{enosys}
			case r.mode == refuse:
				body = []bpfInsn{eperm}
			case r.flags == noArg:
				body = []bpfInsn{ld(arg(r.mode)), jump(bpfJumpSet, setIDBits, 0, 1), eperm, allow}
			default:
				body = []bpfInsn{
					ld(arg(r.flags)), jump(bpfJumpSet, createBits, 0, 3),
					ld(arg(r.mode)), jump(bpfJumpSet, setIDBits, 0, 1),
					eperm, allow,
				}
			}
			section = append(section, jump(bpfJumpEq, r.nr, 0, len(body)))
			section = append(section, body...)
		}
		if abi.allowFrom != 0 {
			section = append(section, jump(bpfJumpGE, abi.allowFrom, 0, 1), allow)
		}
		section = append(section, jump(bpfJumpGE, maxKnownSyscall+1, 0, 1), enosys, allow)
		if len(section) > 255 {
			return nil, fmt.Errorf("seccomp filter for %s/%s: %d instructions are too many to jump over", goarch, abi.name, len(section))
		}
		prog = append(prog, jump(bpfJumpEq, abi.audit, 0, len(section)))
		prog = append(prog, section...)
	}
	// Any other ABI (none can reach this kernel from these architectures).
	return append(prog, enosys), nil
}

// seccompFilter returns the filter for goarch in the form bubblewrap's
// --seccomp reads (struct sock_filter[], in the machine's byte order, both
// little-endian here), or nil when there is none for goarch.
func seccompFilter(goarch string) ([]byte, error) {
	prog, err := seccompProgram(goarch)
	if err != nil || prog == nil {
		return nil, err
	}
	out := make([]byte, 0, 8*len(prog))
	for _, in := range prog {
		out = binary.LittleEndian.AppendUint16(out, in.code)
		out = append(out, in.jt, in.jf)
		out = binary.LittleEndian.AppendUint32(out, in.k)
	}
	return out, nil
}
