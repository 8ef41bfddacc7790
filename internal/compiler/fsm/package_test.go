package fsm_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestPackageName checks the names the generated package may have: any
// Go identifier in lower case, underscores included, and nothing else,
// each refused with the reason.
func TestPackageName(t *testing.T) {
	t.Parallel()
	const spec = "version: 2\nmachine: Bell\npackage: PKG\nstates:\n  Idle:\n    initial: true\n    terminal: true\nevents:\n  Press: {}\nactions:\n  Ring: {}\ntransitions:\n  - from: Idle\n    on: Press\n    action: Ring\n"
	tests := []struct {
		name, want string
	}{
		{"door", ""},
		{"h_base", ""},
		{"door2", ""},
		{"_door", ""},
		{"func", `x.yaml:3:10: package name "func" is a Go keyword`},
		{"_", `x.yaml:3:10: package name "_" is not a Go identifier: use lower-case letters, digits and underscores, starting with a letter`},
		{"2door", `x.yaml:3:10: package name "2door" is not a Go identifier: use lower-case letters, digits and underscores, starting with a letter`},
		{`"h-base"`, `x.yaml:3:10: package name "h-base" is not a Go identifier: use lower-case letters, digits and underscores, starting with a letter`},
		{"HBase", `x.yaml:3:10: package name "HBase" has capitals: Go package names are lower case (hbase), as they are written before every name of the package`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var errs []string
			for _, d := range check("x.yaml", []byte(strings.Replace(spec, "PKG", tt.name, 1))) {
				errs = append(errs, d.String())
				if tt.want != "" {
					assert.Equal(t, "invalid-name", d.Rule, "%s", d)
				}
			}
			if tt.want == "" {
				assert.Empty(t, errs)
			} else {
				assert.Equal(t, []string{tt.want}, errs)
			}
		})
	}
}
