// optdp core: grouped releases by privacy unit (docs/grouped.md).
//
// A grouped release reads rows (unit, key[, value]) whose units arrive one
// after another (all rows of a unit together) and publishes, for each key, a
// noisy count of rows, and with values a noisy sum and their mean. The whole
// release is (epsilon, delta)-DP for neighbouring inputs that differ by one
// unit with all its rows, added, removed or replaced by another unit's rows.
//
// Contribution bounding (done here, never trusted from the caller):
//  - each unit keeps at most G = max_groups of its distinct keys, chosen
//    uniformly at random (KeyPriority);
//  - in each kept key at most R = max_rows of its rows, chosen uniformly at
//    random; each kept row's value is clamped into [lower, upper].
// So one unit moves at most G keys, each key's count by at most R and its sum
// by at most R * max(upper - lower, |lower|, |upper|) (a replaced unit moves
// at most 2G keys: its own and its replacement's).
//
// Budget: epsilon is split evenly between the parts that run: the counts, the
// sums (with values), and partition selection (private keys). Each part is
// calibrated for 2G keys moved, so it holds for replacement as well as for
// addition or removal:
//  - counts: two-sided geometric noise, alpha = e^-(eps_part / (2 G R));
//  - sums: the integer staircase at eps_part / (2G) per key, on the
//    power-of-two grid of [R lower, R upper] (core/staircase.hpp);
//  - selection: PartitionSelection(eps_part, delta, 2G) on each key's number
//    of units (core/partition.hpp);
//  - quantile (option quantile=q, with values): per key, the exponential
//    mechanism of core/quantile.hpp over the grid of [lower, upper] at
//    eps_part / (2G), its score of sensitivity R (one unit moves a key's rank
//    function by at most R): weights exp(eps_part / (2 G R) * score / 2);
//  - variance (option variance=on, with values): per key S2 = sum of
//    round(y^2 / 2^s) over the kept rows (y the row's centred value on the
//    grid of core/moments.hpp), the integer staircase at eps_part / (2G) with
//    sensitivity R * D2; the variance is post-processing of the released
//    count, sum and S2.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/gaussian.hpp"
#include "core/moments.hpp"
#include "core/partition.hpp"
#include "core/quantile.hpp"
#include "core/rng.hpp"
#include "core/samplers.hpp"
#include "core/staircase.hpp"

namespace optdp {

struct GroupedOptions {
  static constexpr std::int64_t kMaxGroups = 10000;
  static constexpr std::int64_t kMaxRows = 1000;
  std::int64_t max_groups = 1;
  std::int64_t max_rows = 1;
  std::optional<double> lower, upper;
  std::optional<double> delta;
  double confidence = 0.95;  // of the intervals released beside the values
  bool gaussian = false;  // noise=gaussian (default noise=optimal: geometric counts, staircase sums)
  std::optional<double> quantile;  // quantile=q: each key's q-quantile of the kept values (docs/grouped.md)
  bool variance = false;           // variance=on: each key's variance and standard deviation (docs/grouped.md)
};

// Parses "name=value, name=value" (commas or spaces between; names
// max_groups, max_rows, lower, upper, delta, noise, confidence, quantile, variance; each at most once). NULL or ""
// gives the defaults. Throws std::invalid_argument naming the option.
GroupedOptions parse_grouped_options(std::string_view text);

// The noise of one release, fixed from its public parameters before any row.
class GroupedPlan {
 public:
  // has_value: the rows carry a value (sums and means are released);
  // private_keys: keys are selected from the data (needs options.delta).
  // Throws std::invalid_argument for a bad or missing parameter.
  GroupedPlan(double epsilon, const GroupedOptions& options, bool has_value, bool private_keys);

  double epsilon() const { return epsilon_; }
  double delta() const { return delta_; }
  std::int64_t max_groups() const { return G_; }
  std::int64_t max_rows() const { return R_; }
  bool has_value() const { return has_value_; }
  bool private_keys() const { return selection_.has_value(); }
  int parts() const { return parts_; }
  double part_epsilon() const { return eps_part_; }
  double count_alpha() const { return count_ ? count_->alpha() : 0; }
  // noise=gaussian: the release is rho-zCDP, rho = the largest that is
  // (epsilon, delta)-DP (zcdp::rho_for_epsilon_delta), split evenly between
  // the counts and the sums; each gets the discrete Gaussian with sigma^2 =
  // (its L2 sensitivity for 2G keys moved)^2 / (2 rho_part).
  bool gaussian() const { return gaussian_; }
  double rho() const { return rho_; }
  double count_sigma2() const { return count_sigma2_; }
  double sum_sigma2() const { return sum_sigma2_; }
  double sum_epsilon_per_key() const { return sum_eps_key_; }
  double lower() const { return lower_; }
  double upper() const { return upper_; }
  // The grid of the sums: a row's value is round(clamp(v, lower, upper) / g).
  double grid_step() const { return grid_.g; }
  std::int64_t quantize(double v) const { return grid_.quantize(v, lower_, upper_); }
  // The sensitivity of one key's integer sum, in grid steps.
  std::int64_t sum_sensitivity() const { return D_key_; }
  const PartitionSelection* selection() const { return selection_ ? &*selection_ : nullptr; }

  // Option quantile=q: each key's q-quantile, a point of the grid of [lower,
  // upper] (core/quantile.hpp) chosen by the exponential mechanism at
  // quantile_epsilon() = eps_part / (2 G R): the per-key budget eps_part / (2G)
  // for a score of sensitivity R (docs/grouped.md, "Quantiles per key").
  bool has_quantile() const { return quantile_.has_value(); }
  double quantile_q() const { return quantile_ ? *quantile_ : 0; }
  double quantile_epsilon() const { return quantile_eps_; }
  const QuantileGrid& quantile_grid() const { return qgrid_; }
  // A row's bucket in the quantile grid (0 without option quantile).
  std::int64_t bucket(double v) const { return quantile_ ? qgrid_.bucket(v) : 0; }

  // Option variance=on: each key's S2 = sum of z = round(y^2 / 2^s) over its
  // kept rows, y = the row's centred value on the grid of moments_grid()
  // (core/moments.hpp, built at the per-key epsilon), z in [0, D2]; one unit
  // moves a key's S2 by at most R * D2 (add, remove or replace), and S2 gets
  // the integer staircase at eps_part / (2G) (docs/grouped.md, "Variance per key").
  bool has_variance() const { return moments_.has_value(); }
  const MomentsPlan* moments_grid() const { return moments_ ? &*moments_ : nullptr; }
  std::int64_t square(double v) const { return moments_ ? moments_->z(moments_->y(v)) : 0; }
  std::int64_t square_sensitivity() const { return D2_key_; }
  std::int64_t square_noise(Rng& rng) const { return stair2_ ? (*stair2_)(rng) : 0; }
  // The variance and standard deviation from a key's released count and sum
  // and its noisy S2 (post-processing): 0 when the count is <= 0, else
  // clamped into [0, ((upper - lower) / 2)^2] (core/moments.hpp's estimator,
  // its centred mean taken from the released sum).
  std::pair<double, double> variance_of(std::int64_t count, double sum, __int128 s2) const;

  // The exact half-widths of the noise at a confidence (core/intervals.hpp):
  // a count's, in rows, and a sum's, in the values' units (a multiple of the
  // grid step; nullopt without a value column). nullopt also for Gaussian
  // noise too wide to sum its law (sigma^2 > 2^34).
  // Each is computed once per confidence and kept in the plan: mean_interval
  // asks for them at every key, and the Gaussian's sums its law term by term
  // (40 sigma terms of binary128 expq).
  std::optional<std::int64_t> count_half_width(double confidence) const;
  std::optional<double> sum_half_width(double confidence) const;

  std::int64_t count_noise(Rng& rng) const { return count_ ? (*count_)(rng) : (*count_gauss_)(rng); }
  std::int64_t sum_noise(Rng& rng) const {
    return stair_ ? (*stair_)(rng) : sum_gauss_ ? (*sum_gauss_)(rng) : 0;
  }

 private:
  double epsilon_, delta_ = 0;
  std::int64_t G_, R_;
  bool has_value_;
  int parts_;
  double eps_part_, sum_eps_key_ = 0;
  double lower_ = 0, upper_ = 0;
  Grid grid_;
  std::int64_t D_key_ = 0;
  bool gaussian_ = false;
  double rho_ = 0, count_sigma2_ = 0, sum_sigma2_ = 0;
  std::optional<TwoSidedGeometric> count_;
  std::optional<IntegerStaircase> stair_;
  std::optional<DiscreteGaussian> count_gauss_, sum_gauss_;
  std::optional<PartitionSelection> selection_;
  std::optional<double> quantile_;
  double quantile_eps_ = 0;
  QuantileGrid qgrid_;
  std::optional<MomentsPlan> moments_;
  std::int64_t D2_key_ = 0;
  std::optional<IntegerStaircase> stair2_;
  // the half-widths (count's in rows, sum's in grid steps) already computed, by confidence
  struct KeptWidth {
    double confidence;
    std::optional<std::int64_t> count, sum;
  };
  mutable std::vector<KeptWidth> widths_;
  const KeptWidth& widths(double confidence) const;
};

// x / n rounded down (never above the exact quotient), for splitting a budget.
double divide_down(double x, double n);

// A unit's priority for each of its keys: SipHash-2-4 (the function of
// libsodium's crypto_shorthash) of (unit, key) under a secret drawn once per release. A
// unit keeps the G keys of smallest priority, which is a uniform G-subset of
// its distinct keys whatever order its rows arrive in, in one pass with G
// slots. For every value of the secret the choice is a function of the unit's
// own rows alone, so the bound (at most G keys, R rows each) and the release's
// privacy hold exactly for every secret; only the subset's uniformity rests on
// SipHash being a pseudo-random function (docs/grouped.md).
namespace detail {

// SipHash-2-4 (Aumasson and Bernstein), the function libsodium's
// crypto_shorthash computes (KeyPriority.IsLibsodiumsSipHash checks it),
// absorbing a message given in 8-byte words without copying it: KeyPriority
// hashes every row, and libsodium's one-buffer interface cost a copy of the
// key and a call per row. A copy of the state continues the same message.
class SipHash24 {
 public:
  SipHash24(std::uint64_t k0, std::uint64_t k1)
      : v0_(k0 ^ 0x736f6d6570736575ull), v1_(k1 ^ 0x646f72616e646f6dull), v2_(k0 ^ 0x6c7967656e657261ull),
        v3_(k1 ^ 0x7465646279746573ull) {}
  void word(std::uint64_t m) {  // 8 bytes of the message, little-endian
    v3_ ^= m;
    round();
    round();
    v0_ ^= m;
  }
  // The last word: the message's final length % 8 bytes `tail` (little-endian)
  // and its length, then the finalisation.
  std::uint64_t finish(std::uint64_t tail, std::size_t length) {
    word(tail | (static_cast<std::uint64_t>(length) << 56));
    v2_ ^= 0xff;
    for (int i = 0; i < 4; ++i) round();
    return v0_ ^ v1_ ^ v2_ ^ v3_;
  }

 private:
  static std::uint64_t rotl(std::uint64_t x, int b) { return (x << b) | (x >> (64 - b)); }
  void round() {
    v0_ += v1_;
    v1_ = rotl(v1_, 13);
    v1_ ^= v0_;
    v0_ = rotl(v0_, 32);
    v2_ += v3_;
    v3_ = rotl(v3_, 16);
    v3_ ^= v2_;
    v0_ += v3_;
    v3_ = rotl(v3_, 21);
    v3_ ^= v0_;
    v2_ += v1_;
    v1_ = rotl(v1_, 17);
    v1_ ^= v2_;
    v2_ = rotl(v2_, 32);
  }
  std::uint64_t v0_, v1_, v2_, v3_;
};

}  // namespace detail

class KeyPriority {
 public:
  explicit KeyPriority(Rng& rng);
  // key: a type tag and the key's identity bytes (equal keys, equal bytes).
  // SipHash-2-4 of: unit (8 bytes, little-endian), type, key.
  std::uint64_t operator()(std::int64_t unit, unsigned char type, std::string_view key) const {
    return of_unit(unit)(type, key);
  }

  // The priorities of one unit's keys: the hash with the unit's word absorbed
  // once, which a caller streaming rows unit by unit computes once per unit
  // (it is a third of a row's hashing for an 8-byte key).
  class OfUnit {
   public:
    // operator() of KeyPriority for this unit.
    std::uint64_t operator()(unsigned char type, std::string_view key) const;
    // The same for an 8-byte key given as a number (its bytes little-endian),
    // without a buffer: the message is the unit's word, type | bits << 8, and
    // the last byte of bits with the length 17.
    std::uint64_t number(unsigned char type, std::uint64_t bits) const {
      detail::SipHash24 h = h_;
      h.word(type | (bits << 8));
      return h.finish(bits >> 56, 17);
    }

   private:
    friend class KeyPriority;
    explicit OfUnit(const detail::SipHash24& h) : h_(h) {}
    detail::SipHash24 h_;
  };
  OfUnit of_unit(std::int64_t unit) const {
    detail::SipHash24 h(k0_, k1_);
    h.word(static_cast<std::uint64_t>(unit));
    return OfUnit(h);
  }

 private:
  std::uint64_t k0_, k1_;  // the secret, as SipHash's two key words
};

// The exact, bounded totals of each key (keys are indices 0..keys-1 that the
// caller assigns). Rows arrive unit by unit: add() for each row of the
// current unit, end_unit() after its last row.
//
// Memory is fixed by the public parameters: the current unit holds at most G
// keys and, with values, R row values for each (G * R slots, allocated when
// the accumulator is built), whatever the number of its keys or rows.
class GroupedAccumulator {
 public:
  explicit GroupedAccumulator(const GroupedPlan& plan);

  struct Totals {
    std::uint64_t units = 0;  // units that kept this key
    std::int64_t rows = 0;    // kept rows
    __int128 sum = 0;         // kept rows' grid values
    __int128 sum2 = 0;        // option variance: kept rows' z (GroupedPlan::square)
  };

  // Makes room for keys 0..n-1 (n only grows).
  void reserve_keys(std::size_t n);
  // One row of the current unit in key `key` (< reserved keys), whose
  // priority in this unit is `priority` (KeyPriority: the same for every row
  // of the key in the unit), with grid value q (0 without values) and, with
  // option quantile, bucket b = plan.bucket(value) in the quantile grid.
  // With option variance, z = plan.square(value).
  void add(std::uint32_t key, std::uint64_t priority, std::int64_t q, Rng& rng) { add(key, priority, q, 0, 0, rng); }
  void add(std::uint32_t key, std::uint64_t priority, std::int64_t q, std::int64_t b, std::int64_t z, Rng& rng);
  // Adds the current unit's kept rows to the totals.
  void end_unit();

  const std::vector<Totals>& totals() const { return totals_; }
  // With option quantile: key `key`'s kept rows counted by bucket of the
  // quantile grid (m + 1 counts; empty without the option).
  std::span<const std::int64_t> buckets(std::uint32_t key) const;
  // Slots of the current unit: kept keys (at most G), row values (G * R with values, else 0).
  std::size_t kept_keys() const { return heap_.size(); }
  std::size_t value_slots() const { return pool_.size(); }

 private:
  struct Cell {
    std::uint32_t key;
    std::uint64_t priority;
    std::int64_t rows;  // rows seen in this key
  };
  bool before(std::uint32_t a, std::uint32_t b) const;  // heap order: larger (priority, key) first
  const GroupedPlan& plan_;
  std::size_t G_, R_;
  std::vector<Totals> totals_;
  std::vector<std::int32_t> cell_of_key_;  // -1, or the current unit's cell of the key
  std::vector<Cell> cells_;                // G cells; cell c's values are pool_[c R, (c + 1) R)
  std::vector<std::uint32_t> heap_;        // the used cells, a max-heap by priority
  std::vector<std::int64_t> pool_;
  std::size_t B_ = 0;                      // buckets per key with option quantile (m + 1), else 0
  std::vector<std::int64_t> bpool_;        // the kept rows' buckets, beside pool_ (G * R with option quantile)
  std::vector<std::int64_t> hist_;         // key k's buckets are hist_[k B, (k + 1) B)
  std::vector<std::int64_t> zpool_;        // the kept rows' z, beside pool_ (G * R with option variance)
};

// One released key's values.
struct GroupedRelease {
  std::int64_t count;          // kept rows + noise (saturating)
  double sum = 0;              // (sum + noise) * g
  std::optional<double> mean;  // clamp(sum / count, lower, upper) when count > 0
  std::optional<double> quantile;  // option quantile: a point of the quantile grid
  std::optional<double> variance, stddev;  // option variance
};

// The mean's interval at `confidence` around the bounded statistic (the kept
// rows' quantized values over their number), from the released count and sum
// alone: the count and sum intervals at confidence (1 + confidence) / 2 both
// hold with probability >= confidence (a union bound); then the mean lies
// between the extreme ratios of their ends, within [lower, upper] (the whole
// [lower, upper] when the count's lower end is below 1). std::nullopt without
// a value column or when a half-width is not available.
std::optional<std::pair<double, double>> mean_interval(const GroupedPlan& plan, const GroupedRelease& r,
                                                       double confidence);

// Releases key `totals` under plan: for private keys first the selection test
// (std::nullopt: not released), then the noise. Draws noise from rng.
std::optional<GroupedRelease> release_key(const GroupedPlan& plan, const GroupedAccumulator::Totals& totals,
                                          Rng& rng);
// The same for key `key` of acc, with its quantile when the plan has one
// (drawn after the count and the sum, for the released keys only).
std::optional<GroupedRelease> release_key(const GroupedPlan& plan, const GroupedAccumulator& acc, std::uint32_t key,
                                          Rng& rng);

}  // namespace optdp
