// CSR conversions: dense <-> CSR, COO -> CSR (duplicates summed), transpose (CSR <-> CSC),
// coalesce and row selection. They run on the host (they are data-dependent reshuffles,
// not arithmetic kernels) and return a matrix on the input's device; values move as raw
// element bits except where duplicates are summed (in double, rounded once).
#include <algorithm>
#include <functional>
#include <cmath>
#include <cstring>
#include <numeric>

#include "sparse/csr_host.hpp"
#include "wgt/sparse.hpp"

namespace wgt {
using namespace sparse_detail;

namespace {

std::vector<uint8_t> host_bytes(const Tensor& t) {
  std::vector<uint8_t> b(t.nbytes());
  if (!b.empty()) t.copy_to_host(b.data(), b.size());
  return b;
}

double load(const std::vector<uint8_t>& b, DType dt, int64_t i) {
  switch (dt) {
    case DType::F32: { float v; std::memcpy(&v, &b[i * 4], 4); return v; }
    case DType::F64: { double v; std::memcpy(&v, &b[i * 8], 8); return v; }
    case DType::F16: { uint16_t h; std::memcpy(&h, &b[i * 2], 2); return f16_to_f32(h); }
    case DType::BF16: { uint16_t h; std::memcpy(&h, &b[i * 2], 2); return bf16_to_f32(h); }
    default: return 0;  // values are floating (checked at construction)
  }
}

void store(std::vector<uint8_t>& b, DType dt, int64_t i, double v) {
  switch (dt) {
    case DType::F32: { float f = static_cast<float>(v); std::memcpy(&b[i * 4], &f, 4); return; }
    case DType::F64: std::memcpy(&b[i * 8], &v, 8); return;
    case DType::F16: { uint16_t h = f32_to_f16(static_cast<float>(v)); std::memcpy(&b[i * 2], &h, 2); return; }
    case DType::BF16: { uint16_t h = f32_to_bf16(static_cast<float>(v)); std::memcpy(&b[i * 2], &h, 2); return; }
    default: return;
  }
}

Tensor values_tensor(const std::vector<uint8_t>& b, int64_t n, DType dt, Device d) {
  return Tensor::from_host(b.data(), b.size(), {n}, dt, d);
}

void require_index_dtype(DType dt, const char* op) {
  if (dt != DType::I32 && dt != DType::I64)
    throw_error(ErrorKind::DTypeMismatch, op, std::string("index dtype must be i32 or i64, got ") + dtype_name(dt));
}

// Gathers elements `perm` of the raw value bytes.
std::vector<uint8_t> permute_bytes(const std::vector<uint8_t>& src, const std::vector<int64_t>& perm, size_t es) {
  std::vector<uint8_t> out(perm.size() * es);
  for (size_t k = 0; k < perm.size(); ++k) std::memcpy(&out[k * es], &src[static_cast<size_t>(perm[k]) * es], es);
  return out;
}

// A conversion of a batch: `f` on every member (which all give one pattern, the pattern being
// shared), the members' new values stacked as [batch, nnz].
CsrTensor per_member(const CsrTensor& a, const std::function<CsrTensor(const CsrTensor&)>& f) {
  CsrTensor first;
  std::vector<uint8_t> bytes;
  for (int64_t b = 0; b < a.batch(); ++b) {
    const CsrTensor c = f(a.member(b));
    if (b == 0) first = c;
    const std::vector<uint8_t> hb = host_bytes(c.values());
    bytes.insert(bytes.end(), hb.begin(), hb.end());
  }
  return first.with_values(Tensor::from_host(bytes.data(), bytes.size(), {a.batch(), first.nnz()}, a.dtype(), a.device()));
}

}  // namespace

CsrTensor CsrTensor::from_dense(const Tensor& dense, DType index_dtype) {
  const char* op = "CsrTensor::from_dense";
  if (!dense.defined()) throw_error(ErrorKind::InvalidArgument, op, "undefined tensor");
  if (dense.dim() != 2) throw_error(ErrorKind::RankMismatch, op, "needs a 2-D tensor, got " + dense.str());
  if (!is_floating(dense.dtype()))
    throw_error(ErrorKind::DTypeMismatch, op, std::string("needs a floating dtype, got ") + dtype_name(dense.dtype()));
  require_index_dtype(index_dtype, op);
  const int64_t rows = dense.size(0), cols = dense.size(1);
  const DType dt = dense.dtype();
  const size_t es = dtype_size(dt);
  const std::vector<uint8_t> b = host_bytes(dense);
  std::vector<int64_t> ip(static_cast<size_t>(rows) + 1, 0), ix, src;
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t c = 0; c < cols; ++c) {
      const double v = load(b, dt, r * cols + c);
      if (v != 0.0 || std::isnan(v)) {  // NaN compares unequal to 0 too; explicit for the reader
        ix.push_back(c);
        src.push_back(r * cols + c);
      }
    }
    ip[static_cast<size_t>(r) + 1] = static_cast<int64_t>(ix.size());
  }
  const Device d = dense.device();
  return from_parts(index_tensor(ip, index_dtype, d), index_tensor(ix, index_dtype, d),
                    values_tensor(permute_bytes(b, src, es), static_cast<int64_t>(src.size()), dt, d), {rows, cols});
}

CsrTensor CsrTensor::from_coo(const Tensor& rows_t, const Tensor& cols_t, const Tensor& values, const Shape& shape,
                              DType index_dtype) {
  const char* op = "CsrTensor::from_coo";
  for (const Tensor* t : {&rows_t, &cols_t, &values}) {
    if (!t->defined()) throw_error(ErrorKind::InvalidArgument, op, "undefined tensor");
    if (t->dim() != 1) throw_error(ErrorKind::RankMismatch, op, "rows, cols and values must be 1-D, got " + t->str());
  }
  require_index_dtype(rows_t.dtype(), op);
  require_index_dtype(cols_t.dtype(), op);
  require_index_dtype(index_dtype, op);
  if (!is_floating(values.dtype()))
    throw_error(ErrorKind::DTypeMismatch, op, std::string("values must be floating, got ") + dtype_name(values.dtype()));
  if (rows_t.numel() != values.numel() || cols_t.numel() != values.numel())
    throw_error(ErrorKind::ShapeMismatch, op, "rows, cols and values must have one length");
  if (shape.size() != 2 || shape[0] < 0 || shape[1] < 0)
    throw_error(ErrorKind::InvalidArgument, op, "shape must be [rows, cols], got " + shape_str(shape));
  const std::vector<int64_t> r = host_ints(rows_t), c = host_ints(cols_t);
  const int64_t n = values.numel();
  for (int64_t k = 0; k < n; ++k)
    if (r[k] < 0 || r[k] >= shape[0] || c[k] < 0 || c[k] >= shape[1])
      throw_error(ErrorKind::OutOfRange, op,
                  "entry " + std::to_string(k) + " at (" + std::to_string(r[k]) + ", " + std::to_string(c[k]) +
                      ") is outside " + shape_str(shape));
  std::vector<int64_t> order(static_cast<size_t>(n));
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) { return r[a] != r[b] ? r[a] < r[b] : c[a] < c[b]; });
  const DType dt = values.dtype();
  const std::vector<uint8_t> vb = host_bytes(values);
  std::vector<int64_t> ip(static_cast<size_t>(shape[0]) + 1, 0), ix;
  std::vector<double> acc;
  for (int64_t k = 0; k < n; ++k) {
    const int64_t e = order[k];
    if (k > 0 && r[e] == r[order[k - 1]] && c[e] == c[order[k - 1]]) {
      acc.back() += load(vb, dt, e);
    } else {
      ix.push_back(c[e]);
      acc.push_back(load(vb, dt, e));
      ++ip[static_cast<size_t>(r[e]) + 1];
    }
  }
  for (size_t i = 1; i < ip.size(); ++i) ip[i] += ip[i - 1];
  std::vector<uint8_t> out(acc.size() * dtype_size(dt));
  for (size_t k = 0; k < acc.size(); ++k) store(out, dt, static_cast<int64_t>(k), acc[k]);
  const Device d = values.device();
  return from_parts(index_tensor(ip, index_dtype, d), index_tensor(ix, index_dtype, d),
                    values_tensor(out, static_cast<int64_t>(acc.size()), dt, d), shape);
}

Tensor CsrTensor::to_dense() const {
  if (!defined()) throw_error(ErrorKind::InvalidArgument, "CsrTensor::to_dense", "undefined CSR tensor");
  if (batched()) {
    std::vector<uint8_t> bytes;
    for (int64_t b = 0; b < batch(); ++b) {
      const std::vector<uint8_t> hb = host_bytes(member(b).to_dense());
      bytes.insert(bytes.end(), hb.begin(), hb.end());
    }
    return Tensor::from_host(bytes.data(), bytes.size(), {batch(), rows_, cols_}, dtype(), device());
  }
  const std::vector<int64_t> ip = host_ints(indptr_), ix = host_ints(indices_);
  const std::vector<uint8_t> vb = host_bytes(values_);
  // Duplicates are summed in double and rounded once, like from_coo.
  std::vector<double> acc(static_cast<size_t>(rows_ * cols_), 0.0);
  for (int64_t r = 0; r < rows_; ++r)
    for (int64_t k = ip[r]; k < ip[r + 1]; ++k) acc[static_cast<size_t>(r * cols_ + ix[k])] += load(vb, dtype(), k);
  std::vector<uint8_t> out(acc.size() * dtype_size(dtype()));
  for (size_t i = 0; i < acc.size(); ++i) store(out, dtype(), static_cast<int64_t>(i), acc[i]);
  return Tensor::from_host(out.data(), out.size(), {rows_, cols_}, dtype(), device());
}

CsrTensor CsrTensor::transpose() const {
  if (batched()) return per_member(*this, [](const CsrTensor& m) { return m.transpose(); });
  if (!defined()) throw_error(ErrorKind::InvalidArgument, "CsrTensor::transpose", "undefined CSR tensor");
  const std::vector<int64_t> ip = host_ints(indptr_), ix = host_ints(indices_);
  // Counting sort by column; walking rows in order leaves each output row sorted by its
  // column (the input row), and duplicates stay adjacent.
  std::vector<int64_t> tp(static_cast<size_t>(cols_) + 1, 0);
  for (int64_t c : ix) ++tp[static_cast<size_t>(c) + 1];
  for (size_t i = 1; i < tp.size(); ++i) tp[i] += tp[i - 1];
  std::vector<int64_t> at(tp.begin(), tp.end() - 1), tix(ix.size()), perm(ix.size());
  for (int64_t r = 0; r < rows_; ++r)
    for (int64_t k = ip[r]; k < ip[r + 1]; ++k) {
      const int64_t dst = at[static_cast<size_t>(ix[k])]++;
      tix[dst] = r;
      perm[dst] = k;
    }
  const Device d = device();
  CsrOptions opt;
  opt.duplicates = dups_ ? Duplicates::Allow : Duplicates::Reject;
  return from_parts(index_tensor(tp, index_dtype(), d), index_tensor(tix, index_dtype(), d),
                    values_tensor(permute_bytes(host_bytes(values_), perm, dtype_size(dtype())), nnz(), dtype(), d),
                    {cols_, rows_}, opt);
}

CsrTensor CsrTensor::coalesce() const {
  if (batched()) return per_member(*this, [](const CsrTensor& m) { return m.coalesce(); });
  if (!defined()) throw_error(ErrorKind::InvalidArgument, "CsrTensor::coalesce", "undefined CSR tensor");
  if (sorted_ && !dups_) return *this;
  const std::vector<int64_t> ip = host_ints(indptr_);
  std::vector<int64_t> r(static_cast<size_t>(nnz()));
  for (int64_t i = 0; i < rows_; ++i) std::fill(r.begin() + ip[i], r.begin() + ip[i + 1], i);
  return from_coo(index_tensor(r, index_dtype(), device()), indices_, values_, shape(), index_dtype());
}

CsrTensor index_select_rows(const CsrTensor& a, const Tensor& rows) {
  const char* op = "index_select_rows";
  if (!a.defined() || !rows.defined()) throw_error(ErrorKind::InvalidArgument, op, "undefined input");
  if (rows.dim() != 1) throw_error(ErrorKind::RankMismatch, op, "rows must be 1-D, got " + rows.str());
  require_index_dtype(rows.dtype(), op);
  if (a.batched()) return per_member(a, [&](const CsrTensor& m) { return index_select_rows(m, rows); });
  const std::vector<int64_t> sel = host_ints(rows), ip = host_ints(a.indptr()), ix = host_ints(a.indices());
  std::vector<int64_t> nip(sel.size() + 1, 0), nix, perm;
  for (size_t i = 0; i < sel.size(); ++i) {
    const int64_t r = sel[i];
    if (r < 0 || r >= a.rows())
      throw_error(ErrorKind::OutOfRange, op,
                  "row " + std::to_string(r) + " is out of range for " + std::to_string(a.rows()) + " rows");
    for (int64_t k = ip[r]; k < ip[r + 1]; ++k) {
      nix.push_back(ix[k]);
      perm.push_back(k);
    }
    nip[i + 1] = static_cast<int64_t>(nix.size());
  }
  const Device d = a.device();
  CsrOptions opt;
  opt.duplicates = a.has_duplicates() ? Duplicates::Allow : Duplicates::Reject;
  return CsrTensor::from_parts(
      index_tensor(nip, a.index_dtype(), d), index_tensor(nix, a.index_dtype(), d),
      values_tensor(permute_bytes(host_bytes(a.values()), perm, dtype_size(a.dtype())), static_cast<int64_t>(perm.size()),
                    a.dtype(), d),
      {static_cast<int64_t>(sel.size()), a.cols()}, opt);
}

}  // namespace wgt
