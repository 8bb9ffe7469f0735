// Reference matmul: the textbook triple loop per batch entry, reading operands through their
// strides (transposed/expanded views need no copy), accumulating in double / int64 / complex.
#include "cpu/reference/families.hpp"
#include "cpu/reference/ref_common.hpp"

namespace wgt::cpu_ref {

OpCall split_matmul_prologue(const OpCall& call, void (*run)(OpCall&)) {
  const Tensor& a = call.inputs[0];
  OpCall pc = prologue_call(call, Tensor::empty(a.shape(), a.dtype()));
  run(pc);
  return without_prologue(call, pc.outputs[0]);
}

void run_matmul(OpCall& call) {
  if (call.attrs.prologue != OpAttrs::Prologue::None) {
    OpCall inner = split_matmul_prologue(call, [](OpCall& c) { c.kind == OpKind::RMSNorm ? run_norm(c) : run_silu_mul(c); });
    return run_matmul(inner);
  }
  Tensor& out = call.outputs[0];
  const bool tb = call.attrs.transpose_b;
  const int r = out.dim();
  const int64_t M = out.shape()[r - 2], N = out.shape()[r - 1];
  Shape batch(out.shape().begin(), out.shape().end() - 2);
  // Expanding is a no-op when the front-end already broadcast the batch dims; it keeps the
  // oracle correct for callers that build an OpCall without doing so.
  auto full = [&](const Tensor& t) {
    Shape s = batch;
    s.insert(s.end(), t.shape().end() - 2, t.shape().end());
    return t.expand(s);
  };
  const Tensor a = full(call.inputs[0]), b = full(call.inputs[1]);
  const int64_t K = a.shape()[r - 1];
  const int64_t sam = a.strides()[r - 2], sak = a.strides()[r - 1];
  // b element (k, n): b[k, n] normally, b[n, k] when transposed.
  const int64_t sbk = tb ? b.strides()[r - 1] : b.strides()[r - 2];
  const int64_t sbn = tb ? b.strides()[r - 2] : b.strides()[r - 1];
  const uint8_t *ab = base_of(a), *bb = base_of(b);
  uint8_t* ob = mut_base_of(out);
  const DType at = a.dtype(), bt = b.dtype(), ot = out.dtype();
  // Optional addend (attrs.has_bias): laid out like the output, added to the exact sum.
  const bool add = call.attrs.has_bias && call.inputs.size() > 2;
  const Tensor c = add ? call.inputs[2] : Tensor();
  const uint8_t* cb = add ? base_of(c) : nullptr;
  const int64_t c0 = add ? c.offset() : 0;
  const Domain dom = domain_of(ot);
  walk<2>(batch, {a.strides().data(), b.strides().data()}, {a.offset(), b.offset()},
          [&](int64_t bi, const std::array<int64_t, 2>& o) {
    for (int64_t m = 0; m < M; ++m)
      for (int64_t n = 0; n < N; ++n) {
        const int64_t oe = (bi * M + m) * N + n;
        const int64_t pa = o[0] + m * sam, pb = o[1] + n * sbn;
        if (dom == Domain::Real) {
          double acc = 0;
          for (int64_t k = 0; k < K; ++k) acc += load_real(ab, at, pa + k * sak) * load_real(bb, bt, pb + k * sbk);
          if (add) acc += load_real(cb, c.dtype(), c0 + oe);
          store_real(ob, ot, oe, acc);
        } else if (dom == Domain::Int) {
          int64_t acc = 0;
          for (int64_t k = 0; k < K; ++k) acc = wadd(acc, wmul(load_int(ab, at, pa + k * sak), load_int(bb, bt, pb + k * sbk)));
          if (add) acc = wadd(acc, load_int(cb, c.dtype(), c0 + oe));
          store_int(ob, ot, oe, acc);
        } else {
          cplx acc = 0;
          for (int64_t k = 0; k < K; ++k) acc += load_cplx(ab, at, pa + k * sak) * load_cplx(bb, bt, pb + k * sbk);
          if (add) acc += load_cplx(cb, c.dtype(), c0 + oe);
          store_cplx(ob, ot, oe, acc);
        }
      }
  });
}

}  // namespace wgt::cpu_ref
