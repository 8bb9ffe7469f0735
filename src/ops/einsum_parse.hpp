// Parsing of einsum specs into integer labels with their sizes (src/ops/einsum_parse.cpp).
#pragma once
#include <string>
#include <vector>

#include "wgt/algebra.hpp"

namespace wgt::einsum_detail {

// Labels 0..51 are the letters a-z, A-Z; "..." dims get labels kEllipsisBase + j, where j
// counts the broadcast dims right-aligned (j = 0 is the outermost of the widest "...").
constexpr int kNumLetters = 52;
constexpr int kEllipsisBase = kNumLetters;

struct ParsedSpec {
  std::vector<std::vector<int>> inputs;  // labels per operand axis (repeats kept)
  std::vector<int> output;               // distinct labels
  std::vector<int64_t> size;             // per label (-1: unused); broadcast "..." sizes resolved
};

// Parses and checks `spec` against the operand specs; throws the errors documented in
// wgt/algebra.hpp.
ParsedSpec parse_einsum(const std::string& spec, const std::vector<TensorSpec>& operands);

std::string label_name(int label);  // "i", or "...[0]"

}  // namespace wgt::einsum_detail
