// optdp core: privacy loss distributions (PLDs) on a grid, composed by
// convolution with pessimistic rounding, so that the composed delta(eps) is a
// proven upper bound on the exact privacy curve of the history
// (docs/accounting.md, "Accounting at the privacy curve: PLDs").
//
// A PLD here is the law of the privacy loss L = ln(P(o) / Q(o)), o ~ P, of a
// dominating pair (P, Q) of a release: a pair whose hockey-stick divergences
// bound those of the release's output laws on every pair of neighbours, in
// both orders. Its privacy curve is
//   delta(eps) = E[(1 - e^(eps - L))_+] = inf_mass + sum_i m_i (1 - e^(eps - l_i))_+.
// The grid: losses are i / N for integers i (N, the resolution, a positive
// integer below 2^40). Every Pld holds
//   * finite masses m_i, each a LOWER bound on the true mass it stands for,
//     placed at a loss i / N that is an UPPER bound on that mass's true loss;
//   * inf_mass, an UPPER bound on 1 - sum_i m_i: all the rest, at loss +inf.
// Moving mass to a larger loss (or to +inf) gives the PLD of a pair from
// which the true pair is a post-processing, so every bound derived from the
// Pld (delta(eps), and every composition with it) is an upper bound on the
// true one (the proof is in docs/accounting.md).
//
// Which PLD each release has (docs/accounting.md, "The PLD of each release"):
//   * two-sided geometric count, alpha: two-point, +-eps with eps = -ln alpha,
//     P-mass 1/(1 + alpha) at +eps: exactly randomized response's; every pure
//     eps-DP release (selection, quantiles) is dominated by the same pair;
//   * (eps, delta) releases: delta at +inf and (1 - delta) times the two-point;
//   * integer staircase (b, D, r): three losses, -eps, 0, +eps;
//   * two-sided geometric with sensitivity D (laplace_sum), from its pmf;
//   * discrete Gaussian N_Z(0, sigma^2), integer sensitivity Delta, from its pmf.
// Arguments are checked; a bad one throws std::invalid_argument
// ("<argument> must be ..., but is X").
#pragma once

#include <cstdint>
#include <vector>

namespace optdp::pld {

// Default resolution: losses on multiples of 10^-5; the pessimistic rounding
// costs at most one step per release (in eps terms, about half a step per
// release on average).
inline constexpr double kDefaultResolution = 100000;
// Default tail: after each composition, at most this much mass is moved from
// the grid's ends (the upper end to +inf, the lower end up to the first kept loss).
inline constexpr double kDefaultTail = 1e-16;

class Pld {
 public:
  // The identity of composition: loss 0 with mass 1 (no release).
  explicit Pld(double resolution = kDefaultResolution);

  // Randomized response at eps (eps finite, >= 0): +eps with mass
  // e^eps / (1 + e^eps), -eps with the rest. The dominating pair of every pure
  // eps-DP release [Kairouz, Oh, Viswanath 2015].
  static Pld pure(double eps, double resolution = kDefaultResolution);
  // The two-sided geometric count with parameter alpha in (0, 1): the same
  // pair at eps = -ln alpha (the exact irrational eps, bounded on both sides).
  static Pld geometric(double alpha, double resolution = kDefaultResolution);
  // k releases like pure(eps) / geometric(alpha), composed exactly (the
  // binomial law of the number of +eps outcomes [KOV15]) and then put on the
  // grid: one rounding of the losses for the whole group instead of one per
  // release. k <= 10^8; binomial tails below `tail` go to +inf.
  static Pld pure_composed(double eps, std::uint64_t k, double resolution = kDefaultResolution,
                           double tail = kDefaultTail);
  static Pld geometric_composed(double alpha, std::uint64_t k, double resolution = kDefaultResolution,
                                double tail = kDefaultTail);
  // k releases like approximate(eps, delta): (1 - delta)^k times
  // pure_composed(eps, k), the rest at +inf (any release's delta branch makes
  // the whole loss infinite).
  static Pld approximate_composed(double eps, double delta, std::uint64_t k, double resolution = kDefaultResolution,
                                  double tail = kDefaultTail);
  // An (eps, delta)-DP release: mass delta at +inf, (1 - delta) times pure(eps).
  static Pld approximate(double eps, double delta, double resolution = kDefaultResolution);
  // The integer staircase with b in (0, 1), sensitivity D >= 1 and 1 <= r <= D
  // (core/staircase.hpp): losses +-eps (eps = -ln b) and 0.
  static Pld staircase(double b, std::int64_t D, std::int64_t r, double resolution = kDefaultResolution);
  // The two-sided geometric with parameter alpha added to an integer query of
  // sensitivity D >= 1 (laplace_sum's noise in grid steps: alpha = e^(-eps / D)).
  static Pld discrete_laplace(double alpha, std::int64_t D, double resolution = kDefaultResolution);
  // The discrete Gaussian N_Z(0, sigma2) added to an integer query of
  // sensitivity Delta >= 1; sigma2 finite and > 0, with sigma at most
  // kMaxGaussianSigma (its pmf is summed point by point).
  static constexpr double kMaxGaussianSigma = 1 << 20;
  static Pld discrete_gaussian(double sigma2, std::int64_t Delta, double resolution = kDefaultResolution);
  // k releases like discrete_gaussian with sigma^2 = shift^2 / (2 rho)
  // evaluated in binary128 (exactly the sigma^2 optdp's Gaussian releases
  // sample with, core/gaussian.hpp) and sensitivity `shift`, composed at
  // once: the loss of the k releases is rho (k - 2 S / shift), S the sum of k
  // independent N_Z(0, sigma^2), whose pmf is bounded below by the sampled
  // Gaussian density of variance k sigma^2 minus a proven error (Poisson
  // summation, docs/accounting.md, "Composed discrete Gaussians"). Losses
  // are rounded up onto the grid once for the whole group; S beyond about
  // 9.6 sd and the error bound's mass go to +inf (a delta event).
  // rho > 0 finite, 1 <= shift <= 2^20, 1 <= k <= 10^8, and sigma >= 4
  // (below it the error bound is not small); throws std::invalid_argument
  // otherwise, or when S would take more than kMaxGaussianPoints values.
  static constexpr std::int64_t kMaxGaussianPoints = std::int64_t{1} << 22;
  static Pld discrete_gaussian_composed(double rho, std::int64_t shift, std::uint64_t k,
                                        double resolution = kDefaultResolution);

  // The PLD of the two releases one after the other (adaptively): the
  // convolution, every mass rounded down (the deficit joins inf_mass); then
  // at most `tail` of mass is moved off each end of the grid (upwards).
  // The resolutions must be equal.
  Pld compose(const Pld& other, double tail = kDefaultTail) const;
  // k-fold composition with itself (binary powering); k = 0 gives Pld(resolution).
  Pld self_compose(std::uint64_t k, double tail = kDefaultTail) const;

  // An upper bound on delta(eps) (rounded up, in [0, 1]); eps finite.
  double delta(double eps) const;
  // An eps >= 0 with delta(eps) <= delta (checked with delta() itself), at
  // most a relative 2^-30 (or 2^-40 absolute) above the smallest such;
  // +inf when even a huge eps does not bring the curve to delta (inf_mass > delta).
  // delta in (0, 1].
  double epsilon(double delta) const;

  double resolution() const { return resolution_; }
  std::int64_t lowest_index() const { return lo_; }  // loss of masses()[0] is lowest_index() / resolution()
  const std::vector<double>& masses() const { return m_; }
  double inf_mass() const { return inf_; }
  // The largest finite loss held (index / N), or -inf when no finite mass.
  double max_loss() const;

 private:
  // Drops zero masses at both ends and recomputes inf_ as an upper bound of
  // 1 - sum(m_) (never lowering a larger inf_ already set).
  void normalise();
  void truncate(double tail);

  double resolution_;
  std::int64_t lo_ = 0;
  std::vector<double> m_;
  double inf_ = 0;

  friend class Builder;
};

// Closed forms, for homogeneous histories and for the tests.
//
// delta(E) of k-fold randomized response at eps (k two-point PLDs, exactly
// the composed geometric counts): sum over j of C(k, j) p^j (1 - p)^(k - j)
// (1 - e^(E - (2j - k) eps))_+, p = e^eps / (1 + e^eps) [KOV15]. Evaluated in
// binary128 (lgammaq for the binomials); the returned value is rounded up,
// with a margin far above the evaluation's error (docs/accounting.md).
// k <= 10^8.
double rr_composed_delta(double eps, std::uint64_t k, double E);
// The same for the geometric at alpha: eps = -ln alpha (bounded above).
double geometric_composed_delta(double alpha, std::uint64_t k, double E);
// The mu-GDP curve (Dong, Roth, Su 2019): Phi(-E/mu + mu/2) - e^E Phi(-E/mu - mu/2),
// the exact privacy curve of k continuous Gaussian releases of sensitivity
// Delta and sd sigma, mu = sqrt(k) Delta / sigma. Evaluated in binary128,
// returned to double precision (not a rounded bound: a reference).
double gdp_delta(double mu, double E);

}  // namespace optdp::pld
