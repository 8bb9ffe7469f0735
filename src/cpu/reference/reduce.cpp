// Reference kernels of the reductions: one pass per output element over the reduced dims,
// accumulating in double (floats), wrapping int64 (integers) or complex<double>.
#include <cmath>

#include "cpu/reference/families.hpp"
#include "cpu/reference/ref_common.hpp"

namespace wgt::cpu_ref {

void run_reduce(OpCall& call) {
  const Tensor& x = call.inputs[0];
  Tensor& out = call.outputs[0];
  const ReduceOp op = call.attrs.reduce;
  const Split s = split_axes(x, call.attrs.axes);
  int64_t count = 1;
  for (int64_t d : s.inner_shape) count *= d;
  const uint8_t* xb = base_of(x);
  uint8_t* ob = mut_base_of(out);
  const DType xt = x.dtype(), ot = out.dtype();
  // Output positions follow the kept dims in order, so the outer walk's flat index is the
  // output element index (keepdim only inserts size-1 dims).
  walk<1>(s.outer_shape, {s.outer_strides.data()}, {x.offset()}, [&](int64_t e, const std::array<int64_t, 1>& ob0) {
    auto inner = [&](auto&& f) {
      walk<1>(s.inner_shape, {s.inner_strides.data()}, {ob0[0]},
              [&](int64_t j, const std::array<int64_t, 1>& o) { f(j, o[0]); });
    };
    if (op == ReduceOp::ArgMax) {
      // First maximum wins; NaN is larger than any number (first NaN wins), like numpy.
      int64_t best = 0;
      double bv = 0;
      bool have = false, best_nan = false;
      inner([&](int64_t j, int64_t o) {
        const double v = is_floating(xt) ? load_real(xb, xt, o) : static_cast<double>(load_int(xb, xt, o));
        if (best_nan) return;
        if (!have || std::isnan(v) || v > bv) { best = j; bv = v; best_nan = std::isnan(v); have = true; }
      });
      store_int(ob, ot, e, best);
      return;
    }
    switch (domain_of(xt)) {
      case Domain::Complex: {
        cplx acc = op == ReduceOp::Prod ? cplx(1, 0) : cplx(0, 0);  // supports(): sum, mean, prod
        inner([&](int64_t, int64_t o) { acc = op == ReduceOp::Prod ? acc * load_cplx(xb, xt, o) : acc + load_cplx(xb, xt, o); });
        if (op == ReduceOp::Mean) acc /= static_cast<double>(count);  // each part 0/0 = NaN for empty
        store_cplx(ob, ot, e, acc);
        break;
      }
      case Domain::Real: {
        double acc = op == ReduceOp::Prod ? 1.0 : 0.0;
        bool first = true;
        inner([&](int64_t, int64_t o) {
          const double v = load_real(xb, xt, o);
          switch (op) {
            case ReduceOp::Sum: case ReduceOp::Mean: acc += v; break;
            case ReduceOp::Prod: acc *= v; break;
            case ReduceOp::Max: acc = (first || std::isnan(v) || v > acc) && !std::isnan(acc) ? v : acc; break;
            case ReduceOp::Min: acc = (first || std::isnan(v) || v < acc) && !std::isnan(acc) ? v : acc; break;
            default: break;
          }
          first = false;
        });
        if (op == ReduceOp::Mean) acc /= static_cast<double>(count);  // 0/0 = NaN for empty
        store_real(ob, ot, e, acc);
        break;
      }
      case Domain::Int: {
        int64_t acc = op == ReduceOp::Prod ? 1 : 0;
        bool first = true;
        inner([&](int64_t, int64_t o) {
          const int64_t v = load_int(xb, xt, o);
          switch (op) {
            case ReduceOp::Sum: acc = wadd(acc, v); break;
            case ReduceOp::Prod: acc = wmul(acc, v); break;
            case ReduceOp::Max: acc = (first || v > acc) ? v : acc; break;
            case ReduceOp::Min: acc = (first || v < acc) ? v : acc; break;
            default: break;
          }
          first = false;
        });
        store_int(ob, ot, e, acc);
        break;
      }
    }
  });
}

}  // namespace wgt::cpu_ref
