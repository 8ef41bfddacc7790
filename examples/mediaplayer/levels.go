package mediaplayer

// Levels is the media player's Behavior, written by hand: how the rules
// of region Volume change the volume's level. It is pure, like every
// Behavior.
type Levels struct{}

var _ Behavior = Levels{}

// maxLevel is the loudest level.
const maxLevel = 10

// Louder raises the volume one step, up to 10.
func (Levels) Louder(level int) int { return min(level+1, maxLevel) }

// Softer lowers the volume one step, down to 0.
func (Levels) Softer(level int) int { return max(level-1, 0) }
