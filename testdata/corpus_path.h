// Where a corpus file of testdata/corpus is, for binaries that read it outside `bazel test` as well.
//
// `bazel run` starts a benchmark in its runfiles tree, and a binary run by hand usually starts at the
// workspace root or in bazel-bin; tests just open "testdata/corpus/<name>" relative to their runfiles.
#ifndef UOPC_TESTDATA_CORPUS_PATH_H_
#define UOPC_TESTDATA_CORPUS_PATH_H_

#include <string>

namespace uopc {

// The first of testdata/corpus/<name>, ../testdata/corpus/<name> and ../../testdata/corpus/<name> that
// exists, else testdata/corpus/<name> (so that the caller's open fails with that path).
std::string CorpusPath(const char* name);

}  // namespace uopc

#endif  // UOPC_TESTDATA_CORPUS_PATH_H_
