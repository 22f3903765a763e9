"""Module extension go_sdk_pin: the one Go SDK gauntlet's Bazel build compiles with.

MODULE.bazel pins a Go release by version and sha256 and hands the repository made here (go_sdk_pinned) to
rules_go's go_sdk.wrap, so rules_go registers it first and gazelle runs its tools with it too. The version
must equal go.mod's toolchain line: a bump of one without the other fails here, before anything builds.

Where the bytes come from (always the same release, always checked against a pinned sha256):
  default                            go.dev's release archive go<version>.<os>-<arch>.tar.gz, through rules_go's
                                     go_download_sdk and its default URL; sha256 from `archives`.
  GAUNTLET_GO_SDK_FROM=goproxy       the Go module proxy's golang.org/toolchain@v0.0.1-go<version>.<os>-<arch>.zip
  (set by --config=offline)          from the first proxy URL in $GOPROXY; sha256 from `module_zips`. For a
                                     machine whose only network is that proxy.
"""

load("@rules_go//go:deps.bzl", "go_download_sdk")

_FROM_ENV = "GAUNTLET_GO_SDK_FROM"

_release = tag_class(
    doc = "The Go release to build with.",
    attrs = {
        "archives": attr.string_dict(
            doc = "sha256 of go.dev's go<version>.<os>-<arch>.tar.gz, keyed <os>_<arch>.",
        ),
        "go_mod": attr.label(
            doc = "go.mod whose toolchain (else go) line must name this version.",
            mandatory = True,
        ),
        "module_zips": attr.string_dict(
            doc = "sha256 of golang.org/toolchain@v0.0.1-go<version>.<os>-<arch>.zip, keyed <os>_<arch>.",
        ),
        "version": attr.string(
            doc = "Go version without the go prefix, e.g. 1.26.8.",
            mandatory = True,
        ),
    },
)

def _getenv(mctx, name):
    if hasattr(mctx, "getenv"):
        return mctx.getenv(name) or ""
    return mctx.os.environ.get(name, "")

def _go_mod_version(mctx, go_mod):
    toolchain = ""
    language = ""
    for line in mctx.read(go_mod).splitlines():
        fields = [f for f in line.replace("\t", " ").split(" ") if f]
        if len(fields) == 2 and fields[0] == "toolchain" and fields[1].startswith("go"):
            toolchain = fields[1][len("go"):]
        elif len(fields) == 2 and fields[0] == "go":
            language = fields[1]
    return toolchain or language

def _host_platform(mctx):
    goos = {"linux": "linux", "mac os x": "darwin"}.get(mctx.os.name, mctx.os.name)
    goarch = {"x86_64": "amd64", "amd64": "amd64", "aarch64": "arm64", "arm64": "arm64"}.get(mctx.os.arch, mctx.os.arch)
    return goos, goarch

def _first_proxy(goproxy):
    for entry in goproxy.replace("|", ",").split(","):
        entry = entry.strip()
        if entry.startswith("https://") or entry.startswith("http://"):
            return entry.rstrip("/")
    return ""

def _go_sdk_pin_impl(mctx):
    releases = [t for m in mctx.modules if m.is_root for t in m.tags.release]
    if len(releases) != 1:
        fail("go_sdk_pin: the root module must declare exactly one go_sdk_pin.release, got {}".format(len(releases)))
    rel = releases[0]
    in_go_mod = _go_mod_version(mctx, rel.go_mod)
    if in_go_mod != rel.version:
        fail("go_sdk_pin: MODULE.bazel pins Go {} but {} names go{}: bump both (and both sha256s) together".format(
            rel.version,
            rel.go_mod,
            in_go_mod,
        ))
    goos, goarch = _host_platform(mctx)
    platform = goos + "_" + goarch
    source = _getenv(mctx, _FROM_ENV)
    if source == "goproxy":
        if platform not in rel.module_zips:
            fail("go_sdk_pin: no module_zips sha256 for {} in MODULE.bazel".format(platform))
        proxy = _first_proxy(_getenv(mctx, "GOPROXY"))
        if not proxy:
            fail("go_sdk_pin: {}=goproxy needs a proxy URL in $GOPROXY (got '{}'); --config=offline passes the client's".format(
                _FROM_ENV,
                _getenv(mctx, "GOPROXY"),
            ))
        stem = "v0.0.1-go{}.{}-{}".format(rel.version, goos, goarch)
        go_download_sdk(
            name = "go_sdk_pinned",
            register_toolchains = False,
            sdks = {platform: [stem + ".zip", rel.module_zips[platform]]},
            strip_prefix = "golang.org/toolchain@" + stem,
            urls = [proxy + "/golang.org/toolchain/@v/{}"],
            version = rel.version,
        )
    elif source in ("", "release"):
        if platform not in rel.archives:
            fail("go_sdk_pin: no archives sha256 for {} in MODULE.bazel".format(platform))
        go_download_sdk(
            name = "go_sdk_pinned",
            register_toolchains = False,
            sdks = {platform: ["go{}.{}-{}.tar.gz".format(rel.version, goos, goarch), rel.archives[platform]]},
            version = rel.version,
        )
    else:
        fail("go_sdk_pin: {}='{}': want 'release' (default) or 'goproxy'".format(_FROM_ENV, source))

go_sdk_pin = module_extension(
    implementation = _go_sdk_pin_impl,
    tag_classes = {"release": _release},
    environ = [_FROM_ENV, "GOPROXY"],
    doc = "Makes @go_sdk_pinned, the Go SDK pinned in MODULE.bazel.",
)
