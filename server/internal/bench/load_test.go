package bench_test

import (
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestPingLoad checks the benchmarks' load against a server that answers
// as each case says.
func TestPingLoad(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name         string
		clients, per int
		status       func(path string) int // the answer to a request for path
		wantLat      int
		wantErr      string
		wantPaths    int // the requests the server got
	}{
		{"every ping answered", 4, 5, func(string) int { return http.StatusOK }, 20, "", 20},
		{"some refused", 3, 4, func(p string) int {
			if p == "/ping/0-1" || p == "/ping/2-3" {
				return http.StatusTooManyRequests
			}
			return http.StatusOK
		}, 10, "2 pings failed", 12},
		{"one client", 1, 3, func(string) int { return http.StatusOK }, 3, "", 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var mu sync.Mutex
			var paths []string
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				mu.Lock()
				paths = append(paths, r.URL.Path)
				mu.Unlock()
				w.WriteHeader(tt.status(r.URL.Path))
			}))
			defer srv.Close()
			lat, elapsed, err := pingLoad(tt.clients, tt.per, func(c, i int) string {
				return srv.URL + "/ping/" + strconv.Itoa(c) + "-" + strconv.Itoa(i)
			})
			if tt.wantErr != "" {
				require.EqualError(t, err, tt.wantErr)
			} else {
				require.NoError(t, err)
			}
			assert.Len(t, lat, tt.wantLat, "a latency for each ping answered 200")
			assert.True(t, slices.IsSorted(lat), "sorted")
			if len(lat) > 0 {
				assert.Positive(t, lat[0])
				assert.LessOrEqual(t, lat[len(lat)-1], elapsed)
			}
			mu.Lock()
			defer mu.Unlock()
			assert.Len(t, paths, tt.wantPaths)
			for c := range tt.clients {
				for i := range tt.per {
					assert.Contains(t, paths, "/ping/"+strconv.Itoa(c)+"-"+strconv.Itoa(i), "client %d's ping %d", c, i)
				}
			}
		})
	}
}
