// Compressed sparse row (CSR) matrices and the ops on them (docs/sparse.md).
//
// A CsrTensor is three ordinary Tensors (indptr, indices, values) plus a shape [rows, cols]:
// moving it (.to(device)), pinning it and the budget all go through the dense machinery, so
// its buffers are resident, evicted and counted like any tensor's. The ops build OpCalls that
// the runtime places by the policy like every other op (CPU reference = oracle, CPU fast,
// WebGPU with fallback and gpu-strict errors).
#pragma once
#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "wgt/tensor.hpp"

namespace wgt {

// What construction does with two entries of one row that have the same column.
enum class Duplicates : uint8_t {
  Reject,  // InvalidArgument naming the row and column (the default)
  Allow,   // kept as they are; every op then treats them as summed (SpMV/SpMM/to_dense add
           // them), except softmax/row max, which see each stored entry on its own
};

struct CsrOptions {
  Duplicates duplicates = Duplicates::Reject;
  // Unsorted column indices within a row are accepted (the sorted() flag says which); with
  // require_sorted they are an InvalidArgument instead.
  bool require_sorted = false;
};

// How a kernel spreads a row's stored entries over threads; chosen per matrix from the row
// statistics (choose_schedule) and used by the WebGPU kernels (the CPU ignores it).
enum class SparseSchedule : uint8_t {
  ThreadPerRow,     // short, uniform rows: one thread walks a whole row
  GroupPerRow,      // longer uniform rows: `lanes` threads split a row, then reduce
  Binned,           // skewed rows: rows binned by length, one dispatch per bin with the
                    // lanes that bin needs (a workgroup per huge row)
  MergePath,        // skewed (power-law) rows: every workgroup takes an equal share of the
                    // merged list of row ends and entries, rows crossing workgroups are
                    // finished by a fix-up pass
  Adaptive,         // SpMV (CSR-Adaptive): host-made row blocks of at most a workgroup's
                    // entries; a workgroup streams its block's entries contiguously and
                    // reduces them per row; a row longer than a block is split over several
                    // blocks and finished by a fix-up pass. SpMM (n > 1) takes the merge path.
};
const char* sparse_schedule_name(SparseSchedule s);

// Row-length statistics, computed once when a CsrTensor is made and shared by its copies.
struct CsrRowStats {
  int64_t rows = 0, nnz = 0;
  int64_t max_len = 0, empty_rows = 0;
  double mean_len = 0, cv = 0;  // coefficient of variation of the row lengths
  // Lengths at which the Binned schedule starts a new bin, and the row lists of the bins:
  // `bin_rows` (i32, host at first, moved with the matrix) holds the row ids of bin b at
  // [bin_start[b], bin_start[b + 1]).
  static constexpr int kBins = 4;
  static constexpr int64_t kBinLanes[kBins] = {1, 8, 32, 256};
  int64_t bin_start[kBins + 1] = {0, 0, 0, 0, 0};
  // The Adaptive schedule's row blocks (sparse/row_blocks.hpp; `row_blocks`, i32, moved with
  // the matrix): how many, and how many rows are longer than a block (split over several).
  // blocks = 0 where none were made (no rows, or 2^31 or more rows or entries).
  int64_t blocks = 0, split_rows = 0;
};

class CsrTensor {
 public:
  CsrTensor() = default;  // undefined

  // From the three arrays (any device): indptr [rows + 1] and indices [nnz] i32 or i64 (one
  // width for both), values [nnz] f32, f16, bf16 or f64, or [batch, nnz] for a batch of
  // matrices sharing the pattern (batch >= 1; every op then runs on each member and returns
  // a leading batch dimension). Validates (typed errors):
  // indptr[0] == 0, indptr monotone, indptr[rows] == nnz, 0 <= indices < cols, the duplicate
  // and sortedness options. Device arrays are read back once for the check.
  static CsrTensor from_parts(const Tensor& indptr, const Tensor& indices, const Tensor& values,
                              const Shape& shape, CsrOptions opt = {});
  // Stored entries = the nonzero (and NaN) entries of a 2-D dense tensor.
  static CsrTensor from_dense(const Tensor& dense, DType index_dtype = DType::I64);
  // COO triplets (rows, cols: i32/i64 [nnz]; values [nnz]) in any order; duplicates summed,
  // result sorted.
  static CsrTensor from_coo(const Tensor& rows, const Tensor& cols, const Tensor& values, const Shape& shape,
                            DType index_dtype = DType::I64);

  bool defined() const { return values_.defined(); }
  int64_t rows() const { return rows_; }
  int64_t cols() const { return cols_; }
  Shape shape() const { return {rows_, cols_}; }
  int64_t nnz() const { return values_.defined() ? values_.size(-1) : 0; }
  // Members of a batch sharing the pattern (values [batch, nnz]); 0 for a single matrix.
  int64_t batch() const { return values_.defined() && values_.dim() == 2 ? values_.size(0) : 0; }
  bool batched() const { return batch() > 0; }
  // Member b of a batch as a single matrix (its values a view of row b); OutOfRange past the
  // batch, InvalidArgument for a single matrix.
  CsrTensor member(int64_t b) const;
  DType dtype() const { return values_.dtype(); }
  DType index_dtype() const { return indptr_.dtype(); }
  Device device() const { return values_.device(); }
  bool sorted() const { return sorted_; }          // column indices ascending within every row
  bool has_duplicates() const { return dups_; }
  const Tensor& indptr() const { return indptr_; }
  const Tensor& indices() const { return indices_; }
  const Tensor& values() const { return values_; }
  const CsrRowStats& stats() const { return *stats_; }
  // Row ids of the Binned schedule's bins (see CsrRowStats), on the matrix's device.
  const Tensor& bin_rows() const { return bin_rows_; }
  // The Adaptive schedule's row blocks (sparse/row_blocks.hpp): i32 [2 (blocks + 1)] pairs
  // (first row, first entry | split flag), on the matrix's device; undefined without blocks.
  const Tensor& row_blocks() const { return row_blocks_; }
  std::string str() const;

  // The same pattern with other values ([nnz] or [batch, nnz], any float dtype, the matrix's
  // device): a single matrix or a batch.
  CsrTensor with_values(const Tensor& values) const;
  // Moves the arrays (and the cached bin lists and row blocks) through Tensor::to.
  CsrTensor to(Device device) const;
  CsrTensor cpu() const { return to(Device::cpu()); }
  // [rows, cols], or [batch, rows, cols] for a batch.
  Tensor to_dense() const;
  // The transpose as a CSR matrix (= this matrix in CSC form): sorted, on this device.
  CsrTensor transpose() const;
  // Sorted within rows, duplicates summed.
  CsrTensor coalesce() const;
  // Pins / unpins all buffers (Runtime::pin semantics).
  void pin() const;
  void unpin() const;

 private:
  Tensor indptr_, indices_, values_, bin_rows_, row_blocks_;
  int64_t rows_ = 0, cols_ = 0;
  bool sorted_ = true, dups_ = false;
  std::shared_ptr<const CsrRowStats> stats_;
  friend struct CsrAccess;
};

// The schedule the kernels use for `a` with `n` dense columns (1 = SpMV), and the lanes per
// row of GroupPerRow.
struct SparsePlan {
  SparseSchedule schedule = SparseSchedule::ThreadPerRow;
  int64_t lanes = 1;
};
SparsePlan choose_schedule(const CsrTensor& a, int64_t n);
// The choice itself, a pure function of the row statistics, the dense column count, whether
// the matrix has its Binned row lists, and a forced schedule (Binned without the lists
// becomes GroupPerRow; Adaptive for SpMM or without row blocks becomes MergePath).
// choose_schedule(a, n) is this with a's statistics and the schedule force_sparse_schedule
// set, else the one WGT_SPARSE_SCHEDULE names (unset or `auto`: the choice by statistics).
SparsePlan choose_schedule(const CsrRowStats& s, int64_t n, bool has_bins, std::optional<SparseSchedule> forced = {});
// Forces a schedule for every later sparse op of the process (nullopt: back to the choice by
// statistics): for tests and benchmarks that compare schedules on one matrix.
void force_sparse_schedule(std::optional<SparseSchedule> s);

// ---- ops ----
// On a batch (values [batch, nnz]) every op runs on each member: the dense operands and the
// results take a leading batch dimension (x [batch, cols] -> [batch, rows], B [batch, cols, n]
// -> [batch, rows, n], row reductions [batch, rows], sddmm x [batch, rows, k] and y
// [batch, k, cols] -> a batch, add with dense [batch, rows, cols]).
// y = A x. x: [cols] (any strides) of A's dtype; y: [rows]. Accumulates in f32 (f64 for f64).
Tensor spmv(const CsrTensor& a, const Tensor& x);
// Y = A B. B: [cols, n] of A's dtype, any strides (row-major, column-major = a transposed
// view, sliced); Y: [rows, n] contiguous.
Tensor spmm(const CsrTensor& a, const Tensor& b);
// Sampled dense-dense product: the pattern of `pattern` with values (x @ y)[i, j] at each
// stored (i, j); x [rows, k], y [k, cols] (any strides), both of one float dtype.
CsrTensor sddmm(const CsrTensor& pattern, const Tensor& x, const Tensor& y);
// dense + A (dense [rows, cols] of A's dtype) -> dense.
Tensor add(const Tensor& dense, const CsrTensor& a);
// A * s (values scaled; same pattern).
CsrTensor scale(const CsrTensor& a, double s);
// Row-wise sum or max over the stored entries: [rows]. An empty row sums to 0; its max is
// -inf. NaN entries propagate.
Tensor sparse_row_sum(const CsrTensor& a);
Tensor sparse_row_max(const CsrTensor& a);
// Softmax of each row over its stored entries only (absent entries are not -inf zeros: they
// stay absent). Same pattern. NaN/+inf rules of the dense softmax per row (docs/semantics.md).
CsrTensor sparse_softmax(const CsrTensor& a);
// The rows `rows` (i32/i64, any order, repeats allowed) as a new CSR matrix [n, cols].
CsrTensor index_select_rows(const CsrTensor& a, const Tensor& rows);

}  // namespace wgt
