// A hash index for the hot lookups of telemetry reading (a row's series by its raw cells, a
// sample's aggregate by its interned id): open addressing with linear probing over a
// power-of-two table of hashes and entry numbers, entries kept in insertion order in one
// vector. No erase. Faster than std::unordered_map here because a lookup is one multiply, one
// mask and usually one cache line, where the node map divides by a prime and chases a pointer.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

namespace gw {

// Equal byte strings, compared eight bytes at a step inline: for the short ids this index holds,
// a call to memcmp costs more than the comparison.
inline bool same_bytes(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  size_t i = 0;
  for (; i + 8 <= a.size(); i += 8) {
    uint64_t x, y;
    std::memcpy(&x, a.data() + i, 8);
    std::memcpy(&y, b.data() + i, 8);
    if (x != y) return false;
  }
  for (; i < a.size(); ++i)
    if (a[i] != b[i]) return false;
  return true;
}

template <typename A, typename B>
bool keys_equal(const A& a, const B& b) {
  if constexpr (std::is_convertible_v<const A&, std::string_view> && std::is_convertible_v<const B&, std::string_view>)
    return same_bytes(a, b);
  else
    return a == b;
}

template <typename Key, typename Value>
class FlatIndex {
 public:
  // The entry whose key equals `key` (any type comparable with Key) under `hash`, or nullptr.
  template <typename Probe>
  Value* find(const Probe& key, uint64_t hash) {
    if (slots_.empty()) return nullptr;
    const uint32_t tag = tag_of(hash);
    for (size_t i = hash & mask_;; i = (i + 1) & mask_) {
      const Slot& s = slots_[i];
      if (s.entry == 0) return nullptr;
      if (s.tag == tag && keys_equal(entries_[s.entry - 1].first, key)) return &entries_[s.entry - 1].second;
    }
  }
  // Adds an entry the caller found absent; returns its value. Values move on insert: a pointer
  // from find or insert holds until the next insert.
  Value& insert(Key key, uint64_t hash, Value value) {
    if (2 * (entries_.size() + 1) > slots_.size()) grow();
    entries_.emplace_back(std::move(key), std::move(value));
    hashes_.push_back(hash);
    place(static_cast<uint32_t>(entries_.size()), hash);
    return entries_.back().second;
  }
  size_t size() const { return entries_.size(); }

 private:
  struct Slot {
    uint32_t tag = 0;    // high bits of the hash, to skip most key comparisons
    uint32_t entry = 0;  // 1 + index into entries_; 0: empty
  };
  static uint32_t tag_of(uint64_t hash) { return static_cast<uint32_t>(hash >> 32); }
  void place(uint32_t entry, uint64_t hash) {
    size_t i = hash & mask_;
    while (slots_[i].entry != 0) i = (i + 1) & mask_;
    slots_[i] = {tag_of(hash), entry};
  }
  void grow() {
    slots_.assign(slots_.empty() ? 64 : 2 * slots_.size(), Slot{});
    mask_ = slots_.size() - 1;
    for (size_t e = 0; e < entries_.size(); ++e) place(static_cast<uint32_t>(e + 1), hashes_[e]);
  }
  std::vector<Slot> slots_;
  std::vector<std::pair<Key, Value>> entries_;
  std::vector<uint64_t> hashes_;
  size_t mask_ = 0;
};

// Mixes a hash whose low bits are poor (a pointer's alignment, std::hash of a small integer).
inline uint64_t mix_hash(uint64_t x) {
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdULL;
  x ^= x >> 33;
  x *= 0xc4ceb9fe1a85ec53ULL;
  x ^= x >> 33;
  return x;
}

// A hash of a short byte string (a series id, a row's label cells), eight bytes at a step and
// mixed at the end: about a third of std::hash's time on 32-byte ids, and as good for a table
// whose slots are chosen by the low bits.
inline uint64_t hash_bytes(std::string_view bytes) {
  const char* p = bytes.data();
  size_t n = bytes.size();
  uint64_t h = 0x9E3779B97F4A7C15ULL ^ n;
  for (; n >= 8; p += 8, n -= 8) {
    uint64_t word;
    std::memcpy(&word, p, 8);
    h = (h ^ word) * 0xff51afd7ed558ccdULL;
    h ^= h >> 29;
  }
  uint64_t tail = 0;
  std::memcpy(&tail, p, n);
  return mix_hash(h ^ tail);
}

}  // namespace gw
