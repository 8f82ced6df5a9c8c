// Chain hash -> slot, for the prefix cache: open addressing with linear probing and backward-
// shift deletion over one flat array, so a lookup is one or two cache lines rather than a
// node per entry (the prefix cache looks up every block of every arrival on every replica the
// router weighs). Ids are mixed before probing: traces' ids can be small consecutive integers.
// Internal to src/sim.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace gw::sim_detail {

class BlockIndex {
 public:
  // The slot filed under id, or -1.
  int find(unsigned long long id) const {
    if (size_ == 0) return -1;
    for (size_t i = home(id);; i = (i + 1) & mask_) {
      const Cell& c = cells_[i];
      if (c.slot < 0) return -1;
      if (c.id == id) return c.slot;
    }
  }
  // Files slot under id, which must not be filed yet.
  void insert(unsigned long long id, int slot) {
    if ((size_ + 1) * 2 > cells_.size()) grow();
    size_t i = home(id);
    while (cells_[i].slot >= 0) i = (i + 1) & mask_;
    cells_[i] = Cell{id, slot};
    ++size_;
  }
  // Removes id (a no-op when not filed).
  void erase(unsigned long long id) {
    if (size_ == 0) return;
    size_t i = home(id);
    while (cells_[i].slot >= 0 && cells_[i].id != id) i = (i + 1) & mask_;
    if (cells_[i].slot < 0) return;
    // Backward shift: later cells of the run move into the hole when their home allows it.
    for (size_t j = (i + 1) & mask_; cells_[j].slot >= 0; j = (j + 1) & mask_) {
      const size_t h = home(cells_[j].id);
      const bool movable = i <= j ? (h <= i || h > j) : (h <= i && h > j);
      if (movable) {
        cells_[i] = cells_[j];
        i = j;
      }
    }
    cells_[i] = Cell{};
    --size_;
  }
  size_t size() const { return size_; }
  template <typename F>
  void for_each(F f) const {
    for (const Cell& c : cells_)
      if (c.slot >= 0) f(c.id, c.slot);
  }

 private:
  struct Cell {
    unsigned long long id = 0;
    int slot = -1;
  };
  size_t home(unsigned long long id) const {
    id ^= id >> 33;  // murmur3's finaliser
    id *= 0xff51afd7ed558ccdULL;
    id ^= id >> 33;
    return static_cast<size_t>(id) & mask_;
  }
  void grow() {
    std::vector<Cell> old = std::move(cells_);
    cells_.assign(old.empty() ? 64 : old.size() * 2, Cell{});
    mask_ = cells_.size() - 1;
    size_ = 0;
    for (const Cell& c : old)
      if (c.slot >= 0) insert(c.id, c.slot);
  }
  std::vector<Cell> cells_;
  size_t mask_ = 0;
  size_t size_ = 0;
};

}  // namespace gw::sim_detail
