// The sparse CSR kernels on WebGPU against the CPU reference: SpMV/SpMM under every
// schedule (thread per row, lanes per row, binned, merge path, adaptive row blocks for SpMV)
// on generated matrices (empty,
// empty rows with one dense row, diagonal, banded, uniform, R-MAT, a row longer than several
// merge-path workgroups), f32/f16/bf16 values, i32/i64 indices, row-major/column-major/sliced
// and vec4-aligned dense operands, more dense columns than a workgroup's column lanes; SDDMM,
// row sum/max, softmax, sparse + dense (16-bit included); batches of matrices; NaN; fallback,
// gpu-strict errors, pinning and the budget.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "settings_env.hpp"
#include "sparse/generate.hpp"
#include "sparse/row_blocks.hpp"
#include "webgpu/kernels/sparse.hpp"
#include "webgpu_test.hpp"
#include "wgt/sparse.hpp"
#include "wgt/wgt.hpp"

namespace wgt {
namespace {

const Device kGpu = Device::webgpu(0);

class WebGpuSparse : public wgt::testing::WebGpuTest {
 protected:
  void TearDown() override {
    force_sparse_schedule(std::nullopt);
    WebGpuTest::TearDown();
  }
  std::vector<double> host(const Tensor& t) {
    use_cpu_reference();
    return cast(t.cpu(), DType::F64).to_vector<double>();
  }
  // f(device) on the CPU reference and on the GPU (no fallback): same values within tol,
  // NaN where the reference has NaN, and the GPU ran it.
  void check(const std::string& what, double tol, const std::function<Tensor(Device)>& f) {
    SCOPED_TRACE(what);
    use_cpu_reference();
    const std::vector<double> want = host(f(Device::cpu()));
    use_gpu();
    Runtime::get().reset_stats();
    const Tensor got_t = f(kGpu);
    const OpDecision dec = Runtime::get().last_decision();
    EXPECT_EQ(dec.backend.rfind("webgpu", 0), 0u) << dec.backend << ": " << dec.reason;
    EXPECT_EQ(Runtime::get().stats().fallbacks, 0u);
    const std::vector<double> got = host(got_t);
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < got.size(); ++i) {
      if (std::isnan(want[i])) {
        EXPECT_TRUE(std::isnan(got[i])) << "[" << i << "] got " << got[i];
      } else if (std::isinf(want[i])) {
        EXPECT_EQ(got[i], want[i]) << "[" << i << "]";
      } else {
        EXPECT_NEAR(got[i], want[i], tol * std::max(1.0, std::fabs(want[i]))) << "[" << i << "]";
      }
    }
  }
  static std::vector<std::pair<const char*, sparse_gen::HostCsr>> matrices() {
    using namespace sparse_gen;
    return {{"empty", empty_rows(5, 9)},
            {"empty-rows+dense-row", mixed(67, 300, 3, 0.5, 20, 1)},
            {"diagonal", diagonal(45, 2)},
            {"banded", banded(53, 4, 3)},
            {"uniform", uniform(70, 90, 11, 4)},
            {"rmat", rmat(9, 6, 5)},
            // A row of 5000 entries: the merge path splits it over several workgroups (fix-up).
            {"long-row", mixed(9, 5000, 2, 0.3, 4, 7)}};
  }
  static double tol_of(DType dt, int64_t max_len) {
    const double t = dt == DType::F32 ? 1e-5 : dt == DType::F16 ? 4e-3 : 3e-2;
    return t * std::sqrt(static_cast<double>(std::max<int64_t>(1, max_len)));
  }
};

Tensor dense_input(const Shape& s, uint64_t seed, DType dt, Device d) {
  return cast(rand_uniform(s, seed, -1, 1), dt).to(d);
}

// Each value dtype and both index widths, in three mixes (lavapipe compiles every variant).
const std::pair<DType, DType> kMixes[] = {{DType::I32, DType::F32}, {DType::I64, DType::F16}, {DType::I32, DType::BF16}};

TEST_F(WebGpuSparse, SpmvSpmmDtypes) {
  for (const auto& [name, m] : matrices())
    for (const auto& [idx, dt] : kMixes) {
      const std::string what = std::string(name) + " " + dtype_name(idx) + " " + dtype_name(dt);
      use_cpu_reference();
      const CsrTensor a = sparse_gen::to_csr(m, idx, dt);
      const double tol = tol_of(dt, a.stats().max_len);
      check(what + " spmv", tol, [&](Device d) { return spmv(a.to(d), dense_input({a.cols()}, 1, dt, d)); });
      // 70 columns: more than the 64 column lanes of a workgroup, column-major.
      check(what + " spmm col-major", tol,
            [&](Device d) { return spmm(a.to(d), dense_input({70, a.cols()}, 3, dt, d).t()); });
    }
}

TEST_F(WebGpuSparse, SpmvSpmmEverySchedule) {
  for (const auto& [name, m] : matrices())
    for (SparseSchedule sc : {SparseSchedule::ThreadPerRow, SparseSchedule::GroupPerRow, SparseSchedule::Binned,
                              SparseSchedule::MergePath, SparseSchedule::Adaptive}) {
      const std::string what = std::string(name) + " " + sparse_schedule_name(sc);
      force_sparse_schedule(sc);
      use_cpu_reference();
      const CsrTensor a = sparse_gen::to_csr(m, DType::I32, DType::F32);
      ASSERT_EQ(choose_schedule(a, 1).schedule, sc);
      const double tol = tol_of(DType::F32, a.stats().max_len);
      check(what + " spmv", tol, [&](Device d) { return spmv(a.to(d), dense_input({a.cols()}, 1, DType::F32, d)); });
      check(what + " spmm row-major", tol,
            [&](Device d) { return spmm(a.to(d), dense_input({a.cols(), 5}, 2, DType::F32, d)); });
      // 8 columns of a 12-column operand from column 4: the vec4 loads of the row kernels.
      check(what + " spmm vec4", tol,
            [&](Device d) { return spmm(a.to(d), dense_input({a.cols(), 12}, 5, DType::F32, d).slice(1, 4, 12)); });
      check(what + " spmm sliced", tol,
            [&](Device d) { return spmm(a.to(d), dense_input({a.cols(), 9}, 4, DType::F32, d).slice(1, 1, 9, 3)); });
    }
}

// The Adaptive SpMV (row blocks, sparse/row_blocks.hpp) on every generated matrix, every
// value dtype and both index widths, and on matrices made for its block boundaries: a row of
// exactly one block's entries, rows split over several blocks (the fix-up pass) next to
// each other and to empty rows, a long row among short ones, a larger power-law matrix,
// blocks of one lane per row and more empty rows than a block holds. x contiguous and
// strided.
TEST_F(WebGpuSparse, AdaptiveSpmv) {
  using namespace sparse_gen;
  using sparse_detail::kBlockEntries;
  auto mats = matrices();
  auto by_lengths = [](const std::vector<int64_t>& lens, int64_t cols, uint64_t seed) {
    HostCsr h = uniform(static_cast<int64_t>(lens.size()), cols, 0, seed);
    h.indptr.assign(1, 0);
    h.indices.clear();
    for (size_t r = 0; r < lens.size(); ++r) {
      for (int64_t j = 0; j < lens[r]; ++j) h.indices.push_back((j * 7 + static_cast<int64_t>(r)) % cols);
      std::sort(h.indices.end() - lens[r], h.indices.end());
      h.indptr.push_back(static_cast<int64_t>(h.indices.size()));
    }
    h.values.resize(h.indices.size());
    for (size_t k = 0; k < h.values.size(); ++k) h.values[k] = static_cast<float>((k * 37 % 101) / 50.0 - 1.0);
    return h;
  };
  // Columns j * 7 + r mod cols are distinct for lengths up to cols (7 and cols coprime).
  static_assert((2 * kBlockEntries + 1) % 7 != 0 && (3 * kBlockEntries + 1) % 7 != 0);
  mats.push_back({"block-sized rows", by_lengths({kBlockEntries, 1, kBlockEntries, 0, 3}, 2 * kBlockEntries + 1, 3)});
  mats.push_back({"split rows",
                  by_lengths({0, kBlockEntries + 1, 3 * kBlockEntries - 5, 0, 0, 2, 2 * kBlockEntries}, 3 * kBlockEntries + 1, 4)});
  mats.push_back({"long among short", by_lengths([] {
                    std::vector<int64_t> l(300, 1);
                    l[5] = 200;
                    l[150] = 0;
                    return l;
                  }(), 401, 5)});
  mats.push_back({"rmat-11", rmat(11, 8, 6)});
  mats.push_back({"laplacian 20^2", laplacian_2d(20)});  // blocks of 256 rows: a lane per row
  mats.push_back({"600 empty rows", empty_rows(600, 3)});
  force_sparse_schedule(SparseSchedule::Adaptive);
  for (const auto& [name, m] : mats)
    for (const auto& [idx, dt] : kMixes) {
      const std::string what = std::string(name) + " " + dtype_name(idx) + " " + dtype_name(dt);
      use_cpu_reference();
      const CsrTensor a = sparse_gen::to_csr(m, idx, dt);
      ASSERT_EQ(choose_schedule(a, 1).schedule, SparseSchedule::Adaptive);
      const double tol = tol_of(dt, a.stats().max_len);
      check(what + " spmv", tol, [&](Device d) { return spmv(a.to(d), dense_input({a.cols()}, 1, dt, d)); });
      EXPECT_EQ(webgpu::spmm_last_plan().rfind("adaptive G" + std::to_string(a.stats().blocks), 0), 0u)
          << what << ": " << webgpu::spmm_last_plan();
      EXPECT_EQ(webgpu::spmm_last_plan().find(" F") != std::string::npos, a.stats().split_rows > 0) << what;
      check(what + " spmv strided x", tol,
            [&](Device d) { return spmv(a.to(d), dense_input({2 * a.cols() + 1}, 2, dt, d).slice(0, 1, 2 * a.cols() + 1, 2)); });
    }
  // No rows: nothing to run, an empty result.
  use_cpu_reference();
  const CsrTensor z = sparse_gen::to_csr(empty_rows(0, 4), DType::I32);
  check("no rows", 0, [&](Device d) { return spmv(z.to(d), dense_input({4}, 1, DType::F32, d)); });
}

// WGT_SPARSE_LANE_ENTRIES re-partitions the matrices made after it (1: a row longer than a
// lane's one entry never shares a block; 2048: only the entry budget closes blocks): other
// blocks, the same results.
TEST_F(WebGpuSparse, AdaptiveLaneEntriesSetting) {
  using namespace sparse_gen;
  force_sparse_schedule(SparseSchedule::Adaptive);
  const HostCsr m = mixed(700, 900, 5, 0.5, 40, 8);
  int64_t blocks_seen[2] = {0, 0};
  int i = 0;
  for (const char* lane_entries : {"1", "2048"}) {
    EnvGuard env("WGT_SPARSE_LANE_ENTRIES", lane_entries);
    use_cpu_reference();
    const CsrTensor a = to_csr(m, DType::I32, DType::F32);
    blocks_seen[i++] = a.stats().blocks;
    EXPECT_EQ(a.stats().blocks,
              sparse_detail::partition_row_blocks(m.indptr, std::stoll(lane_entries)).blocks);
    check(std::string("lane entries ") + lane_entries, tol_of(DType::F32, a.stats().max_len),
          [&](Device d) { return spmv(a.to(d), dense_input({a.cols()}, 1, DType::F32, d)); });
    EXPECT_EQ(webgpu::spmm_last_plan().rfind("adaptive G" + std::to_string(a.stats().blocks), 0), 0u)
        << webgpu::spmm_last_plan();
  }
  EXPECT_GT(blocks_seen[0], blocks_seen[1]);
}

// NaN and inf in the values and in x under the Adaptive SpMV, in a stream block and in a
// row split over blocks (whose chunks' partial sums meet in the fix-up pass), and f32 sums
// that overflow to inf.
TEST_F(WebGpuSparse, AdaptiveNaNInf) {
  using sparse_detail::kBlockEntries;
  force_sparse_schedule(SparseSchedule::Adaptive);
  // Rows: 0..3 short, 4 split over three blocks, 5 empty, 6 short.
  const int64_t long_len = 2 * kBlockEntries + 100, cols = long_len + 4;
  std::vector<int64_t> ip{0}, ix;
  std::vector<float> v;
  auto row = [&](std::vector<std::pair<int64_t, float>> entries) {
    for (auto [j, x] : entries) {
      ix.push_back(j);
      v.push_back(x);
    }
    ip.push_back(static_cast<int64_t>(ix.size()));
  };
  row({{0, NAN}, {1, 1}});
  row({{0, INFINITY}, {2, 1}});
  row({{1, INFINITY}, {2, -INFINITY}});
  row({{3, 2}, {4, 3}});  // x[3] is NaN below in the second case
  std::vector<std::pair<int64_t, float>> lr;
  for (int64_t j = 0; j < long_len; ++j) lr.push_back({j + 4, 0.5f});
  row(lr);
  row({});
  row({{5, 3e38f}, {6, 3e38f}});
  for (int x_case = 0; x_case < 3; ++x_case)
    for (DType dt : {DType::F32, DType::F16, DType::BF16}) {
      use_cpu_reference();
      std::vector<float> vals = v;
      std::vector<float> x(static_cast<size_t>(cols), 1.0f);
      if (x_case == 1) {
        x[3] = NAN;                           // row 3
        x[10] = INFINITY;                     // in the split row's first chunk
      } else if (x_case == 2) {
        vals[ip[4] + 5] = INFINITY;           // the split row's first chunk: +inf
        vals[ip[5] - 7] = -INFINITY;          // and its last: -inf, NaN in the fix-up
      }
      const CsrTensor a =
          CsrTensor::from_parts(Tensor::from_vector(ip, {static_cast<int64_t>(ip.size())}),
                                Tensor::from_vector(ix, {static_cast<int64_t>(ix.size())}),
                                cast(Tensor::from_vector(vals, {static_cast<int64_t>(vals.size())}), dt),
                                {static_cast<int64_t>(ip.size()) - 1, cols});
      ASSERT_EQ(a.stats().split_rows, 1);
      const Tensor xt = cast(Tensor::from_vector(x, {cols}), dt);
      check(std::string("nan/inf case ") + std::to_string(x_case) + " " + dtype_name(dt), tol_of(dt, long_len),
            [&](Device d) { return spmv(a.to(d), xt.to(d)); });
    }
}

// A batch of matrices sharing the pattern under the Adaptive SpMV: member views at offsets.
TEST_F(WebGpuSparse, AdaptiveBatches) {
  using namespace sparse_gen;
  force_sparse_schedule(SparseSchedule::Adaptive);
  for (const auto& [name, h] : {std::pair{"long-row", mixed(9, 3000, 2, 0.3, 4, 7)},
                                std::pair{"empty-rows+dense-row", mixed(31, 140, 3, 0.5, 9, 1)}})
    for (const auto& [idx, dt] : kMixes) {
      use_cpu_reference();
      const CsrTensor one = to_csr(h, idx, dt);
      const CsrTensor a = one.with_values(cast(rand_uniform({3, one.nnz()}, 17, -1, 1), dt));
      check(std::string(name) + " " + dtype_name(idx) + " " + dtype_name(dt) + " batch spmv", tol_of(dt, a.stats().max_len),
            [&](Device d) { return spmv(a.to(d), dense_input({3, a.cols()}, 1, dt, d)); });
      EXPECT_EQ(webgpu::spmm_last_plan().rfind("adaptive", 0), 0u) << webgpu::spmm_last_plan();
    }
}

TEST_F(WebGpuSparse, RowOpsSddmmAdd) {
  for (const auto& [name, m] : matrices())
    for (const auto& [idx, dt] : kMixes) {
        const std::string what = std::string(name) + " " + dtype_name(idx) + " " + dtype_name(dt);
        use_cpu_reference();
        const CsrTensor a = sparse_gen::to_csr(m, idx, dt);
        const double tol = tol_of(dt, a.stats().max_len);
        check(what + " row sum", tol, [&](Device d) { return sparse_row_sum(a.to(d)); });
        check(what + " row max", 0, [&](Device d) { return sparse_row_max(a.to(d)); });
        check(what + " softmax", tol, [&](Device d) { return sparse_softmax(a.to(d)).values(); });
        check(what + " sddmm", tol_of(dt, 7), [&](Device d) {
          return sddmm(a.to(d), dense_input({a.rows(), 7}, 5, dt, d), dense_input({a.cols(), 7}, 6, dt, d).t()).values();
        });
        // 16-bit rows of odd length (diagonal, banded) share a word with the next row.
        check(what + " add", dt == DType::F32 ? 1e-6 : tol_of(dt, 1),
              [&](Device d) { return add(dense_input({a.rows(), a.cols()}, 7, dt, d), a.to(d)); });
      }
}

// A batch of matrices sharing one pattern (values [batch, nnz]): every op member by member,
// under the chosen schedule and the merge path, against the reference.
TEST_F(WebGpuSparse, Batches) {
  using namespace sparse_gen;
  const std::pair<const char*, HostCsr> mats[] = {{"empty-rows+dense-row", mixed(31, 140, 3, 0.5, 9, 1)},
                                                  {"long-row", mixed(9, 3000, 2, 0.3, 4, 7)},
                                                  {"uniform", uniform(40, 50, 6, 4)}};
  for (const auto& [name, h] : mats)
    for (const auto& [idx, dt] : kMixes)
      for (bool merge : {false, true}) {
        const std::string what = std::string(name) + " " + dtype_name(idx) + " " + dtype_name(dt) + (merge ? " merge" : "");
        if (merge) force_sparse_schedule(SparseSchedule::MergePath); else force_sparse_schedule(std::nullopt);
        use_cpu_reference();
        const CsrTensor one = to_csr(h, idx, dt);
        const CsrTensor a = one.with_values(cast(rand_uniform({3, one.nnz()}, 17, -1, 1), dt));
        const int64_t r = a.rows(), c = a.cols();
        const double tol = tol_of(dt, a.stats().max_len);
        check(what + " spmv", tol, [&](Device d) { return spmv(a.to(d), dense_input({3, c}, 1, dt, d)); });
        check(what + " spmm", tol,
              [&](Device d) { return spmm(a.to(d), dense_input({3, c, 10}, 2, dt, d).slice(2, 1, 10, 2)); });
        if (merge) continue;
        check(what + " sddmm", tol_of(dt, 4), [&](Device d) {
          return sddmm(a.to(d), dense_input({3, r, 4}, 3, dt, d), dense_input({3, c, 4}, 4, dt, d).transpose(1, 2)).values();
        });
        check(what + " add", dt == DType::F32 ? 1e-6 : tol_of(dt, 1),
              [&](Device d) { return add(dense_input({3, r, c}, 5, dt, d), a.to(d)); });
        check(what + " row sum", tol, [&](Device d) { return sparse_row_sum(a.to(d)); });
        check(what + " row max", 0, [&](Device d) { return sparse_row_max(a.to(d)); });
        check(what + " softmax", tol, [&](Device d) { return sparse_softmax(a.to(d)).values(); });
      }
}

// Sparse + dense in 16-bit with duplicate entries (added one after the other) over rows of
// three columns, so most output words hold elements of two rows.
TEST_F(WebGpuSparse, AddDense16BitDuplicates) {
  for (DType dt : {DType::F16, DType::BF16}) {
    use_cpu_reference();
    CsrOptions allow;
    allow.duplicates = Duplicates::Allow;
    const CsrTensor a = CsrTensor::from_parts(
        Tensor::from_vector<int64_t>({0, 3, 3, 5, 7, 8}, {6}), Tensor::from_vector<int64_t>({2, 0, 2, 1, 1, 0, 2, 2}, {8}),
        cast(Tensor::from_vector<float>({0.5f, -1.25f, 0.75f, 2, 0.125f, 3, -0.5f, 1}, {8}), dt), {5, 3}, allow);
    check(std::string("add ") + dtype_name(dt), tol_of(dt, 2),
          [&](Device d) { return add(dense_input({5, 3}, 8, dt, d), a.to(d)); });
  }
}

TEST_F(WebGpuSparse, NaNAndInf) {
  use_cpu_reference();
  // Rows: [NaN, 1], [-inf, -inf], [inf, 2], [3, 4].
  const CsrTensor a = CsrTensor::from_parts(Tensor::from_vector<int32_t>({0, 2, 4, 6, 8}, {5}),
                                            Tensor::from_vector<int32_t>({0, 1, 0, 1, 0, 1, 0, 1}, {8}),
                                            Tensor::from_vector<float>({NAN, 1, -INFINITY, -INFINITY, INFINITY, 2, 3, 4}, {8}),
                                            {4, 2});
  check("row max", 0, [&](Device d) { return sparse_row_max(a.to(d)); });
  check("row sum", 1e-6, [&](Device d) { return sparse_row_sum(a.to(d)); });
  check("softmax", 1e-6, [&](Device d) { return sparse_softmax(a.to(d)).values(); });
  check("spmv NaN x", 1e-6, [&](Device d) {
    return spmv(a.with_values(Tensor::from_vector<float>({1, 1, 1, 1, 1, 1, 1, 1}, {8})).to(d),
                Tensor::from_vector<float>({NAN, 1}, {2}).to(d));
  });
}

TEST_F(WebGpuSparse, FallbackAndStrictErrors) {
  use_cpu_reference();
  const CsrTensor a = sparse_gen::to_csr(sparse_gen::uniform(40, 30, 4, 9), DType::I32, DType::F64);
  const Tensor x = dense_input({30}, 1, DType::F64, Device::cpu());
  const std::vector<double> want = host(spmv(a, x));
  // f64 has no WGSL type: with fallback allowed the CPU runs it (counted), result on the device.
  Policy p = saved_;
  p.mode = PolicyMode::Auto;
  p.allow_fallback = true;
  Runtime::get().set_policy(p);
  Runtime::get().reset_stats();
  const CsrTensor ag = a.to(kGpu);
  const Tensor y = spmv(ag, x.to(kGpu));
  EXPECT_TRUE(Runtime::get().last_decision().fallback);
  EXPECT_EQ(Runtime::get().stats().fallbacks, 1u);
  EXPECT_TRUE(y.device() == kGpu);
  EXPECT_EQ(host(y), want);
  // Without fallback, and under gpu-strict: a typed Unsupported naming the op.
  for (bool strict : {false, true}) {
    p.allow_fallback = false;
    p.mode = strict ? PolicyMode::GpuStrict : PolicyMode::Auto;
    Runtime::get().set_policy(p);
    try {
      (void)spmv(ag, x.to(kGpu));
      ADD_FAILURE() << "f64 spmv on WebGPU did not throw";
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::Unsupported) << e.what();
      EXPECT_NE(std::string(e.what()).find("spmv"), std::string::npos) << e.what();
    }
  }
}

TEST_F(WebGpuSparse, DeviceArraysAndConversions) {
  use_cpu_reference();
  const CsrTensor h = sparse_gen::to_csr(sparse_gen::mixed(23, 17, 3, 0.3, 5, 8), DType::I32);
  // Arrays already on the device: validated by a read-back, statistics identical, and the
  // conversions return matrices on the device with the host's values.
  const CsrTensor g = CsrTensor::from_parts(h.indptr().to(kGpu), h.indices().to(kGpu), h.values().to(kGpu), h.shape());
  EXPECT_TRUE(g.device() == kGpu);
  EXPECT_TRUE(g.bin_rows().device() == kGpu);
  EXPECT_EQ(g.stats().max_len, h.stats().max_len);
  EXPECT_EQ(g.stats().empty_rows, h.stats().empty_rows);
  EXPECT_EQ(host(g.to_dense()), host(h.to_dense()));
  const CsrTensor gt = g.transpose();
  EXPECT_TRUE(gt.device() == kGpu);
  EXPECT_EQ(host(gt.to_dense()), host(h.transpose().to_dense()));
  const Tensor sel = Tensor::from_vector<int64_t>({5, 0, 22, 5}, {4});
  const CsrTensor gs = index_select_rows(g, sel.to(kGpu));
  EXPECT_TRUE(gs.device() == kGpu);
  EXPECT_EQ(host(gs.to_dense()), host(index_select_rows(h, sel).to_dense()));
  // A bad device array is caught by the same validation.
  std::vector<int32_t> bad = h.indices().to_vector<int32_t>();
  bad[0] = 17;
  try {
    (void)CsrTensor::from_parts(h.indptr().to(kGpu), Tensor::from_vector(bad, {h.nnz()}).to(kGpu), h.values().to(kGpu),
                                h.shape());
    ADD_FAILURE() << "column 17 of 17 accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::OutOfRange) << e.what();
  }
}

TEST_F(WebGpuSparse, ResidencyPinningBudget) {
  use_cpu_reference();
  const CsrTensor a = sparse_gen::to_csr(sparse_gen::uniform(200, 100, 8, 2), DType::I64);
  use_gpu();
  const uint64_t pinned0 = Runtime::get().memory_stats().pinned;
  const CsrTensor g = a.to(kGpu);
  EXPECT_TRUE(Runtime::get().is_resident(g.values()));
  EXPECT_TRUE(Runtime::get().is_resident(g.indices()));
  g.pin();
  const uint64_t csr_bytes = g.indptr().nbytes() + g.indices().nbytes() + g.values().nbytes() + g.bin_rows().nbytes();
  EXPECT_GE(Runtime::get().memory_stats().pinned - pinned0, csr_bytes);
  g.unpin();
  EXPECT_EQ(Runtime::get().memory_stats().pinned, pinned0);
  // Host operands whose working set exceeds the budget run on the CPU under auto (not a
  // fallback), with the same result.
  Policy p = saved_;
  p.mode = PolicyMode::Auto;
  p.min_gpu_work = 0;
  p.memory_budget = 1024;
  Runtime::get().set_policy(p);
  const Tensor x = rand_uniform({100}, 3);
  const Tensor y = spmv(a, x);
  EXPECT_TRUE(Runtime::get().last_decision().backend.rfind("cpu", 0) == 0) << Runtime::get().last_decision().backend;
  EXPECT_FALSE(Runtime::get().last_decision().fallback);
  EXPECT_TRUE(y.device().is_cpu());
}

}  // namespace
}  // namespace wgt
