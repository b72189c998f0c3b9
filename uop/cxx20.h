// Stops a build without C++20 at once with one clear message, before any other header of uopc (or Abseil)
// fails in a way that does not say why. Every public header of uop/ and rewrite/ includes it first.
#ifndef UOPC_UOP_CXX20_H_
#define UOPC_UOP_CXX20_H_

#if __cplusplus < 202002L
#error "uopc needs C++20: build with --cxxopt=-std=c++20 (import uopc's tools/consumer.bazelrc from your .bazelrc)"
// Ends the compilation here: nothing after this line could compile either.
#include "uopc needs C++20 (see the #error above)"
#endif

#endif  // UOPC_UOP_CXX20_H_
