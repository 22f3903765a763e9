package gauntlet_test

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet"
	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/estate"
	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/log"
)

// Run one estate's gauntlet on the local substrate with the pinned engines
// (it needs the toolchain: `go run ./tools/gauntlet toolchain`), and read
// its verdict. Not run by `go test`: it starts two clusters.
func ExampleRun() {
	spec, err := estate.Load("estates", "corpus-k8s-metrics-server")
	if err != nil {
		fmt.Println(err)
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	res, err := gauntlet.Run(ctx, spec, gauntlet.WithSubstrate("local"), gauntlet.WithOffline(true), gauntlet.WithLogger(log.New(os.Stderr)))
	if err != nil {
		fmt.Println("could not run:", err)
		return
	}
	fmt.Println("clear:", res.Assess().Clear())
}
