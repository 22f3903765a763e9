package compare

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/result"
)

// TestReportHTMLRendersInChromium opens report.html, rendered from the
// fixtures, in headless Chromium: no console message at all (the page
// has no script, and its Content-Security-Policy turns any attempt to
// fetch something into one), one summary row per estate, every chart with
// all its bars; and it saves a screenshot beside the report (keep both
// with go test -artifacts -outputdir DIR).
func TestReportHTMLRendersInChromium(t *testing.T) {
	chromium := findChromium(t)
	dir := t.ArtifactDir()

	pass, drift := load(t, passRun), load(t, driftRun)
	chatty := load(t, passRun)
	stageOf(chatty, "test_plan").Figures["subject.api_requests"] += 12
	in := input([]*result.Run{drift}, []*result.Run{pass})
	second := EstateRuns{Name: "corpus-k8s-metrics-server-again",
		Findings: map[string]string{"day2_crash": "stock leaves the Deployment half-applied too"},
		Build:    []Rep{{Run: chatty, Dir: "again/build-1"}}, Baseline: []Rep{{Run: load(t, passRun), Dir: "again/baseline-1"}}}
	in.Estates = append(in.Estates, second)
	r, paths, err := WriteAll(dir, in)
	if err != nil {
		t.Fatal(err)
	}
	report := paths[2]

	// The control: a page that breaks the rule must be caught, or a
	// clean console proves nothing.
	control := filepath.Join(dir, "control.html")
	if err := os.WriteFile(control, []byte(`<!doctype html><meta http-equiv="Content-Security-Policy" content="default-src 'none'"><img src="https://example.invalid/x.png"><p>control</p>`), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, console := browse(t, chromium, control, "--dump-dom"); len(console) == 0 {
		t.Fatalf("the control page's blocked fetch left no console message: the console check sees nothing")
	}

	dom, console := browse(t, chromium, report, "--dump-dom")
	if len(console) > 0 {
		t.Errorf("console messages:\n%s", strings.Join(console, "\n"))
	}
	if rows := strings.Count(dom, `<tr class="row">`); rows != len(r.Estates) {
		t.Errorf("the summary table has %d rows, want one per estate (%d)", rows, len(r.Estates))
	}
	charts := regexp.MustCompile(`(?s)<svg class="bars"[^>]*data-bars="(\d+)".*?</svg>`).FindAllStringSubmatch(dom, -1)
	if len(charts) != 2*len(r.Estates) {
		t.Fatalf("%d charts, want two per estate", len(charts))
	}
	for i, c := range charts {
		want := 3 * ranStages(r.Estates[i/2])
		if got := strings.Count(c[0], "<rect class=\"bar"); got != want || c[1] != fmt.Sprint(want) || want == 0 {
			t.Errorf("chart %d has %d bars (data-bars %s), want %d: three per stage that ran", i, got, c[1], want)
		}
	}

	shot := filepath.Join(dir, "report.png")
	_, console = browse(t, chromium, report, "--screenshot="+shot, "--window-size=1280,2600", "--hide-scrollbars")
	if len(console) > 0 {
		t.Errorf("console messages while taking the screenshot:\n%s", strings.Join(console, "\n"))
	}
	if b, err := os.ReadFile(shot); err != nil || !bytes.HasPrefix(b, []byte("\x89PNG")) {
		t.Fatalf("screenshot: %v", err)
	}
	t.Logf("report and screenshot in %s", dir)
}

func ranStages(e EstateReport) int {
	n := 0
	for _, s := range e.Stages {
		if !(s.Build.Verdict == result.NotRun && s.Baseline.Verdict == result.NotRun) {
			n++
		}
	}
	return n
}

var consoleLine = regexp.MustCompile(`:CONSOLE[:(]`)

// browse opens page in headless Chromium with the given flags and
// returns its standard output and the console messages it logged.
func browse(t *testing.T, chromium, page string, flags ...string) (string, []string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	args := append([]string{"--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--user-data-dir=" + t.TempDir(),
		"--enable-logging=stderr", "--v=0"}, flags...)
	cmd := exec.CommandContext(ctx, chromium, append(args, "file://"+page)...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s %s: %v\n%s", chromium, strings.Join(flags, " "), err, errb.String())
	}
	var console []string
	for _, l := range strings.Split(errb.String(), "\n") {
		if consoleLine.MatchString(l) {
			console = append(console, l)
		}
	}
	return out.String(), console
}

// findChromium finds Debian's chromium, installing it with apt-get when
// it is missing and the test runs as root; it skips the test with the
// reason when it can do neither.
func findChromium(t *testing.T) string {
	t.Helper()
	if p, err := exec.LookPath("chromium"); err == nil {
		return p
	}
	if os.Getenv("TEST_SRCDIR") != "" {
		// A Bazel test action must not install packages into the system
		// it runs on (the offline chroot's); `go test` installs it.
		t.Skip("chromium is not installed, and a Bazel test does not install packages: `go test ./internal/compare/` installs it with apt-get and runs this test")
	}
	if os.Geteuid() != 0 {
		t.Skip("chromium is not installed and installing it needs root (apt-get install chromium)")
	}
	if _, err := exec.LookPath("apt-get"); err != nil {
		t.Skip("chromium is not installed and this system has no apt-get to install it")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	install := func() error {
		out, err := exec.CommandContext(ctx, "apt-get", "install", "-y", "--no-install-recommends", "chromium").CombinedOutput()
		if err != nil {
			return fmt.Errorf("%w: %s", err, lastLines(out, 5))
		}
		return nil
	}
	err := install()
	if err != nil {
		// The package lists may be missing or stale: refresh once.
		if out, uerr := exec.CommandContext(ctx, "apt-get", "update").CombinedOutput(); uerr != nil {
			t.Skipf("chromium is not installed and apt-get update failed (no network?): %v: %s", uerr, lastLines(out, 3))
		}
		err = install()
	}
	if err != nil {
		t.Skipf("chromium is not installed and apt-get could not install it: %v", err)
	}
	p, err := exec.LookPath("chromium")
	if err != nil {
		t.Skip(errors.New("apt-get installed chromium, but it is not on PATH"))
	}
	return p
}

func lastLines(b []byte, n int) string {
	ls := strings.Split(strings.TrimSpace(string(b)), "\n")
	return strings.Join(ls[max(0, len(ls)-n):], "\n")
}
