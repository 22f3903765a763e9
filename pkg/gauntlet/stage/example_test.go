package stage_test

import (
	"context"
	"fmt"

	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/stage"
)

type hello struct{ stage.Described }

func (hello) Run(ctx context.Context, r *stage.Run, rec *stage.Recorder) error {
	rec.Say("hello from a stage of the caller's own")
	return nil
}

// A caller's stage joins the gauntlet's own through the registry; it runs
// after the stages it names in After (pass the registry to gauntlet.Run with
// gauntlet.WithRegistry).
func ExampleRegistry() {
	g := stage.Default()
	err := g.Register(hello{stage.Described{About: stage.Info{ID: "hello", Title: "Hello", After: []string{"migrate"}}}})
	fmt.Println(err, len(g.IDs()), g.Index("hello"), g.DependsOn("cold_deploy", []string{"hello"}))
	// A stage must come after what it depends on.
	fmt.Println(g.Register(hello{stage.Described{About: stage.Info{ID: "early", Title: "Early", After: []string{"later"}}}}))
	// Output:
	// <nil> 22 21 true
	// stage "early" runs after "later", which is not registered before it
}
