"""cc_fuzz_target: a libFuzzer binary under --config=fuzz, a corpus-replay binary otherwise, and always a
`<name>_regression` cc_test that replays the checked-in seed corpus, so `bazel test //...` runs every corpus."""

def cc_fuzz_target(name, srcs, deps = [], corpus = [], size = "small", **kwargs):
    native.cc_binary(
        name = name,
        srcs = srcs,
        deps = deps + select({
            str(Label("//third_party:libfuzzer")): [],
            "//conditions:default": [Label("//third_party:fuzz_replay_main")],
        }),
        linkopts = select({
            str(Label("//third_party:libfuzzer")): ["-fsanitize=fuzzer"],
            "//conditions:default": [],
        }),
        **kwargs
    )
    native.cc_test(
        name = name + "_regression",
        srcs = srcs,
        deps = deps + [Label("//third_party:fuzz_replay_main")],
        data = corpus,
        size = size,
        args = ["$(locations %s)" % c for c in corpus],
        **kwargs
    )
