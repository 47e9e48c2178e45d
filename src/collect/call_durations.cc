#include "call_durations.h"

#include <algorithm>
#include <cmath>

namespace paddle_prof::internal {

namespace {

constexpr int kExact = 64;  // significant bits of a duration kept whole

int Bits(const CallDurationCounts& counts) {
  return counts.significant_bits == 0 ? kExact : counts.significant_bits;
}

int64_t RoundDown(int64_t ns, int bits) {
  if (ns <= 0 || bits >= kExact) return ns;
  const int length = 64 - __builtin_clzll(static_cast<uint64_t>(ns));
  if (length <= bits) return ns;
  const int shift = length - bits;
  return (ns >> shift) << shift;
}

// `counts` rounded to `bits` significant bits, equal durations merged; stays ascending.
void Round(int bits, CallDurationCounts* counts) {
  size_t kept = 0;
  for (size_t i = 0; i < counts->ns.size(); ++i) {
    const int64_t ns = RoundDown(counts->ns[i], bits);
    if (kept > 0 && counts->ns[kept - 1] == ns) {
      counts->calls[kept - 1] += counts->calls[i];
    } else {
      counts->ns[kept] = ns;
      counts->calls[kept] = counts->calls[i];
      ++kept;
    }
  }
  counts->ns.resize(kept);
  counts->calls.resize(kept);
  if (bits < kExact) counts->significant_bits = bits;
}

// Appends `calls` calls of `ns` to ascending counts.
void Append(int64_t ns, int64_t calls, CallDurationCounts* counts) {
  if (!counts->ns.empty() && counts->ns.back() == ns) {
    counts->calls.back() += calls;
  } else {
    counts->ns.push_back(ns);
    counts->calls.push_back(calls);
  }
}

}  // namespace

void CallDurations::Spill() {
  counts_ = std::make_unique<std::array<uint32_t, kShortTicks>>();
  size_t kept = 0;
  for (const uint64_t ticks : values_) {
    if (ticks < kShortTicks) {
      ++(*counts_)[ticks];
      ++counted_;
    } else {
      values_[kept++] = ticks;
    }
  }
  values_.resize(kept);
}

void CallDurations::Merge(const CallDurations& other) {
  if (other.counts_ != nullptr) {
    if (counts_ == nullptr) Spill();
    for (uint64_t t = 0; t < kShortTicks; ++t) (*counts_)[t] += (*other.counts_)[t];
    counted_ += other.counted_;
  }
  for (const uint64_t ticks : other.values_) Add(ticks);
}

std::array<uint64_t, kPercents.size()> CallDurations::Percentiles() const {
  std::array<uint64_t, kPercents.size()> at{};
  const int64_t n = calls();
  if (n == 0) return at;
  std::array<int64_t, kPercents.size()> ranks{};
  for (size_t i = 0; i < kPercents.size(); ++i) ranks[i] = NearestRank(kPercents[i], n);
  // Ranks among the counted durations: one walk up the array, ranks ascending.
  size_t i = 0;
  int64_t seen = 0;
  for (uint64_t t = 0; counts_ != nullptr && t < kShortTicks && i < ranks.size(); ++t) {
    seen += (*counts_)[t];
    while (i < ranks.size() && ranks[i] <= seen) at[i++] = t;
  }
  if (i == ranks.size()) return at;
  // The rest lie among the kept durations, all longer: selected from the highest rank
  // down, each in the part below the last.
  std::vector<uint64_t> kept = values_;
  auto end = kept.end();
  for (size_t j = ranks.size(); j-- > i;) {
    const auto nth = kept.begin() + (ranks[j] - counted_ - 1);
    std::nth_element(kept.begin(), nth, end);
    at[j] = *nth;
    end = nth;
  }
  return at;
}

CallDurationCounts CallDurations::Counts(double ns_per_tick) const {
  CallDurationCounts out;
  const auto ns = [ns_per_tick](uint64_t ticks) {
    return static_cast<int64_t>(std::llround(static_cast<double>(ticks) * ns_per_tick));
  };
  for (uint64_t t = 0; counts_ != nullptr && t < kShortTicks; ++t) {
    if ((*counts_)[t] != 0) Append(ns(t), (*counts_)[t], &out);
  }
  std::vector<uint64_t> sorted = values_;  // all longer than the counted ones
  std::sort(sorted.begin(), sorted.end());
  for (const uint64_t ticks : sorted) Append(ns(ticks), 1, &out);
  BoundCounts(&out);
  return out;
}

void BoundCounts(CallDurationCounts* counts) {
  for (int bits = 20; counts->ns.size() > CallDurationCounts::kMaxDistinct && bits > 0; --bits) {
    Round(bits, counts);
  }
}

void MergeCounts(const CallDurationCounts& from, CallDurationCounts* into) {
  const int bits = std::min(Bits(from), Bits(*into));
  if (Bits(*into) > bits) Round(bits, into);
  CallDurationCounts rounded;  // `from` itself unless it must be rounded
  const CallDurationCounts* other = &from;
  if (Bits(from) > bits) {
    rounded = from;
    Round(bits, &rounded);
    other = &rounded;
  }
  CallDurationCounts merged;
  merged.significant_bits = into->significant_bits;
  merged.ns.reserve(into->ns.size() + other->ns.size());
  merged.calls.reserve(into->ns.size() + other->ns.size());
  size_t a = 0, b = 0;
  while (a < into->ns.size() || b < other->ns.size()) {
    if (b == other->ns.size() || (a < into->ns.size() && into->ns[a] <= other->ns[b])) {
      Append(into->ns[a], into->calls[a], &merged);
      ++a;
    } else {
      Append(other->ns[b], other->calls[b], &merged);
      ++b;
    }
  }
  *into = std::move(merged);
  BoundCounts(into);
}

std::array<double, kPercents.size()> PercentilesMs(const CallDurationCounts& counts) {
  std::array<double, kPercents.size()> at{};
  int64_t n = 0;
  for (const int64_t calls : counts.calls) n += calls;
  if (n == 0) return at;
  size_t i = 0;
  int64_t seen = 0;
  for (size_t d = 0; d < counts.ns.size() && i < at.size(); ++d) {
    seen += counts.calls[d];
    while (i < at.size() && NearestRank(kPercents[i], n) <= seen) {
      at[i++] = static_cast<double>(counts.ns[d]) / 1e6;
    }
  }
  return at;
}

bool CountsAreWhole(const CallDurationCounts& counts, int64_t calls) {
  if (counts.ns.size() != counts.calls.size() || counts.significant_bits < 0 ||
      counts.significant_bits >= kExact) {
    return false;
  }
  int64_t sum = 0;
  for (size_t i = 0; i < counts.ns.size(); ++i) {
    if (counts.ns[i] < 0 || counts.calls[i] <= 0 || (i > 0 && counts.ns[i] <= counts.ns[i - 1])) {
      return false;
    }
    sum += counts.calls[i];
  }
  return sum == calls;
}

}  // namespace paddle_prof::internal
