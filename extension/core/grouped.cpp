// Grouped releases by privacy unit: options, the plan of the noise, the
// bounding accumulator and the release of one key (core/grouped.hpp; the
// derivation of every sensitivity is in docs/grouped.md).
#include "core/grouped.hpp"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <mutex>
#include <stdexcept>
#include <string>
#include <type_traits>

#include <sodium.h>

#include "core/accounting.hpp"
#include "core/format.hpp"
#include "core/intervals.hpp"
#include "core/privacy.hpp"

namespace optdp {

namespace {

constexpr const char* kOptionNames =
    "max_groups, max_rows, lower, upper, delta, noise, confidence, quantile, variance";

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == ','; }

double parse_number(std::string_view name, std::string_view value) {
  const std::string s(value);
  char* end = nullptr;
  errno = 0;
  const double v = std::strtod(s.c_str(), &end);
  if (s.empty() || end != s.c_str() + s.size() || !std::isfinite(v) || s.find_first_of("xXnN") != std::string::npos)
    throw std::invalid_argument("option " + std::string(name) + " must be a finite number, but is " +
                                quote_text(value));
  return v;
}

std::int64_t parse_count(std::string_view name, std::string_view value, std::int64_t max) {
  const double v = parse_number(name, value);
  if (!(v >= 1 && v <= static_cast<double>(max) && v == std::floor(v)))
    throw std::invalid_argument("option " + std::string(name) + " must be an integer in [1, " + std::to_string(max) +
                                "], but is " + quote_text(value));
  return static_cast<std::int64_t>(v);
}

}  // namespace

GroupedOptions parse_grouped_options(std::string_view text) {
  GroupedOptions o;
  bool seen[9] = {};
  std::size_t i = 0;
  while (true) {
    while (i < text.size() && is_space(text[i])) ++i;
    if (i == text.size()) break;
    std::size_t j = i;
    while (j < text.size() && !is_space(text[j])) ++j;
    const std::string_view item = text.substr(i, j - i);
    i = j;
    const std::size_t eq = item.find('=');
    if (eq == std::string_view::npos)
      throw std::invalid_argument("options must be name=value items (" + std::string(kOptionNames) +
                                  "), but has " + quote_text(item));
    const std::string_view name = item.substr(0, eq), value = item.substr(eq + 1);
    int k;
    if (name == "max_groups") k = 0;
    else if (name == "max_rows") k = 1;
    else if (name == "lower") k = 2;
    else if (name == "upper") k = 3;
    else if (name == "delta") k = 4;
    else if (name == "noise") k = 5;
    else if (name == "confidence") k = 6;
    else if (name == "quantile") k = 7;
    else if (name == "variance") k = 8;
    else
      throw std::invalid_argument("options: unknown option " + quote_text(name) + " (known: " + kOptionNames + ")");
    if (seen[k]) throw std::invalid_argument("options: " + std::string(name) + " is given twice");
    seen[k] = true;
    switch (k) {
      case 0: o.max_groups = parse_count(name, value, GroupedOptions::kMaxGroups); break;
      case 1: o.max_rows = parse_count(name, value, GroupedOptions::kMaxRows); break;
      case 2: o.lower = parse_number(name, value); break;
      case 3: o.upper = parse_number(name, value); break;
      case 4: o.delta = parse_number(name, value); break;
      case 6:
        o.confidence = parse_number(name, value);
        if (!(o.confidence > 0 && o.confidence < 1))
          throw std::invalid_argument("option confidence must be in (0, 1), but is " + quote_text(value));
        break;
      case 7:
        o.quantile = parse_number(name, value);
        if (!(*o.quantile >= 0 && *o.quantile <= 1))
          throw std::invalid_argument("option quantile must be in [0, 1], but is " + quote_text(value));
        break;
      case 8:
        if (value != "on" && value != "off")
          throw std::invalid_argument("option variance must be 'on' or 'off', but is " + quote_text(value));
        o.variance = value == "on";
        break;
      default:
        if (value != "gaussian" && value != "optimal")
          throw std::invalid_argument("option noise must be 'optimal' or 'gaussian', but is " + quote_text(value));
        o.gaussian = value == "gaussian";
        break;
    }
  }
  return o;
}

double divide_down(double x, double n) {
  double q = x / n;
  if (std::fma(q, n, -x) > 0) q = std::nextafter(q, 0.0);
  return q;
}

namespace {

// The count sampler: alpha = e^-(eps_part / (2 G R)), eps rounded down before
// alpha_of_epsilon rounds alpha up.
TwoSidedGeometric make_count(double eps_part, std::int64_t G, std::int64_t R) {
  const double eps = divide_down(eps_part, 2.0 * static_cast<double>(G) * static_cast<double>(R));
  if (!(eps >= 0x1p-30))
    throw std::invalid_argument("epsilon / (" + std::string("parts * 2 * max_groups * max_rows") +
                                ") must be at least 2^-30 (the counts' noise would not fit 64 bits), but is " +
                                format_double(eps));
  return TwoSidedGeometric(alpha_of_epsilon(eps, "epsilon"));
}

}  // namespace

GroupedPlan::GroupedPlan(double epsilon, const GroupedOptions& o, bool has_value, bool private_keys)
    : epsilon_(epsilon),
      G_(o.max_groups),
      R_(o.max_rows),
      has_value_(has_value),
      parts_(1 + (has_value ? 1 : 0) + (private_keys ? 1 : 0) + (o.quantile ? 1 : 0) + (o.variance ? 1 : 0)),
      eps_part_((check_positive(epsilon, "epsilon"), divide_down(epsilon, parts_))) {
  gaussian_ = o.gaussian;
  double rho_part = 0;
  if (gaussian_) {
    if (private_keys)
      throw std::invalid_argument("option noise=gaussian needs public keys (a keys query): partition selection is "
                                  "calibrated for pure noise");
    if (!o.delta)
      throw std::invalid_argument("option noise=gaussian needs option delta > 0: the release is (epsilon, delta)-DP "
                                  "through zCDP");
    delta_ = *o.delta;
    if (!(delta_ > 0 && delta_ < 1))
      throw std::invalid_argument("option delta must be in (0, 1), but is " + format_double(delta_));
    rho_ = zcdp::rho_for_epsilon_delta(epsilon, delta_);
    rho_part = divide_down(rho_, parts_);
    // L2 sensitivity of the counts for 2G keys moved by R each: R sqrt(2G);
    // sigma^2 = (2 G R^2) / (2 rho_part), rounded up.
    const __float128 G = static_cast<__float128>(G_), R = static_cast<__float128>(R_);
    __float128 s2 = G * R * R / static_cast<__float128>(rho_part);
    count_sigma2_ = static_cast<double>(s2);
    if (static_cast<__float128>(count_sigma2_) < s2) count_sigma2_ = std::nextafter(count_sigma2_, HUGE_VAL);
    if (!(count_sigma2_ <= DiscreteGaussian::kMaxSigma2))
      throw std::invalid_argument("max_groups * max_rows^2 / rho must be at most 2^80 (the counts' noise), but is " +
                                  format_double(count_sigma2_) + " (rho " + format_double(rho_) + ")");
    count_gauss_.emplace(count_sigma2_);
  } else {
    count_.emplace(make_count(eps_part_, G_, R_));
  }
  {
  if (has_value) {
    if (!o.lower || !o.upper)
      throw std::invalid_argument(
          "options lower and upper are required when the query returns a value (a third column), but " +
          std::string(!o.lower ? "lower" : "upper") + " is missing");
    lower_ = *o.lower;
    upper_ = *o.upper;
    if (!(lower_ < upper_))
      throw std::invalid_argument("option lower must be less than upper, but is " + format_double(lower_) +
                                  " (upper " + format_double(upper_) + ")");
    const double R = static_cast<double>(R_);
    if (!std::isfinite(R * lower_) || !std::isfinite(R * upper_) || !std::isfinite(R * upper_ - R * lower_))
      throw std::invalid_argument("max_rows * (upper - lower) must be finite, but is " +
                                  format_double(R * upper_ - R * lower_));
    sum_eps_key_ = divide_down(eps_part_, 2.0 * static_cast<double>(G_));
    // With Gaussian noise the grid is chosen as for pure noise of the same
    // scale per key, eps = sqrt(2 rho_part / (2G)) (capped at 20).
    const double grid_eps = gaussian_ ? std::min(std::sqrt(rho_part / static_cast<double>(G_)), 20.0) : sum_eps_key_;
    // The grid of a key's total, [R lower, R upper]; rows are quantized with its
    // step, so one unit's kept rows move a key's integer sum by at most
    // R * max(upper_q - lower_q, |lower_q|, |upper_q|).
    grid_ = make_grid(std::max(grid_eps, 0x1p-30), R * lower_, R * upper_, "max_rows * (upper - lower)");
    grid_.lower_q = round_to_int64(lower_ * grid_.inv_g);
    grid_.upper_q = round_to_int64(upper_ * grid_.inv_g);
    if (grid_.lower_q == grid_.upper_q)
      throw std::invalid_argument("upper - lower must be at least one grid step (" + format_double(grid_.g) +
                                  "), but is " + format_double(upper_ - lower_));
    D_key_ = R_ * grid_.D();
    if (gaussian_) {
      // L2 sensitivity D_key sqrt(2G) grid steps: sigma^2 = G D_key^2 / rho_part, rounded up.
      const __float128 s2 = static_cast<__float128>(G_) * static_cast<__float128>(D_key_) *
                            static_cast<__float128>(D_key_) / static_cast<__float128>(rho_part);
      sum_sigma2_ = static_cast<double>(s2);
      if (static_cast<__float128>(sum_sigma2_) < s2) sum_sigma2_ = std::nextafter(sum_sigma2_, HUGE_VAL);
      if (!(sum_sigma2_ <= DiscreteGaussian::kMaxSigma2))
        throw std::invalid_argument("the sums' Gaussian noise would exceed sigma^2 = 2^80 grid steps (max_groups " +
                                    std::to_string(G_) + ", rho " + format_double(rho_) + ")");
      sum_gauss_.emplace(sum_sigma2_);
    } else {
      stair_.emplace(sum_eps_key_, D_key_, IntegerStaircase::optimal_r(sum_eps_key_, D_key_, Cost::L1));
    }
  } else if (o.lower || o.upper) {
    throw std::invalid_argument("options lower and upper apply only when the query returns a value (a third column)");
  }
  if (o.quantile) {
    if (!has_value)
      throw std::invalid_argument("option quantile applies only when the query returns a value (a third column)");
    if (gaussian_)
      throw std::invalid_argument("option quantile needs noise=optimal: the quantiles' exponential mechanism is "
                                  "calibrated for pure noise");
    // Each key holds m + 1 <= 4097 bucket counts (32 kB): with private keys
    // their number, hence the memory and whether it can be had after the
    // charge, would follow the data.
    if (private_keys)
      throw std::invalid_argument("option quantile needs public keys (a keys query): each key holds 32 kB of "
                                  "bucket counts, and the number of private keys follows the data");
    // Per key eps_part / (2G) (at most 2G keys move), for a score of
    // sensitivity R: the mechanism's weights are exp(eps_part / (2 G R) *
    // score / 2). At least the counts' epsilon, checked above to be >= 2^-30.
    quantile_ = *o.quantile;
    quantile_eps_ = divide_down(eps_part_, 2.0 * static_cast<double>(G_) * static_cast<double>(R_));
    qgrid_ = QuantileGrid(lower_, upper_);
  }
  if (o.variance) {
    if (!has_value)
      throw std::invalid_argument("option variance applies only when the query returns a value (a third column)");
    if (gaussian_)
      throw std::invalid_argument("option variance needs noise=optimal: its second moments get the staircase");
    // The centred grid of core/moments.hpp at the per-key epsilon eps_part /
    // (2G) (its grid step is far below the noise); z = round(y^2 / 2^s) lies
    // in [0, D2], so one unit's at most R kept rows move a key's S2 by at
    // most R * D2 (R <= 1000, D2 <= 2^40: below 2^50).
    const double eps_key = divide_down(eps_part_, 2.0 * static_cast<double>(G_));
    moments_.emplace(MomentsPlan::Kind::Variance, std::max(eps_key, 0x1p-30), lower_, upper_);
    D2_key_ = R_ * moments_->D2;
    stair2_.emplace(eps_key, D2_key_, IntegerStaircase::optimal_r(eps_key, D2_key_, Cost::L1));
  }
  if (private_keys) {
    if (!o.delta)
      throw std::invalid_argument(
          "private keys (no keys query) are released by partition selection, which needs option delta > 0; "
          "give delta=... or a query of public keys");
    delta_ = *o.delta;
    try {
      selection_.emplace(eps_part_, delta_, 2 * G_);
    } catch (const std::invalid_argument& e) {
      throw std::invalid_argument(std::string("partition selection over 2 * max_groups keys at epsilon / ") +
                                  std::to_string(parts_) + ": " + e.what());
    }
  } else if (o.delta && !gaussian_) {
    throw std::invalid_argument("option delta applies only to private keys (no keys query); public keys need none");
  }
  }
}

namespace {

// The discrete Gaussian's half-widths of the last kKeptWidths (sigma^2,
// confidence) pairs the process asked for: the law summed term by term (about
// 13 sigma binary128 expq, core/intervals.cpp) cost a Gaussian private_groups
// with sums 4 of them per release (count and sum, at the confidence and at
// (1 + confidence) / 2 for mean_low and mean_high). The key is public
// parameters alone, so whether a release finds its widths here depends on
// earlier releases' parameters, never on data. Shared by the process's
// connections under a mutex; plain arrays, so nothing runs at exit
// (PostgreSQL backends leave through exit()), as core/samplers.cpp's kept
// digits.
struct KeptGaussianWidth {
  std::uint64_t sigma2 = 0, confidence = 0;  // the parameters' bits
  bool full = false, has = false;
  std::int64_t h = 0;
};
constexpr int kKeptWidths = 16;
KeptGaussianWidth kept_widths[kKeptWidths];
int kept_widths_next = 0;
std::mutex kept_widths_mutex;
static_assert(std::is_trivially_destructible_v<std::mutex> && std::is_trivially_destructible_v<KeptGaussianWidth>);

std::optional<std::int64_t> kept_gaussian_half_width(double sigma2, double confidence) {
  std::uint64_t s, c;
  std::memcpy(&s, &sigma2, sizeof s);
  std::memcpy(&c, &confidence, sizeof c);
  {
    std::lock_guard<std::mutex> lock(kept_widths_mutex);
    for (const KeptGaussianWidth& k : kept_widths)
      if (k.full && k.sigma2 == s && k.confidence == c) return k.has ? std::optional<std::int64_t>(k.h) : std::nullopt;
  }
  const std::optional<std::int64_t> h = discrete_gaussian_half_width(sigma2, confidence);  // may throw: not kept
  std::lock_guard<std::mutex> lock(kept_widths_mutex);
  kept_widths[kept_widths_next] = KeptGaussianWidth{s, c, true, h.has_value(), h.value_or(0)};
  kept_widths_next = (kept_widths_next + 1) % kKeptWidths;
  return h;
}

}  // namespace

const GroupedPlan::KeptWidth& GroupedPlan::widths(double confidence) const {
  for (const KeptWidth& w : widths_)
    if (w.confidence == confidence) return w;
  KeptWidth w{confidence, std::nullopt, std::nullopt};
  w.count = count_ ? std::optional<std::int64_t>(geometric_half_width(count_->alpha(), confidence))
                   : kept_gaussian_half_width(count_sigma2_, confidence);
  if (stair_) w.sum = staircase_half_width(stair_->b(), stair_->D(), stair_->r(), confidence);
  else if (sum_gauss_) w.sum = kept_gaussian_half_width(sum_sigma2_, confidence);
  widths_.push_back(w);
  return widths_.back();
}

std::optional<std::int64_t> GroupedPlan::count_half_width(double confidence) const {
  return widths(confidence).count;
}

std::optional<double> GroupedPlan::sum_half_width(double confidence) const {
  const std::optional<std::int64_t> h = widths(confidence).sum;
  if (!h) return std::nullopt;
  return static_cast<double>(*h) * grid_.g;
}

std::optional<std::pair<double, double>> mean_interval(const GroupedPlan& plan, const GroupedRelease& r,
                                                       double confidence) {
  if (!plan.has_value()) return std::nullopt;
  const double inner = (1 + confidence) / 2;
  const auto hc = plan.count_half_width(inner);
  const auto hs = plan.sum_half_width(inner);
  if (!hc || !hs) return std::nullopt;
  const double n_lo = static_cast<double>(r.count) - static_cast<double>(*hc);
  if (!(n_lo >= 1)) return std::pair{plan.lower(), plan.upper()};
  const double n_hi = static_cast<double>(r.count) + static_cast<double>(*hc);
  const double s_lo = r.sum - *hs, s_hi = r.sum + *hs;
  const double q[] = {s_lo / n_lo, s_lo / n_hi, s_hi / n_lo, s_hi / n_hi};
  double lo = *std::min_element(std::begin(q), std::end(q)), hi = *std::max_element(std::begin(q), std::end(q));
  lo = std::nextafter(lo, -HUGE_VAL);  // the divisions' rounding, outward
  hi = std::nextafter(hi, HUGE_VAL);
  return std::pair{std::clamp(lo, plan.lower(), plan.upper()), std::clamp(hi, plan.lower(), plan.upper())};
}

namespace {

// n <= 8 bytes at p as a little-endian number.
std::uint64_t load_le(const unsigned char* p, std::size_t n) {
  std::uint64_t x = 0;
  for (std::size_t i = 0; i < n; ++i) x |= static_cast<std::uint64_t>(p[i]) << (8 * i);
  return x;
}

}  // namespace

KeyPriority::KeyPriority(Rng& rng) {
  unsigned char secret[16];
  for (unsigned char& b : secret) b = rng.byte();
  k0_ = load_le(secret, 8);
  k1_ = load_le(secret + 8, 8);
  sodium_memzero(secret, sizeof secret);
}

std::uint64_t KeyPriority::OfUnit::operator()(unsigned char type, std::string_view key) const {
  // The message: unit (8 bytes, little-endian; absorbed in h_), type (1
  // byte), key's bytes.
  detail::SipHash24 h = h_;
  const auto* p = reinterpret_cast<const unsigned char*>(key.data());
  std::size_t n = key.size();
  const std::size_t length = 9 + n;
  if (n < 7) return h.finish(type | (load_le(p, n) << 8), length);
  h.word(type | (load_le(p, 7) << 8));
  p += 7;
  n -= 7;
  for (; n >= 8; p += 8, n -= 8) h.word(load_le(p, 8));
  return h.finish(load_le(p, n), length);
}

GroupedAccumulator::GroupedAccumulator(const GroupedPlan& plan)
    : plan_(plan),
      G_(static_cast<std::size_t>(plan.max_groups())),
      R_(static_cast<std::size_t>(plan.max_rows())),
      cells_(G_),
      pool_(plan.has_value() ? G_ * R_ : 0),
      B_(plan.has_quantile() ? static_cast<std::size_t>(plan.quantile_grid().candidates()) + 1 : 0),
      bpool_(plan.has_quantile() ? G_ * R_ : 0),
      zpool_(plan.has_variance() ? G_ * R_ : 0) {
  heap_.reserve(G_);
}

void GroupedAccumulator::reserve_keys(std::size_t n) {
  if (n > totals_.size()) {
    totals_.resize(n);
    cell_of_key_.resize(n, -1);
    hist_.resize(n * B_, 0);
  }
}

std::span<const std::int64_t> GroupedAccumulator::buckets(std::uint32_t key) const {
  if (B_ == 0) return {};
  return std::span<const std::int64_t>(hist_).subspan(static_cast<std::size_t>(key) * B_, B_);
}

bool GroupedAccumulator::before(std::uint32_t a, std::uint32_t b) const {
  const Cell& x = cells_[a];
  const Cell& y = cells_[b];
  return x.priority != y.priority ? x.priority < y.priority : x.key < y.key;
}

void GroupedAccumulator::add(std::uint32_t key, std::uint64_t priority, std::int64_t q, std::int64_t b, std::int64_t z,
                             Rng& rng) {
  std::int32_t c = cell_of_key_[key];
  if (c < 0) {
    // A key not kept (yet): it enters if fewer than G keys are kept, or in
    // place of the kept key of largest priority if its own is smaller. The
    // G-th smallest priority seen only falls, so a key that is turned away or
    // pushed out never comes back: every kept key has all its rows.
    const auto order = [this](std::uint32_t a, std::uint32_t b) { return before(a, b); };
    std::uint32_t slot;
    if (heap_.size() < G_) {
      slot = static_cast<std::uint32_t>(heap_.size());
      heap_.push_back(slot);
    } else {
      const Cell& worst = cells_[heap_.front()];
      if (priority > worst.priority || (priority == worst.priority && key > worst.key)) return;
      std::pop_heap(heap_.begin(), heap_.end(), order);
      slot = heap_.back();
      cell_of_key_[cells_[slot].key] = -1;
    }
    cells_[slot] = Cell{key, priority, 0};
    std::push_heap(heap_.begin(), heap_.end(), order);
    c = static_cast<std::int32_t>(slot);
    cell_of_key_[key] = c;
  }
  Cell& cell = cells_[static_cast<std::size_t>(c)];
  const std::int64_t seen = cell.rows++;
  if (!plan_.has_value()) return;
  const std::size_t first = static_cast<std::size_t>(c) * R_;
  // The slot of this row: the next free one, or by reservoir sampling (the
  // (seen+1)-th row replaces a uniform slot with probability R / (seen + 1)).
  std::uint64_t j = static_cast<std::uint64_t>(seen);
  if (static_cast<std::size_t>(seen) >= R_) {
    j = rng.below(static_cast<std::uint64_t>(seen) + 1);
    if (j >= R_) return;
  }
  pool_[first + j] = q;
  if (B_ != 0) bpool_[first + j] = b;
  if (!zpool_.empty()) zpool_[first + j] = z;
}

void GroupedAccumulator::end_unit() {
  for (const std::uint32_t c : heap_) {
    const Cell& cell = cells_[c];
    Totals& t = totals_[cell.key];
    const std::size_t n = static_cast<std::size_t>(cell.rows) < R_ ? static_cast<std::size_t>(cell.rows) : R_;
    t.units += 1;
    t.rows += static_cast<std::int64_t>(n);
    if (plan_.has_value())
      for (std::size_t k = 0; k < n; ++k) t.sum += pool_[static_cast<std::size_t>(c) * R_ + k];
    if (!zpool_.empty())
      for (std::size_t k = 0; k < n; ++k) t.sum2 += zpool_[static_cast<std::size_t>(c) * R_ + k];
    if (B_ != 0)
      for (std::size_t k = 0; k < n; ++k)
        ++hist_[static_cast<std::size_t>(cell.key) * B_ + static_cast<std::size_t>(bpool_[static_cast<std::size_t>(c) * R_ + k])];
    cell_of_key_[cell.key] = -1;
  }
  heap_.clear();
}

std::optional<GroupedRelease> release_key(const GroupedPlan& plan, const GroupedAccumulator::Totals& t, Rng& rng) {
  if (const PartitionSelection* s = plan.selection(); s && !s->keep(t.units, rng)) return std::nullopt;
  GroupedRelease r;
  const __int128 count = static_cast<__int128>(t.rows) + plan.count_noise(rng);
  constexpr __int128 kMax = std::numeric_limits<std::int64_t>::max(), kMin = std::numeric_limits<std::int64_t>::min();
  r.count = static_cast<std::int64_t>(count > kMax ? kMax : (count < kMin ? kMin : count));
  if (plan.has_value()) {
    const __int128 sum = t.sum + plan.sum_noise(rng);
    r.sum = static_cast<double>(sum) * plan.grid_step();
    if (r.count > 0) {
      const double mean = r.sum / static_cast<double>(r.count);
      r.mean = mean < plan.lower() ? plan.lower() : (mean > plan.upper() ? plan.upper() : mean);
    }
  }
  return r;
}

std::pair<double, double> GroupedPlan::variance_of(std::int64_t count, double sum, __int128 s2) const {
  // core/moments.cpp's estimator in grid units: v = 2^s S2 / n - my^2, with
  // the centred mean my = (sum / n - mid) / g from the released sum (real
  // units), clamped into [0, ((upper - lower) / 2g)^2]; then scaled by g once.
  if (count <= 0 || !moments_) return {0.0, 0.0};
  const MomentsPlan& m = *moments_;
  const double n = static_cast<double>(count);
  const double my = (sum / n - m.mid) * m.inv_g;
  const double m2 = std::ldexp(static_cast<double>(s2), m.shift) / n;
  const double top = (upper_ - lower_) / 2 * m.inv_g;
  double v = m2 - my * my;
  v = std::isnan(v) ? 0.0 : std::clamp(v, 0.0, top * top);
  const double half = (upper_ - lower_) / 2;
  return {std::min(v * m.g * m.g, half * half), std::min(std::sqrt(v) * m.g, half)};
}

std::optional<GroupedRelease> release_key(const GroupedPlan& plan, const GroupedAccumulator& acc, std::uint32_t key,
                                          Rng& rng) {
  auto r = release_key(plan, acc.totals()[key], rng);
  if (r && plan.has_variance()) {
    const auto [v, sd] = plan.variance_of(r->count, r->sum, acc.totals()[key].sum2 + plan.square_noise(rng));
    r->variance = v;
    r->stddev = sd;
  }
  if (r && plan.has_quantile()) {
    const std::int64_t j = sample_quantile(rng, acc.buckets(key), plan.quantile_q(), plan.quantile_epsilon());
    r->quantile = plan.quantile_grid().candidate(j);
  }
  return r;
}

}  // namespace optdp
