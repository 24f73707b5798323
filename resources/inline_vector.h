// InlineVector: a vector whose first N elements live inside the object, for the short sorted
// entry lists of Resources.
//
// Why not boost::container::small_vector: a Resources moves several times per offer (into the
// pending offer, the agent's books, the offer callback's list), and small_vector moves inline
// elements through its generic assign and then clears the source, about twice the
// instructions of moving them one by one here. A moved-from InlineVector is empty.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <memory>
#include <new>
#include <stdexcept>
#include <type_traits>
#include <utility>

namespace harvest {

template <typename T, uint32_t N>
class InlineVector {
 public:
  using value_type = T;
  using size_type = size_t;
  using iterator = T*;
  using const_iterator = const T*;
  using reference = T&;
  using const_reference = const T&;

  // User-provided, not defaulted: a `static const Resources` must be default-initializable,
  // and the inline storage is left uninitialized rather than zeroed on every construction.
  InlineVector() noexcept {}  // NOLINT(modernize-use-equals-default)
  InlineVector(const InlineVector& other) { appendCopies(other); }
  InlineVector(InlineVector&& other) noexcept { takeFrom(other); }
  InlineVector& operator=(const InlineVector& other) {
    if (this != &other) {
      clear();
      appendCopies(other);
    }
    return *this;
  }
  InlineVector& operator=(InlineVector&& other) noexcept {
    if (this != &other) {
      clear();
      freeHeap();
      takeFrom(other);
    }
    return *this;
  }
  ~InlineVector() {
    clear();
    freeHeap();
  }

  T* begin() { return data_; }
  T* end() { return data_ + size_; }
  const T* begin() const { return data_; }
  const T* end() const { return data_ + size_; }
  T* data() { return data_; }
  const T* data() const { return data_; }
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  T& operator[](size_t index) { return data_[index]; }
  const T& operator[](size_t index) const { return data_[index]; }
  const T& at(size_t index) const {
    if (index >= size_) throw std::out_of_range("InlineVector::at");
    return data_[index];
  }
  T& front() { return data_[0]; }
  const T& front() const { return data_[0]; }
  T& back() { return data_[size_ - 1]; }
  const T& back() const { return data_[size_ - 1]; }

  void push_back(T value) { insert(end(), std::move(value)); }
  // By value: `value` may be an element of this vector, which the shift would overwrite.
  T* insert(const T* position, T value) {
    const size_t index = position - data_;
    if (size_ == capacity_) grow(2 * capacity_);
    T* at = data_ + index;
    T* last = data_ + size_;
    if (at == last) {
      new (last) T(std::move(value));
    } else {
      new (last) T(std::move(last[-1]));
      std::move_backward(at, last - 1, last);
      *at = std::move(value);
    }
    ++size_;
    return at;
  }
  T* erase(const T* position) {
    T* at = data_ + (position - data_);
    std::move(at + 1, end(), at);
    back().~T();
    --size_;
    return at;
  }
  void clear() {
    std::destroy(begin(), end());
    size_ = 0;
  }
  // Removes the elements `erase` is true of, keeping the others in order, in one pass.
  template <typename Erase>
  void eraseIf(const Erase& erase) {
    T* kept = std::remove_if(begin(), end(), erase);
    std::destroy(kept, end());
    size_ = static_cast<uint32_t>(kept - data_);
  }

  friend bool operator==(const InlineVector& a, const InlineVector& b) {
    return std::equal(a.begin(), a.end(), b.begin(), b.end());
  }

 private:
  T* local() { return reinterpret_cast<T*>(storage_); }
  bool onHeap() const { return capacity_ > N; }

  void grow(uint32_t capacity) {
    T* grown = static_cast<T*>(::operator new(capacity * sizeof(T)));
    std::uninitialized_move(begin(), end(), grown);
    std::destroy(begin(), end());
    freeHeap();
    data_ = grown;
    capacity_ = capacity;
  }
  void freeHeap() {
    if (onHeap()) ::operator delete(data_);
    data_ = local();
    capacity_ = N;
  }
  void appendCopies(const InlineVector& other) {
    if (other.size_ > capacity_) grow(other.size_);
    std::uninitialized_copy(other.begin(), other.end(), data_);
    size_ = other.size_;
  }
  // Requires this vector empty and inline.
  void takeFrom(InlineVector& other) noexcept {
    if (other.onHeap()) {
      data_ = std::exchange(other.data_, other.local());
      capacity_ = std::exchange(other.capacity_, N);
    } else if constexpr (std::is_trivially_copyable_v<T>) {
      // The whole inline storage in one fixed-size copy, held or not: a few vector moves
      // instead of a loop over the elements (a Resources' scalars move several times per
      // offer). Copying bytes never written is defined for unsigned char storage; GCC's
      // warning about them is not about a value anyone reads.
#if !defined(__clang__)  // Clang has no such warning, and warns of the unknown name.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
      std::memcpy(storage_, other.storage_, sizeof(storage_));
#if !defined(__clang__)
#pragma GCC diagnostic pop
#endif
    } else {
      std::uninitialized_move(other.begin(), other.end(), data_);
      std::destroy(other.begin(), other.end());
    }
    size_ = std::exchange(other.size_, 0);
  }

  T* data_ = local();
  uint32_t size_ = 0;
  uint32_t capacity_ = N;
  alignas(T) unsigned char storage_[N * sizeof(T)];
};

}  // namespace harvest
