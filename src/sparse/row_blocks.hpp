// The row blocks of the Adaptive SpMV schedule (CSR-Adaptive): consecutive rows grouped so
// that one workgroup of kBlockRows invocations streams a block's stored entries with
// coalesced loads (at most kBlockEntries of them, staged in workgroup memory) and reduces
// them per row. Made once on the host when a CsrTensor is constructed (like the Binned row
// lists) and moved with the matrix.
//
// A block is one of:
//   - a stream block: rows [row0, next row0), at most kBlockRows of them, whose entries
//     [k0, next k0) number at most kBlockEntries. The kernel gives each row
//     block_lanes(rows) lanes; the partition closes a block before a row would leave one lane
//     more than kLaneEntries entries to add serially, so a long row among short ones does not
//     keep the whole workgroup waiting on it;
//   - a chunk of a row longer than kBlockEntries (the split flag): entries [k0, next k0) of
//     row row0, reduced by the whole workgroup into a partial sum that a fix-up pass adds to
//     the row's other chunks.
// Empty rows are ordinary rows of stream blocks (written 0). Encoding: i32 pairs
// (row0, k0 | kSplitFlag), blocks + 1 of them, the last (rows, nnz).
#pragma once
#include <cstdint>
#include <vector>

namespace wgt::sparse_detail {

// Sizes weighed on a model of the H200 (the schedule as a whole is measured in BENCHMARKS.md,
// run 17; these sizes were not swept there): fewer, fuller blocks save
// each block's fixed latency (its header, two dependent global loads, barriers), while a
// lane's serial additions from workgroup memory overlap other resident blocks' loads; on an
// R-MAT matrix, bounding the serial share at 16 entries left blocks half full. The serial
// share is the one size the kernel does not compile in: WGT_SPARSE_LANE_ENTRIES sets it for
// the matrices made after (a sweep without a rebuild).
constexpr int64_t kBlockEntries = 2048;  // entries of one block (the workgroup's staging)
constexpr int64_t kBlockRows = 256;      // rows of one stream block (the workgroup's size)
constexpr int64_t kLaneEntries = 64;     // most entries one lane of a stream block adds alone (default)
constexpr uint32_t kSplitFlag = 0x80000000u;

// Lanes per row of a stream block of `rows` rows: the largest power of two with
// rows * lanes <= kBlockRows (the shader computes the same).
int64_t block_lanes(int64_t rows);

struct RowBlocks {
  std::vector<int32_t> pairs;  // 2 (blocks + 1) words, as above
  int64_t blocks = 0, split_rows = 0;
};

// The blocks of a CSR matrix's indptr (rows + 1 entries, valid; rows and nnz below 2^31), a
// lane of a stream block of several rows adding at most lane_entries (>= 1) entries alone.
// No rows: no blocks (pairs is the sentinel (0, 0) alone).
RowBlocks partition_row_blocks(const std::vector<int64_t>& indptr, int64_t lane_entries = kLaneEntries);

}  // namespace wgt::sparse_detail
