package toolchain

import (
	"bytes"
	"encoding/json"
	"io/fs"
	"slices"
	"strings"
	"testing"
	"testing/fstest"

	thirdparty "github.com/gauntlet-k8s/gauntlet/third_party"
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

func embeddedPins(t *testing.T) (string, fs.FS) {
	t.Helper()
	b, err := fs.ReadFile(thirdparty.Files, "pins.json")
	if err != nil {
		t.Fatal(err)
	}
	sub, err := fs.Sub(thirdparty.Files, "tools")
	if err != nil {
		t.Fatal(err)
	}
	return string(b), sub
}

func TestPinsFileIsExactlyWhatThePinsMarshalTo(t *testing.T) {
	raw, _ := embeddedPins(t)
	p, err := DefaultPins()
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(p); err != nil {
		t.Fatal(err)
	}
	if buf.String() != raw {
		t.Errorf("pins.json does not round-trip through Pins (a tool rewriting pins would reformat it); marshalled:\n%s", buf.String())
	}
}

func TestGroupedToolsStayOutOfTheDefaultSet(t *testing.T) {
	p, err := DefaultPins()
	if err != nil {
		t.Fatal(err)
	}
	def := p.DefaultToolNames()
	for _, name := range p.GroupToolNames(GroupKindNode) {
		if slices.Contains(def, name) {
			t.Errorf("%s (group %s) is in the default set", name, GroupKindNode)
		}
	}
	for _, name := range []string{"kubelet", "kubeadm", "kube-proxy", "coredns", "pause", "metrics-server"} {
		if !slices.Contains(p.GroupToolNames(GroupKindNode), name) {
			t.Errorf("%s is not in group %s", name, GroupKindNode)
		}
	}
	for _, name := range []string{"etcd", "kube-apiserver", "tofu"} {
		if !slices.Contains(def, name) {
			t.Errorf("%s is not in the default set", name)
		}
	}
	got, err := wanted(&options{pins: p})
	if err != nil || !slices.Equal(got, def) {
		t.Errorf("Resolve with no tools named wants %v (%v), want the default set %v", got, err, def)
	}
}

func TestTheSelfBuiltNodeImageIsPinnedByDigestAndComplete(t *testing.T) {
	p, err := DefaultPins()
	if err != nil {
		t.Fatal(err)
	}
	img, ok := p.BuiltNodeImage()
	if !ok {
		t.Fatal("no self-built node image is pinned")
	}
	b := p.Kind.NodeBuild
	if !strings.HasPrefix(img.Image, b.Repository+":"+b.Kubernetes+"@sha256:") {
		t.Errorf("built image %s is not %s:%s@sha256:...", img.Image, b.Repository, b.Kubernetes)
	}
	if first, _ := p.NodeImage(""); first != img.Image {
		t.Errorf("the default node image is %s, want the self-built %s (nothing can be pulled offline)", first, img.Image)
	}
	if got := b.Ref(b.Image("etcd")); got != b.ImageRepository+"/etcd:3.7.3-0" {
		t.Errorf("etcd image ref %s", got)
	}
	if p.Docker == nil || len(p.Docker.Packages) == 0 {
		t.Error("no Docker engine packages are pinned")
	}
}

func TestBrokenNodeBuildPinsAreRejected(t *testing.T) {
	good, tools := embeddedPins(t)
	for name, tc := range map[string]struct{ from, to, want string }{
		"no image marked build": {`"build": true`, `"build": false`, "exactly one node image must be marked build"},
		"build image misnamed":  {`"image": "gauntlet.invalid/kind-node:v1.37.2@`, `"image": "gauntlet.invalid/kind-node:v1.37.9@`, "want gauntlet.invalid/kind-node:v1.37.2@sha256:"},
		"tag without version":   {`"tag": "3.7.3-0"`, `"tag": "3.7.0-0"`, "does not carry its tool's pinned version 3.7.3"},
		"image needed by kubeadm": {`"name": "pause",
          "tag"`, `"name": "paws",
          "tag"`, "images lack pause"},
		"unpinned binary": {`"crictl"
      ],`, `"crictl", "ctr"
      ],`, "binary ctr is not a pinned tool"},
		"bad epoch":               {`"epoch": "2026-11-29T00:00:00Z"`, `"epoch": "yesterday"`, "RFC 3339"},
		"unpinned docker package": {`"docker.io=`, `"docker.io==`, "exact name=version"},
		"main file is go":         {`"main_file": "main.go.txt"`, `"main_file": "main.go"`, "not ending in .go"},
		"wrapper without module":  {`"module": "sigs.k8s.io/metrics-server",`, ``, "module may be left out only with main_file"},
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
		})
	}
}

func TestLockedPackagesMustBeSortedNameVersionPairs(t *testing.T) {
	d := DebianPins{Suite: "bookworm", Variant: "minbase", Debootstrap: "1", Packages: []string{"systemd"}}
	for _, locked := range [][]string{{"libc6"}, {"zlib1g=1", "bash=5"}, {"bash=5", "bash=5"}} {
		d.Locked = locked
		if err := d.validate(); err == nil {
			t.Errorf("locked %v accepted", locked)
		}
	}
	d.Locked = []string{"bash=5.2.15-2+b2", "libc6=2.36-9+deb12u10"}
	if err := d.validate(); err != nil {
		t.Errorf("a sorted lock is rejected: %v", err)
	}
}

// A main_go tool is built from the Go files of its directory: its key
// changes with any of them (not with its tests), and it takes no other
// main or upstream module.
func TestMainGoTools(t *testing.T) {
	tools := fstest.MapFS{
		"m/tool.mod":     {Data: []byte("module gauntlet.tools/m\n")},
		"m/tool.sum":     {Data: []byte("")},
		"m/main.go":      {Data: []byte("package main\n\nfunc main() {}\n")},
		"m/main_test.go": {Data: []byte("package main\n")},
	}
	good := `{"schema":1,"go":"go1.26.8","tools":[{"name":"t","version":"1","wrapper":{"dir":"m","package":".","main_go":true},"ldflags":"","version_args":["--v"],"version_want":"t 1"}]}`
	p, err := ParsePins([]byte(good), tools)
	if err != nil {
		t.Fatalf("the good pins are rejected: %v", err)
	}
	pin, _ := p.Tool("t")
	if names, err := p.mainGoFiles(pin); err != nil || !slices.Equal(names, []string{"main.go"}) {
		t.Errorf("main_go files = %v, %v; want main.go alone", names, err)
	}
	base := p.key(pin, "linux", "amd64")
	tools["m/main_test.go"] = &fstest.MapFile{Data: []byte("package main\n\n// changed\n")}
	if k := p.key(pin, "linux", "amd64"); k != base {
		t.Error("changing a test changed the cache key")
	}
	tools["m/main.go"] = &fstest.MapFile{Data: []byte("package main\n\nfunc main() { println() }\n")}
	if k := p.key(pin, "linux", "amd64"); k == base {
		t.Error("changing the source kept the cache key")
	}
	for name, bad := range map[string]string{
		"with a module": strings.Replace(good, `"package":"."`, `"module":"example.com/x","package":"."`, 1),
		"no Go file":    strings.Replace(good, `"dir":"m"`, `"dir":"e"`, 1),
	} {
		tools["e/tool.mod"] = &fstest.MapFile{Data: []byte("module gauntlet.tools/e\n")}
		tools["e/tool.sum"] = &fstest.MapFile{Data: []byte("")}
		if _, err := ParsePins([]byte(bad), tools); err == nil || !strings.Contains(err.Error(), "main_go") {
			t.Errorf("%s: %v, want a main_go error", name, err)
		}
	}
}
