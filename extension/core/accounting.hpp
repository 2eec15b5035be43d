// optdp core: zero-concentrated differential privacy (zCDP) accounting.
//
// Every formula, its reference and why each rounding is on the safe side are
// in docs/accounting.md. In short:
//   * a Gaussian (or discrete Gaussian) release with L2 sensitivity Delta and
//     noise parameter sigma is rho-zCDP with rho = Delta^2 / (2 sigma^2)
//     (Bun and Steinke 2016, Proposition 1.6; Canonne, Kamath and Steinke 2020,
//     Theorem 14 for the discrete Gaussian);
//   * a pure eps-DP release is (eps^2 / 2)-zCDP (Bun and Steinke, Proposition 1.4);
//     an (eps, delta)-DP release (partition selection) is delta-approximately
//     (eps^2 / 2)-zCDP (docs/accounting.md, "Approximate steps");
//   * rho-zCDP implies (eps, delta(eps))-DP with the tight conversion
//     delta(eps) = min_{alpha > 1} exp((alpha - 1)(alpha rho - eps)) (alpha - 1)^(alpha - 1) / alpha^alpha
//     (Canonne, Kamath and Steinke, Corollary 13).
// Every function returns a value rounded toward the safe side: privacy costs
// (rho, delta, eps) up, noise (sigma^2) up, counts of releases down.
// Arguments are checked; a bad one throws std::invalid_argument with
// "<argument> must be ..., but is X".
#pragma once

#include <cstdint>
#include <map>
#include <utility>
#include <vector>

namespace optdp::zcdp {

// rho = Delta^2 / (2 sigma^2), rounded up. delta2 (the L2 sensitivity Delta)
// and sigma2 must be finite and > 0.
double rho_of_gaussian(double delta2, double sigma2);
// The smallest sigma^2 (a double) with rho_of_gaussian(delta2, sigma2) <= rho.
double sigma2_for_rho(double rho, double delta2);
// eps^2 / 2, rounded up; eps finite and >= 0.
double rho_of_pure(double eps);

// The tight conversion: delta(eps) for rho-zCDP, rounded up, in [0, 1]. The
// minimising alpha is found numerically (the exponent is convex in alpha);
// the value returned is the bound at the alpha found, evaluated in binary128
// and rounded up, so it is a valid delta whatever the accuracy of the search.
// rho >= 0 and eps >= 0, both finite.
double delta_of_rho(double rho, double eps);
// The inverse: an eps with delta_of_rho(rho, eps) <= delta (checked with the
// rounded-up delta_of_rho itself), at most a relative 2^-32 above the smallest
// such eps (bisection; docs/accounting.md). delta in (0, 1).
double epsilon_of_rho(double rho, double delta);
// The largest rho (a double) with delta_of_rho(rho, eps) <= delta: the zCDP
// parameter a Gaussian release needs to be (eps, delta)-DP by the tight
// conversion (bisection on the rounded-up delta_of_rho itself, so the answer
// is valid whatever the search's accuracy). eps > 0 finite, delta in (0, 1).
double rho_for_epsilon_delta(double eps, double delta);
// Bun and Steinke's simpler bound eps = rho + 2 sqrt(rho ln(1/delta)), rounded
// up (for comparison: it is never below epsilon_of_rho).
double epsilon_bun_steinke(double rho, double delta);

// One release in the ledger's history.
struct Entry {
  enum class Kind { pure, approximate, gaussian };
  Kind kind = Kind::pure;
  double eps = 0;    // pure and approximate
  double delta = 0;  // approximate (partition selection)
  double rho = 0;    // gaussian
  // gaussian: the release's integer sensitivity in its noise's lattice steps
  // (1 for a count), its noise N_Z(0, shift^2 / (2 rho)): what its PLD needs
  // (core/pld.hpp). 0 when unknown (ledger entries recorded before it was,
  // and releases not dominated by one such pair): then the history is
  // accounted by basic composition and zCDP only.
  std::int64_t shift = 0;
  static Entry pure(double eps) { return {Kind::pure, eps, 0, 0, 0}; }
  static Entry approximate(double eps, double delta) { return {Kind::approximate, eps, delta, 0, 0}; }
  static Entry gaussian(double rho, std::int64_t shift = 0) { return {Kind::gaussian, 0, 0, rho, shift}; }
};

// A history as every accounting reads it: how many entries there are of each
// kind with each parameter. The accountings depend on this multiset only,
// never on the entries' order, so a ledger can keep it and add one charge in
// O(log kinds) instead of reading every entry (docs/accounting.md, "What a
// charge reads").
struct History {
  std::map<double, std::uint64_t> pures;                              // eps -> count
  std::map<std::pair<double, double>, std::uint64_t> approximates;    // (eps, delta) -> count
  std::map<std::pair<double, std::int64_t>, std::uint64_t> gaussians;  // (rho, shift) -> count; shift 0: none
  std::uint64_t entries = 0;
  // Adds `count` copies of e. Throws std::invalid_argument for an eps not
  // finite and > 0, a delta outside [0, 1), a rho not finite and > 0, a
  // negative shift, or more than 2^62 entries.
  void add(const Entry& e, std::uint64_t count = 1);
  bool has_gaussian() const { return !gaussians.empty(); }
  bool operator==(const History&) const = default;
  static History of(const std::vector<Entry>& entries);
};

struct Budget {
  double eps = 0;    // > 0
  double delta = 0;  // in [0, 1)
};

// The accountings of a history against a budget. Each is a valid (eps, delta)
// bound on the whole history, so the history is within the budget when any
// fits (docs/accounting.md, "Taking the better of two bounds").
struct Accounting {
  // Basic composition: every entry converted to (eps, delta) alone; each
  // Gaussian entry gets an equal share of the delta the approximate entries leave.
  bool basic_fits = false;
  double basic_eps = 0;    // sum of eps (Gaussian entries at their share), rounded up; inf if no delta is left for them
  double basic_delta = 0;  // sum of the approximate entries' delta (+ the Gaussians' shares when there are any)
  // zCDP: rho_total converted tightly at eps = budget.eps, plus the approximate entries' delta.
  bool zcdp_fits = false;
  double rho_total = 0;    // sum rho_j + sum eps_i^2 / 2, rounded up
  double zcdp_delta = 0;   // sum delta_k + delta_of_rho(rho_total, budget.eps), rounded up
  // The privacy curve (core/pld.hpp): evaluated only when neither of the
  // above fits, the budget has a delta, every Gaussian entry has its shift
  // (the sensitivity its PLD needs with rho), and the grid and the work stay
  // small (docs/accounting.md, "The ledger and the PLD").
  bool pld_evaluated = false;
  bool pld_fits = false;
  double pld_delta = 1;    // an upper bound on the history's delta at eps = budget.eps
  bool fits() const { return basic_fits || zcdp_fits || pld_fits; }
};

Accounting account(const std::vector<Entry>& history, const Budget& budget);
Accounting account(const History& history, const Budget& budget);
// The same, with the privacy curve evaluated even when basic composition or
// zCDP fits (dp_ledger_accounts shows all three figures; still not when
// the budget has no delta, an entry has no shift, or the work is too large).
Accounting account_all(const std::vector<Entry>& history, const Budget& budget);
Accounting account_all(const History& history, const Budget& budget);
// The same with `count` further copies of `extra` appended.
Accounting account(const std::vector<Entry>& history, const Entry& extra, std::uint64_t count,
                   const Budget& budget);
Accounting account(const History& history, const Entry& extra, std::uint64_t count, const Budget& budget);

// The ledger's decision on a charge: account(history, extra, count, budget),
// where the privacy curve may also be shown to fit on a larger history, the
// same with m > count releases like `extra` (docs/accounting.md, "Charges
// decided by the curve"). A larger history's bound is also a bound on this
// one's curve (every curve grows with the history), so pld_delta stays an
// upper bound on this history's delta. With k releases in extra's group, the
// curve fits if the history with m_j = k rounded up to a multiple of 2^j
// releases in that group fits for some j in [0, J], 2^J <= k/8 (j = 0: the
// history itself, as account): a function of the arguments alone. It
// accepts whatever account accepts, and more only where account's own bound
// does not grow with the count (the grid's roundings). A process-wide cache
// (fixed size, trivially destructible, locked) keeps the bounds evaluated,
// per the history without extra's group, extra's group and the budget, so
// that a run of charges of one kind evaluates the curve O(log n) times, not n.
Accounting account_charge(const History& history, const Entry& extra, std::uint64_t count, const Budget& budget);
// How many times the privacy curve has been evaluated in this process (tests),
// and emptying the cache of account_charge (tests).
std::uint64_t curve_evaluations();
void clear_curve_cache();

// How many further releases like `extra` fit: the largest n <= max_count with
// account_charge(history, extra, n, budget).fits() (0 when even the history
// alone does not fit), so that the ledger takes what is planned.
std::uint64_t further_releases(const std::vector<Entry>& history, const Entry& extra, const Budget& budget,
                               std::uint64_t max_count = 1000000000);
std::uint64_t further_releases(const History& history, const Entry& extra, const Budget& budget,
                               std::uint64_t max_count = 1000000000);
// The sigma^2 that k >= 1 further Gaussian releases of L2 sensitivity delta2
// each need to fit: the smallest found (to a relative 2^-30) with
// account(history, gaussian(rho_of_gaussian(delta2, sigma2), shift), k, budget).fits(),
// shift = delta2 when it is an integer in [1, 2^20] (else 0: no PLD);
// +inf when no sigma fits: the history alone exhausts the budget, or fits only
// by its privacy curve and the releases have no shift (or sigma^2 so large
// that their PLD is not evaluated, core/pld.hpp's kMaxGaussianPoints).
double sigma2_for_further(const std::vector<Entry>& history, std::uint64_t k, double delta2,
                          const Budget& budget);
double sigma2_for_further(const History& history, std::uint64_t k, double delta2, const Budget& budget);

}  // namespace optdp::zcdp
