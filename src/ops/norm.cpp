// Front-ends of softmax, log_softmax, rms_norm and layer_norm.
// Contract: Softmax/LogSoftmax: inputs = {x}, attrs.axis normalized, output like x.
// RMSNorm/LayerNorm normalize over the last dim: inputs = {x, [weight], [bias]} (flags
// attrs.has_weight / has_bias say which are present, in that order), weight/bias of shape [D]
// and x's dtype; attrs.eps; output like x. All of them need floating dtypes.
#include <cmath>

#include "ops/op_common.hpp"
#include "wgt/ops.hpp"

namespace wgt {
using namespace ops_detail;

namespace {

Tensor softmax_impl(OpKind kind, const char* name, const Tensor& x, int64_t axis) {
  Device dev = common_device({&x}, name);
  require_floating(x, name);
  OpCall call{kind, name, {x}, {}, {}};
  call.attrs.axis = normalize_axis(axis, x.dim(), name);
  call.work = 4.0 * static_cast<double>(x.numel());
  return Runtime::get().run1(call, {x.shape(), x.dtype()}, dev);
}

Tensor norm_impl(OpKind kind, const char* name, const Tensor& x, const std::optional<Tensor>& weight,
                 const std::optional<Tensor>& bias, double eps) {
  std::vector<const Tensor*> all{&x};
  if (weight) all.push_back(&*weight);
  if (bias) all.push_back(&*bias);
  Device dev = common_device(all, name);
  require_floating(x, name);
  if (x.dim() < 1)
    throw_error(ErrorKind::RankMismatch, name, "needs rank >= 1 (it normalizes the last dim), got " + x.str());
  if (!std::isfinite(eps) || eps < 0)
    throw_error(ErrorKind::InvalidArgument, name, "eps must be finite and >= 0, got " + std::to_string(eps));
  const int64_t D = x.shape().back();
  OpCall call{kind, name, {x}, {}, {}};
  auto add_param = [&](const Tensor& p, const char* what) {
    if (p.dim() != 1)
      throw_error(ErrorKind::RankMismatch, name, std::string(what) + " must be 1-D [" + std::to_string(D) + "], got " + p.str());
    if (p.shape()[0] != D)
      throw_error(ErrorKind::ShapeMismatch, name,
                  std::string(what) + " has shape " + shape_str(p.shape()) + " but the last dim of x is " + std::to_string(D));
    require_same_dtype(x, p, name, what);
    call.inputs.push_back(p);
  };
  if (weight) add_param(*weight, "weight");
  if (bias) add_param(*bias, "bias");
  call.attrs.has_weight = weight.has_value();
  call.attrs.has_bias = bias.has_value();
  call.attrs.eps = eps;
  call.attrs.axis = x.dim() - 1;
  call.work = 4.0 * static_cast<double>(x.numel());
  return Runtime::get().run1(call, {x.shape(), x.dtype()}, dev);
}

}  // namespace

Tensor softmax(const Tensor& x, int64_t axis) { return softmax_impl(OpKind::Softmax, "softmax", x, axis); }
Tensor log_softmax(const Tensor& x, int64_t axis) { return softmax_impl(OpKind::LogSoftmax, "log_softmax", x, axis); }

Tensor rms_norm(const Tensor& x, const std::optional<Tensor>& weight, double eps) {
  return norm_impl(OpKind::RMSNorm, "rms_norm", x, weight, std::nullopt, eps);
}
Tensor layer_norm(const Tensor& x, const std::optional<Tensor>& weight, const std::optional<Tensor>& bias, double eps) {
  return norm_impl(OpKind::LayerNorm, "layer_norm", x, weight, bias, eps);
}

}  // namespace wgt
