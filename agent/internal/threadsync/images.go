package threadsync

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"regexp"
)

// imageBytes matches an image's media type and bytes in a message's JSON
// (chat.Image: name, media_type, data_base64, in that order), wherever
// the thread holds one: in its messages, and in its state (a message
// typed during a turn waits there, deferred). Within a JSON string a
// quote is escaped: the pattern matches members only.
var imageBytes = regexp.MustCompile(`"media_type":"(image/[a-z0-9.+-]+)","data_base64":"([A-Za-z0-9+/=]*)"`)

// dataMember starts the member that holds an image's bytes.
var dataMember = []byte(`"data_base64":"`)

// withoutImageBytes returns raw, a thread's message or state as JSON, with
// the bytes of each image it holds replaced by their size and SHA-256
// (chat.Image.Size, SHA256); raw itself when it holds none. The synced
// copy of a thread says which image was sent, not what: a thread with a
// few screenshots would otherwise pass the server's limit (32 MiB by
// default), and be sent whole again at every save. The thread on disk
// keeps the bytes.
func withoutImageBytes(raw []byte) []byte {
	if !bytes.Contains(raw, dataMember) {
		return raw
	}
	return imageBytes.ReplaceAllFunc(raw, func(m []byte) []byte {
		sub := imageBytes.FindSubmatch(m)
		data, err := base64.StdEncoding.AppendDecode(nil, sub[2])
		if err != nil { // not what the agent writes: leave it
			return m
		}
		return fmt.Appendf(nil, `"media_type":"%s","size":%d,"sha256":"%x"`, sub[1], len(data), sha256.Sum256(data))
	})
}
