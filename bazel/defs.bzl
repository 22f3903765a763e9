"""Test macros for gauntlet's BUILD files (gazelle emits them through `# gazelle:map_kind`).

gauntlet_go_test: go_test, plus the pinned toolchain for tests that use pkg/gauntlet/internal/testenv (they
  start real control planes and run the real CLIs) and the corpus files for tests that use the corpus package.
estate_test: the go_test of one estate: its whole gauntlet on the local substrate, with the pinned toolchain
  and that estate's corpus file as inputs, sized and tagged for a real run.

How the inputs reach the test, hermetically:
  toolchain  @gauntlet_toolchain//:seed, the binaries `gauntlet toolchain` resolved from third_party/pins.json,
             placed at <runfiles>/gauntlet-toolchain-seed/<tool>/<version-key>/ and named by
             $GAUNTLET_TOOLCHAIN_SEED; the test's own (empty, per-test) cache imports them, verified, instead of
             building. A pin bump changes those files, so it invalidates exactly the tests that use them.
  corpus     @gauntlet_corpus//:<estate>, at <runfiles>/shared/corpus/<host>/<owner>/<repo>/<commit>/<path>:
             the layout the tests already read beside a checkout (../shared/corpus).
  estates    //estates/<estate>:estate (made by estate_test) holds an estate's files; @gauntlet_corpus//:estates
             all of them, for tests that load estates.
  kind       the node images' digests are in third_party/pins.json, compiled into every test binary.
"""

load("@rules_go//go:def.bzl", "go_test")

_SEED_ROOT = "gauntlet-toolchain-seed"

def _runfiles_tree_impl(ctx):
    links = {}
    prefix = ctx.attr.strip_prefix + "/" if ctx.attr.strip_prefix else ""
    for f in ctx.files.srcs:
        rel = f.path
        if f.owner.workspace_root and rel.startswith(f.owner.workspace_root + "/"):
            rel = rel[len(f.owner.workspace_root) + 1:]
        if not rel.startswith(prefix):
            fail("{} is not under strip_prefix {}".format(rel, ctx.attr.strip_prefix))
        links[ctx.attr.root + "/" + rel[len(prefix):]] = f
    runfiles = ctx.runfiles(root_symlinks = links).merge_all([d[DefaultInfo].default_runfiles for d in ctx.attr.deps])
    return [DefaultInfo(
        files = depset(ctx.files.srcs, transitive = [d[DefaultInfo].files for d in ctx.attr.deps]),
        runfiles = runfiles,
    )]

runfiles_tree = rule(
    implementation = _runfiles_tree_impl,
    doc = "Places files at <runfiles>/<root>/<path without strip_prefix> in every test that depends on it.",
    attrs = {
        "deps": attr.label_list(doc = "Other runfiles_trees whose files come along."),
        "root": attr.string(doc = "Directory under the runfiles root."),
        "srcs": attr.label_list(allow_files = True),
        "strip_prefix": attr.string(doc = "Path prefix (in its repository) to drop."),
    },
)

def _missing_impl(ctx):
    fail(ctx.attr.message)

missing = rule(
    implementation = _missing_impl,
    doc = "Fails the build of anything depending on it with a message (a corpus file that is not available).",
    attrs = {"message": attr.string(mandatory = True)},
)

def _home(env):
    # Bazel's test-setup.sh replaces a relative HOME with $TEST_TMPDIR: the default gauntlet cache
    # (~/.cache/gauntlet) and anything else a tool keeps under HOME is then the test's own, empty at start.
    env.setdefault("HOME", "TEST_TMPDIR")

def _seed_env():
    # rules_go runs a test in its package directory, <runfiles>/_main/<package>.
    up = "../" * (len(native.package_name().split("/")) + 1)
    return {"GAUNTLET_TOOLCHAIN_SEED": up + _SEED_ROOT}

def _uses(deps, package):
    for d in deps:
        if d == package or d.startswith(package + ":"):
            return True
    return False

def gauntlet_go_test(name, deps = [], data = [], env = {}, tags = [], **kwargs):
    """go_test with the toolchain and corpus inputs its imports call for.

    Args:
      name: the test's name (gazelle's).
      deps: as go_test; //pkg/gauntlet/internal/testenv brings the toolchain, //pkg/gauntlet/corpus the corpus
        files, //pkg/gauntlet/estate the estates' files.
      data: as go_test, plus those inputs.
      env: as go_test, plus HOME and $GAUNTLET_TOOLCHAIN_SEED.
      tags: as go_test.
      **kwargs: passed to go_test (size defaults to medium for toolchain tests).
    """
    data = list(data)
    env = dict(env)
    _home(env)
    tags = list(tags)
    if _uses(deps, "//pkg/gauntlet/internal/testenv"):
        data.append("@gauntlet_toolchain//:seed")
        env.update(_seed_env())

        # Real control planes and CLIs: seconds to a minute or two of both cores.
        kwargs.setdefault("size", "medium")
    if _uses(deps, "//pkg/gauntlet/corpus"):
        data.append("@gauntlet_corpus//:all")
    if _uses(deps, "//pkg/gauntlet/estate"):
        data.append("@gauntlet_corpus//:estates")
    go_test(name = name, deps = deps, data = data, env = env, tags = tags, **kwargs)

def estate_test(name, deps = [], data = [], env = {}, tags = [], **kwargs):
    """The go_test of an estate under estates/<name>: its full gauntlet, for real.

    The local substrate starts two control planes (subject and oracle) and runs both CLIs through every stage
    and BREAK, then again with every BREAK sabotaged: about 2 x 2.5 minutes of both cores here
    (corpus-k8s-metrics-server). So the test is large, runs alone (exclusive: a loaded machine slows every
    stage and skews its figures) and has the long timeout (15 min). Tagged `estate` and `gauntlet` to select them or leave them out
    (--test_tag_filters=-estate).

    Args:
      name: the test's name (gazelle's).
      deps: as go_test.
      data: as go_test, plus the estate's files, the toolchain seed and its corpus file.
      env: as go_test, plus HOME, $GAUNTLET_TOOLCHAIN_SEED and GO_TEST_WRAP=0 (the test's own JUnit).
      tags: as go_test, plus estate, gauntlet and exclusive.
      **kwargs: passed to go_test (size large, timeout long and -test.v unless given).
    """
    estate = native.package_name().split("/")[-1]

    # The estate's own files (estate.yaml and whatever it names), for this test and any other that loads it.
    native.filegroup(
        name = "estate",
        srcs = native.glob(["**"], exclude = ["BUILD.bazel", "**/*.go"]),
        visibility = ["//visibility:public"],
    )
    data = list(data) + [":estate", "@gauntlet_toolchain//:seed", "@gauntlet_corpus//:" + estate]
    env = dict(env)
    _home(env)
    env.update(_seed_env())

    # The test writes the gauntlet's own JUnit (a testcase per stage, with its BREAKs) to $XML_OUTPUT_FILE;
    # rules_go's wrapper would overwrite it with one converted from `go test` output, so it is turned off.
    env.setdefault("GO_TEST_WRAP", "0")
    tags = list(tags)
    for t in ["estate", "gauntlet", "exclusive"]:
        if t not in tags:
            tags.append(t)
    kwargs.setdefault("size", "large")
    kwargs.setdefault("timeout", "long")

    # -test.v: the run's progress (stage by stage) lands in test.log.
    kwargs.setdefault("args", ["-test.v"])
    go_test(name = name, deps = deps, data = data, env = env, tags = tags, **kwargs)
