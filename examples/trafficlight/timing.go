package trafficlight

import "time"

// The colors the light shows, as SwitchLights names them.
const (
	ColorRed    = "red"
	ColorGreen  = "green"
	ColorYellow = "yellow"
)

// Timing is the light's Behavior, written by hand: how long each color
// lasts, and how many cycles run before the light switches itself off. It
// is pure, like every Behavior: the same events give the same actions.
type Timing struct {
	// Red, Green and Yellow are how long each color is shown.
	Red, Green, Yellow time.Duration
	// Cycles is the number of cycles (red, green, yellow) after which the
	// light switches itself off; 0 means it never does.
	Cycles int
}

var _ Behavior = Timing{}

// LastCycle reports whether the yellow that ends now ends the last cycle:
// cycles have completed before it.
func (t Timing) LastCycle(cycles int) bool {
	return t.Cycles > 0 && cycles+1 >= t.Cycles
}

// SwitchOn starts the first cycle.
func (Timing) SwitchOn() int { return 0 }

// ShowRed picks red.
func (Timing) ShowRed() string { return ColorRed }

// ShowGreen picks green.
func (Timing) ShowGreen() string { return ColorGreen }

// ShowYellow picks yellow.
func (Timing) ShowYellow() string { return ColorYellow }

// RedTime says how long red lasts.
func (t Timing) RedTime() time.Duration { return t.Red }

// GreenTime says how long green lasts.
func (t Timing) GreenTime() time.Duration { return t.Green }

// YellowTime says how long yellow lasts.
func (t Timing) YellowTime() time.Duration { return t.Yellow }

// EndCycle counts the cycle that ends.
func (Timing) EndCycle(cycles int) int { return cycles + 1 }
