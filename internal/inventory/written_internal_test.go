package inventory

import (
	"encoding/base64"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func mustObj(t *testing.T, s string) *unstructured.Unstructured {
	t.Helper()
	u := &unstructured.Unstructured{}
	if err := u.UnmarshalJSON([]byte(s)); err != nil {
		t.Fatalf("bad test object %s: %v", s, err)
	}
	return u
}

// Base64 of "tok-A", "tok-B", "CA-A", "CA-B", "default", "other".
const (
	tokA, tokB = "dG9rLUE=", "dG9rLUI="
	caA, caB   = "Q0EtQQ==", "Q0EtQg=="
	nsDefault  = "ZGVmYXVsdA=="
	nsOther    = "b3RoZXI="
)

// tokenSecretJSON is a token Secret as the token controller leaves it,
// with an extra data key the configuration set.
func tokenSecretJSON(typ, token, ca, ns, extra, label string) string {
	return `{"apiVersion":"v1","kind":"Secret","type":"` + typ + `","metadata":{"name":"sa-token","namespace":"default",
		"labels":{"app":"` + label + `"},"annotations":{"kubernetes.io/service-account.name":"sa"}},
		"data":{"token":"` + token + `","ca.crt":"` + ca + `","namespace":"` + ns + `","extra":"` + extra + `"}}`
}

const tokenType = "kubernetes.io/service-account-token"

func generatedCM(name, generateName, data string) string {
	return `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"` + name + `","generateName":"` + generateName + `","namespace":"default"},
		"data":{"mode":"` + data + `"}}`
}

func serverSet(field, value string) string {
	return `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"d","namespace":"default",` + field + `},"spec":{"replicas":` + value + `},
		"status":{"readyReplicas":` + value + `}}`
}

// writtenCase is one rule of serverWritten at work: want and same differ
// only in the field the rule drops and must compare equal; want and
// tampered differ in a field the configuration sets next to it, and must
// differ at exactly path.
type writtenCase struct {
	want, same, tampered string
	path                 string
	// pair pairs want and got by this identity (PairBy), as the stages do
	// by state address.
	pair bool
}

// writtenCases has a case for every rule of serverWritten, by name.
func writtenCases() map[string]writtenCase {
	d := func(f, v string) string { return serverSet(f, v) }
	return map[string]writtenCase{
		"status": {want: serverSet(`"uid":"u"`, "1"),
			same:     strings.Replace(serverSet(`"uid":"u"`, "1"), `"readyReplicas":1`, `"readyReplicas":0`, 1),
			tampered: strings.Replace(serverSet(`"uid":"u"`, "1"), `"replicas":1`, `"replicas":2`, 1), path: "spec.replicas"},
		"uid":             {want: d(`"uid":"u1"`, "1"), same: d(`"uid":"u2"`, "1"), tampered: d(`"uid":"u1"`, "3"), path: "spec.replicas"},
		"resourceVersion": {want: d(`"resourceVersion":"1"`, "1"), same: d(`"resourceVersion":"9"`, "1"), tampered: d(`"resourceVersion":"1"`, "3"), path: "spec.replicas"},
		"creationTimestamp": {want: d(`"creationTimestamp":"2026-01-01T00:00:00Z"`, "1"), same: d(`"creationTimestamp":"2026-02-02T00:00:00Z"`, "1"),
			tampered: d(`"creationTimestamp":"2026-01-01T00:00:00Z","labels":{"x":"y"}`, "1"), path: "metadata.labels"},
		"generation":    {want: d(`"generation":1`, "1"), same: d(`"generation":4`, "1"), tampered: d(`"generation":1`, "2"), path: "spec.replicas"},
		"managedFields": {want: d(`"managedFields":[{"manager":"a"}]`, "1"), same: d(`"managedFields":[{"manager":"b"}]`, "1"), tampered: d(`"managedFields":[{"manager":"a"}]`, "2"), path: "spec.replicas"},
		"selfLink":      {want: d(`"selfLink":"/a"`, "1"), same: d(`"selfLink":"/b"`, "1"), tampered: d(`"selfLink":"/a","annotations":{"n":"1"}`, "1"), path: "metadata.annotations"},
		"deletionGracePeriodSeconds": {want: d(`"deletionGracePeriodSeconds":30`, "1"), same: d(`"deletionGracePeriodSeconds":0`, "1"),
			tampered: d(`"deletionGracePeriodSeconds":30,"deletionTimestamp":"2026-01-01T00:00:00Z"`, "1"), path: "metadata.deletionTimestamp"},
		// Each cluster's name for one ConfigMap made with generate_name;
		// the prefix the configuration sets is still compared.
		"generated name": {pair: true, want: generatedCM("gen-abcde", "gen-", "probe"), same: generatedCM("gen-xyz12", "gen-", "probe"),
			tampered: generatedCM("other-xyz12", "other-", "probe"), path: "metadata.generateName"},
		"token Secret token": {want: tokenSecretJSON(tokenType, tokA, caA, nsDefault, "ZQ==", "web"), same: tokenSecretJSON(tokenType, tokB, caA, nsDefault, "ZQ==", "web"),
			tampered: tokenSecretJSON(tokenType, tokB, caA, nsDefault, "ZQ==", "tampered"), path: "metadata.labels.app"},
		"token Secret ca.crt": {want: tokenSecretJSON(tokenType, tokA, caA, nsDefault, "ZQ==", "web"), same: tokenSecretJSON(tokenType, tokA, caB, nsDefault, "ZQ==", "web"),
			tampered: tokenSecretJSON(tokenType, tokA, caB, nsDefault, "Zg==", "web"), path: "data.extra"},
		"token Secret namespace": {want: tokenSecretJSON(tokenType, tokA, caA, nsDefault, "ZQ==", "web"), same: tokenSecretJSON(tokenType, tokA, caA, nsOther, "ZQ==", "web"),
			tampered: tokenSecretJSON(tokenType, tokA, caA, nsOther, "Zg==", "web"), path: "data.extra"},
	}
}

// TestServerWrittenFieldsAreNotComparedAcrossClusters: every rule of the
// table lets its field differ between two clusters, and a real difference
// on a field the configuration sets beside it still fails.
func TestServerWrittenFieldsAreNotComparedAcrossClusters(t *testing.T) {
	cases := writtenCases()
	for _, w := range serverWritten() {
		t.Run(w.name, func(t *testing.T) {
			tc, ok := cases[w.name]
			if !ok {
				t.Fatalf("rule %q has no case in writtenCases: every rule needs one", w.name)
			}
			compare := func(got string) Report {
				want, gotObj := mustObj(t, tc.want), mustObj(t, got)
				var opts []Option
				if tc.pair {
					opts = append(opts, PairBy(map[Ref]string{RefOf(want): "kubernetes_config_map_v1.gen"}, map[Ref]string{RefOf(gotObj): "kubernetes_config_map_v1.gen"}))
				}
				return Compare(Inventory{Objects: []*unstructured.Unstructured{want}}, Inventory{Objects: []*unstructured.Unstructured{gotObj}}, opts...)
			}
			if r := compare(tc.same); !r.Equal() {
				t.Errorf("the field the server writes differs and counts:\n%s", r)
			}
			r := compare(tc.tampered)
			if len(r.Differences) != 1 || r.Differences[0].Path != tc.path {
				t.Errorf("a difference the configuration makes at %s: got\n%s", tc.path, r)
			}
		})
	}
}

// TestTokenDataComparedWhereTheServerDoesNotWriteIt: the token rules
// apply to token Secrets only and only across clusters: an Opaque
// Secret's data.token is compared, and on one cluster (SameCluster) a
// token Secret's token that changed is a change.
func TestTokenDataComparedWhereTheServerDoesNotWriteIt(t *testing.T) {
	one := func(s string) Inventory { return Inventory{Objects: []*unstructured.Unstructured{mustObj(t, s)}} }
	r := Compare(one(tokenSecretJSON("Opaque", tokA, caA, nsDefault, "ZQ==", "web")), one(tokenSecretJSON("Opaque", tokB, caA, nsDefault, "ZQ==", "web")))
	if len(r.Differences) != 1 || r.Differences[0].Path != "data.token" {
		t.Errorf("an Opaque Secret's data.token: got\n%s", r)
	}
	r = Compare(one(tokenSecretJSON(tokenType, tokA, caA, nsDefault, "ZQ==", "web")), one(tokenSecretJSON(tokenType, tokB, caA, nsDefault, "ZQ==", "web")), SameCluster())
	if len(r.Differences) != 1 || r.Differences[0].Path != "data.token" {
		t.Errorf("a token Secret's token on one cluster: got\n%s", r)
	}
}

// TestGeneratedNamePairedByIdentityOnly: without PairBy two generated
// names are two objects; a name that is not generated (no generateName,
// or one it does not start with) is compared when paired.
func TestGeneratedNamePairedByIdentityOnly(t *testing.T) {
	one := func(s string) Inventory { return Inventory{Objects: []*unstructured.Unstructured{mustObj(t, s)}} }
	a, b := generatedCM("gen-abcde", "gen-", "probe"), generatedCM("gen-xyz12", "gen-", "probe")
	if r := Compare(one(a), one(b)); len(r.Differences) != 2 || !r.Differences[0].Missing() && !r.Differences[1].Missing() {
		t.Errorf("paired by name: got\n%s", r)
	}
	plain := func(name string) string {
		return `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"` + name + `","namespace":"default"}}`
	}
	wantRef, gotRef := Ref{Version: "v1", Kind: "ConfigMap", Namespace: "default", Name: "one"}, Ref{Version: "v1", Kind: "ConfigMap", Namespace: "default", Name: "two"}
	r := Compare(one(plain("one")), one(plain("two")), PairBy(map[Ref]string{wantRef: "x.a"}, map[Ref]string{gotRef: "x.a"}))
	if len(r.Differences) != 1 || r.Differences[0].Path != "metadata.name" || r.Differences[0].Pair != "x.a" || r.Differences[0].Object != gotRef {
		t.Errorf("two names no server generated, paired: got %+v", r.Differences)
	}
}

// TestGeneratedValuesMatchedWithEachSidesOwnState: a Secret holding each
// side's own random_password (alone, and inside a URL) compares equal; one
// holding anything else, or the other side's password, differs; a value
// shorter than MinGenerated is replaced only where it is a whole string.
func TestGeneratedValuesMatchedWithEachSidesOwnState(t *testing.T) {
	secret := func(pw, url string) Inventory {
		s := `{"apiVersion":"v1","kind":"Secret","metadata":{"name":"db","namespace":"default"},"data":{"password":"` +
			base64.StdEncoding.EncodeToString([]byte(pw)) + `","url":"` + base64.StdEncoding.EncodeToString([]byte(url)) + `"},
			"stringy":"` + pw + `"}`
		return Inventory{Objects: []*unstructured.Unstructured{mustObj(t, s)}}
	}
	const pwO, pwS = "oraclePassw0rdXYZ", "subjectPassw0rdABC"
	gen := func(pw string) map[string]string { return map[string]string{pw: "${random_password.db.result}"} }
	opts := Generated(gen(pwO), gen(pwS))
	url := func(pw string) string { return "postgres://app:" + pw + "@db:5432/app" }
	if r := Compare(secret(pwO, url(pwO)), secret(pwS, url(pwS)), opts); !r.Equal() {
		t.Errorf("each side's own password: got\n%s", r)
	}
	r := Compare(secret(pwO, url(pwO)), secret(pwS, "postgres://app:"+pwS+"@elsewhere:5432/app"), opts)
	if len(r.Differences) != 1 || r.Differences[0].Path != "data.url" {
		t.Errorf("a tampered host beside the password: got\n%s", r)
	}
	if strings.Contains(r.String(), pwS) {
		t.Errorf("the report holds the password: %s", r)
	}
	r = Compare(secret(pwO, url(pwO)), secret(pwO, url(pwS)), opts)
	if len(r.Differences) != 2 {
		t.Errorf("the subject holding the oracle's password, not its own state's: got\n%s", r)
	}
	// A short value (a resource version an annotation copies) is replaced
	// only where it is the whole string, never inside a longer one.
	short, shortS := map[string]string{"275": "${kubernetes_secret.c.metadata.resource_version}"}, map[string]string{"518": "${kubernetes_secret.c.metadata.resource_version}"}
	if r := Compare(secret("275", "x"), secret("518", "x"), Generated(short, shortS)); !r.Equal() {
		t.Errorf("each side's own short value, a whole string: got\n%s", r)
	}
	if r := Compare(secret("x", "v-275"), secret("x", "v-518"), Generated(short, shortS)); r.Equal() {
		t.Errorf("values shorter than %d are not replaced inside a string, so these must differ", MinGenerated)
	}
	if r := Compare(secret("275", "x"), secret("519", "x"), Generated(short, shortS)); r.Equal() {
		t.Errorf("a short value that is not the side's own must still differ")
	}
}
