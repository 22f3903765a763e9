package report_test

import (
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/report"
	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/result"
)

// A run that gauntlet.Run returned (here built by hand) written as its
// evidence: the headline, and the page's first reason when it is not
// clear.
func Example() {
	r := &result.Run{
		Estate:  result.Estate{Name: "my-root"},
		Subject: result.Engine{Name: "tofu", Version: "1.8.11"},
		Oracle:  result.Engine{Name: "terraform", Version: "1.11.4"},
		Stages: []result.Stage{{
			ID: "migrate", Title: "Migrate", Headline: true, Verdict: result.Fail, Duration: 2 * time.Second,
			Aborted: "subject: tofu plan: exit status 1:\nError: Call to unknown function\n",
		}},
	}
	dir, err := os.MkdirTemp("", "report")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	paths, err := report.WriteAll(dir, r)
	if err != nil {
		panic(err)
	}
	page, err := os.ReadFile(paths[0])
	if err != nil {
		panic(err)
	}
	fmt.Println(len(paths), "files")
	for _, line := range strings.Split(string(page), "\n") {
		if strings.HasPrefix(line, "**Why, first:**") {
			fmt.Println(line)
		}
	}
	// Output:
	// 3 files
	// **Why, first:** Migrate - the engine's own call failed; whose: the engine under test. Error: Call to unknown function
}
