package evidence_test

import (
	"time"

	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/result"
)

// metricsServerRun is a realistic run of a corpus estate: metrics-server's
// nine objects, stock tofu 1.12.6 as the engine under test against a
// terraform oracle that is behind its pin, on the local substrate. Every
// headline stage passes; strict and plan_no_local_state need live mode,
// which stock tofu lacks, so they did not run. Cold deploy carries a check
// the local substrate cannot run (its pods are kwok fakes).
func metricsServerRun() *result.Run {
	sec := func(f float64) time.Duration { return time.Duration(f * float64(time.Second)) }
	const noLive = "engine tofu 1.12.6 has no live mode"
	return &result.Run{
		Estate: result.Estate{
			Name:  "corpus-k8s-metrics-server",
			Title: "metrics-server as Kubernetes CI installs it",
			Description: "The metrics-server root from the Kubernetes project's kops CI infrastructure, lifted out of " +
				"its parent root: ClusterRoles system:aggregated-metrics-reader and system:metrics-server, " +
				"ClusterRoleBindings metrics-server:system:auth-delegator and system:metrics-server, the RoleBinding " +
				"metrics-server-auth-reader, the ServiceAccount, Deployment and Service metrics-server in kube-system, " +
				"and the APIService v1beta1.metrics.k8s.io - 9 objects on the provider's legacy type names. It exercises " +
				"an aggregated API and an estate that writes into a namespace it never declares.",
			Lane:         "kubernetes",
			Set:          "growing",
			SourceRepo:   "https://github.com/kubernetes/k8s.io",
			SourceCommit: "4046258e7d54fdc156e2f39ad8da51b57be88f55",
			SourcePath:   "infra/aws/terraform/kops-infra-ci/metrics-server.tf",
			SourceSHA256: "9c1f0a6e2b7d4c3a8e5f1b0d6c2a9e7f3b8d4c1a0e6f2b9d7c3a5e8f1b4d0c6a",
		},
		Subject: result.Engine{
			Name: "tofu", Version: "1.12.6", Display: "OpenTofu v1.12.6",
			Path: "/home/ci/.cache/gauntlet/tofu/1.12.6/tofu", Pinned: "1.12.6",
		},
		Oracle: result.Engine{
			Name: "terraform", Version: "1.15.8", Display: "Terraform v1.15.8",
			Path: "/home/ci/.cache/gauntlet/terraform/1.15.8/terraform", Pinned: "1.16.1",
		},
		Substrate: "local (kube-apiserver v1.37.0, kwok v0.8.0)",
		Commit:    "53322a2c0f9e8d7b6a5c4d3e2f1a0b9c8d7e6f5a",
		StartedAt: time.Date(2026, 10, 5, 2, 58, 57, 0, time.UTC),
		Duration:  sec(612.4),
		ExitCode:  0,
		Reproduce: "go run ./tools/gauntlet run corpus-k8s-metrics-server",
		Environment: []string{
			"GAUNTLET_CACHE=/home/ci/.cache/gauntlet",
		},
		Stages: []result.Stage{
			{
				ID: "cold_deploy", Title: "Cold deploy", Headline: true, Verdict: result.Pass, Duration: sec(77.3),
				Requirements: []string{"GNT-DEPLOY-1"},
				Detail: "tofu applied the root to an empty local cluster: 9 added, 0 changed, 0 destroyed; " +
					"every object read back by kind and name (5 cluster-scoped, 4 in kube-system); terraform " +
					"applied the same root to the oracle cluster with the same 9 additions; kube-system's " +
					"own objects recorded first as teardown's baseline",
				Checks: []result.Check{
					{Name: "nine objects", Verdict: result.Pass, Detail: "9 of 9 found", ProvedBy: []string{"missing-object"}},
					{Name: "aggregated API answers", Verdict: result.NotRun,
						Detail: "pods on the local substrate are kwok fakes, so nothing serves /apis/metrics.k8s.io/v1beta1"},
				},
				Breaks: []result.Break{{
					Name: "missing-object", Corruption: "deletes the metrics-server Service after the apply",
					Outcome: result.Proved, Failed: true, Detail: "8 of 9 found; missing kube-system/Service/metrics-server",
				}},
				Figures: map[string]int{"subject.engine_calls": 3, "oracle.engine_calls": 3},
			},
			{
				ID: "migrate", Title: "Migrate", Headline: true, Verdict: result.Pass, Duration: sec(3.4),
				Detail: "tofu took over the terraform.tfstate that terraform wrote (9 instances, lineage kept, " +
					"serial 1 -> 2 after a refresh-only apply) and its next plan is empty",
				Breaks: []result.Break{{
					Name: "drop-instance", Corruption: "removes the Deployment from the state before the plan",
					Outcome: result.Proved, Failed: true, Detail: "plan proposed 1 to add",
				}},
			},
			{
				ID: "test_plan", Title: "Replan from nothing", Headline: true, Verdict: result.Pass, Duration: sec(11.2),
				Detail: "a fresh working directory with only the state: init from the mirror, then a plan with no changes, " +
					"matching terraform's empty plan on the oracle cluster",
				Breaks: []result.Break{{
					Name: "edit-config", Corruption: "bumps the Deployment's replicas in the root",
					Outcome: result.Proved, Failed: true, Detail: "plan proposed 1 to change",
				}},
			},
			{
				ID: "test_apply", Title: "No-op apply", Headline: true, Verdict: result.Pass, Duration: sec(10.8),
				Detail: "apply reported 0 added, 0 changed, 0 destroyed on both clusters; the resourceVersion of " +
					"all 9 objects unchanged across it",
				Breaks: []result.Break{{
					Name: "touch-object", Corruption: "annotates the ServiceAccount during the apply",
					Outcome: result.Proved, Failed: true, Detail: "1 of 9 resourceVersions moved",
				}},
			},
			{
				ID: "drift_reconverge", Title: "Drift and reconverge", Headline: true, Verdict: result.Pass, Duration: sec(45.9),
				Detail: "the metrics-server container's --metric-resolution changed from 15s to 30s out of band; " +
					"tofu planned exactly one update, kubernetes_deployment.metrics_server, as terraform did for the " +
					"same drift on the oracle cluster; after the apply the argument reads 15s again and the next plan is empty",
				Breaks: []result.Break{{
					Name: "second-drift", Corruption: "also relabels the Service",
					Outcome: result.Proved, Failed: true, Detail: "2 updates planned, want exactly 1",
				}},
			},
			{
				ID: "day2_rename", Title: "Rename", Headline: true, Verdict: result.Pass, Duration: sec(22.6),
				Detail: "a moved block from kubernetes_service_account.metrics_server to .metrics planned 0 to add, " +
					"0 to change, 0 to destroy on both engines; the ServiceAccount's uid unchanged",
				Breaks: []result.Break{{
					Name: "real-rename", Corruption: "changes metadata.name instead of the address",
					Outcome: result.Proved, Failed: true, Detail: "plan proposed a replacement",
				}},
			},
			{
				ID: "day2_remove", Title: "Remove a block", Headline: true, Verdict: result.Pass, Duration: sec(33.1),
				Detail: "removing the APIService's block planned one destroy, as terraform's plan did; after the " +
					"apply v1beta1.metrics.k8s.io is gone, the Service behind it remains, the next plan is empty",
				Breaks: []result.Break{{
					Name: "keep-block", Corruption: "leaves the block in place",
					Outcome: result.Proved, Failed: true, Detail: "no destroy proposed",
				}},
			},
			{
				ID: "day2_count", Title: "Change count", Headline: true, Verdict: result.Pass, Duration: sec(68.7),
				Detail: "a counted ConfigMap added beside the published file (2 instances) scaled to 1 destroyed " +
					"index 1 only, and back to 2 created index 1 only; terraform's plans matched both steps",
				Breaks: []result.Break{{
					Name: "wrong-index", Corruption: "expects index 0 to be destroyed",
					Outcome: result.Proved, Failed: true, Detail: "index 1 destroyed, want index 0",
				}},
			},
			{
				ID: "day2_replace", Title: "Replace with create_before_destroy", Headline: true, Verdict: result.Pass, Duration: sec(56.0),
				Detail: "a ConfigMap under create_before_destroy whose name follows its content was replaced: the " +
					"log shows the new object created before the old one was destroyed, the same order as terraform; " +
					"one object remains and the next plan is empty",
				Breaks: []result.Break{{
					Name: "order", Corruption: "expects the destroy to come first",
					Outcome: result.Proved, Failed: true, Detail: "create logged before destroy",
				}},
			},
			{
				ID: "day2_crash", Title: "Crash mid-apply", Headline: true, Verdict: result.Pass, Duration: sec(215.0),
				Detail: "an apply of two dependent Secrets interrupted with SIGTERM once the first was created; " +
					"the next plan proposed only the second, as terraform's did from the same position, " +
					"and one more apply finished it",
				Breaks: []result.Break{{
					Name: "expect-nothing", Corruption: "asserts the plan after the interrupt is empty",
					Outcome: result.Proved, Failed: true, Detail: "plan proposed 1 to add",
				}},
			},
			{
				ID: "day2_teardown", Title: "Teardown", Headline: true, Verdict: result.Pass, Duration: sec(14.2),
				Detail: "destroy removed every object the state held and nothing else; kube-system is still Active " +
					"and holds exactly the objects read before cold_deploy",
				Breaks: []result.Break{{
					Name: "extra-delete", Corruption: "deletes one of kube-system's own ConfigMaps",
					Outcome: result.Proved, Failed: true, Detail: "kube-system lost ConfigMap extension-apiserver-authentication",
				}},
			},
			{
				ID: "plan_approval", Title: "Plan, review, apply", Headline: true, Verdict: result.Pass, Duration: sec(33.0),
				Detail: "a saved plan adding a label to ClusterRole system:metrics-server applied as reviewed: " +
					"0 added, 1 changed, 0 destroyed, and the label reads back",
				Breaks: []result.Break{{
					Name: "stale-plan", Corruption: "edits the root after the plan is saved",
					Outcome: result.Proved, Failed: true, Detail: "apply refused the saved plan",
				}},
			},
			{
				ID: "greenfield", Title: "Greenfield apply", Headline: true, Verdict: result.Pass, Duration: sec(71.4),
				Detail: "the root applied to a second empty cluster by tofu alone: 9 added; the objects match " +
					"terraform's cold deploy field by field after normalisation",
				Breaks: []result.Break{{
					Name: "drop-expected", Corruption: "removes the APIService from the expected inventory",
					Outcome: result.Proved, Failed: true, Detail: "1 object not expected: APIService/v1beta1.metrics.k8s.io",
				}},
			},
			{ID: "strict", Title: "Strict profile", Verdict: result.NotRun, Reason: noLive},
			{ID: "plan_no_local_state", Title: "Plan with no local state", Verdict: result.NotRun, Reason: noLive},
		},
	}
}
