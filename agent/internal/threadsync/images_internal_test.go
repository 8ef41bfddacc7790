package threadsync

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fsmgen/fsmgen/agent/chat"
)

// TestWithoutImageBytes: each image of a message, or of a state that
// holds one, loses its bytes for their size and SHA-256, and nothing else
// changes; JSON without images is returned as it is.
func TestWithoutImageBytes(t *testing.T) {
	t.Parallel()
	a, b := []byte("first image"), []byte("the second, a little longer")
	hash := func(d []byte) string { s := sha256.Sum256(d); return hex.EncodeToString(s[:]) }
	enc := func(v any) []byte {
		out, err := json.Marshal(v)
		require.NoError(t, err)
		return out
	}
	withImages := chat.Message{Role: chat.RoleUser, Content: "see [image: a.png, 11 bytes]", Images: []chat.Image{
		{Name: "a.png", MediaType: "image/png", Data: a}, {Name: "b b.jpg", MediaType: "image/jpeg", Data: b}}}
	stripped := withImages
	stripped.Images = []chat.Image{{Name: "a.png", MediaType: "image/png", Size: len(a), SHA256: hash(a)},
		{Name: "b b.jpg", MediaType: "image/jpeg", Size: len(b), SHA256: hash(b)}}
	// A message that only talks about images, as text: a string's quotes
	// are escaped, and it is left as it is.
	talk := chat.Message{Role: chat.RoleAssistant, Content: `{"media_type":"image/png","data_base64":"AAAA"}`}
	tests := []struct {
		name string
		in   []byte
		want []byte
		same bool // in itself is returned, not a copy
	}{
		{"no image", enc(chat.UserMessage("hello")), enc(chat.UserMessage("hello")), true},
		{"two images", enc(withImages), enc(stripped), false},
		{"text about images", enc(talk), enc(talk), true},
		{"a state holding a deferred message", enc(map[string]any{"kind": "running", "deferred": []any{map[string]any{"message": withImages}}}),
			enc(map[string]any{"kind": "running", "deferred": []any{map[string]any{"message": stripped}}}), false},
		{"not base64: left", []byte(`{"media_type":"image/png","data_base64":"A"}`), []byte(`{"media_type":"image/png","data_base64":"A"}`), false},
		{"empty", nil, nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := withoutImageBytes(tt.in)
			assert.JSONEq(t, string(orNull(tt.want)), string(orNull(got)))
			if tt.same {
				assert.Same(t, &tt.in[0], &got[0], "returned as it is")
			}
		})
	}
	var back chat.Message
	require.NoError(t, json.Unmarshal(withoutImageBytes(enc(withImages)), &back))
	assert.Equal(t, "[image: a.png, 11 bytes]", back.Images[0].Marker(), "the marker says the size without the bytes")
}

// orNull is b, or null when it is empty.
func orNull(b []byte) []byte {
	if len(b) == 0 {
		return []byte("null")
	}
	return b
}
