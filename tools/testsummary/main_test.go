package main

import (
	"strings"
	"testing"
)

// TestRead: output passes through as go test prints it; tests are counted
// by outcome and skips grouped by their first logged line.
func TestRead(t *testing.T) {
	in := strings.Join([]string{
		`{"Action":"run","Package":"p","Test":"TestA"}`,
		`{"Action":"output","Package":"p","Test":"TestA","Output":"=== RUN   TestA\n"}`,
		`{"Action":"output","Package":"p","Test":"TestA","Output":"--- PASS: TestA (0.00s)\n"}`,
		`{"Action":"pass","Package":"p","Test":"TestA"}`,
		`{"Action":"output","Package":"p","Test":"TestB","Output":"    b_test.go:12: second tier: GAUNTLET_TESTS=all runs it\n"}`,
		`{"Action":"skip","Package":"p","Test":"TestB"}`,
		`{"Action":"output","Package":"p","Test":"TestC","Output":"    c_test.go:9: second tier: GAUNTLET_TESTS=all runs it\n"}`,
		`{"Action":"skip","Package":"p","Test":"TestC"}`,
		`{"Action":"skip","Package":"p","Test":"TestD"}`,
		`{"Action":"output","Package":"p","Test":"TestE","Output":"    e_test.go:3: want 1, got 2\n"}`,
		`{"Action":"fail","Package":"p","Test":"TestE"}`,
		`{"Action":"output","Package":"p","Test":"TestF","Output":"panic: test timed out\n"}`,
		`{"Action":"output","Package":"p","Output":"ok  \tp\t0.1s\n"}`,
		`{"Action":"pass","Package":"p"}`,
		`# p [build failed]`,
	}, "\n")
	var out strings.Builder
	s, err := Read(strings.NewReader(in), &out)
	if err != nil {
		t.Fatal(err)
	}
	if s.Passed != 1 || s.Failed != 1 || s.Skipped != 3 {
		t.Errorf("counts %+v", s)
	}
	if s.Reasons["second tier: GAUNTLET_TESTS=all runs it"] != 2 || s.Reasons["(no reason logged)"] != 1 {
		t.Errorf("reasons %v", s.Reasons)
	}
	o := out.String()
	for _, want := range []string{"e_test.go:3: want 1, got 2", "panic: test timed out", "ok  \tp\t0.1s\n", "# p [build failed]\n"} {
		if !strings.Contains(o, want) {
			t.Errorf("output lacks %q:\n%s", want, o)
		}
	}
	if strings.Contains(o, "TestA") || strings.Contains(o, "second tier") {
		t.Errorf("a passing or skipped test's output printed, as go test without -v does not:\n%s", o)
	}
	out.Reset()
	s.Write(&out)
	if !strings.HasSuffix(out.String(), "\n1 passed, 1 failed, 3 skipped\n") || !strings.Contains(out.String(), "     2  second tier") {
		t.Errorf("summary:\n%s", out.String())
	}
}
