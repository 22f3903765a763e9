"""Module extension gauntlet: the pinned toolchain and the corpus files as Bazel repositories.

@gauntlet_toolchain  `gauntlet toolchain` run by the pinned Go SDK into the repository: every tool of
                     third_party/pins.json built from its pinned module with its pinned Go and flags, then
                     verified (build info, version, sha256 where reproducible). :seed exposes the binaries and
                     assets (bazel/defs.bzl places them in tests). Refetched when pins.json, a file of a tool
                     module, the Go SDK or go.mod/go.sum change; a warm Go build cache makes that seconds, and since the
                     builds are reproducible a refetch that changes no pin changes no test input.
@gauntlet_corpus     each estate's pinned corpus file, imported by `gauntlet corpus import` (sha256 verified)
                     from $GAUNTLET_CORPUS_DIR, else ../shared/corpus beside the workspace. The files are
                     third-party: they never enter this repository. :<estate> for one estate, :all for all.

Both run gauntlet's own CLI (tools/gauntlet, built here with the pinned SDK), so Bazel and `go run` resolve
the same things the same way. Cold, the toolchain build takes ~15 min on two cores; progress is printed.
"""

_GO_ENV = ["GOCACHE", "GOMODCACHE", "GOPATH", "GOPROXY", "GOSUMDB", "GONOSUMDB", "GOPRIVATE", "GONOPROXY", "HOME"]

def _getenv(rctx, name):
    if hasattr(rctx, "getenv"):
        return rctx.getenv(name) or ""
    return rctx.os.environ.get(name, "")

def _go_env(rctx):
    go = rctx.path(rctx.attr._go)
    env = {
        "CGO_ENABLED": "0",
        "GOFLAGS": "-mod=readonly -buildvcs=false",
        "GOTOOLCHAIN": "local",
        "GOWORK": "off",
        "PATH": "{}:/usr/bin:/bin".format(go.dirname),
    }
    for name in _GO_ENV:
        value = _getenv(rctx, name)
        if value:
            env[name] = value
    return go, env

def _run(rctx, what, args, env, workdir, timeout = 600):
    rctx.report_progress(what)
    res = rctx.execute(args, environment = env, working_directory = str(workdir), timeout = timeout, quiet = False)
    if res.return_code != 0:
        fail("{} failed (exit {}): {}\n{}".format(what, res.return_code, " ".join([str(a) for a in args]), res.stderr))
    return res

def _workspace(rctx):
    return rctx.path(rctx.attr._module_file).dirname

def _build_cli(rctx, go, env):
    ws = _workspace(rctx)
    cli = rctx.path("bin/gauntlet")

    # Cold (a Go build cache that has not seen this SDK) this is minutes of both cores, more on a loaded machine:
    # 10 minutes was once too few.
    _run(rctx, "building gauntlet's CLI with the pinned Go SDK", [go, "build", "-trimpath", "-o", cli, "./tools/gauntlet"], env, ws, timeout = 3600)
    return cli

def _watch_inputs(rctx):
    """Reads (so Bazel watches) every file that decides the toolchain's bytes."""
    ws = _workspace(rctx)
    files = [ws.get_child("go.mod"), ws.get_child("go.sum"), ws.get_child("third_party").get_child("pins.json")]
    for d in sorted(ws.get_child("third_party").get_child("tools").readdir(), key = str):
        if d.is_dir:
            # tool.mod, tool.sum and any main file a pin names (main_file)
            files.extend([f for f in sorted(d.readdir(), key = str) if not f.is_dir])
    for f in files:
        rctx.read(f)

def _toolchain_impl(rctx):
    _watch_inputs(rctx)
    go, env = _go_env(rctx)
    cli = _build_cli(rctx, go, env)
    cache = rctx.path("cache")

    # --offline: never HashiCorp's release site; every tool is built from the Go module proxy's sources.
    _run(
        rctx,
        "gauntlet toolchain: building and verifying every pinned tool (cold: ~15 min on two cores)",
        [cli, "toolchain", "--cache", cache, "--offline"],
        env,
        _workspace(rctx),
        timeout = 7200,
    )

    # The mutant engine (pins group `mutants`, outside the default set) for the kill matrix's targets
    # (defs.bzl mutant_tests): a small Go build, seconds warm.
    _run(
        rctx,
        "gauntlet toolchain: building gauntlet-mutant for the kill matrix",
        [cli, "toolchain", "--cache", cache, "--offline", "--only", "gauntlet-mutant"],
        env,
        _workspace(rctx),
        timeout = 1800,
    )

    # Build trees and downloaded sources are not part of the result.
    rctx.delete("cache/build")
    rctx.delete("cache/src")
    srcs = []
    tools = []
    for tool in sorted(rctx.path("cache/toolchain").readdir(), key = str):
        if not tool.is_dir or tool.basename == "mirror":
            continue
        for entry in sorted(tool.readdir(), key = str):
            if not entry.is_dir:
                continue
            tools.append("{}/{}".format(tool.basename, entry.basename))
            for f in sorted(entry.readdir(), key = str):
                if f.basename in ("stamp.json", "build.log") or f.basename.endswith(".tmp"):
                    continue
                srcs.append("cache/toolchain/{}/{}/{}".format(tool.basename, entry.basename, f.basename))
    if not tools:
        fail("gauntlet toolchain resolved nothing into {}".format(cache))
    rctx.file("tools.txt", "\n".join(tools) + "\n")
    rctx.file("BUILD.bazel", """\
load("{defs}", "runfiles_tree")

# Generated by bazel/gauntlet.bzl: the binaries `gauntlet toolchain` resolved from third_party/pins.json.
runfiles_tree(
    name = "seed",
    srcs = {srcs},
    root = "gauntlet-toolchain-seed",
    strip_prefix = "cache/toolchain",
    visibility = ["//visibility:public"],
)

exports_files(["tools.txt"])
""".format(defs = str(rctx.attr._defs), srcs = repr(srcs)))

_COMMON_ATTRS = {
    "_defs": attr.label(default = "//bazel:defs.bzl"),
    "_go": attr.label(default = "@go_sdk_pinned//:bin/go"),
    "_module_file": attr.label(default = "//:MODULE.bazel"),
}

gauntlet_toolchain = repository_rule(
    implementation = _toolchain_impl,
    attrs = _COMMON_ATTRS,
    environ = _GO_ENV,
)

def _corpus_impl(rctx):
    go, env = _go_env(rctx)
    ws = _workspace(rctx)
    source = _getenv(rctx, "GAUNTLET_CORPUS_DIR") or str(ws.dirname) + "/shared/corpus"
    estates = ws.get_child("estates")
    names = []
    for e in sorted(estates.readdir(), key = str):
        spec = e.get_child("estate.yaml")

        # Watched whether it exists or not: an estate.yaml added to a folder already there (roots written first)
        # must bring its target in, and a folder's listing alone does not change then.
        rctx.watch(spec)
        if spec.exists:
            rctx.read(spec)
            names.append(e.basename)
    cli = _build_cli(rctx, go, env) if names else None
    targets = []
    for name in names:
        res = rctx.execute(
            [cli, "corpus", "import", "--cache", rctx.path(name), "--estates", estates, source, name],
            environment = env,
            working_directory = str(ws),
            timeout = 120,
        )
        files = []
        if res.return_code == 0 and rctx.path(name + "/corpus").exists:
            files = _files_under(rctx.path(name + "/corpus"), name + "/corpus")
        if res.return_code != 0:
            targets.append("""missing(
    name = {name},
    message = {msg},
)
""".format(name = repr(name), msg = repr(
                "estate {}: its corpus file could not be imported from {}: {}\n".format(name, source, res.stderr.strip()) +
                "Put the corpus there (laid out <owner>/<repo>/<commit>/<path>) or pass --repo_env=GAUNTLET_CORPUS_DIR=DIR.",
            )))
        else:
            targets.append("""runfiles_tree(
    name = {name},
    srcs = {srcs},
    root = "shared/corpus",
    strip_prefix = {prefix},
)
""".format(name = repr(name), srcs = repr(files), prefix = repr(name + "/corpus")))
    rctx.file("BUILD.bazel", """\
load("{defs}", "missing", "runfiles_tree")

# Generated by bazel/gauntlet.bzl: the estates' corpus files, imported from {source}.
package(default_visibility = ["//visibility:public"])

runfiles_tree(
    name = "all",
    deps = {names},
)

# Every estate's own files (estate.yaml and what it names), made by estate_tests in //estates.
filegroup(
    name = "estates",
    srcs = {estates},
)

{targets}""".format(defs = str(rctx.attr._defs), source = source, names = repr([":" + n for n in names]), estates = repr(["@@//estates:files"] if names else []), targets = "\n".join(targets)))

def _files_under(path, prefix):
    """Every file under path, as prefix/<relative path> (Starlark has no recursion)."""
    out = []
    todo = [(path, prefix)]
    for _ in range(10000):
        if not todo:
            break
        dir, rel = todo.pop()
        for child in sorted(dir.readdir(), key = str):
            if child.is_dir:
                todo.append((child, rel + "/" + child.basename))
            else:
                out.append(rel + "/" + child.basename)
    return sorted(out)

gauntlet_corpus = repository_rule(
    implementation = _corpus_impl,
    attrs = _COMMON_ATTRS,
    environ = _GO_ENV + ["GAUNTLET_CORPUS_DIR"],
)

def _gauntlet_impl(_mctx):
    gauntlet_toolchain(name = "gauntlet_toolchain")
    gauntlet_corpus(name = "gauntlet_corpus")

gauntlet = module_extension(
    implementation = _gauntlet_impl,
    doc = "Makes @gauntlet_toolchain and @gauntlet_corpus.",
)
