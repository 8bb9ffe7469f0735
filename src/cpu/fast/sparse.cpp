// Fast CPU sparse kernels: threads over row ranges of equal stored-entry counts (so a
// power-law matrix's few huge rows do not leave one thread with most of the work), f32/f64
// values with contiguous index and value arrays (a batch member by member); anything else
// runs the reference kernel. Kept over Eigen's sparse module, which bench_sparse_cpu measured
// slower (docs/sparse.md).
// Accumulation: SpMV/SDDMM/row reductions in double (they are memory bound), SpMM in the
// value type along the dense row (vectorizable).
#include <algorithm>
#include <cmath>
#include <vector>

#include "cpu/fast/kernels.hpp"
#include "cpu/fast/parallel.hpp"
#include "sparse/sparse_batch.hpp"

namespace wgt::cpu_fast {

namespace {

bool plain(const Tensor& t) { return t.is_contiguous(); }

template <typename I>
int64_t at(const I* p, int64_t i) { return static_cast<int64_t>(p[i]); }

// Calls fn(r0, r1) over row ranges holding about equal numbers of stored entries.
template <typename I, typename F>
void for_row_ranges(const I* ip, int64_t rows, int64_t cost_per_entry, F&& fn) {
  const int64_t nnz = at(ip, rows);
  const int64_t work = nnz * cost_per_entry + rows;
  const int64_t chunks = work < (1 << 15) ? 1 : std::min<int64_t>(num_threads() * 8, std::max<int64_t>(1, rows));
  parallel_for(0, chunks, 1, [&](int64_t c0, int64_t c1) {
    for (int64_t c = c0; c < c1; ++c) {
      auto row_at = [&](int64_t ch) {
        if (ch >= chunks) return rows;
        const I target = static_cast<I>(nnz / chunks * ch + std::min<int64_t>(ch, nnz % chunks));
        return static_cast<int64_t>(std::lower_bound(ip, ip + rows + 1, target) - ip);
      };
      // Rows split by the first entry index >= the chunk's share; empty rows go with the
      // chunk where their index lands, so every row is written exactly once.
      const int64_t r0 = c == 0 ? 0 : row_at(c), r1 = row_at(c + 1);
      if (r1 > r0) fn(r0, std::min(r1, rows));
    }
  });
}

template <typename I, typename V>
void spmm_typed(OpCall& call) {
  const I* ip = call.inputs[0].data<I>();
  const I* ix = call.inputs[1].data<I>();
  const V* v = call.inputs[2].data<V>();
  const Tensor& b = call.inputs[3];
  V* out = call.outputs[0].data<V>();
  const int64_t rows = call.inputs[0].numel() - 1;
  const V* bb = static_cast<const V*>(b.data_ptr());
  if (b.dim() == 1) {
    const int64_t bs = b.strides()[0];
    for_row_ranges(ip, rows, 1, [&](int64_t r0, int64_t r1) {
      for (int64_t r = r0; r < r1; ++r) {
        double s = 0;
        for (int64_t k = at(ip, r); k < at(ip, r + 1); ++k) s += static_cast<double>(v[k]) * bb[at(ix, k) * bs];
        out[r] = static_cast<V>(s);
      }
    });
    return;
  }
  const int64_t n = b.size(1), s0 = b.strides()[0], s1 = b.strides()[1];
  for_row_ranges(ip, rows, n, [&](int64_t r0, int64_t r1) {
    std::vector<V> col;  // a column-major operand's row, gathered once per entry
    for (int64_t r = r0; r < r1; ++r) {
      V* o = out + r * n;
      std::fill(o, o + n, V(0));
      for (int64_t k = at(ip, r); k < at(ip, r + 1); ++k) {
        const V a = v[k];
        const V* br = bb + at(ix, k) * s0;
        if (s1 == 1) {
          for (int64_t j = 0; j < n; ++j) o[j] += a * br[j];
        } else {
          for (int64_t j = 0; j < n; ++j) o[j] += a * br[j * s1];
        }
      }
    }
  });
}

template <typename I, typename V>
void sddmm_typed(OpCall& call) {
  const I* ip = call.inputs[0].data<I>();
  const I* ix = call.inputs[1].data<I>();
  const Tensor &x = call.inputs[2], &y = call.inputs[3];
  V* out = call.outputs[0].data<V>();
  const int64_t rows = call.inputs[0].numel() - 1, kd = x.size(1);
  const V* xb = static_cast<const V*>(x.data_ptr());
  const V* yb = static_cast<const V*>(y.data_ptr());
  const int64_t xs0 = x.strides()[0], xs1 = x.strides()[1], ys0 = y.strides()[0], ys1 = y.strides()[1];
  for_row_ranges(ip, rows, kd, [&](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r)
      for (int64_t k = at(ip, r); k < at(ip, r + 1); ++k) {
        const V* yc = yb + at(ix, k) * ys1;
        const V* xr = xb + r * xs0;
        double s = 0;
        for (int64_t t = 0; t < kd; ++t) s += static_cast<double>(xr[t * xs1]) * yc[t * ys0];
        out[k] = static_cast<V>(s);
      }
  });
}

template <typename I, typename V>
void row_reduce_typed(OpCall& call, bool is_max) {
  const I* ip = call.inputs[0].data<I>();
  const V* v = call.inputs[1].data<V>();
  V* out = call.outputs[0].data<V>();
  for_row_ranges(ip, call.inputs[0].numel() - 1, 1, [&](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r) {
      double acc = is_max ? -INFINITY : 0.0;
      for (int64_t k = at(ip, r); k < at(ip, r + 1); ++k) {
        const double e = v[k];
        acc = is_max ? (std::isnan(e) || std::isnan(acc) ? NAN : std::max(acc, e)) : acc + e;
      }
      out[r] = static_cast<V>(acc);
    }
  });
}

template <typename I, typename V>
void softmax_typed(OpCall& call) {
  const I* ip = call.inputs[0].data<I>();
  const V* v = call.inputs[1].data<V>();
  V* out = call.outputs[0].data<V>();
  for_row_ranges(ip, call.inputs[0].numel() - 1, 4, [&](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r) {
      const int64_t k0 = at(ip, r), k1 = at(ip, r + 1);
      double mx = -INFINITY;  // same rules as the reference (docs/semantics.md)
      for (int64_t k = k0; k < k1; ++k) mx = std::isnan(double(v[k])) || std::isnan(mx) ? NAN : std::max<double>(mx, v[k]);
      if (std::isinf(mx) && mx < 0) mx = 0;
      double s = 0;
      for (int64_t k = k0; k < k1; ++k) s += std::exp(double(v[k]) - mx);
      for (int64_t k = k0; k < k1; ++k) out[k] = static_cast<V>(std::exp(double(v[k]) - mx) / s);
    }
  });
}

// Runs fn<I, V>() when the index arrays are contiguous and the value dtype is f32 or f64.
template <template <typename, typename> class K, typename... A>
bool dispatch(OpCall& call, DType vdt, A... args) {
  if (!plain(call.inputs[0]) || (call.kind != OpKind::SpRowReduce && call.kind != OpKind::SpSoftmax && !plain(call.inputs[1])))
    return false;
  const bool i64 = call.inputs[0].dtype() == DType::I64;
  if (vdt == DType::F32) { i64 ? K<int64_t, float>::run(call, args...) : K<int32_t, float>::run(call, args...); return true; }
  if (vdt == DType::F64) { i64 ? K<int64_t, double>::run(call, args...) : K<int32_t, double>::run(call, args...); return true; }
  return false;
}
template <typename I, typename V> struct SpmmK { static void run(OpCall& c) { spmm_typed<I, V>(c); } };
template <typename I, typename V> struct SddmmK { static void run(OpCall& c) { sddmm_typed<I, V>(c); } };
template <typename I, typename V> struct RowK { static void run(OpCall& c, bool m) { row_reduce_typed<I, V>(c, m); } };
template <typename I, typename V> struct SoftK { static void run(OpCall& c) { softmax_typed<I, V>(c); } };

bool spmm_one(OpCall& call) { return plain(call.inputs[2]) && dispatch<SpmmK>(call, call.inputs[2].dtype()); }
bool sddmm_one(OpCall& call) { return dispatch<SddmmK>(call, call.inputs[2].dtype()); }
bool row_reduce_one(OpCall& call) {
  return plain(call.inputs[1]) && dispatch<RowK>(call, call.inputs[1].dtype(), call.attrs.reduce == ReduceOp::Max);
}
bool softmax_one(OpCall& call) { return plain(call.inputs[1]) && dispatch<SoftK>(call, call.inputs[1].dtype()); }

// A batch member by member. The members' views have the layout of member 0, so the kernel
// takes all of them or none (then the reference runs the whole call).
bool each_member(OpCall& call, bool (*one)(OpCall&)) {
  const int64_t n = sparse_detail::call_batch(call);
  if (n == 0) return one(call);
  for (int64_t b = 0; b < n; ++b) {
    OpCall m = sparse_detail::call_member(call, b);
    if (!one(m)) {
      if (b == 0) return false;
      throw_error(ErrorKind::RuntimeState, call.name, "batch members of one layout took different CPU kernels");
    }
  }
  return true;
}

}  // namespace

bool try_spmm(OpCall& call) { return each_member(call, spmm_one); }
bool try_sddmm(OpCall& call) { return each_member(call, sddmm_one); }
bool try_sp_row_reduce(OpCall& call) { return each_member(call, row_reduce_one); }
bool try_sp_softmax(OpCall& call) { return each_member(call, softmax_one); }

}  // namespace wgt::cpu_fast
