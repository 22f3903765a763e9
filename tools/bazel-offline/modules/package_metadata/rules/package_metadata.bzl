"""No-op package_metadata for the offline build: the target exists, carries no metadata."""

def package_metadata(name, visibility = None, **_kwargs):
    # applicable_licenses = [] keeps the default-metadata mechanism from pointing this target at itself
    # (a dependency cycle).
    native.filegroup(
        name = name,
        srcs = [],
        applicable_licenses = [],
        visibility = visibility,
    )
