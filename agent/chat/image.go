package chat

import (
	"bytes"
	"fmt"
	"strconv"
)

// Image is a picture the user attached to a message (an @path mention of
// an image file, or the path of one pasted), sent to the model as an
// image block beside the message's text. Its bytes are kept in the
// thread with the message (as base64 in its JSON), so that every later
// request sends it again, as the providers need.
type Image struct {
	// Name is the name the user gave the file, e.g. "shot.png", shown in
	// the message's marker (see Marker).
	Name string `json:"name"`
	// MediaType is the image's format: one of ImageTypes.
	MediaType string `json:"media_type"`
	// Data is the image file's bytes. A log other than the thread leaves
	// them out (see agentexec's event log): it says which image, not what.
	Data []byte `json:"data_base64,omitempty"`
	// Size and SHA256 stand for Data in a copy of the thread that leaves
	// the bytes out, the one synced to the server (see the agent's
	// threadsync): the image's size in bytes and the hex SHA-256 of its
	// bytes, which tell which file it was. Unset where Data is set.
	Size   int    `json:"size,omitempty"`
	SHA256 string `json:"sha256,omitempty"`
}

// equal reports whether two images are the same.
func (im Image) equal(o Image) bool {
	return im.Name == o.Name && im.MediaType == o.MediaType && bytes.Equal(im.Data, o.Data) &&
		im.Size == o.Size && im.SHA256 == o.SHA256
}

// ImageTypes are the media types of the images the providers take:
// PNG, JPEG, GIF (its first frame) and WebP.
var ImageTypes = []string{"image/png", "image/jpeg", "image/gif", "image/webp"}

// MaxImageBytes is the largest image the agent sends: Anthropic's API
// takes an image of at most 5 MB of base64 (5 MiB, the bytes of which
// base64 makes of 3.75 MiB of image); OpenAI's takes larger ones.
const MaxImageBytes = 5 << 20 * 3 / 4

// MaxImages is the most images one message may carry. Anthropic's API
// takes up to 100 images a request, and 32 MB in all: a few messages'
// worth of images.
const MaxImages = 8

// ImageTokens is what Size counts for an image in the request, in bytes
// of text as the compaction threshold counts them (three a token):
// Anthropic scales an image down to about 1.15 megapixels, some 1,600
// tokens, and OpenAI counts at most a few more tokens for its tiles, so
// that an image costs at most this much whatever the bytes of its file.
const ImageTokens = 1600

// imageSize is what Size counts for an image.
const imageSize = ImageTokens * 3

// Marker is how the image is shown in the message it is attached to, and
// in /history and on resume: "[image: shot.png, 120 KB]".
func (im Image) Marker() string {
	n := len(im.Data)
	if n == 0 {
		n = im.Size // a copy without the bytes
	}
	return fmt.Sprintf("[image: %s, %s]", im.Name, FormatBytes(n))
}

// FormatBytes writes a size for people: "812 bytes", "120 KB", "3.4 MB"
// (kilo- and megabytes of 1,000 and 1,000,000 bytes, as file managers
// show them).
func FormatBytes(n int) string {
	switch {
	case n < 1000:
		return strconv.Itoa(n) + " bytes"
	case n < 1_000_000:
		return fmt.Sprintf("%d KB", (n+500)/1000)
	default:
		return fmt.Sprintf("%.1f MB", float64(n)/1e6)
	}
}
