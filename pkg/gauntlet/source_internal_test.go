package gauntlet

import (
	"strings"
	"testing"

	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/estate"
)

// A list source's recorded sha256 is over its listing, and the result
// says so; a single file's is the file's own.
func TestEstateResultMarksAListingHash(t *testing.T) {
	one := &estate.Spec{Name: "one", Source: &estate.Source{Repository: "https://github.com/e/a", Commit: strings.Repeat("a", 40),
		Path: "main.tf", SHA256: strings.Repeat("1", 64)}}
	if e := estateResult(one); e.SourceSHA256Listing || e.SourceSHA256 != strings.Repeat("1", 64) {
		t.Errorf("single file: %+v", e)
	}
	many := &estate.Spec{Name: "many", Source: &estate.Source{Repository: "https://github.com/e/a", Commit: strings.Repeat("a", 40),
		Files: []estate.SourceFile{{Path: "main.tf", SHA256: strings.Repeat("1", 64)}, {Path: "t/a.tpl", SHA256: strings.Repeat("2", 64)}}}}
	if e := estateResult(many); !e.SourceSHA256Listing {
		t.Errorf("list source: the listing hash is not marked: %+v", e)
	}
}
