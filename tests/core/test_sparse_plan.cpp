// The sparse schedule choice (wgt::choose_schedule over row statistics, pure) and the WebGPU
// SpMM plan (plan_spmm: kernel, lanes, column lanes, vec4, merge items and workgroups, the
// rejects), and the plan's shader variants run through the WGSL preprocessor. No GPU needed.
#include <gtest/gtest.h>

#include <string>

#include "plan_test_support.hpp"
#include "settings_env.hpp"
#include "sparse/generate.hpp"
#include "webgpu/plans/sparse_plan.hpp"
#include "webgpu/shader_registry.hpp"
#include "wgt/wgt.hpp"

using namespace wgt;
using namespace wgt::webgpu;

namespace {

CsrRowStats stats(int64_t rows, double mean, int64_t max_len, double cv) {
  CsrRowStats s;
  s.rows = rows;
  s.nnz = static_cast<int64_t>(mean * static_cast<double>(rows));
  s.mean_len = mean;
  s.max_len = max_len;
  s.cv = cv;
  return s;
}

// An SpMM call of `rows` x `cols` with `nnz` entries (host tensors: only metadata is read);
// `blocks` row blocks (0: indptr stands in for them, as for a matrix without blocks).
OpCall spmm_call(int64_t rows, int64_t nnz, const Tensor& b, SparseSchedule sc, DType vt = DType::F32,
                 DType it = DType::I32, bool bins = true, int64_t blocks = 0) {
  OpCall c{OpKind::SpMM, "spmm",
           {Tensor::empty({rows + 1}, it), Tensor::empty({nnz}, it), Tensor::empty({nnz}, vt), b,
            bins ? Tensor::empty({rows}, DType::I32) : Tensor::empty({rows + 1}, it),
            blocks ? Tensor::empty({2 * (blocks + 1)}, DType::I32) : Tensor::empty({rows + 1}, it)},
           {}, {}};
  c.attrs.sp_cols = b.size(0);
  c.attrs.sp_schedule = static_cast<uint8_t>(sc);
  c.attrs.sp_lanes = 8;
  c.attrs.sp_blocks = blocks;
  return c;
}

SpmmPlan plan_ok(const OpCall& c) {
  const Planned<SpmmPlan> p = plan_spmm(c);
  EXPECT_TRUE(p.ok()) << p.reject;
  return p.plan;
}

using test::expect_variant_expands;

}  // namespace

TEST(SparseSchedule, ChoiceFromRowStatistics) {
  // Short uniform rows: a thread per row; longer ones: lanes per row (a few entries per lane);
  // many dense columns: a thread per row (the columns give the threads).
  EXPECT_EQ(choose_schedule(stats(1000, 5, 6, 0.2), 1, true).schedule, SparseSchedule::ThreadPerRow);
  const SparsePlan g = choose_schedule(stats(1000, 16, 20, 0.1), 1, true);
  EXPECT_EQ(g.schedule, SparseSchedule::GroupPerRow);
  EXPECT_EQ(g.lanes, 4);
  EXPECT_EQ(choose_schedule(stats(1000, 16, 20, 0.1), 64, true).schedule, SparseSchedule::ThreadPerRow);
  EXPECT_EQ(choose_schedule(stats(1000, 16, 300, 0.5), 64, true).schedule, SparseSchedule::GroupPerRow);
  // Skewed (power law), without row blocks: SpMV binned where the row lists exist, else the
  // merge path; SpMM the merge path.
  for (bool bins : {true, false}) {
    EXPECT_EQ(choose_schedule(stats(1 << 20, 16, 40000, 4.0), 64, bins).schedule, SparseSchedule::MergePath);
    EXPECT_EQ(choose_schedule(stats(1 << 20, 16, 40000, 4.0), 1, bins).schedule,
              bins ? SparseSchedule::Binned : SparseSchedule::MergePath);
  }
  // A long maximum alone is not skew when the rows are alike (cv <= 1).
  EXPECT_NE(choose_schedule(stats(1000, 100, 900, 0.5), 1, true).schedule, SparseSchedule::MergePath);
  // Forced: as asked, except Binned without the row lists.
  for (SparseSchedule s : {SparseSchedule::ThreadPerRow, SparseSchedule::GroupPerRow, SparseSchedule::Binned,
                           SparseSchedule::MergePath})
    EXPECT_EQ(choose_schedule(stats(1000, 5, 6, 0.2), 1, true, s).schedule, s);
  EXPECT_EQ(choose_schedule(stats(1000, 5, 6, 0.2), 1, false, SparseSchedule::Binned).schedule,
            SparseSchedule::GroupPerRow);
  // The generated families of the benchmarks.
  EXPECT_EQ(choose_schedule(sparse_gen::to_csr(sparse_gen::rmat(12, 16, 22)), 64).schedule, SparseSchedule::MergePath);
  EXPECT_EQ(choose_schedule(sparse_gen::to_csr(sparse_gen::laplacian_2d(64)), 1).schedule, SparseSchedule::ThreadPerRow);
  EXPECT_EQ(choose_schedule(sparse_gen::to_csr(sparse_gen::uniform(4096, 4096, 16, 21)), 1).schedule,
            SparseSchedule::GroupPerRow);
}

TEST(SparseSchedule, Adaptive) {
  CsrRowStats s = stats(1 << 20, 16, 40000, 4.0);
  s.blocks = 70000;
  // Skewed SpMV with row blocks: the adaptive schedule (fastest on the H200's R-MAT); SpMM the
  // merge path.
  EXPECT_EQ(choose_schedule(s, 1, true).schedule, SparseSchedule::Adaptive);
  EXPECT_EQ(choose_schedule(s, 1, false).schedule, SparseSchedule::Adaptive);
  EXPECT_EQ(choose_schedule(s, 64, true).schedule, SparseSchedule::MergePath);
  // Forced: SpMV only, and only with row blocks; otherwise the merge path.
  EXPECT_EQ(choose_schedule(s, 1, true, SparseSchedule::Adaptive).schedule, SparseSchedule::Adaptive);
  EXPECT_EQ(choose_schedule(s, 64, true, SparseSchedule::Adaptive).schedule, SparseSchedule::MergePath);
  s.blocks = 0;
  EXPECT_EQ(choose_schedule(s, 1, true, SparseSchedule::Adaptive).schedule, SparseSchedule::MergePath);
  EXPECT_STREQ(sparse_schedule_name(SparseSchedule::Adaptive), "adaptive");
}

// WGT_SPARSE_SCHEDULE forces a schedule for every matrix; force_sparse_schedule wins over it;
// a bad value is a typed error at the choice.
TEST(SparseSchedule, EnvironmentVariable) {
  const CsrTensor a = sparse_gen::to_csr(sparse_gen::laplacian_2d(16));
  test_setenv("WGT_SPARSE_SCHEDULE", "adaptive");
  EXPECT_EQ(choose_schedule(a, 1).schedule, SparseSchedule::Adaptive);
  EXPECT_EQ(choose_schedule(a, 8).schedule, SparseSchedule::MergePath);
  force_sparse_schedule(SparseSchedule::Binned);
  EXPECT_EQ(choose_schedule(a, 1).schedule, SparseSchedule::Binned);
  force_sparse_schedule(std::nullopt);
  test_setenv("WGT_SPARSE_SCHEDULE", "merge");
  EXPECT_EQ(choose_schedule(a, 1).schedule, SparseSchedule::MergePath);
  test_setenv("WGT_SPARSE_SCHEDULE", "auto");
  EXPECT_EQ(choose_schedule(a, 1).schedule, SparseSchedule::ThreadPerRow);
  test_setenv("WGT_SPARSE_SCHEDULE", "fastest");
  try {
    (void)choose_schedule(a, 1);
    ADD_FAILURE() << "WGT_SPARSE_SCHEDULE=fastest accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::InvalidArgument);
    EXPECT_NE(std::string(e.what()).find("WGT_SPARSE_SCHEDULE"), std::string::npos) << e.what();
  }
  test_unsetenv("WGT_SPARSE_SCHEDULE");
  EXPECT_EQ(choose_schedule(a, 1).schedule, SparseSchedule::ThreadPerRow);
}

TEST(SparseSchedule, ForcedOverrideReachesTheCall) {
  const CsrTensor a = sparse_gen::to_csr(sparse_gen::laplacian_2d(16));
  force_sparse_schedule(SparseSchedule::MergePath);
  EXPECT_EQ(choose_schedule(a, 1).schedule, SparseSchedule::MergePath);
  force_sparse_schedule(std::nullopt);
  EXPECT_EQ(choose_schedule(a, 1).schedule, SparseSchedule::ThreadPerRow);
}

TEST(SpmmPlan, MergePathGeometry) {
  // SpMV: 256 merge threads of 4 items; workgroups cover rows + nnz.
  SpmmPlan p = plan_ok(spmm_call(1000, 5000, Tensor::empty({300}, DType::F32), SparseSchedule::MergePath));
  EXPECT_EQ(p.kernel, SpmmKernel::Merge);
  EXPECT_EQ(p.cols, 1u);
  EXPECT_EQ(p.items_per_group(), 1024u);
  EXPECT_EQ(p.groups, (6000u + 1023u) / 1024u);
  EXPECT_EQ(p.carry_words(1), 3 * p.groups + 2 + p.groups);
  EXPECT_EQ(p.name(), "merge C1 E4 G6");
  // SpMM n = 64 row-major f32: 16 vec4 column lanes, 16 merge threads of 8 items.
  p = plan_ok(spmm_call(1000, 5000, Tensor::empty({300, 64}, DType::F32), SparseSchedule::MergePath));
  EXPECT_EQ(p.vec, 4u);
  EXPECT_EQ(p.cols, 16u);
  EXPECT_EQ(p.items, 8u);
  EXPECT_EQ(p.groups, (6000u + 127u) / 128u);
  EXPECT_EQ(p.name(), "merge C16 v4 E8 G47");
  for (int pass = 0; pass < 3; ++pass) expect_variant_expands(p.merge_variant(pass, DType::I32, DType::F32));
  // Column-major: 64 scalar column lanes, 4 merge threads of 32 items.
  p = plan_ok(spmm_call(1000, 5000, Tensor::empty({64, 300}, DType::F32).t(), SparseSchedule::MergePath));
  EXPECT_EQ(p.vec, 1u);
  EXPECT_EQ(p.cols, 64u);
  EXPECT_EQ(p.items, 32u);
  // n = 5: 8 column lanes, 32 merge threads.
  p = plan_ok(spmm_call(7, 0, Tensor::empty({3, 5}, DType::F16), SparseSchedule::MergePath, DType::F16, DType::I64));
  EXPECT_EQ(p.cols, 8u);
  EXPECT_EQ(p.merge_threads(), 32u);
  EXPECT_EQ(p.groups, 1u);
  for (int pass = 0; pass < 3; ++pass)
    for (const auto& [it, vt] : {std::pair{DType::I32, DType::F32}, {DType::I64, DType::F16}, {DType::I32, DType::BF16}}) {
      expect_variant_expands(plan_ok(spmm_call(7, 9, Tensor::empty({3}, DType::F32), SparseSchedule::MergePath)).merge_variant(pass, it, vt));
      expect_variant_expands(p.merge_variant(pass, it, vt));
    }
}

TEST(SpmmPlan, RowKernelsAndVec4) {
  // Row-major f32 with n % 4 == 0: vec4 lanes (16 for 64 columns).
  SpmmPlan p = plan_ok(spmm_call(100, 500, Tensor::empty({30, 64}, DType::F32), SparseSchedule::ThreadPerRow));
  EXPECT_EQ(p.kernel, SpmmKernel::Rows);
  EXPECT_EQ(p.vec, 4u);
  EXPECT_EQ(p.cols, 16u);
  EXPECT_EQ(p.lanes, 1u);
  EXPECT_EQ(p.name(), "rows L1 C16 v4");
  // Column-major, sliced, odd n or 16-bit values: scalar lanes.
  EXPECT_EQ(plan_ok(spmm_call(100, 500, Tensor::empty({64, 30}, DType::F32).t(), SparseSchedule::ThreadPerRow)).vec, 1u);
  EXPECT_EQ(plan_ok(spmm_call(100, 500, Tensor::empty({30, 65}, DType::F32).slice(1, 1, 65), SparseSchedule::ThreadPerRow)).vec, 1u);
  EXPECT_EQ(plan_ok(spmm_call(100, 500, Tensor::empty({30, 6}, DType::F32), SparseSchedule::ThreadPerRow)).vec, 1u);
  EXPECT_EQ(plan_ok(spmm_call(100, 500, Tensor::empty({30, 64}, DType::F16), SparseSchedule::ThreadPerRow, DType::F16)).vec, 1u);
  // Lanes per row from the attributes, capped by the column lanes; binned needs the list.
  p = plan_ok(spmm_call(100, 500, Tensor::empty({30}, DType::F32), SparseSchedule::GroupPerRow));
  EXPECT_EQ(p.lanes, 8u);
  EXPECT_EQ(p.cols, 1u);
  EXPECT_EQ(plan_ok(spmm_call(100, 500, Tensor::empty({30}, DType::F32), SparseSchedule::Binned)).kernel, SpmmKernel::Binned);
  p = plan_ok(spmm_call(100, 500, Tensor::empty({30}, DType::F32), SparseSchedule::Binned, DType::F32, DType::I32, false));
  EXPECT_EQ(p.kernel, SpmmKernel::Rows);
  EXPECT_EQ(p.lanes, 8u);
  for (uint32_t vec : {1u, 4u})
    for (bool list : {false, true}) {
      SpmmPlan q = p;
      q.vec = vec;
      q.cols = 16;
      expect_variant_expands(q.rows_variant(2, list, DType::I64, DType::F32));
    }
}

TEST(SpmmPlan, AdaptiveSpmv) {
  // SpMV with row blocks: a workgroup per block; the fix-up pass where rows are split.
  OpCall c = spmm_call(1000, 5000, Tensor::empty({300}, DType::F32), SparseSchedule::Adaptive, DType::F32, DType::I32,
                       true, 9);
  SpmmPlan p = plan_ok(c);
  EXPECT_EQ(p.kernel, SpmmKernel::Adaptive);
  EXPECT_EQ(p.groups, 9u);
  EXPECT_FALSE(p.fixup);
  EXPECT_EQ(p.name(), "adaptive G9");
  c.attrs.sp_split_rows = 2;
  p = plan_ok(c);
  EXPECT_TRUE(p.fixup);
  EXPECT_EQ(p.name(), "adaptive G9 F");
  for (int pass = 0; pass < 2; ++pass)
    for (const auto& [it, vt] : {std::pair{DType::I32, DType::F32}, {DType::I64, DType::F16}, {DType::I32, DType::BF16}})
      expect_variant_expands(p.adaptive_variant(pass, it, vt));
  // Blocks that do not match their count: the merge path.
  c.attrs.sp_blocks = 10;
  EXPECT_EQ(plan_ok(c).kernel, SpmmKernel::Merge);
  // SpMM, or indptr standing in for missing blocks: the merge path.
  EXPECT_EQ(plan_ok(spmm_call(1000, 5000, Tensor::empty({300, 8}, DType::F32), SparseSchedule::Adaptive, DType::F32,
                              DType::I32, true, 9))
                .kernel,
            SpmmKernel::Merge);
  EXPECT_EQ(plan_ok(spmm_call(999, 5000, Tensor::empty({300}, DType::F32), SparseSchedule::Adaptive)).kernel,
            SpmmKernel::Merge);
}

TEST(SpmmPlan, Rejects) {
  EXPECT_NE(plan_spmm(spmm_call(10, 20, Tensor::empty({30}, DType::F64), SparseSchedule::ThreadPerRow, DType::F64))
                .reject.find("f64"),
            std::string::npos);
  EXPECT_FALSE(plan_spmm(spmm_call(10, 20, Tensor::empty({30}, DType::F16), SparseSchedule::MergePath)).ok());
  OpCall c = spmm_call(10, 20, Tensor::empty({30}, DType::F32), SparseSchedule::MergePath);
  c.inputs.pop_back();
  EXPECT_FALSE(plan_spmm(c).ok());
}
