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
	return &liveModeStage{info{id: "strict", title: "Strict profile", reqs: []string{"GAUNT-LIVE-STRICT-01"}, needs: []engine.Capability{engine.LiveMode}, after: []string{"cold_deploy"}}}
}

type liveModeStage struct{ info }

func (s *liveModeStage) Run(ctx context.Context, r *Run, rec *Recorder) error {
	return fmt.Errorf("stage %s is not implemented for live-mode engines yet: its verdict cannot be a pass", s.id)
}
