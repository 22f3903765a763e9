package recordstore

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The Store comes from the root's backend block: literal values, the
// namespace defaulting as the backend's does; anything else is refused
// naming the file.
func TestFromBackendBlock(t *testing.T) {
	block := func(body string) string {
		return "terraform {\n  backend \"kubernetes\" {\n" + body + "\n  }\n}\n"
	}
	for name, tc := range map[string]struct{ tf, want, err string }{
		"suffix and namespace": {block(`secret_suffix = "network"
namespace = "state-network"`), "Secret state-network/tfstate-default-network", ""},
		"default namespace": {block(`secret_suffix = "x"`), "Secret default/tfstate-default-x", ""},
		"another backend":   {"terraform {\n  backend \"local\" {}\n}\n", "", "no backend \"kubernetes\""},
		"no suffix":         {block(`namespace = "n"`), "", "no secret_suffix"},
		"not literal":       {block(`secret_suffix = var.s`), "", "not a literal string"},
	} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, "main.tf"), []byte(tc.tf+"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			s, err := FromBackendBlock(dir)
			switch {
			case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
				t.Errorf("error %v, want %q", err, tc.err)
			case tc.err == "" && (err != nil || s.String() != tc.want):
				t.Errorf("%v (%v), want %s", s, err, tc.want)
			}
		})
	}
}
