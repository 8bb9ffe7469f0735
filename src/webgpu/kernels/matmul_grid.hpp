// The dispatch grid shared by the matmul launchers (kernels/matmul.cpp for f32/f16,
// kernels/complex.cpp for c64): operands described by element strides (transposed views
// need no copy), broadcast batch dims folded (at most three decoded by the shader, further
// outer ones looped here), and grids beyond the device's workgroup-count limit split into
// chunks. `Params` is the shader's params struct; both carry the same leading fields (M, N, K,
// batch_base, offsets, strides, o_rs, o_bs, bd1, bd2, a_bs0..2, b_bs0..2). The caller fills the
// rest of `base` (fusion operands) and binds `args`.
#pragma once
#include <algorithm>
#include <array>
#include <cstdint>
#include <vector>

#include "webgpu/context.hpp"
#include "webgpu/plans/matmul_plan.hpp"

namespace wgt::webgpu {

// Records the dispatches of out[z] = A[z] @ B[z] (B transposed when transpose_b) with tiles of
// row_tile x col_tile outputs per workgroup; one_row_group: the kernel covers all M rows in one
// workgroup row (the gemvs).
template <class Params>
void dispatch_matmul_grid(Context& ctx, const Pipeline* pipe, const std::vector<Arg>& args, Params base,
                          const Tensor& A, const Tensor& B, const Tensor& out, bool transpose_b, uint32_t row_tile,
                          uint32_t col_tile, bool one_row_group) {
  const MatmulOperand Ad = matmul_operand(A, false), Bd = matmul_operand(B, transpose_b);
  const uint64_t M = static_cast<uint64_t>(out.size(-2)), N = static_cast<uint64_t>(out.size(-1));
  const BatchDims dims = fold_batch(Ad, Bd, out);
  const size_t host_dims = dims.n > 3 ? dims.n - 3 : 0;
  std::array<BatchDim, 3> dev{};
  dev.fill(BatchDim{1, 0, 0, 0});
  for (size_t i = host_dims; i < dims.n; ++i) dev[3 - (dims.n - i)] = dims.d[i];
  const uint64_t dev_batch = static_cast<uint64_t>(dev[0].size * dev[1].size * dev[2].size);
  uint64_t host_batch = 1;
  for (size_t i = 0; i < host_dims; ++i) host_batch *= static_cast<uint64_t>(dims.d[i].size);

  auto u32 = [](int64_t v) { return static_cast<uint32_t>(static_cast<uint64_t>(v)); };
  base.K = u32(A.size(-1));
  base.a_ms = u32(Ad.rs), base.a_ks = u32(Ad.cs), base.b_ks = u32(Bd.rs), base.b_ns = u32(Bd.cs);
  base.o_rs = static_cast<uint32_t>(N), base.o_bs = static_cast<uint32_t>(M * N);
  base.bd1 = u32(dev[1].size), base.bd2 = u32(dev[2].size);
  base.a_bs0 = u32(dev[0].sa), base.a_bs1 = u32(dev[1].sa), base.a_bs2 = u32(dev[2].sa);
  base.b_bs0 = u32(dev[0].sb), base.b_bs1 = u32(dev[1].sb), base.b_bs2 = u32(dev[2].sb);

  auto ceil_div = [](uint64_t a, uint64_t b) { return static_cast<uint32_t>((a + b - 1) / b); };
  const uint64_t max_groups = ctx.limits().max_compute_workgroups_per_dimension;
  const uint64_t m_chunk = one_row_group ? M : max_groups * row_tile;
  const uint64_t n_chunk = max_groups * col_tile;
  std::vector<int64_t> idx(host_dims, 0);
  for (uint64_t h = 0; h < host_batch; ++h) {
    int64_t a_off = A.offset(), b_off = B.offset(), o_off = out.offset();
    for (size_t d = 0; d < host_dims; ++d)
      a_off += idx[d] * dims.d[d].sa, b_off += idx[d] * dims.d[d].sb, o_off += idx[d] * dims.d[d].so;
    for (uint64_t z0 = 0; z0 < dev_batch; z0 += max_groups)
      for (uint64_t m0 = 0; m0 < M; m0 += m_chunk)
        for (uint64_t n0 = 0; n0 < N; n0 += n_chunk) {
          Params p = base;
          p.batch_base = static_cast<uint32_t>(z0);
          p.M = static_cast<uint32_t>(std::min(m_chunk, M - m0));
          p.N = static_cast<uint32_t>(std::min(n_chunk, N - n0));
          p.a_off = u32(a_off + static_cast<int64_t>(m0) * Ad.rs);
          p.b_off = u32(b_off + static_cast<int64_t>(n0) * Bd.cs);
          p.o_off = u32(o_off + static_cast<int64_t>(m0 * N + n0));
          Dispatch d;
          d.pipeline = pipe;
          d.args = args;
          d.params = &p;
          d.params_size = sizeof p;
          d.groups_x = ceil_div(p.N, col_tile);
          d.groups_y = one_row_group ? 1 : ceil_div(p.M, row_tile);
          d.groups_z = static_cast<uint32_t>(std::min(max_groups, dev_batch - z0));
          ctx.dispatch(d);  // records (and copies) the params; no host wait
        }
    for (int d = static_cast<int>(host_dims) - 1; d >= 0; --d) {  // odometer over host dims
      if (++idx[d] < dims.d[d].size) break;
      idx[d] = 0;
    }
  }
}

}  // namespace wgt::webgpu
