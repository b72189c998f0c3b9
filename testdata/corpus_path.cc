#include "testdata/corpus_path.h"

#include <cstdio>

namespace uopc {

std::string CorpusPath(const char* name) {
  for (std::string prefix : {"", "../", "../../"}) {
    std::string path = prefix + "testdata/corpus/" + name;
    if (FILE* f = std::fopen(path.c_str(), "r")) {
      std::fclose(f);
      return path;
    }
  }
  return std::string("testdata/corpus/") + name;
}

}  // namespace uopc
