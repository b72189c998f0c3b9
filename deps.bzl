"""Offline external repositories for uopc and for workspaces that consume it.

A consumer calls `uopc_dependencies()` from its WORKSPACE after declaring `@uopc`. Nothing here downloads: the
three repositories Bazel 4.2.3 would otherwise fetch from the internet (rules_cc, rules_java,
remote_coverage_tools) are replaced by tiny local stand-ins, and Abseil, RE2, GoogleTest and Google Benchmark come
from Debian's packages (see //third_party).
"""

def _rules_cc_shim_impl(rctx):
    rctx.file("WORKSPACE", 'workspace(name = "rules_cc")\n')
    rctx.file("BUILD", "")
    rctx.file("cc/BUILD", """package(default_visibility = ["//visibility:public"])
alias(name = "toolchain_type", actual = "@bazel_tools//tools/cpp:toolchain_type")
""")
    rctx.file("cc/defs.bzl", """# Stand-in for rules_cc: the native rules under their usual names.
cc_binary = native.cc_binary
cc_import = native.cc_import
cc_library = native.cc_library
cc_proto_library = native.cc_proto_library
cc_test = native.cc_test
cc_toolchain = native.cc_toolchain
cc_toolchain_suite = native.cc_toolchain_suite
fdo_prefetch_hints = native.fdo_prefetch_hints
fdo_profile = native.fdo_profile
objc_import = native.objc_import
objc_library = native.objc_library
""")

_rules_cc_shim = repository_rule(implementation = _rules_cc_shim_impl)

def _rules_java_shim_impl(rctx):
    rctx.file("WORKSPACE", 'workspace(name = "rules_java")\n')
    rctx.file("BUILD", "")
    rctx.file("java/BUILD", "")
    rctx.file("java/defs.bzl", """# Stand-in for rules_java: the native rules under their usual names.
java_binary = native.java_binary
java_import = native.java_import
java_library = native.java_library
java_lite_proto_library = native.java_lite_proto_library
java_package_configuration = native.java_package_configuration
java_plugin = native.java_plugin
java_proto_library = native.java_proto_library
java_runtime = native.java_runtime
java_test = native.java_test
java_toolchain = native.java_toolchain
""")

_rules_java_shim = repository_rule(implementation = _rules_java_shim_impl)

def _coverage_tools_shim_impl(rctx):
    # Every *_test rule names @bazel_tools//tools/test:{coverage_report_generator,lcov_merger}, which point here.
    # `bazel test` never runs them; `bazel coverage` is not supported offline.
    rctx.file("WORKSPACE", 'workspace(name = "remote_coverage_tools")\n')
    rctx.file("unsupported.sh", "#!/bin/sh\necho 'bazel coverage is not available offline' >&2\nexit 1\n", executable = True)
    rctx.file("BUILD", """package(default_visibility = ["//visibility:public"])
sh_binary(name = "coverage_report_generator", srcs = ["unsupported.sh"])
sh_binary(name = "lcov_merger", srcs = ["unsupported.sh"])
""")

_coverage_tools_shim = repository_rule(implementation = _coverage_tools_shim_impl)

def uopc_dependencies():
    """Defines every external repository uopc needs; all of them are local."""
    existing = native.existing_rules()
    if "rules_cc" not in existing:
        _rules_cc_shim(name = "rules_cc")
    if "rules_java" not in existing:
        _rules_java_shim(name = "rules_java")
    if "remote_coverage_tools" not in existing:
        _coverage_tools_shim(name = "remote_coverage_tools")
