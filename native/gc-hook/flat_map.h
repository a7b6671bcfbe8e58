// A hash map over one array, open addressing with linear probing. The CPU sampler's interning looks
// up every new profile node in three maps; std::unordered_map's allocation and pointer chase per
// entry made that most of what a rotation cost on a deep-stacked program.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace tracepipe {

// splitmix64's finalizer: keys here are addresses and packed ids, whose low bits alone cluster.
inline uint64_t MixBits(uint64_t x) {
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ULL;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

template <typename K, typename V, typename Hash>
class FlatMap {
 public:
  V* Find(const K& key) {
    if (size_ == 0) return nullptr;
    for (size_t i = Hash()(key) & mask_;; i = (i + 1) & mask_) {
      Slot& slot = slots_[i];
      if (!slot.used) return nullptr;
      if (slot.key == key) return &slot.value;
    }
  }

  // `key` must be absent.
  void Put(const K& key, V value) {
    if ((size_ + 1) * 4 > slots_.size() * 3) Grow();
    Place(key, value);
    size_++;
  }

  // Empties the map and keeps its capacity (it is filled again to about the same size).
  void Clear() {
    if (size_ == 0) return;
    for (Slot& slot : slots_) slot.used = false;
    size_ = 0;
  }

  // Empties the map and gives its memory back.
  void Release() {
    std::vector<Slot>().swap(slots_);
    size_ = 0;
    mask_ = 0;
  }

  size_t size() const { return size_; }

 private:
  struct Slot {
    K key;
    V value;
    bool used;
  };

  void Place(const K& key, V value) {
    size_t i = Hash()(key) & mask_;
    while (slots_[i].used) i = (i + 1) & mask_;
    slots_[i] = Slot{key, value, true};
  }

  void Grow() {
    std::vector<Slot> old;
    old.swap(slots_);
    slots_.assign(old.empty() ? 1024 : old.size() * 2, Slot{});
    mask_ = slots_.size() - 1;
    for (const Slot& slot : old) {
      if (slot.used) Place(slot.key, slot.value);
    }
  }

  std::vector<Slot> slots_;
  size_t size_ = 0;
  size_t mask_ = 0;
};

}  // namespace tracepipe
