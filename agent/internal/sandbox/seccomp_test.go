package sandbox

import (
	"encoding/binary"
	"fmt"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// runFilter runs prog, a seccomp filter, on one system call the way the
// kernel does, and returns its result. It fails t on what the kernel
// would refuse to load: an unknown instruction, a jump out of the
// program, a load outside struct seccomp_data, falling off the end.
func runFilter(t *testing.T, prog []bpfInsn, arch, nr uint32, args [6]uint64) uint32 {
	t.Helper()
	var data [64]byte
	binary.LittleEndian.PutUint32(data[0:], nr)
	binary.LittleEndian.PutUint32(data[4:], arch)
	for i, a := range args {
		binary.LittleEndian.PutUint64(data[16+8*i:], a)
	}
	var acc uint32
	for pc := 0; pc < len(prog); pc++ {
		in := prog[pc]
		var cond bool
		switch in.code {
		case bpfLoadWord:
			require.LessOrEqual(t, in.k+4, uint32(len(data)), "load at %d out of seccomp_data", pc)
			require.Zero(t, in.k%4, "unaligned load at %d", pc)
			acc = binary.LittleEndian.Uint32(data[in.k:])
			continue
		case bpfReturn:
			return in.k
		case bpfJumpEq:
			cond = acc == in.k
		case bpfJumpGE:
			cond = acc >= in.k
		case bpfJumpSet:
			cond = acc&in.k != 0
		default:
			require.Failf(t, "unknown instruction", "%#x at %d", in.code, pc)
		}
		off := int(in.jf)
		if cond {
			off = int(in.jt)
		}
		require.Less(t, pc+1+off, len(prog), "jump out of the program at %d", pc)
		pc += off
	}
	require.Fail(t, "the filter fell off its end")
	return 0
}

func TestSeccompFilter(t *testing.T) {
	t.Parallel()
	const (
		allow  = seccompRetAllow
		eperm  = seccompRetErrno | uint32(syscall.EPERM)
		enosys = seccompRetErrno | uint32(syscall.ENOSYS)
		creat  = 0o100 | 0o1 // O_CREAT|O_WRONLY
		tmp    = 0o20200000  // O_TMPFILE on x86 (with its O_DIRECTORY)
		suid   = 0o4755
		sgid   = 0o2755
		reg    = 0o100000     // S_IFREG
		x32    = 0x40000000   // the x32 ABI's call numbers
		armTLS = 0x0f0000 + 5 // AArch32's set_tls
	)
	type call struct {
		name string
		arch uint32
		nr   uint32
		args [6]uint64
		want uint32
	}
	tests := map[string][]call{
		"amd64": {
			{"chmod setuid", auditArchX86_64, 90, [6]uint64{0, suid}, eperm},
			{"chmod setgid", auditArchX86_64, 90, [6]uint64{0, sgid}, eperm},
			{"chmod plain", auditArchX86_64, 90, [6]uint64{0, 0o755}, allow},
			{"chmod sticky", auditArchX86_64, 90, [6]uint64{0, 0o1777}, allow},
			{"chmod, high bits of the argument ignored", auditArchX86_64, 90, [6]uint64{0, 0xffff_ffff_0000_0000 | 0o755}, allow},
			{"fchmod setuid", auditArchX86_64, 91, [6]uint64{3, 0o4000}, eperm},
			{"fchmodat setuid", auditArchX86_64, 268, [6]uint64{0, 0, suid}, eperm},
			{"fchmodat, the mode is the third argument", auditArchX86_64, 268, [6]uint64{0, suid, 0o644}, allow},
			{"fchmodat2 setgid", auditArchX86_64, 452, [6]uint64{0, 0, sgid, 0}, eperm},
			{"open creating setuid", auditArchX86_64, 2, [6]uint64{0, creat, suid}, eperm},
			{"open O_TMPFILE setuid", auditArchX86_64, 2, [6]uint64{0, tmp | 0o2, suid}, eperm},
			{"open without O_CREAT: the mode is noise", auditArchX86_64, 2, [6]uint64{0, 0, suid}, allow},
			{"open creating plain", auditArchX86_64, 2, [6]uint64{0, creat, 0o644}, allow},
			{"openat creating setuid", auditArchX86_64, 257, [6]uint64{0, 0, creat, suid}, eperm},
			{"openat creating plain", auditArchX86_64, 257, [6]uint64{0, 0, creat, 0o666}, allow},
			{"openat reading", auditArchX86_64, 257, [6]uint64{0, 0, 0, sgid}, allow},
			{"creat setuid", auditArchX86_64, 85, [6]uint64{0, suid}, eperm},
			{"mknod setuid file", auditArchX86_64, 133, [6]uint64{0, reg | suid, 0}, eperm},
			{"mknodat setgid file", auditArchX86_64, 259, [6]uint64{0, 0, reg | sgid, 0}, eperm},
			{"mknodat fifo", auditArchX86_64, 259, [6]uint64{0, 0, 0o10644, 0}, allow},
			{"openat2", auditArchX86_64, 437, [6]uint64{}, enosys},
			{"io_uring_setup", auditArchX86_64, 425, [6]uint64{}, enosys},
			{"io_uring_enter", auditArchX86_64, 426, [6]uint64{}, enosys},
			{"io_uring_register", auditArchX86_64, 427, [6]uint64{}, enosys},
			{"read", auditArchX86_64, 0, [6]uint64{0, suid, suid}, allow},
			{"execve", auditArchX86_64, 59, [6]uint64{}, allow},
			{"add_key", auditArchX86_64, 248, [6]uint64{}, eperm},
			{"request_key", auditArchX86_64, 249, [6]uint64{}, eperm},
			{"keyctl search", auditArchX86_64, 250, [6]uint64{10, 0xfffffffd}, eperm},
			{"keyctl read", auditArchX86_64, 250, [6]uint64{11, 42}, eperm},
			{"keyctl, high bits ignored", auditArchX86_64, 250, [6]uint64{0xffff_ffff_0000_0000}, eperm},
			{"the neighbours of the keyring calls", auditArchX86_64, 247, [6]uint64{}, allow},
			{"ioprio_set after keyctl", auditArchX86_64, 251, [6]uint64{}, allow},
			{"the newest known call", auditArchX86_64, maxKnownSyscall, [6]uint64{}, allow},
			{"a call newer than the filter", auditArchX86_64, maxKnownSyscall + 1, [6]uint64{}, enosys},
			{"x32 chmod", auditArchX86_64, x32 | 90, [6]uint64{0, suid}, enosys},
			{"x32 read", auditArchX86_64, x32, [6]uint64{}, enosys},
			{"i386 chmod setuid", auditArchI386, 15, [6]uint64{0, suid}, eperm},
			{"i386 fchmod setgid", auditArchI386, 94, [6]uint64{0, sgid}, eperm},
			{"i386 fchmodat setuid", auditArchI386, 306, [6]uint64{0, 0, suid}, eperm},
			{"i386 open creating setuid", auditArchI386, 5, [6]uint64{0, creat, suid}, eperm},
			{"i386 openat creating setuid", auditArchI386, 295, [6]uint64{0, 0, creat, suid}, eperm},
			{"i386 creat setuid", auditArchI386, 8, [6]uint64{0, suid}, eperm},
			{"i386 mknod setuid", auditArchI386, 14, [6]uint64{0, reg | suid}, eperm},
			{"i386 mknodat setuid", auditArchI386, 297, [6]uint64{0, 0, reg | suid}, eperm},
			{"i386 fchmodat2 setuid", auditArchI386, 452, [6]uint64{0, 0, suid}, eperm},
			{"i386 openat2", auditArchI386, 437, [6]uint64{}, enosys},
			{"i386 add_key", auditArchI386, 286, [6]uint64{}, eperm},
			{"i386 request_key", auditArchI386, 287, [6]uint64{}, eperm},
			{"i386 keyctl", auditArchI386, 288, [6]uint64{}, eperm},
			{"i386 inotify_init after keyctl", auditArchI386, 291, [6]uint64{}, allow},
			{"i386 chmod plain", auditArchI386, 15, [6]uint64{0, 0o755}, allow},
			{"i386 read (its number is x86_64's close)", auditArchI386, 3, [6]uint64{}, allow},
			{"another architecture", auditArchAArch64, 53, [6]uint64{0, 0, 0o644}, enosys},
		},
		"arm64": {
			{"fchmodat setuid", auditArchAArch64, 53, [6]uint64{0, 0, suid}, eperm},
			{"fchmodat plain", auditArchAArch64, 53, [6]uint64{0, 0, 0o644}, allow},
			{"fchmod setgid", auditArchAArch64, 52, [6]uint64{0, sgid}, eperm},
			{"fchmodat2 setuid", auditArchAArch64, 452, [6]uint64{0, 0, suid, 0}, eperm},
			{"openat creating setuid", auditArchAArch64, 56, [6]uint64{0, 0, creat, suid}, eperm},
			{"openat O_TMPFILE setuid", auditArchAArch64, 56, [6]uint64{0, 0, 0o20040002, suid}, eperm}, // arm64's O_DIRECTORY is 040000
			{"openat reading", auditArchAArch64, 56, [6]uint64{0, 0, 0, suid}, allow},
			{"mknodat setuid", auditArchAArch64, 33, [6]uint64{0, 0, reg | suid, 0}, eperm},
			{"openat2", auditArchAArch64, 437, [6]uint64{}, enosys},
			{"io_uring_setup", auditArchAArch64, 425, [6]uint64{}, enosys},
			{"read", auditArchAArch64, 63, [6]uint64{}, allow},
			{"add_key", auditArchAArch64, 217, [6]uint64{}, eperm},
			{"request_key", auditArchAArch64, 218, [6]uint64{}, eperm},
			{"keyctl", auditArchAArch64, 219, [6]uint64{}, eperm},
			{"setpriority after keyctl", auditArchAArch64, 140, [6]uint64{}, allow},
			{"a call newer than the filter", auditArchAArch64, maxKnownSyscall + 1, [6]uint64{}, enosys},
			{"aarch32 chmod setuid", auditArchARM, 15, [6]uint64{0, suid}, eperm},
			{"aarch32 fchmodat setuid", auditArchARM, 333, [6]uint64{0, 0, suid}, eperm},
			{"aarch32 openat creating setuid", auditArchARM, 322, [6]uint64{0, 0, creat, suid}, eperm},
			{"aarch32 mknodat setuid", auditArchARM, 324, [6]uint64{0, 0, reg | suid}, eperm},
			{"aarch32 set_tls", auditArchARM, armTLS, [6]uint64{}, allow},
			{"aarch32 add_key", auditArchARM, 309, [6]uint64{}, eperm},
			{"aarch32 request_key", auditArchARM, 310, [6]uint64{}, eperm},
			{"aarch32 keyctl", auditArchARM, 311, [6]uint64{}, eperm},
			{"aarch32 a call newer than the filter", auditArchARM, maxKnownSyscall + 1, [6]uint64{}, enosys},
			{"another architecture", auditArchX86_64, 90, [6]uint64{0, 0o644}, enosys},
		},
	}
	for goarch, calls := range tests {
		prog, err := seccompProgram(goarch)
		require.NoError(t, err)
		require.NotEmpty(t, prog)
		for _, c := range calls {
			t.Run(goarch+"/"+c.name, func(t *testing.T) {
				t.Parallel()
				got := runFilter(t, prog, c.arch, c.nr, c.args)
				assert.Equal(t, fmt.Sprintf("%#x", c.want), fmt.Sprintf("%#x", got))
			})
		}
		filter, err := seccompFilter(goarch)
		require.NoError(t, err)
		assert.Len(t, filter, 8*len(prog), "struct sock_filter is 8 bytes")
	}

	for _, goarch := range []string{"riscv64", "386", "ppc64le"} {
		filter, err := seccompFilter(goarch)
		require.NoError(t, err)
		assert.Nil(t, filter, "no filter for %s", goarch)
	}
}

// checkNativeRules checks the numbers of the native ABI of goarch (the
// first) against want, package syscall's numbers for it.
func checkNativeRules(t *testing.T, goarch string, want map[string]uintptr) {
	t.Helper()
	got := map[string]uintptr{}
	for _, r := range seccompABIs[goarch][0].rules {
		got[r.name] = uintptr(r.nr)
	}
	for name, nr := range want {
		assert.Equal(t, nr, got[name], name)
	}
}
