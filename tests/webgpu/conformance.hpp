// Conformance harness of the WebGPU backend (ideas from ggml's test-backend-ops): a case is
// an op + dtypes + input layouts + tolerance; it runs on the WebGPU backend and on the CPU
// reference with the same random inputs, compares (NMSE, max error, NaN/inf agreement) and
// checks guard regions around the GPU output for out-of-bounds writes.
//   WGT_TEST_OP=regex        run only cases whose name matches
//   WGT_CONFORMANCE_PERF=1   print the GPU time of every case
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "wgt/wgt.hpp"

namespace wgt::conformance {

// How an input tensor is laid out on the device (the values are the same on CPU and GPU).
enum class View {
  Contiguous,
  Transposed,  // built as the transpose of a contiguous tensor (rank >= 2)
  Sliced,      // every other element along the last dim of a larger tensor, nonzero offset
  Expanded,    // first dim broadcast from size 1 (stride 0)
};

struct Input {
  Shape shape;
  DType dtype = DType::F32;
  View view = View::Contiguous;
  double lo = -2.0, hi = 2.0;  // uniform random values in [lo, hi] (integers are rounded)
  bool specials = false;       // sprinkle NaN, +-inf, +-0 and large values (floating dtypes)
  // Edge cases: when non-empty, element i of the underlying host tensor is values[i % size]
  // (converted to the dtype like a host store), replacing the random values.
  std::vector<double> values{};
};

struct Tolerance {
  double nmse = 1e-7;    // sum (got - want)^2 / sum want^2 over finite elements
  double abs = 1e-6;     // each element: |got - want| <= abs + rel * |want|
  double rel = 1e-5;
};

struct Case {
  std::string name;  // unique, matched by WGT_TEST_OP
  OpKind kind = OpKind::Unary;
  std::string op_name;
  OpAttrs attrs{};
  std::vector<Input> inputs{};
  Shape out_shape{};
  DType out_dtype = DType::F32;
  Tolerance tol{};
};

struct Result {
  bool ran = false;        // false: the backend reported the case unsupported (see message)
  bool ok = false;
  std::string message;     // first failure, or the unsupported reason
  double nmse = 0, max_err = 0;
  double gpu_ms = 0;
};

// The WebGPU backend under test, or nullptr with *why (tests must fail, never skip).
DeviceBackend* gpu_backend(std::string* why);
bool selected(const std::string& case_name);  // WGT_TEST_OP filter
bool perf_mode();                             // WGT_CONFORMANCE_PERF
// Runs one case (seeded by its name).
Result run(const Case& c, DeviceBackend& gpu);
// Element `i` of a contiguous host buffer of dtype `t`, as double.
double element(const uint8_t* data, DType t, int64_t i);

}  // namespace wgt::conformance
