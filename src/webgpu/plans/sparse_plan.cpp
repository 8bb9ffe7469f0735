// plan_spmm: the schedule of the call's attributes (chosen by the front-end from the cached
// row statistics) turned into kernel parameters. Pure: tensor metadata only.
#include "webgpu/plans/sparse_plan.hpp"

#include <algorithm>

#include "sparse/row_blocks.hpp"

namespace wgt::webgpu {
namespace {

constexpr int64_t kU31 = int64_t{1} << 31;

uint32_t pow2_at_least(int64_t v, int64_t cap) {
  int64_t p = 1;
  while (p < v && p < cap) p *= 2;
  return static_cast<uint32_t>(p);
}

bool value_ok(DType dt) { return dt == DType::F32 || dt == DType::F16 || dt == DType::BF16; }

// Largest element offset a view reaches (negative strides are rejected before).
int64_t last_elem(const Tensor& t) {
  int64_t e = t.offset();
  for (int d = 0; d < t.dim(); ++d) e += (t.size(d) - 1) * t.strides()[d];
  return e;
}

std::string check_value(const Tensor& t, const char* what) {
  if (!value_ok(t.dtype())) return std::string(what) + " dtype " + dtype_name(t.dtype()) + " (WebGPU: f32, f16, bf16)";
  for (int d = 0; d < t.dim(); ++d)
    if (t.strides()[d] < 0) return "negative strides";
  if (t.numel() > 0 && last_elem(t) >= kU31) return std::string(what) + " reaches past element 2^31";
  return {};
}

}  // namespace

std::string SpmmPlan::name() const {
  if (kernel == SpmmKernel::Adaptive) return "adaptive G" + std::to_string(groups) + (fixup ? " F" : "");
  std::string s = kernel == SpmmKernel::Merge ? "merge" : kernel == SpmmKernel::Binned ? "binned" : "rows";
  if (kernel == SpmmKernel::Rows) s += " L" + std::to_string(lanes);
  s += " C" + std::to_string(cols);
  if (vec == 4) s += " v4";
  if (kernel == SpmmKernel::Merge) s += " E" + std::to_string(items) + " G" + std::to_string(groups);
  return s;
}

namespace {
std::string index_words(DType index) { return index == DType::I64 ? "2" : "1"; }
std::string value_type(DType v) { return v == DType::F16 ? "1" : v == DType::BF16 ? "2" : "0"; }
}  // namespace

ShaderVariant SpmmPlan::rows_variant(uint32_t l, bool list, DType index, DType value) const {
  return {"sparse_spmm",
          {{"IW", index_words(index)}, {"VT", value_type(value)}, {"L", std::to_string(l)}, {"C", std::to_string(cols)},
           {"LIST", list ? "1" : "0"}, {"VEC", std::to_string(vec)}}};
}

ShaderVariant SpmmPlan::merge_variant(int pass, DType index, DType value) const {
  if (pass == 0) return {"sparse_merge_partition", {{"IW", index_words(index)}, {"D", std::to_string(items_per_group())}}};
  if (pass == 2) return {"sparse_merge_fixup", {{"IW", index_words(index)}, {"VT", value_type(value)}}};
  return {"sparse_merge",
          {{"IW", index_words(index)}, {"VT", value_type(value)}, {"C", std::to_string(cols)},
           {"E", std::to_string(items)}, {"VEC", std::to_string(vec)}}};
}

ShaderVariant SpmmPlan::adaptive_variant(int pass, DType index, DType value) const {
  if (pass == 1) return {"sparse_adaptive_fixup", {{"IW", index_words(index)}, {"VT", value_type(value)}}};
  return {"sparse_adaptive",
          {{"IW", index_words(index)}, {"VT", value_type(value)},
           {"D", std::to_string(sparse_detail::kBlockEntries)}, {"WG", std::to_string(sparse_detail::kBlockRows)}}};
}

Planned<SpmmPlan> plan_spmm(const OpCall& call) {
  using P = Planned<SpmmPlan>;
  if (call.inputs.size() != 6) return P::no("expects {indptr, indices, values, B, bin_rows, row_blocks}");
  const Tensor &ip = call.inputs[0], &ix = call.inputs[1], &v = call.inputs[2], &b = call.inputs[3];
  const Tensor& list = call.inputs[4];
  if (ip.dtype() != DType::I32 && ip.dtype() != DType::I64) return P::no("indptr must be i32 or i64");
  if (ix.dtype() != ip.dtype()) return P::no("indptr and indices differ in dtype");
  if (ip.numel() >= kU31 || ix.numel() >= kU31) return P::no("2^31 or more rows or stored entries");
  if (std::string why = check_value(v, "values"); !why.empty()) return P::no(why);
  if (std::string why = check_value(b, "dense operand"); !why.empty()) return P::no(why);
  if (b.dtype() != v.dtype()) return P::no("values and dense operand differ in dtype");
  if (call.attrs.sp_cols >= kU31) return P::no("2^31 or more columns");
  const int64_t rows = ip.numel() - 1, nnz = ix.numel(), n = b.dim() == 1 ? 1 : b.size(1);
  if (rows * n >= kU31) return P::no("output of 2^31 or more elements");

  SpmmPlan p;
  auto sched = static_cast<SparseSchedule>(call.attrs.sp_schedule);
  if (sched == SparseSchedule::Adaptive) {
    // Row blocks: i32 pairs (row0, k0), sp_blocks + 1 of them (for a matrix without blocks
    // the front-end passes indptr in their place, sp_blocks = 0, and never schedules so).
    const Tensor& blocks = call.inputs[5];
    const int64_t nb = call.attrs.sp_blocks;
    if (n == 1 && rows > 0 && nb > 0 && blocks.dtype() == DType::I32 && blocks.numel() == 2 * (nb + 1)) {
      p.kernel = SpmmKernel::Adaptive;
      p.groups = static_cast<uint64_t>(nb);
      p.fixup = call.attrs.sp_split_rows > 0;
      return {p, {}};
    }
    sched = SparseSchedule::MergePath;
  }
  // vec4 across the dense columns: a lane reads 16 bytes of a B row (and writes 16 of Y).
  const bool vec4 = n >= 4 && n % 4 == 0 && v.dtype() == DType::F32 && b.dim() == 2 && b.strides()[1] == 1 &&
                    b.strides()[0] % 4 == 0 && b.offset() % 4 == 0 &&
                    (call.outputs.empty() || call.outputs[0].offset() % 4 == 0);
  if (sched == SparseSchedule::MergePath) {
    p.kernel = SpmmKernel::Merge;
    p.vec = vec4 ? 4 : 1;
    p.cols = n == 1 ? 1 : pow2_at_least((n + p.vec - 1) / p.vec, 64);
    // SpMV stages the products of its 256 * 4 entries; SpMM walks at least 128 items per
    // workgroup so the partition pass and the boundary rows stay small next to the work.
    p.items = p.cols == 1 ? 4 : std::max<uint32_t>(4, 128 / p.merge_threads());
    const int64_t d = p.items_per_group();
    if (rows + nnz + d < (int64_t{1} << 32) && (rows + nnz) / d + 1 < kU31) {
      p.groups = static_cast<uint64_t>((rows + nnz + d - 1) / d);
      return {p, {}};
    }
    p = SpmmPlan{};  // merge coordinates need 32 bits: the lanes-per-row kernel instead
  }
  p.vec = vec4 ? 4 : 1;
  p.cols = n == 1 ? 1 : pow2_at_least((n + p.vec - 1) / p.vec, 64);
  const bool has_list = list.dtype() == DType::I32 && list.numel() == rows;
  if (sched == SparseSchedule::Binned && has_list) {
    p.kernel = SpmmKernel::Binned;
  } else if (sched == SparseSchedule::GroupPerRow || sched == SparseSchedule::Binned) {
    p.lanes = static_cast<uint32_t>(std::clamp<int64_t>(call.attrs.sp_lanes, 1, 256));
  }
  p.lanes = std::max<uint32_t>(1, std::min<uint32_t>(p.lanes, 256 / p.cols));
  return {p, {}};
}

}  // namespace wgt::webgpu
