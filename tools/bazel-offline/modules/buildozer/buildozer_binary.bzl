"""The buildozer_binary extension `bazel mod tidy` uses, serving the buildozer built beside this file."""

def _buildozer_repo_impl(rctx):
    rctx.symlink(rctx.attr.binary, "buildozer.exe")
    rctx.file("BUILD.bazel", 'exports_files(["buildozer.exe"])\n')

_buildozer_repo = repository_rule(
    implementation = _buildozer_repo_impl,
    attrs = {"binary": attr.label(allow_single_file = True)},
)

def _buildozer_binary_impl(_mctx):
    _buildozer_repo(name = "buildozer_binary", binary = Label("//:buildozer"))

buildozer_binary = module_extension(implementation = _buildozer_binary_impl)
