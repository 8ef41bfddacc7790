package schedule

import (
	"testing"
	"time"
)

// BenchmarkNext measures one Next call per monitor, as a server computing
// every monitor's next run time at start-up does.
func BenchmarkNext(b *testing.B) {
	for _, bc := range []struct{ zone, expr string }{
		{"UTC", "*/15 * * * *"},
		{"America/New_York", "30 2 * * *"},
		{"America/New_York", "0 9 * * MON-FRI"},
		{"Australia/Sydney", "@daily"},
		{"Europe/Berlin", "0 0 1 */3 *"},
		{"America/New_York", "0 0 29 2 *"},
	} {
		b.Run(bc.zone+" "+bc.expr, func(b *testing.B) {
			c := mustCron(b, bc.expr, load(b, bc.zone))
			from := time.Date(2025, 6, 1, 12, 34, 56, 0, time.UTC)
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				// A different instant each time, over a year.
				c.Next(from.Add(time.Duration(i%525600) * time.Minute))
			}
		})
	}
}

func BenchmarkParseCron(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if _, err := ParseCron("*/15 9-17 * * MON-FRI", time.UTC); err != nil {
			b.Fatal(err)
		}
	}
}
