// wgt: command-line front end of wgtensor: the dispatcher and the info, demo and caps commands
// (the model commands live in cmd_*.cpp).
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "args.hpp"
#include "commands.hpp"
#include "model_cli.hpp"
#include "wgt/wgt.hpp"
#include "wgt/webgpu_info.hpp"

using namespace wgt;
using wgt::cli::human_bytes;

namespace {

void usage(FILE* out) {
  std::fprintf(out,
      "usage: wgt <command> [options]     (wgt <command> --help for a command's options)\n"
      "  run      generate text with a GGUF model (without -m: the built-in default model)\n"
      "  logits   write a model's logits for given tokens as .npy\n"
      "  bench    prompt-processing and generation speed (a GGUF file or a synthetic model)\n"
      "  info     version, backends, WebGPU adapter (limits, features) or why it is unavailable\n"
      "  demo     run a small program on every available backend and compare with the reference\n"
      "  caps     capability table: which ops and dtypes each backend runs, and why not\n"
      "  --version, --help\n"
      "environment: WGT_POLICY=auto|gpu-strict|cpu-only  WGT_CPU_MODE=fast|reference  WGT_TRACE=1\n"
      "             WGT_DAWN_PATH=<libwebgpu_wrapper.so>  WGT_WEBGPU_ADAPTER=<index>  (see README)\n");
}

int cmd_info() {
  std::printf("wgtensor %s\n", version());
  const Policy& p = Runtime::get().policy();
  std::printf("policy: mode=%s cpu_mode=%s fallback=%s min_gpu_work=%.0f\n",
              p.mode == PolicyMode::Auto ? "auto" : p.mode == PolicyMode::GpuStrict ? "gpu-strict" : "cpu-only",
              p.cpu_mode == CpuMode::Fast ? "fast" : "reference", p.allow_fallback ? "on" : "off", p.min_gpu_work);
  std::printf("backends: cpu-reference, cpu-fast");
  std::string why;
  auto adapters = webgpu_adapters(&why);
  for (auto& a : adapters) std::printf(", webgpu:%d", a.index);
  std::printf("\n");
  // The Dawn engine (WGT_DAWN): which library, its version and ABI, and the runtime it runs under.
  const WebGPUEngineInfo eng = webgpu_engine_info();
  if (!eng.engine.empty()) {
    std::printf("dawn: engine %s (WGT_DAWN=%s), version %s, ABI %s\n", eng.engine.c_str(), eng.request.c_str(),
                eng.version.empty() ? "unknown" : eng.version.c_str(), eng.abi.empty() ? "not loaded" : eng.abi.c_str());
    std::printf("  library: %s\n", eng.library.c_str());
    if (!eng.private_runtime.empty()) std::printf("  private runtime: %s\n", eng.private_runtime.c_str());
  } else {
    std::printf("dawn: %s\n", eng.error.c_str());
  }
  if (adapters.empty()) {
    std::printf("webgpu: unavailable: %s\n", why.c_str());
    return 0;
  }
  for (auto& a : adapters) {
    std::printf("webgpu:%d: %s\n", a.index, a.name.c_str());
    std::printf("  vendor=%s architecture=%s backend=%s type=%s\n", a.vendor.c_str(), a.architecture.c_str(),
                a.backend.c_str(), a.adapter_type.c_str());
    if (!a.device_description.empty()) std::printf("  driver: %s\n", a.device_description.c_str());
    MemoryStats m = Runtime::get().memory_stats(a.index);
    std::printf("  memory: budget %s, allocated %s (tensors %s, pinned %s, pooled %s)\n", human_bytes(m.budget).c_str(),
                human_bytes(m.allocated).c_str(), human_bytes(m.resident).c_str(), human_bytes(m.pinned).c_str(),
                human_bytes(m.pooled).c_str());
    for (size_t h = 0; h < a.memory_heaps.size(); ++h)
      std::printf("  heap %zu: %s (%llu bytes) %s\n", h, human_bytes(a.memory_heaps[h].size).c_str(),
                  static_cast<unsigned long long>(a.memory_heaps[h].size), a.memory_heaps[h].property_names.c_str());
    std::printf("  memory_heap_bytes: %llu (%s)%s\n", static_cast<unsigned long long>(a.memory_heap_bytes),
                a.memory_heap_basis.c_str(),
                Runtime::get().policy().memory_budget ? "; budget set explicitly (WGT_MEMORY_BUDGET)"
                : a.memory_heap_bytes                 ? "; default budget = 90% of it"
                                                      : "; default budget = 4 GiB");
    std::printf("  features:");
    for (auto& f : a.features) std::printf(" %s", f.c_str());
    std::printf("\n");
    if (!a.subgroup_matrix_configs.empty()) {
      std::printf("  subgroup-matrix configs (component->result MxNxK):");
      for (size_t c = 0; c < a.subgroup_matrix_configs.size(); ++c)
        std::printf("%s %s", c ? "," : "", a.subgroup_matrix_configs[c].c_str());
      std::printf("\n");
    }
    if (!a.adapter_toggles.empty()) {
      std::printf("  instance/adapter toggles:");
      for (auto& t : a.adapter_toggles) std::printf(" +%s", t.c_str());
      std::printf("\n");
    }
    std::printf("  limits:\n");
    for (auto& [k, v] : a.limits) std::printf("    %-44s %llu\n", k.c_str(), static_cast<unsigned long long>(v));
    if (!a.toggles.empty()) {
      std::printf("  toggles:");
      bool robustness_off = false;
      for (auto& t : a.toggles) {
        std::printf(" %s", t.c_str());
        robustness_off |= t == "+disable_robustness";
      }
      std::printf("\n");
      if (robustness_off)
        std::printf("  robustness off: an out-of-bounds access in a kernel is undefined (Dawn does not clamp it); the "
                    "library bounds-checks indices itself; WGT_WEBGPU_VALIDATE=1 turns validation and robustness back "
                    "on (docs/webgpu.md)\n");
    }
  }
  return 0;
}

double max_abs_diff(const Tensor& a, const Tensor& b) {
  auto x = cast(a, DType::F32).cpu().to_vector<float>();
  auto y = cast(b, DType::F32).cpu().to_vector<float>();
  double m = 0;
  for (size_t i = 0; i < x.size(); ++i) m = std::max(m, static_cast<double>(std::fabs(x[i] - y[i])));
  return m;
}

void print_stats() {
  const RuntimeStats& st = Runtime::get().stats();
  std::printf("\nper-op counters (calls / fallbacks / bytes up / bytes down / evictions / host ms):\n");
  for (auto& [op, per_backend] : st.per_op)
    for (auto& [backend, c] : per_backend)
      std::printf("  %-20s %-14s %5llu %3llu %10llu %10llu %3llu %8.3f\n", op.c_str(), backend.c_str(),
                  (unsigned long long)c.calls, (unsigned long long)c.fallbacks, (unsigned long long)c.bytes_uploaded,
                  (unsigned long long)c.bytes_downloaded, (unsigned long long)c.evictions, c.seconds * 1e3);
  std::printf("totals: uploaded %s, downloaded %s, evictions %llu, fallbacks %llu\n", human_bytes(st.bytes_uploaded).c_str(),
              human_bytes(st.bytes_downloaded).c_str(), (unsigned long long)st.evictions, (unsigned long long)st.fallbacks);
}

struct DemoStep {
  const char* name;
  std::function<Tensor(const std::vector<Tensor>&)> fn;
};

// A small transformer-flavoured program: y = softmax(rms_norm(x) @ W^T + b) etc.
int cmd_demo() {
  std::printf("wgtensor %s demo: the same program on every available backend, compared with cpu-reference\n\n",
              version());
  Tensor x = rand_normal({33, 64}, 1);
  Tensor w = rand_normal({48, 64}, 2, 0.0, 0.125);
  Tensor b = rand_uniform({48}, 3, -0.5, 0.5);
  Tensor g = rand_uniform({64}, 4, 0.5, 1.5);
  std::vector<DemoStep> steps = {
      {"rms_norm", [](const std::vector<Tensor>& t) { return rms_norm(t[0], t[3], 1e-6); }},
      {"matmul_t", [](const std::vector<Tensor>& t) { return matmul_t(rms_norm(t[0], t[3], 1e-6), t[1]); }},
      {"add", [](const std::vector<Tensor>& t) { return add(matmul_t(t[0], t[1]), t[2]); }},
      {"gelu", [](const std::vector<Tensor>& t) { return gelu(t[0]); }},
      {"softmax", [](const std::vector<Tensor>& t) { return softmax(matmul_t(t[0], t[1]), -1); }},
      {"sum", [](const std::vector<Tensor>& t) { return sum(t[0], {0}); }},
      {"transpose+contiguous", [](const std::vector<Tensor>& t) { return t[0].t().contiguous(); }},
  };
  Runtime& rt = Runtime::get();
  Policy saved = rt.policy();
  struct Target { std::string label; Policy policy; Device device; };
  std::vector<Target> targets;
  Policy ref = saved; ref.mode = PolicyMode::CpuOnly; ref.cpu_mode = CpuMode::Reference;
  Policy fast = saved; fast.mode = PolicyMode::CpuOnly; fast.cpu_mode = CpuMode::Fast;
  targets.push_back({"cpu-reference", ref, Device::cpu()});
  targets.push_back({"cpu-fast", fast, Device::cpu()});
  std::string why;
  if (webgpu_available(&why)) {
    Policy gpu = saved; gpu.mode = PolicyMode::GpuStrict;
    targets.push_back({"webgpu:0", gpu, Device::webgpu(0)});
  } else {
    std::printf("(webgpu unavailable: %s)\n\n", why.c_str());
  }
  std::vector<Tensor> reference;
  int failures = 0;
  std::printf("%-22s %-14s %-14s %s\n", "op", "target", "ran on", "max |diff| vs reference");
  for (auto& tg : targets) {
    rt.set_policy(tg.policy);
    std::vector<Tensor> in = {x.to(tg.device), w.to(tg.device), b.to(tg.device), g.to(tg.device)};
    for (size_t i = 0; i < steps.size(); ++i) {
      Tensor y = steps[i].fn(in);
      std::string ran = rt.last_decision().backend;
      Tensor yc = y.cpu();
      if (tg.label == "cpu-reference") reference.push_back(yc);
      double d = max_abs_diff(yc, reference[i]);
      bool ok = d <= 1e-3;
      failures += !ok;
      std::printf("%-22s %-14s %-14s %.3g%s\n", steps[i].name, tg.label.c_str(), ran.c_str(), d, ok ? "" : "  MISMATCH");
    }
  }
  rt.set_policy(saved);
  print_stats();
  std::printf("\n%s\n", failures ? "demo: MISMATCHES FOUND" : "demo: all backends agree with the reference");
  return failures ? 1 : 0;
}

// ---- capability table ----
Tensor meta_tensor(const Shape& shape, DType dt, Device d) {
  int64_t n = validate_shape(shape, "caps");
  return Tensor(Storage::meta(static_cast<size_t>(n) * dtype_size(dt), d), shape, contiguous_strides(shape), 0, dt);
}

struct CapCase {
  const char* label;
  OpKind kind;
  std::function<void(OpAttrs&)> attrs;
  std::vector<Shape> inputs;  // of the probed dtype, except where `fixed` says otherwise
  std::optional<Shape> out;   // none: the op writes in place (kv_append)
  std::optional<DType> out_dtype = {};      // the probed dtype when unset
  std::vector<std::pair<size_t, DType>> fixed = {};  // (input index, dtype) of index / packed operands
};

int cmd_caps() {
  std::string why;
  DeviceBackend* gpu = Runtime::get().webgpu_backend(0, &why);
  Backend& cpu = Runtime::get().cpu_backend(CpuMode::Reference);
  const std::vector<DType> dtypes = {DType::F32, DType::F16, DType::BF16, DType::I32, DType::F64, DType::I64};
  // Quantized cases: Q4_0 rows of 64 values (packed bytes are u8 operands).
  const QType qt = QType::Q4_0;
  const int64_t qrow = static_cast<int64_t>(qtype_row_bytes(qt, 64));
  const auto q4 = [qt](OpAttrs& a) { a.qtype = static_cast<uint8_t>(qt); };
  // One case at least per op kind (checked below against the enumeration), with the call
  // contract of its front-end (src/ops, src/nn/kv_cache.cpp, src/quant/qtensor.cpp).
  const std::vector<CapCase> cases = {
      {"exp", OpKind::Unary, [](OpAttrs& a) { a.unary = UnaryOp::Exp; }, {{64, 64}}, Shape{64, 64}},
      {"add", OpKind::Binary, [](OpAttrs& a) { a.binary = BinaryOp::Add; }, {{64, 64}, {64, 64}}, Shape{64, 64}},
      {"lt", OpKind::Binary, [](OpAttrs& a) { a.binary = BinaryOp::Lt; }, {{64, 64}, {64, 64}}, Shape{64, 64}, DType::Bool},
      {"where", OpKind::Where, [](OpAttrs&) {}, {{64, 64}, {64, 64}, {64, 64}}, Shape{64, 64}, {}, {{0, DType::Bool}}},
      {"cast", OpKind::Cast, [](OpAttrs&) {}, {{64, 64}}, Shape{64, 64}, DType::F32},
      {"full", OpKind::Fill, [](OpAttrs& a) { a.scalar0 = 1; }, {}, Shape{64, 64}},
      {"arange", OpKind::Arange, [](OpAttrs& a) { a.scalar1 = 1; }, {}, Shape{64}},
      {"rand_uniform", OpKind::RandUniform, [](OpAttrs& a) { a.scalar1 = 1; a.seed = 1; }, {}, Shape{64, 64}},
      {"rand_normal", OpKind::RandNormal, [](OpAttrs& a) { a.scalar1 = 1; a.seed = 1; }, {}, Shape{64, 64}},
      {"sum", OpKind::Reduce, [](OpAttrs& a) { a.reduce = ReduceOp::Sum; a.axes = {1}; }, {{64, 64}}, Shape{64}},
      {"argmax", OpKind::Reduce, [](OpAttrs& a) { a.reduce = ReduceOp::ArgMax; a.axes = {1}; }, {{64, 64}}, Shape{64},
       DType::I64},
      {"matmul", OpKind::MatMul, [](OpAttrs&) {}, {{64, 64}, {64, 64}}, Shape{64, 64}},
      {"matmul_t", OpKind::MatMul, [](OpAttrs& a) { a.transpose_b = true; }, {{64, 64}, {64, 64}}, Shape{64, 64}},
      {"softmax", OpKind::Softmax, [](OpAttrs& a) { a.axis = 1; }, {{64, 64}}, Shape{64, 64}},
      {"log_softmax", OpKind::LogSoftmax, [](OpAttrs& a) { a.axis = 1; }, {{64, 64}}, Shape{64, 64}},
      {"rms_norm", OpKind::RMSNorm, [](OpAttrs& a) { a.eps = 1e-6; }, {{64, 64}}, Shape{64, 64}},
      {"layer_norm", OpKind::LayerNorm, [](OpAttrs& a) { a.eps = 1e-5; }, {{64, 64}}, Shape{64, 64}},
      {"concat", OpKind::Concat, [](OpAttrs& a) { a.axis = 0; }, {{32, 64}, {32, 64}}, Shape{64, 64}},
      {"contiguous", OpKind::Copy, [](OpAttrs&) {}, {{64, 64}}, Shape{64, 64}},
      {"index_select", OpKind::IndexSelect, [](OpAttrs& a) { a.axis = 0; }, {{64, 64}, {16}}, Shape{16, 64}, {},
       {{1, DType::I32}}},
      {"gather", OpKind::Gather, [](OpAttrs& a) { a.axis = 1; }, {{64, 64}, {64, 8}}, Shape{64, 8}, {}, {{1, DType::I32}}},
      {"rope", OpKind::Rope, [](OpAttrs& a) { a.n_rot = 16; a.scalar0 = 10000; a.scalar1 = 1; }, {{16, 4, 16}},
       Shape{16, 4, 16}},
      {"attention", OpKind::Attention, [](OpAttrs& a) { a.scalar0 = 0.25; a.causal = true; },
       {{8, 4, 16}, {32, 2, 16}, {32, 2, 16}}, Shape{8, 4, 16}},
      {"silu_mul", OpKind::SiluMul, [](OpAttrs&) {}, {{64, 64}, {64, 64}}, Shape{64, 64}},
      {"kv_append", OpKind::KVAppend, [](OpAttrs&) {}, {{64, 2, 16}, {8, 2, 16}}, std::nullopt},
      {"qmatmul_t", OpKind::QMatMul, q4, {{4, 64}, {64 * qrow}}, Shape{4, 64}, DType::F32, {{1, DType::U8}}},
      {"dequantize", OpKind::QDequantize, q4, {{64, qrow}}, Shape{64, 64}, DType::F32, {{0, DType::U8}}},
      {"get_rows", OpKind::QGetRows, q4, {{64, qrow}, {8}}, Shape{8, 64}, DType::F32, {{0, DType::U8}, {1, DType::I32}}},
      // sparse: a 64 x 64 CSR matrix with 256 stored entries, i32 indices
      {"spmm", OpKind::SpMM, [](OpAttrs& a) { a.sp_cols = 64; }, {{65}, {256}, {256}, {64, 16}, {64}}, Shape{64, 16}, {},
       {{0, DType::I32}, {1, DType::I32}, {4, DType::I32}}},
      {"sddmm", OpKind::SDDMM, [](OpAttrs& a) { a.sp_cols = 64; }, {{65}, {256}, {64, 16}, {16, 64}}, Shape{256}, {},
       {{0, DType::I32}, {1, DType::I32}}},
      {"sp_add_dense", OpKind::SpAddDense, [](OpAttrs& a) { a.sp_cols = 64; }, {{65}, {256}, {256}, {64, 64}},
       Shape{64, 64}, {}, {{0, DType::I32}, {1, DType::I32}}},
      {"sp_row_sum", OpKind::SpRowReduce, [](OpAttrs& a) { a.reduce = ReduceOp::Sum; }, {{65}, {256}}, Shape{64}, {},
       {{0, DType::I32}}},
      {"sp_softmax", OpKind::SpSoftmax, [](OpAttrs&) {}, {{65}, {256}}, Shape{256}, {}, {{0, DType::I32}}},
      // tensor algebra: a real forward FFT of length 64 along the last axis
      {"rfft", OpKind::Fft,
       [](OpAttrs& a) { a.axis = 1; a.fft_kind = OpAttrs::FftKind::RealForward; a.fft_n = 64; a.scalar0 = 1; },
       {{8, 64}}, Shape{8, 33}, DType::C64},
  };
  // Whether the probed dtype reaches any operand: cases with only fixed dtypes are probed once.
  auto uses_dtype = [](const CapCase& c) { return !c.out_dtype || c.fixed.size() < c.inputs.size(); };
  auto probe = [&](const Backend& b, const CapCase& c, DType dt) {
    OpCall call{c.kind, c.label, {}, {}, {}};
    c.attrs(call.attrs);
    Device d = b.device();
    for (size_t i = 0; i < c.inputs.size(); ++i) {
      DType idt = dt;
      for (const auto& [k, fdt] : c.fixed)
        if (k == i) idt = fdt;
      call.inputs.push_back(meta_tensor(c.inputs[i], idt, d));
    }
    if (c.out) {
      DType odt = c.out_dtype.value_or(dt);
      call.out_specs.emplace_back(*c.out, odt);
      call.outputs.push_back(meta_tensor(*c.out, odt, d));
    }
    return b.supports(call);
  };
  std::printf("capabilities (yes / - = not supported, reasons below; n/a: the op's dtypes are fixed)\n%-13s", "op");
  for (DType dt : dtypes) std::printf(" %-15s", dtype_name(dt));
  std::printf("\n");
  std::vector<std::string> reasons;
  for (const auto& c : cases) {
    std::printf("%-13s", c.label);
    for (DType dt : dtypes) {
      if (!uses_dtype(c) && dt != dtypes[0]) {
        std::printf(" %-15s", "n/a");
        continue;
      }
      Support sc = probe(cpu, c, dt);
      std::string cell = std::string("cpu:") + (sc.ok ? "y" : "-");
      if (gpu) {
        Support sg = probe(*gpu, c, dt);
        cell += std::string(" gpu:") + (sg.ok ? "y" : "-");
        if (!sg.ok) reasons.push_back(std::string(c.label) + "/" + dtype_name(dt) + " on " + gpu->name() + ": " + sg.reason);
      }
      if (!sc.ok) reasons.push_back(std::string(c.label) + "/" + dtype_name(dt) + " on cpu: " + sc.reason);
      std::printf(" %-15s", cell.c_str());
    }
    std::printf("\n");
  }
  if (!gpu) std::printf("webgpu: unavailable: %s\n", why.c_str());
  std::printf("\nwhy not:\n");
  for (auto& r : reasons) std::printf("  %s\n", r.c_str());
  // Every op kind of the enumeration (op_kind_name answers "?" past the last one) has a case:
  // a new kind without one fails here (ctest cli_caps) instead of silently missing from the table.
  int kinds = 0, missing = 0;
  for (int k = 0; std::string(op_kind_name(static_cast<OpKind>(k))) != "?"; ++k, ++kinds) {
    bool found = false;
    for (const auto& c : cases) found |= c.kind == static_cast<OpKind>(k);
    if (!found) {
      std::printf("caps: no case probes op kind %s\n", op_kind_name(static_cast<OpKind>(k)));
      ++missing;
    }
  }
  if (missing) return 1;
  std::printf("\ncaps: every one of the %d op kinds probed\n", kinds);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    usage(stderr);
    return 2;
  }
  const std::string cmd = argv[1];
  const std::vector<std::string> rest(argv + 2, argv + argc);
  try {
    if (cmd == "run") return cli::cmd_run(rest);
    if (cmd == "logits") return cli::cmd_logits(rest);
    if (cmd == "bench") return cli::cmd_bench(rest);
    if (cmd == "help" || cmd == "--help" || cmd == "-h") {
      usage(stdout);
      return 0;
    }
    if (cmd == "--version" || cmd == "version") {
      std::printf("wgtensor %s\n", version());
      return 0;
    }
    // The commands without options: any further argument is a mistake, not something to ignore.
    if (cmd == "info" || cmd == "demo" || cmd == "caps") {
      if (!rest.empty()) throw cli::UsageError("takes no arguments, got '" + rest.front() + "'");
      return cmd == "info" ? cmd_info() : cmd == "demo" ? cmd_demo() : cmd_caps();
    }
    std::fprintf(stderr, "wgt: unknown command '%s'\n", cmd.c_str());
    usage(stderr);
    return 2;
  } catch (const cli::UsageError& e) {
    std::fprintf(stderr, "wgt %s: %s (see wgt %s --help)\n", cmd.c_str(), e.what(), cmd.c_str());
    return 2;
  } catch (const Error& e) {
    std::fprintf(stderr, "wgt %s: %s\n", cmd.c_str(), e.what());
    return 1;
  }
}
