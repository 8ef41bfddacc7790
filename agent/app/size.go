package app

import (
	"fmt"
	"strconv"
	"strings"
)

// byteSize is a flag.Value of a size in bytes, written as a number with
// an optional unit: "1048576", "64KiB", "16MiB", "1GiB" (K, M and G, with
// or without "iB" or "B", are powers of 1024 too).
type byteSize int64

// units are the multipliers of byteSize's units, longest suffix first.
var units = []struct {
	suffix string
	mult   int64
}{
	{"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10},
	{"GB", 1 << 30}, {"MB", 1 << 20}, {"KB", 1 << 10},
	{"G", 1 << 30}, {"M", 1 << 20}, {"K", 1 << 10},
	{"B", 1},
}

// Set implements flag.Value.
func (b *byteSize) Set(s string) error {
	num, mult := strings.TrimSpace(s), int64(1)
	for _, u := range units {
		if n, ok := strings.CutSuffix(num, u.suffix); ok {
			num, mult = strings.TrimSpace(n), u.mult
			break
		}
	}
	n, err := strconv.ParseInt(num, 10, 64)
	if err != nil || n <= 0 || n > (1<<62)/mult {
		return fmt.Errorf("%q is not a size: give a positive number of bytes, e.g. 65536, 64KiB or 16MiB", s)
	}
	*b = byteSize(n * mult)
	return nil
}

// String implements flag.Value: the size in the largest unit that divides
// it.
func (b *byteSize) String() string {
	n := int64(*b)
	for _, u := range units[:3] {
		if n >= u.mult && n%u.mult == 0 {
			return strconv.FormatInt(n/u.mult, 10) + u.suffix
		}
	}
	return strconv.FormatInt(n, 10)
}
