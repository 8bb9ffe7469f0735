// Format table look-ups, the K-quant scale packing and the WGSL constant emitter.
#include "quant/blocks.hpp"

#include <array>
#include <sstream>

#include "wgt/error.hpp"

namespace wgt {

const QTypeInfo& qtype_info(QType t) {
  const int i = static_cast<int>(t);
  if (i < 0 || i >= kNumQTypes)
    throw_error(ErrorKind::InvalidArgument, "qtype_info", "unknown QType value " + std::to_string(i));
  return quant::kQTypeTable[i];
}

std::string qtype_names() {
  std::string s;
  for (const QTypeInfo& info : quant::kQTypeTable) s += (s.empty() ? "" : ", ") + std::string(info.name);
  return s;
}

QType qtype_from_name(const std::string& name) {
  for (const QTypeInfo& info : quant::kQTypeTable)
    if (name == info.name) return info.type;
  throw_error(ErrorKind::InvalidArgument, "qtype_from_name", "unknown quantized type '" + name + "'; use one of " + qtype_names());
}

QType qtype_from_ggml_id(uint32_t id) {
  for (const QTypeInfo& info : quant::kQTypeTable)
    if (id == info.ggml_type_id) return info.type;
  std::string ids;
  for (const QTypeInfo& info : quant::kQTypeTable)
    ids += (ids.empty() ? "" : ", ") + std::to_string(info.ggml_type_id) + " (" + info.name + ")";
  throw_error(ErrorKind::Unsupported, "qtype_from_ggml_id",
              "ggml type id " + std::to_string(id) + " is not a supported quantized format (supported: " + ids +
                  "); dequantize it offline or convert the model to a supported format");
}

size_t qtype_row_bytes(QType t, int64_t cols, const char* op) {
  const QTypeInfo& info = qtype_info(t);
  if (cols < 0) throw_error(ErrorKind::InvalidArgument, op, "negative column count " + std::to_string(cols));
  if (cols % info.block_elems != 0)
    throw_error(ErrorKind::ShapeMismatch, op,
                std::string("format ") + info.name + " packs blocks of " + std::to_string(info.block_elems) +
                    " elements, but the row length is " + std::to_string(cols) +
                    "; pad the rows to a multiple of " + std::to_string(info.block_elems) +
                    " or pick a format with a smaller block");
  const int64_t blocks = cols / info.block_elems;
  return static_cast<size_t>(checked_mul(blocks, info.block_bytes, op));
}

namespace quant {

void pack_scales_mins_k(const uint8_t sc[8], const uint8_t mn[8], uint8_t out[kKScaleBytes]) {
  for (int j = 0; j < 4; ++j) {
    out[j] = static_cast<uint8_t>((sc[j] & 63) | ((sc[j + 4] >> 4) << 6));
    out[j + 4] = static_cast<uint8_t>((mn[j] & 63) | ((mn[j + 4] >> 4) << 6));
    out[j + 8] = static_cast<uint8_t>((sc[j + 4] & 0x0F) | ((mn[j + 4] & 0x0F) << 4));
  }
}

namespace {
void line(std::ostringstream& os, const char* name, size_t v) {
  os << "const " << name << ": u32 = " << v << "u;\n";
}
}  // namespace

namespace {
std::string build_block_constants(QType t) {
  const QTypeInfo& info = qtype_info(t);
  std::ostringstream os;
  os << "// " << info.name << " block layout (generated from src/quant/blocks.hpp)\n";
  line(os, "QK", info.block_elems);
  line(os, "Q_BLOCK_BYTES", info.block_bytes);
  switch (t) {
    case QType::Q8_0:
      line(os, "Q_OFF_D", offsetof(BlockQ8_0, d));
      line(os, "Q_OFF_QS", offsetof(BlockQ8_0, qs));
      break;
    case QType::Q4_0:
      line(os, "Q_OFF_D", offsetof(BlockQ4_0, d));
      line(os, "Q_ZERO", kQ4_0Zero);
      line(os, "Q_OFF_QS", offsetof(BlockQ4_0, qs));
      break;
    case QType::Q4_1:
      line(os, "Q_OFF_D", offsetof(BlockQ4_1, d));
      line(os, "Q_OFF_M", offsetof(BlockQ4_1, m));
      line(os, "Q_OFF_QS", offsetof(BlockQ4_1, qs));
      break;
    case QType::Q5_0:
      line(os, "Q_OFF_D", offsetof(BlockQ5_0, d));
      line(os, "Q_OFF_QH", offsetof(BlockQ5_0, qh));
      line(os, "Q_OFF_QS", offsetof(BlockQ5_0, qs));
      line(os, "Q_ZERO", kQ5_0Zero);
      break;
    case QType::Q5_1:
      line(os, "Q_OFF_D", offsetof(BlockQ5_1, d));
      line(os, "Q_OFF_M", offsetof(BlockQ5_1, m));
      line(os, "Q_OFF_QH", offsetof(BlockQ5_1, qh));
      line(os, "Q_OFF_QS", offsetof(BlockQ5_1, qs));
      break;
    case QType::Q4_K:
      line(os, "Q_OFF_D", offsetof(BlockQ4_K, d));
      line(os, "Q_OFF_DMIN", offsetof(BlockQ4_K, dmin));
      line(os, "Q_OFF_SCALES", offsetof(BlockQ4_K, scales));
      line(os, "Q_OFF_QS", offsetof(BlockQ4_K, qs));
      line(os, "Q_SUB", kKSub);
      break;
    case QType::Q5_K:
      line(os, "Q_OFF_D", offsetof(BlockQ5_K, d));
      line(os, "Q_OFF_DMIN", offsetof(BlockQ5_K, dmin));
      line(os, "Q_OFF_SCALES", offsetof(BlockQ5_K, scales));
      line(os, "Q_OFF_QH", offsetof(BlockQ5_K, qh));
      line(os, "Q_OFF_QS", offsetof(BlockQ5_K, qs));
      line(os, "Q_SUB", kKSub);
      break;
    case QType::Q6_K:
      line(os, "Q_OFF_QL", offsetof(BlockQ6_K, ql));
      line(os, "Q_OFF_QH", offsetof(BlockQ6_K, qh));
      line(os, "Q_OFF_SCALES", offsetof(BlockQ6_K, scales));
      line(os, "Q_OFF_D", offsetof(BlockQ6_K, d));
      line(os, "Q_SUB", kQ6KSub);
      line(os, "Q_ZERO", kQ6KZero);
      break;
  }
  return os.str();
}
}  // namespace

const std::string& wgsl_block_constants(QType t) {
  (void)qtype_info(t);  // InvalidArgument for a value outside the table
  // Built on first use, thread-safe (static initialization); one ostringstream per format
  // per process instead of one per kernel launch.
  static const std::array<std::string, kNumQTypes> table = [] {
    std::array<std::string, kNumQTypes> a;
    for (int i = 0; i < kNumQTypes; ++i) a[i] = build_block_constants(static_cast<QType>(i));
    return a;
  }();
  return table[static_cast<int>(t)];
}

}  // namespace quant
}  // namespace wgt
