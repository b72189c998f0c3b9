"""uop_golden_tests: one test per golden `.uop` file, LLVM lit + FileCheck style.

A golden file holds a graph in the textual IR, one `RUN:` comment giving the uopc command (`%s` is the file) and
`CHECK:` comments that uopc's output (stdout and stderr together) must satisfy:

    # RUN: uopc print --format=listing %s
    # CHECK: Ops.ADD
    %0 = DEFINE_VAR : int32 arg=('a', 0, 8)
    ...

`# RUN: not uopc ...` expects uopc to reject the input (exit status 1), so CHECK lines can match the error.
"""

_UOPC = "//tools:uopc"
_FILECHECK = "//tools:filecheck"
_RUNNER = "//tools:golden_test.sh"

def uop_golden_tests(name, srcs, size = "small", **kwargs):
    """Defines `<name>_<file>` (an sh_test per file in srcs) and a test_suite `name` holding them all.

    Args:
      name: name of the test_suite; prefix of each test's name.
      srcs: the golden `.uop` files (labels or paths in this package).
      size: size of each test.
      **kwargs: passed to every sh_test (tags, ...).
    """
    uopc = str(Label(_UOPC))
    filecheck = str(Label(_FILECHECK))
    tests = []
    for src in srcs:
        stem = src[:-len(".uop")] if src.endswith(".uop") else src
        test_name = "%s_%s" % (name, stem.replace("/", "_").replace(":", "_").replace("-", "_"))
        native.sh_test(
            name = test_name,
            srcs = [str(Label(_RUNNER))],
            args = [
                "$(rootpath %s)" % uopc,
                "$(rootpath %s)" % filecheck,
                "$(rootpath %s)" % src,
            ],
            data = [uopc, filecheck, src],
            size = size,
            **kwargs
        )
        tests.append(test_name)
    native.test_suite(name = name, tests = tests)
