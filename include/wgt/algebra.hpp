// Tensor contractions: dot_general (XLA semantics) and einsum, both lowered to the batched
// MatMul op (so placement policy, fallback and gpu-strict errors are those of matmul), with
// plans that check shapes once and run many times. docs/algebra.md.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "wgt/tensor.hpp"

namespace wgt {

// Shape and dtype of an operand a plan is prepared for.
struct TensorSpec {
  Shape shape;
  DType dtype = DType::F32;
  static TensorSpec of(const Tensor& t) { return {t.shape(), t.dtype()}; }
};

// Axis lists of dot_general (negative axes count from the end). lhs_batch[i] pairs with
// rhs_batch[i], lhs_contract[i] with rhs_contract[i]; the paired sizes must be equal.
struct DotDims {
  std::vector<int64_t> lhs_batch, rhs_batch;
  std::vector<int64_t> lhs_contract, rhs_contract;
};

// dot_general prepared for one pair of operand specs: axes normalized and checked, the
// permutations and matrix shapes of the lowering computed. Running it checks only that the
// tensors match the specs, then issues views (or one compaction per operand whose strides do
// not allow a view) and one MatMul.
class DotGeneralPlan {
 public:
  Tensor operator()(const Tensor& a, const Tensor& b) const;
  // Output: batch axes (lhs order), then a's free axes, then b's free axes (each in order).
  const Shape& out_shape() const { return out_shape_; }
  DType out_dtype() const { return a_.dtype; }
  int64_t m() const { return M_; }
  int64_t n() const { return N_; }
  int64_t k() const { return K_; }
  int64_t batch() const;

 private:
  friend DotGeneralPlan prepare(const TensorSpec&, const TensorSpec&, const DotDims&);
  TensorSpec a_, b_;
  std::vector<int64_t> a_batch_, b_batch_, a_free_, b_free_, a_contract_, b_contract_;
  Shape batch_shape_, out_shape_;
  int64_t M_ = 1, N_ = 1, K_ = 1;
};

// Validates the dims against the specs: lengths of paired lists equal (InvalidArgument),
// axes in range (OutOfRange), no axis listed twice (InvalidArgument), paired sizes equal
// (ShapeMismatch), dtypes as matmul accepts them (one numeric dtype, or f32 x f16/bf16 ->
// f32; DTypeMismatch).
DotGeneralPlan prepare(const TensorSpec& a, const TensorSpec& b, const DotDims& dims);
Tensor dot_general(const Tensor& a, const Tensor& b, const DotDims& dims);

// einsum in NumPy's notation: "ij,jk->ik", implicit output ("ij,jk": the letters used once,
// sorted), repeated letters in one operand (diagonal, trace), "..." for broadcast leading
// dims, letters summed out, any number of operands. Letters a-z and A-Z. Contraction order of
// 3+ operands: the cheapest by enumeration for up to 4 operands, greedy beyond.
class EinsumPlan {
 public:
  Tensor operator()(const std::vector<Tensor>& operands) const;
  const Shape& out_shape() const { return out_shape_; }
  // Pairwise contraction steps in order: indices into the list of live operands (inputs
  // first, each step appends its result and removes the pair), for tests and benchmarks.
  const std::vector<std::pair<int, int>>& path() const { return path_; }
  // Estimated multiply-adds of the whole contraction under the chosen path.
  double cost() const { return cost_; }

  struct Impl;

 private:
  friend EinsumPlan prepare_einsum(const std::string&, const std::vector<TensorSpec>&);
  std::shared_ptr<const Impl> impl_;
  Shape out_shape_;
  std::vector<std::pair<int, int>> path_;
  double cost_ = 0;
};

// Errors: malformed spec or a character other than a letter, '.', ',', '-', '>', ' '
// (InvalidArgument); operand count different from the spec's, or more than kMaxEinsumOperands
// (InvalidArgument); subscripts not matching an operand's rank (RankMismatch); one letter
// with two sizes, or "..." dims that do not broadcast (ShapeMismatch); an output letter
// absent from the inputs or repeated (InvalidArgument); mixed dtypes (DTypeMismatch).
constexpr int kMaxEinsumOperands = 32;
EinsumPlan prepare_einsum(const std::string& spec, const std::vector<TensorSpec>& operands);
Tensor einsum(const std::string& spec, const std::vector<Tensor>& operands);

}  // namespace wgt
