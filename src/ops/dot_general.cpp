// dot_general (XLA semantics) lowered to one batched MatMul call.
// a is viewed as [batch..., M, K] (batch axes, then its free axes merged into M, then the
// contracting axes merged into K) and b as [batch..., K, N]; the MatMul output [batch..., M, N]
// is the dot_general output [batch..., a free..., b free...] without a copy. Permutations are
// free (views); merging axes is free when their strides nest, else reshape() compacts that
// operand once into the matmul layout. The order in which the contracting axes are merged is
// free (it only has to be the same for both operands), so the run picks the order that lets
// the most operand elements stay in place. The MatMul kernels read any batch strides and
// either matrix layout, so no other copy is ever needed.
#include <algorithm>
#include <numeric>

#include "ops/op_common.hpp"
#include "wgt/algebra.hpp"

namespace wgt {
using namespace ops_detail;

namespace {

constexpr const char* kOp = "dot_general";
// MatMul tensors are [batch..., rows, cols] with rank <= kMaxRank.
constexpr size_t kMaxMatmulBatch = kMaxRank - 2;

std::vector<int64_t> normalize_list(const std::vector<int64_t>& axes, int rank, const char* which,
                                    std::vector<bool>& used) {
  std::vector<int64_t> out;
  for (int64_t ax : axes) {
    if (ax < -rank || ax >= rank)
      throw_error(ErrorKind::OutOfRange, kOp,
                  std::string(which) + " axis " + std::to_string(ax) + " is out of range for an operand of rank " +
                      std::to_string(rank));
    const int64_t n = ax < 0 ? ax + rank : ax;
    if (used[n])
      throw_error(ErrorKind::InvalidArgument, kOp,
                  "axis " + std::to_string(n) + " of the " + (which[0] == 'l' ? "lhs" : "rhs") +
                      " is listed twice among the batch and contracting axes; list each axis once");
    used[n] = true;
    out.push_back(n);
  }
  return out;
}

// True when the axes of t, in this order, merge into one axis without a copy: each axis's
// stride equals the next one's stride times its size (size-1 axes are free; an empty tensor
// merges anything).
bool mergeable(const Tensor& t, const std::vector<int64_t>& axes) {
  for (int64_t ax : axes)
    if (t.shape()[ax] == 0) return true;
  int64_t need = -1;
  for (auto it = axes.rbegin(); it != axes.rend(); ++it) {
    const int64_t size = t.shape()[*it], stride = t.strides()[*it];
    if (size == 1) continue;
    if (need >= 0 && stride != need) return false;
    need = stride * size;
  }
  return true;
}

std::vector<int64_t> pick(const std::vector<int64_t>& axes, const std::vector<size_t>& order) {
  std::vector<int64_t> out;
  for (size_t i : order) out.push_back(axes[i]);
  return out;
}

std::vector<int64_t> concat(std::initializer_list<const std::vector<int64_t>*> parts) {
  std::vector<int64_t> out;
  for (const auto* p : parts) out.insert(out.end(), p->begin(), p->end());
  return out;
}

}  // namespace

int64_t DotGeneralPlan::batch() const {
  int64_t n = 1;
  for (int64_t d : batch_shape_) n *= d;
  return n;
}

DotGeneralPlan prepare(const TensorSpec& a, const TensorSpec& b, const DotDims& dims) {
  const int ra = static_cast<int>(a.shape.size()), rb = static_cast<int>(b.shape.size());
  validate_shape(a.shape, kOp);
  validate_shape(b.shape, kOp);
  if (dims.lhs_batch.size() != dims.rhs_batch.size() || dims.lhs_contract.size() != dims.rhs_contract.size())
    throw_error(ErrorKind::InvalidArgument, kOp,
                "the lhs and rhs lists must pair up: " + std::to_string(dims.lhs_batch.size()) + " vs " +
                    std::to_string(dims.rhs_batch.size()) + " batch axes, " + std::to_string(dims.lhs_contract.size()) +
                    " vs " + std::to_string(dims.rhs_contract.size()) + " contracting axes");
  const bool mixed = a.dtype == DType::F32 && (b.dtype == DType::F16 || b.dtype == DType::BF16);
  if (!mixed && a.dtype != b.dtype)
    throw_error(ErrorKind::DTypeMismatch, kOp,
                "operands are " + dt(a.dtype) + " and " + dt(b.dtype) + "; cast() them to one dtype (or f32 x f16/bf16)");
  if (a.dtype == DType::Bool)
    throw_error(ErrorKind::DTypeMismatch, kOp, "is not defined for bool tensors; cast() to a numeric dtype");

  DotGeneralPlan p;
  p.a_ = a;
  p.b_ = b;
  std::vector<bool> ua(ra, false), ub(rb, false);
  p.a_batch_ = normalize_list(dims.lhs_batch, ra, "lhs batch", ua);
  p.a_contract_ = normalize_list(dims.lhs_contract, ra, "lhs contracting", ua);
  p.b_batch_ = normalize_list(dims.rhs_batch, rb, "rhs batch", ub);
  p.b_contract_ = normalize_list(dims.rhs_contract, rb, "rhs contracting", ub);
  for (int i = 0; i < ra; ++i)
    if (!ua[i]) p.a_free_.push_back(i);
  for (int i = 0; i < rb; ++i)
    if (!ub[i]) p.b_free_.push_back(i);
  auto pair_sizes = [&](const std::vector<int64_t>& la, const std::vector<int64_t>& lb, const char* what) {
    for (size_t i = 0; i < la.size(); ++i)
      if (a.shape[la[i]] != b.shape[lb[i]])
        throw_error(ErrorKind::ShapeMismatch, kOp,
                    std::string(what) + " axes differ in size: lhs axis " + std::to_string(la[i]) + " of " +
                        shape_str(a.shape) + " has " + std::to_string(a.shape[la[i]]) + ", rhs axis " +
                        std::to_string(lb[i]) + " of " + shape_str(b.shape) + " has " + std::to_string(b.shape[lb[i]]));
  };
  pair_sizes(p.a_batch_, p.b_batch_, "batch");
  pair_sizes(p.a_contract_, p.b_contract_, "contracting");
  for (int64_t ax : p.a_batch_) p.batch_shape_.push_back(a.shape[ax]);
  p.out_shape_ = p.batch_shape_;
  for (int64_t ax : p.a_free_) {
    p.M_ = checked_mul(p.M_, a.shape[ax], kOp);
    p.out_shape_.push_back(a.shape[ax]);
  }
  for (int64_t ax : p.b_free_) {
    p.N_ = checked_mul(p.N_, b.shape[ax], kOp);
    p.out_shape_.push_back(b.shape[ax]);
  }
  for (int64_t ax : p.a_contract_) p.K_ = checked_mul(p.K_, a.shape[ax], kOp);
  validate_shape(p.out_shape_, kOp);
  return p;
}

Tensor DotGeneralPlan::operator()(const Tensor& a, const Tensor& b) const {
  const Device dev = common_device({&a, &b}, kOp);
  if (a.shape() != a_.shape || b.shape() != b_.shape)
    throw_error(ErrorKind::ShapeMismatch, kOp,
                "the plan was prepared for " + shape_str(a_.shape) + " x " + shape_str(b_.shape) + ", got " +
                    shape_str(a.shape()) + " x " + shape_str(b.shape()) + "; prepare() a plan for these shapes");
  if (a.dtype() != a_.dtype || b.dtype() != b_.dtype)
    throw_error(ErrorKind::DTypeMismatch, kOp,
                "the plan was prepared for " + dt(a_.dtype) + " x " + dt(b_.dtype) + ", got " + dt(a.dtype()) + " x " +
                    dt(b.dtype()));
  // Batch axes stay separate MatMul batch axes (any strides) unless there are too many.
  const bool fold_batch = batch_shape_.size() > kMaxMatmulBatch;
  auto copies = [&](const std::vector<size_t>& order) {
    const auto ac = pick(a_contract_, order), bc = pick(b_contract_, order);
    const bool a_ok = mergeable(a, a_free_) && mergeable(a, ac) && (!fold_batch || mergeable(a, a_batch_));
    const bool b_ok = mergeable(b, b_free_) && mergeable(b, bc) && (!fold_batch || mergeable(b, b_batch_));
    return (a_ok ? 0 : a.numel()) + (b_ok ? 0 : b.numel());
  };
  // Candidate merge orders of the contracting axes: as listed, and each operand's memory
  // order (outermost stride first).
  std::vector<size_t> order(a_contract_.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::vector<size_t> best = order;
  int64_t best_copies = copies(order);
  for (const Tensor* t : {&a, &b}) {
    if (best_copies == 0) break;
    const auto& axes = t == &a ? a_contract_ : b_contract_;
    std::vector<size_t> o = order;
    std::stable_sort(o.begin(), o.end(), [&](size_t i, size_t j) { return t->strides()[axes[i]] > t->strides()[axes[j]]; });
    if (const int64_t c = copies(o); c < best_copies) {
      best_copies = c;
      best = o;
    }
  }
  const auto ac = pick(a_contract_, best), bc = pick(b_contract_, best);
  Shape mm_batch = fold_batch ? Shape{batch()} : batch_shape_;
  Shape a_mm = mm_batch, b_mm = mm_batch, o_mm = mm_batch;
  a_mm.insert(a_mm.end(), {M_, K_});
  b_mm.insert(b_mm.end(), {K_, N_});
  o_mm.insert(o_mm.end(), {M_, N_});
  Tensor A = a.permute(concat({&a_batch_, &a_free_, &ac})).reshape(a_mm);
  Tensor B = b.permute(concat({&b_batch_, &bc, &b_free_})).reshape(b_mm);
  OpCall call{OpKind::MatMul, kOp, {std::move(A), std::move(B)}, {}, {}};
  call.work = 2.0 * static_cast<double>(batch()) * static_cast<double>(M_) * static_cast<double>(N_) *
              static_cast<double>(K_);
  Tensor r = Runtime::get().run1(call, {o_mm, a_.dtype}, dev);
  return r.view(out_shape_);
}

Tensor dot_general(const Tensor& a, const Tensor& b, const DotDims& dims) {
  common_device({&a, &b}, kOp);
  return prepare(TensorSpec::of(a), TensorSpec::of(b), dims)(a, b);
}

}  // namespace wgt
