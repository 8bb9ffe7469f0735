// Block-quantized weights compatible with GGUF/ggml (Q8_0, Q4_0, Q4_1, Q5_0, Q5_1, Q4_K, Q5_K, Q6_K):
// the QType tag, the QTensor that holds packed blocks, and the quantized ops.
//
// Quantized weights are not a dense DType on purpose: an element has no size of its own
// (only a block does), so they cannot be viewed, strided or broadcast like a Tensor. A
// QTensor is a 2-D matrix [rows, cols] whose rows are stored as consecutive blocks; cols
// must be a multiple of the format's block size. The packed bytes live in a U8 Tensor so
// they can later move to a device with the usual storage machinery.
#pragma once
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "wgt/tensor.hpp"

namespace wgt {

// Q5_0 and Q5_1 come last so the earlier tags keep their values (they index tables and
// travel in OpAttrs::qtype).
enum class QType : uint8_t { Q8_0, Q4_0, Q4_1, Q4_K, Q5_K, Q6_K, Q5_0, Q5_1 };
constexpr int kNumQTypes = 8;

// Static facts of one format (bit-compatible with GGUF; ggml_type_id is GGUF's type id).
struct QTypeInfo {
  QType type;
  const char* name;      // "q8_0", "q4_k", ...
  uint32_t ggml_type_id;  // id used in GGUF tensor infos
  uint32_t block_elems;   // elements per block (32 or 256)
  uint32_t block_bytes;   // bytes per block
};

const QTypeInfo& qtype_info(QType t);
inline const char* qtype_name(QType t) { return qtype_info(t).name; }
QType qtype_from_name(const std::string& name);      // throws InvalidArgument
std::string qtype_names();                           // "q8_0, q4_0, ...": every format, table order
QType qtype_from_ggml_id(uint32_t ggml_type_id);     // throws Unsupported for other ids

// Bytes needed for `rows` rows of `cols` elements; throws ShapeMismatch when cols is not a
// multiple of the block size, InvalidArgument on negative sizes or overflow.
size_t qtype_row_bytes(QType t, int64_t cols, const char* op = "quant");

class QTensor {
 public:
  QTensor() = default;  // undefined

  // Copies `nbytes` packed bytes (GGUF layout, rows back to back). Throws ShapeMismatch
  // when cols is not a multiple of the block size, Format when nbytes is not exactly
  // rows * row_bytes (a truncated or over-long buffer).
  static QTensor from_bytes(QType type, int64_t rows, int64_t cols, const void* data, size_t nbytes);
  // Wraps an existing contiguous U8 tensor of exactly the right size (no copy).
  static QTensor from_tensor(QType type, int64_t rows, int64_t cols, const Tensor& bytes);

  bool defined() const { return bytes_.defined(); }
  QType qtype() const { return type_; }
  int64_t rows() const { return rows_; }
  int64_t cols() const { return cols_; }
  Shape shape() const { return {rows_, cols_}; }
  size_t row_bytes() const { return row_bytes_; }
  size_t nbytes() const { return row_bytes_ * static_cast<size_t>(rows_); }
  Device device() const { return bytes_.device(); }
  const Tensor& bytes() const { return bytes_; }   // U8 [nbytes]
  const uint8_t* data() const;                     // CPU only; throws RuntimeState otherwise
  QTensor to(Device device) const;                 // explicit transfer of the packed bytes
  std::string str() const;                         // "QTensor(q4_k, [4096, 4096], cpu)"

 private:
  QType type_ = QType::Q8_0;
  int64_t rows_ = 0, cols_ = 0;
  size_t row_bytes_ = 0;
  Tensor bytes_;
};

// Quantizes a 2-D floating tensor [rows, cols] row by row (round to nearest; the K-quants
// search per-sub-block scales/mins by least squares). Non-finite inputs are rejected.
QTensor quantize(const Tensor& w, QType type);
// f32 [rows, cols].
Tensor dequantize(const QTensor& w);
// y = x W^T with W [N, K] quantized and x f32 [..., K] -> f32 [..., N]. W is decoded one
// block at a time (never materialized as f32).
Tensor qmatmul_t(const Tensor& x, const QTensor& w);
// qmatmul_t(rms_norm(x, weight, eps), w): on WebGPU for f32 x (and weight) the decode matvec
// normalizes x while loading it (no norm kernel of its own); otherwise the two ops. Same
// definition either way, huge rows included (docs/semantics.md, "Normalization").
Tensor rms_norm_qmatmul_t(const Tensor& x, const Tensor& weight, const QTensor& w, double eps = 1e-6);
// c + qmatmul_t(x, w), c f32 with the product's shape [..., N] (a residual): on WebGPU the
// decode matvec (M <= 4) adds c as it stores y (no add kernel of its own); otherwise the two ops.
Tensor addqmm_t(const Tensor& c, const Tensor& x, const QTensor& w);
// [c +] qmatmul_t(silu_mul(gate, up), w) (a SwiGLU down projection with its residual c):
// on WebGPU for f32 gate and up the decode matvec computes silu(gate) * up while loading x
// (no silu_mul kernel of its own); otherwise silu_mul first. gate and up: one shape and dtype.
Tensor silu_mul_qmatmul_t(const Tensor& gate, const Tensor& up, const QTensor& w,
                          const std::optional<Tensor>& c = std::nullopt);
// Embedding lookup: ids (i32/i64, any shape) -> f32 [ids.shape..., cols].
Tensor get_rows(const QTensor& table, const Tensor& ids);

}  // namespace wgt
