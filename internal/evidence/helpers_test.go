package evidence_test

import (
	"time"

	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/result"
)

// smallRun is a two-stage reference run both of whose headline stages
// pass; tests mutate copies of it.
func smallRun() *result.Run {
	return &result.Run{
		Estate: result.Estate{
			Name: "reference-configmap", Title: "One ConfigMap",
			Description: "A single ConfigMap, written here.", Lane: "kubernetes", Set: "reference",
		},
		Subject:   result.Engine{Name: "tofu", Version: "1.12.6", Display: "OpenTofu v1.12.6", Pinned: "1.12.6"},
		Oracle:    result.Engine{Name: "terraform", Version: "1.15.8", Pinned: "1.15.8"},
		Substrate: "local",
		Commit:    "0123456789abcdef0123456789abcdef01234567",
		StartedAt: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC),
		Duration:  95 * time.Second,
		Reproduce: "go run ./tools/gauntlet run reference-configmap",
		Stages: []result.Stage{
			{ID: "cold_deploy", Title: "Cold deploy", Headline: true, Verdict: result.Pass,
				Duration: 850 * time.Millisecond, Detail: "1 added",
				Breaks: []result.Break{{Name: "delete", Corruption: "deletes the ConfigMap", Outcome: result.Proved, Failed: true, Detail: "0 of 1 found"}}},
			{ID: "migrate", Title: "Migrate", Headline: true, Verdict: result.Pass,
				Duration: 3 * time.Second, Detail: "1 of 1 taken over"},
		},
	}
}

// withStage returns smallRun with stage i changed by f.
func withStage(i int, f func(*result.Stage)) *result.Run {
	r := smallRun()
	f(&r.Stages[i])
	return r
}
