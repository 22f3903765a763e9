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
