// Reference kernels of the transformer ops (rope, attention, silu_mul, kv_append): plain
// loops in double over strided inputs. Attention builds each query's full score row — this
// is the oracle the flash-style GPU kernels are checked against, so obviousness wins.
#include <algorithm>
#include <cmath>

#include "cpu/reference/families.hpp"
#include "cpu/reference/ref_common.hpp"

namespace wgt::cpu_ref {

namespace {

// All logical elements of t (row-major) as doubles.
std::vector<double> to_doubles(const Tensor& t) {
  std::vector<double> out(static_cast<size_t>(t.numel()));
  const uint8_t* b = base_of(t);
  walk<1>(t.shape(), {t.strides().data()}, {t.offset()},
          [&](int64_t e, const std::array<int64_t, 1>& o) { out[e] = load_real(b, t.dtype(), o[0]); });
  return out;
}

}  // namespace

void run_rope(OpCall& call) {
  const Tensor& x = call.inputs[0];
  const bool has_f = call.attrs.rope_factors;  // then the freq factors are the last input
  const Tensor* positions = call.inputs.size() > (has_f ? 2u : 1u) ? &call.inputs[1] : nullptr;
  std::vector<double> factors;
  if (has_f) factors = to_doubles(call.inputs.back());
  // No outputs: rope_ rotates x in place. Each row is read whole before it is written, and
  // rows do not share elements (rope_ rejects overlapping views), so aliasing is harmless.
  const Tensor& out = call.outputs.empty() ? x : call.outputs[0];
  const int r = x.dim();
  const int64_t seq = x.shape()[r - 3], H = x.shape()[r - 2];
  const int64_t n_rot = call.attrs.n_rot, half = n_rot / 2;
  const bool neox = call.attrs.rope_neox;
  const double base = call.attrs.scalar0, freq_scale = call.attrs.scalar1;
  const Split sx = split_axes(x, {r - 1}), so = split_axes(out, {r - 1});
  std::vector<double> row, rot;
  walk<2>(sx.outer_shape, {sx.outer_strides.data(), so.outer_strides.data()}, {x.offset(), out.offset()},
          [&](int64_t e, const std::array<int64_t, 2>& o) {
    read_row(x, sx, o[0], row);
    const int64_t s = (e / H) % seq;  // outer index = ((b * seq) + s) * H + h
    const double p = positions ? static_cast<double>(load_int(base_of(*positions), positions->dtype(),
                                                              positions->offset() + s * positions->strides()[0]))
                               : static_cast<double>(call.attrs.pos_offset + s);
    rot = row;
    for (int64_t i = 0; i < half; ++i) {
      double theta = p * freq_scale * std::pow(base, -2.0 * static_cast<double>(i) / static_cast<double>(n_rot));
      if (has_f) theta /= factors[static_cast<size_t>(i)];
      const double c = std::cos(theta), sn = std::sin(theta);
      const int64_t ia = neox ? i : 2 * i, ib = neox ? i + half : 2 * i + 1;
      rot[ia] = row[ia] * c - row[ib] * sn;
      rot[ib] = row[ia] * sn + row[ib] * c;
    }
    write_row(out, so, o[1], rot);
  });
}

void run_attention(OpCall& call) {
  const Tensor &q = call.inputs[0], &k = call.inputs[1], &v = call.inputs[2];
  Tensor& out = call.outputs[0];
  const int64_t Lq = q.shape()[0], H = q.shape()[1], D = q.shape()[2];
  const int64_t Lk = k.shape()[0], Hkv = k.shape()[1];
  const int64_t group = H / Hkv;
  const double scale = call.attrs.scalar0;
  const std::vector<double> qd = to_doubles(q), kd = to_doubles(k), vd = to_doubles(v);
  std::vector<double> mask;
  if (call.attrs.has_mask) mask = to_doubles(call.inputs[3]);
  uint8_t* ob = mut_base_of(out);  // contiguous [Lq, H, D]
  std::vector<double> score(static_cast<size_t>(Lk)), acc(static_cast<size_t>(D));
  for (int64_t i = 0; i < Lq; ++i) {
    // Causal: query i is sequence position Lk - Lq + i and sees keys up to that position.
    const int64_t last = call.attrs.causal ? Lk - Lq + i : Lk - 1;
    for (int64_t h = 0; h < H; ++h) {
      const int64_t g = h / group;
      const double* qv = &qd[static_cast<size_t>((i * H + h) * D)];
      double mx = -INFINITY;
      for (int64_t j = 0; j < Lk; ++j) {
        if (j > last) { score[j] = -INFINITY; continue; }
        const double* kv = &kd[static_cast<size_t>((j * Hkv + g) * D)];
        double dot = 0;
        for (int64_t d = 0; d < D; ++d) dot += qv[d] * kv[d];
        score[j] = scale * dot + (mask.empty() ? 0.0 : mask[static_cast<size_t>(i * Lk + j)]);
        mx = std::isnan(score[j]) || std::isnan(mx) ? NAN : std::max(mx, score[j]);
      }
      std::fill(acc.begin(), acc.end(), 0.0);
      // Every score -inf (all keys masked): the documented result is a zero row, not NaN.
      if (!(std::isinf(mx) && mx < 0)) {
        double denom = 0;
        for (int64_t j = 0; j < Lk; ++j) denom += (score[j] = std::exp(score[j] - mx));
        for (int64_t j = 0; j < Lk; ++j) {
          if (score[j] == 0.0) continue;
          const double p = score[j] / denom;
          const double* vv = &vd[static_cast<size_t>((j * Hkv + g) * D)];
          for (int64_t d = 0; d < D; ++d) acc[d] += p * vv[d];
        }
      }
      for (int64_t d = 0; d < D; ++d) store_real(ob, out.dtype(), (i * H + h) * D + d, acc[d]);
    }
  }
}

void run_silu_mul(OpCall& call) {
  const Tensor &a = call.inputs[0], &b = call.inputs[1];
  Tensor& out = call.outputs[0];
  const uint8_t *ab = base_of(a), *bb = base_of(b);
  uint8_t* ob = mut_base_of(out);
  walk<2>(out.shape(), {a.strides().data(), b.strides().data()}, {a.offset(), b.offset()},
          [&](int64_t e, const std::array<int64_t, 2>& o) {
    const double x = load_real(ab, a.dtype(), o[0]), y = load_real(bb, b.dtype(), o[1]);
    store_real(ob, out.dtype(), e, x / (1.0 + std::exp(-x)) * y);  // same silu as UnaryOp::Silu
  });
}

// inputs {cache, src} or {k cache, k src, v cache, v src}.
void run_kv_append(OpCall& call) {
  if (call.attrs.n_rot > 0) {
    // With RoPE (inputs {k cache, k, v cache, v, q}, Rope's attrs): exactly rope_ of q, then
    // the append of rope(k) (rounded to k's dtype, as rope_ on k would store it) and v.
    // (With attrs.rope_factors the freq factors are inputs[5], the Rope calls' last input.)
    OpCall rq{OpKind::Rope, "rope_", {call.inputs[4]}, {}, call.attrs, 0.0, {}};
    const Tensor& k = call.inputs[1];
    OpCall rk{OpKind::Rope, "rope", {k}, {Tensor::empty(k.shape(), k.dtype())}, call.attrs, 0.0, {}};
    if (call.attrs.rope_factors) {
      rq.inputs.push_back(call.inputs[5]);
      rk.inputs.push_back(call.inputs[5]);
    }
    run_rope(rq);
    run_rope(rk);
    OpCall ap{OpKind::KVAppend, call.name, {call.inputs[0], rk.outputs[0], call.inputs[2], call.inputs[3]}, {}, call.attrs, 0.0, {}};
    ap.attrs.n_rot = 0;
    ap.attrs.rope_factors = false;
    return run_kv_append(ap);
  }
  for (size_t i = 0; i + 1 < call.inputs.size(); i += 2) {
    Tensor& cache = call.inputs[i];
    const Tensor& src = call.inputs[i + 1];
    const int64_t row = cache.shape()[1] * cache.shape()[2];
    uint8_t* cb = mut_base_of(cache);
    const uint8_t* sb = base_of(src);
    const int64_t first = cache.offset() + call.attrs.pos_offset * row;
    walk<1>(src.shape(), {src.strides().data()}, {src.offset()}, [&](int64_t e, const std::array<int64_t, 1>& o) {
      store_real(cb, cache.dtype(), first + e, load_real(sb, src.dtype(), o[0]));
    });
  }
}

}  // namespace wgt::cpu_ref
