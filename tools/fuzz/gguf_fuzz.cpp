// libFuzzer target for the GGUF reader (built with -DWGT_FUZZ=ON and clang; see docs/model.md).
//   ./build-fuzz/gguf_fuzz -max_total_time=60 tests/data/gguf_corpus
// Any exception other than wgt::Error, or a parse error of a kind other than Format, aborts.
#include <cstdlib>

#include "../tools/fuzz/gguf_check.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  bool bad_kind = false;
  wgt::fuzz::check_gguf_bytes(std::vector<uint8_t>(data, data + size), &bad_kind);
  if (bad_kind) std::abort();
  return 0;
}
