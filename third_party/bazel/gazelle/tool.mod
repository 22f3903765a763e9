// Tool module: builds the pinned gazelle for .ci/run's BUILD-file check. Never imported by the library.
// Its version must equal gazelle's bazel_dep in MODULE.bazel (.ci/bazel-checks compares them).
module gauntlet.tools/gazelle

go 1.26.0

tool github.com/bazelbuild/bazel-gazelle/cmd/gazelle

require (
	github.com/bazelbuild/bazel-gazelle v0.47.0 // indirect
	github.com/bazelbuild/buildtools v0.0.0-20250930140053-2eb4fccefb52 // indirect
	github.com/bmatcuk/doublestar/v4 v4.9.1 // indirect
	github.com/pmezard/go-difflib v1.0.0 // indirect
	golang.org/x/mod v0.20.0 // indirect
	golang.org/x/sync v0.10.0 // indirect
	golang.org/x/sys v0.28.0 // indirect
	golang.org/x/tools/go/vcs v0.1.0-deprecated // indirect
)
