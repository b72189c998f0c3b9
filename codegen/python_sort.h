// Python 3.11's list.sort (timsort with the powersort merge policy), step for step, for a `less` that need
// not be a strict weak order.
//
// tinygrad sorts nodes by their `tuplize` tuples, and a NaN constant makes those comparisons inconsistent
// (NaN is neither less nor greater than anything). Then the result depends on exactly which comparisons the
// sort makes, so to give tinygrad's order uopc must make the same ones: this is CPython's algorithm
// (count_run, binary insertion sort, powersort run stack, galloping merges) using only `less`, like CPython.
// With a consistent `less` it is just a stable sort.
#ifndef UOPC_CODEGEN_PYTHON_SORT_H_
#define UOPC_CODEGEN_PYTHON_SORT_H_

#include <algorithm>
#include <cstddef>
#include <vector>

namespace uopc {
namespace python_sort_internal {

constexpr std::ptrdiff_t kMinGallop = 7;

template <typename T, typename Less>
class TimSort {
 public:
  TimSort(std::vector<T>& v, Less& less) : v_(v), less_(less) {}

  void Run() {
    std::ptrdiff_t n = static_cast<std::ptrdiff_t>(v_.size());
    if (n < 2) return;
    std::ptrdiff_t min_run = MinRun(n);
    std::ptrdiff_t lo = 0, remaining = n;
    while (remaining > 0) {
      bool descending = false;
      std::ptrdiff_t run = CountRun(lo, lo + remaining, &descending);
      if (descending) std::reverse(v_.begin() + lo, v_.begin() + lo + run);
      if (run < min_run) {
        std::ptrdiff_t force = std::min(remaining, min_run);
        BinarySort(lo, lo + force, lo + run);
        run = force;
      }
      FoundNewRun(run);
      runs_.push_back({lo, run, 0});
      lo += run;
      remaining -= run;
    }
    // merge_force_collapse
    while (runs_.size() > 1) {
      std::ptrdiff_t i = static_cast<std::ptrdiff_t>(runs_.size()) - 2;
      if (i > 0 && runs_[i - 1].len < runs_[i + 1].len) --i;
      MergeAt(i);
    }
  }

 private:
  struct PendingRun {
    std::ptrdiff_t base, len;
    int power;
  };

  bool Lt(const T& a, const T& b) { return less_(a, b); }

  static std::ptrdiff_t MinRun(std::ptrdiff_t n) {
    std::ptrdiff_t r = 0;
    while (n >= 64) {
      r |= n & 1;
      n >>= 1;
    }
    return n + r;
  }

  // The length of the run starting at lo: non-descending, or strictly descending (then *descending).
  std::ptrdiff_t CountRun(std::ptrdiff_t lo, std::ptrdiff_t hi, bool* descending) {
    *descending = false;
    if (lo + 1 == hi) return 1;
    std::ptrdiff_t n = 2;
    std::ptrdiff_t i = lo + 1;
    if (Lt(v_[i], v_[i - 1])) {
      *descending = true;
      for (++i; i < hi && Lt(v_[i], v_[i - 1]); ++i) ++n;
    } else {
      for (++i; i < hi && !Lt(v_[i], v_[i - 1]); ++i) ++n;
    }
    return n;
  }

  // Insertion sort of [lo, hi) whose prefix [lo, start) is sorted, finding each place by bisection.
  void BinarySort(std::ptrdiff_t lo, std::ptrdiff_t hi, std::ptrdiff_t start) {
    if (start == lo) ++start;
    for (; start < hi; ++start) {
      T pivot = v_[start];
      std::ptrdiff_t l = lo, r = start;
      while (l < r) {
        std::ptrdiff_t p = l + ((r - l) >> 1);
        if (Lt(pivot, v_[p])) {
          r = p;
        } else {
          l = p + 1;
        }
      }
      for (std::ptrdiff_t p = start; p > l; --p) v_[p] = v_[p - 1];
      v_[l] = pivot;
    }
  }

  int PowerLoop(std::ptrdiff_t s1, std::ptrdiff_t n1, std::ptrdiff_t n2) {
    std::ptrdiff_t n = static_cast<std::ptrdiff_t>(v_.size());
    int result = 0;
    std::ptrdiff_t a = 2 * s1 + n1;
    std::ptrdiff_t b = a + n1 + n2;
    for (;;) {
      ++result;
      if (a >= n) {
        a -= n;
        b -= n;
      } else if (b >= n) {
        break;
      }
      a <<= 1;
      b <<= 1;
    }
    return result;
  }

  void FoundNewRun(std::ptrdiff_t n2) {
    if (runs_.empty()) return;
    const PendingRun& last = runs_.back();
    int power = PowerLoop(last.base, last.len, n2);
    while (runs_.size() > 1 && runs_[runs_.size() - 2].power > power) MergeAt(runs_.size() - 2);
    runs_.back().power = power;
  }

  // gallop_left: k with a[k-1] < key <= a[k], searching a[0, n) from `hint`.
  template <typename Get>
  std::ptrdiff_t GallopLeft(const T& key, Get a, std::ptrdiff_t n, std::ptrdiff_t hint) {
    std::ptrdiff_t lastofs = 0, ofs = 1;
    if (Lt(a(hint), key)) {
      std::ptrdiff_t maxofs = n - hint;
      while (ofs < maxofs && Lt(a(hint + ofs), key)) {
        lastofs = ofs;
        ofs = (ofs << 1) + 1;
      }
      if (ofs > maxofs) ofs = maxofs;
      lastofs += hint;
      ofs += hint;
    } else {
      std::ptrdiff_t maxofs = hint + 1;
      while (ofs < maxofs && !Lt(a(hint - ofs), key)) {
        lastofs = ofs;
        ofs = (ofs << 1) + 1;
      }
      if (ofs > maxofs) ofs = maxofs;
      std::ptrdiff_t k = lastofs;
      lastofs = hint - ofs;
      ofs = hint - k;
    }
    ++lastofs;
    while (lastofs < ofs) {
      std::ptrdiff_t m = lastofs + ((ofs - lastofs) >> 1);
      if (Lt(a(m), key)) {
        lastofs = m + 1;
      } else {
        ofs = m;
      }
    }
    return ofs;
  }

  // gallop_right: k with a[k-1] <= key < a[k].
  template <typename Get>
  std::ptrdiff_t GallopRight(const T& key, Get a, std::ptrdiff_t n, std::ptrdiff_t hint) {
    std::ptrdiff_t lastofs = 0, ofs = 1;
    if (Lt(key, a(hint))) {
      std::ptrdiff_t maxofs = hint + 1;
      while (ofs < maxofs && Lt(key, a(hint - ofs))) {
        lastofs = ofs;
        ofs = (ofs << 1) + 1;
      }
      if (ofs > maxofs) ofs = maxofs;
      std::ptrdiff_t k = lastofs;
      lastofs = hint - ofs;
      ofs = hint - k;
    } else {
      std::ptrdiff_t maxofs = n - hint;
      while (ofs < maxofs && !Lt(key, a(hint + ofs))) {
        lastofs = ofs;
        ofs = (ofs << 1) + 1;
      }
      if (ofs > maxofs) ofs = maxofs;
      lastofs += hint;
      ofs += hint;
    }
    ++lastofs;
    while (lastofs < ofs) {
      std::ptrdiff_t m = lastofs + ((ofs - lastofs) >> 1);
      if (Lt(key, a(m))) {
        ofs = m;
      } else {
        lastofs = m + 1;
      }
    }
    return ofs;
  }

  void MergeAt(size_t i) {
    std::ptrdiff_t base_a = runs_[i].base, na = runs_[i].len;
    std::ptrdiff_t base_b = runs_[i + 1].base, nb = runs_[i + 1].len;
    runs_[i].len = na + nb;
    runs_.erase(runs_.begin() + i + 1);
    auto at = [this](std::ptrdiff_t base) {
      return [this, base](std::ptrdiff_t k) -> const T& { return v_[base + k]; };
    };
    std::ptrdiff_t k = GallopRight(v_[base_b], at(base_a), na, 0);
    base_a += k;
    na -= k;
    if (na == 0) return;
    nb = GallopLeft(v_[base_a + na - 1], at(base_b), nb, nb - 1);
    if (nb == 0) return;
    if (na <= nb) {
      MergeLo(base_a, na, base_b, nb);
    } else {
      MergeHi(base_a, na, base_b, nb);
    }
  }

  // Merges the adjacent runs a (copied out) and b, front to back.
  void MergeLo(std::ptrdiff_t base_a, std::ptrdiff_t na, std::ptrdiff_t base_b, std::ptrdiff_t nb) {
    std::vector<T> tmp(v_.begin() + base_a, v_.begin() + base_a + na);
    auto ta = [&tmp](std::ptrdiff_t k) -> const T& { return tmp[k]; };
    std::ptrdiff_t pa = 0, pb = base_b, dest = base_a;
    auto vb = [this, &pb](std::ptrdiff_t k) -> const T& { return v_[pb + k]; };
    v_[dest++] = v_[pb++];
    --nb;
    std::ptrdiff_t min_gallop = min_gallop_;
    if (nb == 0) goto succeed;
    if (na == 1) goto copy_b;
    for (;;) {
      std::ptrdiff_t acount = 0, bcount = 0;
      for (;;) {
        if (Lt(v_[pb], tmp[pa])) {
          v_[dest++] = v_[pb++];
          ++bcount;
          acount = 0;
          if (--nb == 0) goto succeed;
          if (bcount >= min_gallop) break;
        } else {
          v_[dest++] = tmp[pa++];
          ++acount;
          bcount = 0;
          if (--na == 1) goto copy_b;
          if (acount >= min_gallop) break;
        }
      }
      ++min_gallop;
      do {
        min_gallop -= min_gallop > 1;
        min_gallop_ = min_gallop;
        std::ptrdiff_t k = GallopRight(
            v_[pb], [&](std::ptrdiff_t j) -> const T& { return ta(pa + j); }, na, 0);
        acount = k;
        if (k) {
          for (std::ptrdiff_t j = 0; j < k; ++j) v_[dest++] = tmp[pa++];
          na -= k;
          if (na == 1) goto copy_b;
          if (na == 0) goto succeed;
        }
        v_[dest++] = v_[pb++];
        if (--nb == 0) goto succeed;
        k = GallopLeft(tmp[pa], vb, nb, 0);
        bcount = k;
        if (k) {
          for (std::ptrdiff_t j = 0; j < k; ++j) v_[dest++] = v_[pb++];
          nb -= k;
          if (nb == 0) goto succeed;
        }
        v_[dest++] = tmp[pa++];
        if (--na == 1) goto copy_b;
      } while (acount >= kMinGallop || bcount >= kMinGallop);
      ++min_gallop;
      min_gallop_ = min_gallop;
    }
  succeed:
    for (std::ptrdiff_t j = 0; j < na; ++j) v_[dest++] = tmp[pa++];
    return;
  copy_b:
    for (std::ptrdiff_t j = 0; j < nb; ++j) v_[dest++] = v_[pb++];
    v_[dest] = tmp[pa];
  }

  // Merges the adjacent runs a and b (copied out), back to front.
  void MergeHi(std::ptrdiff_t base_a, std::ptrdiff_t na, std::ptrdiff_t base_b, std::ptrdiff_t nb) {
    std::vector<T> tmp(v_.begin() + base_b, v_.begin() + base_b + nb);
    std::ptrdiff_t dest = base_b + nb - 1, pb = nb - 1, pa = base_a + na - 1;
    auto va = [this, base_a](std::ptrdiff_t k) -> const T& { return v_[base_a + k]; };
    auto tb = [&tmp](std::ptrdiff_t k) -> const T& { return tmp[k]; };
    v_[dest--] = v_[pa--];
    --na;
    std::ptrdiff_t min_gallop = min_gallop_;
    if (na == 0) goto succeed;
    if (nb == 1) goto copy_a;
    for (;;) {
      std::ptrdiff_t acount = 0, bcount = 0;
      for (;;) {
        if (Lt(tmp[pb], v_[pa])) {
          v_[dest--] = v_[pa--];
          ++acount;
          bcount = 0;
          if (--na == 0) goto succeed;
          if (acount >= min_gallop) break;
        } else {
          v_[dest--] = tmp[pb--];
          ++bcount;
          acount = 0;
          if (--nb == 1) goto copy_a;
          if (bcount >= min_gallop) break;
        }
      }
      ++min_gallop;
      do {
        min_gallop -= min_gallop > 1;
        min_gallop_ = min_gallop;
        std::ptrdiff_t k = na - GallopRight(tmp[pb], va, na, na - 1);
        acount = k;
        if (k) {
          for (std::ptrdiff_t j = 0; j < k; ++j) v_[dest--] = v_[pa--];
          na -= k;
          if (na == 0) goto succeed;
        }
        v_[dest--] = tmp[pb--];
        if (--nb == 1) goto copy_a;
        k = nb - GallopLeft(v_[pa], tb, nb, nb - 1);
        bcount = k;
        if (k) {
          for (std::ptrdiff_t j = 0; j < k; ++j) v_[dest--] = tmp[pb--];
          nb -= k;
          if (nb == 1) goto copy_a;
          if (nb == 0) goto succeed;
        }
        v_[dest--] = v_[pa--];
        if (--na == 0) goto succeed;
      } while (acount >= kMinGallop || bcount >= kMinGallop);
      ++min_gallop;
      min_gallop_ = min_gallop;
    }
  succeed:
    for (std::ptrdiff_t j = 0; j < nb; ++j) v_[dest - (nb - 1) + j] = tmp[j];
    return;
  copy_a:
    for (std::ptrdiff_t j = 0; j < na; ++j) v_[dest--] = v_[pa--];
    v_[dest] = tmp[pb];
  }

  std::vector<T>& v_;
  Less& less_;
  std::vector<PendingRun> runs_;
  std::ptrdiff_t min_gallop_ = kMinGallop;
};

}  // namespace python_sort_internal

// Sorts `v` exactly as Python 3.11's `list.sort` would with `less` as `<` (stable; only `less` is called).
template <typename T, typename Less>
void PythonSort(std::vector<T>& v, Less less) {
  python_sort_internal::TimSort<T, Less>(v, less).Run();
}

}  // namespace uopc

#endif  // UOPC_CODEGEN_PYTHON_SORT_H_
