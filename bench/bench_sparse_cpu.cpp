// The fast CPU sparse kernels (wgt::spmv / spmm under the cpu-only policy, fast mode) against
// Eigen's sparse module (Eigen::SparseMatrix<float, RowMajor> mapped over the same CSR arrays,
// times a dense vector or a row-major [cols, n] matrix; multi-threaded where Eigen is built
// with OpenMP) on the matrices of issue 21 (bench_webgpu_sparse's generators and seeds).
// Eigen is optional: without it (WGT_HAVE_EIGEN unset) only our kernels are timed.
//   bench_sparse_cpu [--matrix laplacian,uniform,rmat] [--small] [--n 64] [--ms 300]
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#ifdef WGT_HAVE_EIGEN
#include <Eigen/Dense>
#include <Eigen/Sparse>
#endif

#include "sparse/generate.hpp"
#include "wgt/sparse.hpp"
#include "wgt/wgt.hpp"

using namespace wgt;

namespace {

// Median seconds per call over 5 runs of enough calls to last `ms` milliseconds.
double time_per_call(const std::function<void()>& f, double ms) {
  using clock = std::chrono::steady_clock;
  f();
  auto t0 = clock::now();
  f();
  const double one = std::max(1e-7, std::chrono::duration<double>(clock::now() - t0).count());
  const int iters = std::max(1, static_cast<int>(ms / 1e3 / one));
  std::vector<double> runs;
  for (int r = 0; r < 5; ++r) {
    t0 = clock::now();
    for (int i = 0; i < iters; ++i) f();
    runs.push_back(std::chrono::duration<double>(clock::now() - t0).count() / iters);
  }
  std::sort(runs.begin(), runs.end());
  return runs[2];
}

void report(const char* who, const char* what, const char* matrix, const CsrTensor& a, int64_t n, double s) {
  const double bytes = 4.0 * (a.rows() + 1) + 8.0 * a.nnz() + 4.0 * n * (a.rows() + a.cols());
  std::printf("%-6s %-5s %-10s rows %9lld nnz %10lld n %3lld  %10.1f us  %7.2f GB/s  %7.2f GFLOP/s\n", who, what, matrix,
              (long long)a.rows(), (long long)a.nnz(), (long long)n, s * 1e6, bytes / s / 1e9, 2.0 * a.nnz() * n / s / 1e9);
}

}  // namespace

int main(int argc, char** argv) {
  std::string only = "laplacian,uniform,rmat";
  bool small = false;
  int64_t n = 64;
  double ms = 300;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) { std::fprintf(stderr, "%s needs a value\n", a.c_str()); std::exit(2); }
      return argv[++i];
    };
    if (a == "--matrix") only = next();
    else if (a == "--n") n = std::stoll(next());
    else if (a == "--ms") ms = std::stod(next());
    else if (a == "--small") small = true;
    else { std::fprintf(stderr, "unknown argument %s\n", a.c_str()); return 2; }
  }
  Policy p = Runtime::get().policy();
  p.mode = PolicyMode::CpuOnly;
  p.cpu_mode = CpuMode::Fast;
  Runtime::get().set_policy(p);
#ifdef WGT_HAVE_EIGEN
  std::printf("Eigen %d.%d.%d, %d threads\n", EIGEN_WORLD_VERSION, EIGEN_MAJOR_VERSION, EIGEN_MINOR_VERSION,
              Eigen::nbThreads());
#else
  std::printf("built without Eigen: our kernels only\n");
#endif
  int failures = 0;
  for (const char* name : {"laplacian", "uniform", "rmat"}) {
    if (only.find(name) == std::string::npos) continue;
    sparse_gen::HostCsr m;
    if (!std::strcmp(name, "laplacian")) m = sparse_gen::laplacian_2d(small ? 512 : 2048);
    else if (!std::strcmp(name, "uniform")) m = sparse_gen::uniform(small ? 1 << 18 : 1 << 20, small ? 1 << 18 : 1 << 20, 16, 21);
    else m = sparse_gen::rmat(small ? 18 : 22, 16, 22);
    const CsrTensor a = sparse_gen::to_csr(m, DType::I32);
    const Tensor x = rand_uniform({a.cols()}, 1, -1, 1), b = rand_uniform({a.cols(), n}, 2, -1, 1);
    Tensor y, ym;
    report("wgt", "spmv", name, a, 1, time_per_call([&] { y = spmv(a, x); }, ms));
    report("wgt", "spmm", name, a, n, time_per_call([&] { ym = spmm(a, b); }, ms));
#ifdef WGT_HAVE_EIGEN
    using Sp = Eigen::SparseMatrix<float, Eigen::RowMajor, int32_t>;
    using Rm = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
    const Eigen::Map<const Sp> ea(a.rows(), a.cols(), a.nnz(), a.indptr().data<int32_t>(), a.indices().data<int32_t>(),
                                  a.values().data<float>());
    const Eigen::Map<const Eigen::VectorXf> ex(x.data<float>(), a.cols());
    const Eigen::Map<const Rm> eb(b.data<float>(), a.cols(), n);
    Eigen::VectorXf ey(a.rows());
    Rm eym(a.rows(), n);
    report("eigen", "spmv", name, a, 1, time_per_call([&] { ey.noalias() = ea * ex; }, ms));
    report("eigen", "spmm", name, a, n, time_per_call([&] { eym.noalias() = ea * eb; }, ms));
    // Same products (sampled): the two libraries compute one thing.
    const float* yw = y.data<float>();
    const float* ymw = ym.data<float>();
    for (int64_t r = 0; r < a.rows(); r += 1 + a.rows() / 1024) {
      if (std::fabs(yw[r] - ey[r]) > 1e-3f * (1 + std::fabs(ey[r])) ||
          std::fabs(ymw[r * n] - eym(r, 0)) > 1e-3f * (1 + std::fabs(eym(r, 0)))) {
        std::printf("%s: MISMATCH at row %lld\n", name, (long long)r);
        ++failures;
        break;
      }
    }
#endif
  }
  return failures ? 1 : 0;
}
