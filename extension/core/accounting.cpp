#include "core/accounting.hpp"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <mutex>
#include <optional>
#include <type_traits>
#include <stdexcept>
#include <string>

extern "C" {
#include <quadmath.h>
}

#include "core/format.hpp"
#include "core/rounding.hpp"
#include "core/pld.hpp"

namespace optdp::zcdp {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
// binary128 infinity (clang has no HUGE_VALQ).
const __float128 kInfQ = static_cast<__float128>(kInf);

// The smallest double >= x, and the largest double <= x (core/rounding.hpp).
double up(__float128 x) { return round_up(x); }
double down(__float128 x) { return round_down(x); }

void check(bool ok, const char* name, const char* what, double v) {
  if (!ok) throw std::invalid_argument(std::string(name) + " must be " + what + ", but is " + format_double(v));
}
void check_positive(double v, const char* name) { check(v > 0 && std::isfinite(v), name, "a finite number > 0", v); }
void check_nonnegative(double v, const char* name) {
  check(v >= 0 && std::isfinite(v), name, "a finite number >= 0", v);
}

// log of the conversion's bound at alpha = 1 + x, the exponent of
// exp((alpha-1)(alpha rho - eps)) (alpha-1)^(alpha-1) / alpha^alpha:
//   h(x) = x ((1 + x) rho - eps) + x ln x - (1 + x) ln(1 + x).
// Its derivative h'(x) = (2x + 1) rho - eps - ln(1 + 1/x) increases with x
// (h'' = 2 rho + 1/x - 1/(1 + x) > 0), so h is convex with one minimum.
double h_prime(double x, double rho, double eps) {
  return (2 * x + 1) * rho - eps - std::log1p(1 / x);
}

}  // namespace

double rho_of_gaussian(double delta2, double sigma2) {
  check_positive(delta2, "delta2");
  check_positive(sigma2, "sigma2");
  return up(__float128(delta2) * __float128(delta2) / (2 * __float128(sigma2)));
}

double sigma2_for_rho(double rho, double delta2) {
  check_positive(rho, "rho");
  check_positive(delta2, "delta2");
  double s = up(__float128(delta2) * __float128(delta2) / (2 * __float128(rho)));
  // rho_of_gaussian rounds up; step until it agrees (at most a few ulps).
  while (rho_of_gaussian(delta2, s) > rho) s = std::nextafter(s, kInf);
  return s;
}

double rho_of_pure(double eps) {
  check_nonnegative(eps, "eps");
  return up(__float128(eps) * __float128(eps) / 2);
}

double delta_of_rho(double rho, double eps) {
  check_nonnegative(rho, "rho");
  check_nonnegative(eps, "eps");
  if (rho == 0) return 0;
  // Bracket the root of h' in x = alpha - 1 > 0: h' -> -inf as x -> 0.
  // The search only decides where the bound is evaluated, so double precision
  // and a relative 2^-40 suffice (h is flat at its minimum: the loss is second order).
  double lo = 1e-300, hi = 1;
  while (h_prime(hi, rho, eps) < 0 && hi < 1e300) hi *= 2;
  for (int i = 0; i < 200 && hi - lo > std::ldexp(hi, -40); ++i) {
    const double mid = hi / lo > 4 ? std::sqrt(lo) * std::sqrt(hi) : lo + (hi - lo) / 2;
    (h_prime(mid, rho, eps) < 0 ? lo : hi) = mid;
  }
  // Any alpha > 1 gives a valid bound: evaluate at x = hi in binary128 and
  // add a margin far above binary128's error in the three terms.
  const __float128 x = hi, R = rho, E = eps;
  const __float128 t1 = x * ((1 + x) * R - E), t2 = x * logq(x), t3 = (1 + x) * log1pq(x);
  const __float128 margin = ldexpq(1 + fabsq(t1) + fabsq(t2) + fabsq(t3), -100);
  const __float128 d = expq(t1 + t2 - t3 + margin);
  return d >= 1 ? 1.0 : std::min(1.0, up(d * (1 + ldexpq(__float128(1), -100))));
}

double epsilon_bun_steinke(double rho, double delta) {
  check_nonnegative(rho, "rho");
  check(delta > 0 && delta < 1, "delta", "in (0, 1)", delta);
  const __float128 R = rho;
  const __float128 v = R + 2 * sqrtq(R * -logq(__float128(delta)));
  return up(v * (1 + ldexpq(__float128(1), -100)));
}

double epsilon_of_rho(double rho, double delta) {
  check_nonnegative(rho, "rho");
  check(delta > 0 && delta < 1, "delta", "in (0, 1)", delta);
  if (rho == 0 || delta_of_rho(rho, 0) <= delta) return 0;
  // delta_of_rho decreases in eps; Bun-Steinke's eps is an upper bracket
  // (its bound exp((alpha-1)(alpha rho - eps)) is above the tight one).
  double lo = 0, hi = epsilon_bun_steinke(rho, delta);
  while (delta_of_rho(rho, hi) > delta) hi *= 2;
  while (hi - lo > std::ldexp(hi, -32)) {
    const double mid = lo + (hi - lo) / 2;
    (delta_of_rho(rho, mid) > delta ? lo : hi) = mid;
  }
  return hi;  // delta_of_rho(rho, hi) <= delta, as checked
}

namespace {

// sum += n * x, rounded up: each binary128 operation rounds to nearest, so
// where the exact result is larger (seen exactly: fmaq gives the product's
// error, Fast2Sum the sum's) the result moves up one ulp. The sums are then
// upper bounds of the exact ones, however many terms and however small
// (1e-5 + 1e-300 is above 1e-5).
void add_up(__float128& sum, std::uint64_t n, double x) {
  __float128 p = static_cast<__float128>(n) * x;
  if (fmaq(static_cast<__float128>(n), x, -p) > 0) p = nextafterq(p, kInfQ);
  __float128 a = sum, b = p;
  if (fabsq(a) < fabsq(b)) std::swap(a, b);
  const __float128 t = a + b;
  const __float128 err = b - (t - a);  // exact (Fast2Sum, |a| >= |b|)
  sum = err > 0 ? nextafterq(t, kInfQ) : t;
}

// A history reduced to what the accountings need: the sums over its groups,
// taken in the groups' (map) order, so that they depend on the multiset of
// entries only (History), never on the order the entries were recorded in.
struct Summary {
  __float128 eps = 0;        // pure and approximate entries
  __float128 delta = 0;      // approximate entries
  __float128 rho = 0;        // Gaussian rho + eps^2/2 of pure and approximate
  std::map<double, std::uint64_t> gaussians;  // rho -> count
  std::uint64_t n_gaussian = 0;
  // For the PLD: the Gaussian entries by (rho, shift); how many have no shift.
  std::map<std::pair<double, std::int64_t>, std::uint64_t> gaussian_groups;
  std::uint64_t n_gaussian_unshifted = 0;
  // For the PLD: the pure entries by eps, the approximate ones by (eps, delta).
  const std::map<double, std::uint64_t>& pures;
  const std::map<std::pair<double, double>, std::uint64_t>& approximates;

  explicit Summary(const History& h) : pures(h.pures), approximates(h.approximates) {
    for (const auto& [e, count] : h.pures) {
      add_up(eps, count, e);
      add_up(rho, count, rho_of_pure(e));
    }
    for (const auto& [ed, count] : h.approximates) {
      add_up(eps, count, ed.first);
      add_up(delta, count, ed.second);
      add_up(rho, count, rho_of_pure(ed.first));
    }
    for (const auto& [rs, count] : h.gaussians) {
      add_up(rho, count, rs.first);
      gaussians[rs.first] += count;
      n_gaussian += count;
      if (rs.second > 0) gaussian_groups[rs] += count;
      else n_gaussian_unshifted += count;
    }
  }
};

// The PLD accounting of a history without Gaussian entries: each group of
// equal releases composed exactly (the binomial, core/pld.hpp) and put on the
// grid once, the groups composed by convolution; the history fits if the
// upper bound on delta(budget.eps) is at most budget.delta. Skipped (leaving
// pld_evaluated false) when the groups are many or the grid would be large,
// so that a charge stays fast: it is only ever a further way to fit.
constexpr double kPldResolution = 100000;
constexpr std::size_t kPldMaxGroups = 64;
constexpr double kPldMaxSpan = 1 << 23;

// The most multiply-adds one composition of two groups may take (tens of
// milliseconds; a Gaussian group of 2,000 releases at sigma 200 against a
// group of geometric counts takes 10^8): two Gaussian groups' dense grids
// multiply. And the most
// values of a Gaussian group's sum (about 19.2 sqrt(k) sigma, each an exp).
// Planning evaluates the curve dozens of times per call, so both stay small.
constexpr double kPldMaxWork = 1 << 27;
constexpr double kPldMaxGaussianPoints = 1 << 20;

std::atomic<std::uint64_t> g_curve_evaluations{0};

void pld_account(const Summary& s, const Budget& b, Accounting& a) {
  if (s.pures.size() + s.approximates.size() + s.gaussian_groups.size() > kPldMaxGroups) return;
  // The grid's span: each group's binomial bulk (within ~9 standard deviations
  // of its mode, at most k + 1 points) times 2 eps N between its points.
  double span = 0;
  auto add_span = [&](double eps, std::uint64_t k) {
    const double kd = static_cast<double>(k);
    span += std::min(kd, 18 * std::sqrt(kd) + 2) * 2 * eps * kPldResolution + 1;
  };
  for (const auto& [eps, k] : s.pures) add_span(eps, k);
  for (const auto& [ed, k] : s.approximates) add_span(ed.first, k);
  // A Gaussian group: its sum within ~9.6 sd, at loss steps 2 rho / shift:
  // about 19.2 sqrt(2 rho k) N grid points (core/pld.cpp).
  for (const auto& [rk, k] : s.gaussian_groups) {
    span += 19.2 * std::sqrt(2 * rk.first * static_cast<double>(k)) * kPldResolution + 1;
    const double shift = static_cast<double>(rk.second);
    if (!(19.2 * std::sqrt(static_cast<double>(k) * shift * shift / (2 * rk.first)) <= kPldMaxGaussianPoints)) return;
  }
  if (!(span <= kPldMaxSpan)) return;
  try {
    g_curve_evaluations.fetch_add(1, std::memory_order_relaxed);
    std::optional<pld::Pld> p;  // the first group as it is: composing with the identity would copy it
    // Each step's work is known from the operands' sizes (public: they
    // depend on the history's parameters only); past kPldMaxWork the PLD is
    // not evaluated.
    bool too_much = false;
    auto compose = [&](pld::Pld q) {
      if (!p) {
        p = std::move(q);
        return;
      }
      auto nz = [](const pld::Pld& x) {
        return static_cast<double>(std::count_if(x.masses().begin(), x.masses().end(), [](double m) { return m != 0; }));
      };
      const double work = std::min(nz(*p) * static_cast<double>(q.masses().size()),
                                   nz(q) * static_cast<double>(p->masses().size()));
      if (work > kPldMaxWork) too_much = true;
      else p = p->compose(q);
    };
    for (const auto& [rk, k] : s.gaussian_groups)
      if (!too_much) compose(pld::Pld::discrete_gaussian_composed(rk.first, rk.second, k, kPldResolution));
    for (const auto& [eps, k] : s.pures)
      if (!too_much) compose(pld::Pld::pure_composed(eps, k, kPldResolution));
    for (const auto& [ed, k] : s.approximates)
      if (!too_much) compose(pld::Pld::approximate_composed(ed.first, ed.second, k, kPldResolution));
    if (too_much) return;
    if (!p) p = pld::Pld(kPldResolution);
    a.pld_delta = p->delta(b.eps);
    a.pld_fits = a.pld_delta <= b.delta;
    a.pld_evaluated = true;
  } catch (const std::invalid_argument&) {
    // A grid the PLD cannot hold (a loss beyond its range): this accounting
    // is not available for the history; the others decide, as before.
    a.pld_fits = false;
    a.pld_delta = 1;
  }
}

// Whether evaluate would read the privacy curve: neither basic composition
// nor zCDP fits, the budget has a delta, every Gaussian entry has its shift.
bool needs_curve(const Summary& s, const Budget& b, const Accounting& a) {
  return !a.basic_fits && !a.zcdp_fits && b.delta > 0 && s.n_gaussian_unshifted == 0;
}

Accounting evaluate(const Summary& in, const Budget& b, bool always_pld = false, bool curve = true) {
  check_positive(b.eps, "eps");
  check(b.delta >= 0 && b.delta < 1, "delta", "in [0, 1)", b.delta);
  const Summary& s = in;
  Accounting a;
  // Basic composition.
  __float128 eps = s.eps;
  double delta_spent = up(s.delta);
  if (s.n_gaussian > 0) {
    // What the approximate entries leave, and each Gaussian's share of it,
    // both moved one ulp down: rounded below the exact values.
    const __float128 left = nextafterq(__float128(b.delta) - s.delta, -kInfQ);
    const double share = down(nextafterq(left / static_cast<__float128>(s.n_gaussian), -kInfQ));
    if (share > 0) {
      for (const auto& [rho, count] : s.gaussians) add_up(eps, count, epsilon_of_rho(rho, share));
      __float128 d = s.delta;
      add_up(d, s.n_gaussian, share);
      delta_spent = up(d);
      a.basic_eps = up(eps);
    } else {
      a.basic_eps = kInf;
    }
  } else {
    a.basic_eps = up(eps);
  }
  a.basic_delta = delta_spent;
  a.basic_fits = a.basic_eps <= b.eps && a.basic_delta <= b.delta;
  // zCDP.
  a.rho_total = up(s.rho);
  if (std::isfinite(a.rho_total)) {
    __float128 d = s.delta;
    add_up(d, 1, delta_of_rho(a.rho_total, b.eps));
    a.zcdp_delta = up(d);
  } else {
    a.zcdp_delta = 1;
  }
  a.zcdp_fits = a.zcdp_delta <= b.delta;
  if (curve && (always_pld || (!a.basic_fits && !a.zcdp_fits)) && b.delta > 0 && s.n_gaussian_unshifted == 0)
    pld_account(s, b, a);
  return a;
}

// The cache of account_charge (docs/accounting.md, "Charges decided by the
// curve"). Its key is exact: the budget, extra's group (kind and parameters)
// and every other group of the history with its count, as 64-bit words
// (doubles by their bits); a history of more groups than the curve evaluates
// is not cached. Fixed-size storage, trivially destructible (no destructor
// runs at exit, which PostgreSQL's backends require), behind a mutex (SQLite
// connections may be used from several threads).
constexpr std::size_t kCurveKeyWords = 8 + 4 * (kPldMaxGroups + 1);
constexpr std::size_t kCurveSlots = 16;

struct CurveKey {
  std::size_t words = 0;
  std::uint64_t w[kCurveKeyWords];
  bool push(std::uint64_t x) {
    if (words == kCurveKeyWords) return false;
    w[words++] = x;
    return true;
  }
  bool push(double x) {
    std::uint64_t u;
    std::memcpy(&u, &x, sizeof u);
    return push(u);
  }
  bool operator==(const CurveKey& o) const { return words == o.words && std::memcmp(w, o.w, words * sizeof w[0]) == 0; }
};

// One evaluated history: m releases in extra's group, whether the curve's
// bound fits, and the bound.
struct CurveResult {
  std::uint64_t m;
  bool fits;
  double delta;
  bool evaluated;  // false: the curve was skipped for this history (too large); never cached
};
constexpr std::size_t kCurveResults = 64;

struct CurveSlot {
  std::uint64_t stamp;  // 0: empty; otherwise the last use (least recently used goes first)
  std::size_t next;     // where the next result goes (a ring: the oldest is replaced)
  std::size_t n;        // results held
  CurveResult result[kCurveResults];
  CurveKey key;
};

struct CurveCache {
  std::mutex lock;
  std::uint64_t clock;
  CurveSlot slot[kCurveSlots];
};
static_assert(std::is_trivially_destructible_v<CurveCache>, "no destructor may run at a PostgreSQL backend's exit");
CurveCache g_curve_cache;

// The key of `h` (extra's group included, at any count: it is left out) for
// extra and the budget; false when the history is too large to cache.
bool curve_key(const History& h, const Entry& extra, const Budget& b, CurveKey& k) {
  const int kind = static_cast<int>(extra.kind);
  bool ok = k.push(b.eps) && k.push(b.delta) && k.push(static_cast<std::uint64_t>(kind));
  switch (extra.kind) {
    case Entry::Kind::pure: ok = ok && k.push(extra.eps) && k.push(std::uint64_t{0}); break;
    case Entry::Kind::approximate: ok = ok && k.push(extra.eps) && k.push(extra.delta); break;
    case Entry::Kind::gaussian: ok = ok && k.push(extra.rho) && k.push(static_cast<std::uint64_t>(extra.shift)); break;
  }
  for (const auto& [e, n] : h.pures)
    if (!(extra.kind == Entry::Kind::pure && e == extra.eps)) ok = ok && k.push(std::uint64_t{0}) && k.push(e) && k.push(n);
  for (const auto& [ed, n] : h.approximates)
    if (!(extra.kind == Entry::Kind::approximate && ed.first == extra.eps && ed.second == extra.delta))
      ok = ok && k.push(std::uint64_t{1}) && k.push(ed.first) && k.push(ed.second) && k.push(n);
  for (const auto& [rs, n] : h.gaussians)
    if (!(extra.kind == Entry::Kind::gaussian && rs.first == extra.rho && rs.second == extra.shift))
      ok = ok && k.push(std::uint64_t{2}) && k.push(rs.first) && k.push(static_cast<std::uint64_t>(rs.second)) && k.push(n);
  return ok;
}

// The slot holding `key`, or nullptr; with the lock held.
CurveSlot* find_slot(const CurveKey& key) {
  for (CurveSlot& s : g_curve_cache.slot)
    if (s.stamp != 0 && s.key == key) return &s;
  return nullptr;
}

// The cached result for `key` at m releases, if any.
std::optional<CurveResult> curve_lookup(const CurveKey& key, std::uint64_t m) {
  std::lock_guard<std::mutex> guard(g_curve_cache.lock);
  CurveSlot* s = find_slot(key);
  if (!s) return std::nullopt;
  s->stamp = ++g_curve_cache.clock;
  for (std::size_t i = 0; i < s->n; ++i)
    if (s->result[i].m == m) return s->result[i];
  return std::nullopt;
}

void curve_record(const CurveKey& key, const CurveResult& r) {
  std::lock_guard<std::mutex> guard(g_curve_cache.lock);
  CurveSlot* s = find_slot(key);
  if (!s) {
    s = &g_curve_cache.slot[0];
    for (CurveSlot& c : g_curve_cache.slot)
      if (c.stamp < s->stamp) s = &c;
    s->next = 0;
    s->n = 0;
    s->key = key;
  }
  s->stamp = ++g_curve_cache.clock;
  s->result[s->next] = r;
  s->next = (s->next + 1) % kCurveResults;
  s->n = std::min(s->n + 1, kCurveResults);
}

}  // namespace

std::uint64_t curve_evaluations() { return g_curve_evaluations.load(std::memory_order_relaxed); }

void clear_curve_cache() {
  std::lock_guard<std::mutex> guard(g_curve_cache.lock);
  for (CurveSlot& s : g_curve_cache.slot) s.stamp = 0;
}

Accounting account_charge(const History& history, const Entry& extra, std::uint64_t count, const Budget& budget) {
  History h = history;
  h.add(extra, count);
  const Summary s(h);
  if (count == 0) return evaluate(s, budget);
  Accounting a = evaluate(s, budget, false, false);
  if (!needs_curve(s, budget, a)) return a;
  CurveKey key;
  if (!curve_key(h, extra, budget, key)) {
    pld_account(s, budget, a);
    return a;
  }
  std::uint64_t k = 0;  // the count of extra's group in h
  switch (extra.kind) {
    case Entry::Kind::pure: k = h.pures.at(extra.eps); break;
    case Entry::Kind::approximate: k = h.approximates.at({extra.eps, extra.delta}); break;
    case Entry::Kind::gaussian: k = h.gaussians.at({extra.rho, extra.shift}); break;
  }
  // The curve's bound of h with m releases in extra's group, from the cache
  // or evaluated (and kept).
  auto result = [&](std::uint64_t m) {
    if (const auto r = curve_lookup(key, m)) return *r;
    Accounting am;
    if (m == k) {
      pld_account(s, budget, a);
      am = a;
    } else {
      History g = h;
      g.add(extra, m - k);
      const Summary sg(g);
      am = evaluate(sg, budget, false, false);
      if (needs_curve(sg, budget, am)) pld_account(sg, budget, am);
    }
    const CurveResult r{m, am.pld_evaluated && am.pld_fits, am.pld_evaluated ? am.pld_delta : 1.0, am.pld_evaluated};
    if (am.pld_evaluated) curve_record(key, r);
    return r;
  };
  // h fits by the curve if h with m_j = k rounded up to a multiple of 2^j
  // releases in the group fits, for some j from J (2^J <= k/8) down to 0
  // (m_0 = k: h itself): a function of h alone, whatever the cache holds.
  // The coarse levels' m_j stay the same over runs of 2^j charges, so their
  // results are found in the cache.
  int J = 0;
  while (J < 40 && (std::uint64_t{8} << (J + 1)) <= k) ++J;
  std::uint64_t last = 0;
  for (int j = J; j >= 0; --j) {
    const std::uint64_t unit = std::uint64_t{1} << j;
    const std::uint64_t m = (k + unit - 1) / unit * unit;
    if (m == last) continue;
    last = m;
    if (m - k > (std::uint64_t{1} << 62) - h.entries) continue;
    const CurveResult r = result(m);
    if (r.fits || m == k) {
      a.pld_evaluated = r.evaluated;
      a.pld_fits = r.fits;
      a.pld_delta = r.delta;
      return a;
    }
  }
  return a;
}

void History::add(const Entry& e, std::uint64_t count) {
  if (count == 0) return;
  switch (e.kind) {
    case Entry::Kind::pure:
      check_positive(e.eps, "eps");
      break;
    case Entry::Kind::approximate:
      check_positive(e.eps, "eps");
      check(e.delta >= 0 && e.delta < 1, "delta", "in [0, 1)", e.delta);
      break;
    case Entry::Kind::gaussian:
      check_positive(e.rho, "rho");
      check(e.shift >= 0, "shift", "an integer >= 0", static_cast<double>(e.shift));
      break;
  }
  constexpr std::uint64_t kMaxEntries = std::uint64_t{1} << 62;
  if (count > kMaxEntries - entries)
    throw std::invalid_argument("count must keep the history within 2^62 entries, but is " + std::to_string(count));
  switch (e.kind) {
    case Entry::Kind::pure: pures[e.eps] += count; break;
    case Entry::Kind::approximate: approximates[{e.eps, e.delta}] += count; break;
    case Entry::Kind::gaussian: gaussians[{e.rho, e.shift}] += count; break;
  }
  entries += count;
}

History History::of(const std::vector<Entry>& entries) {
  History h;
  for (const Entry& e : entries) h.add(e, 1);
  return h;
}

double rho_for_epsilon_delta(double eps, double delta) {
  check_positive(eps, "eps");
  check(delta > 0 && delta < 1, "delta", "in (0, 1)", delta);
  // delta_of_rho increases with rho; it is 0 at rho = 0 and tends to 1.
  double lo = 0, hi = eps;  // delta_of_rho(eps, eps) >= ... grow hi until it fails
  while (delta_of_rho(hi, eps) <= delta) {
    lo = hi;
    hi *= 2;
    if (!std::isfinite(hi)) return lo;
  }
  for (int i = 0; i < 200 && std::nextafter(lo, hi) < hi; ++i) {  // delta_of_rho(lo) <= delta < delta_of_rho(hi)
    const double mid = lo + (hi - lo) / 2;
    (delta_of_rho(mid, eps) <= delta ? lo : hi) = mid;
  }
  return lo;
}

Accounting account(const History& history, const Budget& budget) { return evaluate(Summary(history), budget); }

Accounting account(const std::vector<Entry>& history, const Budget& budget) {
  return account(History::of(history), budget);
}

Accounting account_all(const History& history, const Budget& budget) {
  return evaluate(Summary(history), budget, true);
}

Accounting account_all(const std::vector<Entry>& history, const Budget& budget) {
  return account_all(History::of(history), budget);
}

Accounting account(const History& history, const Entry& extra, std::uint64_t count, const Budget& budget) {
  History h = history;
  h.add(extra, count);
  return evaluate(Summary(h), budget);
}

Accounting account(const std::vector<Entry>& history, const Entry& extra, std::uint64_t count,
                   const Budget& budget) {
  return account(History::of(history), extra, count, budget);
}

std::uint64_t further_releases(const std::vector<Entry>& history, const Entry& extra, const Budget& budget,
                               std::uint64_t max_count) {
  return further_releases(History::of(history), extra, budget, max_count);
}

std::uint64_t further_releases(const History& history, const Entry& extra, const Budget& budget,
                               std::uint64_t max_count) {
  auto fits = [&](std::uint64_t n) { return account_charge(history, extra, n, budget).fits(); };
  if (max_count == 0 || !fits(1)) return 0;
  // fits(n) is monotone: each entry only adds eps, delta or rho, and in the
  // basic accounting shrinks the other Gaussians' delta shares.
  std::uint64_t lo = 1, hi = 2;  // fits(lo), hi untested
  while (hi <= max_count && fits(hi)) {
    lo = hi;
    if (hi > max_count / 2) { hi = max_count + 1; break; }
    hi *= 2;
  }
  if (hi > max_count) {
    if (fits(max_count)) return max_count;
    hi = max_count;
  }
  while (hi - lo > 1) {  // fits(lo), !fits(hi)
    const std::uint64_t mid = lo + (hi - lo) / 2;
    (fits(mid) ? lo : hi) = mid;
  }
  return lo;
}

double sigma2_for_further(const std::vector<Entry>& history, std::uint64_t k, double delta2,
                          const Budget& budget) {
  return sigma2_for_further(History::of(history), k, delta2, budget);
}

double sigma2_for_further(const History& history, std::uint64_t k, double delta2, const Budget& budget) {
  check_positive(delta2, "delta2");
  if (k == 0) throw std::invalid_argument("k must be at least 1, but is 0");
  // An integer sensitivity is the releases' shift, for their PLD (as
  // ledger_rule.hpp's planned_gaussian: the ledger takes what is planned).
  const std::int64_t shift =
      delta2 >= 1 && delta2 <= (1 << 20) && delta2 == std::floor(delta2) ? static_cast<std::int64_t>(delta2) : 0;
  auto fits = [&](double sigma2) {
    return account(history, Entry::gaussian(rho_of_gaussian(delta2, sigma2), shift), k, budget).fits();
  };
  // Larger sigma, smaller rho: fits is monotone in sigma2. Search on a log scale.
  double hi = delta2 * delta2;
  while (!fits(hi)) {
    if (hi > 1e300) return kInf;
    hi *= 4;
  }
  double lo = hi;
  while (lo > 1e-300 && fits(lo)) lo /= 4;
  if (fits(lo)) return lo;
  while (hi - lo > std::ldexp(hi, -30)) {  // !fits(lo), fits(hi)
    const double mid = hi / lo > 4 ? std::sqrt(lo) * std::sqrt(hi) : lo + (hi - lo) / 2;
    (fits(mid) ? hi : lo) = mid;
  }
  return hi;
}

}  // namespace optdp::zcdp
