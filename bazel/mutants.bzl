"""The kill matrix's mutants, one Bazel target each (defs.bzl mutant_tests).

Must be internal/mutant's All() plus Identity(), in that order: estates/mutants_bzl_test.go checks it.
"""

MUTANTS = [
    "ignore-moved",
    "ignore-cbd",
    "ignore-import",
    "drop-one-create",
    "no-refresh",
    "stale-plan-ok",
    "lost-interrupt",
    "destroy-leaks-one",
    "lying-summary",
    "state-forgets",
    "exit-code-lies",
    "parallelism-ignored",
    "identity",
]
