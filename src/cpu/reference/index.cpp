// Reference concat / index_select / gather: element by element, indices range-checked.
#include "cpu/reference/families.hpp"
#include "cpu/reference/ref_common.hpp"

namespace wgt::cpu_ref {

namespace {

void copy_elem(const uint8_t* src, int64_t so, uint8_t* dst, int64_t d, size_t es) {
  std::memcpy(dst + d * static_cast<int64_t>(es), src + so * static_cast<int64_t>(es), es);
}

int64_t checked_index(const Tensor& idx, int64_t o, int64_t size, const std::string& op) {
  const int64_t v = load_int(base_of(idx), idx.dtype(), o);
  if (v < 0 || v >= size)
    throw_error(ErrorKind::OutOfRange, op,
                "index " + std::to_string(v) + " is out of range for a dim of size " + std::to_string(size) +
                    " (valid: 0.." + std::to_string(size - 1) + ")");
  return v;
}

}  // namespace

void run_concat(OpCall& call) {
  Tensor& out = call.outputs[0];
  const int64_t ax = call.attrs.axis;
  const size_t es = dtype_size(out.dtype());
  uint8_t* ob = mut_base_of(out);
  int64_t start = 0;
  for (const Tensor& x : call.inputs) {
    // The destination of x is the slice [start, start + len) of out along the axis.
    Tensor dst = out.slice(ax, start, start + x.shape()[ax]);
    walk<2>(x.shape(), {x.strides().data(), dst.strides().data()}, {x.offset(), dst.offset()},
            [&](int64_t, const std::array<int64_t, 2>& o) { copy_elem(base_of(x), o[0], ob, o[1], es); });
    start += x.shape()[ax];
  }
}

void run_index_select(OpCall& call) {
  const Tensor &x = call.inputs[0], &idx = call.inputs[1];
  Tensor& out = call.outputs[0];
  const int64_t ax = call.attrs.axis, ir = idx.dim();
  const size_t es = dtype_size(x.dtype());
  uint8_t* ob = mut_base_of(out);
  // out index = (pre..., j..., post...) reads x at (pre..., idx[j...], post...).
  const int r = out.dim();
  std::vector<int64_t> pos(r, 0);
  for (int64_t e = 0; e < out.numel(); ++e) {
    int64_t rem = e;
    for (int d = r - 1; d >= 0; --d) { pos[d] = rem % out.shape()[d]; rem /= out.shape()[d]; }
    int64_t io = idx.offset();
    for (int64_t j = 0; j < ir; ++j) io += pos[ax + j] * idx.strides()[j];
    const int64_t sel = checked_index(idx, io, x.shape()[ax], call.name);
    int64_t xo = x.offset();
    for (int64_t d = 0; d < x.dim(); ++d) {
      const int64_t p = d < ax ? pos[d] : d == ax ? sel : pos[d + ir - 1];
      xo += p * x.strides()[d];
    }
    copy_elem(base_of(x), xo, ob, e, es);
  }
}

void run_gather(OpCall& call) {
  const Tensor &x = call.inputs[0], &idx = call.inputs[1];
  Tensor& out = call.outputs[0];
  const int64_t ax = call.attrs.axis;
  const size_t es = dtype_size(x.dtype());
  uint8_t* ob = mut_base_of(out);
  // Walk idx; the same index vector addresses x except along the axis, where idx's value goes.
  Strides xs = x.strides();
  xs[ax] = 0;
  walk<2>(idx.shape(), {idx.strides().data(), xs.data()}, {idx.offset(), x.offset()},
          [&](int64_t e, const std::array<int64_t, 2>& o) {
    const int64_t sel = checked_index(idx, o[0], x.shape()[ax], call.name);
    copy_elem(base_of(x), o[1] + sel * x.strides()[ax], ob, e, es);
  });
}

}  // namespace wgt::cpu_ref
