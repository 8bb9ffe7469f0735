// Quantized formats (GGUF Q8_0/Q4_0/Q4_1/Q4_K/Q5_K/Q6_K): layout table, bit-exact dequantization
// of hand-built blocks, quantize round-trip error bounds, fast vs reference qmatmul, typed errors.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "core/ref_test_util.hpp"
#include "quant/blocks.hpp"
#include "quant/kernels.hpp"
#include "wgt/quant.hpp"

namespace wgt::test {
namespace {

using namespace wgt::quant;

constexpr QType kAll[] = {QType::Q8_0, QType::Q4_0, QType::Q4_1, QType::Q5_0, QType::Q5_1, QType::Q4_K, QType::Q5_K, QType::Q6_K};

template <typename B>
std::vector<float> deq(QType t, const B& b) {
  std::vector<float> y(qtype_info(t).block_elems);
  dequantize_row(t, reinterpret_cast<const uint8_t*>(&b), y.data(), static_cast<int64_t>(y.size()));
  return y;
}

// Gaussian weights with a few larger values, like real layers.
std::vector<float> weights(int64_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> g(0.f, 0.02f);
  std::vector<float> v(static_cast<size_t>(n));
  for (auto& x : v) x = g(rng);
  for (size_t i = 0; i < v.size(); i += 97) v[i] *= 4.f;
  return v;
}

// fp16 bit patterns used in the hand-built blocks (exact binary fractions).
constexpr uint16_t kH1 = 0x3C00, kHalf = 0x3800, kQuarter = 0x3400, kEighth = 0x3000, kMinus1 = 0xBC00;

TEST(QuantLayout, TableMatchesGgufFacts) {
  struct Want { QType t; const char* name; uint32_t id, elems, bytes; };
  const Want want[] = {{QType::Q8_0, "q8_0", 8, 32, 34},   {QType::Q4_0, "q4_0", 2, 32, 18},
                       {QType::Q4_1, "q4_1", 3, 32, 20},   {QType::Q4_K, "q4_k", 12, 256, 144},
                       {QType::Q5_K, "q5_k", 13, 256, 176}, {QType::Q6_K, "q6_k", 14, 256, 210},
                       {QType::Q5_0, "q5_0", 6, 32, 22},   {QType::Q5_1, "q5_1", 7, 32, 24}};
  for (const Want& w : want) {
    const QTypeInfo& i = qtype_info(w.t);
    EXPECT_STREQ(i.name, w.name);
    EXPECT_EQ(i.ggml_type_id, w.id) << w.name;
    EXPECT_EQ(i.block_elems, w.elems) << w.name;
    EXPECT_EQ(i.block_bytes, w.bytes) << w.name;
    EXPECT_EQ(qtype_from_name(w.name), w.t);
    EXPECT_EQ(qtype_from_ggml_id(w.id), w.t);
  }
  EXPECT_WGT_ERROR(qtype_from_name("q3_k"), InvalidArgument, "qtype_from_name");
  EXPECT_WGT_ERROR(qtype_from_ggml_id(0), Unsupported, "qtype_from_ggml_id");
  EXPECT_EQ(qtype_row_bytes(QType::Q4_K, 4096), 16u * 144u);
}

TEST(QuantLayout, WgslConstantsComeFromTheStructs) {
  const std::string k4 = wgsl_block_constants(QType::Q4_K);
  EXPECT_NE(k4.find("const QK: u32 = 256u;"), std::string::npos) << k4;
  EXPECT_NE(k4.find("const Q_BLOCK_BYTES: u32 = 144u;"), std::string::npos) << k4;
  EXPECT_NE(k4.find("const Q_OFF_QS: u32 = 16u;"), std::string::npos) << k4;
  const std::string k6 = wgsl_block_constants(QType::Q6_K);
  EXPECT_NE(k6.find("const Q_OFF_D: u32 = 208u;"), std::string::npos) << k6;
  EXPECT_NE(wgsl_block_constants(QType::Q8_0).find("const QK: u32 = 32u;"), std::string::npos);
  // Built once per format (launchers ask on every call): the same string each time, and a
  // value outside the table is still a typed error.
  EXPECT_EQ(&wgsl_block_constants(QType::Q4_0), &wgsl_block_constants(QType::Q4_0));
  EXPECT_NE(&wgsl_block_constants(QType::Q4_0), &wgsl_block_constants(QType::Q4_1));
  EXPECT_WGT_ERROR(wgsl_block_constants(static_cast<QType>(kNumQTypes)), InvalidArgument, "qtype_info");
}

TEST(QuantDequant, Q8_0HandBuilt) {
  BlockQ8_0 b{};
  b.d = kHalf;
  for (int i = 0; i < 32; ++i) b.qs[i] = static_cast<int8_t>(i * 8 - 128 + (i == 0));  // -127 .. 121
  const auto y = deq(QType::Q8_0, b);
  for (int i = 0; i < 32; ++i) EXPECT_EQ(y[i], 0.5f * static_cast<float>(i * 8 - 128 + (i == 0))) << i;
  EXPECT_EQ(y[0], -63.5f);
}

TEST(QuantDequant, Q4_0HandBuilt) {
  BlockQ4_0 b{};
  b.d = kQuarter;
  for (int i = 0; i < 16; ++i) b.qs[i] = static_cast<uint8_t>(i | ((15 - i) << 4));
  const auto y = deq(QType::Q4_0, b);
  for (int i = 0; i < 16; ++i) {
    EXPECT_EQ(y[i], 0.25f * (i - 8)) << i;             // low nibble: element i
    EXPECT_EQ(y[i + 16], 0.25f * (15 - i - 8)) << i;   // high nibble: element i + 16
  }
  EXPECT_EQ(y[0], -2.0f);
  EXPECT_EQ(y[16], 1.75f);
}

TEST(QuantDequant, Q4_1HandBuilt) {
  BlockQ4_1 b{};
  b.d = kHalf;
  b.m = kMinus1;
  for (int i = 0; i < 16; ++i) b.qs[i] = static_cast<uint8_t>((i % 16) | (((i * 3) % 16) << 4));
  const auto y = deq(QType::Q4_1, b);
  for (int i = 0; i < 16; ++i) {
    EXPECT_EQ(y[i], 0.5f * i - 1.f) << i;
    EXPECT_EQ(y[i + 16], 0.5f * ((i * 3) % 16) - 1.f) << i;
  }
}

// Q5_0 / Q5_1: code j = low nibble of qs[j] (j < 16) or high nibble of qs[j - 16], plus 16
// times bit j of qh read as a little-endian u32. The codes below set the fifth bit on a pattern
// that differs in each of the four qh bytes, so a byte-order or bit-index error shows.
int q5_code(int j) { return (j * 7 + 3) % 32; }
template <class B>
void hand_fill_q5(B& b) {
  uint8_t qh[4] = {0, 0, 0, 0};
  for (int j = 0; j < 16; ++j) b.qs[j] = static_cast<uint8_t>((q5_code(j) & 15) | ((q5_code(j + 16) & 15) << 4));
  for (int j = 0; j < 32; ++j) qh[j / 8] = static_cast<uint8_t>(qh[j / 8] | ((q5_code(j) >> 4) << (j % 8)));
  std::memcpy(b.qh, qh, 4);
}

TEST(QuantDequant, Q5_0HandBuilt) {
  BlockQ5_0 b{};
  b.d = kQuarter;
  hand_fill_q5(b);
  const auto y = deq(QType::Q5_0, b);
  for (int j = 0; j < 32; ++j) EXPECT_EQ(y[j], 0.25f * (q5_code(j) - 16)) << j;
  EXPECT_EQ(y[0], 0.25f * (3 - 16));  // code 3: fifth bit clear
  EXPECT_EQ(y[2], 0.25f * (17 - 16)); // code 17: fifth bit set (qh byte 0, bit 2)
}

TEST(QuantDequant, Q5_1HandBuilt) {
  BlockQ5_1 b{};
  b.d = kHalf;
  b.m = kMinus1;
  hand_fill_q5(b);
  const auto y = deq(QType::Q5_1, b);
  for (int j = 0; j < 32; ++j) EXPECT_EQ(y[j], 0.5f * q5_code(j) - 1.f) << j;
  EXPECT_EQ(y[31], 0.5f * 28 - 1.f);  // element 31: high nibble of qs[15], bit 31 of qh
}

// 6-bit scales/mins of the K-quants, packed by hand from the format description:
// bytes 0-3 = sc[0..3] | top2(sc[4..7]) << 6, bytes 4-7 = mn[0..3] | top2(mn[4..7]) << 6,
// bytes 8-11 = low4(sc[4..7]) | low4(mn[4..7]) << 4.
const uint8_t kSc[8] = {1, 2, 3, 4, 17, 33, 50, 63};
const uint8_t kMn[8] = {0, 5, 10, 63, 20, 40, 1, 63};
void hand_pack_scales(uint8_t s[12]) {
  for (int j = 0; j < 4; ++j) {
    s[j] = static_cast<uint8_t>(kSc[j] + 64 * (kSc[j + 4] / 16));
    s[j + 4] = static_cast<uint8_t>(kMn[j] + 64 * (kMn[j + 4] / 16));
    s[j + 8] = static_cast<uint8_t>(kSc[j + 4] % 16 + 16 * (kMn[j + 4] % 16));
  }
}

TEST(QuantDequant, KScalePackingRoundTrips) {
  uint8_t hand[12], ours[12];
  hand_pack_scales(hand);
  pack_scales_mins_k(kSc, kMn, ours);
  EXPECT_EQ(std::memcmp(hand, ours, 12), 0);
  for (int j = 0; j < 8; ++j) {
    uint8_t sc, mn;
    unpack_scale_min_k(hand, j, sc, mn);
    EXPECT_EQ(sc, kSc[j]) << j;
    EXPECT_EQ(mn, kMn[j]) << j;
  }
}

TEST(QuantDequant, Q4_KHandBuilt) {
  BlockQ4_K b{};
  b.d = kH1;
  b.dmin = kHalf;
  hand_pack_scales(b.scales);
  auto code = [](int e) { return (e * 5 + 3) % 16; };  // the 4-bit code of element e
  for (int c = 0; c < 4; ++c)
    for (int l = 0; l < 32; ++l) b.qs[32 * c + l] = static_cast<uint8_t>(code(64 * c + l) | (code(64 * c + 32 + l) << 4));
  const auto y = deq(QType::Q4_K, b);
  for (int e = 0; e < 256; ++e) {
    const int j = e / 32;  // sub-block
    EXPECT_EQ(y[e], 1.0f * kSc[j] * code(e) - 0.5f * kMn[j]) << e;
  }
  EXPECT_EQ(y[0], 3.0f);                      // sc 1 * code 3 - 0.5 * 0
  EXPECT_EQ(y[255], 63.f * code(255) - 31.5f);  // sub-block 7: sc 63, mn 63
}

TEST(QuantDequant, Q5_KHandBuilt) {
  BlockQ5_K b{};
  b.d = kQuarter;
  b.dmin = kEighth;
  hand_pack_scales(b.scales);
  auto code = [](int e) { return (e * 11 + 7) % 32; };  // 5-bit code of element e
  for (int c = 0; c < 4; ++c)
    for (int l = 0; l < 32; ++l) {
      const int lo = code(64 * c + l), hi = code(64 * c + 32 + l);
      b.qs[32 * c + l] = static_cast<uint8_t>((lo & 15) | ((hi & 15) << 4));
      b.qh[l] = static_cast<uint8_t>(b.qh[l] | ((lo >> 4) << (2 * c)) | ((hi >> 4) << (2 * c + 1)));
    }
  const auto y = deq(QType::Q5_K, b);
  for (int e = 0; e < 256; ++e) EXPECT_EQ(y[e], 0.25f * kSc[e / 32] * code(e) - 0.125f * kMn[e / 32]) << e;
}

TEST(QuantDequant, Q6_KHandBuilt) {
  BlockQ6_K b{};
  b.d = kEighth;
  for (int j = 0; j < 16; ++j) b.scales[j] = static_cast<int8_t>(j % 2 ? -(j * 8) : j * 8 + 1);
  auto code = [](int e) { return (e * 13 + 5) % 64; };  // 6-bit code of element e
  for (int h = 0; h < 2; ++h)
    for (int l = 0; l < 32; ++l) {
      const int e = 128 * h + l;
      const int u0 = code(e), u1 = code(e + 32), u2 = code(e + 64), u3 = code(e + 96);
      b.ql[64 * h + l] = static_cast<uint8_t>((u0 & 15) | ((u2 & 15) << 4));
      b.ql[64 * h + 32 + l] = static_cast<uint8_t>((u1 & 15) | ((u3 & 15) << 4));
      b.qh[32 * h + l] = static_cast<uint8_t>((u0 >> 4) | ((u1 >> 4) << 2) | ((u2 >> 4) << 4) | ((u3 >> 4) << 6));
    }
  const auto y = deq(QType::Q6_K, b);
  for (int e = 0; e < 256; ++e) EXPECT_EQ(y[e], 0.125f * b.scales[e / 16] * (code(e) - 32)) << e;
  EXPECT_EQ(y[0], 0.125f * 1 * (5 - 32));
}

// Relative RMSE bounds per format on Gaussian weights with outliers, measured on this data
// (see docs/quantization.md for the measured values); a regression in the search fails here.
struct RoundTripCase { QType t; double max_rel_rmse; };
class QuantRoundTrip : public ::testing::TestWithParam<RoundTripCase> {};

TEST_P(QuantRoundTrip, ErrorWithinNamedTolerance) {
  const auto [t, bound] = GetParam();
  const int64_t rows = 16, cols = 1024;
  const auto w = weights(rows * cols, 1234);
  const QTensor q = quantize(F(w, {rows, cols}), t);
  ASSERT_EQ(q.nbytes(), static_cast<size_t>(rows) * qtype_row_bytes(t, cols));
  const auto back = dequantize(q).to_vector<float>();
  double se = 0, ss = 0;
  for (size_t i = 0; i < w.size(); ++i) se += (back[i] - w[i]) * double(back[i] - w[i]), ss += double(w[i]) * w[i];
  const double rel = std::sqrt(se / ss);
  RecordProperty("rel_rmse", std::to_string(rel));
  std::printf("[ %s ] relative RMSE %.5f (bound %.4f)\n", qtype_name(t), rel, bound);
  EXPECT_LT(rel, bound) << qtype_name(t);
  EXPECT_GT(rel, 0.0) << "a lossy format reproduced the data exactly: the test data is degenerate";
}

INSTANTIATE_TEST_SUITE_P(AllFormats, QuantRoundTrip,
                         // measured 2026-12-02: q8_0 0.0065, q4_0 0.105, q4_1 0.084, q4_k 0.078, q5_k 0.039,
                         // q6_k 0.021; 2026-12-05: q5_0 0.051, q5_1 0.041; bounds leave ~10-15% headroom.
                         ::testing::Values(RoundTripCase{QType::Q8_0, 0.0075}, RoundTripCase{QType::Q4_0, 0.12},
                                           RoundTripCase{QType::Q4_1, 0.095}, RoundTripCase{QType::Q5_0, 0.058},
                                           RoundTripCase{QType::Q5_1, 0.046}, RoundTripCase{QType::Q4_K, 0.088},
                                           RoundTripCase{QType::Q5_K, 0.044}, RoundTripCase{QType::Q6_K, 0.024}),
                         [](const auto& info) { return std::string(qtype_name(info.param.t)); });

// More bits must mean less error, and the K-quant search must beat the closed-form legacy
// format of the same width (Q4_K vs Q4_0/Q4_1): catches a search that degenerates.
TEST(QuantRoundTrip, ErrorOrderingAcrossFormats) {
  const auto w = weights(8 * 1024, 77);
  auto rel = [&](QType t) {
    const auto back = dequantize(quantize(F(w, {8, 1024}), t)).to_vector<float>();
    double se = 0, ss = 0;
    for (size_t i = 0; i < w.size(); ++i) se += double(back[i] - w[i]) * (back[i] - w[i]), ss += double(w[i]) * w[i];
    return std::sqrt(se / ss);
  };
  const double q8 = rel(QType::Q8_0), q40 = rel(QType::Q4_0), q41 = rel(QType::Q4_1), q4k = rel(QType::Q4_K),
               q5k = rel(QType::Q5_K), q6k = rel(QType::Q6_K), q50 = rel(QType::Q5_0), q51 = rel(QType::Q5_1);
  EXPECT_LT(q50, 0.6 * q40);  // one more bit: about half the error
  EXPECT_LT(q51, 0.6 * q41);
  EXPECT_LT(q4k, q41);
  EXPECT_LT(q4k, q40);
  EXPECT_LT(q5k, 0.6 * q4k);
  EXPECT_LT(q6k, 0.6 * q5k);
  EXPECT_LT(q8, 0.5 * q6k);
}

TEST(QuantRoundTrip, ConstantAndZeroRowsAreExactOrClose) {
  for (QType t : kAll) {
    std::vector<float> v(512, 0.f);
    for (int i = 256; i < 512; ++i) v[i] = 0.375f;  // second row constant, exactly representable
    const auto back = dequantize(quantize(F(v, {2, 256}), t)).to_vector<float>();
    for (int i = 0; i < 256; ++i) EXPECT_EQ(back[i], 0.f) << qtype_name(t) << " zero row, " << i;
    for (int i = 256; i < 512; ++i) EXPECT_NEAR(back[i], 0.375f, 0.375f * 2e-3) << qtype_name(t) << " const row, " << i;
  }
}

// Fast per-block matmul vs dequantize + f64-accumulated matmul, odd M and N, K % 256 == 0.
TEST(QuantMatmul, FastMatchesReferenceOddShapes) {
  const int64_t K = 512;
  for (QType t : kAll)
    for (int64_t M : {1, 3, 17, 33})
      for (int64_t N : {1, 3, 17, 33}) {
        const QTensor w = quantize(F(weights(N * K, 7 + static_cast<uint32_t>(N)), {N, K}), t);
        const auto xv = weights(M * K, 99 + static_cast<uint32_t>(M));
        const auto got = qmatmul_t(F(xv, {M, K}), w).to_vector<float>();
        std::vector<float> want(static_cast<size_t>(M * N));
        qmatmul_t_reference(t, xv.data(), M, K, w.data(), w.row_bytes(), N, want.data());
        // scale of the outputs: |x| * |w| * sqrt(K)
        double scale = 0;
        for (float v : want) scale = std::max(scale, std::fabs(double(v)));
        for (size_t i = 0; i < want.size(); ++i)
          ASSERT_NEAR(got[i], want[i], 1e-5 * std::max(scale, 1e-6))
              << qtype_name(t) << " M=" << M << " N=" << N << " i=" << i;
      }
}

// Every bit of the codes reaches the fast kernel's block expansion (AVX2 where built) as the
// reference dequantization reads it: blocks of random bytes (fp16 scales replaced by random
// finite ones), and x = unit vectors, so each output is one weight, w[n, k], with no sum.
TEST(QuantMatmul, FastReadsEveryCodeBitOfRandomBlocks) {
  std::mt19937 rng(2024);
  std::uniform_int_distribution<int> byte(0, 255);
  std::uniform_real_distribution<float> scale(-2.f, 2.f);
  for (QType t : kAll) {
    const QTypeInfo& info = qtype_info(t);
    const int64_t N = 3, K = 2 * kQK256;
    const size_t row_bytes = static_cast<size_t>(K / info.block_elems) * info.block_bytes;
    std::vector<uint8_t> raw(N * row_bytes);
    for (auto& b : raw) b = static_cast<uint8_t>(byte(rng));
    // The fp16 fields: d (and m / dmin) first in every format but Q6_K, whose d is last.
    for (size_t off = 0; off < raw.size(); off += info.block_bytes) {
      const size_t d_at = t == QType::Q6_K ? info.block_bytes - 2 : 0;
      const int halves = (t == QType::Q4_1 || t == QType::Q5_1 || t == QType::Q4_K || t == QType::Q5_K) ? 2 : 1;
      for (int h = 0; h < halves; ++h) {
        const uint16_t v = f32_to_f16(scale(rng));
        std::memcpy(&raw[off + d_at + 2 * h], &v, 2);
      }
    }
    std::vector<float> want(static_cast<size_t>(N * K));
    for (int64_t n = 0; n < N; ++n) dequantize_row(t, raw.data() + n * row_bytes, want.data() + n * K, K);
    std::vector<float> x(static_cast<size_t>(K * K), 0.f), y(static_cast<size_t>(K * N));
    for (int64_t k = 0; k < K; ++k) x[static_cast<size_t>(k * K + k)] = 1.f;
    qmatmul_t_fast(t, x.data(), K, K, raw.data(), row_bytes, N, y.data());
    for (int64_t n = 0; n < N; ++n)
      for (int64_t k = 0; k < K; ++k) {
        const float w = want[static_cast<size_t>(n * K + k)], got = y[static_cast<size_t>(k * N + n)];
        // one rounding (FMA) against the reference's own: 1 ulp
        ASSERT_NEAR(got, w, std::fabs(w) * 2e-7f + 1e-30f) << qtype_name(t) << " row " << n << " element " << k;
      }
    // One row of x at a time (the decode path, values summed as they are widened), every
    // element of the first and the last block and every 5th between.
    std::vector<float> y1(static_cast<size_t>(N));
    for (int64_t k = 0; k < K; k += (k < 256 || k >= K - 256) ? 1 : 5) {
      qmatmul_t_fast(t, x.data() + k * K, 1, K, raw.data(), row_bytes, N, y1.data());
      for (int64_t n = 0; n < N; ++n) {
        const float w = want[static_cast<size_t>(n * K + k)];
        ASSERT_NEAR(y1[static_cast<size_t>(n)], w, std::fabs(w) * 2e-7f + 1e-30f)
            << qtype_name(t) << " M = 1, row " << n << " element " << k;
      }
    }
  }
}

// Prompt-sized products run as sgemm on panels of expanded W: the panel path itself with
// 16-row panels (37 rows: three panels, the last one short) for every format and a few rows,
// and qmatmul_t_fast at its row threshold (one panel), against the reference.
TEST(QuantMatmul, FastPanelsMatchReference) {
  const int64_t K = 512, N = 37;
  for (QType t : kAll)
    for (int64_t M : {int64_t{5}, kQGemmMinRows}) {
      const QTensor w = quantize(F(weights(N * K, 17), {N, K}), t);
      const auto xv = weights(M * K, 18 + static_cast<uint32_t>(M));
      std::vector<float> got(static_cast<size_t>(M * N)), want(got.size());
      if (M == kQGemmMinRows) qmatmul_t_fast(t, xv.data(), M, K, w.data(), w.row_bytes(), N, got.data());
      else qmatmul_t_fast_panels(t, xv.data(), M, K, w.data(), w.row_bytes(), N, got.data(), 16);
      qmatmul_t_reference(t, xv.data(), M, K, w.data(), w.row_bytes(), N, want.data());
      double scale = 0;
      for (float v : want) scale = std::max(scale, std::fabs(double(v)));
      for (size_t i = 0; i < want.size(); ++i)
        ASSERT_NEAR(got[i], want[i], 1e-5 * scale) << qtype_name(t) << " M=" << M << " i=" << i;
    }
}

TEST(QuantMatmul, MatchesDenseMatmulOfDequantizedWeightAndBatchesX) {
  const int64_t K = 256, N = 5;
  const QTensor w = quantize(F(weights(N * K, 3), {N, K}), QType::Q4_K);
  const Tensor x = F(weights(2 * 3 * K, 4), {2, 3, K});
  const Tensor y = qmatmul_t(x, w);
  ASSERT_EQ(y.shape(), (Shape{2, 3, N}));
  const auto dense = matmul_t(x, dequantize(w)).to_vector<float>();
  const auto got = y.to_vector<float>();
  for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], dense[i], 1e-6) << i;
}

TEST(QuantRows, GetRowsMatchesDequantize) {
  const QTensor table = quantize(F(weights(7 * 256, 5), {7, 256}), QType::Q6_K);
  const auto full = dequantize(table).to_vector<float>();
  const Tensor r = get_rows(table, I32({6, 0, 3, 3}, {2, 2}));
  ASSERT_EQ(r.shape(), (Shape{2, 2, 256}));
  const auto got = r.to_vector<float>();
  const int ids[] = {6, 0, 3, 3};
  for (int i = 0; i < 4; ++i)
    for (int c = 0; c < 256; ++c) ASSERT_EQ(got[i * 256 + c], full[ids[i] * 256 + c]) << i << "," << c;
  EXPECT_WGT_ERROR(get_rows(table, I64({7}, {1})), OutOfRange, "get_rows");
  EXPECT_WGT_ERROR(get_rows(table, I64({-1}, {1})), OutOfRange, "get_rows");
  EXPECT_WGT_ERROR(get_rows(table, F({0.f}, {1})), DTypeMismatch, "get_rows");
}

TEST(QuantErrors, ColsNotMultipleOfBlockIsShapeMismatch) {
  try {
    (void)quantize(F(std::vector<float>(2 * 100, 0.1f), {2, 100}), QType::Q4_K);
    ADD_FAILURE() << "no throw";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::ShapeMismatch);
    EXPECT_NE(e.message().find("q4_k"), std::string::npos) << e.message();
    EXPECT_NE(e.message().find("256"), std::string::npos) << e.message();
  }
  EXPECT_WGT_ERROR(quantize(F(std::vector<float>(40, 0.f), {1, 40}), QType::Q8_0), ShapeMismatch, "quantize");
  std::vector<uint8_t> bytes(34 * 2);
  EXPECT_WGT_ERROR(QTensor::from_bytes(QType::Q8_0, 1, 48, bytes.data(), bytes.size()), ShapeMismatch, "from_bytes");
}

TEST(QuantErrors, TruncatedOrOverlongBuffersAreFormatErrors) {
  std::vector<uint8_t> bytes(144 * 3);
  EXPECT_WGT_ERROR(QTensor::from_bytes(QType::Q4_K, 3, 256, bytes.data(), bytes.size() - 1), Format, "from_bytes");
  EXPECT_WGT_ERROR(QTensor::from_bytes(QType::Q4_K, 2, 256, bytes.data(), bytes.size()), Format, "from_bytes");
  EXPECT_WGT_ERROR(QTensor::from_tensor(QType::Q4_K, 4, 256, U8(bytes, {static_cast<int64_t>(bytes.size())})), Format,
                   "from_tensor");
  const QTensor ok = QTensor::from_bytes(QType::Q4_K, 3, 256, bytes.data(), bytes.size());
  EXPECT_EQ(ok.shape(), (Shape{3, 256}));
}

TEST(QuantErrors, BadInputsAreTyped) {
  EXPECT_WGT_ERROR(quantize(F(std::vector<float>(32, 0.f), {32}), QType::Q8_0), RankMismatch, "quantize");
  EXPECT_WGT_ERROR(quantize(I32(std::vector<int32_t>(32, 1), {1, 32}), QType::Q8_0), DTypeMismatch, "quantize");
  std::vector<float> v(32, 0.1f);
  v[5] = NAN;
  EXPECT_WGT_ERROR(quantize(F(v, {1, 32}), QType::Q8_0), InvalidArgument, "quantize");
  v[5] = 1e6f;  // beyond fp16 range of the block scales
  EXPECT_WGT_ERROR(quantize(F(v, {1, 32}), QType::Q4_1), InvalidArgument, "quantize");
  const QTensor w = quantize(F(std::vector<float>(64, 0.5f), {2, 32}), QType::Q8_0);
  EXPECT_WGT_ERROR(qmatmul_t(F(std::vector<float>(31, 1.f), {1, 31}), w), ShapeMismatch, "qmatmul_t");
  EXPECT_WGT_ERROR(qmatmul_t(I32(std::vector<int32_t>(32, 1), {1, 32}), w), DTypeMismatch, "qmatmul_t");
  EXPECT_WGT_ERROR(dequantize(QTensor()), InvalidArgument, "dequantize");
}

// Corrupted scales: documented behaviour is IEEE propagation (NaN/inf results), never a crash.
TEST(QuantCorrupt, NanAndInfScalesPropagate) {
  std::vector<uint8_t> raw(2 * sizeof(BlockQ8_0));
  auto* b = reinterpret_cast<BlockQ8_0*>(raw.data());
  for (int i = 0; i < 32; ++i) b[0].qs[i] = b[1].qs[i] = static_cast<int8_t>(i + 1);
  b[0].d = 0x7E00;  // NaN
  b[1].d = 0x7C00;  // +inf
  const QTensor w = QTensor::from_bytes(QType::Q8_0, 2, 32, raw.data(), raw.size());
  const auto d = dequantize(w).to_vector<float>();
  for (int i = 0; i < 32; ++i) EXPECT_TRUE(std::isnan(d[i])) << i;
  for (int i = 32; i < 64; ++i) EXPECT_TRUE(std::isinf(d[i]) && d[i] > 0) << i;
  const auto y = qmatmul_t(F(std::vector<float>(32, 1.f), {1, 32}), w).to_vector<float>();
  EXPECT_TRUE(std::isnan(y[0]));
  EXPECT_TRUE(std::isinf(y[1]) && y[1] > 0);
  // K-quant with a NaN super-block min: every element of that block is NaN.
  std::vector<uint8_t> rk(sizeof(BlockQ4_K), 0);
  reinterpret_cast<BlockQ4_K*>(rk.data())->dmin = 0xFE00;
  const auto dk = dequantize(QTensor::from_bytes(QType::Q4_K, 1, 256, rk.data(), rk.size())).to_vector<float>();
  for (float v : dk) EXPECT_TRUE(std::isnan(v));
}

}  // namespace
}  // namespace wgt::test
