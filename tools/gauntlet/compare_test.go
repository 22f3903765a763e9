package main

import (
	"strings"
	"testing"
)

func TestCompareSelectsEstatesAndShardsThemByName(t *testing.T) {
	all, err := selectEstates("../../estates", "all", "")
	if err != nil || len(all) < 3 {
		t.Fatalf("all: %d estates, %v", len(all), err)
	}
	seen := map[string]int{}
	for i := 1; i <= 3; i++ {
		part, err := selectEstates("../../estates", "all", strings.Join([]string{string(rune('0' + i)), "3"}, "/"))
		if err != nil {
			t.Fatalf("shard %d/3: %v", i, err)
		}
		for _, s := range part {
			seen[s.Name]++
		}
	}
	for _, s := range all {
		if seen[s.Name] != 1 {
			t.Errorf("%s is in %d shards, want exactly one", s.Name, seen[s.Name])
		}
	}
	two, err := selectEstates("../../estates", "reference-k8s-platform-app,corpus-k8s-metrics-server", "")
	if err != nil || len(two) != 2 || two[0].Name != "corpus-k8s-metrics-server" {
		t.Errorf("two by name: %v", err)
	}
	for _, bad := range []string{"0/3", "4/3", "1", "a/b", "1/0"} {
		if _, err := selectEstates("../../estates", "all", bad); err == nil || !strings.Contains(err.Error(), "want I/N") {
			t.Errorf("--shard %s: %v", bad, err)
		}
	}
	if _, err := selectEstates("../../estates", "no-such-estate", ""); err == nil {
		t.Errorf("an unknown estate was taken")
	}
}
