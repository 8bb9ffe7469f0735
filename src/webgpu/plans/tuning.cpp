// Conversion of the WGT_MATMUL_* / WGT_QMATMUL_* / WGT_QMATVEC_* / WGT_REDUCE_* / WGT_ATTN_* / WGT_FFT_* settings into
// typed kernel tuning, cached per
// settings snapshot, and the C++ override.
#include "webgpu/plans/tuning.hpp"

#include <cstring>

#include "runtime/settings.hpp"

namespace wgt::webgpu {
namespace {

std::optional<KernelTuning> g_override;

MatmulTuning matmul_from(const Settings& s) {
  MatmulTuning t;
  if (const auto& tile = *s.matmul_tile) {
    const auto& f = tile->v;  // five numbers (settings.cpp)
    t.tile = {f[0], f[1], f[2], f[3], f[4]};
  }
  if (const auto& g = *s.matmul_sgmat) {
    if (g->off) t.sgmat_off = true;
    else t.sgmat = {g->v[0], g->v[1], g->v[2], g->v[3], g->v[4]};
  }
  if (const auto& g = *s.matmul_gemv) {
    if (g->off) t.gemv_off = true;
    else t.gemv = {g->v[0], g->v[1]};
  }
  if (const auto& g = *s.matmul_gemv_vec) {
    if (g->off) t.gemv_vec_off = true;
    else t.gemv_vec = {g->v[0], g->v[1], g->v.size() == 3 ? g->v[2] : 1};
  }
  // The choices' order (settings.cpp) is the enum's.
  t.sgmat_variant = static_cast<SgVariant>(*s.matmul_sgmat_variant);
  t.sgmat_ablate = static_cast<uint8_t>(*s.matmul_sgmat_ablate);
  t.subgroups = *s.matmul_subgroups;
  t.vec = *s.matmul_vec;
  t.f16_acc = *s.matmul_f16_acc;
  switch (*s.matmul_f16) {
    case Settings::F16Store::Auto: t.f16 = F16Store::Auto; break;
    case Settings::F16Store::Native: t.f16 = F16Store::Native; break;
    case Settings::F16Store::Packed: t.f16 = F16Store::Packed; break;
  }
  return t;
}

QMatvecTuning qmatvec_from(const Settings& s) {
  QMatvecTuning t;
  if (const char* k = *s.qmatvec_kernel) {  // one of the table's words (settings.cpp)
    if (std::strcmp(k, "stream") == 0) t.kernel = QMatvecKernel::Stream;
    else if (std::strcmp(k, "i8") == 0) t.kernel = QMatvecKernel::I8;
    else t.kernel = QMatvecKernel::I8x2;
  }
  t.subgroups = *s.qmatvec_subgroups;
  t.packed_dot = !*s.webgpu_disable_packed_dot;
  if (const auto& g = *s.qmatmul_sgmat) {
    if (g->off) t.prefill_sgmat = false;
    else t.prefill_tile = {g->v[0], g->v[1], g->v[2], g->v[3], g->v[4]};
  }
  t.rows = *s.qmatvec_rows;
  t.unroll = *s.qmatvec_unroll;
  t.warps = *s.qmatvec_warps;
  t.ksplit = *s.qmatvec_ksplit;
  t.wave = *s.qmatvec_wave;
  return t;
}

ReduceTuning reduce_from(const Settings& s) { return {*s.reduce_subgroups}; }

AttentionTuning attention_from(const Settings& s) {
  AttentionTuning t;
  t.prefill_scalar = *s.attn_prefill_scalar;
  if (const auto& g = *s.attn_prefill_sg) t.prefill_sg = {g->v[0], g->v[1], g->v.size() > 2 ? g->v[2] : 0u};
  t.decode_split = *s.attn_decode_split;
  t.decode_direct = *s.attn_decode_direct;
  t.warps = *s.attn_decode_warps;
  t.lanes = *s.attn_decode_lanes;
  t.unroll = *s.attn_decode_unroll;
  t.chunk = *s.attn_decode_chunk;
  return t;
}

FftTuning fft_from(const Settings& s) {
  FftTuning t;
  switch (*s.fft_kernel) {
    case Settings::FftKernel::Auto: t.kernel = FftKernel::Auto; break;
    case Settings::FftKernel::Local: t.kernel = FftKernel::Local; break;
    case Settings::FftKernel::Stockham: t.kernel = FftKernel::Stockham; break;
  }
  t.row = *s.fft_row;
  t.radix = *s.fft_radix;
  t.split_exchange = *s.fft_exchange == Settings::FftExchange::Split;
  return t;
}

// Converted once per settings snapshot (snapshots are never freed, so the address identifies
// one); thread_local, so no lock on the launch path.
template <class T, T (*Convert)(const Settings&)>
const T& cached() {
  thread_local const Settings* from = nullptr;
  thread_local T value;
  const Settings& s = settings();
  if (&s != from) {
    value = Convert(s);  // throws a bad variable's error, leaving the cache as it was
    from = &s;
  }
  return value;
}

}  // namespace

const MatmulTuning& matmul_tuning() {
  if (g_override) return g_override->matmul;
  return cached<MatmulTuning, matmul_from>();
}

const QMatvecTuning& qmatvec_tuning() {
  if (g_override) return g_override->qmatvec;
  return cached<QMatvecTuning, qmatvec_from>();
}

const ReduceTuning& reduce_tuning() {
  if (g_override) return g_override->reduce;
  return cached<ReduceTuning, reduce_from>();
}

const AttentionTuning& attention_tuning() {
  if (g_override) return g_override->attention;
  return cached<AttentionTuning, attention_from>();
}

const FftTuning& fft_tuning() {
  if (g_override) return g_override->fft;
  return cached<FftTuning, fft_from>();
}

KernelTuning kernel_tuning_from_settings() {
  const Settings& s = settings();
  return {matmul_from(s), qmatvec_from(s), reduce_from(s), attention_from(s), fft_from(s)};
}

void set_kernel_tuning_override(const std::optional<KernelTuning>& t) { g_override = t; }

}  // namespace wgt::webgpu
