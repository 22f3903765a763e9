package wire

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"io"
	"net/http"
)

// peekCreate reads a create's body, up to the body limit, for the new
// object's metadata.name (or generateName), and puts the body back to be
// forwarded byte for byte. Only creates are read: every other verb names
// its object in the path, and creates are short, never streaming bodies.
func (p *Proxy) peekCreate(r *http.Request, info *Request) error {
	if r.Body == nil || r.Body == http.NoBody || r.ContentLength > p.o.bodyLimit {
		return nil
	}
	buf, err := io.ReadAll(io.LimitReader(r.Body, p.o.bodyLimit+1))
	if err != nil {
		return err
	}
	if int64(len(buf)) > p.o.bodyLimit {
		// A body of unknown length turned out too big: send what was
		// read, then the rest, and leave the name unknown.
		r.Body = readCloser{io.MultiReader(bytes.NewReader(buf), r.Body), r.Body}
		return nil
	}
	r.Body, r.ContentLength = io.NopCloser(bytes.NewReader(buf)), int64(len(buf))
	info.Name, info.GenerateName = objectName(buf)
	return nil
}

type readCloser struct {
	io.Reader
	io.Closer
}

// k8sProtobufMagic starts every protobuf body Kubernetes clients send.
var k8sProtobufMagic = []byte("k8s\x00")

// objectName finds metadata.name and metadata.generateName in an object
// encoded as JSON or as Kubernetes protobuf (which client-go's typed
// clients send for built-in kinds). Anything else has no name here; that
// is not an error, the server judges the body.
func objectName(body []byte) (name, generateName string) {
	if rest, ok := bytes.CutPrefix(body, k8sProtobufMagic); ok {
		return protobufName(rest)
	}
	var obj struct {
		Metadata struct {
			Name         string `json:"name"`
			GenerateName string `json:"generateName"`
		} `json:"metadata"`
	}
	if json.Unmarshal(body, &obj) != nil {
		return "", ""
	}
	return obj.Metadata.Name, obj.Metadata.GenerateName
}

// protobufName reads the names out of a runtime.Unknown envelope: its
// field 2 is the object, whose field 1 is ObjectMeta for every built-in
// kind, whose fields 1 and 2 are name and generateName.
func protobufName(envelope []byte) (name, generateName string) {
	obj, ok := protoBytes(envelope, 2)
	if !ok {
		return "", ""
	}
	meta, ok := protoBytes(obj, 1)
	if !ok {
		return "", ""
	}
	n, _ := protoBytes(meta, 1)
	g, _ := protoBytes(meta, 2)
	return string(n), string(g)
}

// protoBytes returns the first length-delimited field number num of a
// protobuf message. It walks only the wire format, so it needs no schema,
// and gives up (false) on anything malformed.
func protoBytes(msg []byte, num uint64) ([]byte, bool) {
	for len(msg) > 0 {
		key, n := binary.Uvarint(msg)
		if n <= 0 {
			return nil, false
		}
		msg = msg[n:]
		switch key & 7 {
		case 0: // varint
			if _, n = binary.Uvarint(msg); n <= 0 {
				return nil, false
			}
			msg = msg[n:]
		case 1: // fixed 64-bit
			if len(msg) < 8 {
				return nil, false
			}
			msg = msg[8:]
		case 5: // fixed 32-bit
			if len(msg) < 4 {
				return nil, false
			}
			msg = msg[4:]
		case 2: // length-delimited
			l, n := binary.Uvarint(msg)
			if n <= 0 || l > uint64(len(msg)-n) {
				return nil, false
			}
			field := msg[n : n+int(l)]
			if key>>3 == num {
				return field, true
			}
			msg = msg[n+int(l):]
		default: // groups, long deprecated, and garbage
			return nil, false
		}
	}
	return nil, false
}
