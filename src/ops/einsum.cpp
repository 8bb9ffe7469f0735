// einsum: a parsed spec turned into a plan of existing ops, then run on the operands.
//  1. Per operand: repeated letters become a diagonal view (the axes' strides summed, no
//     copy), size-1 "..." dims are expanded to the broadcast size (stride 0), and letters that
//     no other operand and not the output use are summed out (wgt::sum).
//  2. Pairwise contractions in the chosen order, each a dot_general: shared letters still
//     needed later (by the output or another operand) are batch axes, the other shared
//     letters contracting axes; a letter of one side only that is no longer needed is summed
//     out before the step.
//  3. The last operand: letters not in the output summed, the rest permuted into the
//     output's order (a view). The last contraction takes its operands in the order that
//     makes that permutation the identity when one does: dot_general's result is [batch,
//     lhs free, rhs free], so with "bkn,bmk->bmn" the second operand goes first. The output
//     is then contiguous and the matmul reads both operands in their stored layouts
//     instead of computing the transposed product from two transposed operands.
// The order: every pairwise path enumerated for up to 4 operands (minimum total
// multiply-adds, then minimum largest intermediate), the cheapest next pair beyond (greedy).
#include <algorithm>
#include <functional>
#include <limits>

#include "ops/einsum_parse.hpp"
#include "ops/op_common.hpp"
#include "wgt/algebra.hpp"
#include "wgt/ops.hpp"

namespace wgt {
using namespace ops_detail;
using namespace einsum_detail;

namespace {

constexpr const char* kOp = "einsum";
constexpr size_t kMaxEnumerated = 4;

using Labels = std::vector<int>;

bool has(const Labels& ls, int l) { return std::find(ls.begin(), ls.end(), l) != ls.end(); }
int64_t pos(const Labels& ls, int l) { return std::find(ls.begin(), ls.end(), l) - ls.begin(); }

// One pairwise contraction of operands x and y given the labels still needed afterwards.
struct PairForm {
  Labels x, y;                         // after summing out the labels nobody else needs
  std::vector<int64_t> sum_x, sum_y;   // axes of the original x, y summed before the step
  Labels batch, contract, result;
  double cost = 0, result_size = 0;
};

PairForm pair_form(const Labels& x, const Labels& y, const Labels& keep, const std::vector<int64_t>& size) {
  PairForm f;
  auto trim = [&](const Labels& a, const Labels& b, Labels& out, std::vector<int64_t>& summed) {
    for (size_t i = 0; i < a.size(); ++i) {
      if (has(b, a[i]) || has(keep, a[i])) out.push_back(a[i]);
      else summed.push_back(static_cast<int64_t>(i));
    }
  };
  trim(x, y, f.x, f.sum_x);
  trim(y, x, f.y, f.sum_y);
  f.cost = 1;
  for (int l : f.x) {
    f.cost *= static_cast<double>(size[l]);
    if (has(f.y, l)) (has(keep, l) ? f.batch : f.contract).push_back(l);
  }
  for (int l : f.y)
    if (!has(f.x, l)) f.cost *= static_cast<double>(size[l]);
  f.result = f.batch;
  for (int l : f.x)
    if (!has(f.y, l)) f.result.push_back(l);
  for (int l : f.y)
    if (!has(f.x, l)) f.result.push_back(l);
  f.result_size = 1;
  for (int l : f.result) f.result_size *= static_cast<double>(size[l]);
  return f;
}

// Labels needed once operands i and j of `ops` are contracted: the output's and the others'.
Labels keep_of(const std::vector<Labels>& ops, size_t i, size_t j, const Labels& output) {
  Labels keep = output;
  for (size_t k = 0; k < ops.size(); ++k)
    if (k != i && k != j) keep.insert(keep.end(), ops[k].begin(), ops[k].end());
  return keep;
}

std::vector<Labels> after_step(std::vector<Labels> ops, size_t i, size_t j, Labels result) {
  ops.erase(ops.begin() + static_cast<std::ptrdiff_t>(j));
  ops.erase(ops.begin() + static_cast<std::ptrdiff_t>(i));
  ops.push_back(std::move(result));
  return ops;
}

struct Path {
  std::vector<std::pair<int, int>> steps;
  double cost = 0, peak = 0;
  bool better_than(const Path& o) const { return cost < o.cost || (cost == o.cost && peak < o.peak); }
};

Path best_path(const std::vector<Labels>& ops, const Labels& output, const std::vector<int64_t>& size) {
  if (ops.size() < 2) return {};
  if (ops.size() > kMaxEnumerated) {
    // Greedy: the cheapest pair next (ties: the smaller result), then the rest of the path.
    size_t bi = 0, bj = 1;
    PairForm best;
    bool first = true;
    for (size_t i = 0; i < ops.size(); ++i)
      for (size_t j = i + 1; j < ops.size(); ++j) {
        PairForm f = pair_form(ops[i], ops[j], keep_of(ops, i, j, output), size);
        if (first || f.cost < best.cost || (f.cost == best.cost && f.result_size < best.result_size)) {
          best = f;
          bi = i;
          bj = j;
          first = false;
        }
      }
    Path rest = best_path(after_step(ops, bi, bj, best.result), output, size);
    rest.steps.insert(rest.steps.begin(), {static_cast<int>(bi), static_cast<int>(bj)});
    rest.cost += best.cost;
    rest.peak = std::max(rest.peak, best.result_size);
    return rest;
  }
  Path best;
  best.cost = std::numeric_limits<double>::infinity();
  for (size_t i = 0; i < ops.size(); ++i)
    for (size_t j = i + 1; j < ops.size(); ++j) {
      PairForm f = pair_form(ops[i], ops[j], keep_of(ops, i, j, output), size);
      Path rest = best_path(after_step(ops, i, j, f.result), output, size);
      rest.steps.insert(rest.steps.begin(), {static_cast<int>(i), static_cast<int>(j)});
      rest.cost += f.cost;
      rest.peak = std::max(rest.peak, f.result_size);
      if (rest.better_than(best)) best = std::move(rest);
    }
  return best;
}

// sum() widens integer dtypes to i64; einsum keeps the operands' dtype (integer products
// wrap, as in matmul).
Tensor sum_to(const Tensor& x, const std::vector<int64_t>& axes) {
  Tensor r = sum(x, axes);
  return r.dtype() == x.dtype() ? r : cast(r, x.dtype());
}

// True when the labels of `result` that the output keeps appear in the output's order.
bool in_output_order(const Labels& result, const Labels& output) {
  int64_t last = -1;
  for (int l : result) {
    if (!has(output, l)) continue;
    const int64_t p = pos(output, l);
    if (p < last) return false;
    last = p;
  }
  return true;
}

Shape shape_of(const Labels& ls, const std::vector<int64_t>& size) {
  Shape s;
  for (int l : ls) s.push_back(size[l]);
  return s;
}

}  // namespace

struct EinsumPlan::Impl {
  struct Input {
    std::vector<std::vector<int>> diag;  // per distinct label, the operand axes it names
    bool has_diag = false;
    Shape diag_shape;                    // the operand's sizes per distinct label
    Shape full_shape;                    // the broadcast sizes ("..." dims of size 1 expanded)
    std::vector<int64_t> sum_axes;
  };
  struct Step {
    int x, y;
    bool swap = false;                   // live[y] is dot_general's lhs, live[x] its rhs
    std::vector<int64_t> sum_x, sum_y;   // axes summed on the lhs and the rhs
    DotGeneralPlan plan;
  };
  std::vector<TensorSpec> specs;
  std::vector<Input> inputs;
  std::vector<Step> steps;
  std::vector<int64_t> final_sum, final_perm;
};

EinsumPlan prepare_einsum(const std::string& spec, const std::vector<TensorSpec>& operands) {
  ParsedSpec ps = parse_einsum(spec, operands);
  const DType dtype = operands[0].dtype;
  for (size_t i = 1; i < operands.size(); ++i)
    if (operands[i].dtype != dtype)
      throw_error(ErrorKind::DTypeMismatch, kOp,
                  "operand " + std::to_string(i) + " is " + dt(operands[i].dtype) + ", operand 0 " + dt(dtype) +
                      "; cast() the operands to one dtype");
  if (dtype == DType::Bool)
    throw_error(ErrorKind::DTypeMismatch, kOp, "is not defined for bool tensors; cast() to a numeric dtype");

  auto impl = std::make_shared<EinsumPlan::Impl>();
  impl->specs = operands;
  std::vector<Labels> live;
  for (size_t i = 0; i < operands.size(); ++i) {
    const Labels& ls = ps.inputs[i];
    EinsumPlan::Impl::Input in;
    Labels distinct;
    for (size_t ax = 0; ax < ls.size(); ++ax) {
      const int64_t p = pos(distinct, ls[ax]);
      if (p == static_cast<int64_t>(distinct.size())) {
        distinct.push_back(ls[ax]);
        in.diag.push_back({static_cast<int>(ax)});
        in.diag_shape.push_back(operands[i].shape[ax]);
      } else {
        in.diag[p].push_back(static_cast<int>(ax));
        in.has_diag = true;
      }
    }
    in.full_shape = shape_of(distinct, ps.size);
    Labels others = ps.output;
    for (size_t k = 0; k < operands.size(); ++k)
      if (k != i) others.insert(others.end(), ps.inputs[k].begin(), ps.inputs[k].end());
    Labels kept;
    for (size_t d = 0; d < distinct.size(); ++d) {
      if (has(others, distinct[d])) kept.push_back(distinct[d]);
      else in.sum_axes.push_back(static_cast<int64_t>(d));
    }
    impl->inputs.push_back(std::move(in));
    live.push_back(std::move(kept));
  }

  EinsumPlan plan;
  Path path = best_path(live, ps.output, ps.size);
  for (auto [i, j] : path.steps) {
    const Labels keep = keep_of(live, i, j, ps.output);
    PairForm f = pair_form(live[i], live[j], keep, ps.size);
    bool swap = false;
    if (live.size() == 2 && !in_output_order(f.result, ps.output)) {
      PairForm g = pair_form(live[j], live[i], keep, ps.size);
      if (in_output_order(g.result, ps.output)) {
        f = std::move(g);
        swap = true;
      }
    }
    DotDims dims;
    for (int l : f.batch) {
      dims.lhs_batch.push_back(pos(f.x, l));
      dims.rhs_batch.push_back(pos(f.y, l));
    }
    for (int l : f.contract) {
      dims.lhs_contract.push_back(pos(f.x, l));
      dims.rhs_contract.push_back(pos(f.y, l));
    }
    DotGeneralPlan dp = prepare(TensorSpec{shape_of(f.x, ps.size), dtype}, TensorSpec{shape_of(f.y, ps.size), dtype}, dims);
    impl->steps.push_back({i, j, swap, f.sum_x, f.sum_y, std::move(dp)});
    plan.path_.push_back({i, j});
    live = after_step(live, i, j, f.result);
  }
  const Labels& last = live[0];
  Labels rest;
  for (size_t d = 0; d < last.size(); ++d) {
    if (has(ps.output, last[d])) rest.push_back(last[d]);
    else impl->final_sum.push_back(static_cast<int64_t>(d));
  }
  for (int l : ps.output) impl->final_perm.push_back(pos(rest, l));
  plan.out_shape_ = shape_of(ps.output, ps.size);
  plan.cost_ = path.cost;
  plan.impl_ = std::move(impl);
  return plan;
}

Tensor EinsumPlan::operator()(const std::vector<Tensor>& operands) const {
  const Impl& im = *impl_;
  if (operands.size() != im.specs.size())
    throw_error(ErrorKind::InvalidArgument, kOp,
                "the plan takes " + std::to_string(im.specs.size()) + " operands, got " + std::to_string(operands.size()));
  std::vector<const Tensor*> ptrs;
  for (const Tensor& t : operands) ptrs.push_back(&t);
  common_device(ptrs, kOp);
  std::vector<Tensor> live;
  for (size_t i = 0; i < operands.size(); ++i) {
    const Tensor& t = operands[i];
    if (t.shape() != im.specs[i].shape || t.dtype() != im.specs[i].dtype)
      throw_error(ErrorKind::ShapeMismatch, kOp,
                  "operand " + std::to_string(i) + " is " + t.str() + " but the plan was prepared for " +
                      dt(im.specs[i].dtype) + " " + shape_str(im.specs[i].shape) + "; prepare_einsum() for it");
    const Impl::Input& in = im.inputs[i];
    Tensor x = t;
    if (in.has_diag) {
      // The diagonal of repeated axes is the view whose stride is the sum of theirs.
      Strides st;
      for (const auto& axes : in.diag) {
        int64_t s = 0;
        for (int ax : axes) s += t.strides()[ax];
        st.push_back(s);
      }
      x = Tensor(t.storage(), in.diag_shape, st, t.offset(), t.dtype());
    }
    if (in.diag_shape != in.full_shape) x = x.expand(in.full_shape);
    if (!in.sum_axes.empty()) x = sum_to(x, in.sum_axes);
    live.push_back(std::move(x));
  }
  for (const Impl::Step& s : im.steps) {
    Tensor x = live[s.x], y = live[s.y];
    if (s.swap) std::swap(x, y);
    if (!s.sum_x.empty()) x = sum_to(x, s.sum_x);
    if (!s.sum_y.empty()) y = sum_to(y, s.sum_y);
    Tensor r = s.plan(x, y);
    live.erase(live.begin() + s.y);
    live.erase(live.begin() + s.x);
    live.push_back(std::move(r));
  }
  Tensor r = live[0];
  if (!im.final_sum.empty()) r = sum_to(r, im.final_sum);
  return r.permute(im.final_perm);
}

Tensor einsum(const std::string& spec, const std::vector<Tensor>& operands) {
  std::vector<TensorSpec> specs;
  for (const Tensor& t : operands) {
    require_defined(t, kOp, "an operand");
    specs.push_back(TensorSpec::of(t));
  }
  return prepare_einsum(spec, specs)(operands);
}

}  // namespace wgt
