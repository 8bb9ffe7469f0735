// The SpMM / SpMV plan (OpKind::SpMM; SpMV is n = 1): which kernel runs the schedule the
// front-end chose from the matrix's row statistics (wgt::choose_schedule), with how many lanes
// per row, column lanes and merge items per thread. plan_spmm is pure (no Dawn call);
// kernels/sparse.cpp encodes the plan. The kernels: shaders/sparse_spmm.wgsl (thread per
// row, lanes per row, binned), shaders/sparse_merge.wgsl (merge path) and
// shaders/sparse_adaptive.wgsl (SpMV over row blocks, sparse/row_blocks.hpp).
#pragma once
#include <cstdint>
#include <string>

#include "webgpu/plans/plan.hpp"
#include "wgt/sparse.hpp"

namespace wgt::webgpu {

enum class SpmmKernel : uint8_t { Rows, Binned, Merge, Adaptive };

struct SpmmPlan {
  SpmmKernel kernel = SpmmKernel::Rows;
  uint32_t lanes = 1;   // Rows: invocations splitting one row's entries (1 = thread per row)
  uint32_t cols = 1;    // column lanes (a power of two <= 64; 1 for SpMV)
  uint32_t vec = 1;     // 4: the dense operand and the output read and written as vec4 (f32,
                        // unit column stride, n, B's row stride and offsets multiples of 4)
  uint32_t items = 0;   // Merge: merge-path items (row ends + entries) per merge thread
  uint64_t groups = 0;  // Merge: workgroups (= boundaries - 1 of the partition pass);
                        // Adaptive: workgroups = row blocks
  bool fixup = false;   // Adaptive: some rows are split over blocks (the fix-up pass runs)
  bool operator==(const SpmmPlan&) const = default;  // batch members share a plan when equal

  uint32_t merge_threads() const { return 256 / cols; }
  uint32_t items_per_group() const { return merge_threads() * items; }
  // Words of the merge path's scratch (boundaries, carried rows, carried partials).
  uint64_t carry_words(int64_t n) const { return 3 * groups + 2 + groups * static_cast<uint64_t>(n); }
  std::string name() const;  // e.g. "rows L8 C64 v4", "binned C1", "merge C1 E4 G70", "adaptive G65 F"
  // The shader of a sparse_spmm dispatch with `lanes` per row (reading the row list or not),
  // and of merge pass `pass` (0 partition, 1 main, 2 fix-up), for the call's index and value
  // dtypes.
  ShaderVariant rows_variant(uint32_t lanes, bool list, DType index, DType value) const;
  ShaderVariant merge_variant(int pass, DType index, DType value) const;
  // Adaptive pass `pass` (0 main, 1 fix-up).
  ShaderVariant adaptive_variant(int pass, DType index, DType value) const;
};

// The plan of an SpMM call (contract: src/sparse/sparse_ops.cpp), or why WebGPU cannot run it.
Planned<SpmmPlan> plan_spmm(const OpCall& call);

}  // namespace wgt::webgpu
