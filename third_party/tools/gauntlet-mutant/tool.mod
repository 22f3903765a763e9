// Tool module: builds gauntlet's own gauntlet-mutant from the Go files in this directory (also a
// package of the gauntlet module, so vet and its tests cover them). Never imported by the library.
module gauntlet.tools/gauntlet-mutant

go 1.26.0

require github.com/hashicorp/hcl/v2 v2.24.0

require (
	github.com/agext/levenshtein v1.2.1 // indirect
	github.com/apparentlymart/go-textseg/v15 v15.0.0 // indirect
	github.com/google/go-cmp v0.6.0 // indirect
	github.com/mitchellh/go-wordwrap v1.0.1 // indirect
	github.com/zclconf/go-cty v1.16.3 // indirect
	golang.org/x/mod v0.17.0 // indirect
	golang.org/x/sync v0.14.0 // indirect
	golang.org/x/text v0.25.0 // indirect
	golang.org/x/tools v0.21.1-0.20240508182429-e35e4ccd0d2d // indirect
)
