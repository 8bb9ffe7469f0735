// The Adaptive SpMV schedule's row blocks (sparse/row_blocks.hpp, pure host code): hand-made
// boundary cases (no rows, all rows empty, the entry budget met exactly and exceeded by one,
// a row of exactly the budget, a row longer than it, a long row among short ones) and the
// partition's invariants checked block by block on the generated families, and the blocks a
// CsrTensor keeps with its statistics.
#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "sparse/generate.hpp"
#include "sparse/row_blocks.hpp"
#include "wgt/wgt.hpp"

using namespace wgt;
using namespace wgt::sparse_detail;

namespace {

std::vector<int64_t> indptr_of(const std::vector<int64_t>& lens) {
  std::vector<int64_t> ip{0};
  for (int64_t l : lens) ip.push_back(ip.back() + l);
  return ip;
}

struct Block {
  int64_t row, k;
  bool split;
  bool operator==(const Block&) const = default;
};

std::vector<Block> blocks_of(const RowBlocks& rb) {
  std::vector<Block> out;
  for (size_t i = 0; i + 1 < rb.pairs.size(); i += 2) {
    const auto w = static_cast<uint32_t>(rb.pairs[i + 1]);
    out.push_back({rb.pairs[i], static_cast<int64_t>(w & ~kSplitFlag), (w & kSplitFlag) != 0});
  }
  return out;
}

// Every property the kernel relies on, block by block.
void expect_valid_partition(const std::vector<int64_t>& ip, const RowBlocks& rb, const char* what,
                            int64_t lane_entries = kLaneEntries) {
  SCOPED_TRACE(what);
  const int64_t rows = static_cast<int64_t>(ip.size()) - 1;
  const std::vector<Block> b = blocks_of(rb);
  ASSERT_EQ(static_cast<int64_t>(b.size()), rb.blocks + 1);
  EXPECT_EQ(b.back(), (Block{rows, ip[rows], false}));
  EXPECT_EQ(b.front().row, 0);
  EXPECT_EQ(b.front().k, 0);
  int64_t split_rows = 0;
  for (int64_t i = 0; i < rb.blocks; ++i) {
    const Block &cur = b[i], &next = b[i + 1];
    const int64_t entries = next.k - cur.k;
    EXPECT_GE(entries, 0) << "block " << i;
    EXPECT_LE(entries, kBlockEntries) << "block " << i;
    if (cur.split) {
      // A chunk of a row longer than a block; the row's chunks are consecutive and cover it.
      const int64_t r = cur.row;
      EXPECT_GT(ip[r + 1] - ip[r], kBlockEntries) << "block " << i;
      EXPECT_GT(entries, 0) << "block " << i;
      const bool first = i == 0 || !b[i - 1].split || b[i - 1].row != r;
      if (first) {
        EXPECT_EQ(cur.k, ip[r]) << "block " << i;
        ++split_rows;
      }
      const bool last = !next.split || next.row != r;
      if (last) {
        EXPECT_EQ(next.k, ip[r + 1]) << "block " << i;
        EXPECT_EQ(next.row, r + 1) << "block " << i;
      } else {
        EXPECT_EQ(entries, kBlockEntries) << "block " << i;
      }
    } else {
      const int64_t n = next.row - cur.row;
      EXPECT_GE(n, 1) << "block " << i;
      EXPECT_LE(n, kBlockRows) << "block " << i;
      EXPECT_EQ(cur.k, ip[cur.row]) << "block " << i;
      EXPECT_EQ(next.k, ip[next.row]) << "block " << i;
      int64_t longest = 0;
      for (int64_t r = cur.row; r < next.row; ++r) longest = std::max(longest, ip[r + 1] - ip[r]);
      EXPECT_LE(longest, kBlockEntries) << "block " << i;
      if (n > 1) {
        EXPECT_LE(longest, lane_entries * block_lanes(n)) << "block " << i;
      }
    }
  }
  EXPECT_EQ(split_rows, rb.split_rows);
}

}  // namespace

TEST(SparseRowBlocks, LanesPerRow) {
  EXPECT_EQ(block_lanes(1), kBlockRows);
  EXPECT_EQ(block_lanes(2), kBlockRows / 2);
  EXPECT_EQ(block_lanes(3), kBlockRows / 4);
  EXPECT_EQ(block_lanes(kBlockRows / 2), 2);
  EXPECT_EQ(block_lanes(kBlockRows / 2 + 1), 1);
  EXPECT_EQ(block_lanes(kBlockRows), 1);
}

TEST(SparseRowBlocks, NoRowsAndEmptyRows) {
  RowBlocks rb = partition_row_blocks({0});
  EXPECT_EQ(rb.blocks, 0);
  EXPECT_EQ(rb.pairs, (std::vector<int32_t>{0, 0}));
  // 600 empty rows: blocks of kBlockRows rows, every one written by the kernel.
  const std::vector<int64_t> ip(601, 0);
  rb = partition_row_blocks(ip);
  EXPECT_EQ(blocks_of(rb), (std::vector<Block>{{0, 0, false}, {256, 0, false}, {512, 0, false}, {600, 0, false}}));
  EXPECT_EQ(rb.split_rows, 0);
  expect_valid_partition(ip, rb, "empty rows");
}

TEST(SparseRowBlocks, EntryBudget) {
  const int64_t D = kBlockEntries;
  // Four rows of D / 4: exactly the budget, one block; a fifth row starts the next.
  std::vector<int64_t> ip = indptr_of({D / 4, D / 4, D / 4, D / 4, 1});
  EXPECT_EQ(blocks_of(partition_row_blocks(ip)), (std::vector<Block>{{0, 0, false}, {4, D, false}, {5, D + 1, false}}));
  // One entry more than the budget over two rows: two blocks.
  ip = indptr_of({D / 2, D / 2 + 1});
  EXPECT_EQ(blocks_of(partition_row_blocks(ip)),
            (std::vector<Block>{{0, 0, false}, {1, D / 2, false}, {2, D + 1, false}}));
  // A row of exactly the budget is not split.
  ip = indptr_of({D, 1});
  const RowBlocks rb = partition_row_blocks(ip);
  EXPECT_EQ(blocks_of(rb), (std::vector<Block>{{0, 0, false}, {1, D, false}, {2, D + 1, false}}));
  EXPECT_EQ(rb.split_rows, 0);
}

TEST(SparseRowBlocks, RowLongerThanTheBudget) {
  const int64_t D = kBlockEntries;
  // 2 D + 452 entries: chunks of D, D and 452 between two stream blocks.
  const std::vector<int64_t> ip = indptr_of({3, 2 * D + 452, 5, 0});
  const RowBlocks rb = partition_row_blocks(ip);
  EXPECT_EQ(blocks_of(rb), (std::vector<Block>{{0, 0, false},
                                               {1, 3, true},
                                               {1, 3 + D, true},
                                               {1, 3 + 2 * D, true},
                                               {2, 3 + 2 * D + 452, false},
                                               {4, 3 + 2 * D + 457, false}}));
  EXPECT_EQ(rb.split_rows, 1);
  expect_valid_partition(ip, rb, "long row");
  // Two long rows in a row: their chunks stay apart.
  const std::vector<int64_t> ip2 = indptr_of({D + 1, 2 * D});
  const RowBlocks rb2 = partition_row_blocks(ip2);
  EXPECT_EQ(rb2.split_rows, 2);
  EXPECT_EQ(rb2.blocks, 4);
  expect_valid_partition(ip2, rb2, "two long rows");
}

TEST(SparseRowBlocks, LongRowAmongShortOnes) {
  // A row of 8 kLaneEntries + 1 then rows of 1: a lane of the long row may add at most
  // kLaneEntries entries, so its row needs 16 lanes: 16 rows per block, not the kBlockRows
  // that the budget alone allows.
  std::vector<int64_t> lens{8 * kLaneEntries + 1};
  lens.resize(300, 1);
  const std::vector<int64_t> ip = indptr_of(lens);
  ASSERT_LE(lens[0] + 299, kBlockEntries);
  const std::vector<Block> b = blocks_of(partition_row_blocks(ip));
  ASSERT_GE(b.size(), 2u);
  EXPECT_EQ(b[1].row, 16);
  expect_valid_partition(ip, partition_row_blocks(ip), "long among short");
}

// The lanes' serial share is a parameter (WGT_SPARSE_LANE_ENTRIES): the row of 8 * 64 + 1
// entries needs 64 lanes at 16 entries per lane (4 rows per block), 4 lanes at 256 (64 rows),
// one at 2048 (a whole block of kBlockRows rows); every choice stays a valid partition.
TEST(SparseRowBlocks, LaneEntriesParameter) {
  std::vector<int64_t> lens{8 * kLaneEntries + 1};
  lens.resize(300, 1);
  const std::vector<int64_t> ip = indptr_of(lens);
  EXPECT_EQ(blocks_of(partition_row_blocks(ip, 16))[1].row, 4);
  EXPECT_EQ(blocks_of(partition_row_blocks(ip, 256))[1].row, 64);
  EXPECT_EQ(blocks_of(partition_row_blocks(ip, 2048))[1].row, kBlockRows);
  using namespace sparse_gen;
  const HostCsr r = rmat(12, 16, 3);
  int64_t last = -1;
  for (int64_t e : {1, 4, 16, 64, 512, 2048}) {
    const RowBlocks rb = partition_row_blocks(r.indptr, e);
    expect_valid_partition(r.indptr, rb, ("rmat, lane entries " + std::to_string(e)).c_str(), e);
    if (last >= 0) {
      EXPECT_LE(rb.blocks, last) << e;  // a larger share never needs more blocks
    }
    last = rb.blocks;
  }
}

TEST(SparseRowBlocks, GeneratedFamilies) {
  using namespace sparse_gen;
  const std::pair<const char*, HostCsr> mats[] = {{"rmat", rmat(12, 16, 3)},
                                                  {"mixed", mixed(500, 4000, 6, 0.5, 7, 2)},
                                                  {"laplacian", laplacian_2d(40)},
                                                  {"uniform", uniform(700, 700, 30, 5)},
                                                  {"empty", empty_rows(3, 3)}};
  for (const auto& [name, h] : mats) expect_valid_partition(h.indptr, partition_row_blocks(h.indptr), name);
}

TEST(SparseRowBlocks, KeptWithTheMatrix) {
  const sparse_gen::HostCsr h = sparse_gen::mixed(300, 3000, 4, 0.4, 11, 9);  // row 11 holds 3000 entries
  const CsrTensor a = sparse_gen::to_csr(h, DType::I32);
  const RowBlocks rb = partition_row_blocks(h.indptr);
  ASSERT_TRUE(a.row_blocks().defined());
  EXPECT_EQ(a.row_blocks().to_vector<int32_t>(), rb.pairs);
  EXPECT_EQ(a.stats().blocks, rb.blocks);
  EXPECT_EQ(a.stats().split_rows, 1);
  // Copies share them; a matrix without rows has none.
  EXPECT_EQ(a.with_values(a.values()).row_blocks().to_vector<int32_t>(), rb.pairs);
  const CsrTensor z = sparse_gen::to_csr(sparse_gen::empty_rows(0, 4));
  EXPECT_FALSE(z.row_blocks().defined());
  EXPECT_EQ(z.stats().blocks, 0);
}
