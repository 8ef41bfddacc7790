package fsmtemporal

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	commonpb "go.temporal.io/api/common/v1"
	"go.temporal.io/sdk/converter"
	"google.golang.org/protobuf/proto"
)

// ClaimCheckEncoding is the encoding of a payload ClaimCheck replaced by
// its reference.
const ClaimCheckEncoding = "fsmgen/claim-check"

// BlobStore keeps the payloads ClaimCheck takes out of Temporal's history,
// by key (the SHA-256 of the payload, in hexadecimal): every client and
// worker of the workflows must reach the same store. Put may be called
// again with a key it has: the bytes are the same.
type BlobStore interface {
	Put(key string, data []byte) error
	Get(key string) ([]byte, error)
}

// ClaimCheck returns a payload codec that passes payloads larger than limit
// bytes by reference: it puts them in store and writes their key in their
// place, and reads them back (checking their hash) when they are decoded.
// A machine whose state or actions may grow past Temporal's payload limit
// (2 MB by default; a conversation, say) runs with it in the data
// converter of its client and of every worker:
//
//	dc := converter.NewCodecDataConverter(converter.GetDefaultDataConverter(), fsmtemporal.ClaimCheck(store, 512<<10))
//
// The history then holds the keys; the store must keep the blobs as long
// as the histories that name them may be replayed or read.
func ClaimCheck(store BlobStore, limit int) converter.PayloadCodec {
	return &claimCheck{store: store, limit: limit}
}

type claimCheck struct {
	store BlobStore
	limit int
}

// Encode implements converter.PayloadCodec.
func (c *claimCheck) Encode(payloads []*commonpb.Payload) ([]*commonpb.Payload, error) {
	out := make([]*commonpb.Payload, len(payloads))
	for i, p := range payloads {
		if proto.Size(p) <= c.limit {
			out[i] = p
			continue
		}
		data, err := proto.Marshal(p)
		if err != nil {
			return nil, fmt.Errorf("fsmtemporal: claim check: encode a payload of %d bytes: %w", proto.Size(p), err)
		}
		sum := sha256.Sum256(data)
		key := hex.EncodeToString(sum[:])
		if err := c.store.Put(key, data); err != nil {
			return nil, fmt.Errorf("fsmtemporal: claim check: store a payload of %d bytes: %w", len(data), err)
		}
		out[i] = &commonpb.Payload{Metadata: map[string][]byte{converter.MetadataEncoding: []byte(ClaimCheckEncoding)}, Data: []byte(key)}
	}
	return out, nil
}

// Decode implements converter.PayloadCodec.
func (c *claimCheck) Decode(payloads []*commonpb.Payload) ([]*commonpb.Payload, error) {
	out := make([]*commonpb.Payload, len(payloads))
	for i, p := range payloads {
		if string(p.GetMetadata()[converter.MetadataEncoding]) != ClaimCheckEncoding {
			out[i] = p
			continue
		}
		key := string(p.GetData())
		data, err := c.store.Get(key)
		if err != nil {
			return nil, fmt.Errorf("fsmtemporal: claim check: the payload %s is not in the store: %w (every client and worker needs the same store)", key, err)
		}
		if sum := sha256.Sum256(data); hex.EncodeToString(sum[:]) != key {
			return nil, fmt.Errorf("fsmtemporal: claim check: the stored payload %s does not match its key: the store was changed", key)
		}
		var full commonpb.Payload
		if err := proto.Unmarshal(data, &full); err != nil {
			return nil, fmt.Errorf("fsmtemporal: claim check: decode the stored payload %s: %w", key, err)
		}
		out[i] = &full
	}
	return out, nil
}

// DirStore is a BlobStore in a directory, one file a key: for workers of
// one host, or a directory every host mounts.
type DirStore string

// Put implements BlobStore: the file is written whole (a temporary file
// renamed), once.
func (d DirStore) Put(key string, data []byte) error {
	path, err := d.path(key)
	if err != nil {
		return err
	}
	if _, err := os.Stat(path); err == nil {
		return nil
	}
	if err := os.MkdirAll(string(d), 0o700); err != nil {
		return err
	}
	f, err := os.CreateTemp(string(d), ".put-*")
	if err != nil {
		return err
	}
	_, werr := f.Write(data)
	cerr := f.Close()
	if err := errors.Join(werr, cerr); err != nil {
		_ = os.Remove(f.Name())
		return err
	}
	return os.Rename(f.Name(), path)
}

// Get implements BlobStore.
func (d DirStore) Get(key string) ([]byte, error) {
	path, err := d.path(key)
	if err != nil {
		return nil, err
	}
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("no blob %s in %s", key, string(d))
	}
	return data, err
}

// path is the file of key, which must be a SHA-256 in hexadecimal: a key
// read from a history never names a file outside the directory.
func (d DirStore) path(key string) (string, error) {
	if b, err := hex.DecodeString(key); err != nil || len(b) != sha256.Size {
		return "", fmt.Errorf("%q is not a claim check's key (a SHA-256 in hexadecimal)", key)
	}
	return filepath.Join(string(d), key), nil
}
