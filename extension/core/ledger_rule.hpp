// optdp core: the ledger's rule for one more charge, shared by every
// binding's ledger (SQLite's file, PostgreSQL's tables), so that both accept
// and refuse the same histories with the same words (docs/accounting.md).
//
// A release fits if the whole history with it is within the budget
// (epsilon, delta) under some valid accounting: basic composition, counted in
// exact units (core/budget.hpp) while no Gaussian release is in the history,
// or zCDP with the tight conversion (core/accounting.hpp, which also counts
// basic composition with Gaussian entries), or the privacy curve (PLD) when
// every Gaussian entry records its shift. A ledger without a delta budget
// has no zCDP conversion: it refuses every release with a delta or a rho.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/accounting.hpp"
#include "core/budget.hpp"

namespace optdp {

// What the ledger records of one release, validated: epsilon's units (0 for a
// Gaussian release, whose epsilon is 0: the accountant converts its rho),
// delta's units.
struct LedgerCharge {
  double epsilon = 0, delta = 0, rho = 0;
  std::int64_t shift = 0;  // a Gaussian release's sensitivity in lattice steps (zcdp::Entry::shift); 0: none
  std::int64_t units = 0;
  DeltaUnits delta_units = 0;
};
// Throws std::invalid_argument for an epsilon outside (0, 10^6] (unless rho >
// 0 and epsilon 0), a delta outside [0, 1], a rho not finite and >= 0, or a
// shift outside [0, 2^20] (a shift only with rho > 0).
LedgerCharge ledger_charge(double epsilon, double delta, double rho, std::int64_t shift = 0);

// The ledger's totals and what it has spent by basic composition.
struct LedgerAccount {
  double total_epsilon = 0, total_delta = 0;
  std::int64_t total_units = 0, spent_units = 0;
  DeltaUnits total_delta_units = 0, spent_delta_units = 0;
};

// One recorded release as the accountant sees it (a rho > 0: Gaussian, with
// its shift, 0 when the entry has none; a delta > 0: approximate; otherwise pure).
zcdp::Entry ledger_entry(double epsilon, double delta, double rho, std::int64_t shift = 0);

// A further Gaussian release as the planning functions (dp_further_releases)
// see it: discrete Gaussian noise with parameter sigma (sigma2 = sigma^2) on
// a query of L2 sensitivity `sensitivity`: rho = rho_of_gaussian(sensitivity,
// sigma2), and shift = sensitivity when that is an integer in [1, 2^20] (so a
// gaussian_count charged at this rho, recorded with shift 1, is accounted
// exactly as planned); otherwise no shift (zCDP and basic composition only).
zcdp::Entry planned_gaussian(double sensitivity, double sigma2);

// Whether the decision needs the history: only a ledger with a delta budget
// can hold Gaussian or approximate releases, whose accounting reads it.
inline bool ledger_needs_history(const LedgerAccount& a) { return a.total_delta_units != 0; }

// Empty when the charge fits; otherwise why not ("privacy budget exhausted:
// ..."). history: the recorded releases in order (may be empty when
// !ledger_needs_history). attach_call: how this binding's user gives a delta
// budget, e.g. "dp_ledger_attach(path, total_epsilon, total_delta)".
std::string ledger_refusal(const LedgerAccount& account, const std::vector<zcdp::Entry>& history,
                           const LedgerCharge& charge, std::string_view attach_call);
// The same on the history's summary (the multiset of its entries): the same
// decision and words, without reading the entries.
std::string ledger_refusal(const LedgerAccount& account, const zcdp::History& history, const LedgerCharge& charge,
                           std::string_view attach_call);

// One row of a ledger as the accountant sees it: ledger_entry, with a shift
// outside [0, 2^20] (not written by optdp) counted as none.
zcdp::Entry ledger_row_entry(double epsilon, double delta, double rho, std::int64_t shift);

// The summary a ledger keeps of its history (docs/accounting.md, "What a
// charge reads"), as text: a header, the id of the last entry it covers,
// the number of entries, one line per group (each double as its 64 bits in
// hex: exact, and free of the locale) and a digest of all that. Canonical:
// one history and one id give one text.
std::string encode_history(const zcdp::History& history, std::int64_t last_id);
// The summary in `text` if it is one encode_history wrote for the entries up
// to last_id: nullopt when the text is absent, malformed, not canonical, for
// another last id, with counts that do not add up, or with a wrong digest
// (stale or altered: the binding then rebuilds it from the entries).
std::optional<zcdp::History> decode_history(std::string_view text, std::int64_t last_id);

}  // namespace optdp
