// QTensor (packed GGUF blocks + logical [rows, cols]) and the public quantized ops:
// quantize, dequantize, qmatmul_t, get_rows. Front-ends validate everything here; the
// kernels in src/quant/*.cpp trust their inputs.
#include <cmath>
#include <cstring>

#include "cpu/fast/parallel.hpp"
#include "ops/op_common.hpp"
#include "quant/blocks.hpp"
#include "quant/kernels.hpp"
#include "wgt/nn.hpp"
#include "wgt/ops.hpp"
#include "wgt/quant.hpp"
#include "wgt/runtime.hpp"

namespace wgt {
namespace {

// Largest finite fp16: block scales (and Q4_1's min) are stored as fp16, so weights beyond
// this range cannot be represented by any of the formats.
constexpr float kMaxQuantizable = 65504.f;

void require_cpu(const Device& d, const char* op, const char* what) {
  if (!d.is_cpu())
    throw_error(ErrorKind::Unsupported, op,
                std::string(what) + " lives on " + d.str() +
                    "; quantized ops run on the CPU backend for now: move it with .cpu() / .to(Device::cpu())");
}

void require_defined_q(const QTensor& w, const char* op) {
  if (!w.defined())
    throw_error(ErrorKind::InvalidArgument, op, "the quantized tensor is undefined (default-constructed); build it "
                                                "with quantize() or QTensor::from_bytes()");
}

Tensor as_f32_contiguous(const Tensor& x) {
  return (x.dtype() == DType::F32 ? x : cast(x, DType::F32)).contiguous();
}

}  // namespace

// ---------------------------------------------------------------- QTensor

QTensor QTensor::from_tensor(QType type, int64_t rows, int64_t cols, const Tensor& bytes) {
  const char* op = "QTensor::from_tensor";
  if (rows < 0) throw_error(ErrorKind::InvalidArgument, op, "negative row count " + std::to_string(rows));
  const size_t rb = qtype_row_bytes(type, cols, op);
  if (!bytes.defined() || bytes.dtype() != DType::U8 || bytes.dim() != 1 || !bytes.is_contiguous())
    throw_error(ErrorKind::DTypeMismatch, op, "packed bytes must be a contiguous 1-D u8 tensor, got " +
                                                  (bytes.defined() ? bytes.str() : std::string("undefined")));
  const size_t want = static_cast<size_t>(checked_mul(static_cast<int64_t>(rb), rows, op));
  if (bytes.nbytes() != want)
    throw_error(ErrorKind::Format, op,
                std::string(qtype_name(type)) + " [" + std::to_string(rows) + ", " + std::to_string(cols) + "] needs " +
                    std::to_string(want) + " bytes (" + std::to_string(rb) + " per row), got " +
                    std::to_string(bytes.nbytes()) + (bytes.nbytes() < want ? " (truncated data)" : " (trailing bytes)") +
                    "; check the tensor's type and shape in the file");
  QTensor q;
  q.type_ = type, q.rows_ = rows, q.cols_ = cols, q.row_bytes_ = rb, q.bytes_ = bytes;
  return q;
}

QTensor QTensor::from_bytes(QType type, int64_t rows, int64_t cols, const void* data, size_t nbytes) {
  const char* op = "QTensor::from_bytes";
  if (rows < 0) throw_error(ErrorKind::InvalidArgument, op, "negative row count " + std::to_string(rows));
  const size_t rb = qtype_row_bytes(type, cols, op);
  const size_t want = static_cast<size_t>(checked_mul(static_cast<int64_t>(rb), rows, op));
  if (nbytes != want)  // checked before copying: a short buffer must never be read past its end
    throw_error(ErrorKind::Format, op,
                std::string(qtype_name(type)) + " [" + std::to_string(rows) + ", " + std::to_string(cols) + "] needs " +
                    std::to_string(want) + " bytes, got " + std::to_string(nbytes) +
                    (nbytes < want ? " (truncated data)" : " (trailing bytes)") + "; check the tensor's type and shape");
  if (want > 0 && data == nullptr) throw_error(ErrorKind::InvalidArgument, op, "data is null");
  Tensor bytes = Tensor::empty({static_cast<int64_t>(want)}, DType::U8);
  if (want) std::memcpy(bytes.data_ptr(), data, want);
  return from_tensor(type, rows, cols, bytes);
}

const uint8_t* QTensor::data() const {
  require_defined_q(*this, "QTensor::data");
  require_cpu(device(), "QTensor::data", "the quantized tensor");
  return static_cast<const uint8_t*>(bytes_.data_ptr());
}

QTensor QTensor::to(Device d) const {
  require_defined_q(*this, "QTensor::to");
  QTensor q = *this;
  q.bytes_ = bytes_.to(d);
  return q;
}

std::string QTensor::str() const {
  if (!defined()) return "QTensor(undefined)";
  return std::string("QTensor(") + qtype_name(type_) + ", " + shape_str(shape()) + ", " + device().str() + ")";
}

// ---------------------------------------------------------------- ops

QTensor quantize(const Tensor& w_in, QType type) {
  const char* op = "quantize";
  if (!w_in.defined()) throw_error(ErrorKind::InvalidArgument, op, "input is an undefined tensor");
  if (w_in.dim() != 2)
    throw_error(ErrorKind::RankMismatch, op,
                "expects a 2-D weight [rows, cols], got " + w_in.str() + "; reshape() it to [rows, cols] first");
  if (!is_floating(w_in.dtype()))
    throw_error(ErrorKind::DTypeMismatch, op,
                std::string("expects a floating tensor, got ") + dtype_name(w_in.dtype()) + "; cast() it first");
  require_cpu(w_in.device(), op, "the weight");
  const int64_t rows = w_in.size(0), cols = w_in.size(1);
  const size_t rb = qtype_row_bytes(type, cols, op);  // ShapeMismatch names format + block size
  const Tensor w = as_f32_contiguous(w_in);
  const float* src = w.data<float>();
  for (int64_t i = 0; i < w.numel(); ++i)
    if (!(std::fabs(src[i]) <= kMaxQuantizable))
      throw_error(ErrorKind::InvalidArgument, op,
                  "element " + std::to_string(i) + " (row " + std::to_string(i / std::max<int64_t>(cols, 1)) +
                      ") is " + std::to_string(src[i]) +
                      "; only finite values within the fp16 range (|x| <= 65504) can be block-quantized: "
                      "clean or rescale the weights first");
  Tensor bytes = Tensor::empty({static_cast<int64_t>(rb * static_cast<size_t>(rows))}, DType::U8);
  uint8_t* dst = static_cast<uint8_t*>(bytes.data_ptr());
  cpu_fast::parallel_for(0, rows, 1, [&](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r) quant::quantize_row(type, src + r * cols, dst + static_cast<size_t>(r) * rb, cols);
  });
  return QTensor::from_tensor(type, rows, cols, bytes);
}

Tensor dequantize(const QTensor& w) {
  const char* op = "dequantize";
  require_defined_q(w, op);
  if (w.rows() == 0 || w.cols() == 0) return Tensor::empty({w.rows(), w.cols()}, DType::F32, w.device());
  OpCall call{OpKind::QDequantize, op, {w.bytes().view({w.rows(), static_cast<int64_t>(w.row_bytes())})}, {}, {}};
  call.attrs.qtype = static_cast<uint8_t>(w.qtype());
  call.work = static_cast<double>(w.rows()) * static_cast<double>(w.cols());
  return Runtime::get().run1(call, {{w.rows(), w.cols()}, DType::F32}, w.device());
}

namespace {

// qmatmul_t, with an optional transform of x first (norm_w: RMSNorm with that weight [K] of
// x's dtype; silu_up: x = silu_mul(x, silu_up)) and an optional addend (f32, the product's
// shape) added to the result.
Tensor qmatmul_impl(const Tensor& x_arg, const QTensor& w_in, const Tensor* norm_w, double eps, const char* op,
                    const Tensor* addend = nullptr, const Tensor* silu_up = nullptr) {
  require_defined_q(w_in, op);
  if (!x_arg.defined()) throw_error(ErrorKind::InvalidArgument, op, "x is an undefined tensor");
  Tensor x_in = x_arg;
  // The norm / silu_mul is fused into the call (the WebGPU kernel applies it while loading x;
  // the CPU kernels split it off) for f32 operands on a device; otherwise it runs as its own
  // op first (rms_norm / silu_mul validate their operands).
  bool fuse = false;
  const bool on_device = x_in.device().is_webgpu();
  if (norm_w) {
    if (!norm_w->defined()) throw_error(ErrorKind::InvalidArgument, op, "the norm weight is an undefined tensor");
    fuse = x_in.dtype() == DType::F32 && x_in.dim() >= 1 && norm_w->dim() == 1 && norm_w->dtype() == DType::F32 &&
           norm_w->size(0) == x_in.size(-1) && norm_w->device() == x_in.device() && std::isfinite(eps) && eps >= 0 &&
           on_device;
    if (!fuse) x_in = rms_norm(x_in, *norm_w, eps);
  } else if (silu_up) {
    if (!silu_up->defined()) throw_error(ErrorKind::InvalidArgument, op, "up is an undefined tensor");
    fuse = x_in.dtype() == DType::F32 && silu_up->dtype() == DType::F32 && x_in.dim() >= 1 &&
           silu_up->shape() == x_in.shape() && silu_up->device() == x_in.device() && on_device;
    if (!fuse) x_in = silu_mul(x_in, *silu_up);
  }
  if (x_in.dim() < 1) throw_error(ErrorKind::RankMismatch, op, "x must have rank >= 1, got " + x_in.str());
  if (!is_floating(x_in.dtype()))
    throw_error(ErrorKind::DTypeMismatch, op,
                std::string("x must be floating, got ") + dtype_name(x_in.dtype()) + "; cast() it first");
  const int64_t K = x_in.size(-1), N = w_in.rows();
  if (K != w_in.cols())
    throw_error(ErrorKind::ShapeMismatch, op,
                "x " + shape_str(x_in.shape()) + " has K = " + std::to_string(K) + " but the weight " + w_in.str() +
                    " has " + std::to_string(w_in.cols()) + " columns; x's last dim must equal the weight's cols");
  Shape out_shape(x_in.shape().begin(), x_in.shape().end() - 1);
  const int64_t M = checked_numel(out_shape, op);
  out_shape.push_back(N);
  if (addend) {
    ops_detail::require_addend(*addend, out_shape, DType::F32, op);  // the product is f32
    if (addend->device() != x_in.device())
      throw_error(ErrorKind::InvalidArgument, op,
                  "the addend lives on " + addend->device().str() + " but x on " + x_in.device().str() + "; move them to one device first");
  }
  if (x_in.device().is_webgpu() && w_in.device().is_webgpu() && x_in.device() != w_in.device())
    throw_error(ErrorKind::InvalidArgument, op,
                "x lives on " + x_in.device().str() + " but the weight on " + w_in.device().str() +
                    "; move them to one device first");
  // Results live where the operands do (a device operand wins); the runtime places the call.
  const Device dev = x_in.device().is_webgpu() ? x_in.device() : w_in.device();
  if (M == 0 || N == 0) return Tensor::empty(out_shape, DType::F32, dev);
  if (K == 0) {  // empty reduction: y = 0 (+ c)
    const Tensor z = zeros(out_shape, DType::F32, dev);
    return addend ? add(z, *addend) : z;
  }
  // A 2-D x is already [M, K]: no reshape (each one builds shape and stride vectors).
  const bool flat = x_in.dim() == 2;
  Tensor x2 = flat ? x_in : x_in.reshape({M, K});
  if (x2.dtype() != DType::F32) x2 = cast(x2, DType::F32);  // (f32 already when fused)
  OpCall call{OpKind::QMatMul, op, {x2, w_in.bytes()}, {}, {}};
  call.attrs.qtype = static_cast<uint8_t>(w_in.qtype());
  if (addend) {  // inputs[2], laid out like the output
    const Tensor c2 = flat ? *addend : addend->reshape({M, N});
    call.inputs.push_back(c2.is_contiguous() ? c2 : c2.contiguous());
    call.attrs.has_bias = true;
  }
  if (fuse && norm_w) {
    call.inputs.push_back(*norm_w);
    call.attrs.prologue = OpAttrs::Prologue::RmsNorm;
    call.attrs.eps = eps;
  } else if (fuse) {  // up, shaped like x2
    call.inputs.push_back(flat ? *silu_up : silu_up->reshape({M, K}));
    call.attrs.prologue = OpAttrs::Prologue::SiluMul;
  }
  call.work = 2.0 * static_cast<double>(M) * static_cast<double>(N) * static_cast<double>(K);
  Tensor y = Runtime::get().run1(call, {{M, N}, DType::F32}, dev);
  return flat ? y : y.reshape(out_shape);
}

}  // namespace

Tensor qmatmul_t(const Tensor& x, const QTensor& w) { return qmatmul_impl(x, w, nullptr, 0.0, "qmatmul_t"); }

Tensor rms_norm_qmatmul_t(const Tensor& x, const Tensor& weight, const QTensor& w, double eps) {
  return qmatmul_impl(x, w, &weight, eps, "rms_norm_qmatmul_t");
}

Tensor addqmm_t(const Tensor& c, const Tensor& x, const QTensor& w) { return qmatmul_impl(x, w, nullptr, 0.0, "addqmm_t", &c); }

Tensor silu_mul_qmatmul_t(const Tensor& gate, const Tensor& up, const QTensor& w, const std::optional<Tensor>& c) {
  return qmatmul_impl(gate, w, nullptr, 0.0, c ? "silu_mul_addqmm_t" : "silu_mul_qmatmul_t", c ? &*c : nullptr, &up);
}

Tensor get_rows(const QTensor& table_in, const Tensor& ids_in) {
  const char* op = "get_rows";
  require_defined_q(table_in, op);
  if (!ids_in.defined()) throw_error(ErrorKind::InvalidArgument, op, "ids is an undefined tensor");
  if (ids_in.dtype() != DType::I32 && ids_in.dtype() != DType::I64)
    throw_error(ErrorKind::DTypeMismatch, op,
                std::string("ids must be i32 or i64, got ") + dtype_name(ids_in.dtype()) + "; cast() them first");
  Shape out_shape = ids_in.shape();
  out_shape.push_back(table_in.cols());
  const int64_t n = ids_in.numel();
  // Host ids are range-checked here (device ids are checked by the kernel: NaN rows).
  Tensor host_ids;
  if (ids_in.device().is_cpu()) {
    host_ids = cast(ids_in, DType::I64).contiguous();
    const int64_t* id = host_ids.data<int64_t>();
    for (int64_t i = 0; i < n; ++i)
      if (id[i] < 0 || id[i] >= table_in.rows())
        throw_error(ErrorKind::OutOfRange, op,
                    "id " + std::to_string(id[i]) + " at position " + std::to_string(i) + " is outside [0, " +
                        std::to_string(table_in.rows()) + ") of " + table_in.str());
  }
  // Results live where the operands do (a device operand wins); the runtime places the call.
  const Device dev = table_in.device().is_webgpu() ? table_in.device() : ids_in.device();
  if (n == 0 || table_in.cols() == 0) return Tensor::empty(out_shape, DType::F32, dev);
  // Host ids go as i32 (checked above: they index rows, whose count fits i32 in any format's
  // tensor the device can hold); device ids as they are: WebGPU takes i32 only, so a device
  // call with i64 ids is one its backend rejects (and the CPU runs, under fallback).
  const Tensor ids = ids_in.device().is_cpu() ? cast(host_ids, DType::I32) : ids_in.reshape({n});
  OpCall call{OpKind::QGetRows, op,
              {table_in.bytes().view({table_in.rows(), static_cast<int64_t>(table_in.row_bytes())}), ids.reshape({n})},
              {}, {}};
  call.attrs.qtype = static_cast<uint8_t>(table_in.qtype());
  call.work = static_cast<double>(n) * static_cast<double>(table_in.cols());
  return Runtime::get().run1(call, {{n, table_in.cols()}, DType::F32}, dev).reshape(out_shape);
}

}  // namespace wgt
