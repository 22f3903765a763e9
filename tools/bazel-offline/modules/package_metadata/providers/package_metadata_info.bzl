"""Offline stand-in for the provider newer rules_go versions load (unused by rules_go 0.59.0)."""

PackageMetadataInfo = provider(
    doc = "Stub: the offline build records no package metadata.",
    fields = ["metadata"],
)
