// SpMV and SpMM (64 dense columns) on WebGPU on the matrices of issue 21, generated with
// fixed seeds: a 2-D 5-point Laplacian (2048^2 = 4.2M rows), a uniform random matrix (1M x 1M,
// 16 entries per row) and an R-MAT power-law graph (2^22 vertices, average degree 16).
// Results are verified against the CPU fast kernels (sampled rows) before printing.
// bench/torch_sparse.py runs torch.sparse_csr_tensor mv/mm (cuSPARSE) on the same matrices,
// written by --dump DIR.
//   bench_webgpu_sparse [--matrix laplacian,uniform,rmat (default: all)] [--small]
//                       [--schedule S[,S...]] (auto thread group binned merge adaptive, or
//                                     all: every one in this process, one line each; a
//                                     forced schedule's --json case ends in " @<schedule>")
//                       [--spmv-only] [--n 64] [--dump DIR]
//                       [--no-vec4]  (B as columns 1..n of a [cols, n + 1] tensor: the
//                                     scalar column lanes instead of vec4, for comparison)
//                       [--json FILE]  (records of bench/bench_json.hpp: case "spmv <matrix>",
//                                       "spmm n<N> <matrix>", time = the printed gpu column)
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "bench_json.hpp"
#include "bench_timing.hpp"
#include "sparse/generate.hpp"
#include "wgt/sparse.hpp"
#include "wgt/wgt.hpp"

using namespace wgt;

namespace {

constexpr double kPeakBytesPerS = 4.17e12;  // H200 HBM3e

void dump(const std::string& dir, const std::string& name, const sparse_gen::HostCsr& m) {
  auto write = [&](const std::string& file, const void* p, size_t bytes) {
    std::ofstream f(dir + "/" + name + "." + file, std::ios::binary);
    f.write(static_cast<const char*>(p), static_cast<std::streamsize>(bytes));
  };
  std::vector<int32_t> ip(m.indptr.begin(), m.indptr.end()), ix(m.indices.begin(), m.indices.end());
  const int64_t shape[2] = {m.rows, m.cols};
  write("shape.i64", shape, sizeof shape);
  write("indptr.i32", ip.data(), ip.size() * 4);
  write("indices.i32", ix.data(), ix.size() * 4);
  write("values.f32", m.values.data(), m.values.size() * 4);
  std::printf("wrote %s/%s.{shape.i64,indptr.i32,indices.i32,values.f32}\n", dir.c_str(), name.c_str());
}

bool verify(const Tensor& got_dev, const Tensor& want, const char* what) {
  const std::vector<float> g = got_dev.cpu().flatten().to_vector<float>(), w = want.flatten().to_vector<float>();
  for (size_t i = 0; i < g.size(); i += 1 + g.size() / 4096) {
    if (!(std::fabs(g[i] - w[i]) <= 1e-3 * (1.0 + std::fabs(w[i])))) {
      std::printf("%s: MISMATCH at %zu: %g vs %g\n", what, i, g[i], w[i]);
      return false;
    }
  }
  return true;
}

// The CPU (fast kernels) result, whatever the policy would choose for host operands.
Tensor on_cpu(const std::function<Tensor()>& f) {
  const Policy saved = Runtime::get().policy();
  Policy p = saved;
  p.mode = PolicyMode::CpuOnly;
  p.cpu_mode = CpuMode::Fast;
  Runtime::get().set_policy(p);
  Tensor t = f();
  Runtime::get().set_policy(saved);
  return t;
}

void report(const char* what, const char* matrix, const CsrTensor& a, int64_t n, const bench::Timing& t,
            const std::string& forced) {
  const double s = t.batch_gpu_s > 0 ? t.batch_gpu_s : t.wall_s;
  const double csr_bytes = 4.0 * (a.rows() + 1) + 8.0 * a.nnz();
  const double vec_bytes = 4.0 * n * (a.rows() + a.cols());
  std::printf("%-6s %-10s rows %9lld nnz %10lld n %3lld  %-15s wall %9.1f us  gpu %9.1f us  %7.1f GB/s (%.0f%% of peak)  %7.1f GFLOP/s\n",
              what, matrix, (long long)a.rows(), (long long)a.nnz(), (long long)n,
              sparse_schedule_name(choose_schedule(a, n).schedule), t.wall_s * 1e6, s * 1e6,
              (csr_bytes + vec_bytes) / s / 1e9, 100.0 * (csr_bytes + vec_bytes) / s / kPeakBytesPerS,
              2.0 * a.nnz() * n / s / 1e9);
  // The time the line prints first (batch GPU where measured, else wall), as torch_sparse.py's
  // CUDA-event time compares with it.
  const std::string c = std::string(what) + (n > 1 ? " n" + std::to_string(n) + " " : " ") + matrix +
                        (forced == "auto" ? std::string() : " @" + forced);
  bench::emit(bench::Record("sparse", c, "time", "us", s * 1e6)
                  .with("wall_us", t.wall_s * 1e6).with("schedule", sparse_schedule_name(choose_schedule(a, n).schedule))
                  .with("rows", static_cast<double>(a.rows())).with("nnz", static_cast<double>(a.nnz()))
                  .with("gbs", (csr_bytes + vec_bytes) / s / 1e9));
}

}  // namespace

int main(int argc, char** argv) {
  if (!bench::json_from_args(argc, argv)) return 2;
  std::string only = "laplacian,uniform,rmat", sched = "auto", dump_dir;
  bool small = false, no_vec4 = false, spmv_only = false;
  int64_t n = 64;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) { std::fprintf(stderr, "%s needs a value\n", a.c_str()); std::exit(2); }
      return argv[++i];
    };
    if (a == "--matrix") only = next();
    else if (a == "--schedule") sched = next();
    else if (a == "--n") n = std::stoll(next());
    else if (a == "--dump") dump_dir = next();
    else if (a == "--small") small = true;
    else if (a == "--no-vec4") no_vec4 = true;
    else if (a == "--spmv-only") spmv_only = true;
    else { std::fprintf(stderr, "unknown argument %s\n", a.c_str()); return 2; }
  }
  const std::map<std::string, std::optional<SparseSchedule>> by_name = {
      {"auto", std::nullopt},
      {"thread", SparseSchedule::ThreadPerRow},
      {"group", SparseSchedule::GroupPerRow},
      {"binned", SparseSchedule::Binned},
      {"merge", SparseSchedule::MergePath},
      {"adaptive", SparseSchedule::Adaptive}};
  if (sched == "all") sched = "auto,thread,group,binned,merge,adaptive";
  std::vector<std::string> schedules;
  for (size_t at = 0; at <= sched.size();) {
    const size_t end = std::min(sched.find(',', at), sched.size());
    schedules.push_back(sched.substr(at, end - at));
    if (!by_name.count(schedules.back())) {
      std::fprintf(stderr, "--schedule: a comma list of auto, thread, group, binned, merge, adaptive, or all\n");
      return 2;
    }
    at = end + 1;
  }
  std::string why;
  if (dump_dir.empty() && !webgpu_available(&why)) {
    std::fprintf(stderr, "WebGPU unavailable: %s\n", why.c_str());
    return 1;
  }
  int failures = 0;
  const Device gpu = Device::webgpu(0);
  for (const char* name : {"laplacian", "uniform", "rmat"}) {
    if (only.find(name) == std::string::npos) continue;
    sparse_gen::HostCsr m;
    if (!std::strcmp(name, "laplacian")) m = sparse_gen::laplacian_2d(small ? 256 : 2048);
    else if (!std::strcmp(name, "uniform")) m = sparse_gen::uniform(small ? 65536 : 1 << 20, small ? 65536 : 1 << 20, 16, 21);
    else m = sparse_gen::rmat(small ? 16 : 22, 16, 22);
    if (!dump_dir.empty()) {
      dump(dump_dir, name, m);
      continue;
    }
    const CsrTensor host = sparse_gen::to_csr(m, DType::I32);
    const CsrRowStats& st = host.stats();
    std::printf("%s: rows %lld nnz %lld mean %.1f max %lld empty %lld cv %.2f; adaptive: %lld row blocks (%.0f entries "
                "each on average), %lld rows split\n",
                name, (long long)st.rows, (long long)st.nnz, st.mean_len, (long long)st.max_len, (long long)st.empty_rows,
                st.cv, (long long)st.blocks, st.blocks ? double(st.nnz) / double(st.blocks) : 0.0,
                (long long)st.split_rows);
    const CsrTensor a = host.to(gpu);
    a.pin();
    const Tensor x = on_cpu([&] { return rand_uniform({host.cols()}, 1, -1, 1); });
    const Tensor b_full = on_cpu([&] { return rand_uniform({host.cols(), no_vec4 ? n + 1 : n}, 2, -1, 1); });
    const Tensor b = no_vec4 ? b_full.slice(1, 1, n + 1) : b_full;
    const Tensor xg = x.to(gpu), bg = no_vec4 ? b_full.to(gpu).slice(1, 1, n + 1) : b_full.to(gpu);
    // The CPU results once per matrix, whatever the schedules compared.
    const Tensor want_v = on_cpu([&] { return spmv(host, x); });
    const Tensor want_m = spmv_only ? Tensor() : on_cpu([&] { return spmm(host, b); });
    for (const std::string& sc : schedules) {
      force_sparse_schedule(by_name.at(sc));
      Tensor y;
      bench::Timing t = bench::time_calls([&] { y = spmv(a, xg); });
      if (verify(y, want_v, "spmv")) report("spmv", name, host, 1, t, sc); else ++failures;
      if (spmv_only) continue;
      t = bench::time_calls([&] { y = spmm(a, bg); });
      if (verify(y, want_m, "spmm")) report("spmm", name, host, n, t, sc); else ++failures;
    }
    force_sparse_schedule(std::nullopt);
    a.unpin();
  }
  return failures ? 1 : 0;
}
