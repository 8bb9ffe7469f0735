// One fuzz input through the GGUF reader: parse, then touch every value and tensor the way a
// model loader would. Shared by the seeded mutation test (tests/core/test_gguf_fuzz.cpp) and
// the libFuzzer target (tools/fuzz/gguf_fuzz.cpp). A wgt::Error is an accepted outcome; any
// other exception propagates (the callers treat it as a failure), and out-of-bounds reads are
// caught by the sanitizers.
#pragma once
#include <cstdint>
#include <vector>

#include "wgt/gguf.hpp"
#include "wgt/ops.hpp"
#include "wgt/quant.hpp"

namespace wgt::fuzz {

// Returns true when the bytes parsed. Parse errors must be Format (the buffer is in memory, so
// no IO): anything else is reported through `bad_kind`.
inline bool check_gguf_bytes(std::vector<uint8_t> bytes, bool* bad_kind = nullptr) {
  GgufFile f;
  try {
    f = GgufFile::from_memory(std::move(bytes), "fuzz.gguf");
  } catch (const Error& e) {
    if (e.kind() != ErrorKind::Format && bad_kind) *bad_kind = true;
    return false;
  }
  for (const auto& k : f.keys()) {
    const GgufValue& v = f.at(k);
    (void)v.str();
    try { (void)v.as_int(); } catch (const Error&) {}
    try { (void)v.as_float(); } catch (const Error&) {}
    try { (void)v.as_string(); } catch (const Error&) {}
    try { (void)v.as_strings(); } catch (const Error&) {}
    try { (void)v.as_floats(); } catch (const Error&) {}
    try { (void)v.as_ints(); } catch (const Error&) {}
    try {
      if (v.type() == GgufType::Array && v.size() > 0) (void)v.element(v.size() - 1).str();
    } catch (const Error&) {}
  }
  for (const auto& t : f.tensors()) {
    const uint8_t* p = f.data(t);
    volatile uint8_t sink = 0;
    if (t.nbytes) sink = sink ^ p[0] ^ p[t.nbytes - 1];  // the whole claimed range must be readable
    try {
      const Tensor x = f.tensor(t.name);
      if (x.numel() <= (1 << 16)) (void)cast(x, DType::F64).to_vector<double>();
    } catch (const Error&) {}
    try {
      const QTensor q = f.qtensor(t.name);
      if (q.rows() * q.cols() <= (1 << 16)) (void)dequantize(q).to_vector<float>();
    } catch (const Error&) {}
  }
  return true;
}

}  // namespace wgt::fuzz
