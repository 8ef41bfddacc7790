package fsmtemporal_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	commonpb "go.temporal.io/api/common/v1"
	"go.temporal.io/sdk/converter"

	"github.com/fsmgen/fsmgen/temporal/fsmtemporal"
)

// TestClaimCheck: a payload past the limit is stored and replaced by its
// key, and decoded back whole; one within it is left as it is; a blob
// changed in the store, a missing one and a key that names a path are
// refused with what went wrong.
func TestClaimCheck(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	dc := converter.NewCodecDataConverter(converter.GetDefaultDataConverter(), fsmtemporal.ClaimCheck(fsmtemporal.DirStore(dir), 1024))
	small, big := "hello", strings.Repeat("a conversation ", 1000)
	payloads, err := dc.ToPayloads(small, big)
	require.NoError(t, err)
	ps := payloads.GetPayloads()
	require.Len(t, ps, 2)
	assert.NotEqual(t, fsmtemporal.ClaimCheckEncoding, string(ps[0].GetMetadata()[converter.MetadataEncoding]), "a small payload stays")
	assert.Equal(t, fsmtemporal.ClaimCheckEncoding, string(ps[1].GetMetadata()[converter.MetadataEncoding]), "a large one is passed by reference")
	assert.Len(t, ps[1].GetData(), 64, "its key alone is in the history")
	var gotSmall, gotBig string
	require.NoError(t, dc.FromPayloads(payloads, &gotSmall, &gotBig))
	assert.Equal(t, small, gotSmall)
	assert.Equal(t, big, gotBig)

	key := string(ps[1].GetData())
	tests := []struct {
		name    string
		payload *commonpb.Payload
		prepare func(t *testing.T)
		want    string
	}{
		{"changed in the store", ps[1], func(t *testing.T) {
			require.NoError(t, os.WriteFile(filepath.Join(dir, key), []byte("tampered"), 0o600))
		}, "does not match its key"},
		{"missing", ps[1], func(t *testing.T) { require.NoError(t, os.Remove(filepath.Join(dir, key))) }, "is not in the store"},
		{"a path for a key", &commonpb.Payload{Metadata: ps[1].GetMetadata(), Data: []byte("../../etc/passwd")}, func(*testing.T) {}, "is not a claim check's key"},
	}
	for _, tt := range tests { // in order: each changes the store
		tt.prepare(t)
		var s string
		err := dc.FromPayloads(&commonpb.Payloads{Payloads: []*commonpb.Payload{tt.payload}}, &s)
		require.Error(t, err, tt.name)
		assert.Contains(t, err.Error(), tt.want, tt.name)
	}
}
