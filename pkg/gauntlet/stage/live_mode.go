package stage

import (
	"context"
	"fmt"

	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/engine"
)

// The strict profile only means something for engines that keep estate
// membership on the live objects: for every other engine the runner
// reports it not_run, naming the missing capability. No live-mode engine
// can be built here yet, so its run fails loudly instead of pretending.

func strict() Stage {
	return &liveModeStage{Described{Info{ID: "strict", Title: "Strict profile", Requirements: []string{"GAUNT-LIVE-STRICT-01"}, Needs: []engine.Capability{engine.LiveMode}, After: []string{"cold_deploy"}}}}
}

type liveModeStage struct{ Described }

func (s *liveModeStage) Run(ctx context.Context, r *Run, rec *Recorder) error {
	return fmt.Errorf("stage %s is not implemented for live-mode engines yet: its verdict cannot be a pass", s.About.ID)
}
