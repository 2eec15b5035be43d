#include "core/ledger_rule.hpp"

#include <cmath>
#include <stdexcept>

#include "core/format.hpp"

namespace optdp {

LedgerCharge ledger_charge(double epsilon, double delta, double rho, std::int64_t shift) {
  if (!(rho >= 0 && std::isfinite(rho)))
    throw std::invalid_argument("rho must be a finite number >= 0, but is " + format_double(rho));
  if (shift < 0 || shift > (1 << 20) || (shift > 0 && !(rho > 0)))
    throw std::invalid_argument("shift must be an integer in [0, 2^20], and 0 without a rho, but is " +
                                std::to_string(shift));
  LedgerCharge c;
  c.units = rho > 0 && epsilon == 0 ? 0 : charge_units(epsilon);
  c.delta_units = delta_charge_units(delta);
  c.epsilon = epsilon;
  c.delta = delta + 0.0;  // -0 is 0
  c.rho = rho;
  c.shift = shift;
  return c;
}

zcdp::Entry ledger_entry(double epsilon, double delta, double rho, std::int64_t shift) {
  return rho > 0 ? zcdp::Entry::gaussian(rho, shift > 0 ? shift : 0) : delta > 0 ? zcdp::Entry::approximate(epsilon, delta)
                                                          : zcdp::Entry::pure(epsilon);
}

namespace {

// The refusal's figures, to 4 significant digits (format_figure): what is
// spent or what a release costs rounded up, what the budget allows rounded
// down, so the words never show a release as fitting when it does not. The
// exact figures are dp_ledger_accounts()'s and dp_budget_spent()'s.
std::string up(double v) { return format_figure(v, Rounding::Up); }
std::string down(double v) { return format_figure(v, Rounding::Down); }

}  // namespace

zcdp::Entry planned_gaussian(double sensitivity, double sigma2) {
  const bool integer = sensitivity >= 1 && sensitivity <= (1 << 20) && sensitivity == std::floor(sensitivity);
  return zcdp::Entry::gaussian(zcdp::rho_of_gaussian(sensitivity, sigma2),
                               integer ? static_cast<std::int64_t>(sensitivity) : 0);
}

std::string ledger_refusal(const LedgerAccount& a, const std::vector<zcdp::Entry>& history, const LedgerCharge& c,
                           std::string_view attach_call) {
  bool gaussian = c.rho > 0;
  for (const zcdp::Entry& e : history) gaussian = gaussian || e.kind == zcdp::Entry::Kind::gaussian;
  const bool no_delta_budget = a.total_delta_units == 0;
  const bool exact_basic = !gaussian && budget_allows(a.spent_units, c.units, a.total_units) &&
                           !(no_delta_budget && c.delta_units != 0) &&
                           delta_budget_allows(a.spent_delta_units, c.delta_units, a.total_delta_units);
  if (exact_basic) return {};
  // Basic composition's own refusal, as without Gaussian releases.
  std::string why;
  if (c.rho > 0 && no_delta_budget)
    why = "privacy budget exhausted: this ledger has no delta budget (give one as " + std::string(attach_call) +
          "), and a Gaussian release needs one (this one costs rho " + up(c.rho) + ")";
  else if (!gaussian && !budget_allows(a.spent_units, c.units, a.total_units))
    why = "privacy budget exhausted: " + up(units_to_epsilon(a.spent_units)) + " of " +
          down(units_to_epsilon(a.total_units)) + " spent, and this release costs " +
          up(c.epsilon);
  else if (no_delta_budget && c.delta_units != 0)
    why = "privacy budget exhausted: this ledger has no delta budget (give one as " + std::string(attach_call) +
          "), and this release costs delta " + up(c.delta);
  else if (!gaussian)
    why = "privacy budget exhausted: delta " + up(units_to_delta(a.spent_delta_units)) + " of " +
          down(units_to_delta(a.total_delta_units)) + " spent, and this release costs " +
          up(c.delta);
  if (no_delta_budget) return why;  // no zCDP conversion without a delta
  // zCDP (and, with Gaussian releases, basic composition as the core counts it).
  const zcdp::Entry extra = ledger_entry(c.epsilon, c.delta, c.rho, c.shift);
  const zcdp::Accounting acc = zcdp::account(history, extra, 1, {a.total_epsilon, a.total_delta});
  // The privacy curve (PLD) fits: accepted. Its refusal adds nothing to the
  // words below (they name the accountings a user can reason with).
  if (acc.zcdp_fits || (gaussian && acc.basic_fits) || acc.pld_fits) return {};
  if (gaussian)
    why = "privacy budget exhausted: with this release (" +
          (c.rho > 0 ? "rho " + up(c.rho)
                     : "epsilon " + up(c.epsilon) +
                           (c.delta > 0 ? ", delta " + up(c.delta) : "")) +
          ") basic composition gives (" + up(acc.basic_eps) + ", " + up(acc.basic_delta) +
          "), over (" + down(a.total_epsilon) + ", " + down(a.total_delta) + ")";
  return why + "; nor does zCDP fit: rho " + up(acc.rho_total) + " gives delta " +
         up(acc.zcdp_delta) + " at epsilon " + down(a.total_epsilon);
}

}  // namespace optdp
