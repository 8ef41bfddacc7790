package sandbox

import "fmt"

// Mode says whether and how commands are confined.
type Mode string

// The modes. The zero Mode means Auto.
const (
	// Auto confines commands with bubblewrap when it works here, and
	// refuses to run them otherwise: it never falls back to running them
	// unconfined.
	Auto Mode = "auto"
	// Bwrap confines commands with bubblewrap; [New] fails when it does
	// not work here.
	Bwrap Mode = "bwrap"
	// Off runs commands unconfined, as the agent's user, with only the
	// curated environment and the process-group kill. It must be chosen
	// explicitly.
	Off Mode = "off"
)

// ParseMode returns the mode named s: "auto", "bwrap" or "off".
func ParseMode(s string) (Mode, error) {
	switch m := Mode(s); m {
	case Auto, Bwrap, Off:
		return m, nil
	}
	return "", fmt.Errorf("unknown sandbox mode %q; use auto, bwrap or off", s)
}

// String returns the mode's name; the zero Mode is "auto".
func (m Mode) String() string {
	if m == "" {
		return string(Auto)
	}
	return string(m)
}

// Set implements flag.Value, so that a Mode can be a command-line flag.
func (m *Mode) Set(s string) error {
	v, err := ParseMode(s)
	if err != nil {
		return err
	}
	*m = v
	return nil
}
