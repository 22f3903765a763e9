package stage

import "testing"

func TestRestoreFieldKeepsTheTampersType(t *testing.T) {
	for _, tc := range []struct{ patch, want, out string }{
		{`[{"op":"test","path":"/spec/ports/0/port","value":80},{"op":"replace","path":"/spec/ports/0/port","value":81}]`, "80",
			`[{"op":"replace","path":"/spec/ports/0/port","value":80}]`},
		{`[{"op":"replace","path":"/data/gateway","value":"elsewhere"}]`, "gateway:8080",
			`[{"op":"replace","path":"/data/gateway","value":"gateway:8080"}]`},
		{`[{"op":"replace","path":"/data/n","value":"7"}]`, "8", `[{"op":"replace","path":"/data/n","value":"8"}]`},
	} {
		if got := restoreField(tc.patch, tc.want); got != tc.out {
			t.Errorf("restoreField(%s, %q) = %s, want %s", tc.patch, tc.want, got, tc.out)
		}
	}
}
