// The one place where GGUF/ggml block layouts are defined (written from the public GGUF
// format facts). Every kernel — CPU here, WGSL through wgsl_block_constants() — takes its
// sizes and field offsets from these structs, never from retyped magic numbers.
//
// All multi-byte fields are little-endian; fp16 fields are IEEE binary16 bit patterns.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>

#include "wgt/quant.hpp"

namespace wgt::quant {

constexpr uint32_t kQK32 = 32;    // elements per block of the "legacy" formats
constexpr uint32_t kQK256 = 256;  // elements per K-quant super-block
constexpr uint32_t kKScaleBytes = 12;  // Q4_K/Q5_K: 8 x (6-bit scale, 6-bit min) packed
constexpr uint32_t kKSub = 32;         // Q4_K/Q5_K sub-block elements (one scale/min each)
constexpr uint32_t kQ6KSub = 16;       // Q6_K sub-block elements (one int8 scale each)
constexpr uint32_t kQ4_0Zero = 8;      // Q4_0 codes are stored biased: value = d * (q - 8)
constexpr uint32_t kQ6KZero = 32;      // Q6_K: value = d * scale * (q - 32)
constexpr uint32_t kQ5_0Zero = 16;     // Q5_0: value = d * (q - 16)

// Q8_0: y = d * q, q int8.
struct BlockQ8_0 {
  uint16_t d;
  int8_t qs[kQK32];
};
// Q4_0: y = d * (q - 8), q in [0, 15]; element j in the low nibble of qs[j], element j+16
// in the high nibble.
struct BlockQ4_0 {
  uint16_t d;
  uint8_t qs[kQK32 / 2];
};
// Q4_1: y = d * q + m, q in [0, 15]; nibble order as Q4_0.
struct BlockQ4_1 {
  uint16_t d;
  uint16_t m;
  uint8_t qs[kQK32 / 2];
};
// Q5_0: y = d * (q - 16), q in [0, 31]: the low 4 bits as Q4_0's nibbles (element j in the
// low nibble of qs[j], element j+16 in the high nibble of qs[j]), the fifth bit of element j
// (0..31) is bit j of qh read as a little-endian u32. 22 bytes: qh is not word-aligned.
struct BlockQ5_0 {
  uint16_t d;
  uint8_t qh[4];
  uint8_t qs[kQK32 / 2];
};
// Q5_1: y = d * q + m, q in [0, 31]; bits as Q5_0.
struct BlockQ5_1 {
  uint16_t d;
  uint16_t m;
  uint8_t qh[4];
  uint8_t qs[kQK32 / 2];
};
// Q4_K: 8 sub-blocks of 32. y = d*sc[j]*q - dmin*mn[j], q in [0, 15], sc/mn 6-bit.
// Sub-block pair (2c, 2c+1) shares qs[32c .. 32c+31]: low nibbles = sub-block 2c,
// high nibbles = sub-block 2c+1. The 6-bit scale/min packing is in unpack_scale_min_k().
struct BlockQ4_K {
  uint16_t d;
  uint16_t dmin;
  uint8_t scales[kKScaleBytes];
  uint8_t qs[kQK256 / 2];
};
// Q5_K: as Q4_K plus a fifth bit per element: bit 2c of qh[l] for element 64c+l, bit 2c+1
// for element 64c+32+l. q in [0, 31].
struct BlockQ5_K {
  uint16_t d;
  uint16_t dmin;
  uint8_t scales[kKScaleBytes];
  uint8_t qh[kQK256 / 8];
  uint8_t qs[kQK256 / 2];
};
// Q6_K: 16 sub-blocks of 16. y = d * scales[j] * (q - 32), q in [0, 63], scales int8.
// Per half h (128 elements) and l in [0, 32): ql[64h+l] holds the low 4 bits of elements
// 128h+l (low nibble) and 128h+64+l (high nibble); ql[64h+32+l] those of 128h+32+l and
// 128h+96+l; qh[32h+l] holds the high 2 bits of 128h+l, +32, +64, +96 at bits 0, 2, 4, 6.
struct BlockQ6_K {
  uint8_t ql[kQK256 / 2];
  uint8_t qh[kQK256 / 4];
  int8_t scales[kQK256 / 16];
  uint16_t d;
};

static_assert(sizeof(BlockQ8_0) == 34 && offsetof(BlockQ8_0, qs) == 2);
static_assert(sizeof(BlockQ4_0) == 18 && offsetof(BlockQ4_0, qs) == 2);
static_assert(sizeof(BlockQ4_1) == 20 && offsetof(BlockQ4_1, m) == 2 && offsetof(BlockQ4_1, qs) == 4);
static_assert(sizeof(BlockQ5_0) == 22 && offsetof(BlockQ5_0, qh) == 2 && offsetof(BlockQ5_0, qs) == 6);
static_assert(sizeof(BlockQ5_1) == 24 && offsetof(BlockQ5_1, m) == 2 && offsetof(BlockQ5_1, qh) == 4 &&
              offsetof(BlockQ5_1, qs) == 8);
static_assert(sizeof(BlockQ4_K) == 144 && offsetof(BlockQ4_K, dmin) == 2 &&
              offsetof(BlockQ4_K, scales) == 4 && offsetof(BlockQ4_K, qs) == 16);
static_assert(sizeof(BlockQ5_K) == 176 && offsetof(BlockQ5_K, scales) == 4 &&
              offsetof(BlockQ5_K, qh) == 16 && offsetof(BlockQ5_K, qs) == 48);
static_assert(sizeof(BlockQ6_K) == 210 && offsetof(BlockQ6_K, qh) == 128 &&
              offsetof(BlockQ6_K, scales) == 192 && offsetof(BlockQ6_K, d) == 208);
// Blocks are packed back to back; every size is even, so 2-byte fp16 fields stay aligned
// as long as the buffer is (our storage is 64-byte aligned).
static_assert(alignof(BlockQ6_K) == 2 && alignof(BlockQ4_K) == 2 && alignof(BlockQ8_0) == 2);

// Maps a QType to its block struct at compile time.
template <QType T> struct BlockOf;
template <> struct BlockOf<QType::Q8_0> { using type = BlockQ8_0; static constexpr uint32_t qk = kQK32; };
template <> struct BlockOf<QType::Q4_0> { using type = BlockQ4_0; static constexpr uint32_t qk = kQK32; };
template <> struct BlockOf<QType::Q4_1> { using type = BlockQ4_1; static constexpr uint32_t qk = kQK32; };
template <> struct BlockOf<QType::Q5_0> { using type = BlockQ5_0; static constexpr uint32_t qk = kQK32; };
template <> struct BlockOf<QType::Q5_1> { using type = BlockQ5_1; static constexpr uint32_t qk = kQK32; };
template <> struct BlockOf<QType::Q4_K> { using type = BlockQ4_K; static constexpr uint32_t qk = kQK256; };
template <> struct BlockOf<QType::Q5_K> { using type = BlockQ5_K; static constexpr uint32_t qk = kQK256; };
template <> struct BlockOf<QType::Q6_K> { using type = BlockQ6_K; static constexpr uint32_t qk = kQK256; };

// The table {name, ggml type id, block elements, block bytes}, indexed by QType.
inline constexpr QTypeInfo kQTypeTable[kNumQTypes] = {
    {QType::Q8_0, "q8_0", 8, kQK32, sizeof(BlockQ8_0)},
    {QType::Q4_0, "q4_0", 2, kQK32, sizeof(BlockQ4_0)},
    {QType::Q4_1, "q4_1", 3, kQK32, sizeof(BlockQ4_1)},
    {QType::Q4_K, "q4_k", 12, kQK256, sizeof(BlockQ4_K)},
    {QType::Q5_K, "q5_k", 13, kQK256, sizeof(BlockQ5_K)},
    {QType::Q6_K, "q6_k", 14, kQK256, sizeof(BlockQ6_K)},
    {QType::Q5_0, "q5_0", 6, kQK32, sizeof(BlockQ5_0)},
    {QType::Q5_1, "q5_1", 7, kQK32, sizeof(BlockQ5_1)},
};
static_assert(kQTypeTable[static_cast<int>(QType::Q6_K)].block_bytes == 210);
static_assert(kQTypeTable[static_cast<int>(QType::Q5_1)].block_bytes == 24);

// Q5_0 / Q5_1: the qh word (little-endian), whose bit j is bit 4 of code j.
inline uint32_t q5_high_bits(const uint8_t qh[4]) {
  return uint32_t{qh[0]} | uint32_t{qh[1]} << 8 | uint32_t{qh[2]} << 16 | uint32_t{qh[3]} << 24;
}
// Q5_0 / Q5_1 codes 0..31 of block b (BlockQ5_0 or BlockQ5_1): nibble plus 16 * bit j of qh.
template <class B>
void q5_codes(const B& b, int q[kQK32]) {
  const uint32_t h = q5_high_bits(b.qh);
  for (uint32_t i = 0; i < kQK32 / 2; ++i) {
    q[i] = (b.qs[i] & 0x0F) | static_cast<int>(((h >> i) & 1u) << 4);
    q[i + kQK32 / 2] = (b.qs[i] >> 4) | static_cast<int>(((h >> (i + kQK32 / 2)) & 1u) << 4);
  }
}

// Q4_K/Q5_K sub-block j (0..7): 6-bit scale and min. Bytes 0..3 hold scales 0..3 in their
// low 6 bits, bytes 4..7 mins 0..3; bytes 8..11 hold the low 4 bits of scale (low nibble)
// and min (high nibble) of sub-blocks 4..7, whose top 2 bits sit in the spare top 2 bits of
// bytes 0..3 (scales) and 4..7 (mins).
inline void unpack_scale_min_k(const uint8_t* s, int j, uint8_t& sc, uint8_t& mn) {
  if (j < 4) {
    sc = s[j] & 63;
    mn = s[j + 4] & 63;
  } else {
    sc = static_cast<uint8_t>((s[j + 4] & 0x0F) | ((s[j - 4] >> 6) << 4));
    mn = static_cast<uint8_t>((s[j + 4] >> 4) | ((s[j] >> 6) << 4));
  }
}
// Inverse of unpack_scale_min_k; sc/mn must be < 64.
void pack_scales_mins_k(const uint8_t sc[8], const uint8_t mn[8], uint8_t out[kKScaleBytes]);

// WGSL `const` lines for one format: block size, block bytes, and the byte offset of every
// field, e.g. "const QK: u32 = 256u;\nconst Q_BLOCK_BYTES: u32 = 144u;\nconst Q_OFF_D: u32 = 0u;".
// Shaders are written against these names and get the text prepended at pipeline creation.
// Built once per format (the launchers ask on every call); the reference lives for the process.
const std::string& wgsl_block_constants(QType t);

}  // namespace wgt::quant
