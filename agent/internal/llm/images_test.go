package llm

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fsmgen/fsmgen/agent/chat"
	"github.com/fsmgen/fsmgen/agent/internal/fakellm"
)

// TestImagesOnTheWire sends a user message with images of each type the
// APIs take to each provider's fake server, which decodes them from the
// provider's own format (Anthropic's base64 image blocks, OpenAI's data
// URLs in image_url parts) and checks their bytes are of their media type:
// they arrive whole, before the text, and go again with the next request.
func TestImagesOnTheWire(t *testing.T) {
	t.Parallel()
	for _, p := range []fakellm.Provider{fakellm.Anthropic, fakellm.OpenAI} {
		for _, mt := range chat.ImageTypes {
			t.Run(fmt.Sprintf("%s/%s", p, mt), func(t *testing.T) {
				t.Parallel()
				srv := fakellm.New(t, p, fakellm.Reply{Text: "A square."}, fakellm.Reply{Text: "Grey."})
				prov := providerFor(t, p, srv)
				images := []chat.Image{
					{Name: "a", MediaType: mt, Data: fakellm.TestImage(mt, 1)},
					{Name: "b", MediaType: mt, Data: fakellm.TestImage(mt, 2)},
				}
				user := chat.Message{Role: chat.RoleUser, Content: "What are these? [image: a] [image: b]", Images: images}
				req := chat.Request{Model: "a-model", MaxTokens: 100, Messages: []chat.Message{user}}
				resp := complete(t, prov, req)
				req.Messages = append(req.Messages, resp.Message, chat.UserMessage("Which colour?"))
				complete(t, prov, req)

				reqs := srv.Requests()
				require.Len(t, reqs, 2)
				for i, r := range reqs {
					require.Empty(t, r.Invalid, "request %d", i)
					got := r.Messages[0]
					assert.Equal(t, user.Content, got.Text)
					require.Len(t, got.Images, 2, "request %d", i)
					for j, im := range got.Images {
						assert.Equal(t, mt, im.MediaType)
						assert.Equal(t, images[j].Data, im.Data, "image %d of request %d", j, i)
					}
				}
				assert.Empty(t, reqs[1].Messages[2].Images)
				assert.Equal(t, []string{"image", "image", "text"}, partTypes(t, p, reqs[0].Body), "the images before the text")
			})
		}
	}
}

// partTypes returns the types of the parts of the first message of a
// request body of provider p.
func partTypes(t *testing.T, p fakellm.Provider, body []byte) []string {
	t.Helper()
	var b struct {
		Messages []struct {
			Role    string `json:"role"`
			Content []struct {
				Type string `json:"type"`
			} `json:"content"`
		} `json:"messages"`
	}
	require.NoError(t, json.Unmarshal(body, &b))
	var types []string
	for _, m := range b.Messages {
		if m.Role != "user" {
			continue
		}
		for _, c := range m.Content {
			typ := c.Type
			if typ == "image_url" { // OpenAI's name of an image part
				typ = "image"
			}
			types = append(types, typ)
		}
		break
	}
	return types
}

// TestImagesRefused checks the requests with images the agent refuses
// before sending, for either provider, and that the fake server refuses,
// as the API would, an image whose bytes are not of its media type.
func TestImagesRefused(t *testing.T) {
	t.Parallel()
	png := fakellm.TestImage("image/png", 1)
	pngSize := chat.FormatBytes(len(png))
	tests := []struct {
		name     string
		msg      chat.Message
		textOnly bool
		sent     bool
		want     string
	}{
		{"a model that takes no images", chat.Message{Role: chat.RoleUser, Content: "x",
			Images: []chat.Image{{Name: "a.png", MediaType: "image/png", Data: png}}}, true, false,
			"message 0 holds [image: a.png, " + pngSize + "], and a-model takes no images (agent -model list); go on with a model that takes them (/model NAME)"},
		{"a type the APIs do not take", chat.Message{Role: chat.RoleUser, Content: "x",
			Images: []chat.Image{{Name: "a.bmp", MediaType: "image/bmp", Data: []byte("BM")}}}, false, false,
			`message 0 holds [image: a.bmp, 2 bytes] of type "image/bmp"; the APIs take image/png, image/jpeg, image/gif, image/webp`},
		{"too large", chat.Message{Role: chat.RoleUser, Content: "x",
			Images: []chat.Image{{Name: "big.png", MediaType: "image/png", Data: make([]byte, chat.MaxImageBytes+1)}}}, false, false,
			"message 0 holds [image: big.png, 3.9 MB], larger than the 3.9 MB an image may have"},
		{"an image in an assistant message", chat.Message{Role: chat.RoleAssistant, Content: "x",
			Images: []chat.Image{{Name: "a.png", MediaType: "image/png", Data: png}}}, false, false,
			"message 0 (the assistant's) holds [image: a.png, " + pngSize + "]; only the user's messages may"},
		{"bytes not of the media type: the API refuses", chat.Message{Role: chat.RoleUser, Content: "x",
			Images: []chat.Image{{Name: "a.jpg", MediaType: "image/jpeg", Data: png}}}, false, true,
			"image does not match the provided media type image/jpeg (its bytes are image/png)"},
	}
	for _, p := range []fakellm.Provider{fakellm.Anthropic, fakellm.OpenAI} {
		for _, tt := range tests {
			t.Run(fmt.Sprintf("%s/%s", p, tt.name), func(t *testing.T) {
				t.Parallel()
				srv := fakellm.New(t, p, fakellm.Reply{Text: "Seen."})
				cfg := Config{APIKey: testKey, BaseURL: srv.BaseURL()}
				if tt.textOnly {
					cfg.TextOnly = func(m string) bool { return m == "a-model" }
				}
				prov, err := New(string(p), cfg)
				require.NoError(t, err)
				msgs := []chat.Message{tt.msg}
				if tt.msg.Role == chat.RoleAssistant {
					msgs = append(msgs, chat.UserMessage("And?"))
				}
				rec, _ := streamOutcome(t, prov, context.Background(), chat.Request{Model: "a-model", MaxTokens: 100, Messages: msgs})
				failed, ok := rec.terminal(t).(Failed)
				require.True(t, ok, "the request is refused")
				assert.Equal(t, chat.ErrInvalidRequest, failed.Err.Kind)
				assert.Contains(t, failed.Err.Message, tt.want)
				assert.Equal(t, tt.sent, len(srv.Requests()) > 0, "sent to the API")
			})
		}
	}
}
