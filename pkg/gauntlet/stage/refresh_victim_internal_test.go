package stage

import (
	"testing"

	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/estate"
)

// The refresh-only BREAKs' victim: a ConfigMap, Service or ServiceAccount
// at an address without an instance key where the root has one (a deleted
// counted instance stops a refresh-only plan on an output indexing it),
// else the victim every stage uses, which the stage then labels.
func TestRefreshVictim(t *testing.T) {
	obj := func(addr, kind string) Object {
		return Object{Address: addr, Ref: estate.Object{Version: "v1", Kind: kind, Namespace: "ns", Name: addr}}
	}
	for _, tc := range []struct {
		name    string
		objects []Object
		want    string
		counted bool
	}{
		{"a ConfigMap before an uncounted ServiceAccount", []Object{obj("kubernetes_service_account_v1.a", "ServiceAccount"), obj("kubernetes_config_map_v1.c", "ConfigMap")}, "kubernetes_config_map_v1.c", false},
		{"an uncounted Service before a counted ConfigMap", []Object{obj("kubernetes_config_map_v1.c[0]", "ConfigMap"), obj("kubernetes_service_v1.s", "Service")}, "kubernetes_service_v1.s", false},
		{"a ServiceAccount before a Service (which may back an APIService)", []Object{obj("kubernetes_service.s", "Service"), obj("kubernetes_service_account.a", "ServiceAccount")}, "kubernetes_service_account.a", false},
		{"in a counted module", []Object{obj("module.sa[0].kubernetes_service_account.sa", "ServiceAccount"), obj("kubernetes_namespace_v1.n", "Namespace")}, "module.sa[0].kubernetes_service_account.sa", true},
		{"nothing of the three", []Object{obj("kubernetes_namespace_v1.n", "Namespace"), obj("kubernetes_deployment_v1.d", "Deployment")}, "kubernetes_deployment_v1.d", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := (&Run{Objects: tc.objects}).refreshVictim()
			if got.Address != tc.want || counted(got.Address) != tc.counted {
				t.Errorf("refreshVictim = %s (counted %v), want %s (counted %v)", got.Address, counted(got.Address), tc.want, tc.counted)
			}
		})
	}
}
