// rope_: RoPE written into x's own storage (OpKind::Rope with no outputs, contract in
// src/ops/nn.cpp), declared to write x (OpCall::mutates) so that the runtime runs it where x
// lives and never on a moved copy: the CPU kernel for a host x; the WebGPU kernel
// (rope_inplace.wgsl, which writes through x's strides) for a device x when the backend
// supports the call; else a host round trip that reads the view's byte span, rotates it on
// the CPU and writes the span back.
#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "ops/op_common.hpp"
#include "ops/rope_call.hpp"
#include "wgt/nn.hpp"

namespace wgt {
using namespace ops_detail;

// Rotating a pair reads both elements and writes both, so two logical elements sharing one
// memory location would be rotated twice (or raced on the GPU). Sufficient test for "no
// overlap": ordered by stride, each dim's stride exceeds the span of all smaller-stride dims
// (exact for every view the Tensor API makes: permutes and slices pass, expand() fails).
bool elements_overlap(const Tensor& x) {
  std::vector<int> dims;
  for (int d = 0; d < x.dim(); ++d)
    if (x.shape()[d] > 1) dims.push_back(d);
  std::sort(dims.begin(), dims.end(),
            [&](int a, int b) { return std::llabs(x.strides()[a]) < std::llabs(x.strides()[b]); });
  int64_t span = 0;  // max element distance covered by the dims seen so far
  for (int d : dims) {
    const int64_t s = std::llabs(x.strides()[d]);
    if (s <= span) return true;
    span += s * (x.shape()[d] - 1);
  }
  return false;
}

namespace {

void record(const std::string& op, const std::string& backend, const std::string& reason, bool fallback,
            uint64_t up, uint64_t down) {
  auto lk = Runtime::get().lock();
  RuntimeStats& st = Runtime::get().mutable_stats();
  auto& c = st.per_op[op][backend];
  c.calls++;
  c.bytes_uploaded += up;
  c.bytes_downloaded += down;
  c.last_reason = reason;
  if (fallback) {
    c.fallbacks++;
    st.fallbacks++;
  }
}

// Host round trip for a device x: the bytes of x's element span [lo, hi] are read (from the
// device buffer, or from the host copy of an evicted storage), rotated by the CPU kernel on a
// host view with x's strides, and written back over the same span. Elements of the span
// outside the view are written back unchanged; nothing runs between the read and the write.
void rope_via_host(OpCall& call, const std::string& reason, bool fallback) {
  Runtime& rt = Runtime::get();
  Tensor& x = call.inputs[0];
  Storage& st = *x.storage();
  int64_t lo = x.offset(), hi = x.offset();
  for (int d = 0; d < x.dim(); ++d) {
    const int64_t span = x.strides()[d] * (x.shape()[d] - 1);
    (span < 0 ? lo : hi) += span;
  }
  const size_t es = dtype_size(x.dtype());
  const size_t begin = static_cast<size_t>(lo) * es, nbytes = static_cast<size_t>(hi - lo + 1) * es;
  auto host = std::make_shared<Storage>(nbytes, Device::cpu());
  const uint64_t down0 = rt.stats().bytes_downloaded;
  rt.read_bytes(st, begin, host->host_data(), nbytes);
  OpCall hcall = call;
  hcall.inputs[0] = Tensor(host, x.shape(), x.strides(), x.offset() - lo, x.dtype());
  for (size_t i = 1; i < hcall.inputs.size(); ++i) hcall.inputs[i] = hcall.inputs[i].to(Device::cpu());  // positions, factors
  rt.cpu_backend().execute(hcall);
  uint64_t up = 0;
  if (st.resident()) {
    // write() submits the recorded batch first, so the rotated bytes land after every
    // dispatch recorded before this call and before every later one.
    rt.device_backend(x.device(), call.name.c_str()).write(*st.buffer(), begin, host->host_data(), nbytes);
    rt.mutable_stats().bytes_uploaded += nbytes;
    up = nbytes;
  } else {
    std::memcpy(st.host_data() + begin, host->host_data(), nbytes);  // evicted: its host copy is the data
  }
  record(call.name, "host-write", reason, fallback, up, rt.stats().bytes_downloaded - down0);
}

void rope_inplace(Tensor& x, const Tensor* positions, int64_t offset, const RopeConfig& cfg) {
  const char* name = "rope_";
  OpCall call = rope_call(x, positions, offset, cfg, name);
  if (elements_overlap(x))
    throw_error(ErrorKind::InvalidArgument, name,
                "x " + x.str() + " has elements sharing memory (strides " + shape_str(x.strides()) +
                    ", e.g. an expand() view); rotate a contiguous() copy, or use rope()");
  if (positions && positions->storage() == x.storage())
    throw_error(ErrorKind::InvalidArgument, name, "positions share x's storage, which rope_ overwrites; pass a separate tensor");
  if (cfg.freq_factors.defined() && cfg.freq_factors.storage() == x.storage())
    throw_error(ErrorKind::InvalidArgument, name, "freq_factors share x's storage, which rope_ overwrites; pass a separate tensor");
  if (x.numel() == 0) return;
  Runtime& rt = Runtime::get();
  call.mutates = 1u;  // x: the runtime runs the call where x lives, on x itself
  if (x.device().is_cpu()) {
    rt.run(call, {}, x.device());  // the CPU kernel of the policy's CPU mode, recorded as every op
    return;
  }
  // A device x: the check, the op or the host round trip under one hold of the runtime lock,
  // so no other thread's op lands between the read and the write back.
  auto lk = rt.lock();
  DeviceBackend& gpu = rt.device_backend(x.device(), name);
  const Policy pol = rt.policy();
  if (pol.mode == PolicyMode::CpuOnly) return rope_via_host(call, "policy cpu-only", false);
  Support s = gpu.supports(call);
  if (s.ok) {
    // Every input is on this device and the backend supports the call, so the runtime runs it
    // there (re-uploading x first if it was evicted): the kernel writes into x's buffer.
    rt.run(call, {}, x.device());
    return;
  }
  if (pol.mode == PolicyMode::GpuStrict || !pol.allow_fallback)
    throw_error(ErrorKind::Unsupported, name,
                x.str() + " not supported on " + gpu.name() + ": " + s.reason +
                    "; use policy auto with fallback, or rope() (out of place)");
  rope_via_host(call, "fallback: " + s.reason, true);
}

}  // namespace

void rope_(Tensor& x, int64_t offset, const RopeConfig& cfg) { rope_inplace(x, nullptr, offset, cfg); }
void rope_(Tensor& x, const Tensor& positions, const RopeConfig& cfg) { rope_inplace(x, &positions, 0, cfg); }

}  // namespace wgt
