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

// SwitchOn starts the first cycle on red.
func (t Timing) SwitchOn() (int, string, time.Duration) {
	return 0, ColorRed, t.Red
}

// TurnGreen picks green and how long it lasts.
func (t Timing) TurnGreen() (string, time.Duration) {
	return ColorGreen, t.Green
}

// TurnYellow picks yellow and how long it lasts.
func (t Timing) TurnYellow() (string, time.Duration) {
	return ColorYellow, t.Yellow
}

// EndCycle counts the cycle that ends and picks red and how long it lasts.
func (t Timing) EndCycle(cycles int) (int, string, time.Duration) {
	return cycles + 1, ColorRed, t.Red
}
