#include "core/ledger_rule.hpp"

#include <cinttypes>
#include <cstdarg>
#include <cmath>
#include <cstdio>
#include <cstring>
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

zcdp::Entry ledger_row_entry(double epsilon, double delta, double rho, std::int64_t shift) {
  return ledger_entry(epsilon, delta, rho, shift >= 0 && shift <= (1 << 20) ? shift : 0);
}

std::string ledger_refusal(const LedgerAccount& a, const std::vector<zcdp::Entry>& history, const LedgerCharge& c,
                           std::string_view attach_call) {
  return ledger_refusal(a, zcdp::History::of(history), c, attach_call);
}

std::string ledger_refusal(const LedgerAccount& a, const zcdp::History& history, const LedgerCharge& c,
                           std::string_view attach_call) {
  const bool gaussian = c.rho > 0 || history.has_gaussian();
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
  const zcdp::Accounting acc = zcdp::account_charge(history, extra, 1, {a.total_epsilon, a.total_delta});
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

namespace {

constexpr const char* kHistoryHeader = "optdp history summary 1\n";

std::uint64_t bits(double v) {
  std::uint64_t u;
  std::memcpy(&u, &v, sizeof u);
  return u;
}

double from_bits(std::uint64_t u) {
  double v;
  std::memcpy(&v, &u, sizeof v);
  return v;
}

// FNV-1a, 64 bits: detects a summary edited by hand (not a MAC: whoever can
// write the ledger can also delete its entries).
std::uint64_t digest(std::string_view s) {
  std::uint64_t h = 0xcbf29ce484222325ULL;
  for (unsigned char ch : s) {
    h ^= ch;
    h *= 0x100000001b3ULL;
  }
  return h;
}

void append(std::string& out, const char* fmt, ...) __attribute__((format(printf, 2, 3)));
void append(std::string& out, const char* fmt, ...) {
  char buf[128];
  va_list ap;
  va_start(ap, fmt);
  const int n = std::vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  out.append(buf, static_cast<std::size_t>(n));
}

}  // namespace

std::string encode_history(const zcdp::History& h, std::int64_t last_id) {
  std::string out = kHistoryHeader;
  append(out, "last %" PRId64 " entries %" PRIu64 "\n", last_id, h.entries);
  for (const auto& [eps, k] : h.pures) append(out, "p %016" PRIx64 " %" PRIu64 "\n", bits(eps), k);
  for (const auto& [ed, k] : h.approximates)
    append(out, "a %016" PRIx64 " %016" PRIx64 " %" PRIu64 "\n", bits(ed.first), bits(ed.second), k);
  for (const auto& [rs, k] : h.gaussians)
    append(out, "g %016" PRIx64 " %" PRId64 " %" PRIu64 "\n", bits(rs.first), rs.second, k);
  append(out, "digest %016" PRIx64 "\n", digest(out));
  return out;
}

std::optional<zcdp::History> decode_history(std::string_view text, std::int64_t last_id) {
  // Parsed line by line into a History (which validates every value), then
  // encoded again: only a text identical to that encoding is trusted.
  const std::string s(text);
  if (s.compare(0, std::strlen(kHistoryHeader), kHistoryHeader) != 0) return std::nullopt;
  zcdp::History h;
  std::int64_t last = 0;
  std::uint64_t entries = 0;
  std::size_t pos = std::strlen(kHistoryHeader);
  bool header = false;
  try {
    while (pos < s.size()) {
      const std::size_t eol = s.find('\n', pos);
      if (eol == std::string::npos) return std::nullopt;
      const std::string line = s.substr(pos, eol - pos);
      pos = eol + 1;
      std::uint64_t a = 0, b = 0, k = 0;
      std::int64_t shift = 0;
      char tail;
      if (!header) {
        if (std::sscanf(line.c_str(), "last %" SCNd64 " entries %" SCNu64 "%c", &last, &entries, &tail) != 2)
          return std::nullopt;
        header = true;
      } else if (std::sscanf(line.c_str(), "p %" SCNx64 " %" SCNu64 "%c", &a, &k, &tail) == 2) {
        h.add(zcdp::Entry::pure(from_bits(a)), k);
      } else if (std::sscanf(line.c_str(), "a %" SCNx64 " %" SCNx64 " %" SCNu64 "%c", &a, &b, &k, &tail) == 3) {
        h.add(zcdp::Entry::approximate(from_bits(a), from_bits(b)), k);
      } else if (std::sscanf(line.c_str(), "g %" SCNx64 " %" SCNd64 " %" SCNu64 "%c", &a, &shift, &k, &tail) == 3) {
        if (shift < 0 || shift > (1 << 20)) return std::nullopt;
        h.add(zcdp::Entry::gaussian(from_bits(a), shift), k);
      } else if (line.compare(0, 7, "digest ") == 0 && pos == s.size()) {
        break;
      } else {
        return std::nullopt;
      }
    }
  } catch (const std::invalid_argument&) {
    return std::nullopt;
  }
  if (!header || last != last_id || entries != h.entries) return std::nullopt;
  if (encode_history(h, last_id) != s) return std::nullopt;
  return h;
}

}  // namespace optdp
