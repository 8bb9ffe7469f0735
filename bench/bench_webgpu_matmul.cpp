// Benchmark of the WebGPU matmul kernels: per shape, dtype, layout and kernel variant, checks a
// sample of output rows against a CPU double-precision sgemm, then times many dispatches between
// two synchronizes (device throughput, not host encode) and prints ms and TFLOP/s.
//
//   bench_webgpu_matmul [--sweep] [--dtype f32|f16|all] [--layout nn|nt|both]
//                       [--shapes MxNxK,...] [--tiles T1,T2,...] [--gemv G1,G2,...]
//                       [--gemv-vec V1,V2,...] [--sgmat S1,S2,...] [--ms 400] [--json FILE]
// --json appends one record per variant timed (bench/bench_json.hpp): case "<dtype> <nn|nt>
// <MxNxK>", "variant" the label (auto = the launcher's choice) and "kernel" what it ran.
// --sweep runs every variant of --tiles (WGT_MATMUL_TILE syntax BMxBNxBKxTMxTN, f16 also with
// f16 accumulation), --gemv (WGxKS, the scalar small-M kernel) and, for nt, --gemv-vec (WGxKS,
// the 8-wide small-M kernel, with and without subgroup reductions, f16 also packed) besides
// the launcher's own choice ("auto"), plus "auto"
// with scalar global loads (WGT_MATMUL_VEC=off) and, for f16, the packed-u32 storage path
// (WGT_MATMUL_F16=packed: f32 math, no shader-f16) with the auto choice and every tile; for
// f16 also the subgroup-matrix kernel off and each --sgmat tile (BMxBNxBKxFMxFN).
// --sg-variants V1,... (WGT_MATMUL_SGMAT_VARIANT words: auto, staged, wide) and --ablate A1,...
// (WGT_MATMUL_SGMAT_ABLATE levels) add, for f16 (with or without --sweep), the auto tile and each
// --sgmat tile under each data path, and the auto tile under each ablation (under each
// --sg-variants path when given, else auto's; with --ablate-tiles also each --sgmat tile under
// each ablation and path). Ablated kernels compute wrong results by design:
// they are timed without the verification gate and labelled so.
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "bench_json.hpp"
#include "runtime/settings.hpp"
#include "webgpu/kernels/matmul.hpp"
#include "wgt/wgt.hpp"

using namespace wgt;

namespace {

struct Shape3 {
  int64_t m, n, k;
};

struct Options {
  bool sweep = false;
  std::vector<DType> dtypes{DType::F32, DType::F16};
  std::string layout = "auto";  // auto: nn, plus nt for small-M shapes
  std::vector<Shape3> shapes{{1024, 1024, 1024}, {2048, 2048, 2048}, {4096, 4096, 4096}, {1, 4096, 4096}, {512, 4096, 4096}};
  std::vector<std::string> tiles{"128x128x8x8x8",  "128x128x16x8x8", "64x64x8x4x4",   "64x64x16x4x4",
                                 "128x64x8x8x4",   "64x128x8x4x8",   "128x256x8x8x8",  "256x128x8x8x8",
                                 "128x128x8x8x4",  "64x64x32x4x4",   "128x64x16x8x4",  "128x256x16x8x8",
                                 "128x128x32x8x8", "64x128x16x4x8"};
  std::vector<std::string> gemv{"256x64", "128x32", "512x64", "256x32", "256x8", "256x16", "128x8", "512x16"};
  std::vector<std::string> gemv_vec{"256x32", "128x32", "512x32", "256x64", "256x16", "128x16", "64x32"};
  std::vector<std::string> sgmat{"128x128x32x4x2", "64x64x32x2x2", "128x64x32x4x2", "64x128x32x2x4",
                                 "128x128x32x2x4", "128x64x32x2x2", "128x128x16x4x2", "64x64x16x2x2"};
  std::vector<std::string> sg_variants, ablate;
  bool ablate_tiles = false;  // each ablation also on each --sgmat tile (the MMA ceiling by tile)
  double target_ms = 400;
};

std::vector<std::string> split(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  for (std::string item; std::getline(ss, item, ',');)
    if (!item.empty()) out.push_back(item);
  return out;
}

[[noreturn]] void usage(const std::string& why) {
  std::fprintf(stderr, "bench_webgpu_matmul: %s\nusage: bench_webgpu_matmul [--sweep] [--dtype f32|f16|all] "
               "[--layout nn|nt|both] [--shapes MxNxK,...] [--tiles BMxBNxBKxTMxTN,...] [--sgmat BMxBNxBKxFMxFN,...] [--sg-variants W,...] [--ablate N,...] [--ablate-tiles] [--gemv WGxKS,...] [--gemv-vec WGxKS,...] [--ms N]\n",
               why.c_str());
  std::exit(2);
}

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) usage(a + " needs a value");
      return argv[++i];
    };
    if (a == "--sweep") o.sweep = true;
    else if (a == "--dtype") {
      const std::string v = value();
      if (v == "all") o.dtypes = {DType::F32, DType::F16};
      else if (v == "f32" || v == "f16") o.dtypes = {dtype_from_name(v)};
      else usage("--dtype takes f32, f16 or all");
    } else if (a == "--layout") {
      o.layout = value();
      if (o.layout != "nn" && o.layout != "nt" && o.layout != "both") usage("--layout takes nn, nt or both");
    } else if (a == "--shapes") {
      o.shapes.clear();
      for (const std::string& s : split(value())) {
        Shape3 sh{};
        if (std::sscanf(s.c_str(), "%ldx%ldx%ld", &sh.m, &sh.n, &sh.k) != 3 || sh.m < 1 || sh.n < 1 || sh.k < 1)
          usage("bad shape '" + s + "' (want MxNxK)");
        o.shapes.push_back(sh);
      }
    } else if (a == "--tiles") o.tiles = split(value());
    else if (a == "--sgmat") o.sgmat = split(value());
    else if (a == "--sg-variants") o.sg_variants = split(value());
    else if (a == "--ablate") o.ablate = split(value());
    else if (a == "--ablate-tiles") o.ablate_tiles = true;
    else if (a == "--gemv") o.gemv = split(value());
    else if (a == "--gemv-vec") o.gemv_vec = split(value());
    else if (a == "--ms") o.target_ms = std::atof(value().c_str());
    else usage("unknown argument " + a);
  }
  return o;
}

// A variant = the environment the launcher reads (empty values = unset).
struct Variant {
  std::string label, tile, gemv, acc, vec = "", f16 = "", gemv_vec = "", sg = "", sgmat = "", sgvar = "", abl = "";
};

void apply(const Variant& v) {
  auto set = [](const char* name, const std::string& val) {
    if (val.empty()) unsetenv(name);
    else setenv(name, val.c_str(), 1);
  };
  set("WGT_MATMUL_TILE", v.tile);
  set("WGT_MATMUL_GEMV", v.gemv);
  set("WGT_MATMUL_ACC", v.acc);
  set("WGT_MATMUL_VEC", v.vec);
  set("WGT_MATMUL_F16", v.f16);
  set("WGT_MATMUL_GEMV_VEC", v.gemv_vec);
  set("WGT_MATMUL_SUBGROUPS", v.sg);
  set("WGT_MATMUL_SGMAT", v.sgmat);
  set("WGT_MATMUL_SGMAT_VARIANT", v.sgvar);
  set("WGT_MATMUL_SGMAT_ABLATE", v.abl);
  settings_reload();  // the library parses WGT_* once (runtime/settings.hpp)
}

struct Problem {
  Shape3 s;
  DType dt;
  bool tb;
  std::vector<float> a, b;  // values as stored (f16-rounded for f16)
  Tensor ga, gb, out;
};

Problem make_problem(const Shape3& s, DType dt, bool tb) {
  Problem p{s, dt, tb, {}, {}, {}, {}, {}};
  std::mt19937 rng(1234);
  std::uniform_real_distribution<float> dist(-1.f, 1.f);
  auto upload = [&](std::vector<float>& v, int64_t n, const Shape& shape) {
    v.resize(static_cast<size_t>(n));
    if (dt == DType::F32) {
      for (auto& x : v) x = dist(rng);
      return Tensor::from_host(v.data(), v.size() * 4, shape, dt, Device::webgpu());
    }
    std::vector<uint16_t> h(v.size());
    for (size_t i = 0; i < v.size(); ++i) {
      h[i] = f32_to_f16(dist(rng));
      v[i] = f16_to_f32(h[i]);
    }
    return Tensor::from_host(h.data(), h.size() * 2, shape, dt, Device::webgpu());
  };
  p.ga = upload(p.a, s.m * s.k, {s.m, s.k});
  p.gb = tb ? upload(p.b, s.n * s.k, {s.n, s.k}) : upload(p.b, s.k * s.n, {s.k, s.n});
  p.out = Tensor::empty({s.m, s.n}, dt, Device::webgpu());
  return p;
}

void run_once(DeviceBackend& gpu, Problem& p) {
  OpCall call{OpKind::MatMul, p.tb ? "matmul_t" : "matmul", {p.ga, p.gb}, {p.out}, {}, 0.0};
  call.attrs.transpose_b = p.tb;
  gpu.execute(call);
}

// Checks rows {0, M/2, M-1} against a double-precision CPU product; returns the worst
// |error| / sum|a*b| (the scale an f32/f16 accumulation error is proportional to).
double verify(Problem& p) {
  std::vector<float> got(static_cast<size_t>(p.s.m * p.s.n));
  if (p.dt == DType::F32) {
    got = p.out.to_vector<float>();
  } else {
    std::vector<f16_t> h = p.out.to_vector<f16_t>();
    for (size_t i = 0; i < h.size(); ++i) got[i] = f16_to_f32(h[i].bits);
  }
  double worst = 0;
  for (int64_t m : {int64_t{0}, p.s.m / 2, p.s.m - 1}) {
    for (int64_t n = 0; n < p.s.n; ++n) {
      double s = 0, sa = 0;
      for (int64_t k = 0; k < p.s.k; ++k) {
        const double prod = double(p.a[m * p.s.k + k]) * (p.tb ? p.b[n * p.s.k + k] : p.b[k * p.s.n + n]);
        s += prod;
        sa += std::fabs(prod);
      }
      const double g = got[m * p.s.n + n];
      if (!std::isfinite(g)) return INFINITY;
      worst = std::max(worst, std::fabs(g - s) / (sa + 1e-30));
    }
  }
  return worst;
}

}  // namespace

int main(int argc, char** argv) {
  if (!bench::json_from_args(argc, argv)) return 2;
  const Options opt = parse(argc, argv);
  std::string why;
  DeviceBackend* gpu = Runtime::get().webgpu_backend(0, &why);
  if (!gpu) {
    std::fprintf(stderr, "bench_webgpu_matmul: no WebGPU adapter: %s\n", why.c_str());
    return 1;
  }
  std::printf("# backend %s; timing = wall time of N dispatches between two synchronize() calls\n",
              gpu->name().c_str());
  std::printf("%-5s %-3s %-16s %-56s %10s %9s %8s %6s %10s\n", "dtype", "lay", "MxNxK", "variant", "ms", "TFLOP/s",
              "GB/s", "iters", "max_err");
  int failures = 0;
  for (DType dt : opt.dtypes) {
    for (const Shape3& s : opt.shapes) {
      std::vector<bool> layouts;
      if (opt.layout == "nn" || opt.layout == "both" || opt.layout == "auto") layouts.push_back(false);
      if (opt.layout == "nt" || opt.layout == "both" || (opt.layout == "auto" && s.m <= 4)) layouts.push_back(true);
      for (bool tb : layouts) {
        Problem p;
        try {
          p = make_problem(s, dt, tb);
        } catch (const Error& e) {
          std::printf("%-5s %-3s %ldx%ldx%ld: cannot allocate: %s\n", dtype_name(dt), tb ? "nt" : "nn", s.m, s.n, s.k, e.what());
          continue;
        }
        std::vector<Variant> variants{{"auto", "", "", ""}};
        if (opt.sweep) {
          if (s.m <= 4)
            for (const std::string& g : opt.gemv) variants.push_back({"gemv=" + g, "", g, "", "", "", "off"});
          if (s.m <= 4 && tb)
            for (const std::string& g : opt.gemv_vec)
              for (const char* sg : {"on", "off"}) {
                variants.push_back({"gemv_vec=" + g + " sg=" + sg, "", "", "", "", "", g, sg});
                if (dt == DType::F16)
                  variants.push_back({"gemv_vec=" + g + " sg=" + sg + " packed", "", "", "", "", "packed", g, sg});
              }
          variants.push_back({"auto scalar-loads", "", "", "", "off"});
          if (dt == DType::F16) variants.push_back({"auto packed", "", "", "", "", "packed"});
          if (dt == DType::F16) {
            variants.push_back({"sgmat=off", "", "", "", "", "", "", "", "off"});
            for (const std::string& t : opt.sgmat) variants.push_back({"sgmat=" + t, "", "", "", "", "", "", "", t});
          }
          for (const std::string& t : opt.tiles) {
            variants.push_back({"tile=" + t, t, s.m <= 4 ? "off" : "", ""});
            if (dt == DType::F16) {
              variants.push_back({"tile=" + t + " acc=f16", t, s.m <= 4 ? "off" : "", "f16"});
              variants.push_back({"tile=" + t + " packed", t, s.m <= 4 ? "off" : "", "", "", "packed"});
            }
          }
        }
        if (dt == DType::F16) {
          for (const std::string& w : opt.sg_variants) {
            variants.push_back({"sgvar=" + w, "", "", "", "", "", "", "", "", w});
            for (const std::string& t : opt.sgmat)
              if (!opt.sweep || w != "staged") variants.push_back({"sgvar=" + w + " sgmat=" + t, "", "", "", "", "", "", "", t, w});
          }
          for (const std::string& a : opt.ablate) {
            if (opt.sg_variants.empty())
              variants.push_back({"ablate=" + a + " (wrong results)", "", "", "", "", "", "", "", "", "", a});
            for (const std::string& w : opt.sg_variants) {
              variants.push_back({"ablate=" + a + " sgvar=" + w + " (wrong results)", "", "", "", "", "", "", "", "", w, a});
              if (opt.ablate_tiles)
                for (const std::string& t : opt.sgmat)
                  variants.push_back({"ablate=" + a + " sgvar=" + w + " sgmat=" + t + " (wrong results)", "", "", "", "", "",
                                      "", "", t, w, a});
            }
          }
        }
        const double flops = 2.0 * double(s.m) * double(s.n) * double(s.k);
        // Bytes each operand and the output occupy: the floor on traffic (decode-style shapes
        // are bound by reading B once).
        const double bytes = double(dtype_size(dt)) * double(s.m * s.k + s.k * s.n + s.m * s.n);
        for (const Variant& v : variants) {
          apply(v);
          char shape[64];
          std::snprintf(shape, sizeof shape, "%ldx%ldx%ld", s.m, s.n, s.k);
          std::string name = v.label;
          try {
            run_once(*gpu, p);  // warm-up: compiles the pipeline
            gpu->synchronize();
            name = v.label + " [" + webgpu::matmul_last_variant() + "]";
            const double err = verify(p);
            const double tol = v.acc == "f16" ? 1e-2 : (dt == DType::F32 ? 1e-5 : 1e-3);
            if (!(err <= tol) && v.abl.empty()) {
              std::printf("%-5s %-3s %-16s %-56s FAILED verification: max_err %.3g > %.1g\n", dtype_name(dt),
                          tb ? "nt" : "nn", shape, name.c_str(), err, tol);
              ++failures;
              continue;
            }
            // Calibrate the repeat count on a short run, then time the real one.
            auto t0 = std::chrono::steady_clock::now();
            for (int i = 0; i < 3; ++i) run_once(*gpu, p);
            gpu->synchronize();
            const double probe = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count() / 3;
            const int iters = static_cast<int>(std::min(2000.0, std::max(5.0, opt.target_ms / std::max(probe, 1e-3))));
            t0 = std::chrono::steady_clock::now();
            for (int i = 0; i < iters; ++i) run_once(*gpu, p);
            gpu->synchronize();
            const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count() / iters;
            std::printf("%-5s %-3s %-16s %-56s %10.4f %9.2f %8.1f %6d %10.2e\n", dtype_name(dt), tb ? "nt" : "nn", shape,
                        name.c_str(), ms, flops / (ms * 1e-3) / 1e12, bytes / (ms * 1e-3) / 1e9, iters, err);
            bench::emit(bench::Record("matmul", std::string(dtype_name(dt)) + (tb ? " nt " : " nn ") + shape, "rate",
                                      "TFLOP/s", flops / (ms * 1e-3) / 1e12)
                            .with("variant", v.label).with("kernel", webgpu::matmul_last_variant()).with("ms", ms)
                            .with("iters", iters).with("max_err", err));
          } catch (const Error& e) {
            std::printf("%-5s %-3s %-16s %-56s skipped: %s\n", dtype_name(dt), tb ? "nt" : "nn", shape, name.c_str(),
                        e.what());
          }
          std::fflush(stdout);
        }
        apply({"", "", "", ""});
      }
    }
  }
  if (failures) std::fprintf(stderr, "bench_webgpu_matmul: %d variant(s) failed verification\n", failures);
  return failures ? 1 : 0;
}
