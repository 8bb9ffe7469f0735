// Reference softmax / log_softmax / rms_norm / layer_norm: one row at a time in double,
// rows taken along the op's axis through the strides of input and output.
#include <algorithm>
#include <cmath>

#include "cpu/reference/families.hpp"
#include "cpu/reference/ref_common.hpp"

namespace wgt::cpu_ref {

void run_softmax(OpCall& call) {
  const Tensor& x = call.inputs[0];
  Tensor& out = call.outputs[0];
  const bool logsm = call.kind == OpKind::LogSoftmax;
  const Split sx = split_axes(x, {call.attrs.axis}), so = split_axes(out, {call.attrs.axis});
  std::vector<double> row;
  walk<2>(sx.outer_shape, {sx.outer_strides.data(), so.outer_strides.data()}, {x.offset(), out.offset()},
          [&](int64_t, const std::array<int64_t, 2>& o) {
    read_row(x, sx, o[0], row);
    if (row.empty()) return;
    // Subtracting the max keeps exp() from overflowing; it cancels in the ratio.
    double mx = -INFINITY;
    for (double v : row) mx = std::isnan(v) || std::isnan(mx) ? NAN : std::max(mx, v);
    if (std::isinf(mx) && mx < 0) mx = 0;  // an all -inf row: avoid (-inf) - (-inf)
    double s = 0;
    for (double v : row) s += std::exp(v - mx);
    const double ls = std::log(s);
    for (double& v : row) v = logsm ? (v - mx) - ls : std::exp(v - mx) / s;
    write_row(out, so, o[1], row);
  });
}

void run_norm(OpCall& call) {
  const Tensor& x = call.inputs[0];
  Tensor& out = call.outputs[0];
  const bool layer = call.kind == OpKind::LayerNorm;
  const Tensor* w = call.attrs.has_weight ? &call.inputs[1] : nullptr;
  const Tensor* bias = call.attrs.has_bias ? &call.inputs[call.attrs.has_weight ? 2 : 1] : nullptr;
  const int64_t last = x.dim() - 1;
  const Split sx = split_axes(x, {last}), so = split_axes(out, {last});
  std::vector<double> row, wv, bv;
  auto load_param = [](const Tensor* p, std::vector<double>& v) {
    if (!p) return;
    Split sp = split_axes(*p, {0});
    read_row(*p, sp, p->offset(), v);
  };
  load_param(w, wv);
  load_param(bias, bv);
  const double eps = call.attrs.eps;
  walk<2>(sx.outer_shape, {sx.outer_strides.data(), so.outer_strides.data()}, {x.offset(), out.offset()},
          [&](int64_t, const std::array<int64_t, 2>& o) {
    read_row(x, sx, o[0], row);
    const double D = static_cast<double>(row.size());
    if (row.empty()) return;
    if (layer) {
      double mu = 0, var = 0;
      for (double v : row) mu += v;
      mu /= D;
      for (double v : row) var += (v - mu) * (v - mu);
      var /= D;  // biased variance (divide by D), as in the LayerNorm paper and torch
      const double inv = 1.0 / std::sqrt(var + eps);
      for (double& v : row) v = (v - mu) * inv;
    } else {
      double ms = 0;
      for (double v : row) ms += v * v;
      const double inv = 1.0 / std::sqrt(ms / D + eps);
      for (double& v : row) v *= inv;
    }
    for (size_t i = 0; i < row.size(); ++i) {
      if (w) row[i] *= wv[i];
      if (bias) row[i] += bv[i];
    }
    write_row(out, so, o[1], row);
  });
}

}  // namespace wgt::cpu_ref
