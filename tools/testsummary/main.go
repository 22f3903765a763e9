// Command testsummary reads `go test -json` on its standard input, prints
// what go test without -v would (each package's result, and the output of
// the tests that failed), and closes with what go test's
// own summary leaves out: how many tests passed, failed and were skipped,
// and the skipped ones counted by their reason - so a tier that skips a
// test (the second tier, the kind tests, the estates left to Bazel) says
// so in CI's log instead of reading as "ok".
//
//	go test -json ./... | go run ./tools/testsummary
//
// Its exit code is 0; the pipeline's is go test's (set -o pipefail).
package main

import (
	"bufio"
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"os"
	"regexp"
	"slices"
	"strings"
)

// event is the part of a test2json event this reads.
type event struct {
	Action  string
	Package string
	Test    string
	Output  string
}

// location is go test's "    file_test.go:12: " before a logged line.
var location = regexp.MustCompile(`^\s+[\w./-]+\.go:\d+: `)

// Summary counts a stream's test outcomes and the skips' reasons.
type Summary struct {
	Passed, Failed, Skipped int
	// Reasons counts skipped tests by the first line they logged.
	Reasons map[string]int
}

// Read copies to w what go test prints without -v - package lines, and
// the output of each test that failed or never ended - and summarises the
// stream. A line that is not an event (printed outside it) is copied as is.
func Read(r io.Reader, w io.Writer) (Summary, error) {
	s := Summary{Reasons: map[string]int{}}
	held := map[string]*strings.Builder{} // package/test -> its output so far
	var order []string
	logged := map[string]string{} // package/test -> its first logged line
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		line := sc.Bytes()
		var e event
		if len(line) == 0 || line[0] != '{' || json.Unmarshal(line, &e) != nil {
			fmt.Fprintf(w, "%s\n", line)
			continue
		}
		key := e.Package + "/" + e.Test
		switch {
		case e.Action == "output" && e.Test != "":
			b := held[key]
			if b == nil {
				b = &strings.Builder{}
				held[key] = b
				order = append(order, key)
			}
			b.WriteString(e.Output)
			if logged[key] == "" && location.MatchString(e.Output) {
				logged[key] = strings.TrimSpace(location.ReplaceAllString(e.Output, ""))
			}
		case e.Action == "output", e.Action == "build-output":
			// -json implies -v: its run markers and a package's bare
			// PASS are what go test without -v leaves out.
			if !strings.HasPrefix(e.Output, "=== ") && e.Output != "PASS\n" {
				fmt.Fprint(w, e.Output)
			}
		case e.Test == "":
		case e.Action == "pass":
			s.Passed++
			delete(held, key)
		case e.Action == "fail":
			s.Failed++
			if b := held[key]; b != nil {
				fmt.Fprint(w, b.String())
			}
			delete(held, key)
		case e.Action == "skip":
			s.Skipped++
			s.Reasons[reason(logged[key])]++
			delete(held, key)
		}
	}
	// A test that never ended (the binary panicked or timed out): its
	// output is what says why.
	for _, key := range order {
		if b := held[key]; b != nil {
			fmt.Fprint(w, b.String())
		}
	}
	return s, sc.Err()
}

// reason shortens a skip's logged line to what groups alike skips.
func reason(logged string) string {
	if logged == "" {
		return "(no reason logged)"
	}
	if len(logged) > 140 {
		logged = logged[:140] + "..."
	}
	return logged
}

// Write prints the skips by reason, most first, then the closing line.
func (s Summary) Write(w io.Writer) {
	if len(s.Reasons) > 0 {
		fmt.Fprintf(w, "\nskipped tests by reason (%d):\n", s.Skipped)
		reasons := slices.SortedFunc(maps.Keys(s.Reasons), func(a, b string) int {
			return cmp.Or(s.Reasons[b]-s.Reasons[a], strings.Compare(a, b))
		})
		for _, r := range reasons {
			fmt.Fprintf(w, "  %4d  %s\n", s.Reasons[r], r)
		}
	}
	fmt.Fprintf(w, "\n%d passed, %d failed, %d skipped\n", s.Passed, s.Failed, s.Skipped)
}

func main() {
	s, err := Read(os.Stdin, os.Stdout)
	if err != nil {
		fmt.Fprintln(os.Stderr, "testsummary: reading go test -json:", err)
	}
	s.Write(os.Stdout)
}
