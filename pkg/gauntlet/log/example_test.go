package log_test

import (
	"fmt"
	"strings"

	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/log"
)

// A library user passes its own Logger, or one that writes lines to any
// writer, each prefixed with the seconds since it was made.
func ExamplePrefixed() {
	var b strings.Builder
	l := log.Prefixed(log.New(&b), "subject: ")
	l.Warnf("plan proposed %d changes", 2)
	_, line, _ := strings.Cut(b.String(), "] ")
	fmt.Print(line)
	// Output:
	// WARNING: subject: plan proposed 2 changes
}
