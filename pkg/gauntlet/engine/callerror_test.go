package engine_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/engine"
)

// threeErrors is what a CLI prints (-no-color) when a root has three
// errors: each a diagnostic of several lines, the first two long before
// the end of the output.
const threeErrors = `Initializing the backend...
Initializing modules...

Error: Unsupported argument

  on main.tf line 3, in resource "kubernetes_config_map_v1" "a":
   3:   bogus = 1

An argument named "bogus" is not expected here.

Error: Reference to undeclared input variable

  on main.tf line 9, in resource "kubernetes_config_map_v1" "b":
   9:   data = var.missing

An input variable with the name "missing" has not been declared. This
variable can be declared with a variable "missing" {} block.

Error: Missing required argument

  on main.tf line 12, in resource "kubernetes_secret_v1" "c":
  12: resource "kubernetes_secret_v1" "c" {

The argument "metadata" is required, but no definition was found.
`

// A failed call's error keeps every error the CLI printed, whole - not
// the last lines of its output, which held only the third.
func TestCallErrorKeepsEveryError(t *testing.T) {
	boxed := strings.ReplaceAll(strings.ReplaceAll(threeErrors, "\nError: ", "\n╷\n│ Error: "), "\n  on ", "\n│   on ")
	for name, out := range map[string]string{"plain": threeErrors, "boxed": boxed} {
		err := &engine.CallError{Engine: "tofu", Call: engine.Call{Args: []string{"plan"}, Log: "/run/logs/003-tofu-plan.log", ExitCode: 1, Output: out}, Err: errors.New("exit status 1")}
		msg := err.Error()
		for _, want := range []string{
			`An argument named "bogus" is not expected here.`,
			`An input variable with the name "missing" has not been declared. This`,
			`variable can be declared with a variable "missing" {} block.`,
			`The argument "metadata" is required, but no definition was found.`,
			"log: /run/logs/003-tofu-plan.log",
		} {
			if !strings.Contains(msg, want) {
				t.Errorf("%s: the error lost %q:\n%s", name, want, msg)
			}
		}
		if strings.Contains(msg, "Initializing") {
			t.Errorf("%s: the error carries the output before the first error:\n%s", name, msg)
		}
	}
}

// An output with no diagnostic (a signal, a timeout) is kept whole when
// short, and its end, said as such, when long.
func TestCallErrorWithoutDiagnostic(t *testing.T) {
	var long strings.Builder
	for i := 1; i <= 100; i++ {
		fmt.Fprintf(&long, "kubernetes_config_map_v1.c[%d]: Creating...\n", i)
	}
	err := &engine.CallError{Engine: "tofu", Call: engine.Call{Args: []string{"apply"}, Output: long.String()}, Err: errors.New("signal: killed")}
	msg := err.Error()
	if !strings.Contains(msg, "the last 40 of 100 lines") || !strings.Contains(msg, "c[100]: Creating") || strings.Contains(msg, "c[60]: Creating") {
		t.Errorf("a long output without diagnostic:\n%s", msg)
	}
	short := &engine.CallError{Engine: "tofu", Call: engine.Call{Args: []string{"apply"}, Output: "one\ntwo\nthree\nfour\nfive\nsix\nseven\n"}, Err: errors.New("signal: killed")}
	if msg := short.Error(); !strings.Contains(msg, "one\ntwo") || strings.Contains(msg, "the last") {
		t.Errorf("a short output without diagnostic is not whole:\n%s", msg)
	}
}

// A failure's diagnostics are each error whole, in the order printed,
// plain or boxed, without what came before the first.
func TestCallErrorDiagnostics(t *testing.T) {
	ce := &engine.CallError{Engine: "tofu", Call: engine.Call{Args: []string{"plan"}, Output: threeErrors}}
	d := ce.Diagnostics()
	if len(d) != 3 || !strings.HasPrefix(d[0], "Error: Unsupported argument") || !strings.HasSuffix(d[0], `"bogus" is not expected here.`) ||
		!strings.HasPrefix(d[1], "Error: Reference to undeclared input variable") || !strings.HasPrefix(d[2], "Error: Missing required argument") {
		t.Errorf("diagnostics %q", d)
	}
	boxed := "Planning...\n╷\n│ Error: one\n│ \n│ first\n╵\n╷\n│ Error: two\n╵\n"
	d = (&engine.CallError{Call: engine.Call{Output: boxed}}).Diagnostics()
	if len(d) != 2 || d[0] != "╷\n│ Error: one\n│ \n│ first\n╵" || d[1] != "╷\n│ Error: two\n╵" {
		t.Errorf("boxed diagnostics %q", d)
	}
	if d := (&engine.CallError{Call: engine.Call{Output: "killed\n"}}).Diagnostics(); len(d) != 0 {
		t.Errorf("an output with no error diagnostic: %q", d)
	}
}
