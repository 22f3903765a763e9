"""Test macros for gauntlet's BUILD files (gazelle emits them through `# gazelle:map_kind`).

gauntlet_go_test: go_test, plus the pinned toolchain for tests that use internal/testenv (they
  start real control planes and run the real CLIs) and the corpus files for tests that use the corpus package.
estate_tests: a go_test per estates/<estate>/estate.yaml, generated from the yaml alone: its whole gauntlet on
  the local substrate, with the pinned toolchain and that estate's corpus files as inputs, sized and tagged for a
  real run.

How the inputs reach the test, hermetically:
  toolchain  @gauntlet_toolchain//:seed, the binaries `gauntlet toolchain` resolved from third_party/pins.json,
             placed at <runfiles>/gauntlet-toolchain-seed/<tool>/<version-key>/ and named by
             $GAUNTLET_TOOLCHAIN_SEED; the test's own (empty, per-test) cache imports them, verified, instead of
             building. A pin bump changes those files, so it invalidates exactly the tests that use them.
  corpus     @gauntlet_corpus//:<estate>, at <runfiles>/shared/corpus/<host>/<owner>/<repo>/<commit>/<path>:
             the layout the tests already read beside a checkout (../shared/corpus).
  estates    //estates:files (made by estate_tests) holds every estate's files; @gauntlet_corpus//:estates
             points at it, for tests that load estates.
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
      deps: as go_test; //internal/testenv brings the toolchain, //internal/corpus the corpus
        files, //pkg/gauntlet/estate the estates' files.
      data: as go_test, plus those inputs.
      env: as go_test, plus HOME, $GAUNTLET_TOOLCHAIN_SEED and GAUNTLET_TESTS=all (the second tier).
      tags: as go_test.
      **kwargs: passed to go_test (size defaults to medium, timeout to long, for toolchain tests).
    """
    data = list(data)
    env = dict(env)
    _home(env)
    tags = list(tags)
    if _uses(deps, "//internal/testenv"):
        data.append("@gauntlet_toolchain//:seed")
        env.update(_seed_env())

        # The second tier: tests the README's test command skips for its 15-minute budget (testenv.SecondTier)
        # run here, where a target whose inputs did not change is a cache hit.
        env.setdefault("GAUNTLET_TESTS", "all")

        # Real control planes and CLIs: seconds to a minute or two of both cores, several minutes for a test that
        # runs a whole estate (stage's hand-off on the pair), longer on a loaded machine.
        kwargs.setdefault("size", "medium")
        kwargs.setdefault("timeout", "long")
    if _uses(deps, "//internal/corpus"):
        data.append("@gauntlet_corpus//:all")
    if _uses(deps, "//pkg/gauntlet/estate"):
        data.append("@gauntlet_corpus//:estates")
    go_test(name = name, deps = deps, data = data, env = env, tags = tags, **kwargs)

_ESTATE_TEST_GO = """\
// Code generated by bazel/defs.bzl (estate_tests) for estates/{estate}; DO NOT EDIT.
package estate_test

import (
\t"testing"

\t"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/gauntlettest"
)

func TestGauntlet(t *testing.T) {{ gauntlettest.Run(t, "{estate}") }}
"""

def estate_tests(name = "files"):
    """One test per estate: every estates/<estate>/estate.yaml becomes //estates:<estate>, from the yaml alone.

    An estate is data: its folder holds estate.yaml (and any Terraform files it writes here), no Go code and no
    BUILD file. The test's source is generated: gauntlettest.Run on that folder (pkg/gauntlet/gauntlettest), the
    same driver `go test ./estates/` and other repositories use. The local substrate starts two control planes
    (subject and oracle) and runs both CLIs through every stage and BREAK: about 2.5 minutes of both cores here
    for corpus-k8s-metrics-server, twice when its estate.yaml asks for the sabotaged pass. So each test is large,
    runs alone (exclusive: a loaded machine slows every stage and skews its figures) and has the eternal timeout.
    Tagged `estate` and `gauntlet` to select them or leave them out (--test_tag_filters=-estate).

    Args:
      name: the filegroup of every estate's files (for tests that load estates, through
        @gauntlet_corpus//:estates).
    """
    native.filegroup(
        name = name,
        srcs = native.glob(["*/**"], exclude = ["**/*.go", "**/BUILD.bazel"]),
        visibility = ["//visibility:public"],
    )
    for spec in native.glob(["*/estate.yaml"]):
        estate = spec.split("/")[0]
        src = estate + "_gauntlet_test.go"
        native.genrule(
            name = estate + "_gauntlet_test_go",
            outs = [src],
            cmd = "cat > $@ <<'EOF'\n" + _ESTATE_TEST_GO.format(estate = estate) + "EOF",
        )
        env = {
            # The test writes the gauntlet's own JUnit (a testcase per stage, with its BREAKs) to $XML_OUTPUT_FILE;
            # rules_go's wrapper would overwrite it with one converted from `go test` output, so it is turned off.
            "GO_TEST_WRAP": "0",
        }
        _home(env)
        env.update(_seed_env())
        go_test(
            name = estate,
            srcs = [src],
            deps = ["//pkg/gauntlet/gauntlettest"],
            data = native.glob([estate + "/**"], exclude = ["**/*.go", "**/BUILD.bazel"]) + [
                "@gauntlet_toolchain//:seed",
                "@gauntlet_corpus//:" + estate,
            ],
            env = env,
            tags = ["estate", "gauntlet", "exclusive"],
            size = "large",
            # Two whole runs when the estate asks for the sabotaged pass, each bounded at 20 minutes by
            # gauntlettest.Timeout: Bazel's long (900 s) cut metrics-server off in its sabotaged pass under
            # --config=hermetic on a loaded machine, after a clear pass of 9m12s.
            timeout = "eternal",
            # -test.v: the run's progress (stage by stage) lands in test.log.
            args = ["-test.v"],
        )

_MUTANT_TEST_GO = """\
// Code generated by bazel/defs.bzl (mutant_tests) for estates/{estate}, mutant {mutant}; DO NOT EDIT.
package mutant_test

import (
\t"testing"

\t"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/gauntlettest"
)

func TestMutant(t *testing.T) {{ gauntlettest.Mutant(t, "{estate}", "{mutant}") }}
"""

def mutant_tests(estate, mutants, name = "all_mutants"):
    """The kill matrix as one target per mutant: //estates:<estate>_mutant_<mutant>, and a test_suite of them.

    Each runs the estate's gauntlet with that mutant engine (gauntlet-mutant wrapping the pinned tofu, from the
    toolchain seed) as the subject, its expected stages only, and fails unless a stage the mutant names caught it
    (the identity mutant, tofu unchanged, must survive): gauntlettest.Mutant. A target per mutant is cached and
    can be spread over machines on its own. The list must be mutant.All() plus identity (a test in //estates
    checks bazel/mutants.bzl against it).

    Args:
      estate: the estate's folder under estates/.
      mutants: the mutants' names.
      name: the test_suite of every mutant's target.
    """
    tests = []
    for m in mutants:
        target = "{}_mutant_{}".format(estate, m.replace("-", "_"))
        src = target + "_test.go"
        native.genrule(
            name = target + "_go",
            outs = [src],
            cmd = "cat > $@ <<'EOF'\n" + _MUTANT_TEST_GO.format(estate = estate, mutant = m) + "EOF",
        )
        env = {}
        _home(env)
        env.update(_seed_env())
        go_test(
            name = target,
            srcs = [src],
            deps = ["//pkg/gauntlet/gauntlettest"],
            data = native.glob([estate + "/**"], exclude = ["**/*.go", "**/BUILD.bazel"]) + [
                "@gauntlet_toolchain//:seed",
                "@gauntlet_corpus//:" + estate,
            ],
            env = env,
            tags = ["mutant", "gauntlet", "exclusive"],
            size = "large",
            timeout = "long",
            args = ["-test.v"],
        )
        tests.append(":" + target)
    native.test_suite(name = name, tests = tests, tags = ["mutant"])
