// The generated parts of shaders/fft_stockham.wgsl: the register declarations, the global
// load, the Stockham passes with their workgroup-memory exchanges, the Bluestein spectrum
// product and the store, written out with literal register indices (v0 .. v{P-1}) so no
// driver has to unroll a loop or promote an indexed array to registers. Pure: text only.
#pragma once
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace wgt::webgpu {

struct FftShader;

// Points per invocation (the first pass's radix) and the radices of a power-of-two line of
// L = 2 .. 2^16 points: max_radix (16, 8 or 4; other values mean 16) while it divides, the
// rest last; P = min(max_radix, L).
std::vector<uint32_t> fft_stockham_radices(uint32_t L, uint32_t max_radix = 16);

// {{DECL}}, {{LOAD}}, {{FFT}}, {{BLUE_MID}}, {{STORE}} of the shader `s` (its radices, L, C,
// LF, TWIDDLE, BLUE).
std::vector<std::pair<std::string, std::string>> fft_stockham_code(const FftShader& s);

}  // namespace wgt::webgpu
