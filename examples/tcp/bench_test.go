package tcp_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/fsmgen/fsmgen/examples/tcp"
)

// discard is a Handler that performs no action, so that a benchmark
// measures the machine alone.
type discard struct{}

var _ tcp.Handler = discard{}

// The methods of discard do nothing.
func (discard) CreateTCB()                                      {}
func (discard) DeleteTCB()                                      {}
func (discard) SendSyn()                                        {}
func (discard) SendSynAck()                                     {}
func (discard) SendAck()                                        {}
func (discard) SendFin()                                        {}
func (discard) SendRst()                                        {}
func (discard) SendData()                                       {}
func (discard) QueueData()                                      {}
func (discard) SignalReset()                                    {}
func (discard) SignalRefused()                                  {}
func (discard) StartTimer(tcp.TimerID, time.Duration) time.Time { return time.Time{} }
func (discard) CancelTimer(tcp.TimerID)                         {}

// depthCases are events that stay in their state, each handled by a rule
// written at a different depth above the leaf the machine is in. Each
// emits one action, so the cases differ only in where the rule is found.
var depthCases = []struct {
	name  string
	state tcp.State
	ev    tcp.Event
}{
	// Established's own rule: Send -> SendData.
	{name: "own rule (Send in Established)", state: tcp.Established{}, ev: &tcp.Send{}},
	// FinsExchanged's rule, one level above Closing.
	{name: "1 level up (Fin in Closing, FinsExchanged's rule)", state: tcp.Closing{}, ev: &tcp.Fin{}},
	// Connection's rule, two levels above Established.
	{name: "2 levels up (Syn in Established, Connection's rule)", state: tcp.Established{}, ev: &tcp.Syn{}},
	// Connection's rule, three levels above TimeWait: TimeWait is in
	// FinsExchanged, in Synchronized, in Connection.
	{name: "3 levels up (Syn in TimeWait, Connection's rule)", state: tcp.TimeWait{}, ev: &tcp.Syn{}},
}

// BenchmarkRuleDepth compares an event handled by the leaf's own rule with
// events handled by a composite state's rule up to three levels above the
// leaf. fsmgen resolves composite rules when it generates the code: every
// state's case of HandleEvent holds the composite rules it takes beside
// its own (written out when small, else called), so the depth of a rule
// costs nothing at run time. No case allocates.
func BenchmarkRuleDepth(b *testing.B) {
	for _, bc := range depthCases {
		b.Run(bc.name, func(b *testing.B) {
			m, err := tcp.Restore(tcp.Config{Behavior: tcp.Stack{MSL: tcp.MSL}, Handler: discard{}}, bc.state)
			require.NoError(b, err)
			b.ReportAllocs()
			for b.Loop() {
				if err := m.HandleEvent(bc.ev); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestRuleDepthAllocs checks what the benchmark reports about allocation:
// an event handled by a rule at any depth allocates nothing, and leaves
// the machine where it was.
func TestRuleDepthAllocs(t *testing.T) {
	for _, tc := range depthCases {
		t.Run(tc.name, func(t *testing.T) {
			m, err := tcp.Restore(tcp.Config{Behavior: tcp.Stack{MSL: tcp.MSL}, Handler: discard{}}, tc.state)
			require.NoError(t, err)
			allocs := testing.AllocsPerRun(100, func() {
				if err := m.HandleEvent(tc.ev); err != nil {
					t.Fatal(err)
				}
			})
			require.Zero(t, allocs)
			require.Equal(t, tc.state, m.State())
		})
	}
}
