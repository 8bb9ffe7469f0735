// CsrTensor: construction with validation, the cached row statistics and bins, placement
// (to / pin) and the schedule choice. Conversions live in csr_convert.cpp.
#include <algorithm>
#include <atomic>
#include <cmath>
#include <string>

#include "runtime/settings.hpp"
#include "sparse/csr_host.hpp"
#include "sparse/row_blocks.hpp"
#include "wgt/runtime.hpp"
#include "wgt/sparse.hpp"

namespace wgt {

const char* sparse_schedule_name(SparseSchedule s) {
  switch (s) {
    case SparseSchedule::ThreadPerRow: return "thread-per-row";
    case SparseSchedule::GroupPerRow: return "group-per-row";
    case SparseSchedule::Binned: return "binned";
    case SparseSchedule::MergePath: return "merge-path";
    case SparseSchedule::Adaptive: return "adaptive";
  }
  return "?";
}

namespace sparse_detail {

std::vector<int64_t> host_ints(const Tensor& t) {
  const Tensor h = t.cpu().contiguous();
  std::vector<int64_t> out(static_cast<size_t>(h.numel()));
  if (h.dtype() == DType::I32) {
    const int32_t* p = h.data<int32_t>();
    for (size_t i = 0; i < out.size(); ++i) out[i] = p[i];
  } else {
    const int64_t* p = h.data<int64_t>();
    std::copy(p, p + out.size(), out.begin());
  }
  return out;
}

Tensor index_tensor(const std::vector<int64_t>& v, DType dt, Device d) {
  if (dt == DType::I64) return Tensor::from_vector(v, {static_cast<int64_t>(v.size())}, d);
  std::vector<int32_t> n(v.begin(), v.end());
  return Tensor::from_vector(n, {static_cast<int64_t>(n.size())}, d);
}

}  // namespace sparse_detail

using namespace sparse_detail;

namespace {

std::atomic<int> g_forced{-1};

void require_1d(const Tensor& t, const char* what, const char* op) {
  if (!t.defined()) throw_error(ErrorKind::InvalidArgument, op, std::string(what) + " is an undefined tensor");
  if (t.dim() != 1)
    throw_error(ErrorKind::RankMismatch, op, std::string(what) + " must be 1-D, got " + t.str());
}

// Row statistics, the Binned schedule's row lists (counting sort of the rows by bin) and the
// Adaptive schedule's row blocks.
std::shared_ptr<CsrRowStats> make_stats(const std::vector<int64_t>& ip, Tensor* bin_rows, Tensor* row_blocks) {
  auto s = std::make_shared<CsrRowStats>();
  const int64_t rows = static_cast<int64_t>(ip.size()) - 1;
  s->rows = rows;
  s->nnz = ip.back();
  double sum2 = 0;
  int64_t count[CsrRowStats::kBins] = {0, 0, 0, 0};
  auto bin_of = [](int64_t len) {
    int b = 0;
    while (b + 1 < CsrRowStats::kBins && len > 4 * CsrRowStats::kBinLanes[b]) ++b;
    return b;
  };
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t len = ip[r + 1] - ip[r];
    s->max_len = std::max(s->max_len, len);
    s->empty_rows += len == 0;
    sum2 += static_cast<double>(len) * static_cast<double>(len);
    ++count[bin_of(len)];
  }
  s->mean_len = rows ? static_cast<double>(s->nnz) / static_cast<double>(rows) : 0.0;
  const double var = rows ? sum2 / static_cast<double>(rows) - s->mean_len * s->mean_len : 0.0;
  s->cv = s->mean_len > 0 ? std::sqrt(std::max(0.0, var)) / s->mean_len : 0.0;
  for (int b = 0; b < CsrRowStats::kBins; ++b) s->bin_start[b + 1] = s->bin_start[b] + count[b];
  // Row ids travel as i32 (the WebGPU kernels' width); larger matrices keep no bins.
  if (rows < (int64_t{1} << 31)) {
    std::vector<int32_t> ids(static_cast<size_t>(rows));
    int64_t at[CsrRowStats::kBins];
    for (int b = 0; b < CsrRowStats::kBins; ++b) at[b] = s->bin_start[b];
    for (int64_t r = 0; r < rows; ++r) ids[static_cast<size_t>(at[bin_of(ip[r + 1] - ip[r])]++)] = static_cast<int32_t>(r);
    *bin_rows = Tensor::from_vector(ids, {rows});
  }
  // Block coordinates are 31-bit too (the top bit of an entry index is the split flag).
  if (rows > 0 && rows < (int64_t{1} << 31) && s->nnz < (int64_t{1} << 31)) {
    RowBlocks rb = partition_row_blocks(ip, static_cast<int64_t>(settings().sparse_lane_entries->value_or(kLaneEntries)));
    s->blocks = rb.blocks;
    s->split_rows = rb.split_rows;
    *row_blocks = Tensor::from_vector(rb.pairs, {static_cast<int64_t>(rb.pairs.size())});
  }
  return s;
}

}  // namespace

struct CsrAccess {
  static CsrTensor make(Tensor ip, Tensor ix, Tensor v, int64_t rows, int64_t cols, bool sorted, bool dups,
                        std::shared_ptr<const CsrRowStats> stats, Tensor bins, Tensor blocks) {
    CsrTensor c;
    c.indptr_ = std::move(ip);
    c.indices_ = std::move(ix);
    c.values_ = std::move(v);
    c.rows_ = rows;
    c.cols_ = cols;
    c.sorted_ = sorted;
    c.dups_ = dups;
    c.stats_ = std::move(stats);
    c.bin_rows_ = std::move(bins);
    c.row_blocks_ = std::move(blocks);
    return c;
  }
};

CsrTensor CsrTensor::from_parts(const Tensor& indptr, const Tensor& indices, const Tensor& values, const Shape& shape,
                                CsrOptions opt) {
  const char* op = "CsrTensor";
  require_1d(indptr, "indptr", op);
  require_1d(indices, "indices", op);
  if (!values.defined()) throw_error(ErrorKind::InvalidArgument, op, "values is an undefined tensor");
  if (values.dim() != 1 && values.dim() != 2)
    throw_error(ErrorKind::RankMismatch, op, "values must be [nnz] or [batch, nnz], got " + values.str());
  if (values.dim() == 2 && values.size(0) == 0)
    throw_error(ErrorKind::InvalidArgument, op, "a batch of CSR matrices needs at least one member");
  if (shape.size() != 2)
    throw_error(ErrorKind::RankMismatch, op, "shape must be [rows, cols], got " + shape_str(shape));
  if (shape[0] < 0 || shape[1] < 0) throw_error(ErrorKind::InvalidArgument, op, "negative dim in " + shape_str(shape));
  if (indptr.dtype() != DType::I32 && indptr.dtype() != DType::I64)
    throw_error(ErrorKind::DTypeMismatch, op, std::string("indptr must be i32 or i64, got ") + dtype_name(indptr.dtype()));
  if (indices.dtype() != indptr.dtype())
    throw_error(ErrorKind::DTypeMismatch, op,
                std::string("indices (") + dtype_name(indices.dtype()) + ") and indptr (" + dtype_name(indptr.dtype()) +
                    ") must have one index dtype");
  if (!is_floating(values.dtype()))
    throw_error(ErrorKind::DTypeMismatch, op,
                std::string("values must be f32, f16, bf16 or f64, got ") + dtype_name(values.dtype()));
  if (indptr.device() != values.device() || indices.device() != values.device())
    throw_error(ErrorKind::InvalidArgument, op, "indptr, indices and values live on different devices");
  const int64_t rows = shape[0], cols = shape[1];
  if (indptr.numel() != rows + 1)
    throw_error(ErrorKind::ShapeMismatch, op,
                "indptr has " + std::to_string(indptr.numel()) + " entries; " + std::to_string(rows) + " rows need " +
                    std::to_string(rows + 1));
  if (indices.numel() != values.size(-1))
    throw_error(ErrorKind::ShapeMismatch, op,
                "indices has " + std::to_string(indices.numel()) + " entries, values " + std::to_string(values.size(-1)) +
                    " per matrix");
  if (indptr.dtype() == DType::I32 && (indices.numel() > INT32_MAX || cols > INT32_MAX))
    throw_error(ErrorKind::InvalidArgument, op, "nnz or cols exceed the i32 index range; use i64 indices");
  const int64_t nnz = indices.numel();
  const std::vector<int64_t> ip = host_ints(indptr);
  if (ip[0] != 0) throw_error(ErrorKind::InvalidArgument, op, "indptr[0] is " + std::to_string(ip[0]) + ", must be 0");
  for (int64_t r = 0; r < rows; ++r)
    if (ip[r + 1] < ip[r])
      throw_error(ErrorKind::InvalidArgument, op,
                  "indptr decreases at row " + std::to_string(r) + " (" + std::to_string(ip[r]) + " > " +
                      std::to_string(ip[r + 1]) + "); it must be monotone");
  if (ip[rows] != nnz)
    throw_error(ErrorKind::InvalidArgument, op,
                "indptr[rows] is " + std::to_string(ip[rows]) + " but there are " + std::to_string(nnz) + " stored entries");
  const std::vector<int64_t> ix = host_ints(indices);
  bool sorted = true, dups = false;
  std::vector<int64_t> seen;  // per-row check of duplicates in unsorted rows
  for (int64_t r = 0; r < rows; ++r) {
    bool row_sorted = true;
    for (int64_t k = ip[r]; k < ip[r + 1]; ++k) {
      if (ix[k] < 0 || ix[k] >= cols)
        throw_error(ErrorKind::OutOfRange, op,
                    "column index " + std::to_string(ix[k]) + " of row " + std::to_string(r) + " is outside [0, " +
                        std::to_string(cols) + ")");
      if (k > ip[r] && ix[k] < ix[k - 1]) row_sorted = false;
      if (k > ip[r] && ix[k] == ix[k - 1]) dups = true;
    }
    if (!row_sorted) {
      sorted = false;
      seen.assign(ix.begin() + ip[r], ix.begin() + ip[r + 1]);
      std::sort(seen.begin(), seen.end());
      if (std::adjacent_find(seen.begin(), seen.end()) != seen.end()) dups = true;
    }
    if (dups && opt.duplicates == Duplicates::Reject)
      throw_error(ErrorKind::InvalidArgument, op,
                  "row " + std::to_string(r) +
                      " stores one column twice; coalesce it (CsrTensor::from_coo sums duplicates) or pass "
                      "Duplicates::Allow");
    if (!sorted && opt.require_sorted)
      throw_error(ErrorKind::InvalidArgument, op, "column indices of row " + std::to_string(r) + " are not ascending");
  }
  Tensor bins, blocks;
  auto stats = make_stats(ip, &bins, &blocks);
  if (bins.defined() && !values.device().is_cpu()) bins = bins.to(values.device());
  if (blocks.defined() && !values.device().is_cpu()) blocks = blocks.to(values.device());
  return CsrAccess::make(indptr, indices, values, rows, cols, sorted, dups, std::move(stats), std::move(bins),
                         std::move(blocks));
}

std::string CsrTensor::str() const {
  if (!defined()) return "CsrTensor(undefined)";
  return std::string("CsrTensor(") + dtype_name(dtype()) + "/" + dtype_name(index_dtype()) + ", " +
         (batched() ? "batch " + std::to_string(batch()) + " x " : std::string()) + shape_str(shape()) + ", nnz " +
         std::to_string(nnz()) + ", " + device().str() + ")";
}

CsrTensor CsrTensor::member(int64_t b) const {
  if (!batched()) throw_error(ErrorKind::InvalidArgument, "CsrTensor::member", str() + " is a single matrix, not a batch");
  if (b < 0 || b >= batch())
    throw_error(ErrorKind::OutOfRange, "CsrTensor::member",
                "member " + std::to_string(b) + " of a batch of " + std::to_string(batch()));
  CsrTensor c = *this;
  c.values_ = values_.select(0, b);
  return c;
}

CsrTensor CsrTensor::with_values(const Tensor& values) const {
  const char* op = "CsrTensor::with_values";
  if (!values.defined()) throw_error(ErrorKind::InvalidArgument, op, "values is an undefined tensor");
  if (values.dim() != 1 && values.dim() != 2)
    throw_error(ErrorKind::RankMismatch, op, "values must be [nnz] or [batch, nnz], got " + values.str());
  if (values.dim() == 2 && values.size(0) == 0)
    throw_error(ErrorKind::InvalidArgument, op, "a batch of CSR matrices needs at least one member");
  if (values.size(-1) != nnz())
    throw_error(ErrorKind::ShapeMismatch, "CsrTensor::with_values",
                "needs " + std::to_string(nnz()) + " values per matrix, got " + std::to_string(values.size(-1)));
  if (!is_floating(values.dtype()))
    throw_error(ErrorKind::DTypeMismatch, "CsrTensor::with_values", std::string("values must be floating, got ") + dtype_name(values.dtype()));
  if (values.device() != device())
    throw_error(ErrorKind::InvalidArgument, "CsrTensor::with_values", "values live on " + values.device().str() + ", the matrix on " + device().str());
  CsrTensor c = *this;
  c.values_ = values;
  return c;
}

CsrTensor CsrTensor::to(Device d) const {
  if (!defined()) throw_error(ErrorKind::InvalidArgument, "CsrTensor::to", "undefined CSR tensor");
  if (d == device()) return *this;
  CsrTensor c = *this;
  c.indptr_ = indptr_.to(d);
  c.indices_ = indices_.to(d);
  c.values_ = values_.to(d);
  if (bin_rows_.defined()) c.bin_rows_ = bin_rows_.to(d);
  if (row_blocks_.defined()) c.row_blocks_ = row_blocks_.to(d);
  return c;
}

void CsrTensor::pin() const {
  for (const Tensor* t : {&indptr_, &indices_, &values_, &bin_rows_, &row_blocks_})
    if (t->defined()) Runtime::get().pin(*t);
}
void CsrTensor::unpin() const {
  for (const Tensor* t : {&indptr_, &indices_, &values_, &bin_rows_, &row_blocks_})
    if (t->defined()) Runtime::get().unpin(*t);
}

void force_sparse_schedule(std::optional<SparseSchedule> s) { g_forced.store(s ? static_cast<int>(*s) : -1); }

SparsePlan choose_schedule(const CsrTensor& a, int64_t n) {
  const int forced = g_forced.load();
  std::optional<SparseSchedule> s;
  if (forced >= 0) s = static_cast<SparseSchedule>(forced);
  else if (const auto& env = *settings().sparse_schedule) s = static_cast<SparseSchedule>(*env);
  return choose_schedule(a.stats(), n, a.bin_rows().defined(), s);
}

SparsePlan choose_schedule(const CsrRowStats& s, int64_t n, bool has_bins, std::optional<SparseSchedule> forced) {
  auto lanes_for = [&](double len) {
    // Enough lanes that each walks a few entries, at most a workgroup's share per row.
    int64_t l = 2;
    while (l < 32 && static_cast<double>(l) * 4 < len) l *= 2;
    return l;
  };
  SparsePlan p;
  if (forced) {
    p.schedule = *forced;
    if (p.schedule == SparseSchedule::Binned && !has_bins) p.schedule = SparseSchedule::GroupPerRow;
    // The Adaptive kernel is SpMV's; SpMM and matrices without blocks take the merge path,
    // which also splits the work evenly whatever the row lengths.
    if (p.schedule == SparseSchedule::Adaptive && (n != 1 || (s.blocks == 0 && s.rows > 0)))
      p.schedule = SparseSchedule::MergePath;
    p.lanes = lanes_for(std::max(s.mean_len, 8.0));
    return p;
  }
  // Skewed: a few rows far longer than the typical one would leave a thread-per-row or
  // fixed-lanes kernel waiting on them (the tail). For SpMM the merge path splits the work
  // evenly whatever the row lengths, with coalesced reads of indptr and the output. For SpMV
  // the adaptive schedule (row blocks of about equal entries, long rows split) measured fastest
  // on the H200's R-MAT, ahead of the binned one (each row length class with its own lanes)
  // and of the merge path, whose partition and fix-up passes cost more than a single column
  // saves (BENCHMARKS.md, run 17); without row blocks the binned schedule, then the merge path.
  const bool skewed = s.max_len > 64 && static_cast<double>(s.max_len) > 8 * s.mean_len + 32 && s.cv > 1.0;
  if (skewed) {
    if (n == 1 && s.blocks > 0) p.schedule = SparseSchedule::Adaptive;
    else p.schedule = n == 1 && has_bins ? SparseSchedule::Binned : SparseSchedule::MergePath;
    p.lanes = lanes_for(std::max(s.mean_len, 8.0));
  } else if (s.mean_len <= 6 || n >= 32) {
    // SpMM with many dense columns already has a thread per output column.
    p.schedule = s.max_len > 256 ? SparseSchedule::GroupPerRow : SparseSchedule::ThreadPerRow;
    p.lanes = lanes_for(s.mean_len);
  } else {
    p.schedule = SparseSchedule::GroupPerRow;
    p.lanes = lanes_for(s.mean_len);
  }
  return p;
}

}  // namespace wgt
