// The counter-based random number algorithm of wgtensor, defined with u32 operations only so
// that a WGSL kernel (no 64-bit integers) reproduces the hash bit for bit.
//
// Algorithm (all arithmetic on u32, multiplication modulo 2^32):
//   mix32(x):  x ^= x >> 16; x *= 0x7FEB352D; x ^= x >> 15; x *= 0x846CA68B; x ^= x >> 16
//              (a bijective "xorshift-multiply" finalizer; constants from the public
//              hash-prospector search results).
//   key(seed)     = mix32(mix32(0x243F6A88 ^ seed_lo) ^ seed_hi)      (seed = seed_hi:seed_lo)
//   hash(seed, i) = mix32(mix32(key ^ i_lo) ^ i_hi)                    (i = i_hi:i_lo, 64-bit)
//   For a fixed seed and i_hi the map i_lo -> hash is a bijection (a composition of
//   bijections), so no two elements of a 2^32 block share a hash. A GPU kernel receives `key`
//   (computed on the host) and does two mix32 per hash.
//   bits24(h)  = h >> 8                                   (the top 24 bits)
//   uniform01  = bits24(hash(seed, i)) * 2^-24            in [0, 1), exact in f32
//   rand_uniform[i] = low + (high - low) * uniform01
//   rand_normal[i]  : Box-Muller on two hashes of the counters 2i and 2i+1:
//       u1 = (bits24(hash(seed, 2i)) + 1) * 2^-24         in (0, 1]  (log(u1) is finite)
//       u2 =  bits24(hash(seed, 2i+1))    * 2^-24         in [0, 1)
//       z  = sqrt(-2 ln u1) * cos(2 pi u2);   value = mean + stddev * z
// The reference evaluates the final affine/Box-Muller step in double and rounds once to the
// output dtype; an f32 implementation matches the hash and u exactly and the value to a few ulp.
#pragma once
#include <cmath>
#include <cstdint>

namespace wgt::cpu_ref {

constexpr uint32_t mix32(uint32_t x) {
  x ^= x >> 16;
  x *= 0x7FEB352Du;
  x ^= x >> 15;
  x *= 0x846CA68Bu;
  x ^= x >> 16;
  return x;
}

constexpr uint32_t rng_key(uint64_t seed) {
  return mix32(mix32(0x243F6A88u ^ static_cast<uint32_t>(seed)) ^ static_cast<uint32_t>(seed >> 32));
}

constexpr uint32_t rng_hash(uint32_t key, uint64_t i) {
  return mix32(mix32(key ^ static_cast<uint32_t>(i)) ^ static_cast<uint32_t>(i >> 32));
}

inline double rng_uniform01(uint32_t key, uint64_t i) { return static_cast<double>(rng_hash(key, i) >> 8) * 0x1p-24; }

inline double rng_normal01(uint32_t key, uint64_t i) {
  const double u1 = static_cast<double>((rng_hash(key, 2 * i) >> 8) + 1) * 0x1p-24;
  const double u2 = static_cast<double>(rng_hash(key, 2 * i + 1) >> 8) * 0x1p-24;
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * M_PI * u2);
}

}  // namespace wgt::cpu_ref
