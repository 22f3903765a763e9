// Package thirdparty carries gauntlet's pins and the tool modules that build
// the pinned binaries, embedded so that a repository importing the library
// builds exactly the same tools. See README.md in this directory.
package thirdparty

import "embed"

// Files holds pins.json and tools/<module>/{tool.mod,tool.sum}. The tool
// modules are stored under those names, not go.mod/go.sum, so that they stay
// part of this module's files (Go will not embed another module's files).
//
//go:embed pins.json tools
var Files embed.FS
