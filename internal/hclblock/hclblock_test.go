package hclblock

import "testing"

func TestBlocks(t *testing.T) {
	for _, tc := range []struct {
		name string
		got  func() (string, error)
		want string
	}{
		{"moved", func() (string, error) {
			return Moved("kubernetes_service_account_v1.sa", "kubernetes_service_account_v1.sa_renamed")
		}, "moved {\n  from = kubernetes_service_account_v1.sa\n  to   = kubernetes_service_account_v1.sa_renamed\n}\n"},
		{"removed", func() (string, error) { return Removed("kubernetes_manifest.cm") },
			"removed {\n  from = kubernetes_manifest.cm\n  lifecycle {\n    destroy = false\n  }\n}\n"},
		{"import", func() (string, error) {
			return Import("module.m[\"a\"].kubernetes_manifest.cm", "apiVersion=v1,kind=ConfigMap,namespace=n,name=x")
		}, "import {\n  to = module.m[\"a\"].kubernetes_manifest.cm\n  id = \"apiVersion=v1,kind=ConfigMap,namespace=n,name=x\"\n}\n"},
	} {
		got, err := tc.got()
		if err != nil || got != tc.want {
			t.Errorf("%s block:\n%s(%v)\nwant:\n%s", tc.name, got, err, tc.want)
		}
	}
	for _, bad := range []func() (string, error){
		func() (string, error) { return Moved("a b", "c.d") },
		func() (string, error) { return Removed("\"x\"") },
		func() (string, error) { return Import("", "id") },
	} {
		if got, err := bad(); err == nil {
			t.Errorf("a block for an address that is not one: %q", got)
		}
	}
}
