package toolchain

import (
	"strings"
	"testing"
	"testing/fstest"
)

func TestDefaultPinsAreValid(t *testing.T) {
	p, err := DefaultPins()
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"etcd", "kube-apiserver", "kwok", "terraform", "tofu", "terraform-provider-kubernetes"} {
		if _, ok := p.Tool(name); !ok {
			t.Errorf("tool %s is not pinned", name)
		}
	}
	img, err := p.NodeImage("v1.37.0")
	if err != nil || !strings.Contains(img, "@sha256:") {
		t.Errorf("node image for v1.37.0 = %q, %v", img, err)
	}
}

func TestCorruptPinsAreRejectedWithTheFormatDoc(t *testing.T) {
	tools := fstest.MapFS{
		"m/tool.mod": {Data: []byte("module x\n\nrequire example.com/tool v1.0.0\n")},
		"m/tool.sum": {Data: []byte("")},
	}
	good := `{"schema":1,"go":"go1.26.8","tools":[{"name":"t","version":"1.0.0","wrapper":{"dir":"m","module":"example.com/tool","package":"example.com/tool"},"ldflags":"","version_args":["--version"],"version_want":"1.0.0"}]}`
	if _, err := ParsePins([]byte(good), tools); err != nil {
		t.Fatalf("the good pins are rejected: %v", err)
	}
	for name, tc := range map[string]struct{ from, to, want string }{
		"not json":          {`{"schema"`, `{"schema"}`, "invalid character"},
		"truncated":         {good, good[:40], "unexpected EOF"},
		"unknown field":     {`"schema":1`, `"schema":1,"extra":true`, `unknown field "extra"`},
		"wrong schema":      {`"schema":1`, `"schema":2`, "schema 2"},
		"bad go":            {`"go":"go1.26.8"`, `"go":"1.26"`, "toolchain name"},
		"no build":          {`"wrapper":{"dir":"m","module":"example.com/tool","package":"example.com/tool"},`, ``, "exactly one of wrapper and source"},
		"missing module":    {`"dir":"m"`, `"dir":"nope"`, "nope/tool.mod"},
		"module not needed": {`"module":"example.com/tool"`, `"module":"example.com/other"`, "does not require example.com/other"},
		"bad sha":           {`"ldflags":""`, `"ldflags":"","sha256":"abc"`, "64 lowercase hex"},
		"half version":      {`,"version_want":"1.0.0"`, ``, "go together"},
		"unpinned image":    {`]}`, `],"kind":{"version":"v0.33.0","node_images":[{"kubernetes":"v1.37.0","image":"kindest/node:v1.37.0"}]}}`, "pinned as name:tag@sha256"},
	} {
		t.Run(name, func(t *testing.T) {
			bad := strings.Replace(good, tc.from, tc.to, 1)
			if bad == good {
				t.Fatalf("test case does not change the pins")
			}
			_, err := ParsePins([]byte(bad), tools)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want it to contain %q", err, tc.want)
			}
			if !strings.Contains(err.Error(), "third_party/README.md") {
				t.Errorf("error %v does not point at the format documentation", err)
			}
		})
	}
}

func TestKeyChangesWithEveryInput(t *testing.T) {
	p, err := DefaultPins()
	if err != nil {
		t.Fatal(err)
	}
	pin, _ := p.Tool("etcd")
	base := p.key(pin, "linux", "amd64")
	changed := pin
	changed.LDFlags += " -X main.x=y"
	for what, k := range map[string]string{
		"ldflags": p.key(changed, "linux", "amd64"),
		"goarch":  p.key(pin, "linux", "arm64"),
	} {
		if k == base {
			t.Errorf("changing %s keeps the cache key %s", what, base)
		}
	}
	if again := p.key(pin, "linux", "amd64"); again != base {
		t.Errorf("key is not stable: %s then %s", base, again)
	}
}
