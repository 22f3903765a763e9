package gauntlet_test

import (
	"context"
	"errors"
	"testing"

	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet"
	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/result"
	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/stage"
)

// replanAgain is a stage written outside the stage package, through the
// registry alone (docs/writing-a-stage.md): after migrate, both engines
// replan the deployed estate and must propose nothing. Its BREAK, which
// CheckPlanEmpty carries, deletes an object out of band; the plan must
// then propose creating it. It would catch an engine that forgets an
// object between two plans.
type replanAgain struct{ stage.Described }

func (replanAgain) Run(ctx context.Context, r *stage.Run, rec *stage.Recorder) error {
	if len(r.Objects) == 0 {
		return errors.New("no deployed object to replan")
	}
	r.CheckPlanEmpty(ctx, rec, "replans empty again", r.Objects[len(r.Objects)-1])
	rec.Claim([]string{"replans empty again"}, "both engines replanned the deployed estate and proposed nothing")
	return nil
}

func TestAStageAddedThroughTheRegistry(t *testing.T) {
	g := stage.Default()
	in := stage.Info{ID: "replan_again", Title: "Replan again", Headline: true, Requirements: []string{"EXAMPLE-01"}, After: []string{"migrate"}}
	if err := g.Register(replanAgain{stage.Described{About: in}}); err != nil {
		t.Fatal(err)
	}
	res := runWrittenEstateWith(t, "replan-again", "A stage of a caller's own", tapeRoot, "", []string{"replan_again"}, gauntlet.WithRegistry(g))
	st := stageOf(t, res, "replan_again")
	if st.Verdict != result.Pass || len(st.Checks) != 1 || len(st.Checks[0].ProvedBy) == 0 {
		t.Fatalf("replan_again: %s, checks %+v, want a pass proved by its BREAK:\n%s", st.Verdict, st.Checks, st.Detail)
	}
}
