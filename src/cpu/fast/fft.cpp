// OpKind::Fft through FFTW3 (single precision, Debian libfftw3-dev): one guru plan per call
// geometry covers every line of the call, reading the input through its strides (the
// transformed axis and all batch axes) and writing the contiguous output, so no copy or
// transpose is made. Plans are made with FFTW_ESTIMATE (no trial runs, the arrays untouched)
// and cached by geometry; they are executed with FFTW's new-array functions, which are
// thread-safe, while the planner is not, so planning holds a mutex.
#include <fftw3.h>

#include <map>
#include <mutex>
#include <tuple>
#include <vector>

#include "cpu/fast/kernels.hpp"
#include "cpu/fast/parallel.hpp"

namespace wgt::cpu_fast {

namespace {

using Kind = OpAttrs::FftKind;

struct PlanKey {
  Kind kind;
  int64_t n, is, os;
  std::vector<int64_t> howmany;  // (size, in stride, out stride) per batch axis
  bool operator<(const PlanKey& o) const {
    return std::tie(kind, n, is, os, howmany) < std::tie(o.kind, o.n, o.is, o.os, o.howmany);
  }
};

std::mutex g_plan_mu;
std::map<PlanKey, fftwf_plan>& plans() {
  static auto* m = new std::map<PlanKey, fftwf_plan>();  // plans live as long as the process
  return *m;
}

fftwf_plan get_plan(const PlanKey& key, void* in, void* out) {
  std::lock_guard<std::mutex> lock(g_plan_mu);
  auto it = plans().find(key);
  if (it != plans().end()) return it->second;
  fftw_iodim64 dim{key.n, key.is, key.os};
  std::vector<fftw_iodim64> hm;
  for (size_t i = 0; i < key.howmany.size(); i += 3) hm.push_back({key.howmany[i], key.howmany[i + 1], key.howmany[i + 2]});
  // PRESERVE_INPUT: the input is the caller's tensor (c2r would otherwise use it as scratch).
  const unsigned flags = FFTW_ESTIMATE | FFTW_UNALIGNED | FFTW_PRESERVE_INPUT;
  const int hr = static_cast<int>(hm.size());
  fftwf_plan p = nullptr;
  switch (key.kind) {
    case Kind::Forward:
    case Kind::Inverse:
      p = fftwf_plan_guru64_dft(1, &dim, hr, hm.data(), static_cast<fftwf_complex*>(in), static_cast<fftwf_complex*>(out),
                                key.kind == Kind::Forward ? FFTW_FORWARD : FFTW_BACKWARD, flags);
      break;
    case Kind::RealForward:
      p = fftwf_plan_guru64_dft_r2c(1, &dim, hr, hm.data(), static_cast<float*>(in), static_cast<fftwf_complex*>(out), flags);
      break;
    case Kind::RealInverse:
      p = fftwf_plan_guru64_dft_c2r(1, &dim, hr, hm.data(), static_cast<fftwf_complex*>(in), static_cast<float*>(out), flags);
      break;
  }
  if (p) plans().emplace(key, p);
  return p;
}

}  // namespace

bool try_fft(OpCall& call) {
  const Tensor& x = call.inputs[0];
  Tensor& out = call.outputs[0];
  const Kind kind = call.attrs.fft_kind;
  const bool real_in = kind == Kind::RealForward, real_out = kind == Kind::RealInverse;
  if (x.dtype() != (real_in ? DType::F32 : DType::C64) || out.dtype() != (real_out ? DType::F32 : DType::C64)) return false;
  if (out.numel() == 0) return true;
  const int axis = static_cast<int>(call.attrs.axis);
  const Strides ost = contiguous_strides(out.shape());
  PlanKey key{kind, call.attrs.fft_n, x.strides()[axis], ost[axis], {}};
  for (int d = 0; d < x.dim(); ++d)
    if (d != axis && out.shape()[d] != 1) key.howmany.insert(key.howmany.end(), {out.shape()[d], x.strides()[d], ost[d]});
  uint8_t* in = x.storage()->host_data() + x.offset() * static_cast<int64_t>(dtype_size(x.dtype()));
  void* o = out.data_ptr();
  fftwf_plan p = get_plan(key, in, o);
  if (!p) return false;
  switch (kind) {
    case Kind::Forward:
    case Kind::Inverse:
      fftwf_execute_dft(p, reinterpret_cast<fftwf_complex*>(in), static_cast<fftwf_complex*>(o));
      break;
    case Kind::RealForward: fftwf_execute_dft_r2c(p, reinterpret_cast<float*>(in), static_cast<fftwf_complex*>(o)); break;
    case Kind::RealInverse: fftwf_execute_dft_c2r(p, reinterpret_cast<fftwf_complex*>(in), static_cast<float*>(o)); break;
  }
  const float scale = static_cast<float>(call.attrs.scalar0);
  if (scale != 1.0f) {
    float* f = static_cast<float*>(o);
    const int64_t count = out.numel() * (real_out ? 1 : 2);
    parallel_for(0, count, 1 << 16, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) f[i] *= scale;
    });
  }
  return true;
}

}  // namespace wgt::cpu_fast
