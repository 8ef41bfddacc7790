package fakellm

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"image"
	"image/gif"
	"image/jpeg"
	"image/png"
	"net/http"
	"slices"
	"strings"

	"github.com/fsmgen/fsmgen/agent/chat"
)

// The image blocks of a request are checked as the APIs check them: a
// request whose image the API would refuse is answered 400 with the
// API's kind of message (Request.Invalid), so that a test sees the
// agent send images the real API takes.

// anthropicImageTypes are the media types the Messages API takes.
var anthropicImageTypes = []string{"image/jpeg", "image/png", "image/gif", "image/webp"}

// maxAnthropicImage is the most base64 an Anthropic image block may
// hold: 5 MB.
const maxAnthropicImage = 5 << 20

// anthropicImage reads the source of an Anthropic image block:
// {"type": "base64", "media_type": ..., "data": ...}.
func anthropicImage(src imageSource) (chat.Image, error) {
	switch {
	case src.Type != "base64":
		return chat.Image{}, fmt.Errorf("image.source.type: the agent sends %q sources only, not %q", "base64", src.Type)
	case !slices.Contains(anthropicImageTypes, src.MediaType):
		return chat.Image{}, fmt.Errorf("image.source.media_type: input should be %s", strings.Join(anthropicImageTypes, ", "))
	case len(src.Data) > maxAnthropicImage:
		return chat.Image{}, fmt.Errorf("image.source.base64: image exceeds 5 MB maximum: %d bytes > %d bytes", len(src.Data), maxAnthropicImage)
	}
	return decodeImage(src.MediaType, src.Data)
}

// imageSource is the source of an Anthropic image block.
type imageSource struct {
	Type      string `json:"type"`
	MediaType string `json:"media_type"`
	Data      string `json:"data"`
}

// openAIImage reads the URL of an OpenAI image_url part, which the agent
// sends as a data URL: data:image/png;base64,....
func openAIImage(url string) (chat.Image, error) {
	rest, ok := strings.CutPrefix(url, "data:")
	mediaType, data, ok2 := strings.Cut(rest, ";base64,")
	if !ok || !ok2 {
		return chat.Image{}, fmt.Errorf("invalid image_url: the agent sends base64 data URLs only, not %.40q", url)
	}
	if !slices.Contains(chat.ImageTypes, mediaType) {
		return chat.Image{}, fmt.Errorf("invalid MIME type %q: only image types are supported", mediaType)
	}
	return decodeImage(mediaType, data)
}

// decodeImage decodes an image's base64 and checks that its bytes are of
// the media type it is said to be, as the APIs do.
func decodeImage(mediaType, data string) (chat.Image, error) {
	b, err := base64.StdEncoding.DecodeString(data)
	if err != nil {
		return chat.Image{}, fmt.Errorf("invalid base64 image data: %w", err)
	}
	if got := http.DetectContentType(b); got != mediaType {
		return chat.Image{}, fmt.Errorf("image does not match the provided media type %s (its bytes are %s)", mediaType, got)
	}
	return chat.Image{MediaType: mediaType, Data: b}, nil
}

// TestImage returns a small image of mediaType (image/png, image/jpeg,
// image/gif; image/webp is a WebP header, which is all the APIs' type
// check reads), its picture varied by n, for tests to attach.
func TestImage(mediaType string, n int) []byte {
	img := image.NewRGBA(image.Rect(0, 0, 4, 4))
	for i := range img.Pix {
		img.Pix[i] = byte(n * 37)
	}
	var b bytes.Buffer
	var err error
	switch mediaType {
	case "image/png":
		err = png.Encode(&b, img)
	case "image/jpeg":
		err = jpeg.Encode(&b, img, nil)
	case "image/gif":
		err = gif.Encode(&b, img, nil)
	case "image/webp":
		body := append([]byte("WEBPVP8L"), 0x2f, byte(n), 0, 0, 0)
		b.WriteString("RIFF")
		_ = binary.Write(&b, binary.LittleEndian, uint32(len(body)))
		b.Write(body)
	default:
		panic("fakellm.TestImage: no image of type " + mediaType)
	}
	if err != nil {
		panic(err) // encoding into memory does not fail
	}
	return b.Bytes()
}
