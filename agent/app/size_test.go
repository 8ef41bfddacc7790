package app

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestByteSize(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in      string
		want    int64
		str     string
		wantErr bool
	}{
		{in: "65536", want: 65536, str: "64KiB"},
		{in: "64KiB", want: 64 << 10, str: "64KiB"},
		{in: "16MiB", want: 16 << 20, str: "16MiB"},
		{in: "16M", want: 16 << 20, str: "16MiB"},
		{in: "2 GB", want: 2 << 30, str: "2GiB"},
		{in: "100B", want: 100, str: "100"},
		{in: "1500", want: 1500, str: "1500"},
		{in: "0", wantErr: true},
		{in: "-1MiB", wantErr: true},
		{in: "lots", wantErr: true},
		{in: "9999999999GiB", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			t.Parallel()
			var b byteSize
			err := b.Set(tt.in)
			if tt.wantErr {
				require.Error(t, err)
				assert.Contains(t, err.Error(), "is not a size")
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, int64(b))
			assert.Equal(t, tt.str, b.String())
		})
	}
}
