// Conformance harness implementation (see conformance.hpp).
#include "conformance.hpp"

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <limits>
#include <random>
#include <regex>

namespace wgt::conformance {

namespace {

constexpr int64_t kGuard = 7;          // odd, so sub-word outputs start mid-word
constexpr uint8_t kSentinel = 0xA5;

void put(uint8_t* data, DType t, int64_t i, double v) {
  switch (t) {
    case DType::F32: { float f = static_cast<float>(v); std::memcpy(data + 4 * i, &f, 4); break; }
    case DType::F64: std::memcpy(data + 8 * i, &v, 8); break;
    case DType::F16: { uint16_t h = f32_to_f16(static_cast<float>(v)); std::memcpy(data + 2 * i, &h, 2); break; }
    case DType::BF16: { uint16_t h = f32_to_bf16(static_cast<float>(v)); std::memcpy(data + 2 * i, &h, 2); break; }
    case DType::I32: { int32_t x = static_cast<int32_t>(v); std::memcpy(data + 4 * i, &x, 4); break; }
    case DType::I64: { int64_t x = static_cast<int64_t>(v); std::memcpy(data + 8 * i, &x, 8); break; }
    case DType::U8: data[i] = static_cast<uint8_t>(v); break;
    case DType::Bool: data[i] = v != 0.0; break;
    case DType::C64: { float f[2] = {static_cast<float>(v), 0.f}; std::memcpy(data + 8 * i, f, 8); break; }
  }
}

// Host tensor of `shape` with random values of the input's range (and specials).
Tensor random_host(const Shape& shape, const Input& in, std::mt19937& rng) {
  Tensor t = Tensor::empty(shape, in.dtype);
  auto* d = static_cast<uint8_t*>(t.data_ptr());
  std::uniform_real_distribution<double> u(in.lo, in.hi);
  const double inf = std::numeric_limits<double>::infinity();
  const double specials[] = {std::nan(""), inf, -inf, 0.0, -0.0, 3.0e4, -6.0e4};
  for (int64_t i = 0; i < t.numel(); ++i) {
    double v = u(rng);
    if (!is_floating(in.dtype)) v = std::round(v);
    if (in.dtype == DType::Bool) v = rng() & 1;
    if (in.specials && is_floating(in.dtype) && rng() % 5 == 0) v = specials[rng() % 7];
    if (!in.values.empty()) v = in.values[static_cast<size_t>(i) % in.values.size()];
    put(d, in.dtype, i, v);
  }
  return t;
}

// The base tensor and the view function that turns it into an input of `in.shape`.
struct Built {
  Tensor base;
  std::function<Tensor(const Tensor&)> view;
};
Built build(const Input& in, std::mt19937& rng) {
  Shape s = in.shape;
  const int r = static_cast<int>(s.size());
  switch (in.view) {
    case View::Transposed:
      if (r >= 2) {
        std::swap(s[r - 1], s[r - 2]);
        return {random_host(s, in, rng), [](const Tensor& t) { return t.transpose(-1, -2); }};
      }
      break;
    case View::Sliced:
      if (r >= 1) {
        const int64_t n = s[r - 1];
        s[r - 1] = 2 * n + 3;
        return {random_host(s, in, rng), [n, r](const Tensor& t) { return t.slice(r - 1, 3, 3 + 2 * n, 2); }};
      }
      break;
    case View::Expanded:
      if (r >= 1) {
        Shape full = s;
        s[0] = 1;
        return {random_host(s, in, rng), [full](const Tensor& t) { return t.expand(full); }};
      }
      break;
    case View::Contiguous: break;
  }
  return {random_host(s, in, rng), [](const Tensor& t) { return t; }};
}

std::string fmt(double v) {
  char b[64];
  std::snprintf(b, sizeof b, "%.9g", v);
  return b;
}

}  // namespace

double element(const uint8_t* data, DType t, int64_t i) {
  switch (t) {
    case DType::F32: { float f; std::memcpy(&f, data + 4 * i, 4); return f; }
    case DType::F64: { double f; std::memcpy(&f, data + 8 * i, 8); return f; }
    case DType::F16: { uint16_t h; std::memcpy(&h, data + 2 * i, 2); return f16_to_f32(h); }
    case DType::BF16: { uint16_t h; std::memcpy(&h, data + 2 * i, 2); return bf16_to_f32(h); }
    case DType::I32: { int32_t x; std::memcpy(&x, data + 4 * i, 4); return x; }
    case DType::I64: { int64_t x; std::memcpy(&x, data + 8 * i, 8); return static_cast<double>(x); }
    case DType::U8: return data[i];
    case DType::Bool: return data[i];
    case DType::C64: { float f; std::memcpy(&f, data + 8 * i, 4); return f; }
  }
  return 0;
}

DeviceBackend* gpu_backend(std::string* why) {
  DeviceBackend* b = Runtime::get().webgpu_backend(0, why);
  if (!b) return nullptr;
  return b;
}

bool selected(const std::string& name) {
  const char* f = std::getenv("WGT_TEST_OP");
  if (!f || !*f) return true;
  return std::regex_search(name, std::regex(f));
}

bool perf_mode() {
  const char* p = std::getenv("WGT_CONFORMANCE_PERF");
  return p && *p && std::strcmp(p, "0") != 0;
}

Result run(const Case& c, DeviceBackend& gpu) {
  Result res;
  std::seed_seq seq(c.name.begin(), c.name.end());
  std::mt19937 rng(seq);
  const Device dev = gpu.device();

  std::vector<Built> built;
  std::vector<Tensor> cpu_in, gpu_in;
  for (const Input& in : c.inputs) {
    built.push_back(build(in, rng));
    cpu_in.push_back(built.back().view(built.back().base));
    gpu_in.push_back(built.back().view(built.back().base.to(dev)));
  }

  // CPU reference.
  OpCall ref{c.kind, c.op_name, cpu_in, {Tensor::empty(c.out_shape, c.out_dtype)}, c.attrs};
  Backend& cpu = Runtime::get().cpu_backend(CpuMode::Reference);
  if (Support s = cpu.supports(ref); !s.ok) {
    res.message = "cpu-reference cannot run the case: " + s.reason;
    return res;
  }
  cpu.execute(ref);
  const Tensor& want = ref.outputs[0];

  // GPU: the output is a view into a sentinel-filled buffer with guard elements around it.
  const int64_t n = checked_numel(c.out_shape);
  const size_t es = dtype_size(c.out_dtype);
  const size_t total = static_cast<size_t>(n + 2 * kGuard) * es;
  std::vector<uint8_t> sentinel(total, kSentinel);
  Tensor big = Tensor::from_host(sentinel.data(), total, {n + 2 * kGuard}, c.out_dtype, dev);
  Tensor out = big.slice(0, kGuard, kGuard + n).view(c.out_shape);
  OpCall call{c.kind, c.op_name, gpu_in, {out}, c.attrs};
  call.out_specs = {{c.out_shape, c.out_dtype}};
  if (Support s = gpu.supports(call); !s.ok) {
    res.message = "unsupported on " + gpu.name() + ": " + s.reason;
    return res;
  }
  res.ran = true;
  gpu.synchronize();
  auto t0 = std::chrono::steady_clock::now();
  gpu.execute(call);
  gpu.synchronize();
  res.gpu_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  std::vector<uint8_t> got(total);
  Runtime::get().read_bytes(*big.storage(), 0, got.data(), total);

  for (size_t i = 0; i < kGuard * es; ++i)
    if (got[i] != kSentinel || got[total - 1 - i] != kSentinel) {
      res.message = "guard region overwritten (byte " + std::to_string(got[i] != kSentinel ? i : total - 1 - i) + ")";
      return res;
    }
  const uint8_t* g = got.data() + kGuard * es;
  const auto* w = static_cast<const uint8_t*>(want.data_ptr());
  double num = 0, den = 0;
  for (int64_t i = 0; i < n; ++i) {
    const double a = element(g, c.out_dtype, i), b = element(w, c.out_dtype, i);
    const std::string where = "element " + std::to_string(i) + ": got " + fmt(a) + ", want " + fmt(b);
    if (std::isnan(b) || std::isnan(a)) {
      if (std::isnan(a) != std::isnan(b)) { res.message = "NaN mismatch at " + where; return res; }
      continue;
    }
    if (std::isinf(b) || std::isinf(a)) {
      if (a != b) { res.message = "inf mismatch at " + where; return res; }
      continue;
    }
    const double e = std::fabs(a - b);
    res.max_err = std::max(res.max_err, e);
    num += e * e;
    den += b * b;
    if (e > c.tol.abs + c.tol.rel * std::fabs(b)) { res.message = "tolerance exceeded at " + where; return res; }
  }
  res.nmse = den > 0 ? num / den : num;
  if (res.nmse > c.tol.nmse) {
    res.message = "NMSE " + fmt(res.nmse) + " above " + fmt(c.tol.nmse);
    return res;
  }
  res.ok = true;
  return res;
}

}  // namespace wgt::conformance
