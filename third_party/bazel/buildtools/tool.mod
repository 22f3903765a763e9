// Tool module: builds the pinned buildifier (.ci/run's Starlark check) and buildozer (`bazel mod tidy`
// offline). Never imported by the library.
module gauntlet.tools/buildtools

go 1.26.0

tool (
	github.com/bazelbuild/buildtools/buildifier
	github.com/bazelbuild/buildtools/buildozer
)

require (
	github.com/bazelbuild/buildtools v0.0.0-20260904073137-eaa4d125b423 // indirect
	github.com/golang/protobuf v1.5.0 // indirect
	github.com/google/safeopen v0.0.0-20260327150837-43626d6f4685 // indirect
	golang.org/x/sys v0.10.0 // indirect
	google.golang.org/protobuf v1.33.0 // indirect
)
