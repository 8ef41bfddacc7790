package rollout

// Checks is the rollout's Behavior: three passing probes promote the
// release, two failed ones roll it back.
type Checks struct{}

// EnoughHealthy reports whether three probes passed.
func (Checks) EnoughHealthy(healthy int) bool { return healthy >= 3 }

// TooManyFailed reports whether two probes failed.
func (Checks) TooManyFailed(failed int) bool { return failed >= 2 }

// Count counts a probe's result.
func (Checks) Count(healthy, failed int, ok bool) (int, int) {
	if ok {
		return healthy + 1, failed
	}
	return healthy, failed + 1
}
